"""`hetlab reproduce rcu-amp` (seed 002 on the TC2): every output with its columns, the claims
computed from the runs (they follow the numbers), the run columns against a run of their own,
the sensitivity sweep, determinism, the time budget, and bad input (one line, nothing written)."""

import re

import pandas as pd
import pytest

from helpers import hetlab_cli, png_size
from hetlab import api, report, reproduce
from hetlab.experiments import rcu_amp as ra

E = ra.EXPERIMENT


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Every benchmark and configuration, 2 seeds."""
    out = tmp_path_factory.mktemp("rcuamp") / "out"
    return reproduce.reproduce("rcu-amp", out, reps=2, seed=3, progress=False, log=lambda msg: None)


def test_a_small_run_writes_every_output_with_the_issues_columns(small):
    out = small.out
    charts = [c.file for c in E.charts]
    assert (out / "sensitivity.csv").is_file()
    assert [p.name for p in small.files] == [
        "runs.csv",
        "summary.csv",
        "summary.md",
        "series.csv",
        *charts,
        "report.md",
    ]
    runs = pd.read_csv(out / "runs.csv")
    assert small.runs_count == len(runs) == 2 * 6 * 6
    assert set(runs.config) == {"reference", "nocb", "fast-no-hz", "both", "offload", "offload-nohz"}
    for col in (
        "energy_j",
        "time_s",
        "wakeups_cpu0_per_s",
        "off_share_a15",
        "off_share_a7",
        "rcu_a15_ms",
        "rcu_cpu4_ms",
        "irq_cpu0_ms",
        "ipis_cpu2",
        "threads_a15_ms",
    ):
        assert col in runs.columns, col
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == [
        "benchmark",
        "config",
        "energy_j_mean",
        "energy_j_min",
        "energy_j_max",
        "time_s_mean",
        "time_s_min",
        "time_s_max",
        "n",
    ]
    assert len(summary) == 36 and (summary.n == 2).all()
    g = runs[(runs.label == "audio") & (runs.config == "nocb")]
    row = summary[(summary.benchmark == "audio") & (summary.config == "nocb")].iloc[0]
    assert row.energy_j_mean == pytest.approx(g.energy_j.mean()) and row.time_s_max == pytest.approx(g.time_s.max())
    for name in charts:
        w, h = png_size(out / name)
        assert w > 500 and h > 300, name
    text = (out / "report.md").read_text()
    assert "| claim | paper | hetlab | holds? |" in text
    assert "## Energy and time against the reference" in text and "## Where the kernel's work ran" in text
    assert "## Sensitivity: the benefits at each unmeasured input" in text
    # every point of the sweep is a row of each configuration's table, and of sensitivity.csv
    sens = pd.read_csv(out / "sensitivity.csv")
    points = ra.sens.points()
    assert len(sens) == len(points) * len(ra.SENSITIVITY_CONFIGS) * 6
    for pt in points:
        # one row per method's table and one in the claims-at-each-point table
        assert text.count(f"| {pt.assumption} | {pt.value} | ") == len(ra.SENSITIVITY_CONFIGS), pt
    assert "platform `tc2`" in text and "2 seeds (3, 4) per configuration" in text
    assert not list(out.glob(".*"))


def test_nocb_moves_the_rcu_work_off_the_a15s_and_offload_the_interrupts(small):
    runs = small.runs
    for b in ra.BENCHMARK_NAMES:
        for c in ("nocb", "both", "offload"):
            g = runs[(runs.label == b) & (runs.config == c)]
            assert (g.rcu_a15_ms == 0).all(), (b, c)
        ref = runs[(runs.label == b) & (runs.config == "reference")]
        fast = runs[(runs.label == b) & (runs.config == "fast-no-hz")]
        assert fast.rcu_idle_ticks.mean() <= ref.rcu_idle_ticks.mean(), b
    # the codec's interrupts: on CPU 0 (an A15) by default, on CPU 2 (an A7) with irqaffinity=2-4,
    # and the A15 cluster then stays down
    audio = runs[runs.label == "audio"].groupby("config").mean(numeric_only=True)
    assert audio.loc["reference", "irq_cpu0_ms"] > 100 and audio.loc["offload", "irq_cpu0_ms"] < 1
    assert audio.loc["offload", "irq_cpu2_ms"] > audio.loc["reference", "irq_cpu0_ms"]
    assert audio.loc["offload", "power_downs_a15"] < audio.loc["reference", "power_downs_a15"] / 100


def test_the_claims_are_computed_from_the_runs(small):
    claims = {c.claim: c for c in small.claims}
    assert len(claims) == 5 and all(c.holds in {"yes", "no", "partly"} and c.note for c in small.claims)
    first = claims["Both methods give substantial energy gains"]
    gain = ra._benefit(small.runs, "cyclictest", "nocb", "energy_j")
    assert f"cyclictest {gain:+.1f} %" in first.hetlab
    # cut the methods' energy: both now save a lot, distinctly, everywhere
    runs = small.runs.copy()
    runs.loc[runs.config == "nocb", "energy_j"] *= 0.9
    runs.loc[runs.config == "fast-no-hz", "energy_j"] *= 0.8
    runs.loc[runs.config == "both", "energy_j"] *= 0.5
    moved = {c.claim: c for c in ra.claims(report.summarize(runs, E), runs)}
    assert moved["Both methods give substantial energy gains"].holds == "yes"
    double = next(c for c in moved if c.startswith("Enforced idle saves more than offload"))
    assert moved[double].holds == "yes"
    assert moved["Combining the two does no better than each alone"].holds == "no"
    # a much longer run under fast-no-hz is an unambiguous degradation
    runs.loc[runs.config == "fast-no-hz", "time_s"] *= 1.5
    slow = {c.claim: c for c in ra.claims(report.summarize(runs, E), runs)}
    assert slow["Durations are not unambiguously degraded"].holds == "no"
    # the hypothesis: offload no better than nocb anywhere does not hold
    runs = small.runs.copy()
    runs.loc[runs.config == "offload", "energy_j"] = runs.loc[runs.config == "nocb", "energy_j"].to_numpy()
    same = {c.claim: c for c in ra.claims(report.summarize(runs, E), runs)}
    hypothesis = next(c for c in same if c.startswith("Moving interrupts"))
    assert same[hypothesis].holds == "no"


def test_each_run_column_agrees_with_its_run(small):
    both = next(c for c in E.configs if c.name == "both")
    r = api.simulate("tc2", "audio", seed=3, **ra.simulate_options(E.benchmarks[4], both, small.prepared))
    row = small.runs[(small.runs.label == "audio") & (small.runs.config == "both") & (small.runs.seed == 3)].iloc[0]
    s = r.summary
    assert row.energy_j == pytest.approx(sum(s["energy"]["clusters_j"]))
    assert row.time_s == pytest.approx(r.time_s)
    assert row.wakeups_cpu2_per_s == pytest.approx(s["cpus"][2]["wakeups"] / r.time_s)
    assert row.rcu_callbacks == 0 and s["rcu"]["options"] == "rcu_nocbs=0,1,rcu_fast_no_hz"
    aaci = next(src for src in s["interrupts"]["sources"] if src["name"] == "aaci")
    assert row.irq_cpu0_ms >= 1000 * aaci["cpu_s"][0] > 0


def test_the_same_seed_gives_the_same_tables(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        reproduce.reproduce("rcu-amp", out, benchmarks="audio,cyclictest", reps=1, progress=False, log=lambda m: None)
    for name in ("runs.csv", "summary.csv", "summary.md", "report.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_the_whole_reproduction_runs_and_prints_its_time(tmp_path):
    # its wall time is a benchmark's figure (benches/bench_reproduce.py), never a test's
    r = hetlab_cli("reproduce", "rcu-amp", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert re.search(r"total ([0-9.]+) s", r.stdout + r.stderr)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reps", "0"], "--reps must be in 1..100000, got 0"),
        (["--benchmarks", "nope"], "--benchmarks: unknown benchmark 'nope'; known: all, tc2, cyclictest"),
        (["--platform", "no-such-board.toml"], "cannot read platform file 'no-such-board.toml'"),
        (["--workload", "audio=missing.toml"], "cannot read workload file 'missing.toml'"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    r = hetlab_cli("reproduce", "rcu-amp", "--out", str(out), *args)
    assert r.returncode != 0 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetlab: error: ") and message in lines[0], r.stderr
    assert not out.exists()


def test_every_benchmark_starts_from_its_warmed_up_board(small):
    temps = small.prepared.start_temps
    assert list(temps) == list(ra.BENCHMARK_NAMES) and all(len(t) == 2 for t in temps.values())
    # a CPU-bound benchmark on the A15s warms them more than cyclictest's timer threads
    assert temps["andebench2"][0] > temps["cyclictest"][0] + 10.0
    assert "## Warm-up" in (small.out / "report.md").read_text()
    # a warm board leaks more: the same run from ambient uses less energy
    cold = api.simulate("tc2", "andebench2", seed=3, **E.configs[0].options)
    warm = api.simulate(
        "tc2", "andebench2", seed=3, **ra.simulate_options(E.benchmarks[2], E.configs[0], small.prepared)
    )
    assert warm.summary["clusters"][0]["static_j"] > cold.summary["clusters"][0]["static_j"]
    with pytest.raises(api.HetlabError, match="give one per cluster"):
        api.simulate("tc2", "andebench2", start_temp_c=[40.0])


def test_the_claims_at_each_sensitivity_point_follow_its_numbers():
    """The per-point verdicts: a benefit counts only beyond the stated reference's spread, and a
    changed energy changes the verdict."""
    sens = ra.sens
    benches = ("a", "b")

    def point(nocb, fast, offload):
        energy = {"reference": 100.0, "nocb": nocb, "fast-no-hz": fast, "offload": offload}
        return {c: {b: (e, 1.0) for b in benches} for c, e in energy.items()}

    bands = {"a": 1.0, "b": 1.0}
    # 5 % gains beyond a 1 % spread: both methods count on both benchmarks; offload 3 % ahead
    yes = sens._point_verdicts(point(95.0, 95.0, 92.0), "reference", bands)
    assert yes[0].startswith("yes") and yes[2].startswith("yes")
    # the same gains inside a 6 % spread count for nothing
    none = sens._point_verdicts(point(95.0, 95.0, 92.0), "reference", {"a": 6.0, "b": 6.0})
    assert none[0].startswith("no") and none[2].startswith("no")
    # enforced idle 12 % against offload's 5 %: ahead and double-digit
    more = sens._point_verdicts(point(95.0, 88.0, 92.0), "reference", bands)
    assert more[1].startswith("yes") and "double-digit: a, b" in more[1]


def test_the_fence_file_point_edits_only_surfaceflinger():
    import tomllib

    from hetlab import _core

    edit = ra.sens._with_fence_files(3.0)
    text = _core.builtin_workload_text("audio-bbench")
    tasks = {t["name"]: t for t in tomllib.loads(edit("audio-bbench", text))["tasks"]}
    rates = [p.get("call_rcu_per_s") for p in tasks["SurfaceFlinger"]["phases"] if "instructions" in p]
    assert rates and all(r == pytest.approx(3.0 / 0.012) for r in rates)
    assert edit("audio", _core.builtin_workload_text("audio")) == _core.builtin_workload_text("audio")


def test_the_sensitivity_sweep_follows_the_selection(tmp_path):
    """A selection sweeps its own benchmarks only."""
    out = tmp_path / "one"
    reproduce.reproduce("rcu-amp", out, benchmarks="andebench2", reps=1, progress=False, log=lambda m: None)
    rows = pd.read_csv(out / "sensitivity.csv")
    assert set(rows.benchmark) == {"andebench2"}


def test_the_warm_up_obeys_the_time_limit(tmp_path):
    """--time-limit cuts the warm-up's runs as it cuts the reproduction's: a cut run is one error
    line naming it, before the sweep or the runs start, and nothing is written."""
    out = tmp_path / "out"
    r = hetlab_cli("reproduce", "rcu-amp", "--out", str(out), "--benchmarks", "audio", "--time-limit", "0.01")
    assert r.returncode != 0 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetlab: error: the warm-up's audio run"), r.stderr
    assert "did not finish within --time-limit 0.01 s" in lines[0]
    assert not out.exists()
