"""Wall time of every `hetlab reproduce` with its defaults, each into a fresh directory:
lctes2020 in detail (characterization sweep, training, 1,100 simulated runs, tables, figures,
report; target under 3 minutes), then bl-mp-sched, rcu-amp and four-vs-eight (targets from
their issues).

Prints figures; asserts nothing. Run with `make bench` (or directly with the venv's python).
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS_S = {"lctes2020": 180, "bl-mp-sched": None, "rcu-amp": 120, "four-vs-eight": 120}


def reproduce(name: str) -> tuple[float, str] | None:
    """(wall seconds, stdout) of `hetlab reproduce NAME`, or None when it failed (said)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "hetlab", "reproduce", name, "--out", str(Path(tmp) / name)]
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if r.returncode != 0:
        print(f"hetlab reproduce {name} failed ({r.returncode}): {r.stderr.strip()}")
        return None
    return wall, r.stdout


def main() -> None:
    for name, target in TARGETS_S.items():
        done = reproduce(name)
        if done is None:
            continue
        wall, stdout = done
        m = re.search(r"experiments ([\d.]+) s \((\d+) runs\)", stdout)
        runs = f", {m[2]} runs in {float(m[1]):.1f} s" if m else ""
        goal = f" (target: under {target} s)" if target else ""
        print(f"hetlab reproduce {name}: {wall:.1f} s wall on {os.cpu_count()} CPUs{runs}{goal}")
        steps = re.search(r"time: sweep ([\d.]+) s, train ([\d.]+) s, .*outputs ([\d.]+) s", stdout)
        if steps:
            sweep, train, outputs = (float(steps[i]) for i in (1, 2, 3))
            print(f"  sweep {sweep:.1f} s, train {train:.1f} s, tables+figures {outputs:.1f} s")
        # the claims table's verdict column (the last, or before lctes2020's mechanism column)
        claims = re.findall(r"^\| .* \| (yes|no|partly|not run) \|(?: [^|]* \|)?$", stdout, flags=re.M)
        print(
            f"  claims: {claims.count('yes')} hold, {claims.count('partly')} partly, {claims.count('no')} do not, "
            f"{claims.count('not run')} not run (report.md)"
        )


if __name__ == "__main__":
    main()
