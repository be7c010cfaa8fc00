"""The chart kinds of the `bl-mp-sched` reproduction, each drawn for a benchmark label and the
configurations given: every run as a dot beside its mean, shares of CPU time on the big CPUs
as bars, which CPU each thread ran on as a timeline, and the Exynos panel of time, energy and
migrations. bl_mp_sched.py says which benchmark, configurations and window each chart shows."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from hetlab.experiment import ChartData


def save(fig, path: Path) -> None:
    from hetlab.plots import save_figure  # loads matplotlib: only when a chart is drawn

    save_figure(fig, path)


def _title(configs, name: str) -> str:
    return next(c.title for c in configs if c.name == name)


def _colour(configs, name: str) -> str | None:
    return next(c.colour for c in configs if c.name == name)


def dots(ax, data: ChartData, label: str, configs: tuple[str, ...], column: str, ylabel: str, title: str) -> None:
    """Each run as a dot, the mean as a bar with the standard deviation, per configuration."""
    import numpy as np

    runs = data.runs[data.runs.label == label]
    names = [c for c in configs if (runs.config == c).any()]
    for k, c in enumerate(names):
        y = runs[runs.config == c][column].dropna().to_numpy(dtype=float)
        if len(y) == 0:
            continue
        x = k + np.linspace(-0.18, 0.18, len(y)) if len(y) > 1 else np.array([float(k)])
        ax.scatter(x, y, s=14, color=_colour(data.configs, c), alpha=0.8, zorder=3)
        ax.errorbar(
            k + 0.3,
            y.mean(),
            yerr=y.std(ddof=1) if len(y) > 1 else 0.0,
            fmt="_",
            color="black",
            markersize=14,
            capsize=4,
            zorder=4,
        )
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", linestyle=":", linewidth=0.6, alpha=0.7)


def share_bars(ax, data: ChartData, label: str, configs: tuple[str, ...], groups, ylabel: str) -> None:
    import numpy as np

    summary = data.summary
    names = [c for c in configs if ((summary.benchmark == label) & (summary.config == c)).any()]
    width = 0.8 / max(1, len(names))
    for k, c in enumerate(names):
        ys, es = [], []
        for g in groups:
            r = summary[(summary.benchmark == label) & (summary.config == c) & (summary.metric == f"{g}_big_share")]
            ys.append(float(r["mean"].iloc[0]) if len(r) else np.nan)
            es.append(float(r["std"].iloc[0]) if len(r) else 0.0)
        xs = np.arange(len(groups)) + (k - (len(names) - 1) / 2) * width
        ax.bar(
            xs,
            ys,
            width,
            yerr=es,
            capsize=2,
            label=_title(data.configs, c),
            color=_colour(data.configs, c),
            edgecolor="#333333",
            linewidth=0.4,
        )
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", linestyle=":", linewidth=0.6, alpha=0.7)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1, frameon=False)


# CPU colours for the placement charts: warm for big (fast), cool for LITTLE (slow).
_WARM = ("#d62728", "#ff7f0e", "#e377c2", "#8c564b")
_COOL = ("#1f77b4", "#17becf", "#2ca02c", "#9467bd")


def placement(
    data: ChartData,
    path: Path,
    label: str,
    configs: tuple[str, ...],
    big: tuple[int, ...],
    window_s: tuple[float, float],
    title: str,
) -> None:
    """One panel per configuration: a row per thread, a bar where it ran, coloured by CPU."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    iv = data.intervals
    iv = iv[iv.label == label] if not iv.empty else iv
    names = [c for c in configs if not iv.empty and (iv.config == c).any()]
    if not names:  # the runs kept no intervals: an empty panel says so
        names = list(configs[:1])
    cpus = sorted(set(iv.cpu)) if not iv.empty else list(big)
    warm, cool = itertools.cycle(_WARM), itertools.cycle(_COOL)
    colours = {cpu: next(warm) if cpu in big else next(cool) for cpu in cpus}
    fig, axes = plt.subplots(len(names), 1, figsize=(11, 1.2 + 2.1 * len(names)), dpi=120, squeeze=False)
    for ax, c in zip(axes[:, 0], names):
        mine = iv[(iv.config == c) & (iv.end_s > window_s[0]) & (iv.start_s < window_s[1])] if not iv.empty else iv
        threads = list(dict.fromkeys(mine.sort_values("tid").thread)) if not mine.empty else []
        for row, thread in enumerate(threads):
            t = mine[mine.thread == thread]
            for cpu, g in t.groupby("cpu"):
                start = g.start_s.clip(lower=window_s[0])
                spans = list(zip(start, g.end_s.clip(upper=window_s[1]) - start))
                # an edge of the bar's own colour: a 3 ms run stays visible over seconds
                ax.broken_barh(spans, (row - 0.4, 0.8), facecolors=colours[cpu], edgecolors=colours[cpu], linewidth=0.3)
        ax.set_yticks(range(len(threads)))
        ax.set_yticklabels(threads, fontsize=7)
        ax.set_ylim(-0.6, max(len(threads), 1) - 0.4)
        ax.invert_yaxis()
        ax.set_xlim(*window_s)
        ax.set_title(_title(data.configs, c), fontsize=9, loc="left")
        ax.grid(axis="x", linestyle=":", linewidth=0.6, alpha=0.7)
    axes[-1, 0].set_xlabel("time (s)")
    handles = [Patch(color=colours[cpu], label=f"CPU {cpu} ({'big' if cpu in big else 'LITTLE'})") for cpu in cpus]
    fig.legend(handles=handles, loc="upper right", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=11, x=0.01, ha="left")
    save(fig, path)


def draw_exynos(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    labels = [lab for lab in dict.fromkeys(data.runs.label) if lab.endswith("-exynos")]
    metrics = (("time_s", "time (s)"), ("energy_j", "energy (J)"), ("migrations", "migrations"))
    fig, axes = plt.subplots(len(labels), len(metrics), figsize=(12, 3.3 * len(labels)), dpi=120, squeeze=False)
    for row, label in zip(axes, labels):
        s = data.summary[data.summary.benchmark == label]
        configs = list(dict.fromkeys(s.config))
        for ax, (m, ylabel) in zip(row, metrics):
            part = s[s.metric == m].set_index("config").reindex(configs)
            ax.bar(
                range(len(configs)),
                part["mean"],
                yerr=part["std"],
                capsize=3,
                color=[_colour(data.configs, c) for c in configs],
                edgecolor="#333333",
                linewidth=0.4,
            )
            ax.set_xticks(range(len(configs)))
            ax.set_xticklabels(configs, rotation=30, ha="right", fontsize=8)
            ax.set_ylabel(ylabel)
            ax.set_title(label, fontsize=9)
            ax.grid(axis="y", linestyle=":", linewidth=0.6, alpha=0.7)
    fig.suptitle("Exynos 5422: the seed's workloads under smp, hmp and eas, mean ± std", fontsize=11)
    save(fig, path)
