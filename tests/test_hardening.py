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
    summary = json.loads(r.stdout)
    assert not summary["completed"] and len(summary["deadlock"]["waits"]) == 3
    # a workload that finishes has no such line, nor the key
    r = hetlab([*QUICK, "--json"], tmp_path)
    assert r.stderr == "" and "deadlock" not in json.loads(r.stdout)


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


# --- a second review's bad input ---------------------------------------------------------------


def _put(name: str, content: str | bytes):
    def setup(d: Path) -> None:
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())

    return setup


def _fifo(name: str):
    return lambda d: os.mkfifo(d / name)


def _rtapp(task: dict | None = None, raw: str | None = None, **global_):
    doc = {"tasks": {"t": {"loop": 1, "run": 1000, **(task or {})}}}
    if global_:
        doc["global"] = global_
    return _put("w.json", raw if raw is not None else json.dumps(doc))


def _task(task: str = "", phase: str = "instructions = 1e6"):
    return _put("w.toml", f'name = "w"\n[[tasks]]\nname = "t"\n{task}\n[[tasks.phases]]\n{phase}\n')


def _sparse(name: str, size: int):
    def setup(d: Path) -> None:
        with open(d / name, "wb") as f:
            f.truncate(size)

    return setup


def _board(change=None):
    """A fake Exynos 5422 sysfs/procfs tree under board/ (test_linux_cli's)."""

    def setup(d: Path) -> None:
        from test_linux_cli import make_board

        make_board(d / "board")
        if change:
            change(d / "board")

    return setup


def _em_board(change):
    """A board with its energy model in debugfs (test_platform_from_board's), then `change`d."""

    def setup(d: Path) -> None:
        from test_platform_from_board import make_board

        make_board(d / "board", with_em=True)
        change(d / "board" / "sys/kernel/debug/energy_model")

    return setup


def _em_file(pattern: str, text: str | bytes):
    def change(em: Path) -> None:
        p = next(em.glob(pattern))
        p.write_bytes(text if isinstance(text, bytes) else text.encode())

    return change


def _reproduced(change):
    """A folder shaped like `hetlab reproduce`'s output, then `change`d."""

    def setup(d: Path) -> None:
        out = d / "out"
        out.mkdir()
        (out / "report.md").write_text("# rcu-amp\n")
        (out / "runs.csv").write_text("benchmark,config,seed,time_s\n")
        (out / "summary.csv").write_text("benchmark,config\n")
        change(out)

    return setup


def _sweep_csv(d: Path) -> None:
    (d / "sweep.csv").write_text("a,b\n1,2\n")


def _dev_full(d: Path) -> None:
    """A /dev/full of our own (mknod: root only)."""
    if not IS_ROOT:
        pytest.skip("mknod needs root")
    os.mknod(d / "full", 0o666 | stat.S_IFCHR, os.makedev(1, 7))


def _state(text: bytes):
    def setup(d: Path) -> None:
        _board()(d)
        (d / "board/run/hetlabd.saved").write_bytes(text)
        (d / "board/run/hetlabd.lock").write_text("")  # a lock file stays, as in /run/lock

    return setup


W = ["simulate", "--workload", "w.json", "--time-limit", "1"]
T = ["simulate", "--workload", "w.toml", "--time-limit", "1"]
Q = ["simulate", "--workload", "ccbench:size=4096,iterations=20000"]
BOARD = ["--sysfs-root", "board/sys", "--procfs-root", "board/proc"]
DRY = ["govern", "--governor", "ondemand", "--dry-run", "--duration", "0.2", *BOARD]
EM = ["platform", "from-board", "--template", "exynos5433", "--sysfs-root", "board/sys", "--procfs-root", "board/proc"]
NONE = None

