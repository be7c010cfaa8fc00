"""`hetlab reproduce modern-placement` (issue 37 item 4): a small run's outputs and their table,
the DSU's clock as each configuration sets it (a mechanism, read off the runs), the claims
computed from the runs, and the frame-miss count worked by hand."""

import pandas as pd
import pytest

from hetlab import reproduce
from hetlab.experiments import modern_placement as mp


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """One platform and rate, every configuration, one seed."""
    out = tmp_path_factory.mktemp("modern") / "out"
    return reproduce.reproduce(
        "modern-placement", out, benchmarks="rk3588-60", reps=1, progress=False, log=lambda msg: None
    )


def test_a_small_run_writes_its_table_figure_and_claims(small):
    out = small.out
    for name in ("runs.csv", "summary.csv", "summary.md", "report.md", "fig_energy_misses.png"):
        assert (out / name).is_file(), name
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs.config) == sorted(c.name for c in mp.CONFIGS)
    for column in (
        "energy_soc_j",
        "mj_per_frame",
        "energy_dsu_j",
        "dsu_mhz",
        "frames",
        "misses",
        "miss_pct",
        "latency_ms",
    ):
        assert runs[column].notna().all(), column
    report = (out / "report.md").read_text()
    header = (
        "| benchmark | config | SoC energy J | mJ per frame | DSU energy J | DSU MHz | frames shown | misses % "
        "| latency ms |"
    )
    assert header in report
    rows = [line for line in report.splitlines() if line.startswith("| rk3588-60 |")]
    assert [r.split(" | ")[1] for r in rows] == [c.name for c in mp.CONFIGS]
    assert len(small.claims) == 5
    assert all(c.holds in ("yes", "partly", "no") and c.band for c in small.claims)


def test_the_dsu_runs_at_its_top_opp_when_fixed_and_below_it_when_voted(small):
    """rk3588's DSU ladder tops at 1800 MHz; voted, it follows 0.6 x the busiest cluster's clock
    down, and its clock power (C·V²·f) with it."""
    runs = pd.read_csv(small.out / "runs.csv").set_index("config")
    for placement in mp.PLACEMENTS:
        fixed, voted = runs.loc[f"{placement}-dsu-fixed"], runs.loc[f"{placement}-dsu-vote"]
        assert fixed.dsu_mhz == pytest.approx(1800.0)
        assert voted.dsu_mhz < 1800.0
        assert voted.energy_dsu_j < fixed.energy_dsu_j
        # the SoC's energy is its rails': clusters + DSU + DRAM (the board draws nothing here)
        assert voted.energy_soc_j == pytest.approx(voted.energy_total_j)


def test_frame_misses_worked_by_hand():
    # vsyncs every 10 ms; frame 1 done at 5 ms (shown at the 10 ms vsync), frame 2 at 25 ms
    # (shown at 30 ms): the 20 ms vsync had no new frame, one miss of three
    marks = [{"time_s": t / 1000, "name": "vsync"} for t in (0, 10, 20, 30, 40)]
    marks += [{"time_s": 0.001, "name": "frame-start"}, {"time_s": 0.005, "name": "render-done"}]
    marks += [{"time_s": 0.011, "name": "frame-start"}, {"time_s": 0.025, "name": "render-done"}]
    marks.sort(key=lambda m: m["time_s"])
    m = mp.frame_misses(marks, 0.010)
    assert (m["frames"], m["misses"], m["late_frames"]) == (2, 1, 1)
    assert m["miss_pct"] == pytest.approx(100 / 3)
    assert m["latency_ms"] == pytest.approx((5 + 15) / 2)
