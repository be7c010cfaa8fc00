"""`hetlab profile`: a real program under valgrind's cache simulator, fitted to a workload the
model runs. valgrind must be installed (CI machines have it); nothing here is skipped."""

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest

import processes
from helpers import hetlab_cli
from hetlab import _core

# A 1 MiB array walked line by line (64 B steps), 300 laps: with LRU (the simulator) every load
# misses a 512 KB cache and none misses a 2 MB one after the first lap.
WALK_C = r"""
#include <stdlib.h>
int main(void) {
    enum { BYTES = 1 << 20, STRIDE = 64, LAPS = 300 };
    volatile char *a = malloc(BYTES);
    unsigned sum = 0;
    for (int i = 0; i < BYTES; i += STRIDE) a[i] = (char)i;
    for (int lap = 0; lap < LAPS; lap++)
        for (int i = 0; i < BYTES; i += STRIDE) sum += a[i];
    return sum == 12345u;
}
"""


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> Path:
    assert shutil.which("valgrind"), "valgrind is required by hetlab profile's tests (apt-get install valgrind)"
    d = tmp_path_factory.mktemp("walk")
    (d / "walk.c").write_text(WALK_C)
    processes.run(["gcc", "-O2", "-o", str(d / "walk"), str(d / "walk.c")], check=True)
    return d / "walk"


