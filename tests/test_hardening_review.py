"""A second, independent review of bad input (docs/hardening.md, second review): each case one
`hetlab: error:` / `hetlabd: error:` line naming the thing, a non-zero exit, nothing on stdout,
no file left, never a traceback, a panic or a hang. The first review's classes are in
test_hardening.py."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import processes
from test_hardening import IS_ROOT, files

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
