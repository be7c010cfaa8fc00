"""Validates the Exynos 5422's power model against the Odroid-HC2's measured wall power
(data/measurements/power-hc2.csv): the four A15s busy at each measured frequency with the A7s
idle, and all eight cores busy, as 7-zip's benchmark keeps them. Prints a Markdown table with
the error per point (docs/model.md shows it).

    python scripts/validate_power.py            # about ten seconds
    python scripts/validate_power.py --platform my5422.toml

The wall meter also sees the power supply's loss and 7-zip's DRAM traffic, which a cpu-bound
simulated thread does not make; the "over idle" columns take the board's constant draw out of
both sides. hetlab's board constant (`rest_power_mw`) is set from the idle row, so that row is
not a test.
"""

import argparse
import re
from pathlib import Path

import pandas as pd

from hetlab import api

ROOT = Path(__file__).resolve().parent.parent
MEASURED = ROOT / "data" / "measurements" / "power-hc2.csv"
# Every thread stays busy until the time limit: 30 simulated seconds let the thermal RC nodes
# (5 s time constants) settle.
INSTRUCTIONS_PER_THREAD = 10**14
SECONDS = 30.0
LITTLE_KHZ = 1_400_000


def board_mw(platform: str, cores: str, a15_mhz: int) -> float:
    """Mean simulated board power, mW, over a run shaped like the measured row."""
    freq = {"little": LITTLE_KHZ, "big": a15_mhz * 1000 if a15_mhz else 200_000}
    if cores == "idle":
        workload, cluster = "periodic:run_us=10,period_us=1000000,duration_us=20000000,threads=1", "little"
    elif cores == "a15":
        workload, cluster = f"cpu-bound:threads=4,instructions={INSTRUCTIONS_PER_THREAD}", "big"
    else:
        workload, cluster = f"cpu-bound:threads=8,instructions={INSTRUCTIONS_PER_THREAD}", None
    r = api.simulate(
        platform, workload, cluster=cluster, governor="userspace", freq=freq, scheduler="smp", time_limit_s=SECONDS
    )
    return r.energy_j / r.time_s * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default=str(ROOT / "data" / "platforms" / "exynos5422.toml"))
    args = ap.parse_args()
    rows = pd.read_csv(MEASURED, comment="#")
    rows["model_mw"] = [board_mw(args.platform, r.cores, int(r.a15_mhz)) for r in rows.itertuples()]
    idle = rows[rows.cores == "idle"].iloc[0]
    print("| cores | A15 MHz | HC2 wall mW | hetlab mW | error | over idle: HC2 / hetlab | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    errors = []
    for r in rows[rows.cores != "idle"].itertuples():
        err = r.model_mw / r.wall_mw - 1.0
        errors.append(abs(err))
        over_measured, over_model = r.wall_mw - idle.wall_mw, r.model_mw - idle.model_mw
        print(
            f"| {'4 A15' if r.cores == 'a15' else 'all 8'} | {r.a15_mhz} | {r.wall_mw:.0f} | {r.model_mw:.0f} | "
            f"{100 * err:+.1f} % | {over_measured:.0f} / {over_model:.0f} | {over_model / over_measured:.2f} |"
        )
    print(f"\nidle: HC2 {idle.wall_mw:.0f} mW, hetlab {idle.model_mw:.0f} mW (the board constant is set from it:")
    rest = re.search(r"(?m)^rest_power_mw = ([0-9.]+)", Path(args.platform).read_text())
    if rest:
        print(f"rest_power_mw = {float(rest.group(1)) + idle.wall_mw - idle.model_mw:.0f} makes them equal)")
    print(f"mean |error| over the busy rows: {100 * sum(errors) / len(errors):.1f} %")


if __name__ == "__main__":
    main()
