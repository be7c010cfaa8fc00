"""`hetlab reproduce EXPERIMENT`: a seed document's evaluation as one command.

`lctes2020` is the seed paper's §5 (Wolff & Porter, LCTES'20, Figures 5 and 6): every benchmark
runs on one cluster (the other idle) under four configurations, five seeds each, and is compared
with Linux ondemand:

    ondemand         the baseline
    idle-min         active cluster at its top OPP, idle cluster at its lowest
    all-max          both clusters at their top OPP
    anti-snoop       ondemand-anti-snoop with the model trained on this platform
    anti-snoop-fig4  the same governor with the paper's own trees (extra column)

The trained model comes from the characterization sweep and training run into OUT (resumable:
an existing sweep and model in OUT are reused), or from `--model`. Outputs in OUT: runs.csv,
summary.csv, summary.md, fig5_ccbench_time.png, fig6a_time.png, fig6b_energy.png and report.md
(the paper's claims next to hetlab's numbers). Every input is checked before anything is
written, and every file is written through a temporary file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from hetlab import api
from hetlab.api import HetlabError

PLATFORM = "exynos5422"
CLUSTERS = ("little", "big")
CLUSTER_TAG = {"little": "L", "big": "b"}  # the paper's {name}-{input}-{b|L} labels
TRAINED = "<trained>"  # stands for the model trained (or given) in this run
FIG4 = "lctes2020-fig4"


@dataclass(frozen=True)
class Benchmark:
    """One of the paper's benchmarks. `workload` is a hetlab workload spec, name or file; for
    `calibrate` benchmarks (the ccbench grid) the iteration count is added at run time so that
    one run lasts about `run_s` simulated seconds under all-max."""

    name: str  # label stem in the figures: gcc-g23, ccbench-1048576-random
    workload: str
    group: str  # ccbench (Figure 5) | spec | web | video (Figure 6)
    calibrate: bool = False


@dataclass(frozen=True)
class Config:
    name: str
    governor: str
    model: str | None  # TRAINED, FIG4 or None
    title: str
    paper: bool = True  # one of the paper's four configurations (fig4 is an extra column)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    benchmarks: tuple[Benchmark, ...]
    configs: tuple[Config, ...]
    baseline: str = "ondemand"
    run_s: float = 0.75  # ccbench grid: simulated seconds per run under all-max


CCBENCH_SIZES = (
    4096,
    16384,
    65536,
    262144,
    1048576,
)  # 4-byte elements: half/twice L1 (32 KB), A7 L2 (512 KB), A15 L2 (2 MB)
CCBENCH_PATTERNS = ("random", "sequential", "stride-16")

# The paper's Figure 6 benchmarks (§5.1) and their built-in hetlab workloads.
REALISTIC = (
    Benchmark("gcc-g23", "spec-gcc-g23", "spec"),
    Benchmark("bwaves-test", "spec-bwaves-test", "spec"),
    Benchmark("povray-train", "spec-povray-train", "spec"),
    Benchmark("h264ref-train", "spec-h264ref-train", "spec"),
    Benchmark("bbench", "bbench", "web"),
    Benchmark("speedometer2", "speedometer2", "web"),
    Benchmark("mplayer-1080p", "mplayer-1080p", "video"),
)

LCTES2020 = Experiment(
    name="lctes2020",
    title="LCTES'20 §5: ondemand-anti-snoop vs ondemand, idle-min and all-max (Figures 5 and 6)",
    benchmarks=tuple(
        Benchmark(f"ccbench-{size}-{pattern}", f"ccbench:size={size},pattern={pattern}", "ccbench", calibrate=True)
        for pattern in CCBENCH_PATTERNS
        for size in CCBENCH_SIZES
    )
    + REALISTIC,
    configs=(
        Config("ondemand", "ondemand", None, "ondemand (baseline)"),
        Config("idle-min", "idle-min", None, "idle-min (active max, idle min)"),
        Config("all-max", "all-max", None, "all-max (both clusters max)"),
        Config("anti-snoop", "anti-snoop", TRAINED, "anti-snoop (model trained here)"),
        Config("anti-snoop-fig4", "anti-snoop", FIG4, "anti-snoop (paper's Fig. 4 trees)", paper=False),
    ),
)

EXPERIMENTS = {e.name: e for e in (LCTES2020,)}
GROUPS = {
    "ccbench": ("ccbench",),
    "realistic": ("spec", "web", "video"),
    "spec": ("spec",),
    "web": ("web",),
    "video": ("video",),
}

OUTPUTS = (
    "runs.csv",
    "summary.csv",
    "summary.md",
    "fig5_ccbench_time.png",
    "fig6a_time.png",
    "fig6b_energy.png",
    "report.md",
)


@dataclass(frozen=True)
class SweepOptions:
    """Passed through to `hetlab characterize` (None: its defaults)."""

    reps: int = 5
    patterns: tuple[str, ...] | None = None
    sizes: tuple[int, ...] | None = None
    run_s: float = 0.08
    active_opp: str = "all"


@dataclass(frozen=True)
class Job:
    """One (benchmark, cluster) pair to run under every configuration."""

    bench: Benchmark
    cluster: str

    @property
    def label(self) -> str:
        return f"{self.bench.name}-{CLUSTER_TAG[self.cluster]}"


@dataclass
class Outcome:
    out: Path
    files: list[Path]
    runs: object  # pandas DataFrame
    summary: object
    claims: list
    timings: dict[str, float] = field(default_factory=dict)
    model_path: str = ""


# --- selection and validation -----------------------------------------------------------------


def select(experiment: Experiment, benchmarks: str | None, workloads: Sequence[str] = ()) -> list[Job]:
    """The (benchmark, cluster) pairs to run. `benchmarks`: comma-separated names (gcc-g23),
    labels (gcc-g23-L), groups (ccbench, realistic, spec, web, video) or `all`; `workloads`:
    NAME=SPEC overrides of a benchmark's workload."""
    by_name = {b.name: b for b in experiment.benchmarks}
    overrides = {}
    for item in workloads:
        name, sep, spec = item.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep or not spec:
            raise HetlabError(f"--workload expects BENCHMARK=WORKLOAD, e.g. gcc-g23=my-gcc.toml; got '{item}'")
        if name not in by_name:
            raise HetlabError(
                f"--workload: unknown benchmark '{name}'; known: "
                f"{', '.join(b.name for b in experiment.benchmarks if not b.calibrate)}, ccbench-SIZE-PATTERN"
            )
        overrides[name] = spec
    by_name = {
        n: (replace(b, workload=overrides[n], calibrate=False) if n in overrides else b) for n, b in by_name.items()
    }
    wanted: list[tuple[str, tuple[str, ...]]] = []
    tokens = [t.strip() for t in (benchmarks or "all").split(",") if t.strip()]
    if not tokens:
        raise HetlabError("--benchmarks is empty; give names such as ccbench,gcc-g23 or 'all'")
    for tok in tokens:
        if tok == "all":
            wanted += [(b.name, CLUSTERS) for b in experiment.benchmarks]
        elif tok in GROUPS:
            wanted += [(b.name, CLUSTERS) for b in experiment.benchmarks if b.group in GROUPS[tok]]
        elif tok in by_name:
            wanted.append((tok, CLUSTERS))
        elif tok[-2:] in ("-L", "-b") and tok[:-2] in by_name:
            wanted.append((tok[:-2], ("little",) if tok.endswith("-L") else ("big",)))
        else:
            raise HetlabError(
                f"--benchmarks: unknown benchmark '{tok}'; known: all, {', '.join(GROUPS)}, "
                f"{', '.join(b.name for b in experiment.benchmarks if not b.calibrate)},"
                " ccbench-SIZE-PATTERN (optionally -L or -b)"
            )
    chosen = {(n, c) for n, cs in wanted for c in cs}
    # Plan order (and the figures' order): the ccbench grid all-LITTLE then all-big as in
    # Figure 5; the other benchmarks in table order, each on LITTLE then big, as in Figure 6.
    grid = [
        Job(by_name[b.name], c)
        for c in CLUSTERS
        for b in experiment.benchmarks
        if b.group == "ccbench" and (b.name, c) in chosen
    ]
    rest = [
        Job(by_name[b.name], c)
        for b in experiment.benchmarks
        if b.group != "ccbench"
        for c in CLUSTERS
        if (b.name, c) in chosen
    ]
    return grid + rest


