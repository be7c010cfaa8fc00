"""The `hetlab` command line. Every subcommand is a thin wrapper over `hetlab.api`."""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import re
import signal
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hetlab import _core, advise, api, reproduce
from hetlab._files import OutputError, check_output_path, write_output
from hetlab.executor import EXECUTOR_HELP

MAIN_HELP = """\
hetlab: energy and performance management for big.LITTLE SoCs.

The default board is a simulated Samsung Exynos 5422 (Odroid-XU3): 4 Cortex-A7 + 4 Cortex-A15
behind a CCI-400, whose snoops are served at the snooped cluster's clock. A slow idle cluster
makes the busy one stall; the anti-snoop governor fixes that.

examples:
  hetlab simulate --workload ccbench:size=1048576,pattern=random --cluster little \\
      --governor ondemand
  hetlab simulate --workload ccbench:size=1048576,pattern=random --cluster little \\
      --freq little=1400000,big=200000 --reps 5
  hetlab simulate --workload mixed8 --scheduler smp --governor schedutil --trace run.trace
  hetlab simulate --workload mixed8 --scheduler hmp --sched-tunable up_threshold=512
  hetlab governors          # tunables and defaults
  hetlab schedulers         # placement policies and their knobs
"""

SIMULATE_HELP = f"""\
Simulate a workload on a platform and print time, energy (total and per cluster), average
frequency and residency per cluster, and PMC totals.

workload specs:
  ccbench:size=N,pattern=P,iterations=I   ccbench 'caches' pointer chase: N 4-byte elements,
                                          P = random|0, sequential|1, stride-16|16,
                                          I dependent loads (default 10,000,000)
  periodic:run_us=R,period_us=T,duration_us=D,threads=K
  cpu-bound:threads=K,instructions=N
  mixed8, ... (hetlab workloads), or a path to a workload .toml file or an rt-app .json file

limits (hetlab-core's): at most {_core.MAX_THREADS:,} threads per workload; at most 2^53
instructions per phase (ccbench iterations too); a phase's run, sleep, period or duration at
most {int(_core.MAX_PHASE_US):,} µs; a working set or stride at most {_core.MAX_WORKING_SET_BYTES >> 40} TiB;
ccbench size 4..2^34 elements, stride 1..2^34 (ccbench rounds the array up to twice the
stride); --time-limit in (0, {_core.MAX_TIME_LIMIT_S:g}] s; a run whose simulated time stops
advancing is an error. On a terminal, a single run that lasts over a
second shows the simulated time it has reached; Ctrl-C stops it at once.
"""

PROFILE_HELP = """\
Run a real program under valgrind's cache simulator (callgrind --cache-sim=yes) with the cache
geometry of the platform's core types (L1I, L1D: size, ways, line; L2: size, ways), once per LL
size (half the smallest L2 up to four times the largest; the runs go in parallel), and write a
workload .toml in hetlab's grammar: one phase per instruction slice, with its instructions, data
references per instruction, write fraction and up to 4 access components fitted so that the
model's own miss ratios match the measured ones at every size. Each file states its command,
valgrind version, host, date, caveats and the MEASURED MPKI at each platform L2 size. Expect
roughly a 50-100x slowdown per run. cpi and the instruction mix are not measured.

examples:
  hetlab profile --out measured-gcc.toml -- gcc -O2 -c file.c
  hetlab profile --slice-instructions 5e8 -- ffmpeg -threads 1 -i clip.mkv -f null -
  hetlab simulate --workload measured-gcc.toml --cluster little
"""


class CliError(Exception):
    pass


def _per_cluster(text: str, flag: str, example: str) -> dict[str, int]:
    """`CLUSTER=N,CLUSTER=N` as {cluster: N}."""
    out = {}
    for item in api.comma_items(text, flag):
        name, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise CliError(f"{flag} expects {example}; got '{item}'")
        if name.strip() in out:
            raise CliError(f"{flag} gives {name.strip()} twice in '{text}'; give each cluster once")
        out[name.strip()] = int(value)
    return out


def _parse_freq(text: str) -> dict[str, int]:
    return _per_cluster(text, "--freq", "CLUSTER=KHZ[,CLUSTER=KHZ], e.g. little=1400000,big=200000")


def _parse_tunables(items: list[str], flag: str = "--tunable", example: str = "up_threshold=80") -> dict[str, float]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise CliError(f"{flag} expects NAME=VALUE, e.g. {example}; got '{item}'")
        if name.strip() in out:
            raise CliError(f"{flag} sets {name.strip()} twice; give each once")
        out[name.strip()] = number
    return out


