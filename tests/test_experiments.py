"""Experiments as plug-ins (hetlab.experiment, hetlab.experiments, the generic hetlab.reproduce
and hetlab.report): the registry's experiments are well formed, a made-up experiment whose
configurations are not governors runs end to end through the generic core, an experiment's own
options belong to it, `--list`, the one atomic write and SHA-256, and no import cycle."""

import argparse
import ast
import hashlib
import inspect
import os
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import pytest

import hetlab
from helpers import hetlab_cli
from hetlab import _files, api, report, reproduce
from hetlab.api import HetlabError
from hetlab.experiment import Benchmark, Claim, Config, Experiment, Figure, Table
from hetlab.experiments import EXPERIMENTS, lctes2020

PACKAGE = Path(hetlab.__file__).parent
SIMULATE_OPTIONS = set(inspect.signature(api.simulate).parameters) - {"platform", "workload", "seed", "trace"}
CHASE = "ccbench:size=1048576,pattern=random,iterations=200000"


@pytest.mark.parametrize("experiment", EXPERIMENTS.values(), ids=list(EXPERIMENTS))
def test_registered_experiments_are_well_formed(experiment):
    labels = [b.label for b in experiment.benchmarks]
    assert len(labels) == len(set(labels))
    groups = {b.group for b in experiment.benchmarks}
    configs = [c.name for c in experiment.configs]
    assert len(configs) == len(set(configs)) and experiment.baseline in configs
    for b in experiment.benchmarks:
        assert set(b.options) <= SIMULATE_OPTIONS, b
    for c in experiment.configs:
        assert set(c.options) <= SIMULATE_OPTIONS, c
    for names in experiment.groups.values():
        assert set(names) <= groups
    assert {g for t in experiment.tables for g in t.groups} == groups  # every benchmark is in summary.md
    for f in experiment.figures:
        assert set(f.groups) <= groups and f.metric in {name for name, _ in report.RATIOS}
    assert experiment.title and experiment.source and experiment.description and experiment.names_help
    if experiment.settings is not None:
        # the options' defaults are the settings' defaults (declared once)
        p = argparse.ArgumentParser()
        experiment.settings.add_arguments(p.add_argument_group())
        assert experiment.settings.from_arguments(p.parse_args([])) == experiment.settings()


def test_lctes2020_runs_each_benchmark_on_each_cluster_in_the_figures_order():
    e = lctes2020.EXPERIMENT
    # the paper's Figure 5: 7 sizes x 3 patterns on each cluster
    assert len(e.benchmarks) == 2 * (21 + 7)
    grid = [b.label for b in e.benchmarks if b.group == "ccbench"]
    assert grid[:2] == ["ccbench-4-random-L", "ccbench-65536-random-L"] and grid[21] == "ccbench-4-random-b"
    rest = [b.label for b in e.benchmarks if b.group != "ccbench"]
    assert rest[:3] == ["gcc-g23-L", "gcc-g23-b", "bwaves-test-L"]
    assert all(b.options == {"cluster": "little" if b.label.endswith("-L") else "big"} for b in e.benchmarks)
    picked = reproduce.select(e, "gcc-g23,bbench-b,ccbench-65536-stride-16", ["gcc-g23=cpu-bound:threads=1"])
    assert [b.label for b in picked] == [
        "ccbench-65536-stride-16-L",
        "ccbench-65536-stride-16-b",
        "gcc-g23-L",
        "gcc-g23-b",
        "bbench-b",
    ]
    assert picked[2].workload == "cpu-bound:threads=1" and not picked[2].calibrate and picked[0].calibrate
    assert [b.label for b in reproduce.select(e, "video")] == ["mplayer-1080p-L", "mplayer-1080p-b"]


# --- a made-up experiment: configurations that are not governors --------------------------------


