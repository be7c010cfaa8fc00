"""Simulation speed through the Python API (engine + result conversion): simulated seconds per
wall second. Prints figures; asserts nothing. Run with `make bench`; the engine alone is
measured by `cargo bench -p hetlab-core --bench engine_speed`.
"""

import statistics
import time

import hetlab

CASES = [
    (
        "(a) ccbench random 4 MB on LITTLE, ondemand",
        dict(workload="ccbench:size=1048576,pattern=random,iterations=60000000", cluster="little", governor="ondemand"),
    ),
    ("(b) mixed8 on 8 CPUs (smp), ondemand", dict(workload="mixed8", scheduler="smp", governor="ondemand")),
]


def main() -> None:
    for label, kwargs in CASES:
        rates = []
        for seed in range(1, 8):
            start = time.perf_counter()
            sim_s = hetlab.simulate(seed=seed, **kwargs).time_s
            rates.append(sim_s / (time.perf_counter() - start))
        print(f"{label}: {max(rates):,.0f}x real time best, {statistics.median(rates):,.0f}x median (7 runs)")


if __name__ == "__main__":
    main()
