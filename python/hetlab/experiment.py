"""What a reproduction is (types only).

`hetlab reproduce NAME` runs an `Experiment`: every selected benchmark under every configuration,
several seeds each, and compares each configuration with a baseline one; the experiment judges its
source's claims from those numbers. Each experiment is one module in `hetlab.experiments` that
builds an `Experiment` from these types; `hetlab.reproduce` runs it and `hetlab.report` writes its
tables, figures and report. A benchmark and a configuration are each a set of `hetlab.api.simulate`
options, so an experiment may vary anything the simulator takes: governors, tunables, fixed
frequencies, schedulers, idle states, hotplug, models.

The steps an experiment may add (fields of `Experiment`), in the order the runner calls them:

    check(settings, ctx) -> plan         its own settings checked; nothing written yet
    prepare(plan, out, ctx) -> Prepared  what its runs need, made in OUT (lctes2020: sweep, training)
    calibrate(benchmarks, ctx)           label -> workload spec, for workloads sized at run time
    simulate_options(bench, config, prepared)   the simulate options of one run
    run_columns(bench, config, result)   more runs.csv columns from one run's SimResult
    measures(runs, summary row)          more summary.csv columns for one label and configuration
    claims(summary, runs) -> [Claim]     the source's claims, judged from the numbers
    report_sections(summary, prepared)   report.md sections of its own, each a list of lines
    runs_sections(summary, runs, prepared)   the same, from runs.csv
    provenance(prepared)                 report.md provenance items of its own

Two shapes of summary.csv: by default one row per label and configuration with means, standard
deviations and ratios to the baseline (`measures` adds columns); an experiment that declares
`metrics` gets one row per label x configuration x metric instead (mean, std, min, max, n of a
runs.csv column). An experiment with charts gets the intervals of its runs made with
`intervals=True` (in `simulate_options`): the first seed's `SimResult.intervals`, kept in
intervals.csv and handed to the charts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import argparse

    import pandas as pd

    from hetlab.api import SimResult

NOT_RUN = "not run"  # a claim whose benchmarks were not selected
DEFAULT_REPS = 5  # seeds per benchmark and configuration, unless an experiment says otherwise


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as it runs: one label in the tables and figures. `options` are the
    `hetlab.api.simulate` options that place it (lctes2020: the cluster it is pinned to); each is
    also a column of runs.csv and summary.csv."""

    name: str  # what --benchmarks and --workload call it: gcc-g23
    label: str  # its runs' label in tables and figures: gcc-g23-L
    workload: str  # a hetlab workload spec, built-in name or .toml file
    group: str  # a --benchmarks group and a part of the tables and figures: spec
    options: Mapping[str, Any] = field(default_factory=dict)
    calibrate: bool = False  # the experiment's `calibrate` step sizes the workload (never a --workload one)
    platform: str | None = None  # the board it runs on (None: the experiment's, or --platform)


@dataclass(frozen=True)
class Config:
    """A configuration: the `hetlab.api.simulate` options its runs add to the benchmark's
    (governor, tunables, freq, offline, scheduler, sched_tunables, cpuidle, model, time_limit_s)."""

    name: str  # its column in tables and figures: anti-snoop
    title: str  # its legend: anti-snoop (model trained here)
    options: Mapping[str, Any]
    paper: bool = True  # one of the source's own configurations (False: a column hetlab adds)
    colour: str | None = None  # its bars (None: matplotlib's next colour)
    hatch: str = ""
    groups: tuple[str, ...] = ()  # the benchmark groups it runs (empty: every group)

    def runs(self, benchmark: Benchmark) -> bool:
        return not self.groups or benchmark.group in self.groups


@dataclass(frozen=True)
class Figure:
    """A bar chart of one ratio to the baseline: a group of bars per label, a bar per
    configuration. Written when one of its benchmark groups was run."""

    file: str  # fig6a_time.png
    title: str
    groups: tuple[str, ...]  # the benchmark groups it shows
    metric: str  # speedup | energy_saving | edp_ratio
    ylabel: str
    separate_by: str | None = None  # a summary column: a dotted line where its value changes


@dataclass(frozen=True)
class Metric:
    """A runs.csv column that summary.csv summarises (the long summary shape)."""

    name: str  # the runs.csv column: sf_exec_s
    title: str  # in summary.md: SurfaceFlinger execution time
    unit: str  # s, J, share, count


@dataclass(frozen=True)
class ChartData:
    """What an experiment's chart is drawn from."""

    summary: pd.DataFrame
    runs: pd.DataFrame
    intervals: pd.DataFrame  # the first seed's run intervals (intervals.csv; empty if none)
    configs: tuple[Config, ...]
    prepared: Prepared | None = None  # what the experiment's `prepare` made (None: not known here)


