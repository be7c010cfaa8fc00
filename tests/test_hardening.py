"""Issue 14's failure classes as a regression corpus: bad input, output paths (devices, FIFOs,
links, missing or unwritable directories, a full disk, a closed pipe), untrusted model files,
and Ctrl-C / SIGTERM. Every bad-input case asserts one `hetlab: error:` line on stderr, a
non-zero exit, no traceback and no file left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import processes
from hetlab import _core, api

QUICK = ["simulate", "--workload", "ccbench:size=4096,iterations=20000"]
IS_ROOT = os.geteuid() == 0


def hetlab(args, cwd, **kw):
    return processes.run(
        [sys.executable, "-m", "hetlab", *args], capture_output=True, text=True, cwd=cwd, timeout=120, **kw
    )


def files(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def one_error(args, cwd: Path, before: set[str] | None = None) -> str:
    """Runs hetlab; asserts a single `hetlab: error:` line, exit != 0, no traceback, no new file."""
    before = files(cwd) if before is None else before
    r = hetlab(args, cwd)
    assert r.returncode not in (0, None), r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("hetlab: error: ") and len(r.stderr.splitlines()) == 1, r.stderr
    assert files(cwd) == before, "no partial output"
    return r.stderr


# --- input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, says",
    [
        (["--freq", "little=99999999999999"], "kHz"),
        (["--freq", "little=0"], "kHz"),
        (["--seed", "-1"], "seed"),
        (["--seed", str(1 << 64)], "seed"),
        (["--seed", str((1 << 64) - 1), "--reps", "2"], "seed"),
        (["--time-limit", "-1"], "time limit"),
        (["--time-limit", "0"], "time limit"),
        (["--time-limit", "nan"], "time limit"),
        (["--time-limit", "inf"], "time limit"),
        (["--time-limit", "1e308"], "time limit"),
        (["--reps", "0"], "--reps"),
        (["--reps", "1000000000"], "--reps"),
        (["--perf-period", "-5"], "perf_period"),
        (["--cluster", "prime"], "unknown cluster"),
    ],
)
def test_out_of_range_numbers_are_refused_in_one_line(tmp_path, args, says):
    assert says in one_error([*QUICK, *args], tmp_path)


@pytest.mark.parametrize(
    "spec, says",
    [
        ("ccbench:size=1e30", "size"),
        ("ccbench:size=nan", "size"),
        ("ccbench:size=inf", "size"),
        ("ccbench:size=2", "size"),
        ("ccbench:size=4096,pattern=stride-99999999999999999999", "pattern"),
        # a stride beyond the array is ccbench's own behaviour (N rounds up to 2 x stride), one
        # beyond the largest array is not
        ("ccbench:size=4096,pattern=stride-17179869185", "pattern"),
        ("ccbench:size=17179869185,pattern=stride-4", "size"),
        ("ccbench:size=1e19", "size"),
        ("cpu-bound:threads=1000000", "threads"),
        ("periodic:threads=1e10", "threads"),
    ],
)
def test_ccbench_sizes_and_strides_that_overflow_are_refused(tmp_path, spec, says):
    assert says in one_error(["simulate", "--workload", spec], tmp_path)


def test_files_that_are_not_utf8_are_refused_naming_the_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "\xff\xfe"\n')
    before = files(tmp_path)
    assert "bad.toml" in one_error(["simulate", "--platform", str(bad)], tmp_path, before)
    assert "bad.toml" in one_error(["simulate", "--workload", str(bad)], tmp_path, before)
    bad_model = tmp_path / "model.json"
    bad_model.write_bytes(b"\xff\xff{}")
    before = files(tmp_path)
    assert "UTF-8" in one_error(["show-model", str(bad_model)], tmp_path, before)
    assert "model" in one_error([*QUICK, "--model", str(bad_model)], tmp_path, before)


def _model(nodes, shift=24):
    tree = {"features": ["cci_congestion", "memory_access"], "classes": ["keep", "increase_frequency"]}
    return {"name": "m", "trees": [["big", {**tree, "nodes": nodes, "fixed_point_shift": shift}]]}


def _split(left, right):
    return {"feature": 0, "threshold": 0.5, "left": left, "right": right, "value": [1, 1], "entropy": 1.0, "samples": 2}


LEAF = {"feature": None, "left": None, "right": None, "value": [1, 1], "entropy": 1.0, "samples": 2}


@pytest.mark.parametrize(
    "model, says",
    [
        (_model([_split(0, 1), LEAF]), "invalid children"),  # a cycle
        (_model([_split(1, 2), _split(0, 2), LEAF]), "invalid children"),
        (_model([_split(i + 1, i + 2) for i in range(0, 400, 2)] + [LEAF] * 2), "invalid children"),
        (_model([n for k in range(100) for n in (_split(2 * k + 1, 2 * k + 2), LEAF)] + [LEAF]), "deeper than"),
        (_model([_split(1, 2), LEAF, LEAF], shift=64), "fixed_point_shift"),
        (_model([{**_split(1, 2), "threshold": None}, LEAF, LEAF]), "model"),
    ],
)
def test_untrusted_model_files_are_checked_before_use(tmp_path, model, says):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    before = files(tmp_path)
    assert says in one_error(["show-model", str(path)], tmp_path, before)
    assert says in one_error([*QUICK, "--model", str(path)], tmp_path, before)


def test_show_model_checks_the_fields_it_prints(tmp_path):
    bare = {k: v for k, v in LEAF.items() if k != "samples"}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(_model([_split(1, 2), bare, bare])))
    assert "'samples'" in one_error(["show-model", str(path)], tmp_path)


def test_a_deeply_nested_json_model_is_one_line(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    assert "model" in one_error(["show-model", str(path)], tmp_path)


def test_a_loop_that_never_advances_simulated_time_is_stopped_in_one_line(tmp_path):
    (tmp_path / "w.toml").write_text(
        'name = "stall"\ndescription = "zero-length sleeps"\n\n[[tasks]]\nname = "nap"\nrepeat = 4000000000\n\n'
        "[[tasks.phases]]\nsleep_us = 0\n"
    )
    before = files(tmp_path)
    assert "no progress in simulated time" in one_error(["simulate", "--workload", "w.toml"], tmp_path, before)


@pytest.mark.parametrize(
    "args, says",
    [
        ([*QUICK, "--seed", "nan"], "--seed expects a whole number, got 'nan'"),
        ([*QUICK, "--time-limit", "soon"], "--time-limit expects a number, got 'soon'"),
        ([*QUICK, "--cpuidle", "deep"], "--cpuidle: invalid choice"),
        (["advise", "cpu-bound", "--jobs", "two"], "--jobs expects a whole number"),
        (["reproduce", "rcu-amp", "--reps", "x"], "--reps expects a whole number"),
        (["platform", "from-board", "--bogus"], "unrecognized arguments"),
        (["nosuch"], "invalid choice"),
    ],
)
def test_argument_errors_are_one_line_naming_the_option(tmp_path, args, says):
    assert says in one_error(args, tmp_path)


@pytest.mark.parametrize(
    "args, says",
    [
        (["--sweep-sizes", "0,-5"], "--sweep-sizes must not be negative, got -5"),
        (["--sweep-sizes", "0"], "--sweep-sizes: array sizes are counts"),
        (["--sweep-run-s", "nan"], "--sweep-run-s must be a positive number"),
        (["--sweep-reps", "1"], "--sweep-reps must be at least 2"),
        (["--sweep-patterns", "zigzag"], "--sweep-patterns: unknown pattern"),
    ],
)
def test_reproduce_checks_the_sweep_options_by_their_names_before_making_out(tmp_path, args, says):
    error = one_error(["reproduce", "lctes2020", "--out", "out", *args], tmp_path)
    assert says in error, error


def test_characterize_refuses_negative_sizes_in_one_line(tmp_path):
    args = ["characterize", "--out", "s.parquet", "--sizes", "4096,-5"]
    assert "--sizes expects a whole number from 1 to 4294967296, got '-5'" in one_error(args, tmp_path)


def test_a_perf_cpu_the_platform_lacks_is_named_with_the_platform_range(tmp_path):
    error = one_error([*QUICK, "--perf-cpus", "99"], tmp_path)
    assert "cpu99 does not exist" in error and "cpu0-7" in error, error
    assert "--perf-cpus" in one_error([*QUICK, "--perf-cpus", "-1"], tmp_path)


@pytest.mark.parametrize(
    "content, says",
    [
        (b'{"tasks": {"t": {"run": 1e400}}}', "1e400 is out of range"),
        (b'\xef\xbb\xbf{"tasks": {"t": {"run": 1000}}}', "byte-order mark"),
    ],
)
def test_rtapp_numbers_beyond_a_double_and_a_bom_are_named(tmp_path, content, says):
    (tmp_path / "w.json").write_bytes(content)
    assert says in one_error(["simulate", "--workload", "w.json"], tmp_path)


PARALLEL = (
    'name = "p"\n[[tasks]]\nname = "t"\nthreads = 2\n{repeat}[[tasks.phases]]\nparallel_instructions = 1e6\n'
    'allocation = "dynamic"\nchunk_instructions = {chunk}\n'
)


@pytest.mark.parametrize(
    "repeat, chunk, says",
    [
        ("", "1e12", "chunk_instructions must be in (0, 1000000]"),
        ("repeat = 0\n", "1e5", "repeat must be in 1..="),
    ],
)
def test_workload_phases_that_would_do_nothing_are_refused(tmp_path, repeat, chunk, says):
    (tmp_path / "w.toml").write_text(PARALLEL.format(repeat=repeat, chunk=chunk))
    assert says in one_error(["simulate", "--workload", "w.toml"], tmp_path)


DEADLOCK = {
    "tasks": {
        "a": {"loop": 1, "wait": {"ref": "never", "mutex": "w"}},
        "b": {"loop": 1, "lock": "m1", "run": 1000, "lock2": "m2"},
        "c": {"loop": 1, "lock": "m2", "run": 1000, "lock2": "m1"},
    }
}


def test_a_deadlocked_workload_ends_with_a_warning_naming_who_waits_on_what(tmp_path):
    (tmp_path / "dl.json").write_text(json.dumps(DEADLOCK))
    r = hetlab(["simulate", "--workload", "dl.json", "--json"], tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("hetlab: warning: deadlock at "), r.stderr
    for waits in ("a-0 waits on condition 'never'", "b-1 waits on mutex 'm2'", "c-2 waits on mutex 'm1'"):
        assert waits in r.stderr
    assert "condition 'never', which no task wakes" in r.stderr and "mutex 'm2', held by c-2" in r.stderr
    summary = json.loads(r.stdout)
    assert not summary["completed"] and len(summary["deadlock"]["waits"]) == 3
    # a workload that finishes has no such line, nor the key
    r = hetlab([*QUICK, "--json"], tmp_path)
    assert r.stderr == "" and "deadlock" not in json.loads(r.stdout)


SOURCE_RUNS_OUT = """name = "frames"
[[tasks]]
name = "vsync"
repeat = 2
[[tasks.phases]]
sleep_us = 1000
[[tasks.phases]]
resume = "tick"
[[tasks]]
name = "ui"
repeat = 3
[[tasks.phases]]
suspend = "tick"
[[tasks.phases]]
instructions = 1e5
"""


def test_a_wait_on_a_source_that_ran_out_is_told_from_threads_waiting_on_each_other(tmp_path):
    # two vsyncs for three frames: the third waits forever, and the warning says why
    (tmp_path / "w.toml").write_text(SOURCE_RUNS_OUT)
    r = hetlab(["simulate", "--workload", "w.toml", "--json"], tmp_path)
    assert r.returncode == 0 and r.stderr.startswith("hetlab: warning: deadlock at "), r.stderr
    assert "ui-1 waits on condition 'tick', which only task vsync wakes, and it has finished" in r.stderr, r.stderr
    assert "repeat counts" in r.stderr


# --- output paths ----------------------------------------------------------------------------


def test_trace_and_series_dash_write_to_stdout_and_the_report_to_stderr(tmp_path):
    r = hetlab([*QUICK, "--trace", "-"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "sched_switch" in r.stdout or "cpu_frequency" in r.stdout
    assert r.stderr.startswith("platform ")
    r = hetlab([*QUICK, "--series", "-"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("time_s,")
    assert files(tmp_path) == set()
    assert "standard output" in one_error([*QUICK, "--trace", "-", "--series", "-"], tmp_path)


@pytest.mark.parametrize("where", ["missing/out.trace", "dir", "/proc/hetlab-cannot-write.trace"])
def test_unwritable_outputs_fail_before_the_run_in_one_line(tmp_path, where):
    (tmp_path / "dir").mkdir()
    assert "cannot write" in one_error([*QUICK, "--trace", where], tmp_path)
    assert "cannot write" in one_error([*QUICK, "--series", where], tmp_path)


@pytest.mark.skipif(not IS_ROOT, reason="mknod needs root")
def test_a_device_node_is_written_in_place_never_replaced(tmp_path):
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    r = hetlab([*QUICK, "--series", str(null)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode), "still the device node"
    assert files(tmp_path) == {"null"}


@pytest.mark.skipif(not IS_ROOT, reason="mknod needs root")
def test_a_full_device_and_stdout_on_it_give_one_line(tmp_path):
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    assert "No space left" in one_error([*QUICK, "--series", str(full)], tmp_path)
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    with open(full, "w") as out:
        r = processes.run([sys.executable, "-m", "hetlab", "platforms"], stdout=out, stderr=subprocess.PIPE, text=True)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("hetlab: error: cannot write standard output") and len(r.stderr.splitlines()) == 1


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "series.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    r = hetlab([*QUICK, "--series", str(fifo)], tmp_path)
    reader.join(30)
    assert r.returncode == 0, r.stderr
    assert got and got[0].startswith("time_s,")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_is_refused_as_root_and_followed_otherwise(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "out.csv"
    link.symlink_to(victim)
    if IS_ROOT:
        assert "symbolic link" in one_error([*QUICK, "--series", str(link)], tmp_path)
        assert victim.read_text() == "precious\n"
    else:
        assert hetlab([*QUICK, "--series", str(link)], tmp_path).returncode == 0
        assert link.is_symlink() and victim.read_text().startswith("time_s,")


PANIC_IN_THE_ENGINE = """
import sys
import hetlab._core
def simulate(*args, **kwargs):  # a real panic in the extension's Rust code
    hetlab._core._panic_for_tests("index out of bounds")
