"""The board commands, hetlabd's own run from `hetlab`: the characterization sweep (simulated or
on this board), the native pointer chase, the inter-core latency and the governor daemon. Their
options are hetlabd's declarations (`_core.board_command`), so each rule is declared once."""

from __future__ import annotations

import argparse
import sys

from hetlab import _core, api
from hetlab.cli.values import CliError, api_default, given_options, parse_tunables, per_cluster, words
from hetlab.executor import EXECUTOR_HELP


def _bar(total: int, done: int):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="run", desc="characterize", disable=None, file=sys.stderr)


class _BoardValue:
    """argparse's `type` for a hetlabd option with a number or a list: parsed and checked by
    hetlabd's own declaration (`_core.board_value`), so a value out of range (or a list with an
    empty or repeated item) fails here, before anything starts, with hetlabd's error line."""

    def __init__(self, command: str, long: str):
        self.command, self.long = command, long

    def __call__(self, text: str):
        try:
            return _core.board_value(self.command, self.long, text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None


def _board_options(name: str, target, groups: tuple[str, ...], skip: tuple[str, ...] = ()) -> list[str]:
    """Adds the options of hetlabd's command `name` in `groups` to `target` (a parser or an
    argument group), as hetlab_linux::flags declares them: the same names, values, help,
    defaults and numeric ranges as hetlabd's. Returns their dests."""
    dests = []
    for f in _core.board_command(name)["flags"]:
        if f["group"] not in groups or f["long"] in skip:
            continue
        names = [f["long"], *([f["short"]] if f["short"] else [])]
        if f["value"] is None:
            action = target.add_argument(*names, action="store_true", help=f["help"])
        else:
            action = target.add_argument(
                *names,
                metavar=f["value"],
                action="append" if f["repeatable"] else "store",
                type=_BoardValue(name, f["long"]) if f["checked"] else None,
                help=f["help"],
            )
        dests.append(action.dest)
    return dests


def cmd_chase(args: argparse.Namespace) -> int:
    result = api.chase(
        args.sizes,
        elements=args.elements,
        patterns=words(args.pattern, "--pattern"),
        cpu=args.cpu,
        min_time_s=args.min_time,
        iterations=args.iterations,
        freq_khz=args.freq_khz,
        seed=args.seed,
    )
    print(result.report_json if args.json else result.text, end="\n" if args.json else "")
    return 0


def cmd_pingpong(args: argparse.Namespace) -> int:
    model = api.line_transfer_ns(args.platform)  # a bad platform fails before any measurement
    if args.backend == "linux":
        r = api.pingpong(
            args.cpus,
            round_trips=args.round_trips,
            repeats=args.repeats,
        )
        if args.json:
            print(r.report_json)
            return 0
        print(r.text, end="")
    names = list(dict.fromkeys(src for src, _ in model))
    print(f"model {args.platform} (top OPPs): ns per one-way transfer into a core of the row cluster from a core")
    print("of the column cluster (the same cluster: through its L2; another: the CCI and a snoop there)")
    print(f"{'to / from':>12}" + "".join(f" {n:>9}" for n in names))
    for dst in names:
        print(f"{dst:>12}" + "".join(f" {model[(src, dst)]:9.1f}" for src in names))
    return 0


def cmd_govern(args: argparse.Namespace) -> int:
    if args.governor is None:
        raise CliError("govern needs --governor NAME (see `hetlab governors`)")
    r = api.govern(
        args.governor,
        **given_options(
            model=args.model,
            tunables=parse_tunables(args.tunable) if args.tunable else None,
            duration_s=args.duration,
            counters=args.counters,
            pmu=args.pmu,
            platform=args.platform,
            cluster_names=words(args.cluster_names, "--cluster-names"),
            sysfs_root=args.sysfs_root,
            procfs_root=args.procfs_root,
        ),
        dry_run=args.dry_run,
        verbose=args.verbose,
        read_all_threads=args.read_all_threads,
    )
    restored = f"; restored {'; '.join(r.restored)}" if r.restored else ""
    what = f"{r.samples} samples, {r.writes} frequency writes{restored}"
    print(f"hetlab: stopped ({r.stop_reason}) after {what}", file=sys.stderr)
    return 0


def cmd_characterize(args: argparse.Namespace) -> int:
    from hetlab.characterize import characterize

    freq_clusters = _core.SWEEP_DEFAULTS["freq_clusters"]
    if args.backend != "linux":
        given = [d for d in args.board_dests if getattr(args, d) not in (None, False)]
        if given:
            raise CliError(f"--{given[0].replace('_', '-')} belongs to --backend linux")
    freqs = {c: getattr(args, f"{c}_khz") for c in freq_clusters}
    path = characterize(
        args.out,
        **given_options(
            platform=args.platform,
            backend=args.backend,
            reps=args.reps,
            patterns=words(args.patterns, "--patterns"),
            sizes=args.sizes,
            run_s=args.run_s,
            seed=args.seed,
            active_opp=args.active_opp,
            workers=args.jobs,
            executor=args.executor,
            period_us=args.period_us,
            freqs_khz={c: f for c, f in freqs.items() if f is not None} or None,
            chase_cpus=per_cluster(args.chase_cpu, "--chase-cpu", "CLUSTER=CPU, e.g. little=0,big=4")
            if args.chase_cpu
            else None,
            pmu=args.pmu,
            sysfs_root=args.sysfs_root,
            procfs_root=args.procfs_root,
            cluster_names=words(args.cluster_names, "--cluster-names"),
        ),
        allow_missing_counters=args.allow_missing_counters,
        progress=_bar,
    )
    print(f"wrote {path}")
    return 0


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab characterize`, `chase`, `pingpong` and `govern`."""
    from hetlab.characterize import characterize

    ch = sub.add_parser(
        "characterize",
        help="run the snoop-latency characterization sweep (training data)",
        description="ccbench pointer chase on one cluster, the other idle, over every pair of cluster OPPs (or, with\n"
        "--active-opp top, every OPP of the idle cluster), three patterns and array sizes around every cache\n"
        "size, repeated; one row per governor sampling period (schema: docs/dataset.md). Interrupted\n"
        "simulated sweeps resume from OUT.partial/.",
        formatter_class=argparse.RawTextHelpFormatter,
    )
    ch.add_argument(
        "--platform",
        help=f"built-in platform name or platform .toml (default {api_default(characterize, 'platform')})",
    )
    ch.add_argument(
        "--backend",
        choices=["sim", "linux"],
        help="sim (default): the simulator; linux: this board (root; cpufreq sysfs and perf_event_open)",
    )
    ch.add_argument("--out", required=True, help="output Parquet file")
    _board_options("characterize", ch, ("plan",))
    ch.add_argument("--jobs", type=int, help="parallel simulated runs (default: number of CPUs)")
    ch.add_argument("--executor", metavar="SPEC", help=EXECUTOR_HELP)
    board = ch.add_argument_group("--backend linux only (the options of hetlabd characterize)")
    ch.set_defaults(
        func=cmd_characterize, board_dests=_board_options("characterize", board, ("board",), ("--platform",))
    )

    for name, what, func in (
        ("chase", "native pointer-chase microbenchmark on this machine (ns and cycles per access)", cmd_chase),
        (
            "pingpong",
            "inter-core latency on this machine (--backend linux) and in the model (ns per one-way transfer)",
            cmd_pingpong,
        ),
        (
            "govern",
            "run a governor as a daemon on this board (cpufreq sysfs + perf_event_open); restores on exit",
            cmd_govern,
        ),
    ):
        p = sub.add_parser(
            name,
            help=what,
            description=_core.board_command(name)["about"],
            formatter_class=argparse.RawTextHelpFormatter,
        )
        _board_options(name, p, ("output", "plan", "board"))
        if name == "pingpong":
            p.add_argument(
                "--backend", choices=("linux", "sim"), default="linux", help="measure here, or only the model"
            )
            p.add_argument("--platform", default=api.DEFAULT_PLATFORM, help="the platform whose model is printed")
        p.set_defaults(func=func)
