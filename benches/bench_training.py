"""Wall time and peak memory of the default characterization sweep (with 1 and with 2 local
workers) and of training on it. Targets (issue 16): 2 workers at least 1.8x faster than 1;
characterize + train under 10 s on a 2-core machine.

Prints figures; asserts nothing. Run with `make bench` (or directly with the venv's python).
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(*args: str) -> tuple[float, float]:
    """(wall s, peak resident MB) of `hetlab ARGS` in a child process of its own."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hetlab", *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"hetlab {' '.join(args)} failed ({status})")
    return time.perf_counter() - start, usage.ru_maxrss / 1024  # ru_maxrss: kB on Linux


# The sweep alone, in a fresh process whose imports are done before the clock starts.
SWEEP_ONLY = """
import sys, time
import pyarrow.parquet
from hetlab.characterize import characterize
start, cpu = time.perf_counter(), time.process_time()
characterize(sys.argv[1], platform="exynos5422", workers=int(sys.argv[2]))
print(time.perf_counter() - start, time.process_time() - cpu)
"""


REPEATS = 5


def sweep_only(out: Path, jobs: int) -> tuple[float, float]:
    """(wall s, CPU s of all its threads) of the sweep alone."""
    out.unlink(missing_ok=True)
    printed = subprocess.run([sys.executable, "-c", SWEEP_ONLY, str(out), str(jobs)], capture_output=True, text=True)
    if printed.returncode != 0:
        raise SystemExit(printed.stderr)
    wall, cpu = map(float, printed.stdout.split())
    return wall, cpu


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp) / "sweep.parquet"
        walls, inside, cpu = {}, {}, {}
        # the sweep alone, 1 and 2 workers alternately, REPEATS times: the median of each (a
        # shared VM's neighbours come and go)
        tries: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        for _ in range(REPEATS):
            for jobs in (1, 2):
                tries[jobs].append(sweep_only(sweep, jobs))
        for jobs in (1, 2):
            inside[jobs], cpu[jobs] = sorted(tries[jobs])[REPEATS // 2]
            sweep.unlink(missing_ok=True)
            walls[jobs], peak = timed(
                "characterize", "--platform", "exynos5422", "--backend", "sim", "--jobs", str(jobs), "--out", str(sweep)
            )
            print(
                f"characterize, {jobs} worker(s): {walls[jobs]:.2f} s for the command, {inside[jobs]:.2f} s for "
                f"the sweep inside it (median of {REPEATS}; start-up and imports excluded; {cpu[jobs]:.2f} s of CPU), "
                f"peak memory {peak:.0f} MB"
            )
        t_train, peak = timed("train", str(sweep), "--out", str(Path(tmp) / "model"))
        runs = __import__("pandas").read_parquet(sweep, columns=["run_id"]).run_id.nunique()
        print(
            f"  {runs} runs: {runs / walls[2]:.0f} runs/s with 2 workers; speed-up {walls[1] / walls[2]:.2f}x "
            f"(command), {inside[1] / inside[2]:.2f}x (sweep); the most {os.cpu_count()} cores allow for this CPU "
            f"time: {inside[1] / (cpu[2] / os.cpu_count()):.2f}x; the command's start-up (imports) is serial"
        )
        print(f"train: {t_train:.1f} s, peak memory {peak:.0f} MB")
        print(f"characterize (2 workers) + train: {walls[2] + t_train:.1f} s (target: under 10 s)")


if __name__ == "__main__":
    main()
