"""`hetlab reproduce NAME`: a seed document's experiment as one command (the generic runner).

An experiment (`hetlab.experiment`; one module per reproduction in `hetlab.experiments`) holds
its benchmarks, configurations, claims and steps. This module is the order they run in:

    select      the benchmarks (--benchmarks, --workload)
    check       every input, before anything is written: counts, workloads, platform, the
                experiment's own settings
    prepare     the experiment's preparation into OUT (lctes2020: characterization sweep, training)
    calibrate   workloads sized at run time
    run_all     every benchmark x configuration (that runs it) x seed, in parallel, one row per run
    report      tables, figures, claims and report.md (hetlab.report)

and the `reproduce` subcommand: its options, `--list`, and the time line it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hetlab import _core, api, experiments
from hetlab._files import check_output_folder
from hetlab.api import HetlabError
from hetlab.executor import EXECUTOR_HELP, check_workers, using
from hetlab.experiment import Benchmark, Context, Experiment, Prepared
from hetlab.runs import SEED, run_all


@dataclass
class Outcome:
    out: Path
    files: list[Path]
    runs: object  # pandas DataFrame: runs.csv
    summary: object  # pandas DataFrame: summary.csv
    claims: list
    prepared: Prepared
    runs_count: int
    timings_s: dict[str, float]  # the preparation's steps, then experiments, outputs, total
    intervals: object = None  # pandas DataFrame: intervals.csv (empty if no run recorded them)


# --- selection and checks -----------------------------------------------------------------------


def select(experiment: Experiment, benchmarks: str | None, workloads: Sequence[str] = ()) -> list[Benchmark]:
    """The benchmarks to run, in the experiment's plan order. `benchmarks`: comma-separated
    group names, benchmark names (every run of it), labels (one run of it) or `all`; `workloads`:
    NAME=SPEC overrides of a benchmark's workload."""
    names = {b.name for b in experiment.benchmarks}
    overrides = {}
    for item in workloads:
        name, sep, spec = item.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep or not spec:
            raise HetlabError(f"--workload expects BENCHMARK=WORKLOAD, e.g. gcc-g23=my-gcc.toml; got '{item}'")
        if name not in names:
            raise HetlabError(f"--workload: unknown benchmark '{name}'; known: {experiment.names_help}")
        overrides[name] = spec
    tokens = [t.strip() for t in (benchmarks or "all").split(",") if t.strip()]
    if not tokens:
        raise HetlabError("--benchmarks is empty; give names such as ccbench,gcc-g23 or 'all'")
    chosen = set()
    for tok in tokens:
        if tok == "all":
            chosen.update(b.label for b in experiment.benchmarks)
        elif tok in experiment.groups:
            chosen.update(b.label for b in experiment.benchmarks if b.group in experiment.groups[tok])
        else:
            picked = {b.label for b in experiment.benchmarks if tok in (b.name, b.label)}
            if not picked:
                labels = f" ({experiment.labels_help})" if experiment.labels_help else ""
                raise HetlabError(
                    f"--benchmarks: unknown benchmark '{tok}'; known: all, {', '.join(experiment.groups)}, "
                    f"{experiment.names_help}{labels}"
                )
            chosen |= picked
    return [
        replace(b, workload=overrides[b.name], calibrate=False) if b.name in overrides else b
        for b in experiment.benchmarks
        if b.label in chosen
    ]


def _check_counts(reps: int, seed: int, jobs: int | None) -> None:
    api.check_reps(reps, seed)
    check_workers(jobs)


def _check_workloads(benchmarks: list[Benchmark]) -> None:
    from hetlab import _core

    missing, bad = [], []
    for spec in dict.fromkeys(b.workload for b in benchmarks):
        probe = spec + ",iterations=1000" if spec.startswith("ccbench:") and "iterations=" not in spec else spec
        try:
            _core.workload_summary(*api._workload_args(probe))
        except ValueError as e:  # HetlabError (unreadable file) is a ValueError too
            if str(e).startswith("unknown workload"):
                missing.append(spec)
            else:
                bad.append(f"workload '{spec}': {e}")
    if missing:
        raise HetlabError(
            f"workload(s) {', '.join(missing)} are not built into this hetlab (hetlab workloads lists them); "
            "choose benchmarks with --benchmarks or map one to a workload with --workload NAME=SPEC"
        )
    if bad:
        raise HetlabError(bad[0])


