"""Simulation speed through the Python API: simulated seconds per wall second.

Prints figures; asserts nothing. Run with `make bench`.
"""

import time

import hetlab

CASES = [
    ("(a) ccbench random 4 MB on LITTLE, ondemand", dict(workload="ccbench:size=1048576,pattern=random,iterations=60000000", cluster="little", governor="ondemand")),
    ("(b) mixed8 on 8 CPUs (smp), ondemand", dict(workload="mixed8", scheduler="smp", governor="ondemand")),
]


def main() -> None:
    for label, kwargs in CASES:
        reps = 3
        start = time.perf_counter()
        sim_s = sum(hetlab.simulate(seed=s, **kwargs).time_s for s in range(1, reps + 1))
        wall_s = time.perf_counter() - start
        print(f"{label}: {sim_s:.1f} simulated s in {wall_s:.3f} wall s = {sim_s / wall_s:,.0f}x real time")


if __name__ == "__main__":
    main()
