"""Every process a test starts is started and stopped here (tests/ is on sys.path under pytest).

- `popen()` and `run()` are `subprocess.Popen` / `subprocess.run` with three differences: the
  child leads a process group of its own, so that stopping it stops everything it started (a
  `hetlab` that forked workers, a shell pipeline, a valgrind under `hetlab profile`); standard
  input is /dev/null unless the test gives some; and `run()` has a hang guard, after which it
  kills the group (never only the leader) and raises `subprocess.TimeoutExpired`.
- Children start with SIGINT at its default disposition: a test run from a shell that ignores
  SIGINT (`nohup`, a background job, some CI runners) would otherwise hand the ignore on through
  exec, and a child told to stop by Ctrl-C would run on — `hetlab simulate` for its hour.

It is also a pytest plugin (conftest.py lists it in `pytest_plugins`): before any test it calls
`restore_default_sigint()` and marks the session; after every test its autouse fixture stops
whatever the test's children left running (by process group) and fails the test naming them; at
the end of the session every process still carrying the session's marker in its environment
(every descendant inherits it, wherever it went) is killed and fails the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

# Only against a hang: no test waits for a time; a test that needs longer says so.
HANG_GUARD_S = 900.0
# Every descendant of the session inherits this variable; its value names the session.
SESSION_VARIABLE = "HETLAB_TEST_SESSION"

_started: list[subprocess.Popen] = []


def restore_default_sigint() -> None:
    """If this process ignores SIGINT (inherited), take Python's default handler instead: a
    handled signal is reset to SIG_DFL across exec, an ignored one stays ignored in every child."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def popen(args, *, lasting: bool = False, **kwargs) -> subprocess.Popen:
    """`subprocess.Popen(args, **kwargs)` in a process group of its own, stdin /dev/null by default.
    A `lasting` process serves a session fixture: no test's reaper stops it, the fixture does
    (`stop()`), and the session's end finds it if the fixture did not."""
    assert signal.getsignal(signal.SIGINT) != signal.SIG_IGN, "restore_default_sigint() first"
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    kwargs["process_group"] = 0
    proc = subprocess.Popen(args, **kwargs)
    if not lasting:
        _started.append(proc)
    return proc


def run(args, *, input=None, capture_output=False, timeout=HANG_GUARD_S, check=False, **kwargs):
    """`subprocess.run(args, ...)` through `popen()`: on the hang guard, an exception or an
    interrupted test the whole process group is killed before the error goes on."""
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    proc = popen(args, **kwargs)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:
        stop(proc)
        raise
    if check and proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stop(proc: subprocess.Popen) -> None:
    """SIGKILL to `proc`'s whole process group, then reap the leader, wait (up to 5 s) until the
    group's other members are gone too (a killed child reparented to init still takes a moment
    to exit), and close its pipes."""
    _kill_group(proc)
    proc.wait()
    deadline = time.monotonic() + 5.0
    while _group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe:
            pipe.close()


def started() -> int:
    """A mark for `reap()`: the processes started from here on are the ones it stops."""
    return len(_started)


def reap(since: int, grace_s: float = 3.0) -> list[str]:
    """Stops the process groups started since `since` that still have a live member; returns
    what was left running ("pid command"), empty when the children had all ended. A leader told
    to stop by the test gets `grace_s` to finish before it counts as left running."""
    left = []
    mine = _started[since:]
    del _started[since:]
    deadline = time.monotonic() + grace_s
    for proc in mine:
        if proc.poll() is None:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        members = _group_members(proc.pid)
        if members:
            left += [f"{pid} {_command(pid)}" for pid in members]
            _kill_group(proc)
        if proc.poll() is None:
            proc.wait()
    return left


def session_marker(xdist_worker: bool = False) -> str:
    """This session's marker, inherited by every child. A pytest-xdist worker keeps its
    controller's; any other session (also one a test starts, which inherits a worker's
    environment) takes a new one."""
    if not (xdist_worker and os.environ.get(SESSION_VARIABLE)):
        os.environ[SESSION_VARIABLE] = f"{os.getpid()}-{time.time_ns()}"
    return os.environ[SESSION_VARIABLE]


def leftovers(marker: str, exclude: set[int] = frozenset(), variable: str = SESSION_VARIABLE) -> list[int]:
    """Live processes (not zombies) whose environment carries `variable=marker` (`ps` by
    environment: a process's environment is fixed at its exec and inherited by its children)."""
    wanted = f"{variable}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = _stat_fields(int(entry.name))[0]
        except (OSError, IndexError):
            continue  # gone, or not ours to read
        if state != "Z" and wanted in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def describe(pids) -> str:
    return "; ".join(f"{pid} {_command(pid)}" for pid in pids)


def _kill_group(proc: subprocess.Popen) -> None:
    # The group is the leader's pid: while the leader is unreaped, or while any member lives, no
    # other process can have that number, so the signal reaches only what this test started.
    if proc.returncode is None or _group_members(proc.pid):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, pgrp, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    return _live_with(1, pid)


def _group_members(pgid: int) -> list[int]:
    return _live_with(2, pgid)


def _live_with(field: int, value: int) -> list[int]:
    """Live processes (not zombies) whose /proc/PID/stat field `field` (after the command name:
    0 state, 1 ppid, 2 pgrp) is `value`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(int(entry.name))
        except (OSError, IndexError):
            continue
        if int(fields[field]) == value and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "?"


# --- the plugin --------------------------------------------------------------------------------


def pytest_configure(config):
    restore_default_sigint()
    config.stash[_MARKER] = session_marker(_is_xdist_worker(config))


_MARKER = pytest.StashKey[str]()


def _is_xdist_worker(config) -> bool:
    # pytest-xdist gives its workers `workerinput`; its PYTEST_XDIST_WORKER variable is also
    # inherited by a pytest a test starts, which is a session of its own
    return hasattr(config, "workerinput")


@pytest.fixture(autouse=True)
def _reap_processes():
    """After every test: the process groups its children left running are killed, and the test
    fails naming them (a failed or timed-out test leaves nothing behind either)."""
    mark = started()
    yield
    left = reap(mark)
    assert not left, f"the test left processes running (killed now): {'; '.join(left)}"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """No process of this session outlives it: every descendant (pytest-xdist's workers, which
    end by now, excepted) is found by the marker in its environment, killed and reported."""
    if _is_xdist_worker(session.config):
        return  # the controller looks, once every worker has ended
    deadline = time.monotonic() + 3  # for a process the last test stopped, still on its way out
    marker = session.config.stash[_MARKER]
    while (left := leftovers(marker, exclude={os.getpid()})) and time.monotonic() < deadline:
        time.sleep(0.2)
    if left:
        what = describe(left)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        session.config.get_terminal_writer().line(f"processes left running by the tests (killed now): {what}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
