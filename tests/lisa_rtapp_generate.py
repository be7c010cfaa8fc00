#!/usr/bin/env python3
"""Write an rt-app JSON with LISA's own workload generator (``lisa.wlgen.rta.RTAConf``) from a
hetlab platform info, as LISA writes one for a board from that board's ``plat_info``.

Run it with the LISA venv's interpreter (``scripts/lisa-venv.sh`` prints its path):

    .venv-lisa/bin/python tests/lisa_rtapp_generate.py PLAT_INFO_YML OUT_JSON

The profile: ``big``, a periodic task of 20 % duty cycle at 16 ms pinned to CPU 4 for 0.32 s,
then 60 % for 0.32 s; ``little``, 40 % at 8 ms pinned to CPU 0 and scaled for that CPU (LISA
divides its run by the CPU's rt-app capacity, which it derives from ``rtapp: calib``). LISA
calibrates with the smallest ns-per-loop of ``rtapp: calib`` (the fastest CPU). Prints, as JSON
on stdout, what LISA asked: ``{"calibration": ns, "rtapp_capacities": {cpu: capacity}}``.
Exit status 1 if LISA fails.
"""

import sys

from lisa_common import print_json

PERIOD_BIG_S = 0.016
PERIOD_LITTLE_S = 0.008


def generate(plat_info_path, out_path):
    from lisa.platforms.platinfo import PlatformInfo
    from lisa.wlgen.rta import PeriodicWload, RTAConf, RTAPhase

    plat_info = PlatformInfo.from_yaml_map(plat_info_path)
    big = RTAPhase(
        prop_wload=PeriodicWload(duty_cycle_pct=20, period=PERIOD_BIG_S, duration=0.32),
        prop_cpus=[4],
    ) + RTAPhase(prop_wload=PeriodicWload(duty_cycle_pct=60, period=PERIOD_BIG_S, duration=0.32), prop_cpus=[4])
    little = RTAPhase(
        prop_wload=PeriodicWload(duty_cycle_pct=40, period=PERIOD_LITTLE_S, duration=0.32, scale_for_cpu=0),
        prop_cpus=[0],
    )
    conf = RTAConf.from_profile(
        {"big": big, "little": little},
        plat_info=plat_info,
        trace_events=["main", "task", "loop", "event", "stats"],
        log_stats=True,
    )
    with open(out_path, "w") as f:
        f.write(conf.json)
    return {
        "calibration": conf["global"]["calibration"],
        "rtapp_capacities": {int(c): float(v) for c, v in plat_info["cpu-capacities"]["rtapp"].items()},
    }


if __name__ == "__main__":
    sys.exit(print_json(generate, sys.argv[1], sys.argv[2]))
