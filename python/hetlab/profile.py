"""`hetlab profile`: a workload TOML from a real program, measured with valgrind's cache simulator.

Python runs valgrind and reads its counters; which caches to simulate (`_core.profile_plan`)
and the fit of the workload to what was counted (`_core.profile_workload`) are Rust
(`hetlab_core::measured`), with the model's own miss-ratio function.

Why callgrind and several runs: cachegrind (valgrind 3.19) simulates one L1I/L1D/LL
hierarchy per run and has no time slices; callgrind runs the same simulator (`--cache-sim=yes`,
the same `--I1/--D1/--LL` options and inclusive LL) and dumps its counters every N basic blocks
(`--dump-every-bb`), which gives the phases. No valgrind tool gives a whole miss-ratio curve in
one pass, so each LL size is one run (the runs go in parallel, one per CPU).
"""

from __future__ import annotations

import os
import platform as host
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from hetlab import _core, api

# callgrind's event names, in the order `_core.profile_workload` takes them
EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
DEFAULT_SLICES = 4
# basic blocks per dump: about 1e7 instructions of x86-64 code (4-6 per block), fine enough for
# a few phases of a run of 1e8 or more instructions without writing thousands of files
DEFAULT_DUMP_BBS = 2_000_000
# with --slice-instructions N: about eight dumps per slice, assuming at least 4 instructions a block
DUMPS_PER_SLICE = 8
MIN_INSTRS_PER_BB = 4


def caveats() -> str:
    """What separates this host's measurement from an ARMv7 board."""
    pointer_bits = 8 * struct.calcsize("P")
    return (
        f"caveats: the program ran as {host.machine()} code with {pointer_bits}-bit pointers, not ARMv7 with 32-bit "
        "ones (larger heap objects make data misses read high; the instruction counts differ from ARM's, and "
        "x86-64 executes fewer instructions for the same work, so per-instruction figures read high too); the "
        "simulator's LL is inclusive of L1 and uses LRU, the ARM L2s pseudo-random replacement; no prefetcher is "
        "simulated (the model applies its own only to sequential components, and these are random); threads share "
        "one simulated cache in valgrind's serialised order; processes a program starts are concatenated in pid order."
    )


class ProfileError(api.HetlabError):
    """A profile cannot be made: the message names the thing and the fix."""


def valgrind_path() -> str:
    path = shutil.which("valgrind")
    if path is None:
        raise ProfileError("valgrind is not installed (not on PATH); install it (Debian: apt-get install valgrind)")
    return path


def valgrind_version(valgrind: str) -> str:
    out = subprocess.run([valgrind, "--version"], capture_output=True, text=True, check=False)
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("valgrind-"):
        raise ProfileError(f"'{valgrind} --version' did not answer as valgrind does; reinstall valgrind")
    return version


def _check_command(command: Sequence[str]) -> None:
    if not command:
        raise ProfileError("give the command to profile after '--', e.g. hetlab profile -- gcc -O2 -c file.c")
    exe = command[0]
    if os.sep in exe:
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise ProfileError(f"command '{exe}' is not an executable file; give a program to run")
    elif shutil.which(exe) is None:
        raise ProfileError(f"command '{exe}' not found on PATH; give a program to run")


def _geometry(cache: Sequence[int]) -> str:
    return ",".join(str(int(x)) for x in cache)


def _kib(size: int) -> str:
    return f"{size >> 20} MB" if size >= 1 << 20 and size % (1 << 20) == 0 else f"{size >> 10} KB"


