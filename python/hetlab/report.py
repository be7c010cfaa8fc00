"""The outputs of `hetlab reproduce` for any experiment: runs.csv, summary.csv, summary.md, the
run intervals it kept (intervals.csv), the experiment's figures (hetlab.plots) and report.md
(claims table, the experiment's own sections, provenance), all written together at the end of a
run.

The default summary: ratios are to the experiment's baseline configuration run with the same
benchmark label and seed, so each repetition gives one ratio; a summary row holds their mean and
standard deviation: speedup = t_baseline / t, energy_saving = E_baseline / E, edp_ratio =
EDP_baseline / EDP (above 1: better than the baseline). An experiment that declares `metrics`
gets the long summary instead: one row per label x configuration x metric with the mean,
standard deviation, minimum and maximum over the runs that have a value (n).
"""

from __future__ import annotations

import platform as _platform
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hetlab import plots
from hetlab._files import staging_folder
from hetlab.experiment import NOT_RUN, Claim, Experiment, Prepared

RATIOS = (("speedup", "time_s"), ("energy_saving", "energy_j"), ("edp_ratio", "edp_js"))
TABLES = ("runs.csv", "summary.csv", "summary.md")
INTERVALS = "intervals.csv"
# the first seed's time series of every benchmark and configuration, for the HTML drill-down
SERIES = "series.csv"
SERIES_COLUMNS = ("freq_khz", "power_mw", "snoop_latency_ns")
# samples kept per run and cluster: the drill-down's charts are a few hundred pixels wide
SERIES_POINTS = 200
LONG_COLUMNS = ("benchmark", "config", "metric", "mean", "std", "min", "max", "n")


def outputs(experiment: Experiment) -> tuple[str, ...]:
    """Every file a run of `experiment` may write, in the order the command lists them."""
    return (
        *TABLES,
        *((INTERVALS,) if any(c.uses_intervals for c in experiment.charts) else ()),
        SERIES,
        *(f.file for f in experiment.figures),
        *(c.file for c in experiment.charts),
        "report.md",
    )


def experiment_of_report(report_md: str) -> str | None:
    """The experiment named in a report.md's provenance (`- experiment `NAME``), if any."""
    m = re.search(r"^- experiment `([^`]+)`", report_md, re.MULTILINE)
    return m.group(1) if m else None


# --- tables -------------------------------------------------------------------------------------


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for col in [c for c in df.columns if c.startswith("energy_") or c.startswith("avg_freq_")]:
        df[col] = df[col].fillna(0.0)
    return df


