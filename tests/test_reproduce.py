"""`hetlab reproduce lctes2020` (issue 4) on a reduced experiment: two ccbench grid points, gcc
and povray stood in for by small workloads, two repetitions and a small characterization sweep,
so that the whole module runs in well under a minute. The full command is run by
benches/bench_reproduce.py."""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import processes
from hetlab import report
from hetlab.experiments import lctes2020

SMALL = [
    "--benchmarks",
    "ccbench-1048576-random,ccbench-65536-sequential,gcc-g23,povray-train",
    "--workload",
    "gcc-g23=ccbench:size=1048576,pattern=random,iterations=3000000",
    "--workload",
    "povray-train=cpu-bound:threads=1,instructions=400000000",
    "--reps",
    "2",
    "--sweep-reps",
    "2",
    "--sweep-patterns",
    "random",
    "--sweep-sizes",
    "16384,1048576",
]
CONFIGS = ["ondemand", "idle-min", "all-max", "anti-snoop", "anti-snoop-fig4"]
LABELS = [
    "ccbench-1048576-random-L",
    "ccbench-65536-sequential-L",
    "ccbench-1048576-random-b",
    "ccbench-65536-sequential-b",
    "gcc-g23-L",
    "gcc-g23-b",
    "povray-train-L",
    "povray-train-b",
]
PNG = b"\x89PNG\r\n\x1a\n"


def _entry() -> list[str]:
    return ["-m", "hetlab", "reproduce"]


def run(*args: str) -> subprocess.CompletedProcess:
    return processes.run([sys.executable, *_entry(), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro") / "lctes2020"
    r = run("lctes2020", "--out", str(out), *SMALL)
    assert r.returncode == 0, r.stderr
    return out, r


def test_outputs_exist(small):
    out, r = small
    for name in report.outputs(lctes2020.EXPERIMENT):
        assert (out / name).is_file(), name
        assert (out / name).stat().st_size > 0
    for name in ("fig5_ccbench_time.png", "fig6a_time.png", "fig6b_energy.png"):
        assert (out / name).read_bytes()[:8] == PNG
    assert (out / "model" / "model.json").is_file() and (out / "sweep.parquet").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "temporary files left behind"
    assert re.search(r"time: sweep [\d.]+ s, train [\d.]+ s, experiments [\d.]+ s \(80 runs\)", r.stdout)


def test_runs_csv_has_one_row_per_run(small):
    out, _ = small
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == len(LABELS) * len(CONFIGS) * 2
    assert list(dict.fromkeys(runs.label)) == LABELS
    assert set(runs.config) == set(CONFIGS) and set(runs.seed) == {1, 2}
    assert runs.groupby(["label", "config"]).seed.nunique().eq(2).all()
    assert runs.completed.all()
    np.testing.assert_allclose(runs.edp_js, runs.time_s * runs.energy_j, rtol=1e-12)
    assert (runs.governor_overhead_s[runs.config.str.startswith("anti-snoop")] > 0).all()
    # the ccbench grid gets its iteration count from an all-max probe; overrides are used as given
    grid = runs[runs.group == "ccbench"]
    assert grid.workload.str.match(r"ccbench:size=\d+,pattern=[\w-]+,iterations=\d+$").all()
    assert set(runs[runs.benchmark == "gcc-g23"].workload) == {"ccbench:size=1048576,pattern=random,iterations=3000000"}
    allmax = grid[grid.config == "all-max"]
    assert allmax.time_s.between(0.4, 1.2).all(), allmax.time_s.describe()


def test_summary_agrees_with_runs(small):
    out, _ = small
    runs = pd.read_csv(out / "runs.csv")
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == len(LABELS) * len(CONFIGS)
    base = runs[runs.config == "ondemand"].set_index(["label", "seed"])
    for row in summary.itertuples():
        g = runs[(runs.label == row.label) & (runs.config == row.config)].sort_values("seed")
        b = base.loc[[(row.label, s) for s in g.seed]]
        assert row.time_s_mean == pytest.approx(g.time_s.mean(), rel=1e-12)
        assert row.energy_j_std == pytest.approx(g.energy_j.std(ddof=1), rel=1e-9, abs=1e-15)
        assert row.speedup_mean == pytest.approx((b.time_s.to_numpy() / g.time_s.to_numpy()).mean(), rel=1e-12)
        assert row.energy_saving_mean == pytest.approx(
            (b.energy_j.to_numpy() / g.energy_j.to_numpy()).mean(), rel=1e-12
        )
        assert row.edp_ratio_mean == pytest.approx((b.edp_js.to_numpy() / g.edp_js.to_numpy()).mean(), rel=1e-12)
    od = summary[summary.config == "ondemand"]
    assert (od.speedup_mean == 1.0).all() and (od.speedup_std == 0.0).all()
    md = (out / "summary.md").read_text()
    for row in summary[summary.config == "anti-snoop"].itertuples():
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {row.label} |"))
        assert f"{row.speedup_mean:.2f} ± {row.speedup_std:.2f}" in line


def _claims_table(text: str) -> list[list[str]]:
    """The claims table as rows of (claim, paper, band, hetlab, holds, mechanism)."""
    lines = text.split("## Claims", 1)[1].strip().splitlines()
    assert lines[0] == "| claim | paper | band (set before the run) | hetlab | holds? | mechanism |"
    rows = []
    for ln in lines[2:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]])
    return rows