def _check_earlier_results(out: Path, exp: Experiment, selected: list[Benchmark], force: bool) -> None:
    """Refuses to replace the results of another experiment, or of benchmarks this run leaves
    out, in `out` unless `force`: a re-run with fewer benchmarks would otherwise quietly drop
    the others' results."""
    from hetlab import report

    report_md, runs_csv = out / "report.md", out / "runs.csv"
    if force or not report_md.is_file():
        return
    earlier = report.experiment_of_report(report_md.read_text(errors="replace"))
    if earlier is not None and earlier != exp.name:
        raise HetlabError(
            f"--out '{out}' holds the results of experiment {earlier}; give a new folder, or --force to replace them"
        )
    if runs_csv.is_file():
        import pandas as pd

        try:
            labels = set(pd.read_csv(runs_csv, usecols=["label"])["label"].astype(str))
        except (ValueError, OSError):
            labels = set()
        dropped = sorted(labels - {b.label for b in selected})
        if dropped:
            more = ", ..." if len(dropped) > 3 else ""
            raise HetlabError(
                f"--out '{out}' holds results of {len(dropped)} benchmark(s) this run leaves out "
                f"({', '.join(dropped[:3])}{more}); give a new folder, or --force to replace them"
            )


def _prepare_out(out: Path) -> list[Path]:
    """Creates OUT (and parents) after checking that it can be written; returns the folders it
    created, deepest first (removed again if the run fails before writing into them)."""
    check_output_folder(out, "--out folder")
    if out.exists() and not out.is_dir():
        raise HetlabError(f"--out '{out}' exists and is not a directory")
    existing = out
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise HetlabError(f"cannot create --out '{out}': '{existing}' is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise HetlabError(f"cannot write --out '{out}': '{existing}' is not writable")
    created = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        _remove_if_empty(created)
        raise HetlabError(f"cannot write --out '{out}': {e.strerror}") from None
    return created


def _remove_if_empty(folders: list[Path]) -> None:
    """Removes the folders a failed run created, deepest first, where nothing was written."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (a preparation kept for a resume) or already gone


# --- the runs -----------------------------------------------------------------------------------


# --- the command --------------------------------------------------------------------------------


def reproduce(
    experiment: str | Experiment = "lctes2020",
    out: str | os.PathLike | None = None,
    *,
    settings: object | None = None,
    reps: int | None = None,
    seed: int = SEED,
    benchmarks: str | None = None,
    workloads: Sequence[str] = (),
    platform: str | None = None,
    jobs: int | None = None,
    executor: str | None = None,
    force: bool = False,
    progress: bool = True,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
    time_limit_s: float | None = None,
) -> Outcome:
    """Runs EXPERIMENT (a name, or an Experiment) and writes its outputs into `out` (default
    results/NAME). `settings`: the experiment's own options (default: its defaults); `reps`
    (default: the experiment's); `platform` (default: the experiment's board; benchmarks with
    a board of their own keep it); `executor`: `local` (default, `jobs` threads) or
    `dask://HOST:PORT` (see `hetlab.executor`); `force`: replace the results of another
    experiment or selection in `out` (otherwise refused); `time_limit_s`: no run goes beyond this
    much simulated time, and a run it cuts is an error (never a row)."""
    t0 = time.perf_counter()
    exp = experiments.get(experiment) if isinstance(experiment, str) else experiment
    reps = exp.reps if reps is None else reps
    _check_counts(reps, seed, jobs)
    api.check_time_limit(time_limit_s)
    if settings is None and exp.settings is not None:
        settings = exp.settings()
    selected = select(exp, benchmarks, workloads)
    _check_workloads(selected)
    if platform is not None and selected and all(b.platform for b in selected):
        raise HetlabError(
            f"--platform: every selected benchmark of {exp.name} runs on its own board "
            f"({', '.join(dict.fromkeys(b.platform for b in selected))}); choose benchmarks that run on "
            f"{exp.platform} with --benchmarks"
        )
    platform = platform if platform is not None else exp.platform
    # a bad platform fails here, before anything is written
    sha = api.load_platform(platform).sha256
    with using(executor, jobs) as runner:
        ctx = Context(platform, sha, jobs, progress, log, runner, time_limit_s, tuple(b.label for b in selected))
        return _reproduce(exp, selected, settings, reps, seed, out, ctx, t0, force)


def _reproduce(
    exp: Experiment,
    selected: list[Benchmark],
    settings: object | None,
    reps: int,
    seed: int,
    out: str | os.PathLike | None,
    ctx: Context,
    t0: float,
    force: bool,
) -> Outcome:
    from hetlab import report

    platform = ctx.platform
    boards = {
        p: ctx.platform_sha256 if p == platform else api.load_platform(p).sha256 for p in _boards(selected, platform)
    }
    plan = exp.check(settings, ctx) if exp.check else settings
    out_dir = Path(out if out is not None else Path("results") / exp.name)
    _check_earlier_results(out_dir, exp, selected, force)
    created = _prepare_out(out_dir)
    try:
        prepared = exp.prepare(plan, out_dir, ctx) if exp.prepare else Prepared()
        t_runs = time.perf_counter()
        specs = exp.calibrate(selected, ctx) if exp.calibrate else {b.label: b.workload for b in selected}
        rows, kept, series = run_all(exp, selected, specs, prepared, reps, seed, ctx)
    except BaseException:  # a failure or Ctrl-C before any output: no empty folder left behind
        _remove_if_empty(created)
        raise
    t_out = time.perf_counter()

    runs_df = report.runs_frame(rows)
    intervals_df = report.intervals_frame(kept)
    summary_df = report.summarize(runs_df, exp)
    claims = exp.claims(summary_df, runs_df)
    prov = report.Provenance(platform, ctx.platform_sha256, list(range(seed, seed + reps)), specs, prepared, boards)
    files = report.write_outputs(
        out_dir, exp, runs_df, summary_df, claims, prov, intervals_df, report.series_frame(series)
    )
    t_end = time.perf_counter()
    timings = {**prepared.timings_s, "experiments": t_out - t_runs, "outputs": t_end - t_out, "total": t_end - t0}
    return Outcome(out_dir, files, runs_df, summary_df, claims, prepared, len(rows), timings, intervals_df)


def _boards(benchmarks: list[Benchmark], platform: str) -> list[str]:
    """The boards the benchmarks run on, in plan order."""
    return list(dict.fromkeys(b.platform or platform for b in benchmarks))


HELP = """\
Reproduce a seed document's experiment: every selected benchmark under every configuration,
--reps seeds each, in parallel with a progress bar on stderr. Outputs in OUT (default
results/NAME): runs.csv (one row per run), summary.csv and summary.md (per benchmark and
configuration, mean and standard deviation of time, energy, EDP and of their per-seed ratios to
the baseline configuration), the experiment's figures, and report.md (each of the source's claims
next to hetlab's numbers, with whether it holds, and the provenance). Every input is checked
before anything is written, and every file is written through a temporary file.

experiments (hetlab reproduce --list):
"""


def _description(known: Mapping[str, Experiment]) -> str:
    parts = [HELP]
    for e in known.values():
        parts.append(f"{e.name}: {e.title}\n  source: {e.source}\n\n{textwrap.indent(e.description, '  ')}\n")
    return "\n".join(parts)


def listing(known: Mapping[str, Experiment] = experiments.EXPERIMENTS) -> str:
    """`hetlab reproduce --list`: each experiment's name and title, and its source below."""
    return "\n".join(f"{e.name}  {e.title}\n{'':{len(e.name)}}  source: {e.source}" for e in known.values())


def listing_json(known: Mapping[str, Experiment] = experiments.EXPERIMENTS) -> str:
    """`hetlab reproduce --list --json`: each experiment's name, title, source, board, default
    repetitions and benchmark groups, for scripts."""
    rows = [
        {
            "name": e.name,
            "title": e.title,
            "source": e.source,
            "platform": e.platform,
            "reps": e.reps,
            "benchmarks": list(dict.fromkeys(b.name for b in e.benchmarks)),
            "groups": {name: list(groups) for name, groups in e.groups.items()},
        }
        for e in known.values()
    ]
    return json.dumps(rows, indent=2)


def _own_defaults(experiment: Experiment) -> dict[str, object]:
    """The experiment's own options (argparse dest -> default)."""
    if experiment.settings is None:
        return {}
    scratch = argparse.ArgumentParser(add_help=False)
    experiment.settings.add_arguments(scratch.add_argument_group())
    return vars(scratch.parse_args([]))


def configure_parser(
    p: argparse.ArgumentParser, known: Mapping[str, Experiment] = experiments.EXPERIMENTS
) -> argparse.ArgumentParser:
    """The options of `hetlab reproduce`: the runner's, then each experiment's own in a group
    of its name (an option name means one thing across experiments)."""
    p.description = _description(known)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("experiment", nargs="?", help=f"experiment to reproduce: {', '.join(known)}")
    p.add_argument("--list", action="store_true", help="list the experiments with their titles and sources")
    p.add_argument("--json", action="store_true", help="with --list: the list as JSON, for scripts")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default: results/EXPERIMENT); what an experiment prepared there is reused",
    )
    p.add_argument(
        "--reps",
        type=int,
        metavar="N",
        help=f"repetitions per benchmark and configuration, seeds SEED.., at most {api.MAX_REPS} (default: the "
        "experiment's: " + ", ".join(f"{e.name} {e.reps}" for e in known.values()) + ")",
    )
    p.add_argument("--seed", type=int, default=SEED, metavar="S", help=f"first seed (default: {SEED})")
    p.add_argument(
        "--platform",
        metavar="P",
        help="built-in platform name or platform .toml, e.g. one with your board's constants (default: the "
        "experiment's board: " + ", ".join(f"{e.name} {e.platform}" for e in known.values()) + "; benchmarks "
        "with a board of their own keep it)",
    )
    p.add_argument(
        "--benchmarks",
        metavar="LIST",
        help="comma-separated subset: all (default), a group, a benchmark's name or one run's label; "
        + "; ".join(
            f"{e.name}: {', '.join(e.groups)}, {e.names_help}" + (f" ({e.labels_help})" if e.labels_help else "")
            for e in known.values()
        ),
    )
    p.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="BENCHMARK=WORKLOAD",
        help="run BENCHMARK with another workload (spec, built-in name or .toml file); repeatable",
    )
    p.add_argument("--jobs", type=int, metavar="N", help="parallel simulations (default: number of CPUs)")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the results of another experiment, or of benchmarks this run leaves out, in --out",
    )
    p.add_argument(
        "--html",
        action="store_true",
        help="also write report.html: the report as one self-contained page (hetlab report)",
    )
    p.add_argument("--executor", metavar="SPEC", help=EXECUTOR_HELP)
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        help=f"no run goes beyond S simulated seconds, 0 < S <= {_core.MAX_TIME_LIMIT_S:g}; a run it cuts is an "
        "error, never a row (default: each run's own limit, as simulate's)",
    )
    for e in known.values():
        if e.settings is not None:
            e.settings.add_arguments(p.add_argument_group(f"{e.name} options"))
    p.set_defaults(func=cmd_reproduce)
    return p


