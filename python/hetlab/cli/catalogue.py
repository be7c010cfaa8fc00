"""The catalogue: built-in platforms, governors, placement policies and workloads, listed."""

from __future__ import annotations

import argparse
import json

from hetlab import api


def cmd_platforms(args: argparse.Namespace) -> int:
    plats = api.platforms()
    if args.json:
        print(json.dumps(plats, indent=2))
        return 0
    for p in plats:
        print(f"{p['name']}: {p['description']}")
        for c in p["clusters"]:
            mhz = [f // 1000 for f in c["opps_khz"]]
            cci = "no CCI" if c["cci_port"] is None else f"CCI S{c['cci_port']}"
            print(
                f"  {c['name']:7} {c['core_type']:11} cpus {c['cpus'][0]}-{c['cpus'][-1]}  {cci}  "
                f"L2 {c['l2_bytes'] // 1024} KB  capacity {c['capacity']}  OPPs {mhz[0]}-{mhz[-1]} MHz ({len(mhz)})"
            )
    return 0


def cmd_governors(args: argparse.Namespace) -> int:
    govs = api.governors()
    if args.json:
        print(json.dumps(govs, indent=2))
        return 0
    for g in govs:
        print(f"{g['name']}: {g['summary']}")
        for t in g["tunables"]:
            print(f"    {t['name']:24} default {t['default']!s:>14} {t['unit']:6} {t['help']}")
    print("\nnamed configurations: all-max (performance everywhere), idle-min (active cluster max, others min)")
    return 0


def cmd_schedulers(args: argparse.Namespace) -> int:
    scheds = api.schedulers()
    if args.json:
        print(json.dumps(scheds, indent=2))
        return 0
    for s in scheds:
        print(f"{s['name']}: {s['summary']}")
        for t in s["tunables"]:
            print(f"    {t['name']:30} default {t['default']!s:>6} {t['help']}")
    print("\nswitching modes (simulate --switching; iks and cluster-switching run with pinned or smp):")
    for m in api.switching_modes():
        print(f"  {m['name']}: {m['summary']}")
    return 0


# The workload generators (`NAME:key=value,...`) and their keys, as `workload/generators.rs` reads them.
GENERATORS = {
    "ccbench": "size (4-byte elements), pattern (random|0, sequential|1, stride-K|K), iterations, threads",
    "periodic": "run_us, period_us, duration_us, threads, working_set_bytes, nice",
    "cpu-bound": "threads, instructions, cpi, working_set_bytes",
}


def cmd_workloads(args: argparse.Namespace) -> int:
    if args.json:
        generators = [{"name": name, "keys": keys} for name, keys in GENERATORS.items()]
        print(json.dumps({"generators": generators, "builtin": list(api.workloads())}, indent=2))
        return 0
    print("generators (NAME:key=value,...):")
    for name, keys in GENERATORS.items():
        print(f"  {name:10} {keys}")
    print("built-in files:")
    for name in api.workloads():
        print(f"  {name}")
    return 0


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab platforms`, `governors`, `schedulers` and `workloads`."""
    plat = sub.add_parser("platforms", help="list built-in platforms")
    plat.add_argument("--json", action="store_true", help="the list as JSON, for scripts")
    plat.set_defaults(func=cmd_platforms)
    gov = sub.add_parser("governors", help="list governors with their tunables and defaults")
    gov.add_argument("--json", action="store_true", help="the list as JSON, for scripts")
    gov.set_defaults(func=cmd_governors)
    sch = sub.add_parser("schedulers", help="list placement policies with their tunables and defaults")
    sch.add_argument("--json", action="store_true", help="the list as JSON, for scripts")
    sch.set_defaults(func=cmd_schedulers)
    wl = sub.add_parser("workloads", help="list workload generators and built-in workloads")
    wl.add_argument("--json", action="store_true", help="the list as JSON, for scripts")
    wl.set_defaults(func=cmd_workloads)