def intervals_frame(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The kept run intervals as one table (intervals.csv), in plan order."""
    if not parts:
        return pd.DataFrame(columns=["label", "config", "seed", "tid", "thread", "cpu", "start_s", "end_s"])
    return pd.concat(parts, ignore_index=True)


def series_frame(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The kept time series as one table (series.csv), in plan order."""
    if not parts:
        return pd.DataFrame(columns=["label", "config", "seed", "time_s", "cluster", *SERIES_COLUMNS])
    return pd.concat(parts, ignore_index=True)


def _std(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def summarize(runs: pd.DataFrame, experiment: Experiment) -> pd.DataFrame:
    """The experiment's summary shape (see the module's docstring)."""
    if experiment.metrics and experiment.wide_summary:
        return widen(summarize_metrics(runs, experiment), experiment)
    if experiment.metrics:
        return summarize_metrics(runs, experiment)
    return summarize_ratios(runs, experiment)


def widen(long: pd.DataFrame, experiment: Experiment) -> pd.DataFrame:
    """The long summary side by side: per label and configuration, each metric's mean, min and
    max, then n (the fewest runs any of its metrics had)."""
    out = []
    for (label, config), g in long.groupby(["benchmark", "config"], sort=False):
        row: dict = {"benchmark": label, "config": config}
        by = {r["metric"]: r for r in g.to_dict("records")}
        for m in experiment.metrics:
            r = by.get(m.name, {})
            for stat in ("mean", "min", "max"):
                row[f"{m.name}_{stat}"] = r.get(stat, float("nan"))
        row["n"] = int(g["n"].min())
        out.append(row)
    columns = ["benchmark", "config", *(f"{m.name}_{s}" for m in experiment.metrics for s in ("mean", "min", "max"))]
    return pd.DataFrame(out, columns=[*columns, "n"])


def summarize_metrics(runs: pd.DataFrame, experiment: Experiment) -> pd.DataFrame:
    """One row per (label, config, metric) in the order of runs.csv and of the metrics; a
    metric no run of a label and configuration has is left out."""
    out = []
    for (label, config), g in runs.groupby(["label", "config"], sort=False):
        for m in experiment.metrics:
            if m.name not in g.columns:
                continue
            x = g[m.name].dropna().to_numpy(dtype=float)
            if len(x) == 0:
                continue
            out.append(
                {
                    "benchmark": label,
                    "config": config,
                    "metric": m.name,
                    "mean": float(x.mean()),
                    "std": _std(x),
                    "min": float(x.min()),
                    "max": float(x.max()),
                    "n": len(x),
                }
            )
    return pd.DataFrame(out, columns=list(LONG_COLUMNS))


def summarize_ratios(runs: pd.DataFrame, experiment: Experiment) -> pd.DataFrame:
    """One row per (label, config), in the order of runs.csv: means, standard deviations and
    ratios to the baseline, then the experiment's own measures."""
    options = [k for k in dict.fromkeys(k for b in experiment.benchmarks for k in b.options) if k in runs.columns]
    base = runs[runs.config == experiment.baseline]
    # the baseline's values by (label, seed): a dict, as a MultiIndex lookup per group costs ms
    base_row = {key: i for i, key in enumerate(zip(base.label, base.seed))}
    base_values = {col: base[col].to_numpy() for _, col in RATIOS}
    out = []
    for (label, config), g in runs.groupby(["label", "config"], sort=False):
        at = [base_row[(label, seed)] for seed in g.seed]
        row = {
            "benchmark": g.benchmark.iloc[0],
            **{k: g[k].iloc[0] for k in options},
            "label": label,
            "group": g.group.iloc[0],
            "config": config,
            "reps": len(g),
            "completed": bool(g.completed.all()),
        }
        for col in ("time_s", "energy_j", "edp_js"):
            row[f"{col}_mean"] = float(g[col].mean())
            row[f"{col}_std"] = _std(g[col].to_numpy())
        for name, col in RATIOS:
            r = base_values[col][at] / g[col].to_numpy()
            row[f"{name}_mean"] = float(r.mean())
            row[f"{name}_std"] = _std(r)
        if experiment.measures is not None:
            row.update(experiment.measures(g, row))
        out.append(row)
    return pd.DataFrame(out)


def _fmt_ratio(mean: float, std: float) -> str:
    return f"{mean:.2f} ± {std:.2f}"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def metrics_markdown(summary: pd.DataFrame, runs: pd.DataFrame, experiment: Experiment) -> str:
    """summary.md of the long shape: per table, one row per benchmark and metric, one column
    per configuration that ran it: mean ± std [min, max]."""
    lines = [
        f"# {experiment.title}",
        "",
        "Each cell: mean ± standard deviation [minimum, maximum] over the runs (seeds) of that benchmark and "
        "configuration; every run is in runs.csv, these numbers in summary.csv.",
        "",
        "Configurations: " + "; ".join(f"`{c.name}` = {c.title}" for c in experiment.configs) + ".",
    ]
    groups = runs.drop_duplicates("label").set_index("label").group
    titles = {m.name: f"{m.title} ({m.unit})" for m in experiment.metrics}
    for table in experiment.tables:
        labels = [lab for lab in dict.fromkeys(summary.benchmark) if groups.get(lab) in table.groups]
        if not labels:
            continue
        part = summary[summary.benchmark.isin(labels)]
        configs = [c.name for c in experiment.configs if c.name in set(part.config)]
        cells = part.set_index(["benchmark", "metric", "config"])
        lines += ["", f"## {table.title}", ""]
        lines.append("| benchmark | metric | " + " | ".join(configs) + " |")
        lines.append("|---|---|" + "---:|" * len(configs))
        for label in labels:
            for m in dict.fromkeys(part[part.benchmark == label].metric):
                row = []
                for c in configs:
                    if (label, m, c) in cells.index:
                        r = cells.loc[(label, m, c)]
                        row.append(f"{_fmt(r['mean'])} ± {_fmt(r['std'])} [{_fmt(r['min'])}, {_fmt(r['max'])}]")
                    else:
                        row.append("–")
                lines.append(f"| {label} | {titles[m]} | " + " | ".join(row) + " |")
    limited = runs[~runs.completed].drop_duplicates(["label", "config"])
    if not limited.empty:
        lines += [
            "",
            "Runs that stopped at their time limit (their times are the limit): "
            + ", ".join(f"{r.label} {r.config}" for r in limited.itertuples())
            + ".",
        ]
    return "\n".join(lines) + "\n"


def summary_markdown(summary: pd.DataFrame, experiment: Experiment) -> str:
    base_name = experiment.baseline
    configs = [c for c in experiment.configs if c.name != base_name]
    lines = [
        f"# {experiment.title}",
        "",
        f"Ratios to {base_name} with the same seed, mean ± standard deviation over the repetitions "
        f"(above 1: better than {base_name}). speedup = t_{base_name} / t; energy saving = E_{base_name} / E; "
        f"EDP ratio = EDP_{base_name} / EDP.",
        "",
        "Configurations: " + "; ".join(f"`{c.name}` = {c.title}" for c in experiment.configs) + ".",
    ]
    for table in experiment.tables:
        part = summary[summary.group.isin(table.groups)]
        if part.empty:
            continue
        for metric, what, unit_col, unit in (
            ("speedup", "time", "time_s_mean", "s"),
            ("energy_saving", "energy", "energy_j_mean", "J"),
            ("edp_ratio", "energy-delay product", "edp_js_mean", "J·s"),
        ):
            lines += ["", f"## {table.title}: {what}", ""]
            lines.append(f"| benchmark | {base_name} {what} ({unit}) | " + " | ".join(c.name for c in configs) + " |")
            lines.append("|---|---:|" + "---:|" * len(configs))
            for label, g in part.groupby("label", sort=False):
                by = g.set_index("config")
                base = by.loc[base_name]
                cells = [
                    _fmt_ratio(by.loc[c.name, f"{metric}_mean"], by.loc[c.name, f"{metric}_std"])
                    if c.name in by.index
                    else "–"
                    for c in configs
                ]
                lines.append(
                    f"| {label} | {base[unit_col]:.4g} ± {base[unit_col.replace('_mean', '_std')]:.2g} | "
                    + " | ".join(cells)
                    + " |"
                )
    incomplete = summary[~summary.completed]
    if not incomplete.empty:
        lines += [
            "",
            "Runs that hit the time limit (their times are lower bounds): "
            + ", ".join(f"{r.label} {r.config}" for r in incomplete.itertuples())
            + ".",
        ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def claims_markdown(claims: list[Claim]) -> str:
    if not any(c.band or c.mechanism for c in claims):
        lines = ["| claim | paper | hetlab | holds? |", "|---|---|---|---|"]
        lines += [f"| {_cell(c.claim)} | {_cell(c.paper)} | {_cell(c.hetlab)} | {c.holds} |" for c in claims]
        return "\n".join(lines)
    lines = [
        "| claim | paper | band (set before the run) | hetlab | holds? | mechanism |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {_cell(c.claim)} | {_cell(c.paper)} | {_cell(c.band)} | {_cell(c.hetlab)} | {c.holds} "
        f"| {_cell(c.mechanism)} |"
        for c in claims
    ]
    return "\n".join(lines)


# --- report.md ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Provenance:
    """What a run was made from, beyond the experiment's definition."""

    platform: str
    platform_sha256: str
    seeds: list[int]
    workloads: dict[str, str]  # label -> the workload spec it ran
    prepared: Prepared
    boards: dict[str, str] | None = None  # every board the runs used -> its sha256 (None: platform only)


def _versions() -> dict[str, str]:
    from hetlab.train import library_versions

    return {
        "python": _platform.python_version(),
        **library_versions(("hetlab", "numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "pyarrow")),
    }


def _options_text(options: dict) -> str:
    return ", ".join(f"{k} `{v}`" for k, v in options.items())


def report_markdown(
    experiment: Experiment,
    summary: pd.DataFrame,
    claims: list[Claim],
    prov: Provenance,
    figures: list[str],
    runs: pd.DataFrame | None = None,
) -> str:
    base_name = experiment.baseline
    counts = {k: sum(c.holds == k for c in claims) for k in ("yes", "partly", "no", NOT_RUN)}
    seeds = ", ".join(map(str, prov.seeds))
    numbers = (
        "summary.csv gives each metric's mean, standard deviation, minimum and maximum over them."
        if experiment.metrics
        else f"ratios are to {base_name} with the same seed, mean ± standard deviation."
    )
    lines = [
        f"# Reproduction: {experiment.title}",
        "",
        "Every number below comes from this run's simulations (runs.csv); 'holds?' is computed from them. "
        f"{experiment.method}, {len(prov.seeds)} seeds ({seeds}) per configuration; {numbers}",
        "",
        f"Claims: {counts['yes']} hold, {counts['partly']} partly, {counts['no']} do not"
        + (f", {counts[NOT_RUN]} not run (benchmarks not selected)" if counts[NOT_RUN] else "")
        + ".",
        "",
        "## Claims",
        "",
        claims_markdown(claims),
    ]
    notes = [c for c in claims if c.note]
    if notes:
        lines += ["", "### Notes (from the data)", ""]
        lines += [f"- **{c.claim.split(':')[0]}** — {c.note}" for c in notes]
    bars = [f for f in figures if f in {fig.file for fig in experiment.figures}]
    if bars:
        lines += ["", "## Figures", ""] + [f"![{f}]({f})" for f in bars]
        lines += [
            "",
            f"Bars: ratio to {base_name} (above 1: better); error bars: standard deviation of the per-seed ratio; "
            f"the line at 1 is {base_name}. Tables: summary.md, summary.csv; every run: runs.csv.",
        ]
    charts = [c for c in experiment.charts if c.file in figures]
    if charts:
        lines += ["", "## Figures" if not bars else "## More figures"]
        for c in charts:
            lines += ["", f"![{c.title}]({c.file})"] + ([c.caption] if c.caption else [])
    if experiment.report_sections is not None:
        for section in experiment.report_sections(summary, prov.prepared):
            if section:
                lines += [""] + section
    if experiment.runs_sections is not None and runs is not None:
        for section in experiment.runs_sections(summary, runs, prov.prepared):
            if section:
                lines += [""] + section
    boards = prov.boards or {prov.platform: prov.platform_sha256}
    where = ("platforms " if len(boards) > 1 else "platform ") + ", ".join(
        f"`{p}` (sha256 `{sha[:16]}…`)" for p, sha in boards.items()
    )
    lines += [
        "",
        "## Provenance",
        "",
        f"- experiment `{experiment.name}`, {where}",
        f"- seeds {seeds}",
        "- configurations: " + "; ".join(f"`{c.name}` = {_options_text(c.options)}" for c in experiment.configs),
    ]
    if experiment.provenance is not None:
        lines += experiment.provenance(prov.prepared)
    lines.append("- versions: " + ", ".join(f"{k} {v}" for k, v in _versions().items()))
    lines += ["- workloads:", ""] + [f"  - `{label}`: `{spec}`" for label, spec in prov.workloads.items()]
    return "\n".join(lines) + "\n"


# --- writing ------------------------------------------------------------------------------------


def write_outputs(
    out: Path,
    experiment: Experiment,
    runs: pd.DataFrame,
    summary: pd.DataFrame,
    claims: list[Claim],
    prov: Provenance,
    intervals: pd.DataFrame | None = None,
    series: pd.DataFrame | None = None,
) -> list[Path]:
    """Renders every output into a staging folder inside `out`, then moves each into place
    (`_files.staging_folder`: each file appears whole); outputs of an earlier run that this run
    does not produce are removed."""
    intervals = intervals if intervals is not None else intervals_frame([])
    with staging_folder(out) as staging:
        (staging / "runs.csv").write_text(runs.to_csv(index=False))
        (staging / "summary.csv").write_text(summary.to_csv(index=False))
        if experiment.metrics:
            long = summarize_metrics(runs, experiment) if experiment.wide_summary else summary
            md = metrics_markdown(long, runs, experiment)
        else:
            md = summary_markdown(summary, experiment)
        (staging / "summary.md").write_text(md)
        if not intervals.empty:
            # times to the µs, as ftrace prints them
            (staging / INTERVALS).write_text(intervals.to_csv(index=False, float_format="%.6f"))
        if series is not None and not series.empty:
            (staging / SERIES).write_text(series.to_csv(index=False, float_format="%.6g"))
        figures = plots.write_figures(staging, experiment, summary, runs, intervals, prepared=prov.prepared)
        (staging / "report.md").write_text(report_markdown(experiment, summary, claims, prov, figures, runs))
        produced = sorted(p.name for p in staging.iterdir())
    for name in outputs(experiment):
        if name not in produced:
            (out / name).unlink(missing_ok=True)
    return [out / name for name in outputs(experiment) if name in produced]
