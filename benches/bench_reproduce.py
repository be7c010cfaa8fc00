"""Wall time of the full `hetlab reproduce lctes2020` (characterization sweep, training, 1,100
simulated runs, tables, figures, report) into a fresh directory. Target: under 3 minutes. Then
the full `hetlab reproduce four-vs-eight` (seed 004). Target: under 2 minutes.

Prints figures; asserts nothing. Run with `make bench` (or directly with the venv's python).
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def entry() -> list[str]:
    return ["-m", "hetlab", "reproduce"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lctes2020"
        cmd = [sys.executable, *entry(), "lctes2020", "--out", str(out)]
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if r.returncode != 0:
            print(f"hetlab reproduce lctes2020 failed ({r.returncode}): {r.stderr.strip()}")
            return
        m = re.search(
            r"time: sweep ([\d.]+) s, train ([\d.]+) s, experiments ([\d.]+) s \((\d+) runs\), "
            r"outputs ([\d.]+) s",
            r.stdout,
        )
        print(f"hetlab reproduce lctes2020: {wall:.1f} s wall on {os.cpu_count()} CPUs (target: under 180 s)")
        if m:
            sweep, train, runs_s, runs, outputs = float(m[1]), float(m[2]), float(m[3]), int(m[4]), float(m[5])
            print(f"  sweep + train:  {sweep + train:6.1f} s  (sweep {sweep:.1f} s, train {train:.1f} s)")
            print(f"  experiments:    {runs_s:6.1f} s  ({runs} runs, {runs / max(runs_s, 1e-9):,.0f} runs/s)")
            print(f"  tables+figures: {outputs:6.1f} s")
            print(f"  start-up etc.:  {wall - sweep - train - runs_s - outputs:6.1f} s")
        claims = re.findall(r"^\| .* \| (yes|no|partly|not run) \|$", r.stdout, flags=re.M)
        print(
            f"  claims: {claims.count('yes')} hold, {claims.count('partly')} partly, {claims.count('no')} do not, "
            f"{claims.count('not run')} not run (report.md)"
        )


def the_others() -> None:
    """Wall time of every other reproduction with its defaults (targets from their issues)."""
    targets_s = {"bl-mp-sched": None, "rcu-amp": 120, "four-vs-eight": 120}
    for name, target in targets_s.items():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, *entry(), name, "--out", str(Path(tmp) / name)]
            start = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if r.returncode != 0:
                print(f"hetlab reproduce {name} failed ({r.returncode}): {r.stderr.strip()}")
                continue
            m = re.search(r"experiments ([\d.]+) s \((\d+) runs\)", r.stdout)
            runs = f", {m[2]} runs in {float(m[1]):.1f} s" if m else ""
            goal = f" (target: under {target} s)" if target else ""
            print(f"hetlab reproduce {name}: {wall:.1f} s wall on {os.cpu_count()} CPUs{runs}{goal}")


if __name__ == "__main__":
    main()
    the_others()
