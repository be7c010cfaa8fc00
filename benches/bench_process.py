"""What a whole `hetlab simulate` process costs beyond the engine (issue 38's lean process): each
command run as a user runs it, wall and CPU time (user + system of the child), medians over
rounds in which every command runs once in turn; beside it, the same command stopped after 1 µs
of simulated time (the fixed cost: start, imports, argument handling, platform, JSON, exit) and
the floor a Python command line over the extension sets (the interpreter, argparse, json and the
extension module alone). With `--reference HETLAB` (another build's `hetlab`, e.g. main's), each
command also runs with it, interleaved. Prints figures; asserts nothing.

    python benches/bench_process.py [--rounds 5] [--reference /path/to/other/.venv/bin/hetlab]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

CCBENCH = [
    "simulate",
    "--workload",
    "ccbench:size=1048576,pattern=random,iterations=100000000000",
    "--cluster",
    "little",
    "--time-limit",
    "3600",
    "--json",
]
PERIODIC_512 = [
    "simulate",
    "--workload",
    "periodic:threads=512,run_us=200,period_us=50000,duration_us=10000000",
    "--scheduler",
    "smp",
    "--json",
]
# (label, arguments, simulated seconds of the full run: for the real-time factor)
COMMANDS = [
    ("ccbench, 1 simulated hour", CCBENCH, 3600.0),
    ("512 periodic threads, 10 s", PERIODIC_512, 10.0),
    ("ccbench stopped at 1 µs (fixed cost)", [*CCBENCH, "--time-limit", "0.000001"], None),
    ("512 threads stopped at 1 µs (fixed cost)", [*PERIODIC_512, "--time-limit", "0.000001"], None),
    ("simulate --help", ["simulate", "--help"], None),
]
FLOOR = """
import argparse, importlib.util, json, sys
p = argparse.ArgumentParser(prog="floor")
p.add_argument("--json", action="store_true")
p.parse_args(["--json"])
spec = importlib.util.spec_from_file_location("hetlab._core", sys.argv[1])
importlib.util.module_from_spec(spec)
"""


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str]) -> tuple[float, float]:
    cpu, start = _children_cpu_s(), time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start, _children_cpu_s() - cpu


def _python_of(hetlab: str) -> str:
    """The interpreter of a console script (its #! line)."""
    first = Path(hetlab).read_text().splitlines()[0]
    return first[2:].strip()


def _extension_of(python: str) -> str:
    code = "import importlib.util as u; print(u.find_spec('hetlab._core').origin)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hetlab", default=str(Path(sys.executable).with_name("hetlab")))
    parser.add_argument("--reference", help="another build's hetlab, run interleaved")
    args = parser.parse_args()
    builds = [("this", args.hetlab)] + ([("reference", args.reference)] if args.reference else [])
    cases = []
    for label, argv, sim_s in COMMANDS:
        cases += [(f"{label} [{name}]", [hetlab, *argv], sim_s) for name, hetlab in builds]
    for name, hetlab in builds:
        python = _python_of(hetlab)
        cases += [
            (f"python -c pass [{name}]", [python, "-c", "pass"], None),
            (f"python -c 'import hetlab._core' [{name}]", [python, "-c", "import hetlab._core"], None),
            (f"floor: argparse, json, the extension [{name}]", [python, "-c", FLOOR, _extension_of(python)], None),
        ]
    wall: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    cpu: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for _ in range(args.rounds):
        for label, argv, _ in cases:
            w, c = _timed(argv)
            wall[label].append(w)
            cpu[label].append(c)
    print(f"medians of {args.rounds} rounds, commands interleaved; load average {os.getloadavg()[0]:.1f} at the end")
    # x real time by CPU time too: on a shared machine the wall time waits for other processes
    print(f"{'command':62} {'wall ms':>8} {'CPU ms':>8} {'x real time (wall)':>19} {'(CPU)':>8}")
    for label, _, sim_s in cases:
        w, c = statistics.median(wall[label]), statistics.median(cpu[label])
        factors = (f"{sim_s / w:,.0f}", f"{sim_s / c:,.0f}") if sim_s else ("", "")
        print(f"{label:62} {1000 * w:8.1f} {1000 * c:8.1f} {factors[0]:>19} {factors[1]:>8}")


if __name__ == "__main__":
    main()
