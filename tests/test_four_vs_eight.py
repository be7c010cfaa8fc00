"""`hetlab reproduce four-vs-eight` (seed 004): a small run writes every output with the issue's
summary columns, the claims are judged from the numbers (a changed number changes the verdict),
the figures render, runs are deterministic, the whole reproduction fits its time budget, and bad
input gets the one-line error with nothing written."""

import pandas as pd
import pytest

from helpers import hetlab_cli, png_size
from hetlab import api, reproduce
from hetlab.experiment import NOT_RUN
from hetlab.experiments import four_vs_eight as fve

E = fve.EXPERIMENT
SUMMARY_COLUMNS = [
    "benchmark",
    "config",
    "allocator",
    "mode",
    "throughput_mean",
    "throughput_std",
    "time_s_mean",
    "energy_j_mean",
    "n",
]


SMALL = "dhrystone,binomial,sfft,intercore-bandwidth"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """An integer, a shared read-modify-write and a memory-bound benchmark, and the inter-core
    bandwidth test (static only), 2 seeds."""
    out = tmp_path_factory.mktemp("fve") / "out"
    return reproduce.reproduce(
        "four-vs-eight", out, reps=2, seed=3, benchmarks=SMALL, progress=False, log=lambda m: None
    )


def test_a_small_run_writes_every_output_with_the_issues_columns(small):
    out = small.out
    figures = [f.file for f in E.figures]
    assert [p.name for p in small.files] == [
        "runs.csv",
        "summary.csv",
        "summary.md",
        "series.csv",
        *figures,
        "report.md",
    ]
    runs = pd.read_csv(out / "runs.csv")
    # 3 benchmarks x 2 allocators and the static-only bandwidth test x 6 configurations x 2 seeds
    assert small.runs_count == len(runs) == (3 * 2 + 1) * 6 * 2
    assert set(runs.config) == {"all-8", "big-4", "little-4", "gts-hmp-8", "iks-4", "cs-4"}
    assert set(runs.allocator) == {"static", "dynamic"} and runs.completed.all()
    mode = runs.groupby("config")["mode"].agg(set)
    assert mode["iks-4"] == {"iks"} and mode["cs-4"] == {"cluster-switching"} and mode["all-8"] == {"gts"}
    summary = pd.read_csv(out / "summary.csv")
    assert set(SUMMARY_COLUMNS) <= set(summary.columns)
    assert len(summary) == (3 * 2 + 1) * 6 and (summary.n == 2).all()
    one = runs[(runs.label == "sfft-dynamic") & (runs.config == "big-4")]
    row = summary[(summary.label == "sfft-dynamic") & (summary.config == "big-4")].iloc[0]
    assert row.throughput_mean == pytest.approx(one.throughput_gips.mean())
    assert row.time_s_mean == pytest.approx(one.time_s.mean()) and row.allocator == "dynamic"
    # throughput is the work over the time: the same instructions in every configuration
    assert one.throughput_gips.iloc[0] == pytest.approx(one.instructions.iloc[0] / one.time_s.iloc[0] / 1e9)
    for f in figures:
        w, h = png_size(out / f)
        assert w > 300 and h > 200
    report_md = (out / "report.md").read_text()
    assert "| claim | paper | band (set before the run) | hetlab | holds? | mechanism |" in report_md
    for c in small.claims:
        assert f"| {c.claim} |" in report_md and c.holds in {"yes", "no", "partly"}
    assert "## Ratios per benchmark" in report_md and "| sfft | dynamic |" in report_md
    assert "## Switching modes and the unpinned scheduler" in report_md and "| dhrystone | dynamic |" in report_md
    assert "## What this reproduction does not model" in report_md