def read_parts(out_dir: Path) -> list[list[float]]:
    """The counters of every dump callgrind wrote in `out_dir` (files cg.PID[.PART]), in program
    order: by process id, then part number. Only each file's header is read."""
    parts = []
    for f in out_dir.iterdir():
        if not f.name.startswith("cg."):
            continue
        pid = part = None
        events: list[str] | None = None
        summary: list[float] | None = None
        with f.open(encoding="utf-8", errors="replace") as text:
            for line in text:
                key, _, value = line.partition(":")
                if key == "pid":
                    pid = int(value)
                elif key == "part":
                    part = int(value)
                elif key == "events":
                    events = value.split()
                elif key == "summary":
                    summary = [float(x) for x in value.split()]
                    break
        if pid is None or events is None or summary is None:
            raise ProfileError(f"callgrind output '{f.name}' has no pid/events/summary header; is valgrind complete?")
        missing = [e for e in EVENTS if e not in events]
        if missing:
            raise ProfileError(f"callgrind output '{f.name}' lacks events {missing}; was --cache-sim=yes honoured?")
        counts = dict(zip(events, summary, strict=False))
        parts.append(((pid, part or 0), [counts.get(e, 0.0) for e in EVENTS]))
    parts.sort(key=lambda p: p[0])
    return [c for _, c in parts]


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def profile(
    command: Sequence[str],
    *,
    platform: str = _core.DEFAULT_PLATFORM,
    slices: int | None = None,
    slice_instructions: float | None = None,
    name: str | None = None,
    description: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> str:
    """Runs `command` under callgrind once per cache size of `platform`'s plan and returns the
    fitted workload TOML. Ctrl-C (KeyboardInterrupt) kills the runs and re-raises."""
    if slices is not None and slice_instructions is not None:
        raise ProfileError("give --slices or --slice-instructions, not both")
    if slices is None and slice_instructions is None:
        slices = DEFAULT_SLICES
    if slices is not None and not 1 <= slices <= 1000:
        raise ProfileError(f"--slices must be within 1..1000, got {slices}")
    if slice_instructions is not None and not (1e4 <= slice_instructions <= 1e15):
        raise ProfileError(f"--slice-instructions must be within 1e4..1e15, got {slice_instructions:g}")
    valgrind = valgrind_path()
    version = valgrind_version(valgrind)
    _check_command(command)
    try:
        handle = api.load_platform(platform)
        plan = _core.profile_plan(handle)
    except ValueError as e:
        raise ProfileError(str(e)) from None
    if slice_instructions is None:
        dump_bbs = DEFAULT_DUMP_BBS
    else:
        dump_bbs = max(1000, min(DEFAULT_DUMP_BBS, int(slice_instructions / DUMPS_PER_SLICE / MIN_INSTRS_PER_BB)))
    say = progress or (lambda _msg: None)
    runs = _run_all(valgrind, command, plan, dump_bbs, say)
    name = name or "measured-" + re.sub(r"[^A-Za-z0-9_.-]", "-", Path(command[0]).name)
    geometry = "; ".join(
        f"LL {_kib(ll[0])} {ll[1]}-way {ll[2]} B with L1I {_kib(i1[0])} {i1[1]}-way {i1[2]} B, "
        f"L1D {_kib(d1[0])} {d1[1]}-way {d1[2]} B"
        for i1, d1, ll in plan
    )
    provenance = [
        f"command: {shlex.join(command)}",
        f"tool: {version} callgrind --cache-sim=yes --dump-every-bb={dump_bbs} (cachegrind's cache simulator, "
        "sliced), one run per LL size",
        f"platform: {platform}; runs: {geometry}",
        f"host: {host.machine()} Linux {host.release()}; measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        caveats(),
    ]
    desc = description or f"measured with hetlab profile: {shlex.join(command)}"
    try:
        return _core.profile_workload(
            platform=handle,
            name=name,
            description=desc,
            provenance=provenance,
            runs=runs,
            slices=slices,
            slice_instructions=slice_instructions,
        )
    except ValueError as e:
        raise ProfileError(str(e)) from None


@contextmanager
def _ctrl_c_after_it_starts():
    """Holds a Ctrl-C that arrives while a run is being started until the run is in `running`:
    raised inside `Popen`, after the fork, it would leave that run out of the kill. (Only the
    main thread receives signals; elsewhere nothing is held.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[object] = []
    previous = signal.signal(signal.SIGINT, lambda *received: held.append(received))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(*held[0])  # Python's default handler raises KeyboardInterrupt here


def _run_all(valgrind, command, plan, dump_bbs, say) -> list[tuple[int, list[list[float]]]]:
    """Every run of the plan, at most one per CPU at a time; each in its own process group."""
    work = tempfile.mkdtemp(prefix="hetlab-profile-")
    pending = list(enumerate(plan))
    running: dict[int, tuple[subprocess.Popen, Path, float]] = {}
    results: dict[int, tuple[int, list[list[float]]]] = {}
    width = max(1, os.cpu_count() or 1)
    try:
        while pending or running:
            while pending and len(running) < width:
                k, (i1, d1, ll) = pending.pop(0)
                out = Path(work) / f"run{k}"
                out.mkdir()
                argv = [
                    valgrind,
                    "--tool=callgrind",
                    "--cache-sim=yes",
                    f"--I1={_geometry(i1)}",
                    f"--D1={_geometry(d1)}",
                    f"--LL={_geometry(ll)}",
                    f"--dump-every-bb={dump_bbs}",
                    "--dump-line=no",
                    "--trace-children=yes",
                    f"--callgrind-out-file={out}/cg.%p",
                    f"--log-file={out}/valgrind.%p.log",
                    "--",
                    *command,
                ]
                with _ctrl_c_after_it_starts(), open(out / "stdout", "wb") as so, open(out / "stderr", "wb") as se:
                    proc = subprocess.Popen(
                        argv, stdin=subprocess.DEVNULL, stdout=so, stderr=se, start_new_session=True
                    )
                    running[k] = (proc, out, time.monotonic())
                say(f"hetlab: profile: run {k + 1}/{len(plan)} (LL {_kib(ll[0])}) started")
            time.sleep(0.05)
            for k, (proc, out, started) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[k]
                if _group_outlives(proc.pid):
                    # a background process of the program, still under valgrind: its counters
                    # are incomplete and it would run on after hetlab
                    _kill_group(proc.pid)
                    raise ProfileError(
                        f"'{shlex.join(command)}' left a background process running when it exited (valgrind "
                        "traces children); profile a command that waits for its children, e.g. add `wait`"
                    )
                if proc.returncode != 0:
                    why = _last_line(out / "stderr")  # the program's own last word, if any
                    raise ProfileError(
                        f"'{shlex.join(command)}' failed under valgrind with exit status {proc.returncode}"
                        + (f" ({why})" if why else "")
                        + "; check that the command runs on its own"
                    )
                results[k] = (plan[k][2][0], read_parts(out))
                shutil.rmtree(out, ignore_errors=True)
                say(
                    f"hetlab: profile: run {k + 1}/{len(plan)} (LL {_kib(plan[k][2][0])}) done in "
                    f"{time.monotonic() - started:.0f} s"
                )
    finally:
        for proc, _, _ in running.values():
            _kill_group(proc.pid)  # valgrind and the program it started
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    return [results[k] for k in range(len(plan))]


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _group_outlives(pgid: int, grace_s: float = 0.5) -> bool:
    """Whether a process of the run's group (its own session) is still there `grace_s` after the
    leader exited: a child the program left in the background (one that exits with its parent is
    reaped within the grace)."""
    deadline = time.monotonic() + grace_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