def test_report_sets_claims_against_computed_numbers(small):
    from hetlab.experiments.lctes2020_claims import BANDS

    out, r = small
    text = (out / "report.md").read_text()
    rows = _claims_table(text)
    assert len(rows) == 13 and all(len(row) == 6 for row in rows)
    assert all(row[4] in ("yes", "no", "partly", "not run") for row in rows)
    summary = pd.read_csv(out / "summary.csv").set_index(["label", "config"])
    gcc = summary.loc[("gcc-g23-L", "anti-snoop")]
    speed = next(row for row in rows if row[0].startswith("gcc-g23 on LITTLE: anti-snoop speedup"))
    assert speed[3] == f"{gcc.speedup_mean:.2f}x ± {gcc.speedup_std:.2f}"
    # judged against the band written before the run: overshoot does not hold
    assert speed[2] == BANDS["gcc_speedup"].text() == "holds 1.30x-1.50x; partly 1.20x-1.60x"
    assert speed[4] == BANDS["gcc_speedup"].judge(gcc.speedup_mean)
    assert "MHz on average under anti-snoop" in speed[5]
    energy = next(row for row in rows if row[0].startswith("gcc-g23 on LITTLE: anti-snoop energy"))
    assert energy[4] == BANDS["gcc_energy"].judge(gcc.energy_saving_mean)
    grid = summary.xs("anti-snoop", level="config")
    grid = grid[grid.group == "ccbench"]
    mean = next(row for row in rows if row[0].startswith("ccbench grid: mean"))
    verdict = BANDS["ccbench_mean"].judge(grid.speedup_mean.mean())
    if verdict == "yes" and (grid.speedup_mean > 2.4).any():
        verdict = "partly"
    assert mean[3].startswith(f"{grid.speedup_mean.mean():.2f}x") and mean[4] == verdict
    worst = next(row for row in rows if row[0].startswith("ccbench grid: anti-snoop never"))
    assert f"{grid.speedup_mean.min():.3f}x" in worst[3]
    povray = next(row for row in rows if row[0].startswith("povray-train"))
    verdicts = [
        BANDS["povray"].judge(x)
        for x in summary.loc[(["povray-train-L", "povray-train-b"], "anti-snoop"), "speedup_mean"]
    ]
    assert povray[4] == ("yes" if set(verdicts) == {"yes"} else "no" if set(verdicts) == {"no"} else "partly")
    for name in ("h264ref-train", "bbench", "speedometer2", "mplayer-1080p"):
        assert next(row for row in rows if row[0].startswith(name))[4] == "not run"
    # the paper's §3 beside its §5: Figures 2 and 3 from the sweep, the counter at the OPPs the paper
    # names, the governor's trace and the idle cluster's clock per pair
    assert "![Figures 2 and 3" in text and (out / "fig2_fig3_ccbench_counters.png").stat().st_size > 10_000
    assert "## Figures 2c and 3c" in text and "| random | 1048576 |" in text
    trace = text[text.index("## The anti-snoop governor at work") :]
    assert "gcc-g23 on LITTLE" in trace and "| t ms | idle big MHz |" in trace
    assert "## The idle cluster's clock under each configuration" in text
    # its last-step check runs each pair's workload as the experiment ran it: gcc-g23 here is a
    # random chase (--workload), whose counter at the idle top is a chase's (~1e-5), not gcc's (~3e-3)
    idle = text[text.index("## The idle cluster's clock under each configuration") :]
    idle = idle[: idle.index("\n## ")]
    assert "| hold at the top |" in idle
    row = next(line for line in idle.splitlines() if line.startswith("| gcc-g23-L |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 11 and float(cells[6]) == float(cells[7]) < 1e-3  # flat on the last step
    # the same table is printed; held-out accuracy and provenance are in the report
    assert "| claim | paper | band (set before the run) | hetlab | holds? | mechanism |" in r.stdout
    model = json.loads((out / "model" / "model.json").read_text())
    for cluster, m in model["metrics"].items():
        assert f"| {cluster} | {m['heldout']['accuracy']:.3f} |" in text
    assert hashlib.sha256((out / "model" / "model.json").read_bytes()).hexdigest() in text
    assert "- seeds 1, 2\n" in text and "- versions: python " in text
    assert "ccbench:size=1048576,pattern=random,iterations=" in text


def test_the_energy_account_adds_up_from_the_runs(small):
    out, _ = small
    text = (out / "report.md").read_text()
    runs = pd.read_csv(out / "runs.csv")
    gcc = runs[runs.label == "gcc-g23-L"].groupby("config").mean(numeric_only=True)
    # leakage and switching of both clusters are the clusters' energy
    clusters = gcc.static_j + gcc.dynamic_active_j + gcc.dynamic_idle_j
    assert (abs(clusters - gcc.energy_little_j - gcc.energy_big_j) < 1e-9 * clusters).all()
    section = text[text.index("## Where the energy goes") :]
    for config in ("ondemand", "anti-snoop", "all-max"):
        r = gcc.loc[config]
        rails = r.energy_little_j + r.energy_big_j + r.energy_dram_j
        assert f"| {config} | {r.avg_freq_big_khz / 1000:.0f} | {r.time_s:.2f} | {r.static_j:.3f} |" in section
        assert f"| {rails:.3f} | {rails / r.time_s:.3f} |" in section
    # this gcc stand-in is a DRAM chase: with the idle big cluster at 200 MHz its snoops outlast
    # DRAM; the 5422 keeps the early data ("overlap"), so no fetch is retried in any configuration
    assert gcc.loc["ondemand"].time_s > gcc.loc["all-max"].time_s and gcc.retried_fetches.eq(0).all()
    assert f"speedup is {gcc.loc['ondemand'].time_s / gcc.loc['anti-snoop'].time_s:.2f}x" in section


def test_same_inputs_give_the_same_bytes_and_reuse_sweep_and_model(small, tmp_path):
    out, _ = small
    again = run("lctes2020", "--out", str(out), *SMALL)
    assert again.returncode == 0, again.stderr
    assert "reusing the characterization sweep" in again.stderr and "reusing the trained model" in again.stderr
    fresh = tmp_path / "fresh"
    r = run("lctes2020", "--out", str(fresh), *SMALL)
    assert r.returncode == 0, r.stderr
    for name in ("runs.csv", "summary.csv", "summary.md", "report.md", "model/model.json"):
        if name == "report.md":  # names the model's path, which differs
            continue
        assert (out / name).read_bytes() == (fresh / name).read_bytes(), name

    def rep(p):
        return (p / "report.md").read_text().replace(str(p), "OUT")

    assert rep(out) == rep(fresh)


def test_given_model_skips_the_sweep(small, tmp_path):
    out, _ = small
    r = run(
        "lctes2020",
        "--out",
        str(tmp_path / "o"),
        "--model",
        "lctes2020-fig4",
        "--benchmarks",
        "ccbench-1048576-random-L",
        "--reps",
        "2",
    )
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "o" / "sweep.parquet").exists() and not (tmp_path / "o" / "model").exists()
    assert not (tmp_path / "o" / "fig6a_time.png").exists()
    assert "paper's Figure 4 trees" in (tmp_path / "o" / "report.md").read_text()
    runs = pd.read_csv(tmp_path / "o" / "runs.csv")
    assert len(runs) == 5 * 2 and set(runs.label) == {"ccbench-1048576-random-L"}
    r = run(
        "lctes2020",
        "--out",
        str(tmp_path / "p"),
        "--model",
        str(out / "model"),
        "--benchmarks",
        "ccbench-1048576-random-L",
        "--reps",
        "1",
    )
    assert r.returncode == 0, r.stderr
    assert (
        hashlib.sha256((out / "model" / "model.json").read_bytes()).hexdigest()
        in (tmp_path / "p" / "report.md").read_text()
    )


def test_platform_option_runs_the_experiment_on_that_platform(tmp_path):
    # a variant Exynos 5422 whose snoops are answered faster than DRAM: no snoop penalty left
    from hetlab import _core

    text = _core.builtin_platform_text("exynos5422")
    assert "snoop_path_l2_lookups = 3.49" in text
    variant = tmp_path / "fast-snoops.toml"
    variant.write_text(text.replace("snoop_path_l2_lookups = 3.49", "snoop_path_l2_lookups = 0.5"))
    speedups = {}
    for name, platform in (("builtin", "exynos5422"), ("variant", str(variant))):
        out = tmp_path / name
        r = run(
            "lctes2020",
            "--out",
            str(out),
            "--model",
            "lctes2020-fig4",
            "--benchmarks",
            "ccbench-1048576-random-L",
            "--reps",
            "1",
            "--platform",
            platform,
        )
        assert r.returncode == 0, r.stderr
        summary = pd.read_csv(out / "summary.csv").set_index("config")
        speedups[name] = summary.loc["all-max", "speedup_mean"]
        assert f"platform `{platform}`" in (out / "report.md").read_text()
    assert speedups["builtin"] > 2.0 and abs(speedups["variant"] - 1.0) < 0.02, speedups


def _bad_model(tmp_path: Path) -> str:
    p = tmp_path / "bad-model.json"
    p.write_text(json.dumps({"name": "x", "trees": [["big", {"features": ["cci_congestion"], "nodes": []}]]}))
    return str(p)


BAD = [
    (lambda t: ["lctes2021", "--model", "lctes2020-fig4"], "unknown experiment 'lctes2021'"),
    (lambda t: ["lctes2020", "--model", "lctes2020-fig4", "--benchmarks", "gcc-g99"], "unknown benchmark 'gcc-g99'"),
    (
        lambda t: [
            "lctes2020",
            "--model",
            "lctes2020-fig4",
            "--benchmarks",
            "gcc-g23",
            "--workload",
            "gcc-g23=nosuch-workload",
        ],
        "nosuch-workload",
    ),
    (lambda t: ["lctes2020", "--model", _bad_model(t), "--benchmarks", "ccbench"], "bad-model.json"),
    (lambda t: ["lctes2020", "--model", str(t / "missing.json")], "missing.json"),
    (lambda t: ["lctes2020", "--model", "lctes2020-fig4", "--reps", "0"], "--reps must be in 1..100000, got 0"),
    (lambda t: ["lctes2020", "--sweep-reps", "1"], "--sweep-reps must be at least 2"),
    (lambda t: ["lctes2020", "--sweep-patterns", "zigzag"], "zigzag"),
    (lambda t: ["lctes2020", "--model", "lctes2020-fig4", "--platform", str(t / "nope.toml")], "nope.toml"),
]


@pytest.mark.parametrize("make_args,message", BAD)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, make_args, message):
    args = make_args(tmp_path)
    before = sorted(tmp_path.iterdir())
    r = run(*args, "--out", str(tmp_path / "out"))
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetlab: error:") and message in lines[0], r.stderr
    assert sorted(tmp_path.iterdir()) == before and not (tmp_path / "out").exists()


