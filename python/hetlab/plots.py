"""Bar charts of `hetlab reproduce` in the style of the seed paper's Figures 5 and 6: one group
of bars per {name}-{input}-{b|L} benchmark, one bar per configuration, the ratio to ondemand
with the standard deviation of the per-seed ratio as error bars, and a line at 1 (ondemand)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

STYLE = {  # config -> (colour, hatch)
    "idle-min": ("#9e9e9e", ""),
    "all-max": ("#e6550d", ""),
    "anti-snoop": ("#3182bd", ""),
    "anti-snoop-fig4": ("#9ecae1", "//"),
}


def bar_chart(summary: pd.DataFrame, experiment, metric: str, ylabel: str, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = [c for c in experiment.configs if c.name != experiment.baseline]
    labels = list(dict.fromkeys(summary.label))
    rows = summary.set_index(["label", "config"])
    n = len(configs)
    width = 0.8 / n
    width_in = max(8.0, 0.42 * len(labels) * n / 4 + 2.5)
    fig, ax = plt.subplots(figsize=(width_in, 4.8), dpi=120)
    for i, c in enumerate(configs):
        colour, hatch = STYLE.get(c.name, (None, ""))
        xs = [k + (i - (n - 1) / 2) * width for k in range(len(labels))]
        ys = [
            rows.loc[(lab, c.name), f"{metric}_mean"] if (lab, c.name) in rows.index else float("nan") for lab in labels
        ]
        es = [rows.loc[(lab, c.name), f"{metric}_std"] if (lab, c.name) in rows.index else 0.0 for lab in labels]
        ax.bar(
            xs,
            ys,
            width,
            yerr=es,
            capsize=2,
            label=c.title,
            color=colour,
            hatch=hatch,
            edgecolor="#333333",
            linewidth=0.4,
            error_kw={"elinewidth": 0.8, "ecolor": "black"},
        )
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1.0, label="ondemand (baseline) = 1")
    # A dotted separator where the cluster changes (Figure 5 lists LITTLE, then big).
    clusters = [summary[summary.label == lab].cluster.iloc[0] for lab in labels]
    if len(set(clusters)) > 1 and (summary.group == "ccbench").all():
        for k in range(1, len(labels)):
            if clusters[k] != clusters[k - 1]:
                ax.axvline(k - 0.5, color="#777777", linestyle=":", linewidth=1.0)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=55, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel(ylabel)
    ncol = min(n + 1, max(2, int(width_in / 2.6)))
    rows_of_legend = -(-(n + 1) // ncol)
    ax.set_title(title, fontsize=11, pad=10 + 14 * rows_of_legend)
    ratios = summary[summary.config != experiment.baseline]
    top = max((ratios[f"{metric}_mean"] + ratios[f"{metric}_std"]).max() * 1.08, 1.3)
    ax.set_ylim(0, top)
    ax.grid(axis="y", linestyle=":", linewidth=0.6, alpha=0.7)
    ax.set_axisbelow(True)
    ax.legend(
        fontsize=8,
        ncol=ncol,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
        handlelength=1.6,
        columnspacing=1.2,
    )
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)


def write_figures(directory: Path, experiment, summary: pd.DataFrame) -> list[str]:
    """Writes the figures that the selected benchmarks allow; returns their file names."""
    written = []
    grid = summary[summary.group == "ccbench"]
    real = summary[summary.group != "ccbench"]
    if not grid.empty:
        bar_chart(
            grid,
            experiment,
            "speedup",
            "speedup over ondemand (t_ondemand / t)",
            "Figure 5: time on ccbench 'caches' (size-pattern-cluster), ondemand = 1",
            directory / "fig5_ccbench_time.png",
        )
        written.append("fig5_ccbench_time.png")
    if not real.empty:
        bar_chart(
            real,
            experiment,
            "speedup",
            "speedup over ondemand (t_ondemand / t)",
            "Figure 6a: time on realistic benchmarks, ondemand = 1",
            directory / "fig6a_time.png",
        )
        bar_chart(
            real,
            experiment,
            "energy_saving",
            "energy saving over ondemand (E_ondemand / E)",
            "Figure 6b: energy on realistic benchmarks, ondemand = 1",
            directory / "fig6b_energy.png",
        )
        written += ["fig6a_time.png", "fig6b_energy.png"]
    return written
