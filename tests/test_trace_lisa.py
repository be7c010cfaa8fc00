"""hetlab's ftrace output, read by ARM's LISA, gives the same events as our own reading of it.

LISA (lisa-linux==3.1.0) runs in its own venv (.venv-lisa, built once by scripts/lisa-venv.sh
from constraints-lisa.txt; shared/reference/ecosystem.md §7), driven through
tests/lisa_read_trace.py in a subprocess. The reference reading is tests/ftrace_text.py.

Environment:
  HETLAB_LISA_PYTHON=/path/to/python  use an existing LISA interpreter instead of .venv-lisa
  HETLAB_REQUIRE_LISA=1               fail (instead of skip) when the venv cannot be built
                                      because the package index is unreachable
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
if str(TESTS) not in sys.path:  # also works under --import-mode=importlib
    sys.path.insert(0, str(TESTS))

import ftrace_text  # noqa: E402

SIM_ARGS = [
    "simulate",
    "--platform",
    "exynos5422",
    "--workload",
    "ccbench:size=1048576,pattern=random,iterations=2000000",
    "--cluster",
    "little",
    "--governor",
    "ondemand",
    "--seed",
    "1",
    "--json",
]

# The sample of ecosystem.md §7 (the layout LISA was checked to accept), with a waking and an
# atrace counter added.
SAMPLE = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 7/7   #P:8
#
#           TASK-PID     CPU#     TIMESTAMP  FUNCTION
#              | |         |         |         |
          <idle>-0     [004]   100.000100: sched_switch:         prev_comm=swapper/4 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=task0 next_pid=1001 next_prio=120
           task0-1001  [004]   100.000150: cpu_frequency:        state=1800000 cpu_id=4
           task0-1001  [004]   100.000150: cpu_frequency:        state=1800000 cpu_id=5
           task0-1001  [004]   100.005000: sched_waking:         comm=task1 pid=1002 prio=120 target_cpu=005
           task0-1001  [004]   100.005000: tracing_mark_write:   C|0|big_power_mw|123.456
           task0-1001  [004]   100.010100: sched_switch:         prev_comm=task0 prev_pid=1001 prev_prio=120 prev_state=S ==> next_comm=swapper/4 next_pid=0 next_prio=120
          <idle>-0     [004]   100.010200: cpu_idle:             state=0 cpu_id=4
          <idle>-0     [004]   100.020200: cpu_idle:             state=4294967295 cpu_id=4
"""


# ------------------------------------------------------------------------------------------------
# LISA (the `lisa_python` fixture, the venv's interpreter, is in conftest.py)


def run_lisa(lisa_python: str, trace: Path, parser: str) -> dict:
    proc = processes.run(
        [lisa_python, str(TESTS / "lisa_read_trace.py"), str(trace), "--parser", parser],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, f"LISA ({parser}) failed on {trace}:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout)


# ------------------------------------------------------------------------------------------------
# Comparison


def assert_same_events(ours: dict, lisa: dict, what: str) -> None:
    """`ours`: ftrace_text.summary (times in µs); `lisa`: lisa_read_trace.py output (seconds).

    Both keep file order (LISA nudges equal timestamps by an ULP but does not reorder them)."""
    assert lisa["counts"] == ours["counts"], f"{what}: event counts differ"
    for event in ftrace_text.EVENTS:
        mine, theirs = ours[event], lisa[event]
        assert len(mine) == len(theirs), f"{what}: {event} row count"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            t_us = t[0] * 1e6
            assert abs(t_us - m[0]) <= 1.0, f"{what}: {event} row {i} time {t_us} vs {m[0]} µs"
            assert t[1:] == m[1:], f"{what}: {event} row {i}: LISA {t} vs text {m}"


# ------------------------------------------------------------------------------------------------
# Tests


def test_reference_parser_reads_sample():
    lines = ftrace_text.parse_text(SAMPLE)
    ftrace_text.check_consistency(lines)
    s = ftrace_text.summary(lines)
    assert s["counts"] == {"sched_switch": 2, "sched_waking": 1, "cpu_frequency": 2, "cpu_idle": 2}
    assert s["cpu_frequency"] == [[100_000_150, 4, 1_800_000], [100_000_150, 5, 1_800_000]]
    assert s["sched_switch"] == [[100_000_100, 4, 0, 1001], [100_010_100, 4, 1001, 0]]
    assert s["cpu_idle"][1] == [100_020_200, 4, 4294967295]
    (c,) = ftrace_text.counters(lines)
    assert (c.pid, c.name, c.value) == (0, "big_power_mw", 123.456)


def test_reference_parser_rejects_irq_flags_column():
    flagged = SAMPLE.replace("[004]   100.000100", "[004] d..3  100.000100")
    with pytest.raises(ftrace_text.FtraceFormatError):
        ftrace_text.parse_text(flagged)


@pytest.mark.lisa
@pytest.mark.parametrize("parser", ["hrtxt", "systrace"])
def test_lisa_reads_reference_sample(lisa_python, tmp_path, parser):
    trace = tmp_path / "sample.txt"
    trace.write_text(SAMPLE)
    ours = ftrace_text.summary(ftrace_text.parse_text(SAMPLE))
    assert_same_events(ours, run_lisa(lisa_python, trace, parser), f"sample/{parser}")


@pytest.fixture(scope="module")
def simulated_trace(tmp_path_factory):
    trace = tmp_path_factory.mktemp("lisa") / "exynos5422-little-ondemand.txt"
    env = dict(os.environ)
    if importlib.util.find_spec("hetlab") is None:  # source checkout without an install
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    proc = processes.run(
        [sys.executable, "-m", "hetlab", *SIM_ARGS, "--trace", str(trace)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, f"hetlab simulate failed:\n{proc.stderr[-4000:]}"
    result = json.loads(proc.stdout)
    assert isinstance(result, dict), "simulate --json must print one JSON object"
    assert trace.exists(), "simulate --trace did not write the trace"
    return trace


@pytest.mark.lisa
@pytest.mark.parametrize("parser", ["hrtxt", "systrace"])
def test_lisa_reads_simulated_trace(lisa_python, simulated_trace, parser):
    lines = ftrace_text.parse_file(simulated_trace)
    ftrace_text.check_consistency(lines)
    ours = ftrace_text.summary(lines)
    assert ours["counts"]["sched_switch"] > 0, "a busy run must schedule something"
    assert ours["counts"]["cpu_frequency"] > 0, "ondemand on a busy cluster must set a frequency"
    assert_same_events(ours, run_lisa(lisa_python, simulated_trace, parser), f"simulated/{parser}")
