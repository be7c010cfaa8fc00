"""The figures of `hetlab reproduce`, as an experiment defines them: its charts
(hetlab.experiment.Chart), which it draws itself, and its figures (hetlab.experiment.Figure):
bar charts in the style of the seed paper's Figures 5 and 6, one group of bars per benchmark
label, one bar per configuration, the ratio to the baseline with the standard deviation of the
per-seed ratio as error bars, and a line at 1 (the baseline)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hetlab.experiment import ChartData, Experiment, Figure, Prepared

if TYPE_CHECKING:  # pandas is imported where a chart is drawn, not by every command's start
    import pandas as pd


def bar_chart(summary: pd.DataFrame, experiment: Experiment, figure: Figure, path: Path) -> None:
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
        xs = [k + (i - (n - 1) / 2) * width for k in range(len(labels))]
        ys = [
            rows.loc[(lab, c.name), f"{figure.metric}_mean"] if (lab, c.name) in rows.index else float("nan")
            for lab in labels
        ]
        es = [rows.loc[(lab, c.name), f"{figure.metric}_std"] if (lab, c.name) in rows.index else 0.0 for lab in labels]
        ax.bar(
            xs,
            ys,
            width,
            yerr=es,
            capsize=2,
            label=c.title,
            color=c.colour,
            hatch=c.hatch,
            edgecolor="#333333",
            linewidth=0.4,
            error_kw={"elinewidth": 0.8, "ecolor": "black"},
        )
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1.0, label=f"{experiment.baseline} (baseline) = 1")
    if figure.separate_by is not None:  # a dotted separator where that column changes
        values = [summary[summary.label == lab][figure.separate_by].iloc[0] for lab in labels]
        for k in range(1, len(labels)):
            if values[k] != values[k - 1]:
                ax.axvline(k - 0.5, color="#777777", linestyle=":", linewidth=1.0)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=55, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylabel(figure.ylabel)
    ncol = min(n + 1, max(2, int(width_in / 2.6)))
    rows_of_legend = -(-(n + 1) // ncol)
    ax.set_title(figure.title, fontsize=11, pad=10 + 14 * rows_of_legend)
    ratios = summary[summary.config != experiment.baseline]
    top = max((ratios[f"{figure.metric}_mean"] + ratios[f"{figure.metric}_std"]).max() * 1.08, 1.3)
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
    save_figure(fig, path)


# SVG as a page inlines it: text as <text> (a font's glyphs as paths would be defined in every
# figure again), lines simplified to half a pixel (matplotlib's default is a ninth)
SVG_STYLE = {"svg.hashsalt": "hetlab", "svg.fonttype": "none", "path.simplify": True, "path.simplify_threshold": 0.5}


def save_figure(fig, path: Path) -> None:
    """Writes `fig` as PNG or SVG (from the file's suffix), reproducibly: no software or date
    stamp, fixed SVG element ids, SVG text as text; closes it."""
    import matplotlib
    import matplotlib.pyplot as plt

    fig.tight_layout()
    if path.suffix == ".svg":
        with matplotlib.rc_context(SVG_STYLE):
            fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.1)
    else:
        fig.savefig(path, format="png", metadata={"Software": None}, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)


def write_figures(
    directory: Path,
    experiment: Experiment,
    summary: pd.DataFrame,
    runs: pd.DataFrame | None = None,
    intervals: pd.DataFrame | None = None,
    suffix: str = ".png",
    prepared: Prepared | None = None,
) -> list[str]:
    """Writes the experiment's figures and charts that the selected benchmarks allow (PNG, or
    with suffix=".svg" the same figures as vectors, named FILE.svg); returns the names the
    experiment gives them (FILE.png)."""
    written = []
    for figure in experiment.figures:
        part = summary[summary.group.isin(figure.groups)]
        if not part.empty:
            bar_chart(part, experiment, figure, (directory / figure.file).with_suffix(suffix))
            written.append(figure.file)
    if experiment.charts and runs is not None:
        import matplotlib

        matplotlib.use("Agg")
        data = ChartData(
            summary, runs, intervals if intervals is not None else _empty_frame(), experiment.configs, prepared
        )
        for chart in experiment.charts:
            if runs.group.isin(chart.groups).any():
                chart.draw(data, (directory / chart.file).with_suffix(suffix))
                written.append(chart.file)
    return written


def _empty_frame() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame()