def _write(path: str, text: str, what: str = "output") -> None:
    """Writes an output file whole (`-`: standard output), as hetlab._files.write_output says."""
    write_output(path, text, what)


def _progress(total: int, desc: str):
    from tqdm import tqdm

    return lambda it: tqdm(it, total=total, desc=desc, unit="run", disable=None, file=sys.stderr)


class _SimulatedProgress:
    """One line on a terminal's stderr while a single long run goes on: the simulated time it
    has reached and its pace; silent for the first second, and cleared when the run ends."""

    def __init__(self, limit_s: float):
        self.limit_s = limit_s
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, reached_s: float) -> None:
        wall_s = time.monotonic() - self.start
        if wall_s < 1.0:
            return
        print(
            f"\rhetlab: simulated {reached_s:.1f} s of at most {self.limit_s:g} s, "
            f"{reached_s / wall_s:.1f} simulated s per wall s",
            end="",
            file=sys.stderr,
            flush=True,
        )
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _format_run(r: api.SimResult) -> str:
    s = r.summary
    e = s["energy"]
    lines = [
        f"platform {s['platform']}  workload {s['workload']}  seed {s['seed']}  scheduler {s['scheduler']}"
        + ("" if s["switching"] == "gts" else f"  switching {s['switching']} ({s['cpu_switches']} CPU switches)"),
        f"time         {s['time_s']:.6f} s"
        + ("" if s["completed"] else "  (deadlock: see the warning)" if s.get("deadlock") else "  (time limit reached)")
        + (f"  RT throttled {s['rt_throttles']} times" if s["rt_throttles"] else ""),
        f"energy       {e['total_j']:.4f} J  = "
        + "  ".join(f"{c['name']} {j:.4f}" for c, j in zip(s["clusters"], e["clusters_j"]))
        + f"  dram {e['dram_j']:.4f}  board {e['board_j']:.4f}",
        "",
        f"{'cluster':8} {'governor':12} {'avg MHz':>8} {'dyn J':>8} {'static J':>8} {'peak C':>7}"
        "  residency (MHz: % of time)",
    ]
    for c in s["clusters"]:
        total = sum(sec for _, sec in c["residency"]) or 1.0
        res = "  ".join(
            f"{khz // 1000}:{100 * sec / total:.0f}%" for khz, sec in c["residency"] if sec / total >= 0.005
        )
        lines.append(
            f"{c['name']:8} {c['governor']:12} {c['avg_freq_khz'] / 1000:8.0f} {c['dynamic_j']:8.4f} "
            f"{c['static_j']:8.4f} {c['peak_temp_c']:7.1f}  {res}"
        )
    if s.get("taskgroups"):
        lines += ["", f"{'task group':24} {'cpu.shares':>10} {'CPU s':>10}"]
        lines += [f"{g['path']:24} {g['shares']:10d} {g['cpu_time_s']:10.4f}" for g in s["taskgroups"]]
    lines += ["", f"{'PMC totals':10} {'cpu_cycles':>14} {'inst_retired':>14} {'l2d_refill':>12} {'bus_access':>12}"]
    # under a switcher a CPU's counts span both clusters: totals per CPU, not per cluster
    groups = (
        [(c["name"], [p for p in s["cpus"] if p["cluster"] == c["name"]]) for c in s["clusters"]]
        if s["switching"] == "gts"
        else [(f"cpu{p['cpu']}", [p]) for p in s["cpus"] if p["busy_s"] > 0]
    )
    for name, cpus in groups:
        tot = {
            k: sum(p["pmu"][k] for p in cpus) for k in ("cpu_cycles", "inst_retired", "l2d_cache_refill", "bus_access")
        }
        lines.append(
            f"{name:10} {tot['cpu_cycles']:14d} {tot['inst_retired']:14d}"
            f" {tot['l2d_cache_refill']:12d} {tot['bus_access']:12d}"
        )
    rcu = s.get("rcu")
    if rcu:
        lines += [
            "",
            f"RCU {rcu['options'] or '(stock)'}: {rcu['callbacks_queued']} callbacks,"
            f" {rcu['grace_periods']} grace periods, rcuo {rcu['rcuo_callbacks']}",
            f"{'cpu':4} {'softirq cbs':>11} {'softirq ms':>10} {'idle ticks':>10} {'wakeups':>8}",
        ]
        for i, c in enumerate(s["cpus"]):
            lines.append(
                f"{i:<4} {rcu['softirq_callbacks'][i]:11d} {1000 * rcu['softirq_s'][i]:10.3f}"
                f" {rcu['idle_ticks'][i]:10d} {c['wakeups']:8d}"
            )
    if not s["cci_ports"]:
        return "\n".join([*lines, "", "no CCI on this platform"])
    lines += [
        "",
        f"{'CCI port':10} {'si_rrq_hs_any':>14} {'stall_tt_full':>14} {'congestion':>11} {'fetch retries':>13}",
    ]
    for p in s["cci_ports"]:
        lines.append(
            f"S{p['port']} {p['cluster']:7} {p['si_rrq_hs_any']:14d} {p['si_rrq_stall_tt_full']:14d}"
            f" {p['cci_congestion']:11.5f} {p['mi_retry_speculative_fetch']:13d}"
        )
    return "\n".join(lines)