def test_the_mechanisms_show_in_the_runs(small):
    s = pd.read_csv(small.out / "summary.csv").set_index(["label", "config"])
    # a static split on all 8 waits for the A53s: slower than the dynamic pool on all 8
    assert s.loc[("dhrystone-static", "all-8"), "time_s_mean"] > s.loc[("dhrystone-dynamic", "all-8"), "time_s_mean"]
    # shared read-modify-write lines cross the CCI on all 8, not on 4 cores of one cluster
    assert (
        s.loc[("binomial-dynamic", "all-8"), "cci_reads_m_mean"]
        > 10 * s.loc[("binomial-dynamic", "big-4"), "cci_reads_m_mean"]
    )
    # under a switcher the OS sees 4 CPUs: 4 threads, each moved once to its A57 (CS: the whole
    # cluster); after the switch the run is the 4 big cores', so it ends a little after big-4
    runs = pd.read_csv(small.out / "runs.csv")
    for config in ("iks-4", "cs-4"):
        assert (runs[runs.config == config].cpu_switches == 4).all()
        t = s.loc[("dhrystone-dynamic", config), "time_s_mean"]
        assert 1.0 < t / s.loc[("dhrystone-dynamic", "big-4"), "time_s_mean"] < 1.1
    # unpinned, the scheduler's idle pull moves the A53s' static shares onto A57s that finished theirs
    assert s.loc[("dhrystone-static", "gts-hmp-8"), "time_s_mean"] < s.loc[("dhrystone-static", "all-8"), "time_s_mean"]
    # the memory-bound FFT uses more DRAM bandwidth on 8 cores than the integer kernel does
    assert (
        s.loc[("sfft-dynamic", "all-8"), "dram_gb_s_mean"]
        > 10 * s.loc[("dhrystone-dynamic", "all-8"), "dram_gb_s_mean"]
    )


def test_each_ratio_names_its_mechanism_from_the_runs(small):
    ratios = (small.out / "report.md").read_text().split("## Ratios per benchmark")[1].split("\n## ")[0]
    row = {
        ln.split(" | ")[0].lstrip("| ") + "-" + ln.split(" | ")[1]: ln
        for ln in ratios.splitlines()
        if ln.startswith("| ") and " | " in ln
    }
    assert "DRAM bandwidth" in row["sfft-dynamic"]
    assert "shared lines crossing the CCI" in row["binomial-dynamic"]
    assert "the barrier" in row["dhrystone-static"] and "the pool" in row["dhrystone-dynamic"]
    t = {"all-8": 1.0, "big-4": 1.2, "little-4": 3.0}
    none = {"all-8": 0.0, "big-4": 0.0, "little-4": 0.0}
    assert fve.mechanism("static", t, 0.0, 9.0, none).startswith("the barrier")
    assert fve.mechanism("dynamic", t, 8.9, 9.0, none).startswith("DRAM")
    assert fve.mechanism("dynamic", t, 0.0, 9.0, {**none, "all-8": 50.0}).startswith("shared lines crossing")
    # the LITTLE cluster's own L2 misses are not shared lines: named as such
    misses = {"all-8": 60.0, "big-4": 0.0, "little-4": 120.0}
    assert "miss their 256 KB L2" in fve.mechanism("static", t, 0.0, 9.0, misses)


def test_the_sensitivity_grid_judges_every_claim_at_each_value(small):
    from hetlab.experiments import four_vs_eight_sensitivity as sensitivity

    sens = pd.read_csv(small.out / "sensitivity.csv", keep_default_na=False)
    assert {"parameter", "value", *fve.VERDICTS, "static_all8_faster", "dynamic_faster"} <= set(sens.columns)
    platform = {name for name, *_ in sensitivity.PLATFORM}
    # a workload's rows only for the selected benchmarks (binomial here)
    selected = [w for w in sensitivity.WORKLOAD if w[1] in SMALL.split(",")]
    assert {w[1] for w in selected} == {"binomial"}
    workload = {name for name, *_ in selected}
    assert set(sens.parameter) == platform | workload | {"file values"}
    n_platform = sum(len(v) for *_, v in sensitivity.PLATFORM)
    assert len(sens) == 1 + n_platform + sum(len(v) for *_, v in selected)
    # each platform variant differs from the platform in its one value
    assert len(list((small.out / "sensitivity").glob("*.toml"))) == n_platform
    for v in sens.itertuples():
        assert {v.eight_faster, v.heavy_simd_big, v.dynamic_better} <= {"yes", "no", "partly"}
    sens["value"] = sens.value.astype(str)
    at = sens.set_index(["parameter", "value"])
    # binomial's shared read-modify-write share sets its dynamic pool's sign (the issue's finding)
    rmw = "binomial shared_rmw_fraction"
    assert at.loc[(rmw, "0.0"), "binomial_dynamic_big4_over_all8"] > 1.0
    assert at.loc[(rmw, "0.1"), "binomial_dynamic_big4_over_all8"] < 1.0
    # a slower A53 (higher fitted dependency_cpi) makes the static barrier longer for dhrystone
    dep = "A53 dependency_cpi (Dhrystone fit)"
    assert (
        at.loc[(dep, "1.0"), "dhrystone_static_big4_over_all8"]
        < at.loc[(dep, "0.136"), "dhrystone_static_big4_over_all8"]
    )
    # the switch's transfer time is paid by the switcher's runs only
    sw = "sched switch_transfer_us"
    assert at.loc[(sw, "300.0"), "dhrystone_iks4_over_big4"] > at.loc[(sw, "0.0"), "dhrystone_iks4_over_big4"]
    assert (
        at.loc[(sw, "300.0"), "dhrystone_static_big4_over_all8"]
        == at.loc[(sw, "0.0"), "dhrystone_static_big4_over_all8"]
    )
    report_md = (small.out / "report.md").read_text()
    assert "## Sensitivity: every claim at each value" in report_md and "Verdicts that move" in report_md
    # the model's inter-core latency, as hetlab pingpong prints it
    ns = api.line_transfer_ns("exynos5433")
    assert "## Inter-core latency (model)" in report_md
    assert f"| big | {ns[('little', 'big')]:.1f} | {ns[('big', 'big')]:.1f} |" in report_md
    # inter-core bandwidth of one pair of threads: within the A57s through their L2 beats a pair
    # across the CCI, whose lines come through a snoop of the other cluster
    assert "## Inter-core bandwidth (model)" in report_md
    pairs = {
        row.split("|")[1].strip(): [float(x) for x in row.split("|")[2:-1]]
        for row in report_md.splitlines()
        if row.startswith(("| little – ", "| big – "))
    }
    assert set(pairs) == {"little – little", "little – big", "big – big"}
    assert all(b > c for b, c in zip(pairs["big – big"], pairs["little – big"]))
    assert len(list((small.out / "pairs").glob("*.toml"))) == 3 * len(fve.PAIR_BLOCKS_KB)


