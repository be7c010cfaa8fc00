"""Every benchmark x configuration x seed of an experiment, simulated on an executor, one row per
run (`run_all`; `hetlab.reproduce` runs an experiment's plan with it). Kept apart from
`hetlab.reproduce` so that an experiment's own module may run extra benchmarks with the same rows
(`hetlab.experiments.measured_profiles`) without importing the package of experiments.
"""

from __future__ import annotations

import inspect
import sys

from hetlab import api
from hetlab.experiment import Benchmark, Config, Context, Experiment, Prepared

SEED = 1  # the first seed, unless --seed says otherwise


def _row(bench: Benchmark, spec: str, config: Config, seed: int, r: api.SimResult, experiment: Experiment) -> dict:
    row = {
        "benchmark": bench.name,
        **bench.options,
        "label": bench.label,
        "group": bench.group,
        "config": config.name,
        "seed": seed,
        "workload": spec,
        **r.metrics(),
    }
    if experiment.run_columns is not None:
        row.update(experiment.run_columns(bench, config, r))
    return row


def _intervals(bench: Benchmark, config: Config, seed: int, r: api.SimResult):
    """A run's intervals with the columns that say which run they come from."""
    df = r.intervals_df()
    for i, (col, value) in enumerate((("label", bench.label), ("config", config.name), ("seed", seed))):
        df.insert(i, col, value)
    return df


def _series(bench: Benchmark, config: Config, seed: int, r: api.SimResult):
    """A run's time series, every cluster's decimated to `SERIES_POINTS` samples, with the
    columns that say which run it comes from."""
    import numpy as np
    import pandas as pd

    from hetlab.report import SERIES_COLUMNS, SERIES_POINTS

    s = r.series
    clusters = np.asarray(s["cluster"])
    keep = np.zeros(len(clusters), dtype=bool)
    for name in dict.fromkeys(clusters):
        mine = np.flatnonzero(clusters == name)
        keep[mine[:: max(1, -(-len(mine) // SERIES_POINTS))]] = True
    df = pd.DataFrame({"time_s": s["time_s"][keep], "cluster": clusters[keep]})
    for column in SERIES_COLUMNS:
        df[column] = s[column][keep]
    for i, (col, value) in enumerate((("label", bench.label), ("config", config.name), ("seed", seed))):
        df.insert(i, col, value)
    return df


# a run's limit unless its experiment gives one: simulate's
DEFAULT_TIME_LIMIT_S = inspect.signature(api.simulate).parameters["time_limit_s"].default


def limited(options: dict, time_limit_s: float | None) -> tuple[dict, bool]:
    """A run's options under --time-limit (`time_limit_s`; None: none), and whether it cut them:
    it applies only where it is below the run's own limit."""
    cut = time_limit_s is not None and time_limit_s < options.get("time_limit_s", DEFAULT_TIME_LIMIT_S)
    return ({**options, "time_limit_s": time_limit_s} if cut else options), cut


def check_finished(results: list, cut: bool, what: str, time_limit_s: float | None) -> None:
    """A run --time-limit cut before it finished is a one-line error naming `what`, never a row."""
    if cut and not all(r.summary["completed"] for r in results):
        raise api.HetlabError(
            f"{what} did not finish within --time-limit {time_limit_s:g} s of simulated time; raise it or leave "
            "it out (--benchmarks)"
        )


def simulate_within(time_limit_s: float | None, what: str, platform: str, spec: str, /, **options) -> api.SimResult:
    """`api.simulate` under --time-limit (`limited`, `check_finished`); `options` may hold the run's own
    `time_limit_s` (the parameters before it are positional only)."""
    options, cut = limited(options, time_limit_s)
    r = api.simulate(platform, spec, **options)
    check_finished([r], cut, what, time_limit_s)
    return r


def run_all(
    experiment: Experiment,
    benchmarks: list[Benchmark],
    specs: dict[str, str],
    prepared: Prepared,
    reps: int,
    seed: int,
    ctx: Context,
) -> tuple[list[dict], list, list]:
    """Every benchmark under every configuration that runs it, with seeds seed..seed+reps-1,
    on the context's executor; the rows come back in plan order, with the run intervals of the
    first seed's runs that recorded them and the first seed's time series (DataFrames, plan
    order)."""
    from tqdm import tqdm

    plan = [(b, c, seed + i) for b in benchmarks for c in experiment.configs if c.runs(b) for i in range(reps)]
    platform = ctx.platform  # the job function goes to the executor's workers: no ctx in it
    time_limit_s = ctx.time_limit_s

    def one(item):
        bench, config, s = item
        spec = specs[bench.label]
        options = experiment.simulate_options(bench, config, prepared)
        # the first seed's time series goes into the report; the others are not kept
        what = f"{bench.label} under {config.name} (seed {s})"
        r = simulate_within(time_limit_s, what, bench.platform or platform, spec, seed=s, series=s == seed, **options)
        keep = any(c.uses_intervals for c in experiment.charts) and s == seed and r.intervals is not None
        kept = _intervals(bench, config, s, r) if keep else None
        series = _series(bench, config, s, r) if s == seed else None
        return _row(bench, spec, config, s, r, experiment), kept, series

    results: list = [None] * len(plan)

    def done(index: int, result) -> None:
        results[index] = result
        bar.update(1)

    bar = tqdm(
        total=len(plan), desc=experiment.name, unit="run", disable=None if ctx.progress else True, file=sys.stderr
    )
    try:
        ctx.executor.run(one, [(item,) for item in plan], done)
    finally:
        bar.close()
    # plan order: the same inputs give the same table, whichever executor ran them
    rows = [row for row, _, _ in results]
    return rows, [kept for _, kept, _ in results if kept is not None], [s for *_, s in results if s is not None]