hetlab._core.simulate = simulate
from hetlab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_panic_in_the_engine_is_one_error_line_not_a_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    r = processes.run(
        [sys.executable, "-c", PANIC_IN_THE_ENGINE, *QUICK], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert r.returncode == 70, r.stderr
    # the message and where it happened, and none of Rust's own "thread ... panicked" lines
    assert r.stderr.startswith("hetlab: error: internal error in the engine (index out of bounds at "), r.stderr
    assert "src/lib.rs:" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr and "panicked" not in r.stderr
    assert files(tmp_path) == set(), "no output"


def test_outputs_get_mode_0644_even_with_umask_000(tmp_path):
    r = processes.run(
        [sys.executable, "-c", "import os, sys; os.umask(0); from hetlab.cli import main; sys.exit(main(sys.argv[1:]))"]
        + [*QUICK, "--series", "s.csv"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "s.csv").st_mode) == 0o644
    assert files(tmp_path) == {"s.csv"}, "no temporary file left"


def test_a_closed_pipe_stops_quietly(tmp_path):
    proc = processes.popen(
        [sys.executable, "-m", "hetlab", *QUICK, "--trace", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    proc.wait(60)
    assert "Traceback" not in err and "error" not in err.replace("platform", ""), err
    assert proc.returncode in (0, 141)


# --- characterize ----------------------------------------------------------------------------


def test_a_planted_partial_path_is_refused_and_a_failed_plan_never_blocks_the_next(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "s.parquet.partial").symlink_to(victim)
    args = ["characterize", "--out", "s.parquet", "--sizes", "4096", "--patterns", "random", "--reps", "2"]
    assert "not a directory" in one_error([*args, "--active-opp", "top", "--run-s", "0.01"], tmp_path)
    (tmp_path / "s.parquet.partial").unlink()
    # a leftover with another plan but no finished chunk is taken over
    left = tmp_path / "s.parquet.partial"
    left.mkdir()
    (left / "plan.json").write_text('{"seed": 99}')
    r = hetlab([*args, "--active-opp", "top", "--run-s", "0.01"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert files(tmp_path) == {"s.parquet", "victim"}


def test_the_sweep_never_records_a_run_cut_by_the_time_limit(tmp_path):
    from hetlab.characterize import characterize

    # a run of 1e5 s at the top OPPs cannot finish inside the 3600 s simulated-time limit
    with pytest.raises(ValueError, match="time limit.*not training data"):
        characterize(
            str(tmp_path / "s.parquet"), reps=2, sizes=(4096,), patterns=("random",), active_opp="top", run_s=1e5
        )
    assert list(tmp_path.iterdir()) == [], "nothing written, no leftover blocks the next run"


# --- signals ---------------------------------------------------------------------------------

LONG = [
    "simulate",
    "--workload",
    "periodic:run_us=10,period_us=20,duration_us=3600000000,threads=8",
    "--time-limit",
    "3600",
]


# The progress line `hetlab simulate` shows on a terminal, with the simulated time reached.
PROGRESS = re.compile(rb"hetlab: simulated ([\d.]+) s of at most 3600 s")
# Only against a hang: the tests wait for events, never for a time.
HANG_GUARD_S = 300


def _read_pty(master: int, until=None) -> bytes:
    """What the child writes to the terminal `master`: until `until(seen)` holds, or to its end
    (the child closed it); the hang guard only bounds the wait."""
    import select

    seen, deadline = b"", time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline and not (until and until(seen)):
        if not select.select([master], [], [], 1.0)[0]:
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: every writer has closed it
            return seen
        if not chunk:
            return seen
        seen += chunk
    assert until is None or until(seen), f"no progress line within the hang guard: {seen!r}"
    return seen


@pytest.mark.parametrize("sig, code, says", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_an_hour_long_run_far_short_of_the_hour(tmp_path, sig, code, says):
    """Ctrl-C (or SIGTERM) on a run of an hour of simulated time stops it: the signal is sent
    once the run reports progress, and the simulated time it had reached when it stopped (its
    last progress line: the CLI leaves at once, the run with it) is far below the hour, with
    nothing written. Events, not clocks: the progress line says the run is under way, the run's
    own figure says how far it went; the wall clock only guards against a hang."""
    import pty

    master, slave = pty.openpty()
    proc = processes.popen(
        [sys.executable, "-m", "hetlab", *LONG, "--series", "s.csv", "--trace", "t.trace"],
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=tmp_path,
    )
    os.close(slave)
    try:
        seen = _read_pty(master, until=PROGRESS.search)
        proc.send_signal(sig)
        seen += _read_pty(master)
        out, _ = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert proc.returncode == code, seen
    assert seen.replace(b"\r\n", b"\n").endswith(f"hetlab: {says}\n".encode()), seen
    reached = [float(x) for x in PROGRESS.findall(seen)]
    # The first line comes after a wall second, at a tenth of a simulated second here: a run that
    # went on after the signal would meet the hang guard long before a tenth of the hour.
    assert reached and reached[-1] < 360, reached
    assert out == b"" and files(tmp_path) == set(), "no partial output"


API_LONG_RUN = """
import hetlab, sys
print("started", flush=True)
try:
    hetlab.simulate(workload="periodic:run_us=10,period_us=20,duration_us=3600000000,threads=8", time_limit_s=3600)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(7)
"""


def test_ctrl_c_stops_a_direct_api_call_with_keyboard_interrupt():
    """`hetlab.simulate()` called from Python (a notebook, a script) stops on Ctrl-C with a
    KeyboardInterrupt the caller can catch, instead of running its hour to the end."""
    proc = processes.popen(
        [sys.executable, "-c", API_LONG_RUN], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline() == "started\n"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _cpu_ticks(proc.pid) < 50:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)  # the run itself would take hours
    assert proc.returncode == 7 and out == "KeyboardInterrupt\n", err


class _Enough(Exception):
    pass


def test_a_long_run_reports_the_simulated_time_it_reached_and_its_callback_can_stop_it():
    reached = []

    def on_progress(simulated_s):
        reached.append(simulated_s)
        if len(reached) == 4:
            raise _Enough

    with pytest.raises(_Enough):
        api.simulate(
            workload="periodic:run_us=10,period_us=20,duration_us=3600000000,threads=8",
            time_limit_s=3600,
            on_progress=on_progress,
        )
    assert len(reached) == 4 and 0 < reached[-1] and reached == sorted(reached) and reached[-1] < 3600, reached


def test_simulate_on_a_terminal_shows_the_simulated_time_reached(tmp_path):
    """The progress line, redrawn in place, with the simulated time reached. Events, not clocks:
    on a busy machine the first wall seconds may show 0.0 s, so the test reads lines until one
    shows the run under way (the hang guard only bounds the wait)."""
    import pty

    line = re.compile(rb"\rhetlab: simulated ([\d.]+) s of at most 3600 s, [\d.]+ simulated s per wall s")

    def reached(seen: bytes) -> list[float]:
        return [float(x) for x in line.findall(seen)]

    master, slave = pty.openpty()
    proc = processes.popen([sys.executable, "-m", "hetlab", *LONG], stdout=subprocess.PIPE, stderr=slave, cwd=tmp_path)
    os.close(slave)
    try:
        seen = _read_pty(master, until=lambda s: len(r := reached(s)) >= 2 and r[-1] > 0)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=HANG_GUARD_S)
        os.close(master)
    assert reached(seen) == sorted(reached(seen)), seen


def test_an_unwritable_report_fails_before_an_hour_long_run(tmp_path):
    # checked after the run, this would time out: the hour is simulated first
    assert "--report file" in one_error([*LONG, "--report", "/proc/hetlab-report.html"], tmp_path)
    assert "--report file" in one_error([*LONG, "--report", "."], tmp_path)


def test_a_report_run_prints_nothing_on_stderr(tmp_path):
    r = hetlab([*QUICK, "--report", "r.html"], tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert files(tmp_path) == {"r.html"}


@pytest.mark.parametrize("where", ["dir", "missing/plot.png", "/proc/hetlab-plot.png"])
def test_advise_refuses_an_unwritable_plot_first_and_leaves_no_temporary(tmp_path, where):
    (tmp_path / "dir").mkdir()
    assert "cannot write --plot file" in one_error(["advise", "cpu-bound", "--plot", where], tmp_path)


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def test_max_limits_come_from_the_engine():
    assert _core.MAX_TIME_LIMIT_S > 3600 and 0 < _core.MAX_FIXED_POINT_SHIFT < 64
    # a phase's size limits: stated in --help from the constants themselves
    assert _core.MAX_INSTRUCTIONS == 2**53 and _core.MAX_PHASE_US > _core.MAX_TIME_LIMIT_S * 1e6
    text = hetlab(["simulate", "--help"], Path.cwd()).stdout
    for stated in ("2^53 instructions per phase", f"{int(_core.MAX_PHASE_US):,} µs", "at most 1 TiB", "65,536 threads"):
        assert stated in " ".join(text.split()), stated


@pytest.mark.parametrize(
    "phase, says",
    [
        ("instructions = 1e30", "instructions must be above 0 and at most 9.007199254740992e15, got 1e30"),
        ("instructions = 9007199254740993", None),  # rounds to 2^53 as a double: at the limit
        ("parallel_instructions = 1e16", "parallel_instructions must be above 0 and at most"),
        ("sleep_us = 9223372036854775807", "sleep_us must be within 0..=1e12, got 9.223372036854776e18"),
        ("run_us = 1e13\nperiod_us = 1000\ncount = 2", "run_us must be above 0 and at most 1e12, got 1e13"),
        ("run_us = 10\nperiod_us = 1000000000000000", "period_us must be within 0..=1e12"),
        ("instructions = 1e6\nworking_set_bytes = 2199023255552", "working_set_bytes must be above 0 and at most"),
    ],
)
def test_phase_sizes_have_stated_limits(tmp_path, phase, says):
    """A phase's instruction count, durations and working set have a stated limit (--help): a
    count no run could finish is refused in one line, not run into the time limit."""
    threads = "threads = 2\n" if "parallel" in phase else ""
    (tmp_path / "w.toml").write_text(f'name = "w"\n[[tasks]]\nname = "t"\n{threads}[[tasks.phases]]\n{phase}\n')
    if says is None:
        assert hetlab(["simulate", "--workload", "w.toml", "--time-limit", "0.01"], tmp_path).returncode == 0
    else:
        assert says in one_error(["simulate", "--workload", "w.toml", "--time-limit", "0.01"], tmp_path)
    for spec, key in (("cpu-bound:instructions=1e30", "instructions"), ("ccbench:iterations=1e30", "iterations")):
        assert f"{key} must be above 0 and at most" in one_error(["simulate", "--workload", spec], tmp_path)
