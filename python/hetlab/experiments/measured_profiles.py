"""Measured workload profiles next to the assumed ones of the lctes2020 reproduction.

The paper's gcc/g23, Speedometer 2 and mplayer runs have built-in profiles that are ASSUMPTIONS
(their files say from what); `scripts/measure-profiles.sh` measures stand-ins on this machine with
`hetlab profile` (data/workloads/measured-*.toml: gcc on a real C file, QuickJS on a TodoMVC
workload, ffmpeg decoding 1080p H.264). `section` runs each measured profile on both clusters
under lctes2020's own configurations, seeds and options (its `simulate_options`, the same
trained model), summarises them with the generic summary (`hetlab.report.summarize`) and returns
report.md's table of both, side by side. lctes2020's runs.csv and summary.csv do not change: these
runs are only in report.md.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from hetlab.experiment import Experiment, Prepared

# (the paper's benchmark as lctes2020 names it, its measured stand-in: a built-in workload)
PAIRS = (
    ("gcc-g23", "measured-gcc"),
    ("speedometer2", "measured-js-todomvc"),
    ("mplayer-1080p", "measured-h264-decode"),
)
SHOWN = ("idle-min", "all-max", "anti-snoop")  # configurations in the table, besides the baseline


def _cell(row: dict | None, metric: str) -> str:
    return "–" if row is None else f"{row[f'{metric}_mean']:.2f}x"


def section(summary: pd.DataFrame, prepared: Prepared, experiment: Experiment) -> list[str]:
    """report.md's section: for each pair whose assumed benchmark ran, both profiles on both
    clusters: L2 MPKI under the baseline, and speedup and energy saving over it. The measured
    benchmarks are `experiment`'s assumed ones with the workload swapped (same options, labels
    with the measured name), run with its configurations and `simulate_options`."""
    from hetlab import report
    from hetlab.executor import LocalExecutor
    from hetlab.experiment import Context
    from hetlab.runs import SEED, run_all

    ran = set(summary.benchmark)
    pairs = [(assumed, measured) for assumed, measured in PAIRS if assumed in ran]
    lines = ["## Measured profiles next to the assumed ones", ""]
    if not pairs:
        return [*lines, "Not run: none of " + ", ".join(a for a, _ in PAIRS) + " was selected."]
    reps = int(summary.reps.max())
    # (pair, assumed benchmark, its measured twin) in the experiment's plan order
    rows_of = [
        (assumed, b, replace(b, name=measured, label=measured + b.label[len(assumed) :], workload=measured))
        for assumed, measured in pairs
        for b in experiment.benchmarks
        if b.name == assumed
    ]
    twins = [t for _, _, t in rows_of]
    ctx = Context(experiment.platform, "", None, False, lambda _m: None, LocalExecutor())
    rows, _, _ = run_all(experiment, twins, {t.label: t.workload for t in twins}, prepared, reps, SEED, ctx)
    measured_summary = report.summarize(report.runs_frame(rows), experiment)
    look = {(r["label"], r["config"]): r for r in summary.to_dict("records")}
    look.update({(r["label"], r["config"]): r for r in measured_summary.to_dict("records")})
    lines += [
        "The paper's gcc, web and video benchmarks run on built-in profiles that are ASSUMPTIONS (see their "
        "files). The measured stand-ins (`data/workloads/measured-*.toml`, made by `scripts/measure-profiles.sh` "
        "with `hetlab profile`: gcc on a real C file, QuickJS on a TodoMVC workload, ffmpeg decoding 1080p H.264; "
        "x86-64 measurements, see each file's caveats) ran here under the same configurations, "
        f"{reps} seeds from {SEED}, and the same anti-snoop model. Speedup and energy saving are over "
        f"{experiment.baseline} (mean of per-seed ratios); L2 MPKI is the {experiment.baseline} run's. These runs "
        "are not in runs.csv or summary.csv.",
        "",
        "| benchmark | profile | cluster | L2 MPKI | "
        + " | ".join(f"{c} speedup" for c in SHOWN)
        + " | "
        + " | ".join(f"{c} energy saving" for c in SHOWN)
        + " |",
        "|" + "---|" * (4 + 2 * len(SHOWN)),
    ]
    for assumed, *benches in rows_of:
        for which, b in zip(("assumed", "measured"), benches, strict=True):
            base = look.get((b.label, experiment.baseline))
            mpki = "–" if base is None else f"{base['l2_mpki']:.2f}"
            lines.append(
                f"| {assumed} | {which}: `{b.workload}` | {b.options.get('cluster', '')} | {mpki} | "
                + " | ".join(_cell(look.get((b.label, c)), "speedup") for c in SHOWN)
                + " | "
                + " | ".join(_cell(look.get((b.label, c)), "energy_saving") for c in SHOWN)
                + " |"
            )
    return lines
