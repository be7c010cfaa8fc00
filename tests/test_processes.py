"""The suite's own process hygiene (tests/processes.py): children start with SIGINT at its
default even when the suite's parent ignores it; a hang guard or a failed test kills the whole
process group; and a session run with SIGINT ignored — tests that fail, time out, leave a child
running or let one escape its group — leaves no process behind (`ps` before and after)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

import processes

TESTS = Path(__file__).resolve().parent
# An hour of simulated time: minutes of CPU if it ever ran to its end.
HOUR = [
    sys.executable,
    "-m",
    "hetlab",
    "simulate",
    "--workload",
    "periodic:run_us=10,period_us=20,duration_us=3600000000,threads=8",
    "--time-limit",
    "3600",
]


def _sigint_ignored(pid: int) -> bool:
    """Bit SIGINT-1 of SigIgn in /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    raise AssertionError("no SigIgn line")


def _alive(pid: int) -> bool:
    try:
        return processes._stat_fields(pid)[0] != "Z"
    except (OSError, IndexError):
        return False


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + processes.HANG_GUARD_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


CHILD_SIGINT = """
import subprocess, sys
sys.path.insert(0, {tests!r})
import processes
if sys.argv[1] == "restore":
    processes.restore_default_sigint()
    p = processes.popen(["sleep", "30"])
else:
    p = subprocess.Popen(["sleep", "30"])
print(p.pid, flush=True)
p.wait()
"""


@pytest.mark.parametrize("restore", [True, False])
def test_children_start_with_sigint_at_its_default_when_the_parent_ignores_it(restore):
    """A shell that ignores SIGINT (`trap '' INT`, nohup, a background job) starts the test
    process; its children see SIGINT at its default once restore_default_sigint() has run (the
    suite's plugin runs it first), and inherit the ignore otherwise (the case it exists for)."""
    script = CHILD_SIGINT.format(tests=str(TESTS))
    outer = processes.popen(
        ["bash", "-c", 'trap "" INT; exec "$@"', "bash", sys.executable, "-c", script, "restore" if restore else "raw"],
        stdout=subprocess.PIPE,
        text=True,
    )
    child = None
    try:
        child = int(outer.stdout.readline())
        assert _sigint_ignored(child) is not restore
    finally:
        processes.stop(outer)
        if child is not None:  # popen() put it in a group of its own, which stopping outer misses
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)


def test_the_hang_guard_kills_the_whole_process_group(tmp_path):
    """`run()` past its guard: the command and what it started in the background both end."""
    pidfile = tmp_path / "background.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        processes.run(["bash", "-c", f"sleep 600 & echo $! > {pidfile}; wait"], timeout=1)
    assert _gone(int(pidfile.read_text()))


def test_what_a_test_left_running_is_killed_and_named():
    mark = processes.started()
    proc = processes.popen(["sleep", "600"])
    left = processes.reap(mark, grace_s=0)
    assert left == [f"{proc.pid} sleep 600"] and proc.returncode == -signal.SIGKILL


LEAVERS = f"""
import os, subprocess, sys, time
import processes

HOUR = {HOUR!r}


def test_fails_with_an_hour_long_child_running():
    processes.popen(HOUR, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert False, "a failed assertion"


def test_meets_its_hang_guard():
    processes.run(HOUR, timeout=1)


def test_passes_but_leaves_a_child():
    processes.popen(["sleep", "600"])


def test_lets_a_grandchild_escape_into_a_session_of_its_own():
    # Popen returns once the grandchild has exec'd, after its setsid(): it has left the group
    # before its parent ends (`setsid -f` would leave a moment when the reaper still finds it)
    escape = "import subprocess; subprocess.Popen(['sleep', '600'], start_new_session=True)"
    processes.run([sys.executable, "-c", escape], check=True)
"""


def test_a_session_with_sigint_ignored_leaves_no_process_behind(tmp_path):
    """`ps` before and after a pytest session started with SIGINT ignored: one real signal test
    of the suite (Ctrl-C on an hour-long `hetlab simulate`) passes, and the tests written to fail
    — an assertion with an hour-long child running, a hang guard, a child left running by a
    passing test, a grandchild that left its process group for a session of its own — fail,
    named; afterwards no process of that session is left (the last one only by the session-end
    check, which fails the run)."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("processes",)\n')
    (tmp_path / "test_leavers.py").write_text(textwrap.dedent(LEAVERS))
    tag = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(TESTS), "HETLAB_TEST_OUTER": tag}

    def ps() -> list[int]:
        return processes.leftovers(tag, variable="HETLAB_TEST_OUTER")

    assert ps() == []
    signal_test = f"{TESTS}/test_hardening.py::test_a_signal_stops_an_hour_long_run_far_short_of_the_hour"
    session = processes.run(
        ["bash", "-c", 'trap "" INT; exec "$@"', "bash", sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
        + ["-q", "-rfE", "--rootdir", str(tmp_path), str(tmp_path), signal_test],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    report = session.stdout + session.stderr
    assert ps() == [], processes.describe(ps())
    assert session.returncode == 1, report
    assert "2 failed, 4 passed, 2 errors" in report, report
    for name in ("test_fails_with_an_hour_long_child_running", "test_meets_its_hang_guard"):
        assert f"FAILED test_leavers.py::{name}" in report, report
    assert "ERROR test_leavers.py::test_passes_but_leaves_a_child" in report, report
    assert "the test left processes running (killed now)" in report and "sleep 600" in report, report
    assert "processes left running by the tests (killed now)" in report, report