@pytest.fixture(scope="module")
def profiled(walk, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("prof") / "measured-walk.toml"
    return out, hetlab_cli("profile", "--slices", "2", "--out", str(out), "--", str(walk))


def _mpki(text: str, phase: int, size: str) -> tuple[float, float]:
    """(measured, fitted) MPKI the file states for `phase` (1-based) at `size`."""
    body = text.split("# Phase ")[phase]
    m = re.search(rf"# MEASURED MPKI at {size}: ([0-9.]+) \(the fitted profile gives ([0-9.]+)\)", body)
    assert m, body
    return float(m[1]), float(m[2])


def test_profile_measures_a_strided_walk_and_the_model_reads_it_back(profiled):
    out, run = profiled
    assert run.returncode == 0, run.stderr
    assert "run 6/6 (LL 8 MB) done" in run.stderr  # progress on stderr
    text = out.read_text()
    doc = tomllib.loads(text)
    assert doc["name"] == "measured-walk"
    phases = doc["tasks"][0]["phases"]
    assert len(phases) == 2
    for key in (
        "command: ",
        "tool: valgrind-",
        "host: x86_64",
        "caveats: ",
        "64-bit pointers",
        "inclusive",
        "prefetcher",
    ):
        assert key in text, key
    steady = phases[1]
    # the steady phase is the walk: one load of the array per 5 instructions or so
    refs = steady["refs_per_instr"]
    assert 0.1 < refs < 0.4
    measured_512, fitted_512 = _mpki(text, 2, "512 KB")
    measured_2m, fitted_2m = _mpki(text, 2, "2 MB")
    # what we expect from the access pattern: every reference misses 512 KB, none misses 2 MB
    assert measured_512 == pytest.approx(1000 * refs, rel=0.02)
    assert measured_2m < 0.01 * measured_512
    # the model's own miss ratio of the written phase (random replacement: a cyclic walk of twice
    # the cache misses m = 1 - exp(-2m) = 0.797 of its laps, where LRU misses all of them)
    origin = str(out)
    _, l2_512, _ = _core.phase_miss_ratios(origin, origin=origin, text=text, cluster=0, l2_bytes=524288, phase=1)
    _, l2_2m, _ = _core.phase_miss_ratios(origin, origin=origin, text=text, cluster=1, l2_bytes=2097152, phase=1)
    assert l2_512 == pytest.approx(0.797, abs=0.03)
    assert l2_2m < 0.01
    # the file's fitted figures are the model's
    assert fitted_512 == pytest.approx(1000 * refs * l2_512, rel=0.01)
    assert fitted_2m == pytest.approx(1000 * refs * l2_2m, abs=0.05)


def test_profiled_workload_simulates(profiled):
    out, run = profiled
    assert run.returncode == 0, run.stderr
    sim = hetlab_cli("simulate", "--workload", str(out), "--cluster", "little")
    assert sim.returncode == 0, sim.stderr
    assert "workload measured-walk" in sim.stdout


def test_advise_takes_a_recorded_profile(profiled):
    """`hetlab advise` on the workload a real program's profile became: every candidate runs,
    and the one recommended for energy is on the cheapest energy row of the table."""
    out, run = profiled
    assert run.returncode == 0, run.stderr
    advice = hetlab_cli("advise", str(out), "--objective", "energy", "--no-progress")
    assert advice.returncode == 0, advice.stderr
    recommended = re.search(r"^recommended for energy: (.+?) — ([\d.]+) s, ([\d.]+) J$", advice.stdout, re.M)
    assert recommended, advice.stdout
    # the table's rows: candidate (three words), time s, ± s, energy J, ...
    energies = [float(m) for m in re.findall(r"^\S+ \S+ \S+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s", advice.stdout, re.M)]
    assert energies and float(recommended.group(3)) == pytest.approx(min(energies), rel=1e-3)


def test_slice_instructions_cut_phases(walk, tmp_path):
    out = tmp_path / "p.toml"
    run = hetlab_cli("profile", "--slice-instructions", "5e6", "--out", str(out), "--", str(walk))
    assert run.returncode == 0, run.stderr
    phases = tomllib.loads(out.read_text())["tasks"][0]["phases"]
    total = sum(p["instructions"] for p in phases)
    assert len(phases) == pytest.approx(total / 5e6, abs=1)
    assert all(p["instructions"] < 7e6 for p in phases)


def _error(run: subprocess.CompletedProcess, *words: str) -> None:
    assert run.returncode == 2, run
    # progress lines may come first; the error is the one last line
    lines = run.stderr.strip().splitlines()
    assert lines[-1].startswith("hetlab: error: "), run.stderr
    assert all(ln.startswith("hetlab: profile: ") for ln in lines[:-1]), run.stderr
    for w in words:
        assert w in lines[-1], lines[-1]


def test_errors_are_one_line(walk, tmp_path):
    out = tmp_path / "never.toml"
    _error(hetlab_cli("profile", "--out", str(out), "--", "false"), "'false' failed under valgrind", "status 1")
    _error(hetlab_cli("profile", "--", "no-such-program-hetlab"), "'no-such-program-hetlab' not found")
    _error(hetlab_cli("profile"), "give the command to profile")
    _error(hetlab_cli("profile", "--slices", "0", "--", str(walk)), "--slices")
    _error(hetlab_cli("profile", "--platform", "tc2", "--", str(walk)), "tc2", "l2_ways")
    _error(
        hetlab_cli("profile", "--out", str(tmp_path / "no" / "dir.toml"), "--", str(walk)),
        "does not exist; create it first",
    )
    assert not out.exists()
    # without valgrind on PATH
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {**os.environ, "PATH": str(bare)}
    run = processes.run(
        [sys.executable, "-m", "hetlab", "profile", "--", str(walk)], capture_output=True, text=True, env=env
    )
    _error(run, "valgrind is not installed")


def _processes_with(marker: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker in (d / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def test_ctrl_c_kills_the_runs():
    marker = "97.4321"  # a sleep nobody else runs
    proc = processes.popen(
        [sys.executable, "-m", "hetlab", "profile", "--", "sleep", marker],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Waits for the event, not for a time: each run says "started" once its valgrind is running
    # (a busy machine may take long to get there; the guard is only against a hang).
    lines: queue.Queue[str | None] = queue.Queue()  # None: stderr closed

    def read_stderr():
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    said = []
    while sum("started" in line for line in said) < 2:
        line = lines.get(timeout=processes.HANG_GUARD_S)
        assert line is not None, f"hetlab profile ended before its runs started: {said}"
        said.append(line)
    runs = processes.children(proc.pid)
    assert len(runs) >= 2, f"the valgrind runs are not running: {said}"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=processes.HANG_GUARD_S)
    reader.join()
    err = "".join(said) + "".join(line for line in lines.queue if line)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert [pid for pid in runs if Path(f"/proc/{pid}").exists()] == [], "a valgrind run outlived hetlab"
    assert _processes_with(marker) == []