# (id, setup, program ("hetlab" or "hetlabd"), argv, what the error line must say)
SECOND_REVIEW = [
    # rt-app JSON: SCHED_FIFO/RR keys and their priorities
    ("rtapp-fifo-priority-0", _rtapp({"policy": "SCHED_FIFO", "priority": 0}), "hetlab", W, "1..=99"),
    ("rtapp-rr-priority-100", _rtapp({"policy": "SCHED_RR", "priority": 100}), "hetlab", W, "1..=99"),
    ("rtapp-fifo-priority-negative", _rtapp({"policy": "SCHED_FIFO", "priority": -1}), "hetlab", W, "1..=99"),
    ("rtapp-fifo-priority-text", _rtapp({"policy": "SCHED_FIFO", "priority": "high"}), "hetlab", W, "priority"),
    ("rtapp-fifo-priority-fraction", _rtapp({"policy": "SCHED_FIFO", "priority": 50.5}), "hetlab", W, "priority"),
    ("rtapp-fifo-priority-1e300", _rtapp({"policy": "SCHED_FIFO", "priority": 1e300}), "hetlab", W, "priority"),
    ("rtapp-fifo-priority-bool", _rtapp({"policy": "SCHED_FIFO", "priority": True}), "hetlab", W, "priority"),
    (
        "rtapp-priority-beyond-i64",
        _rtapp(raw='{"tasks": {"t": {"loop": 1, "run": 1000, "policy": "SCHED_RR", "priority": 9223372036854775808}}}'),
        "hetlab",
        W,
        "priority",
    ),
    ("rtapp-policy-deadline", _rtapp({"policy": "SCHED_DEADLINE"}), "hetlab", W, "SCHED_DEADLINE"),
    ("rtapp-policy-number", _rtapp({"policy": 1}), "hetlab", W, "policy"),
    ("rtapp-policy-null", _rtapp({"policy": None}), "hetlab", W, "policy"),
    ("rtapp-default-policy-unknown", _rtapp(default_policy="SCHED_BOGUS"), "hetlab", W, "SCHED_BOGUS"),
    ("rtapp-other-nice-20", _rtapp({"policy": "SCHED_OTHER", "priority": 20}), "hetlab", W, "-20..=19"),
    (
        "rtapp-phase-priority-0-under-fifo",
        _rtapp(
            raw='{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 10, '
            '"phases": {"p": {"priority": 0, "run": 1000}}}}}'
        ),
        "hetlab",
        W,
        "1..=99",
    ),
    (
        "rtapp-phase-rr-priority-200",
        _rtapp(raw='{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR", "priority": 200, "run": 1000}}}}}'),
        "hetlab",
        W,
        "1..=99",
    ),
    ("rtapp-loop-1e20", _rtapp({"loop": 1e20}), "hetlab", W, "loop"),
    ("rtapp-run-negative", _rtapp({"run": -5}), "hetlab", W, "run"),
    ("rtapp-run-1e300", _rtapp({"run": 1e300}), "hetlab", W, "run"),
    ("rtapp-sleep-1e300", _rtapp({"sleep": 1e300}), "hetlab", W, "sleep"),
    ("rtapp-instance-1e9", _rtapp({"instance": 1000000000}), "hetlab", W, "instance"),
    ("rtapp-cpus-999", _rtapp({"cpus": [999]}), "hetlab", W, "999"),
    ("rtapp-cpus-negative", _rtapp({"cpus": [-1]}), "hetlab", W, "cpus"),
    ("rtapp-util-min-2000", _rtapp({"util_min": 2000}), "hetlab", W, "util_min"),
    ("rtapp-empty-file", _put("w.json", ""), "hetlab", W, "w.json"),
    ("rtapp-top-level-array", _put("w.json", "[]"), "hetlab", W, "w.json"),
    ("rtapp-no-tasks", _put("w.json", '{"tasks": {}}'), "hetlab", W, "task"),
    (
        "rtapp-deep-nesting",
        _put("w.json", '{"tasks": {"t": ' + "[" * 100000 + "]" * 100000 + "}}"),
        "hetlab",
        W,
        "w.json",
    ),
    ("rtapp-duration-negative", _rtapp(duration=-5), "hetlab", W, "duration"),
    ("rtapp-nan-literal", _put("w.json", '{"tasks": {"t": {"run": NaN}}}'), "hetlab", W, "w.json"),
    # workload TOML: policy / rt_priority, and sizes
    ("toml-fifo-without-priority", _task('policy = "fifo"'), "hetlab", T, "priority"),
    ("toml-fifo-priority-0", _task('policy = "fifo"\nrt_priority = 0'), "hetlab", T, "1..=99"),
    ("toml-rr-priority-100", _task('policy = "rr"\nrt_priority = 100'), "hetlab", T, "1..=99"),
    ("toml-policy-deadline", _task('policy = "deadline"\nrt_priority = 5'), "hetlab", T, "deadline"),
    ("toml-priority-without-policy", _task("rt_priority = 50"), "hetlab", T, "policy"),
    ("toml-priority-i64-max", _task('policy = "rr"\nrt_priority = 9223372036854775807'), "hetlab", T, "1..=99"),
    ("toml-policy-not-a-string", _task("policy = 5\nrt_priority = 5"), "hetlab", T, "policy"),
    ("toml-priority-fraction", _task('policy = "fifo"\nrt_priority = 50.5'), "hetlab", T, "rt_priority"),
    ("toml-instructions-1e30", _task(phase="instructions = 1e30"), "hetlab", T, "instructions"),
    (
        "toml-parallel-instructions-1e30",
        _task("threads = 2", "parallel_instructions = 1e30"),
        "hetlab",
        T,
        "parallel_instructions",
    ),
    ("toml-sleep-i64-max", _task(phase="sleep_us = 9223372036854775807"), "hetlab", T, "sleep_us"),
    ("toml-run-us-1e300", _task(phase="run_us = 1e300\nperiod_us = 1000\ncount = 2"), "hetlab", T, "run_us"),
    (
        "toml-working-set-i64-max",
        _task(phase="instructions = 1e6\nworking_set_bytes = 9223372036854775807"),
        "hetlab",
        T,
        "working_set_bytes",
    ),
    (
        "toml-stride-i64-max",
        _task(phase='instructions = 1e6\npattern = "strided"\nstride_bytes = 9223372036854775807'),
        "hetlab",
        T,
        "stride_bytes",
    ),
    ("toml-repeat-beyond-u32", _task("repeat = 4294967296"), "hetlab", T, "repeat"),
    ("toml-nice-100", _task("nice = 100"), "hetlab", T, "nice"),
    ("toml-threads-0", _task("threads = 0"), "hetlab", T, "threads"),
    ("toml-cpi-nan", _task(phase="instructions = 1e6\ncpi = nan"), "hetlab", T, "cpi"),
    ("toml-write-fraction-inf", _task(phase="instructions = 1e6\nwrite_fraction = inf"), "hetlab", T, "write_fraction"),
    ("toml-util-max-5000", _task("util_max = 5000"), "hetlab", T, "util_max"),
    ("toml-affinity-99", _task("affinity = [99]"), "hetlab", T, "99"),
    # generator specs
    (
        "spec-cpu-bound-instructions-1e30",
        NONE,
        "hetlab",
        ["simulate", "--workload", "cpu-bound:instructions=1e30", "--time-limit", "1"],
        "instructions",
    ),
    (
        "spec-cpu-bound-instructions-nan",
        NONE,
        "hetlab",
        ["simulate", "--workload", "cpu-bound:instructions=nan"],
        "instructions",
    ),
    (
        "spec-ccbench-iterations-1e30",
        NONE,
        "hetlab",
        ["simulate", "--workload", "ccbench:size=4096,iterations=1e30", "--time-limit", "1"],
        "iterations",
    ),
    ("spec-periodic-run-0", NONE, "hetlab", ["simulate", "--workload", "periodic:run_us=0"], "run_us"),
    (
        "spec-periodic-duration-1e30",
        NONE,
        "hetlab",
        ["simulate", "--workload", "periodic:duration_us=1e30", "--time-limit", "1"],
        "duration_us",
    ),
    ("spec-cpu-bound-cpi-negative", NONE, "hetlab", ["simulate", "--workload", "cpu-bound:cpi=-1"], "cpi"),
    (
        "spec-cpu-bound-working-set-1e30",
        NONE,
        "hetlab",
        ["simulate", "--workload", "cpu-bound:working_set_bytes=1e30"],
        "working_set_bytes",
    ),
    # simulate's options and outputs
    ("simulate-report-empty-name", NONE, "hetlab", [*Q, "--report", ""], "--report"),
    ("simulate-trace-empty-name", NONE, "hetlab", [*Q, "--trace", ""], "--trace"),
    ("simulate-trace-and-series-one-file", NONE, "hetlab", [*Q, "--trace", "x", "--series", "x"], "x"),
    ("simulate-report-and-trace-one-file", NONE, "hetlab", [*Q, "--report", "x", "--trace", "x"], "x"),
    (
        "simulate-tunable-nan",
        NONE,
        "hetlab",
        [*Q, "--governor", "ondemand", "--tunable", "up_threshold=nan"],
        "up_threshold",
    ),
    (
        "simulate-tunable-1e308",
        NONE,
        "hetlab",
        [*Q, "--governor", "ondemand", "--tunable", "sampling_rate=1e308"],
        "sampling_rate",
    ),
    (
        "simulate-sched-tunable-negative",
        NONE,
        "hetlab",
        [*Q, "--scheduler", "hmp", "--sched-tunable", "up_threshold=-1"],
        "up_threshold",
    ),
    ("simulate-freq-fraction", NONE, "hetlab", [*Q, "--freq", "little=1.5e6"], "little"),
    ("simulate-kernel-nocbs-999", NONE, "hetlab", [*Q, "--kernel", "rcu_nocbs=999"], "rcu_nocbs"),
    ("simulate-kernel-blimit-negative", NONE, "hetlab", [*Q, "--kernel", "rcutree.blimit=-1"], "blimit"),
    ("simulate-offline-every-cluster", NONE, "hetlab", [*Q, "--offline", "little,big"], "offline"),
    ("simulate-workload-empty", NONE, "hetlab", ["simulate", "--workload", ""], "workload"),
    ("simulate-platform-dev-zero", NONE, "hetlab", [*Q, "--platform", "/dev/zero"], "/dev/zero"),
    ("simulate-workload-fifo", _fifo("w.json"), "hetlab", W, "w.json"),
    ("simulate-workload-sparse-3g", _sparse("w.toml", 3 << 30), "hetlab", T, "w.toml"),
    ("simulate-platform-directory", NONE, "hetlab", [*Q, "--platform", "."], "."),
    ("simulate-governor-empty", NONE, "hetlab", [*Q, "--governor", ""], "governor"),
    ("simulate-model-fifo", _fifo("m.json"), "hetlab", [*Q, "--governor", "anti-snoop", "--model", "m.json"], "m.json"),
    ("simulate-perf-period-0", NONE, "hetlab", [*Q, "--perf-cpus", "0", "--perf-period", "0"], "perf"),
    # a third review: empty list items were skipped (an empty list meaning "none" or "the
    # default"), a value given twice resolved silently
    ("simulate-perf-cpus-comma", NONE, "hetlab", [*Q, "--perf-cpus", ","], "--perf-cpus ',' has an empty item"),
    ("simulate-perf-cpus-double-comma", NONE, "hetlab", [*Q, "--perf-cpus", "1,,3"], "has an empty item"),
    ("simulate-offline-comma", NONE, "hetlab", [*Q, "--offline", ","], "--offline ',' has an empty item"),
    ("simulate-freq-twice", NONE, "hetlab", [*Q, "--freq", "little=1400000,little=200000"], "gives little twice"),
    (
        "simulate-tunable-twice",
        NONE,
        "hetlab",
        [*Q, "--tunable", "up_threshold=80", "--tunable", "up_threshold=90"],
        "twice",
    ),
    (
        "reproduce-sweep-patterns-comma",
        NONE,
        "hetlab",
        ["reproduce", "lctes2020", "--out", "out", "--sweep-patterns", ","],
        "--sweep-patterns ',' has an empty item",
    ),
    (
        "reproduce-sweep-sizes-comma",
        NONE,
        "hetlab",
        ["reproduce", "lctes2020", "--out", "out", "--sweep-sizes", ","],
        "--sweep-sizes ',' has an empty item",
    ),
    # characterize: --executor strings and sweep grids
    (
        "characterize-executor-dask-no-host",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--executor", "dask://"],
        "--executor",
    ),
    (
        "characterize-executor-port-99999",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--executor", "dask://localhost:99999"],
        "--executor",
    ),
    (
        "characterize-executor-unknown",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--executor", "threads"],
        "--executor",
    ),
    ("characterize-jobs-0", NONE, "hetlab", ["characterize", "--out", "s.parquet", "--jobs", "0"], "--jobs"),
    ("characterize-jobs-negative", NONE, "hetlab", ["characterize", "--out", "s.parquet", "--jobs", "-3"], "--jobs"),
    ("characterize-big-khz-0", NONE, "hetlab", ["characterize", "--out", "s.parquet", "--big-khz", "0"], "--big-khz"),
    ("characterize-out-directory", _put("d/x", ""), "hetlab", ["characterize", "--out", "d"], "d"),
    ("characterize-run-s-1e308", NONE, "hetlab", ["characterize", "--out", "s.parquet", "--run-s", "1e308"], "--run-s"),
    (
        "characterize-sizes-twice",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--sizes", "4096,4096"],
        "--sizes",
    ),
    ("characterize-reps-1", NONE, "hetlab", ["characterize", "--out", "s.parquet", "--reps", "1"], "--reps"),
    (
        "characterize-patterns-empty-item",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--patterns", "random,,sequential"],
        "--patterns",
    ),
    (
        "characterize-seed-2-to-64",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--seed", str(1 << 64)],
        "--seed",
    ),
    # train
    ("train-sweep-not-parquet", _sweep_csv, "hetlab", ["train", "sweep.csv", "--out", "m"], "sweep.csv"),
    ("train-sweep-fifo", _fifo("s.parquet"), "hetlab", ["train", "s.parquet", "--out", "m"], "s.parquet"),
    ("train-sweep-missing", NONE, "hetlab", ["train", "nope.parquet", "--out", "m"], "nope.parquet"),
    ("train-max-depth-0", NONE, "hetlab", ["train", "nope.parquet", "--out", "m", "--max-depth", "0"], "--max-depth"),
    (
        "train-max-depth-1e9",
        NONE,
        "hetlab",
        ["train", "nope.parquet", "--out", "m", "--max-depth", "1000000000"],
        "--max-depth",
    ),
    ("train-out-is-a-file", _put("m", "x"), "hetlab", ["train", "nope.parquet", "--out", "m"], "m"),
    # reproduce
    ("reproduce-unknown-experiment", NONE, "hetlab", ["reproduce", "nosuch", "--out", "out"], "nosuch"),
    ("reproduce-reps-0", NONE, "hetlab", ["reproduce", "rcu-amp", "--out", "out", "--reps", "0"], "--reps"),
    (
        "reproduce-executor-dask-no-host",
        NONE,
        "hetlab",
        ["reproduce", "rcu-amp", "--out", "out", "--executor", "dask://"],
        "--executor",
    ),
    (
        "reproduce-workload-override-1e30",
        NONE,
        "hetlab",
        ["reproduce", "lctes2020", "--out", "out", "--workload", "bbench=ccbench:size=1e30"],
        "size",
    ),
    (
        "reproduce-benchmarks-empty",
        NONE,
        "hetlab",
        ["reproduce", "rcu-amp", "--out", "out", "--benchmarks", ""],
        "--benchmarks",
    ),
    (
        "reproduce-benchmarks-unknown",
        NONE,
        "hetlab",
        ["reproduce", "rcu-amp", "--out", "out", "--benchmarks", "nosuch"],
        "nosuch",
    ),
    (
        "reproduce-html-out-unwritable",
        NONE,
        "hetlab",
        ["reproduce", "rcu-amp", "--html", "--out", "/proc/hetlab-out"],
        "/proc/hetlab-out",
    ),
    ("reproduce-jobs-0", NONE, "hetlab", ["reproduce", "rcu-amp", "--out", "out", "--jobs", "0"], "--jobs"),
    ("reproduce-seed-negative", NONE, "hetlab", ["reproduce", "rcu-amp", "--out", "out", "--seed", "-1"], "seed"),
    # no bound made 10^14 repetitions grow memory for as long as it was let run
    ("reproduce-reps-huge", NONE, "hetlab", ["reproduce", "rcu-amp", "--out", "out", "--reps", "10" * 7], "--reps"),
    # advise
    ("advise-unknown-workload", NONE, "hetlab", ["advise", "nosuch"], "nosuch"),
    (
        "advise-energy-budget-nan",
        NONE,
        "hetlab",
        ["advise", "cpu-bound", "--objective", "time-under-energy", "--energy-budget-j", "nan"],
        "--energy-budget-j",
    ),
    (
        "advise-budget-missing",
        NONE,
        "hetlab",
        ["advise", "cpu-bound", "--objective", "time-under-energy"],
        "--energy-budget-j",
    ),
    ("advise-executor-unknown", NONE, "hetlab", ["advise", "cpu-bound", "--executor", "mpi://x"], "--executor"),
    ("advise-jobs-0", NONE, "hetlab", ["advise", "cpu-bound", "--jobs", "0"], "--jobs"),
    ("advise-platform-dev-zero", NONE, "hetlab", ["advise", "cpu-bound", "--platform", "/dev/zero"], "/dev/zero"),
    # report
    ("report-empty-folder", _put("out/.keep", ""), "hetlab", ["report", "out"], "out"),
    ("report-missing-folder", NONE, "hetlab", ["report", "nope"], "nope"),
    ("report-folder-is-a-file", _put("out", "x"), "hetlab", ["report", "out"], "out"),
    (
        "report-runs-empty",
        _reproduced(lambda o: (o / "runs.csv").write_text("")),
        "hetlab",
        ["report", "out", "--out", "r.html"],
        "report.md",
    ),
    (
        "report-md-not-utf8",
        _reproduced(lambda o: (o / "report.md").write_bytes(b"\xff\xfe")),
        "hetlab",
        ["report", "out", "--out", "r.html"],
        "report.md",
    ),
    (
        "report-unknown-experiment",
        _reproduced(lambda o: (o / "report.md").write_text("# nosuch\n")),
        "hetlab",
        ["report", "out", "--out", "r.html"],
        "report.md",
    ),
    # platform export-em / from-board
    ("export-em-unknown-platform", NONE, "hetlab", ["platform", "export-em", "nosuch"], "nosuch"),
    (
        "export-em-debugfs-into-a-full-folder",
        _put("em/x", ""),
        "hetlab",
        ["platform", "export-em", "exynos5422", "--format", "debugfs", "--out", "em"],
        "em",
    ),
    ("export-em-platform-fifo", _fifo("p.toml"), "hetlab", ["platform", "export-em", "p.toml"], "p.toml"),
    (
        "export-em-debugfs-to-stdout",
        NONE,
        "hetlab",
        ["platform", "export-em", "exynos5422", "--format", "debugfs", "--out", "-"],
        "--out DIR",
    ),
    ("from-board-em-cpus-huge-range", _em_board(_em_file("*/cpus", "0-99999999999\n")), "hetlab", EM, "cpus"),
    ("from-board-em-frequency-text", _em_board(_em_file("*/ps:*/frequency", "abc\n")), "hetlab", EM, "frequency"),
    ("from-board-em-power-negative", _em_board(_em_file("*/ps:*/power", "-5\n")), "hetlab", EM, "power"),
    ("from-board-em-frequency-0", _em_board(_em_file("*/ps:*/frequency", "0\n")), "hetlab", EM, "frequency"),
    ("from-board-em-cpus-not-utf8", _em_board(_em_file("*/cpus", b"\xff\n")), "hetlab", EM, "cpus"),
    (
        "from-board-em-power-missing",
        _em_board(lambda em: next(em.glob("*/ps:*/power")).unlink()),
        "hetlab",
        EM,
        "power",
    ),
    (
        "from-board-em-power-1e30",
        _em_board(_em_file("*/ps:*/power", "1000000000000000000000000000000\n")),
        "hetlab",
        EM,
        "power",
    ),
    ("from-board-sysfs-root-missing", NONE, "hetlab", ["platform", "from-board", "--sysfs-root", "nope"], "nope"),
    # profile and show-model
    ("profile-no-command", NONE, "hetlab", ["profile"], "command"),
    ("profile-slices-0", NONE, "hetlab", ["profile", "--slices", "0", "--", "true"], "--slices"),
    ("profile-slices-1e9", NONE, "hetlab", ["profile", "--slices", "1000000000", "--", "true"], "--slices"),
    (
        "profile-slice-instructions-negative",
        NONE,
        "hetlab",
        ["profile", "--slice-instructions", "-1", "--", "true"],
        "--slice-instructions",
    ),
    (
        "profile-out-unwritable",
        NONE,
        "hetlab",
        ["profile", "--out", "/proc/hetlab.toml", "--", "true"],
        "/proc/hetlab.toml",
    ),
    ("show-model-dev-zero", NONE, "hetlab", ["show-model", "/dev/zero"], "/dev/zero"),
    ("show-model-directory", NONE, "hetlab", ["show-model", "."], "model.json"),
    ("show-model-empty-file", _put("m.json", ""), "hetlab", ["show-model", "m.json"], "m.json"),
    ("show-model-json-null", _put("m.json", "null"), "hetlab", ["show-model", "m.json"], "m.json"),
    # hetlabd
    (
        "hetlabd-govern-duration-1e400",
        NONE,
        "hetlabd",
        ["govern", "--governor", "ondemand", "--dry-run", "--duration", "1e400"],
        "--duration",
    ),
    ("hetlabd-govern-tunable-nan", _board(), "hetlabd", [*DRY, "--tunable", "sampling_rate=nan"], "sampling_rate"),
    ("hetlabd-govern-tunable-1e300", _board(), "hetlabd", [*DRY, "--tunable", "sampling_rate=1e300"], "sampling_rate"),
    ("hetlabd-govern-up-threshold-101", _board(), "hetlabd", [*DRY, "--tunable", "up_threshold=101"], "up_threshold"),
    ("hetlabd-govern-counters-pid-text", _board(), "hetlabd", [*DRY, "--counters", "pid=abc"], "pid"),
    ("hetlabd-govern-counters-tid-empty", _board(), "hetlabd", [*DRY, "--counters", "tid="], "tid"),
    (
        "hetlabd-govern-counters-cgroup-missing",
        _board(),
        "hetlabd",
        [*DRY, "--counters", "cgroup=/nonexistent/cg"],
        "cgroup",
    ),
    ("hetlabd-govern-cluster-names-count", _board(), "hetlabd", [*DRY, "--cluster-names", "little"], "--cluster-names"),
    (
        "hetlabd-govern-model-fifo",
        _fifo("m.json"),
        "hetlabd",
        ["govern", "--governor", "anti-snoop", "--dry-run", "--model", "m.json"],
        "m.json",
    ),
    ("hetlabd-chase-sizes-0", NONE, "hetlabd", ["chase", "--sizes", "0"], "--sizes"),
    ("hetlabd-chase-stride-0", NONE, "hetlabd", ["chase", "--pattern", "stride-0", "--sizes", "4K"], "stride"),
    ("hetlabd-chase-elements-0", NONE, "hetlabd", ["chase", "--elements", "0"], "--elements"),
    ("hetlabd-pingpong-cpus-9999", NONE, "hetlabd", ["pingpong", "--cpus", "9999"], "9999"),
    (
        "hetlabd-restore-state-nul-bytes",
        _state(b"policy\x00\x00\n"),
        "hetlabd",
        ["restore", "--sysfs-root", "board/sys"],
        "hetlabd.saved",
    ),
    ("hetlabd-governors-unknown-platform", NONE, "hetlabd", ["governors", "--platform", "nosuch"], "nosuch"),
    # the Python CLI's hetlabd options, checked against hetlabd's ranges
    (
        "hetlab-govern-duration-1e300",
        _board(),
        "hetlab",
        ["govern", "--governor", "ondemand", "--dry-run", "--duration", "1e300", *BOARD],
        "--duration expects a number from",
    ),
    (
        "hetlab-govern-duration-0",
        _board(),
        "hetlab",
        ["govern", "--governor", "ondemand", "--dry-run", "--duration", "0", *BOARD],
        "--duration expects a number from",
    ),
    (
        "hetlab-chase-iterations-0",
        NONE,
        "hetlab",
        ["chase", "--iterations", "0"],
        "--iterations expects a whole number from",
    ),
    ("hetlab-chase-cpu-99999", NONE, "hetlab", ["chase", "--cpu", "99999"], "--cpu expects a whole number from"),
    (
        "hetlab-characterize-period-us-0",
        _board(),
        "hetlab",
        ["characterize", "--backend", "linux", "--out", "s.parquet", "--period-us", "0", *BOARD],
        "--period-us expects a whole number from",
    ),
    (
        "hetlab-pingpong-repeats-0",
        NONE,
        "hetlab",
        ["pingpong", "--backend", "linux", "--repeats", "0"],
        "--repeats expects a whole number from",
    ),
    # added after the first run of this table
    ("simulate-workload-dev-zero", NONE, "hetlab", ["simulate", "--workload", "/dev/zero"], "not a regular file"),
    ("simulate-report-dev-full", _dev_full, "hetlab", [*Q, "--report", "full"], "No space left"),
    (
        "reproduce-html-out-is-a-file",
        _put("out", "x"),
        "hetlab",
        ["reproduce", "rcu-amp", "--html", "--out", "out"],
        "out",
    ),
    (
        "characterize-executor-port-0",
        NONE,
        "hetlab",
        ["characterize", "--out", "s.parquet", "--executor", "dask://h:0"],
        "1..65535",
    ),
    (
        "import-em-cpus-huge-range",
        _em_board(_em_file("*/cpus", "0-99999999999\n")),
        "hetlab",
        ["platform", "import-em", "board/sys/kernel/debug/energy_model"],
        "not a CPU list",
    ),
    ("simulate-option-equals-empty", NONE, "hetlab", [*Q, "--series="], "--series is given an empty value"),
]


def _limit_memory() -> None:
    """A regression that reads without end fails on its own, never takes the machine along."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


@pytest.mark.parametrize("setup, program, args, says", [pytest.param(*case[1:], id=case[0]) for case in SECOND_REVIEW])
def test_a_second_review_of_bad_input_gives_one_line_each(tmp_path, setup, program, args, says):
    """A second, independent set of bad inputs (docs/hardening.md, second review): one
    `hetlab: error:` / `hetlabd: error:` line naming the thing, a non-zero exit, nothing on
    stdout, no file left, never a traceback, a panic or a hang."""
    if setup:
        setup(tmp_path)
    before = files(tmp_path)
    if program == "hetlab":
        cmd = [sys.executable, "-m", "hetlab", *args]
    else:
        from test_linux_chase import hetlabd

        cmd = [hetlabd(), *args]
    r = processes.run(
        cmd, capture_output=True, text=True, errors="replace", cwd=tmp_path, timeout=120, preexec_fn=_limit_memory
    )
    assert r.returncode not in (0, None), r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"{program}: error: ") and len(r.stderr.splitlines()) == 1, r.stderr
    assert says in r.stderr, r.stderr
    assert r.stdout == "" and files(tmp_path) == before, "no partial output"