@dataclass(frozen=True)
class Chart:
    """A figure the experiment draws itself; written when one of its benchmark groups was run."""

    file: str
    title: str
    groups: tuple[str, ...]
    draw: Callable[[ChartData, Path], None]
    caption: str = ""  # a sentence under it in report.md
    uses_intervals: bool = True  # drawn from the first seed's run intervals (intervals.csv)


@dataclass(frozen=True)
class Table:
    """A part of summary.md: the benchmarks of `groups`, one table per ratio."""

    title: str  # Figure 6: realistic benchmarks
    groups: tuple[str, ...]


@dataclass
class Claim:
    """One of the source's claims next to hetlab's number; `holds` is computed from the runs."""

    claim: str
    paper: str  # what the source says, and where
    hetlab: str
    holds: str  # yes | no | partly | not run
    note: str = ""  # why it does not hold, from the data
    band: str = ""  # the numbers that count as holding (and partly), fixed in the experiment before it runs
    mechanism: str = ""  # what in the model produces hetlab's number, from the data


@dataclass
class Prepared:
    """What an experiment's `prepare` step made for its runs and report; experiments extend it.
    `timings_s` (step -> wall seconds, e.g. sweep, train) is printed in the command's time line."""

    timings_s: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What every step of one `hetlab reproduce` may use."""

    platform: str  # built-in name or platform .toml
    platform_sha256: str
    jobs: int | None  # parallel simulations (None: one per CPU)
    progress: bool  # progress bars on stderr
    log: Callable[[str], None]  # one line for the user, on stderr
    executor: Any  # where the runs go (`hetlab.executor`: LocalExecutor or DaskExecutor)
    # `--time-limit`: no run goes beyond this much simulated time (None: each its own limit)
    time_limit_s: float | None = None
    # the labels of the benchmarks selected (--benchmarks); empty: every benchmark. A `prepare`
    # step makes only what the selected benchmarks' runs and sections need.
    selected: tuple[str, ...] = ()


class Settings(Protocol):
    """An experiment's own command-line options (lctes2020: --model and the sweep's), declared
    once: the dataclass's defaults are the options' defaults."""

    @classmethod
    def add_arguments(cls, group: argparse._ArgumentGroup) -> None: ...

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Settings: ...


def merged_options(benchmark: Benchmark, config: Config, prepared: Prepared) -> dict[str, Any]:
    """The default `simulate_options`: the benchmark's options, then the configuration's."""
    return {**benchmark.options, **config.options}


@dataclass(frozen=True)
class Experiment:
    """One reproduction: its data, and the steps (see the module's docstring) that differ from
    the defaults (None: nothing to do)."""

    name: str  # hetlab reproduce NAME
    title: str
    source: str  # the seed document, and the paper and section it reproduces
    description: str  # for --help: what runs and what the outputs show
    method: str  # how each benchmark ran, a sentence for report.md without its full stop
    platform: str  # the board it reproduces (--platform changes it)
    benchmarks: tuple[Benchmark, ...]  # in plan order, which the tables and figures follow
    configs: tuple[Config, ...]
    baseline: str  # the configuration every ratio is to
    groups: Mapping[str, tuple[str, ...]]  # --benchmarks group name -> benchmark groups
    names_help: str  # its benchmarks' names, for help and errors
    labels_help: str  # how a label names one of a benchmark's runs, for help and errors ("" if it does not)
    tables: tuple[Table, ...]
    figures: tuple[Figure, ...]
    claims: Callable[[pd.DataFrame, pd.DataFrame], list[Claim]]
    reps: int = DEFAULT_REPS  # seeds per benchmark and configuration (--reps default)
    metrics: tuple[Metric, ...] = ()  # the long summary shape (see the module's docstring)
    # summary.csv side by side: one row per label x configuration, `<metric>_mean/_min/_max` for
    # each metric in order, then n (summary.md stays the long shape's)
    wide_summary: bool = False
    charts: tuple[Chart, ...] = ()
    run_columns: Callable[[Benchmark, Config, SimResult], dict] | None = None
    measures: Callable[[pd.DataFrame, dict], dict] | None = None
    settings: type[Settings] | None = None  # its own command-line options
    check: Callable[[Any, Context], Any] | None = None
    prepare: Callable[[Any, Path, Context], Prepared] | None = None
    calibrate: Callable[[list[Benchmark], Context], dict[str, str]] | None = None
    simulate_options: Callable[[Benchmark, Config, Prepared], dict[str, Any]] = merged_options
    report_sections: Callable[[pd.DataFrame, Prepared], list[list[str]]] | None = None
    # report.md sections computed from the runs themselves (summary, runs, prepared)
    runs_sections: Callable[[pd.DataFrame, pd.DataFrame, Prepared], list[list[str]]] | None = None
    provenance: Callable[[Prepared], list[str]] | None = None