def _toy_claims(summary: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    row = summary[(summary.label == "chase-L") & (summary.config == "little-1ghz")]
    if row.empty:
        return [Claim("chase: slower at 1 GHz than under ondemand", "made up", "–", "not run")]
    speedup = float(row.speedup_mean.iloc[0])
    return [
        Claim(
            "chase: slower at 1 GHz than under ondemand", "made up", f"{speedup:.2f}x", "yes" if speedup < 1 else "no"
        )
    ]


TOY = Experiment(
    name="toy",
    title="a made-up experiment over schedulers, idle states, fixed clocks and hotplug",
    source="none (tests/test_experiments.py)",
    description="Two small workloads under five kinds of configuration.",
    method="Each benchmark ran as configured",
    platform="exynos5422",
    benchmarks=(
        Benchmark("chase", "chase-L", CHASE, "memory", {"cluster": "little"}),
        Benchmark("spin", "spin", "cpu-bound:threads=2,instructions=20000000", "cpu"),
    ),
    configs=(
        Config("ondemand", "ondemand", {"governor": "ondemand"}),
        Config("little-1ghz", "LITTLE at 1 GHz, big at 200 MHz", {"freq": {"little": 1000000, "big": 200000}}),
        Config("smp-schedutil", "smp placement, schedutil", {"scheduler": "smp", "governor": "schedutil"}),
        Config("big-offline", "big cluster hotplugged off", {"offline": ["big"]}, paper=False),
        Config("cluster-off", "cpuidle powers idle clusters down", {"cpuidle": "cluster-off"}),
    ),
    baseline="ondemand",
    groups={"memory": ("memory",), "cpu": ("cpu",)},
    names_help="chase, spin",
    labels_help="",
    tables=(Table("Memory", ("memory",)), Table("CPU", ("cpu",))),
    figures=(Figure("toy_time.png", "time, ondemand = 1", ("memory",), "speedup", "speedup"),),
    claims=_toy_claims,
)


def test_a_made_up_experiment_runs_through_the_generic_core(tmp_path):
    out = tmp_path / "toy"
    result = reproduce.reproduce(TOY, out, reps=2, seed=3, progress=False, log=lambda msg: None)
    assert [p.name for p in result.files] == [
        "runs.csv",
        "summary.csv",
        "summary.md",
        "series.csv",
        "toy_time.png",
        "report.md",
    ]
    assert set(result.timings_s) == {"experiments", "outputs", "total"} and result.runs_count == 2 * 5 * 2
    runs = pd.read_csv(out / "runs.csv")
    assert list(runs.columns[:4]) == ["benchmark", "cluster", "label", "group"]
    assert list(dict.fromkeys(runs.label)) == ["chase-L", "spin"] and set(runs.seed) == {3, 4}
    by = runs.set_index(["label", "config", "seed"])
    # each configuration's options reached the simulator
    fixed = by.loc[("chase-L", "little-1ghz", 3)]
    assert fixed.avg_freq_little_khz == pytest.approx(1_000_000, rel=0.01)
    assert fixed.avg_freq_big_khz == pytest.approx(200_000, rel=0.02)
    assert by.loc[("chase-L", "big-offline", 3)].energy_big_j == 0.0 < by.loc[("chase-L", "ondemand", 3)].energy_big_j
    assert by.loc[("spin", "smp-schedutil", 3)].time_s != by.loc[("spin", "ondemand", 3)].time_s
    summary = pd.read_csv(out / "summary.csv")
    assert "active_freq_mhz" not in summary.columns  # lctes2020's measures stay in lctes2020
    assert (summary[summary.config == "ondemand"].speedup_mean == 1.0).all()
    md = (out / "summary.md").read_text()
    assert "## Memory: time" in md and "## CPU: energy" in md and "| benchmark | ondemand time (s) |" in md
    text = (out / "report.md").read_text()
    assert "Each benchmark ran as configured, 2 seeds (3, 4) per configuration" in text
    assert "| chase: slower at 1 GHz than under ondemand | made up |" in text
    assert "`little-1ghz` = freq `{'little': 1000000, 'big': 200000}`" in text
    assert "`smp-schedutil` = scheduler `smp`, governor `schedutil`" in text
    assert "  - `spin`: `cpu-bound:threads=2,instructions=20000000`" in text
    # a re-run that leaves benchmarks out would drop their results: refused unless forced
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(HetlabError, match=r"holds results of 1 benchmark\(s\) this run leaves out \(chase-L\)"):
        reproduce.reproduce(TOY, out, benchmarks="cpu", reps=1, progress=False, log=lambda msg: None)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    # a selection without the figure's group: no figure, and the earlier one is removed
    result = reproduce.reproduce(TOY, out, benchmarks="cpu", reps=1, force=True, progress=False, log=lambda msg: None)
    assert not (out / "toy_time.png").exists() and "not run" in (out / "report.md").read_text()
    with pytest.raises(HetlabError, match="unknown benchmark 'chase-b'; known: all, memory, cpu, chase, spin$"):
        reproduce.select(TOY, "chase-b")


@dataclass(frozen=True)
class ToySettings:
    level: int = 2

    @classmethod
    def add_arguments(cls, group):
        group.add_argument("--toy-level", type=int, default=cls.level)

    @classmethod
    def from_arguments(cls, args):
        return cls(args.toy_level)


def test_an_experiments_own_options_belong_to_it():
    toy = replace(TOY, settings=ToySettings)
    known = {"lctes2020": lctes2020.EXPERIMENT, "toy": toy}
    p = reproduce.configure_parser(argparse.ArgumentParser(), known)
    assert reproduce._settings(toy, p.parse_args(["toy", "--toy-level", "5"]), known) == ToySettings(5)
    lctes = reproduce._settings(lctes2020.EXPERIMENT, p.parse_args(["lctes2020", "--sweep-reps", "3"]), known)
    assert lctes.sweep.reps == 3 and lctes.model is None
    with pytest.raises(HetlabError, match="--sweep-reps is an option of experiment lctes2020, not of toy"):
        reproduce._settings(toy, p.parse_args(["toy", "--sweep-reps", "3"]), known)
    with pytest.raises(HetlabError, match="--toy-level is an option of experiment toy, not of lctes2020"):
        reproduce._settings(lctes2020.EXPERIMENT, p.parse_args(["lctes2020", "--toy-level", "1"]), known)


def test_list_and_help_name_the_experiments():
    r = hetlab_cli("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    for e in EXPERIMENTS.values():
        assert f"{e.name}  {e.title}" in r.stdout and f"source: {e.source}" in r.stdout
    r = hetlab_cli("reproduce", "lctes2020", "--help")
    assert r.returncode == 0 and "--sweep-active-opp" in r.stdout and "--benchmarks" in r.stdout
    assert "lctes2020 options" in r.stdout and "anti-snoop-fig4" in r.stdout
    r = hetlab_cli("reproduce")
    assert r.returncode != 0 and r.stderr.strip() == (
        f"hetlab: error: name the experiment to reproduce: {', '.join(EXPERIMENTS)} (hetlab reproduce --list)"
    )


# --- files and imports --------------------------------------------------------------------------


def test_atomic_write_honours_the_umask_and_leaves_nothing_on_failure(tmp_path):
    old = os.umask(0o027)
    try:
        _files.write_output(tmp_path / "a.txt", "text ü\n")
        _files.write_output(str(tmp_path / "b.bin"), b"\x00\x01")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").read_text() == "text ü\n" and (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o640
    (tmp_path / "c.txt").write_text("old")
    with pytest.raises(TypeError):
        _files.write_output(tmp_path / "c.txt", 42)
    assert (tmp_path / "c.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.txt"]
    assert _files.sha256_file(tmp_path / "b.bin") == hashlib.sha256(b"\x00\x01").hexdigest()


def test_a_staging_folder_moves_its_files_in_whole_or_leaves_the_old_ones(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with _files.staging_folder(tmp_path) as staging:
            (staging / "a.txt").write_text("new")
            raise RuntimeError("a failure half-way")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old"
    with _files.staging_folder(tmp_path / "model", within=tmp_path, prefix=".model.") as staging:
        assert staging.parent == tmp_path and staging.name.startswith(".model.")
        (staging / "a.txt").write_text("new")
        (staging / "b.txt").write_text("b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "model"]
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["a.txt", "b.txt"]


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules a file imports, at any depth (function-level imports count too):
    `from hetlab import api` imports hetlab.api; `from hetlab.api import X` imports hetlab.api."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                found.add(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module)
    return found & modules


def test_no_import_cycle_in_the_package():
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    names = set(modules) | {"hetlab._core"}  # the Rust extension imports nothing of ours
    graph = {m: _imports(p, names) - {m} for m, p in modules.items()} | {"hetlab._core": set()}
    # a module imports its package's __init__ first; `hetlab` itself only loads the API, the
    # characterization sweep's entry point and the grid sweep's (none imports pandas at load:
    # `import hetlab` stays fast)
    assert graph["hetlab"] == {"hetlab.api", "hetlab.characterize", "hetlab.grid"}
    done, stack = set(), []

    def visit(m):
        assert m not in stack, "import cycle: " + " -> ".join([*stack[stack.index(m) :], m])
        if m in done:
            return
        stack.append(m)
        for n in sorted(graph[m]):
            visit(n)
        stack.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m)
    assert "hetlab.reproduce" not in graph["hetlab.report"] and "hetlab.report" not in graph["hetlab.experiment"]


def test_time_limit_applies_below_a_runs_own_limit_and_a_cut_run_is_an_error():
    """hetlab.runs.simulate_within: --time-limit replaces a run's own limit only when it is lower;
    a run it cuts is one error naming the run; a run with its own lower limit is not an error."""
    from hetlab.runs import simulate_within

    # the run's own 1 ms limit is below --time-limit: the run stops at its own limit, no error
    r = simulate_within(10.0, "the chase", "exynos5422", CHASE, cluster="little", time_limit_s=0.001)
    assert not r.summary["completed"] and r.time_s == pytest.approx(0.001, abs=1e-4)
    # --time-limit below the run's own: the run is cut and that is an error naming it
    with pytest.raises(HetlabError, match=r"^the chase did not finish within --time-limit 0\.001 s"):
        simulate_within(0.001, "the chase", "exynos5422", CHASE, cluster="little")
    # no --time-limit: the run's own options as given
    assert simulate_within(None, "the chase", "exynos5422", CHASE, cluster="little").summary["completed"]