def test_claims_are_judged_from_the_numbers(small):
    summary = small.summary.copy()
    verdicts = {c.claim: c.holds for c in E.claims(summary, small.runs)}
    assert set(verdicts.values()) <= {"yes", "no", "partly"}
    dyn = fve._dynamic_better(summary)
    # make the static split faster than the pool everywhere: the verdict turns to "no"
    flipped = summary.copy()
    static_all8 = (flipped.allocator == "static") & (flipped.config == "all-8")
    flipped.loc[static_all8, "time_s_mean"] = 1e-6
    assert fve._dynamic_better(flipped).holds == "no" and dyn.holds in {"yes", "partly"}
    # within 1% is a tie, not a win: static only 0.5% slower than dynamic everywhere -> "no"
    tie = summary.copy()
    for label in tie.label.unique():
        # (the static-only bandwidth test has no pool to tie with)
        if label.endswith("-static") and label.replace("-static", "-dynamic") in set(tie.label):
            dyn_t = tie.loc[
                (tie.label == label.replace("-static", "-dynamic")) & (tie.config == "all-8"), "time_s_mean"
            ]
            tie.loc[(tie.label == label) & (tie.config == "all-8"), "time_s_mean"] = float(dyn_t.iloc[0]) * 1.005
    assert fve._dynamic_better(tie).holds == "no"
    # make all-8 slower than big-4 everywhere: "8 cores generally faster" does not hold
    slow = summary.copy()
    slow.loc[slow.config == "all-8", "time_s_mean"] = 1e6
    assert fve._eight_faster(slow).holds == "no"
    # the claim is judged on Sandra's static split: a fast pool alone does not make it hold
    pool = summary.copy()
    pool.loc[(pool.config == "all-8") & (pool.allocator == "dynamic"), "time_s_mean"] = 1e-6
    assert fve._eight_faster(pool).holds == "no"
    split = summary.copy()
    split.loc[(split.config == "all-8") & (split.allocator == "static"), "time_s_mean"] = 1e-6
    assert fve._eight_faster(split).holds == "yes"
    # without the heavy-SIMD benchmarks the claim is not run
    only_int = summary[summary.benchmark == "dhrystone"]
    assert fve._heavy_simd_big(only_int).holds == NOT_RUN


def test_same_seed_same_runs(small, tmp_path):
    again = reproduce.reproduce(
        "four-vs-eight",
        tmp_path / "o",
        reps=2,
        seed=3,
        benchmarks=SMALL,
        progress=False,
        log=lambda m: None,
    )
    assert (again.out / "runs.csv").read_bytes() == (small.out / "runs.csv").read_bytes()


