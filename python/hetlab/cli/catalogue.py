"""The catalogue: built-in platforms, governors, placement policies and workloads, listed."""

from __future__ import annotations

import argparse
import json

from hetlab import api


def cmd_platforms(args: argparse.Namespace) -> int:
    for p in api.platforms():
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


def cmd_workloads(args: argparse.Namespace) -> int:
    print("generators (NAME:key=value,...):")
    print("  ccbench    size (4-byte elements), pattern (random|0, sequential|1, stride-K|K), iterations, threads")
    print("  periodic   run_us, period_us, duration_us, threads, working_set_bytes, nice")
    print("  cpu-bound  threads, instructions, cpi, working_set_bytes")
    print("built-in files:")
    for name in api.workloads():
        print(f"  {name}")
    return 0


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab platforms`, `governors`, `schedulers` and `workloads`."""
    sub.add_parser("platforms", help="list built-in platforms").set_defaults(func=cmd_platforms)
    gov = sub.add_parser("governors", help="list governors with their tunables and defaults")
    gov.add_argument("--json", action="store_true")
    gov.set_defaults(func=cmd_governors)
    sch = sub.add_parser("schedulers", help="list placement policies with their tunables and defaults")
    sch.add_argument("--json", action="store_true")
    sch.set_defaults(func=cmd_schedulers)
    sub.add_parser("workloads", help="list workload generators and built-in workloads").set_defaults(func=cmd_workloads)