def _deadlock_line(summary: dict, deadlocked: int, runs: int) -> str:
    """One warning line for a run whose threads all ended up waiting on each other."""
    d = summary["deadlock"]
    shown = "; ".join(d["waits"][:4]) + ("; ..." if len(d["waits"]) > 4 else "")
    seeds = f" (in {deadlocked} of {runs} runs; seed {summary['seed']} shown)" if runs > 1 else ""
    then = "the run ended there" if not summary["completed"] else "the run went on to the workload's duration"
    return (
        f"hetlab: warning: deadlock at {d['time_s']:.6f} s{seeds}: every thread waits forever ({shown}); {then}; "
        "check the workload's wait/signal and lock order"
    )


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def _given(**options: Any) -> dict[str, Any]:
    """The options the command line set; the others (None) take the API's defaults."""
    return {name: value for name, value in options.items() if value is not None}


def _default(func: Callable, name: str) -> Any:
    """The default of `func`'s parameter `name`: help texts quote the API's defaults."""
    return inspect.signature(func).parameters[name].default


def cmd_simulate(args: argparse.Namespace) -> int:
    kwargs = _given(
        platform=args.platform,
        workload=args.workload,
        cluster=args.cluster,
        governor=args.governor,
        freq=_parse_freq(args.freq) if args.freq else None,
        tunables=_parse_tunables(args.tunable) if args.tunable else None,
        offline=api.comma_items(args.offline, "--offline") if args.offline is not None else None,
        scheduler=args.scheduler,
        switching=args.switching,
        sched_tunables=_parse_tunables(args.sched_tunable, "--sched-tunable", "up_threshold=512")
        if args.sched_tunable
        else None,
        cpuidle=args.cpuidle,
        cpu_dma_latency_us=args.cpu_dma_latency_us,
        model=args.model,
        perf_cpus=_ints(args.perf_cpus, "--perf-cpus", minimum=0),  # CPU numbers
        perf_period=args.perf_period,
        kernel=args.kernel,
        time_limit_s=args.time_limit,
        seed=args.seed,
    )
    api.check_reps(args.reps, api.DEFAULT_SEED if args.seed is None else args.seed)
    if args.trace == "-" and args.series == "-":
        raise CliError("--trace - and --series - both want standard output; write one of them to a file")
    if args.trace_format and not args.trace:
        raise CliError(f"--trace-format {args.trace_format} lays out a trace; give --trace FILE too")
    _distinct_outputs(
        ("--trace", args.trace),
        ("--trace platform info", args.trace and args.trace != "-" and api.plat_info_path(args.trace)),
        ("--series", args.series),
        ("--report", args.report),
    )
    # outputs that cannot be written fail now, not after the run
    for flag, path in (("--trace", args.trace), ("--series", args.series)):
        if path:
            check_output_path(path, f"{flag} file")
    if args.trace and args.trace != "-":
        check_output_path(api.plat_info_path(args.trace), "--trace platform info")
    if args.report:
        check_output_path(args.report, "--report file")
    if args.governor == "anti-snoop" and args.model is None:
        print(
            f"hetlab: anti-snoop uses the built-in model {api.BUILTIN_MODEL} (the paper's Figure 4 trees, in the "
            "authors' counter scaling); give --model with one `hetlab train` made for this platform",
            file=sys.stderr,
        )
    # a single long run shows the simulated time it reached; several show runs done
    limit_s = args.time_limit if args.time_limit is not None else _default(api.simulate, "time_limit_s")
    reached = _SimulatedProgress(limit_s) if args.reps == 1 and sys.stderr.isatty() else None
    try:
        runs = api.simulate_reps(
            args.reps,
            trace=bool(args.trace),
            trace_format=args.trace_format or _default(api.simulate, "trace_format"),
            intervals=bool(args.report),
            progress=_progress(args.reps, "simulate") if args.reps > 1 else None,
            **kwargs,
            **({"on_progress": reached} if reached else {}),
        )
    finally:
        if reached:
            reached.clear()
    deadlocked = [r for r in runs if r.summary.get("deadlock")]
    if deadlocked:  # a result, but not the workload's: say so beside it
        print(_deadlock_line(deadlocked[0].summary, len(deadlocked), len(runs)), file=sys.stderr)
    # All runs succeeded: now write the outputs.
    if args.trace:
        _write(args.trace, runs[0].trace_text or "", "--trace file")
        if args.trace != "-":
            _write(api.plat_info_path(args.trace), runs[0].plat_info_text or "", "--trace platform info")
    if args.series:
        _write(args.series, runs[0].series_df().to_csv(index=False), "--series file")
    if args.report:
        from hetlab import html_report

        s = runs[0].summary
        title = f"hetlab simulate: {s['workload']} on {s['platform']} (seed {s['seed']})"
        _write(args.report, html_report.run_page(runs[0], title), "--report file")
    # With a data file on standard output, the report goes to standard error.
    out = sys.stderr if "-" in (args.trace, args.series) else sys.stdout
    if args.json:
        if len(runs) == 1:
            print(runs[0].to_json(), file=out)
        else:
            doc = {
                "runs": [r.summary for r in runs],
                "time_s": _stats([r.time_s for r in runs]),
                "energy_j": _stats([r.energy_j for r in runs]),
            }
            print(json.dumps(doc), file=out)
    else:
        print(_format_run(runs[0]), file=out)
        if len(runs) > 1:
            t, e = _stats([r.time_s for r in runs]), _stats([r.energy_j for r in runs])
            seed = runs[0].summary["seed"]
            print(f"\n{len(runs)} runs (seeds {seed}..{seed + len(runs) - 1}):", file=out)
            print(
                f"time    mean {t['mean']:.6f} s  std {t['std']:.6f}  min {t['min']:.6f}  max {t['max']:.6f}", file=out
            )
            print(
                f"energy  mean {e['mean']:.4f} J  std {e['std']:.4f}  min {e['min']:.4f}  max {e['max']:.4f}", file=out
            )
    return 0


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