def test_the_whole_reproduction_runs_every_benchmark_and_configuration(tmp_path):
    # its wall time is a benchmark's figure (benches/bench_reproduce.py), never a test's
    r = reproduce.reproduce("four-vs-eight", tmp_path / "all", progress=False, log=lambda m: None)
    assert r.runs_count == len(E.benchmarks) * len(E.configs) * E.reps
    # every Sandra row the seed lists is its own benchmark (28 with both allocators where they apply)
    assert len(fve.NAMES) == 28 and len(set(fve.NAMES)) == 28


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "bad"
    p = hetlab_cli("reproduce", "four-vs-eight", "--benchmarks", "nosuch", "--out", str(out))
    assert p.returncode != 0 and p.stderr.startswith("hetlab: error:") and p.stderr.count("\n") == 1, p.stderr
    assert "dhrystone" in p.stderr and not out.exists()


def test_the_phone_heats_when_the_tests_run_back_to_back(small):
    from hetlab.experiments import four_vs_eight_thermal as thermal

    warm = pd.read_csv(small.out / "warm.csv").set_index(["variant", "allocator", "config", "cluster"])
    assert set(warm.index.get_level_values("variant")) == {"file values"} | {
        f"thermal_resistance_c_per_w x{s:g}" for s in thermal.RESISTANCE_SCALES
    }
    big4 = warm.loc[("file values", "static", "big-4", "big")]
    # minutes of the A57s at their top clock reach the Note 4's trips: the caps cut the clock
    assert big4.peak_temp_c > 80.0 and big4.min_cap_mhz < 1900 and big4.avg_mhz < 1900
    # the idle cluster stays near ambient, and a higher thermal resistance runs hotter
    assert warm.loc[("file values", "static", "big-4", "little"), "mean_temp_c"] < 35.0
    hot = warm.loc[(f"thermal_resistance_c_per_w x{max(thermal.RESISTANCE_SCALES):g}", "static", "big-4", "big")]
    assert hot.mean_temp_c > big4.mean_temp_c
    report_md = (small.out / "report.md").read_text()
    assert "## The phone heats: Sandra's tests back to back" in report_md
    # the work of a test is scaled to its length; a lockstep-rounds workload keeps its own
    text = "[[tasks]]\nthreads = 8\n\n[[tasks.phases]]\nparallel_instructions = 6e9\n"
    assert "parallel_instructions = 6e+10" in thermal._scaled(text, 10)
    rounds = text.replace("threads = 8\n", "threads = 8\nrepeat = 4000\n")
    assert thermal._scaled(rounds, 10) == rounds


def test_the_sweeps_follow_the_selection(tmp_path):
    """`--benchmarks dhrystone` sweeps dhrystone alone: its sensitivity rows (no other
    benchmark's workload variants), its warm chains, no inter-core pairs."""
    from hetlab.executor import LocalExecutor
    from hetlab.experiment import Context

    ctx = Context("exynos5433", "", 1, False, lambda m: None, LocalExecutor(), None, ("dhrystone-static",))
    grid = fve.sweep_grid(ctx)
    assert grid.runs == (("dhrystone", "static"),) and grid.extra == ()
    everything = fve.sweep_grid(Context("exynos5433", "", 1, False, lambda m: None, LocalExecutor()))
    assert len(everything.runs) == len(E.benchmarks)
    r = reproduce.reproduce(
        "four-vs-eight", tmp_path / "o", reps=1, benchmarks="dhrystone-static", progress=False, log=lambda m: None
    )
    sens = pd.read_csv(r.out / "sensitivity.csv", keep_default_na=False)
    assert not any(p.startswith(("binomial", "monte-carlo", "nbody", "dnbody")) for p in sens.parameter)
    warm = pd.read_csv(r.out / "warm.csv")
    assert set(warm.allocator) == {"static"} and not (r.out / "pairs").exists()
    assert r.prepared.pair_gb_s == {}


def test_the_sweeps_obey_the_time_limit(tmp_path):
    """A --time-limit shorter than a sweep's run is a one-line error naming the run and the fix."""
    out = tmp_path / "cut"
    p = hetlab_cli(
        "reproduce",
        "four-vs-eight",
        "--benchmarks",
        "dhrystone",
        "--reps",
        "1",
        "--time-limit",
        "0.01",
        "--out",
        str(out),
    )
    assert p.returncode != 0 and p.stderr.startswith("hetlab: error:") and p.stderr.count("\n") == 1, p.stderr
    assert "did not finish within --time-limit 0.01 s" in p.stderr and "dhrystone" in p.stderr