def test_unwritable_out_and_earlier_outputs_survive_a_failed_run(small, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run("lctes2020", "--model", "lctes2020-fig4", "--out", str(blocker / "sub"))
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "not a directory" in r.stderr
    r = run("lctes2020", "--model", "lctes2020-fig4", "--out", str(blocker))
    assert r.returncode != 0 and "not a directory" in r.stderr
    out, _ = small
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    r = run("lctes2020", "--out", str(out), "--model", _bad_model(tmp_path))
    assert r.returncode != 0
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    # a sweep made with other options is not silently reused or overwritten
    args = list(SMALL)
    args[args.index("--sweep-reps") + 1] = "3"
    r = run("lctes2020", "--out", str(out), *args)
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "other options" in r.stderr, r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def _summary(rows):
    keys = ["time_s", "energy_j", "edp_js", "speedup", "energy_saving", "edp_ratio"]
    out = []
    for label, config, t, e, sd in rows:
        r = {
            "benchmark": label.rsplit("-", 1)[0],
            "cluster": "little" if label.endswith("-L") else "big",
            "label": label,
            "group": "spec",
            "config": config,
            "reps": 5,
            "completed": True,
            "active_freq_mhz": 1400.0,
            "idle_freq_mhz": 200.0,
            "l2_mpki": 5.0,
            "governor_overhead_us_per_sample": 40.0,
            "idle_cluster_energy_share": 0.4,
        }
        for k in keys:
            r[f"{k}_mean"], r[f"{k}_std"] = 0.0, 0.0
        r.update(time_s_mean=t, time_s_std=sd, energy_j_mean=e, energy_j_std=sd)
        out.append(r)
    df = pd.DataFrame(out)
    base = df[df.config == "ondemand"].set_index("label")
    df["speedup_mean"] = [base.loc[lab, "time_s_mean"] / t for lab, t in zip(df.label, df.time_s_mean)]
    df["energy_saving_mean"] = [base.loc[lab, "energy_j_mean"] / e for lab, e in zip(df.label, df.energy_j_mean)]
    return df


def test_claims_are_judged_from_the_numbers():
    # bbench-L in order; bbench-b: anti-snoop slower than ondemand beyond the spread; speedups 1.2 and 0.8
    rows = [
        ("bbench-L", "ondemand", 12.0, 10.0, 0.01),
        ("bbench-L", "idle-min", 12.1, 9.0, 0.01),
        ("bbench-L", "all-max", 9.0, 12.0, 0.01),
        ("bbench-L", "anti-snoop", 10.0, 9.5, 0.01),
        ("bbench-b", "ondemand", 8.0, 10.0, 0.01),
        ("bbench-b", "idle-min", 8.0, 10.0, 0.01),
        ("bbench-b", "all-max", 7.0, 9.0, 0.01),
        ("bbench-b", "anti-snoop", 10.0, 9.0, 0.01),
    ]
    claims = lctes2020.claims(_summary(rows), None)
    assert len(claims) == 13
    order = next(c for c in claims if "all-max fastest" in c.claim)
    assert order.holds == "partly" and order.hetlab == "1/2 benchmark-cluster pairs" and "bbench-b" in order.note
    energy = next(c for c in claims if "most energy" in c.claim)
    assert energy.holds == "partly" and "bbench-b (most: ondemand" in energy.note and "bbench-L" not in energy.note
    web = next(c for c in claims if c.claim.startswith("bbench"))
    assert web.holds == "partly" and "bbench-b" in web.note and "all-max" in web.note
    gcc = next(c for c in claims if c.claim.startswith("gcc-g23 on LITTLE: anti-snoop speedup"))
    assert gcc.holds == "not run"


def test_numeric_claims_hold_inside_their_band_and_overshoot_counts_against():
    from hetlab.experiments.lctes2020_claims import BANDS, Band

    band = BANDS["gcc_speedup"]  # the paper's 1.4x: its gain within ±25 % holds, within ±50 % partly
    assert [band.judge(x) for x in (1.4, 1.3, 1.5, 1.58, 1.19, 2.27)] == ["yes", "yes", "yes", "partly", "no", "no"]
    assert Band.from_gain(0.10, 0.25).holds == (1.075, 1.3125)
    rows = [
        ("gcc-g23-L", "ondemand", 22.7, 10.0, 0.0),
        ("gcc-g23-L", "idle-min", 22.7, 10.0, 0.0),
        ("gcc-g23-L", "all-max", 10.0, 12.0, 0.0),
        ("gcc-g23-L", "anti-snoop", 10.0, 5.8, 0.0),
    ]
    claims = lctes2020.claims(_summary(rows), None)
    speed = next(c for c in claims if c.claim.startswith("gcc-g23 on LITTLE: anti-snoop speedup"))
    energy = next(c for c in claims if c.claim.startswith("gcc-g23 on LITTLE: anti-snoop energy"))
    # 2.27x against the paper's 1.4x does not hold, however large a gain it is; 1.72x energy does
    assert (speed.holds, speed.hetlab, energy.holds) == ("no", "2.27x ± 0.00", "yes")
    assert speed.band == "holds 1.30x-1.50x; partly 1.20x-1.60x" and "anti-snoop recovers 100%" in speed.mechanism


def test_snoop_penalty_claims_compare_idle_min_with_all_max():
    # gcc-g23-L: idle-min 18 s vs all-max 10 s = +80%; bbench-L +110% is past the bound's +25 % (holds up
    # to +100 %) but within its +50 % (partly), bbench-b +10% keeps it
    rows = [
        ("gcc-g23-L", "ondemand", 18.0, 10.0, 0.0),
        ("gcc-g23-L", "idle-min", 18.0, 10.0, 0.0),
        ("gcc-g23-L", "all-max", 10.0, 12.0, 0.0),
        ("gcc-g23-L", "anti-snoop", 12.0, 8.0, 0.0),
        ("bbench-L", "ondemand", 20.0, 10.0, 0.0),
        ("bbench-L", "idle-min", 21.0, 10.0, 0.0),
        ("bbench-L", "all-max", 10.0, 8.0, 0.0),
        ("bbench-L", "anti-snoop", 12.0, 8.0, 0.0),
        ("bbench-b", "ondemand", 11.0, 10.0, 0.0),
        ("bbench-b", "idle-min", 11.0, 10.0, 0.0),
        ("bbench-b", "all-max", 10.0, 12.0, 0.0),
        ("bbench-b", "anti-snoop", 10.5, 9.0, 0.0),
    ]
    claims = lctes2020.claims(_summary(rows), None)
    gcc = next(c for c in claims if c.claim.startswith("snoop penalty of gcc"))
    assert gcc.holds == "yes" and gcc.hetlab == "gcc-g23-L +80%"
    bound = next(c for c in claims if c.claim.startswith("snoop penalty of the realistic"))
    assert bound.holds == "partly" and bound.hetlab.startswith("largest bbench-L +110%; 2/3")
    assert "bbench-L +110%" in bound.note and "bbench-b" not in bound.note
    # all-max saving energy is explained by its speedup against its power ratio
    energy = next(c for c in claims if "most energy" in c.claim)
    assert "bbench-L 2.00x faster at 1.60x the power" in energy.note


def test_another_experiments_results_are_not_replaced(small):
    out, _ = small
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    r = run("bl-mp-sched", "--reps", "2", "--benchmarks", "linsched-test-linsched", "--out", str(out))
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "holds the results of experiment lctes2020" in r.stderr and "--force" in r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
