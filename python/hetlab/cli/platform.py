"""`hetlab platform`: a platform file from a running board, and a platform's energy model out
(as debugfs shows it, or as platform tables) and in."""

from __future__ import annotations

import argparse
from pathlib import Path

from hetlab import _core
from hetlab._files import write_output
from hetlab.cli.values import CliError


def cmd_export_em(args: argparse.Namespace) -> int:
    from hetlab import energy_model

    em = energy_model.energy_model(args.platform)
    if args.format in ("debugfs", "board"):
        if not args.out or args.out == "-":  # "-" is standard output everywhere else, not a directory
            raise CliError(f"--format {args.format} writes a directory tree: give it with --out DIR")
        if args.format == "board":
            energy_model.write_board(em, args.out)
            print(f"wrote {args.out} (a board's root: sys/kernel/debug/energy_model and each CPU's cpu_capacity)")
        else:
            energy_model.write_debugfs(em, args.out)
            print(f"wrote {args.out} (laid out like /sys/kernel/debug/energy_model)")
        return 0
    text = energy_model.toml_tables(energy_model.domains_of(em), f"exported from {em['platform']} by hetlab")
    write_output(args.out or "-", text, "energy model tables")
    return 0


def cmd_import_em(args: argparse.Namespace) -> int:
    from hetlab import energy_model

    write_output(
        args.out or "-", energy_model.toml_tables(energy_model.read_debugfs(args.dir), f"read from {args.dir}")
    )
    return 0


def cmd_from_board(args: argparse.Namespace) -> int:
    from hetlab import energy_model

    try:
        text = _core.platform_from_board(args.template, sysfs_root=args.sysfs_root, procfs_root=args.procfs_root)
    except ValueError as e:
        raise CliError(str(e)) from None
    em_dir = Path(args.sysfs_root) / "kernel" / "debug" / "energy_model"
    if em_dir.is_dir():
        text += "\n" + energy_model.toml_tables(energy_model.read_debugfs(em_dir), f"read: {em_dir}")
        try:  # the board's energy model must fit the platform read beside it
            _core.Platform(None, "platform from-board", text)
        except ValueError as e:
            raise CliError(f"{em_dir}: the energy model does not fit the board's cpufreq policies: {e}") from None
    write_output(args.out or "-", text, "platform")
    return 0


def cmd_from_dt(args: argparse.Namespace) -> int:
    import sys

    try:
        text, missing, notes = _core.platform_from_dt(args.file)
    except ValueError as e:
        raise CliError(str(e)) from None
    for line in notes:
        print(f"hetlab: note: {line}", file=sys.stderr)
    for line in missing:
        print(f"hetlab: not in the device tree: {line}", file=sys.stderr)
    write_output(args.out or "-", text, "platform skeleton")
    return 0


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab platform` and its subcommands."""
    pl = sub.add_parser(
        "platform",
        help="a platform from a board or a device tree, its energy model in and out "
        "(from-board, from-dt, export-em, import-em)",
    )
    pl_sub = pl.add_subparsers(dest="platform_command", metavar="COMMAND", required=True)
    ex = pl_sub.add_parser(
        "export-em",
        help="write a platform's energy model as /sys/kernel/debug/energy_model shows it, or as platform tables",
        description="Writes the Energy Model the kernel would build for PLATFORM (its [[energy_model]] tables, else "
        "the derivation from its OPPs and dynamic-power coefficient): --format debugfs, a directory tree laid out "
        "like /sys/kernel/debug/energy_model on Linux 5.10 (what LISA's LinuxEnergyModel reads from a board); "
        "--format board, a board's root for LISA's LinuxEnergyModel.from_target: that tree under "
        "sys/kernel/debug/energy_model and each CPU's sys/devices/system/cpu/cpuN/cpu_capacity; "
        "--format toml, [[energy_model]] tables for a platform file.",
    )
    ex.add_argument("platform", metavar="PLATFORM", help="built-in platform name or platform .toml")
    ex.add_argument("--format", choices=["toml", "debugfs", "board"], default="toml", help="(default: toml)")
    ex.add_argument("--out", metavar="PATH", help="toml: a file (default: stdout); debugfs, board: a new directory")
    ex.set_defaults(func=cmd_export_em)
    im = pl_sub.add_parser(
        "import-em",
        help="read an energy model from a tree laid out like /sys/kernel/debug/energy_model",
        description="Reads the performance domains under DIR (a board's /sys/kernel/debug/energy_model, or an "
        "export) and writes them as [[energy_model]] tables for a platform file.",
    )
    im.add_argument("dir", metavar="DIR", help="e.g. /sys/kernel/debug/energy_model")
    im.add_argument("--out", metavar="FILE", help="where the tables go (default: stdout)")
    im.set_defaults(func=cmd_import_em)
    fb = pl_sub.add_parser(
        "from-board",
        help="write a platform .toml from a running board's sysfs, over a built-in template",
        description="Reads what the kernel shows of the board's CPUs (cpufreq policies: related CPUs, OPP lists, "
        "transition latencies; each CPU's cpu_capacity, caches and cpuidle states; /proc/cpuinfo's CPU part; the "
        "energy model under <sysfs>/kernel/debug/energy_model if debugfs has it) and lays it over TEMPLATE for "
        "what sysfs does not show (OPP voltages, power, the memory system, thermal). Every value's comment says "
        "whether it was read, derived, or is a TODO from the template with the reason. The result loads.",
    )
    fb.add_argument(
        "--template", default="exynos5422", help="built-in platform for what sysfs does not show (default: exynos5422)"
    )
    fb.add_argument("--sysfs-root", metavar="DIR", default="/sys", help="where sysfs is (default: /sys)")
    fb.add_argument("--procfs-root", metavar="DIR", default="/proc", help="where procfs is (default: /proc)")
    fb.add_argument("--out", metavar="FILE", help="where the platform goes (default: stdout)")
    fb.set_defaults(func=cmd_from_board)
    fd = pl_sub.add_parser(
        "from-dt",
        help="write a platform skeleton from a device-tree source (.dts/.dtsi)",
        description='Reads FILE (device-tree source; /include/ and #include "x" of files next to it; '
        "#include <...> headers are skipped) and writes [[core_types]] and [[clusters]] tables: the cpu-map's "
        "clusters, capacity-dmips-mhz, dynamic-power-coefficient, caches, operating-points-v2 (kHz, target µV, "
        "clock-latency-ns) and idle states (cpu-idle-states, or PSCI power domains' domain-idle-states). Each "
        "value's comment names the file and line; what the tree "
        "does not give is listed on stderr. The memory system, thermal and the rest are the author's to add.",
    )
    fd.add_argument("file", metavar="FILE", help="a .dts or .dtsi")
    fd.add_argument("--out", metavar="FILE", help="where the skeleton goes (default: stdout)")
    fd.set_defaults(func=cmd_from_dt)
