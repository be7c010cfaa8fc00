"""Run-to-run variation of a workload's phases (`instructions_cv`, `sleep_late_max_us`;
crates/hetlab-core/src/workload/spread.rs): one seed repeats its run byte for byte, another
seed gives another run, and the spread of the runs follows the numbers in the workload file."""

import json
import re

import numpy as np

from hetlab import _core, api

VEXPRESS_SMP = {"scheduler": "smp", "governor": "performance"}


def _bbench(seed: int) -> api.SimResult:
    return api.simulate("vexpress-a9", "bbench-android", seed=seed, intervals=True, **VEXPRESS_SMP)


def _bytes(r: api.SimResult) -> str:
    return json.dumps([r.summary, r.marks], sort_keys=True) + r.intervals_df().to_csv()


def _renders(r: api.SimResult) -> list[float]:
    starts = [m["time_s"] for m in r.marks if m["name"] == "render-start"]
    dones = [m["time_s"] for m in r.marks if m["name"] == "render-done"]
    return [d - s for s, d in zip(starts, dones)]


def test_one_seed_repeats_byte_for_byte_and_two_seeds_differ():
    a, again, other = _bbench(11), _bbench(11), _bbench(12)
    assert _bytes(a) == _bytes(again)
    assert _bytes(a) != _bytes(other)
    assert _renders(a) != _renders(other)


def _phases(cv: str, late: str) -> str:
    """One thread, pinned: a marked compute phase, then a marked 10 ms sleep, 300 times."""
    return f"""name = "spread-probe"
[[tasks]]
name = "probe"
affinity = [0]
repeat = 300
[[tasks.phases]]
mark = "work"
instructions = 4.0e6
{cv}
[[tasks.phases]]
mark = "sleep"
sleep_us = 10000
{late}
"""


def _probe(tmp_path, cv: str, late: str) -> tuple[np.ndarray, np.ndarray]:
    """Each iteration's work time and sleep time (s), from the marks."""
    path = tmp_path / "probe.toml"
    path.write_text(_phases(cv, late))
    r = api.simulate("vexpress-a9", str(path), seed=3, scheduler="smp", governor="performance")
    work = np.array([m["time_s"] for m in r.marks if m["name"] == "work"])
    sleep = np.array([m["time_s"] for m in r.marks if m["name"] == "sleep"])
    return sleep - work, work[1:] - sleep[:-1]


def test_the_spread_is_the_files(tmp_path):
    flat_work, flat_sleep = _probe(tmp_path, "", "")
    work, sleep = _probe(tmp_path, "instructions_cv = 0.2", "sleep_late_max_us = 4000")
    wide, _ = _probe(tmp_path, "instructions_cv = 0.4", "")
    cv = lambda x: x.std() / x.mean()  # noqa: E731
    # without the keys only the board's own noise is left (OS jitter, DRAM latency)
    assert cv(flat_work) < 0.05
    assert abs(cv(work) - 0.2) < 0.05 and abs(cv(wide) - 0.4) < 0.08
    assert abs(work.mean() / flat_work.mean() - 1) < 0.05  # mean 1: the amount is the file's
    late_ms = (sleep - flat_sleep.mean()) * 1e3
    assert late_ms.min() > -0.5 and late_ms.max() < 4.5 and 1.5 < late_ms.mean() < 2.5  # uniform 0..4 ms


def test_bbench_cites_each_spread_it_declares():
    text = _core.builtin_workload_text("bbench-android")
    keys = [line for line in text.splitlines() if re.match(r"\s*(instructions_cv|sleep_late_max_us)\s*=", line)]
    # 5 renders x (WebViewCore's work and timer, SurfaceFlinger's frames and their vsync wake-ups),
    # and the timer slack of the noise thread's sleep and the three workers' two sleeps each
    assert len(keys) == 5 * 4 + 1 + 6
    assert all(re.search(r"#.*\[(DBG|NRN|WBD|SLACK)\]", line) for line in keys), keys
    for name in ("bbench-android", "audio-bbench"):
        text = _core.builtin_workload_text(name)
        assert text.count("vsync_us = 16666.667") == text.count("frames = ") > 0, name
        assert "instructions_cv" in text and "sleep_late_max_us = 2000" in text, name