def _check_workloads(jobs: list[Job]) -> None:
    from hetlab import _core

    missing, bad = [], []
    for spec in dict.fromkeys(j.bench.workload for j in jobs):
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


def check_model(path: str, platform: str = PLATFORM) -> str:
    """The model.json to use for `path` (a file, or a directory `hetlab train` wrote); raises a
    one-line HetlabError unless the anti-snoop governor can load it on `platform`."""
    if path == FIG4:
        return path
    if Path(path).is_dir():
        path = str(Path(path) / "model.json")
    from hetlab import model_export

    model_export.read_model(path)
    try:
        api.simulate(
            platform,
            "ccbench:size=4096,pattern=random,iterations=1000",
            cluster="little",
            governor="anti-snoop",
            model=path,
            time_limit_s=0.001,
        )
    except HetlabError as e:
        raise HetlabError(f"model '{path}': {e}") from None
    return path


def _prepare_out(out: Path) -> None:
    """Creates OUT (and parents) after checking that it can be written."""
    if out.exists() and not out.is_dir():
        raise HetlabError(f"--out '{out}' exists and is not a directory")
    existing = out
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise HetlabError(f"cannot create --out '{out}': '{existing}' is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise HetlabError(f"cannot write --out '{out}': '{existing}' is not writable")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise HetlabError(f"cannot write --out '{out}': {e.strerror}") from None


# --- sweep and training -------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomically(path: Path, text: str | bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would create it
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sweep_plan(sweep: SweepOptions, platform: str, platform_sha: str) -> dict:
    from hetlab.characterize import PATTERNS

    # the platform's hash: a platform file, or a built-in one in another hetlab version, may change
    # under the same name, and a sweep of the old one must not be reused
    return {
        "platform": platform,
        "platform_sha256": platform_sha,
        "reps": sweep.reps,
        "patterns": list(sweep.patterns or PATTERNS),
        "sizes": list(sweep.sizes) if sweep.sizes else "default",
        "run_s": sweep.run_s,
        "active_opp": sweep.active_opp,
        "seed": 1,
    }


def _reusable(sweep_path: Path, meta_path: Path, plan: dict) -> bool:
    """Whether OUT/sweep.parquet was written by this command with `plan` and not changed since."""
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("plan") == plan and meta.get("sha256") == sha256_file(sweep_path)


def _plan_text(plan: dict) -> str:
    sizes = plan["sizes"] if plan["sizes"] == "default" else ",".join(map(str, plan["sizes"]))
    return (
        f"platform {plan['platform']} (sha256 {plan['platform_sha256'][:12]}…), reps {plan['reps']}, "
        f"patterns {','.join(plan['patterns'])}, sizes {sizes}, run_s {plan['run_s']}, active OPP {plan['active_opp']}"
    )


def train_here(
    out: Path, sweep: SweepOptions, plan: dict, jobs: int | None, progress: bool, log
) -> tuple[Path, dict[str, float]]:
    """The characterization sweep (`plan` = its `_sweep_plan`) and training into
    OUT/sweep.parquet and OUT/model/, reusing what an earlier run of the same plan left there.
    Returns the model.json path."""
    from hetlab import model_export, train
    from hetlab.characterize import PATTERNS, characterize

    timings = {"sweep_s": 0.0, "train_s": 0.0}
    sweep_path, meta_path = out / "sweep.parquet", out / "sweep.json"
    if sweep_path.exists() and _reusable(sweep_path, meta_path, plan):
        log(f"reusing the characterization sweep {sweep_path}")
    else:
        if sweep_path.exists():
            raise HetlabError(
                f"'{sweep_path}' holds a sweep made with other options than {_plan_text(plan)} (see sweep.json); "
                "delete it and sweep.json, or choose another --out"
            )
        start = time.perf_counter()

        def bar(total: int, done: int):
            from tqdm import tqdm

            return tqdm(
                total=total,
                initial=done,
                unit="run",
                desc="characterize",
                disable=None if progress else True,
                file=sys.stderr,
            )

        characterize(
            str(sweep_path),
            platform=plan["platform"],
            reps=sweep.reps,
            patterns=tuple(sweep.patterns or PATTERNS),
            sizes=sweep.sizes,
            run_s=sweep.run_s,
            seed=1,
            workers=jobs,
            progress=bar,
            active_opp=sweep.active_opp,
        )
        write_text_atomically(meta_path, json.dumps({"plan": plan, "sha256": sha256_file(sweep_path)}, indent=2) + "\n")
        timings["sweep_s"] = time.perf_counter() - start
    model_dir = out / "model"
    model_path = model_dir / "model.json"
    sweep_sha = sha256_file(sweep_path)
    if model_path.exists():
        try:
            old = json.loads(model_path.read_text())
            if (
                old["provenance"]["sweep"]["dataset_sha256"] == sweep_sha
                and old["provenance"]["training"]["max_depth"] == train.DEFAULT_MAX_DEPTH
            ):
                log(f"reusing the trained model {model_path}")
                return model_path, timings
        except (ValueError, KeyError, TypeError):
            pass
    start = time.perf_counter()
    log("training the anti-snoop model ...")
    model = train.train_model(sweep_path)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".model."))
    try:
        files = model_export.write_model(model, staging)
        model_dir.mkdir(exist_ok=True)
        for name, path in files.items():
            os.replace(path, model_dir / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    timings["train_s"] = time.perf_counter() - start
    return model_path, timings


# --- the runs -----------------------------------------------------------------------------------


def _round2(x: float) -> int:
    """Two significant digits, so workload specs read well (ccbench iterations)."""
    if x < 100:
        return max(1, int(round(x)))
    e = 10 ** (int(math.floor(math.log10(x))) - 1)
    return int(round(x / e) * e)


def calibrate(experiment: Experiment, jobs: list[Job], platform: str = PLATFORM) -> dict[tuple[str, str], str]:
    """The resolved workload spec of each job: ccbench grid points get the iteration count
    that makes one run last about `run_s` under all-max (measured with a short probe)."""
    specs = {}
    for j in jobs:
        spec = j.bench.workload
        if j.bench.calibrate:
            probe = 200_000
            r = api.simulate(platform, f"{spec},iterations={probe}", cluster=j.cluster, governor="all-max", seed=1)
            spec = f"{spec},iterations={_round2(experiment.run_s * probe / r.time_s)}"
        specs[(j.bench.name, j.cluster)] = spec
    return specs


def _row(job: Job, spec: str, config: Config, seed: int, r: api.SimResult) -> dict:
    s = r.summary
    row = {
        "benchmark": job.bench.name,
        "cluster": job.cluster,
        "label": job.label,
        "group": job.bench.group,
        "config": config.name,
        "seed": seed,
        "workload": spec,
        "completed": bool(s["completed"]),
        "time_s": r.time_s,
        # The paper's energy: the on-board sensors (CPU clusters and DRAM rails) read every
        # 263,808 µs (§5.2); the whole board's energy is kept beside it.
        "energy_j": s["energy"]["sensor_readings_j"],
        "edp_js": r.time_s * s["energy"]["sensor_readings_j"],
        "energy_total_j": r.energy_j,
    }
    for c, j in zip(s["clusters"], s["energy"]["clusters_j"]):
        row[f"energy_{c['name']}_j"] = j
    row["energy_dram_j"] = s["energy"]["dram_j"]
    row["energy_board_j"] = s["energy"]["board_j"]
    for c in s["clusters"]:
        row[f"avg_freq_{c['name']}_khz"] = c["avg_freq_khz"]
    inst = sum(t["pmu"]["inst_retired"] for t in s["threads"])
    refills = sum(t["pmu"]["l2d_cache_refill"] for t in s["threads"])
    row["instructions"] = inst
    row["l2_mpki"] = 1000.0 * refills / inst if inst else 0.0
    row["governor_samples"] = s.get("governor_samples", 0)
    row["governor_overhead_s"] = s.get("governor_overhead_s", 0.0)
    return row


def run_all(
    experiment: Experiment,
    jobs: list[Job],
    specs: dict,
    model_path: str,
    reps: int,
    seed: int,
    workers: int | None,
    progress: bool,
    platform: str = PLATFORM,
) -> list[dict]:
    from tqdm import tqdm

    plan = [(j, c, seed + i) for j in jobs for c in experiment.configs for i in range(reps)]

    def one(item):
        job, config, s = item
        model = model_path if config.model == TRAINED else config.model
        spec = specs[(job.bench.name, job.cluster)]
        r = api.simulate(platform, spec, cluster=job.cluster, governor=config.governor, model=model, seed=s)
        return _row(job, spec, config, s, r)

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        futures = [pool.submit(one, item) for item in plan]
        bar = tqdm(
            total=len(plan), desc=experiment.name, unit="run", disable=None if progress else True, file=sys.stderr
        )
        rows = []
        try:
            for f in futures:  # plan order: the same inputs give the same table
                rows.append(f.result())
                bar.update(1)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
        finally:
            bar.close()
    return rows


# --- the command --------------------------------------------------------------------------------


def reproduce(
    experiment: str = "lctes2020",
    out: str | os.PathLike | None = None,
    *,
    model: str | None = None,
    reps: int = 5,
    seed: int = 1,
    benchmarks: str | None = None,
    workloads: Sequence[str] = (),
    sweep: SweepOptions = SweepOptions(),
    platform: str = PLATFORM,
    jobs: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
) -> Outcome:
    """Runs EXPERIMENT and writes its outputs into `out` (default results/EXPERIMENT)."""
    t0 = time.perf_counter()
    if experiment not in EXPERIMENTS:
        raise HetlabError(f"unknown experiment '{experiment}'; known: {', '.join(EXPERIMENTS)}")
    exp = EXPERIMENTS[experiment]
    if reps < 1:
        raise HetlabError(f"--reps must be at least 1, got {reps}")
    if seed < 0:
        raise HetlabError(f"--seed must be non-negative, got {seed}")
    if jobs is not None and jobs < 1:
        raise HetlabError(f"--jobs must be at least 1, got {jobs}")
    if model is None and sweep.reps < 2:
        raise HetlabError(f"--sweep-reps must be at least 2 (the t-test needs repetitions), got {sweep.reps}")
    if model is None and sweep.run_s <= 0:
        raise HetlabError(f"--sweep-run-s must be positive, got {sweep.run_s}")
    if model is None and sweep.patterns:
        from hetlab.characterize import PATTERNS

        unknown = [p for p in sweep.patterns if p not in PATTERNS]
        if unknown:
            raise HetlabError(
                f"--sweep-patterns: unknown pattern(s) {', '.join(unknown)}; known: {', '.join(PATTERNS)}"
            )
    selected = select(exp, benchmarks, workloads)
    _check_workloads(selected)
    from hetlab.characterize import platform_sha256

    platform_sha = platform_sha256(platform)  # a bad platform fails here, before anything is written
    plan = _sweep_plan(sweep, platform, platform_sha) if model is None else None
    if model is not None:
        model = check_model(model, platform)
    out_dir = Path(out if out is not None else Path("results") / experiment)
    _prepare_out(out_dir)

    timings = {"sweep_s": 0.0, "train_s": 0.0}
    if model is None:
        model_path, t = train_here(out_dir, sweep, plan, jobs, progress, log)
        timings.update(t)
        check_model(str(model_path), platform)
        model_path = str(model_path)
    else:
        model_path = model
    t_runs = time.perf_counter()
    specs = calibrate(exp, selected, platform)
    rows = run_all(exp, selected, specs, model_path, reps, seed, jobs, progress, platform)
    timings["experiments_s"] = time.perf_counter() - t_runs

    t_out = time.perf_counter()
    from hetlab import report

    runs_df = report.runs_frame(rows)
    summary_df = report.summarize(runs_df, exp)
    claims = report.evaluate_claims(exp, summary_df, runs_df)
    provenance = report.provenance(exp, out_dir, model_path, reps, seed, specs, plan, platform, platform_sha)
    files = report.write_outputs(out_dir, exp, runs_df, summary_df, claims, provenance, model_path)
    timings["outputs_s"] = time.perf_counter() - t_out
    timings["total_s"] = time.perf_counter() - t0
    timings["runs"] = len(rows)
    return Outcome(out_dir, files, runs_df, summary_df, claims, timings, model_path)


def configure_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of `hetlab reproduce` (used by hetlab.cli and by `python -m hetlab.reproduce`)."""
    p.add_argument("experiment", help=f"experiment to reproduce: {', '.join(EXPERIMENTS)}")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output directory (default: results/EXPERIMENT); a sweep and model already there are reused",
    )
    p.add_argument(
        "--model",
        metavar="PATH",
        help="use this anti-snoop model.json (or lctes2020-fig4) instead of running the sweep and training",
    )
    p.add_argument(
        "--reps",
        type=int,
        default=5,
        metavar="N",
        help="repetitions per benchmark and configuration, seeds SEED.. (default: 5)",
    )
    p.add_argument("--seed", type=int, default=1, metavar="S", help="first seed (default: 1)")
    p.add_argument(
        "--platform",
        default=PLATFORM,
        metavar="P",
        help=f"built-in platform name or platform .toml, e.g. one with your board's constants (default: {PLATFORM})",
    )
    p.add_argument(
        "--benchmarks",
        metavar="LIST",
        help="comma-separated subset: all (default), ccbench, realistic, spec, web, video, "
        "a name (gcc-g23, ccbench-1048576-random) or a label with its cluster (gcc-g23-L)",
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
        "--sweep-reps",
        type=int,
        default=5,
        metavar="N",
        help="characterization: repetitions per configuration (default: 5)",
    )
    p.add_argument(
        "--sweep-patterns",
        metavar="LIST",
        help="characterization: subset of random,sequential,stride-16 (default: all)",
    )
    p.add_argument(
        "--sweep-sizes",
        metavar="LIST",
        help="characterization: array sizes in 4-byte elements (default: around every cache size)",
    )
    p.add_argument(
        "--sweep-run-s",
        type=float,
        default=0.08,
        metavar="S",
        help="characterization: run length at the top OPPs, simulated s (default: 0.08)",
    )
    p.add_argument(
        "--sweep-active-opp",
        choices=["all", "top"],
        default="all",
        help="characterization: every OPP pair (default) or the active cluster at its top OPP (the paper's layout)",
    )
    p.set_defaults(func=cmd_reproduce)
    return p


def cmd_reproduce(args: argparse.Namespace) -> int:
    sizes = None
    if args.sweep_sizes:
        try:
            sizes = tuple(int(x) for x in args.sweep_sizes.split(",") if x.strip())
        except ValueError:
            raise HetlabError(
                f"--sweep-sizes expects comma-separated element counts, got '{args.sweep_sizes}'"
            ) from None
    patterns = tuple(p.strip() for p in args.sweep_patterns.split(",") if p.strip()) if args.sweep_patterns else None
    result = reproduce(
        args.experiment,
        args.out,
        model=args.model,
        reps=args.reps,
        seed=args.seed,
        benchmarks=args.benchmarks,
        workloads=args.workload,
        jobs=args.jobs,
        platform=args.platform,
        sweep=SweepOptions(
            reps=args.sweep_reps,
            patterns=patterns,
            sizes=sizes,
            run_s=args.sweep_run_s,
            active_opp=args.sweep_active_opp,
        ),
    )
    from hetlab import report

    print(report.claims_markdown(result.claims))
    print()
    t = result.timings
    print(f"wrote {', '.join(str(f) for f in result.files)}")
    print(
        f"time: sweep {t['sweep_s']:.1f} s, train {t['train_s']:.1f} s, experiments {t['experiments_s']:.1f} s "
        f"({t['runs']} runs), outputs {t['outputs_s']:.1f} s, total {t['total_s']:.1f} s"
    )
    return 0