def _bar(total: int, done: int):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="run", desc="characterize", disable=None, file=sys.stderr)


def _ints(text: str | None, flag: str, minimum: int | None = None) -> list[int] | None:
    """A comma-separated list of integers (at least `minimum`), or None when the option was not given."""
    if text is None:
        return None
    items = api.comma_items(text, flag)
    try:
        values = [int(x) for x in items]
    except ValueError:
        raise CliError(f"{flag} expects comma-separated integers, got '{text}'") from None
    low = [v for v in values if minimum is not None and v < minimum]
    if low:
        raise CliError(f"{flag} expects comma-separated integers of at least {minimum}, got {low[0]}")
    return values


def _words(text: str | None, flag: str) -> list[str] | None:
    return None if text is None else api.comma_items(text, flag)


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
        patterns=_words(args.pattern, "--pattern"),
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
        **_given(
            model=args.model,
            tunables=_parse_tunables(args.tunable) if args.tunable else None,
            duration_s=args.duration,
            counters=args.counters,
            pmu=args.pmu,
            platform=args.platform,
            cluster_names=_words(args.cluster_names, "--cluster-names"),
            sysfs_root=args.sysfs_root,
            procfs_root=args.procfs_root,
        ),
        dry_run=args.dry_run,
        verbose=args.verbose,
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
        **_given(
            platform=args.platform,
            backend=args.backend,
            reps=args.reps,
            patterns=_words(args.patterns, "--patterns"),
            sizes=args.sizes,
            run_s=args.run_s,
            seed=args.seed,
            active_opp=args.active_opp,
            workers=args.jobs,
            executor=args.executor,
            period_us=args.period_us,
            freqs_khz={c: f for c, f in freqs.items() if f is not None} or None,
            chase_cpus=_per_cluster(args.chase_cpu, "--chase-cpu", "CLUSTER=CPU, e.g. little=0,big=4")
            if args.chase_cpu
            else None,
            pmu=args.pmu,
            sysfs_root=args.sysfs_root,
            procfs_root=args.procfs_root,
            cluster_names=_words(args.cluster_names, "--cluster-names"),
        ),
        allow_missing_counters=args.allow_missing_counters,
        progress=_bar,
    )
    print(f"wrote {path}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from hetlab import model_export, train

    out = Path(args.out)
    if out.exists() and not out.is_dir():  # before the training, not after it
        raise CliError(f"--out '{args.out}' exists and is not a directory")
    model = train.train_model(
        args.sweep,
        max_depth=args.max_depth,
        label_rule=args.label_rule,
        seed=args.seed,
        reference=args.reference,
        class_weight=None if args.class_weight == "none" else args.class_weight,
    )
    out.mkdir(parents=True, exist_ok=True)
    files = model_export.write_model(model, out)
    print(model_export.render_text(model, units=True))
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0


def cmd_export_em(args: argparse.Namespace) -> int:
    from hetlab import energy_model

    em = energy_model.energy_model(args.platform)
    if args.format == "debugfs":
        if not args.out or args.out == "-":  # "-" is standard output everywhere else, not a directory
            raise CliError("--format debugfs writes a directory tree: give it with --out DIR")
        energy_model.write_debugfs(em, args.out)
        print(f"wrote {args.out} (laid out like /sys/kernel/debug/energy_model)")
        return 0
    text = energy_model.toml_tables(energy_model.domains_of(em), f"exported from {em['platform']} by hetlab")
    _write(args.out or "-", text, "energy model tables")
    return 0


def cmd_import_em(args: argparse.Namespace) -> int:
    from hetlab import energy_model

    _write(args.out or "-", energy_model.toml_tables(energy_model.read_debugfs(args.dir), f"read from {args.dir}"))
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
            _core.platform_summary(None, "platform from-board", text)
        except ValueError as e:
            raise CliError(f"{em_dir}: the energy model does not fit the board's cpufreq policies: {e}") from None
    _write(args.out or "-", text, "platform")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from hetlab import html_report

    out = Path(args.out) if args.out else Path(args.dir) / html_report.REPORT_HTML
    text = html_report.experiment_page(args.dir)
    _write(str(out), text)
    print(f"wrote {out}")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    from hetlab import profile

    if args.out:
        check_output_path(args.out, "workload profile")
    command = args.command_argv[1:] if args.command_argv[:1] == ["--"] else args.command_argv
    name = Path(args.out).stem if args.out and args.out != "-" else None
    text = profile.profile(
        command,
        platform=args.platform,
        slices=args.slices,
        slice_instructions=args.slice_instructions,
        name=name,
        description=args.description,
        progress=profile.stderr_progress,
    )
    _write(args.out or "-", text, "workload profile")
    if args.out and args.out != "-":
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def cmd_show_model(args: argparse.Namespace) -> int:
    from hetlab import model_export

    if args.model == api.BUILTIN_MODEL:
        model = json.loads(_core.builtin_model_json(args.model))
    else:
        path = Path(args.model)
        model = model_export.read_model(path / "model.json" if path.is_dir() else path)
    print(model_export.render_text(model, units=True))
    return 0


class OneLineParser(argparse.ArgumentParser):
    """argparse with the command line's one error form: `hetlab: error: ...` on one line
    instead of a usage block. Subparsers are made of the same class (argparse uses the parent's
    type), so every subcommand and every option's type conversion reports this way."""

    def error(self, message: str):
        # a hetlabd option's own line (see _BoardValue), which names the option: as hetlabd says it
        own = re.match(r"^argument (--[\w-]+): (\1 .*)$", message)
        if own:
            print(error_line(own.group(2)), file=sys.stderr)
            raise SystemExit(2)
        # "argument --seed: invalid int value: 'nan'" -> "--seed expects a whole number, got 'nan'"
        message = re.sub(r"^argument ([^:]+): ", r"\1: ", message)
        message = re.sub(r": invalid int value: ", " expects a whole number, got ", message)
        message = re.sub(r": invalid float value: ", " expects a number, got ", message)
        print(error_line(f"{message} (see {self.prog} --help)"), file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="hetlab", description=MAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    from hetlab import __version__

    parser.add_argument("--version", action="version", version=f"hetlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sim = sub.add_parser(
        "simulate",
        help="simulate a workload",
        description=SIMULATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sim_default = functools.partial(_default, api.simulate)
    sim.add_argument(
        "--platform", help=f"built-in platform name or platform .toml (default: {sim_default('platform')})"
    )
    sim.add_argument(
        "--workload", help=f"workload spec, name, .toml or rt-app .json (see above; default: {sim_default('workload')})"
    )
    sim.add_argument("--cluster", help="run every task on this cluster only (little or big), like taskset")
    sim.add_argument(
        "--governor",
        help="governor for every cluster, or all-max / idle-min "
        f"(default: {sim_default('governor')}; list: hetlab governors)",
    )
    sim.add_argument(
        "--tunable",
        action="append",
        metavar="NAME=VALUE",
        help="governor tunable with its sysfs name, e.g. up_threshold=80 (repeatable)",
    )
    sim.add_argument(
        "--freq",
        metavar="CLUSTER=KHZ,...",
        help="fix clusters' frequencies in kHz (userspace governor), e.g. little=1400000,big=200000",
    )
    sim.add_argument(
        "--offline",
        metavar="CLUSTER,...",
        help="hotplug these clusters' CPUs off: powered down, CCI port disabled, never snooped",
    )
    sim.add_argument(
        "--scheduler",
        choices=[s["name"] for s in api.schedulers()],
        help=f"task placement (default: {sim_default('scheduler')}; list: hetlab schedulers)",
    )
    sim.add_argument(
        "--switching",
        choices=[m["name"] for m in api.switching_modes()],
        help=f"which cores the OS's CPUs run on (default: {sim_default('switching')}): gts, every core; iks, the "
        "in-kernel switcher (one CPU per big/LITTLE pair, moved by the frequency asked on the virtual OPP table, "
        "LITTLE kHz halved); cluster-switching, one cluster online, switched whole (list: hetlab schedulers)",
    )
    sim.add_argument(
        "--sched-tunable",
        action="append",
        metavar="NAME=VALUE",
        help="placement tunable with its sysfs name, e.g. up_threshold=512 for hmp (repeatable)",
    )
    sim.add_argument(
        "--cpuidle",
        choices=["wfi", "cluster-off"],
        help=f"idle states (default: {sim_default('cpuidle')}): wfi, idle clusters stay powered and are snooped, as on "
        "the seed paper's board; cluster-off, cpuidle powers idle cores and clusters down (the platform's "
        "power-down states) when it expects the idle to outlast their target residency",
    )
    sim.add_argument(
        "--cpu-dma-latency-us",
        type=int,
        metavar="US",
        help="PM QoS latency limit, as a process holding /dev/cpu_dma_latency asks it: cpuidle enters no state "
        f"whose exit latency is longer than US µs (0: WFI only; 0 <= US <= {_core.MAX_CPU_DMA_LATENCY_US}; default: "
        "no limit)",
    )
    sim.add_argument("--model", help="anti-snoop model: lctes2020-fig4 (default) or a trained model.json")
    sim.add_argument(
        "--perf-cpus",
        metavar="CPU,...",
        help="run `perf record -a -e instructions -C CPUS -c PERIOD` beside the workload: each counter overflow on "
        "these CPUs costs them the platform's perf_sample cost (seed 003's big.LITTLE emulation, e.g. 1,3)",
    )
    sim.add_argument(
        "--perf-period",
        type=int,
        metavar="N",
        help=f"instructions per perf sample, perf record -c (default: {sim_default('perf_period')})",
    )
    sim.add_argument(
        "--kernel",
        metavar="OPTIONS",
        help="RCU boot options as the kernel names them, comma-separated: rcu_nocbs=CPUS (callbacks of those CPUs "
        "go to rcuo kthreads on the LITTLE CPUs; rcuo_affinity=CPUS moves them), rcu_fast_no_hz (an idle CPU with "
        "callbacks wakes every 4 jiffies, not every jiffy); e.g. rcu_nocbs=0-1,rcu_fast_no_hz",
    )
    sim.add_argument(
        "--seed",
        type=int,
        help=f"random seed; the same seed gives byte-identical results (default: {sim_default('seed')})",
    )
    sim.add_argument(
        "--reps",
        type=int,
        default=1,
        help=f"repetitions with seeds seed, seed+1, ... run in parallel, at most {api.MAX_REPS} (default: 1)",
    )
    sim.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        help=f"stop after S simulated seconds, 0 < S <= {_core.MAX_TIME_LIMIT_S:g} "
        f"(default: {sim_default('time_limit_s'):g})",
    )
    sim.add_argument("--json", action="store_true", help="print the JSON summary (with --reps: all runs plus mean/std)")
    sim.add_argument(
        "--trace",
        metavar="FILE",
        help="write an ftrace text trace (opens in Perfetto UI and LISA) of the first run, and LISA's platform"
        " info beside it (FILE.plat_info.yml); - writes the trace alone to standard output",
    )
    sim.add_argument(
        "--trace-format",
        choices=api.TRACE_FORMATS,
        help="the --trace file's layout: ftrace (default), the kernel's trace file, for Perfetto UI and LISA's"
        " HRTxtTraceParser; trace-cmd, as `trace-cmd report -R` prints it, for LISA's TxtTraceParser (its rt-app"
        " analysis reads the rt-app markers directly)",
    )
    sim.add_argument(
        "--series",
        metavar="FILE",
        help="write the per-sample time series of the first run as CSV (pandas.read_csv); - for standard output",
    )
    sim.add_argument(
        "--report",
        metavar="FILE",
        help="write a self-contained HTML page of the first run (frequency per policy, power per rail, snoop "
        "latency, where each thread ran, migrations); opens from disk in any browser",
    )
    sim.set_defaults(func=cmd_simulate)

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
        help=f"built-in platform name or platform .toml (default {_default(characterize, 'platform')})",
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

    tr = sub.add_parser(
        "train",
        help="train the anti-snoop model from a characterization sweep",
        description="Label each configuration with a Student's t-test of its run times against a reference "
        "configuration (p < 0.05 and slower: the idle cluster must speed up), then learn one entropy decision tree "
        "per cluster over the other cluster's CCI congestion and the memory access of its processes. Writes "
        "model.json (load with --model), model.h (integer-only C), model.dot (Graphviz) and model.txt.",
    )
    tr.add_argument(
        "sweep", help="the Parquet file of hetlab characterize, or the CSV (FILE.csv) of hetlabd characterize"
    )
    tr.add_argument("--out", required=True, help="output directory")
    tr.add_argument(
        "--max-depth", type=int, default=3, help="tree depth (default: 3; the paper used 2, see docs/training.md)"
    )
    tr.add_argument(
        "--label-rule",
        default="significant",
        choices=["significant", "paper-literal"],
        help="significant: increase iff p < 0.05 and slower (default);"
        " paper-literal: increase iff p > 0.05, the paper's text read literally",
    )
    tr.add_argument(
        "--reference",
        default="idle-max",
        choices=["idle-max", "both-max"],
        help="t-test reference: same active frequency with the idle cluster at max (default), or both clusters at max",
    )
    tr.add_argument(
        "--class-weight", default="none", choices=["none", "balanced"], help="class weighting (default: none)"
    )
    tr.add_argument("--seed", type=int, default=0, help="seed of the tree fit and the held-out split")
    tr.set_defaults(func=cmd_train)

    sm = sub.add_parser("show-model", help="print a trained model's trees with thresholds in the features' units")
    sm.add_argument(
        "model",
        help=f"model.json, the directory hetlab train wrote, or {api.BUILTIN_MODEL} (the paper's Figure 4 trees)",
    )
    sm.set_defaults(func=cmd_show_model)

    pl = sub.add_parser(
        "platform", help="a platform from a board, its energy model in and out (from-board, export-em, import-em)"
    )
    pl_sub = pl.add_subparsers(dest="platform_command", metavar="COMMAND", required=True)
    ex = pl_sub.add_parser(
        "export-em",
        help="write a platform's energy model as /sys/kernel/debug/energy_model shows it, or as platform tables",
        description="Writes the Energy Model the kernel would build for PLATFORM (its [[energy_model]] tables, else "
        "the derivation from its OPPs and dynamic-power coefficient): --format debugfs, a directory tree laid out "
        "like /sys/kernel/debug/energy_model on Linux 5.10 (what LISA's LinuxEnergyModel reads from a board); "
        "--format toml, [[energy_model]] tables for a platform file.",
    )
    ex.add_argument("platform", metavar="PLATFORM", help="built-in platform name or platform .toml")
    ex.add_argument("--format", choices=["toml", "debugfs"], default="toml", help="(default: toml)")
    ex.add_argument("--out", metavar="PATH", help="toml: a file (default: stdout); debugfs: a new directory")
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

    rp = sub.add_parser(
        "report",
        help="write the HTML page of a reproduction's outputs (claims, vector figures, every run)",
        description="Writes one self-contained HTML page for the folder `hetlab reproduce` wrote: report.md's "
        "claims, notes and tables, its figures redrawn as vectors from the runs, and a drill-down of every run. "
        "It opens from disk with no network.",
    )
    rp.add_argument("dir", metavar="DIR", help="the folder `hetlab reproduce` wrote")
    rp.add_argument("--out", metavar="FILE", help="where the page goes (default: DIR/report.html)")
    rp.set_defaults(func=cmd_report)

    pf = sub.add_parser(
        "profile",
        help="measure a real program's cache behaviour (valgrind) and write it as a workload .toml",
        description=PROFILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pf.add_argument(
        "--platform", default=_core.DEFAULT_PLATFORM, help="whose caches to simulate (default: %(default)s)"
    )
    slicing = pf.add_mutually_exclusive_group()
    slicing.add_argument(
        "--slices", type=int, metavar="N", help="cut the run into N phases of equal length (default 4)"
    )
    slicing.add_argument(
        "--slice-instructions", type=float, metavar="N", help="cut the run into phases of about N instructions"
    )
    pf.add_argument("--out", metavar="FILE.toml", help="where the workload goes (default: stdout)")
    pf.add_argument("--description", metavar="TEXT", help="the workload's description (default: the command)")
    pf.add_argument("command_argv", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    pf.set_defaults(func=cmd_profile)

    reproduce.configure_parser(
        sub.add_parser(
            "reproduce",
            help="reproduce a seed document's experiment (tables, figures, report.md); --list names them",
        )
    )

    advise.configure_parser(
        sub.add_parser(
            "advise",
            help="simulate a workload's candidate configurations and recommend one for an objective",
        )
    )

    sub.add_parser("platforms", help="list built-in platforms").set_defaults(func=cmd_platforms)
    gov = sub.add_parser("governors", help="list governors with their tunables and defaults")
    gov.add_argument("--json", action="store_true")
    gov.set_defaults(func=cmd_governors)
    sch = sub.add_parser("schedulers", help="list placement policies with their tunables and defaults")
    sch.add_argument("--json", action="store_true")
    sch.set_defaults(func=cmd_schedulers)
    sub.add_parser("workloads", help="list workload generators and built-in workloads").set_defaults(func=cmd_workloads)
    return parser


def error_line(message: object) -> str:
    """`hetlab: error: MESSAGE` on one line: control characters a user's value brought in
    (a newline in an option) are shown escaped."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(message).strip())
    return f"hetlab: error: {text}"


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt."""


def _distinct_outputs(*outputs: tuple[str, str | None]) -> None:
    """Each output its own file: two options naming one file would have the second overwrite
    the first (the same path, or two names of one file through a link)."""
    seen: dict[str, str] = {}
    for flag, path in outputs:
        if not path or path == "-":
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise CliError(f"{seen[key]} and {flag} both name '{path}'; give each output its own file")
        seen[key] = flag


def _raise_terminated(signum, frame):
    raise _Terminated


def _blocks_signals_itself(args: argparse.Namespace) -> bool:
    """Board commands block SIGINT/SIGTERM while they run and read them from a signalfd, to
    restore the policies first: no Python handler for those."""
    return args.command in ("govern", "chase") or getattr(args, "backend", None) == "linux"


def _exit_now(code: int, message: str | None) -> int:
    """Leaves at once: simulations still running in worker threads are not waited for (they
    write nothing; outputs are written only after every run finished)."""
    if message:
        print(message, file=sys.stderr)
    if threading.active_count() == 1:
        return code  # nothing to leave behind: return to the caller (main() called from Python)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    os._exit(code)


def _silence_stdout() -> None:
    """Points standard output at /dev/null, so the interpreter's own flush at exit has nothing
    left to fail on (after a full disk or a closed pipe was reported)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _empty_value(argv: list[str]) -> str | None:
    """The first empty value on the command line (`--report ""`, `--out=`), said as an error:
    it is a shell variable left unset, never "use the default" (which argparse's falsy "" would
    quietly give: no report written, every benchmark run). Arguments after `--` are another
    program's (`hetlab profile -- CMD`)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            return None
        if arg.startswith("--") and arg.endswith("=") and "=" not in arg[:-1]:
            return f"{arg[:-1]} is given an empty value; give a value or leave the option out"
        if arg == "":
            after = argv[i - 1] if i and argv[i - 1].startswith("-") else None
            where = f" after {after}" if after else ""
            return f"an empty argument{where}; give a value or leave the option out"
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    empty = _empty_value(argv)
    if empty:
        print(error_line(empty), file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    previous = None
    if not _blocks_signals_itself(args) and threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return _run(args)
    finally:
        if previous is not None:  # main() called from Python (tests) leaves SIGTERM as it was
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    """Runs the command; every failure becomes one error line and an exit code."""
    try:
        code = args.func(args)
        sys.stdout.flush()  # a full disk or a closed pipe on stdout shows here, not at exit
        return code
    except (CliError, api.HetlabError, OutputError) as e:
        print(error_line(e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader (`| head`) is gone: stop quietly, as a pipeline expects
        _silence_stdout()
        return _exit_now(141, None)
    except _Terminated:
        return _exit_now(143, "hetlab: terminated")
    except KeyboardInterrupt:
        return _exit_now(130, "hetlab: interrupted")
    except UnicodeDecodeError as e:
        print(
            error_line(f"an input file is not UTF-8 text ({e.reason} at byte {e.start}); give a text file"),
            file=sys.stderr,
        )
        return 2
    except OSError as e:
        if e.filename:
            print(error_line(f"cannot use '{e.filename}': {e.strerror or e}"), file=sys.stderr)
        else:
            _silence_stdout()
            print(error_line(f"cannot write standard output: {e.strerror or e}"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
