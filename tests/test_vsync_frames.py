"""A `frames` phase (crates/hetlab-core/src/workload: PhaseKind::Frames): each frame starts at the
display's next vsync, and a frame longer than a vsync period waits for the vsync after it ends."""

from hetlab import api

VSYNC_US = 16666.667


def _run(tmp_path, instructions: float, late: str = "") -> tuple[float, float]:
    """One pinned thread: a marked frames phase of 12 frames, then a marked end; (start, end) s."""
    path = tmp_path / "frames.toml"
    path.write_text(
        f"""name = "frames-probe"
[[tasks]]
name = "compositor"
affinity = [0]
[[tasks.phases]]
mark = "start"
instructions = {instructions!r}
cpi = 1.0
refs_per_instr = 0.1
working_set_bytes = 4096
frames = 12
vsync_us = {VSYNC_US}
{late}
[[tasks.phases]]
mark = "end"
sleep_us = 0
"""
    )
    r = api.simulate("vexpress-a9", str(path), seed=1, scheduler="smp", governor="performance")
    marks = {m["name"]: m["time_s"] for m in r.marks}
    return marks["start"], marks["end"]


def test_short_frames_take_one_vsync_each(tmp_path):
    # 1e6 instructions at 400 MHz: 2.5 ms, well inside a 16.7 ms period
    start, end = _run(tmp_path, 1e6)
    assert start == 0.0
    # frame k starts at vsync k (k = 1..12) and ends 2.5 ms later
    assert 12 * VSYNC_US / 1e6 < end < 12 * VSYNC_US / 1e6 + 0.004


def test_a_frame_longer_than_a_vsync_waits_for_the_next(tmp_path):
    # 8e6 instructions: 20 ms, longer than a period: every frame takes two vsyncs
    _, end = _run(tmp_path, 8e6)
    frame_s = 8e6 / 400e6
    expected = (1 + 2 * 11) * VSYNC_US / 1e6 + frame_s  # the 12th frame starts at vsync 23
    assert abs(end - expected) < 0.002, end


def test_the_vsync_wake_up_jitter_is_the_files(tmp_path):
    exact = _run(tmp_path, 1e6)[1]
    late = _run(tmp_path, 1e6, "sleep_late_max_us = 1000.0")[1]
    # the last frame starts up to 1 ms after its vsync (the earlier ones' lateness is absorbed)
    assert exact < late < exact + 0.001
