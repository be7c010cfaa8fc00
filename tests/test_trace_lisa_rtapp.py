"""LISA's rt-app analysis (`trace.ana.rta`) on a simulated run of an rt-app file: the markers
hetlab's threads write (`engine/rtapp_markers.rs`) are read as rt-app's own, and what LISA
finds (phases, per-loop stats, task states) agrees with the file and with the run's report.

ARM's LISA (lisa-linux==3.1.0) runs in its own venv (conftest.py's `lisa_python`), driven through
tests/lisa_rtapp_analysis.py in a subprocess.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

import processes

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# A real-time display task (SCHED_FIFO): 20 light frames then 10 heavy ones, each released by its
# own 16 ms timer, with `run` calibrated on the A15 (CPU4); beside it two CFS workers that take
# turns under a mutex.
PERIOD_US = 16000
RTAPP = {
    "global": {"calibration": "CPU4", "duration": -1, "ftrace": "main,task,loop,event,stats"},
    "tasks": {
        "frames": {
            "policy": "SCHED_FIFO",
            "priority": 2,
            "loop": 1,
            "cpus": [4, 5, 6, 7],
            "phases": {
                "light": {"loop": 20, "run": 2000, "timer": {"ref": "unique", "period": PERIOD_US}},
                "heavy": {"loop": 10, "run": 8000, "timer": {"ref": "unique", "period": PERIOD_US}},
            },
        },
        "worker": {"instance": 2, "loop": 30, "lock": "m", "runtime": 3000, "unlock": "m", "sleep": 4000},
    },
}


def _simulate_and_analyse(d: Path, lisa_python: str, trace_format: str):
    """(the run's JSON summary, LISA's rt-app analysis of its trace in `trace_format`)."""
    workload, trace = d / "display.json", d / f"display.{trace_format}.trace"
    workload.write_text(json.dumps(RTAPP))
    env = dict(os.environ)
    if importlib.util.find_spec("hetlab") is None:  # source checkout without an install
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    args = ["--platform", "exynos5422", "--workload", str(workload), "--scheduler", "smp"]
    args += ["--governor", "performance", "--seed", "1", "--json", "--trace", str(trace)]
    args += ["--trace-format", trace_format]
    proc = processes.run(
        [sys.executable, "-m", "hetlab", "simulate", *args], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"hetlab simulate failed:\n{proc.stderr[-4000:]}"
    script = [lisa_python, str(TESTS / "lisa_rtapp_analysis.py"), str(trace), f"{trace}.plat_info.yml"]
    lisa = processes.run([*script, "--format", trace_format], capture_output=True, text=True, timeout=1800)
    assert lisa.returncode == 0, f"LISA's rt-app analysis failed:\n{lisa.stderr[-4000:]}"
    return json.loads(proc.stdout), json.loads(lisa.stdout)


@pytest.fixture(scope="module")
def rtapp_run(tmp_path_factory, lisa_python):
    """(the run's JSON summary, LISA's rt-app analysis of its trace in the kernel's format)."""
    return _simulate_and_analyse(tmp_path_factory.mktemp("lisa-rtapp"), lisa_python, "ftrace")


@pytest.mark.lisa
def test_lisa_reads_the_trace_cmd_layout_with_its_own_parser_and_finds_the_same(rtapp_run, tmp_path, lisa_python):
    """`--trace-format trace-cmd`: LISA's TxtTraceParser reads the markers itself, and its
    rt-app analysis finds what it finds in the kernel's format (the tests below check that)."""
    run, lisa = rtapp_run
    run_tc, lisa_tc = _simulate_and_analyse(tmp_path, lisa_python, "trace-cmd")
    assert run_tc == run, "the layout changes nothing in the run"
    assert lisa_tc["tasks"].keys() == lisa["tasks"].keys()
    assert _same(lisa_tc, lisa), (lisa_tc, lisa)


def _same(a, b):
    """Equal, numbers to a nanosecond (the two parsers turn text into floats their own ways)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-9
    return a == b


@pytest.mark.lisa
def test_lisa_finds_every_rtapp_thread(rtapp_run):
    run, lisa = rtapp_run
    assert sorted(lisa["tasks"]) == sorted(t["name"] for t in run["threads"])
    start, end = lisa["window"]
    assert start == pytest.approx(0.0, abs=1e-9) and end == pytest.approx(run["time_s"], abs=1e-6)
    for task in lisa["tasks"].values():
        assert [e for _, e in task["task"]] == ["start", "end"]


@pytest.mark.lisa
def test_lisa_phases_are_the_files(rtapp_run):
    _, lisa = rtapp_run
    (frames,) = (t for name, t in lisa["tasks"].items() if name.startswith("frames"))
    phases = frames["phases"]
    assert [p for _, _, p in phases] == [0, 1]
    # the timer's expiries end each phase: 20 and 10 periods from the thread's start
    assert phases[0][0] == pytest.approx(0.0, abs=1e-6)
    assert phases[0][1] == pytest.approx(20 * PERIOD_US / 1e6, abs=2e-6)
    assert phases[1][1] == pytest.approx(10 * PERIOD_US / 1e6, abs=2e-6)
    # one marker per event: 30 runs and 30 timers
    assert frames["events"] == 60


@pytest.mark.lisa
def test_lisa_stats_are_the_loops(rtapp_run):
    _, lisa = rtapp_run
    (frames,) = (t for name, t in lisa["tasks"].items() if name.startswith("frames"))
    stats = frames["stats"]
    assert len(stats) == 30
    for i, (_, period, run_us, slack, c_period, c_run, perf_index) in enumerate(stats):
        asked = 2000 if i < 20 else 8000
        assert (c_period, c_run) == (PERIOD_US, asked)
        # every frame met its deadline: the slack is what its run left of the period
        assert period == pytest.approx(PERIOD_US, abs=2)
        assert run_us == pytest.approx(asked, rel=0.05) and slack == pytest.approx(PERIOD_US - run_us, abs=2)
        assert 0 < perf_index <= 1.0


@pytest.mark.lisa
def test_lisa_task_states_are_the_runs(rtapp_run):
    run, lisa = rtapp_run
    for thread in run["threads"]:
        # LISA counts a thread running from its switch-in; the run's CPU time leaves out the
        # idle-state exit its wake-up waits for on an idle CPU (a few µs per wake-up)
        active_s, cpu_s = lisa["tasks"][thread["name"]]["active_s"], thread["cpu_time_s"]
        assert cpu_s - 2e-6 <= active_s <= cpu_s * 1.002, thread["name"]
    # the workers take turns: 30 x 3 ms each under the mutex, never together
    workers = [t for t in run["threads"] if t["name"].startswith("worker")]
    assert sum(t["cpu_time_s"] for t in workers) == pytest.approx(2 * 30 * 0.003, rel=0.01)