def _settings(
    experiment: Experiment, args: argparse.Namespace, known: Mapping[str, Experiment] = experiments.EXPERIMENTS
) -> object | None:
    """The experiment's own settings from the command line; an option of another experiment
    is an error."""
    mine = _own_defaults(experiment)
    for other in known.values():
        for dest, default in _own_defaults(other).items():
            if dest not in mine and getattr(args, dest) != default:
                raise HetlabError(
                    f"--{dest.replace('_', '-')} is an option of experiment {other.name}, not of {experiment.name}"
                )
    return experiment.settings.from_arguments(args) if experiment.settings is not None else None


def cmd_reproduce(args: argparse.Namespace) -> int:
    if args.json and not args.list:
        raise HetlabError("--json goes with --list (the experiments as JSON); a reproduction writes its files to --out")
    if args.list:
        print(listing_json() if args.json else listing())
        return 0
    if args.experiment is None:
        raise HetlabError(
            f"name the experiment to reproduce: {', '.join(experiments.EXPERIMENTS)} (hetlab reproduce --list)"
        )
    experiment = experiments.get(args.experiment)
    result = reproduce(
        experiment,
        args.out,
        settings=_settings(experiment, args),
        reps=args.reps,
        seed=args.seed,
        benchmarks=args.benchmarks,
        workloads=args.workload,
        jobs=args.jobs,
        executor=args.executor,
        force=args.force,
        platform=args.platform,
        time_limit_s=args.time_limit,
    )
    from hetlab import report

    files = list(result.files)
    if args.html:
        from hetlab import html_report

        files.append(
            html_report.write_page(html_report.experiment_page(result.out), result.out / html_report.REPORT_HTML)
        )
    print(report.claims_markdown(result.claims))
    print()
    print(f"wrote {', '.join(str(f) for f in files)}")
    t = result.timings_s
    steps = [f"{step} {s:.1f} s" for step, s in result.prepared.timings_s.items()]
    steps += [
        f"experiments {t['experiments']:.1f} s ({result.runs_count} runs)",
        f"outputs {t['outputs']:.1f} s",
        f"total {t['total']:.1f} s",
    ]
    print("time: " + ", ".join(steps))
    return 0
