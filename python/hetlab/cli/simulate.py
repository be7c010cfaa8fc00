"""`hetlab simulate`: one workload on one platform, its outputs (summary, trace, series, HTML
page) and the lines it prints."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

from hetlab import _core, api
from hetlab._files import check_output_path, write_output
from hetlab.cli.values import CliError, api_default, given_options, ints, parse_freq, parse_tunables

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
        + (f"  dsu {e['dsu_j']:.4f}" if s.get("dsu") else "")
        + f"  dram {e['dram_j']:.4f}  board {e['board_j']:.4f}",
        *(
            [
                f"DSU          avg {s['dsu']['avg_khz'] / 1000:.0f} MHz  L3 hits {s['dsu']['l3_hits']:.0f}  "
                f"misses {s['dsu']['l3_misses']:.0f}"
            ]
            if s.get("dsu")
            else []
        ),
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
        "check the workload's wait/signal and lock order and its sources' repeat counts"
    )


def _stats(values: list[float]) -> dict[str, float]:
    import statistics  # several runs only (with fractions and decimal, a few ms of every start)

    return {
        "mean": statistics.fmean(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


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


def _rtapp_log_prefix(args: argparse.Namespace, log_basename: str | None) -> str:
    """The logs' file name prefix for `--rtapp-logs DIR` (checked before the run): the file's
    `log_basename`; a file whose rt-app writes no logs (no `global`, or `log_size` "disable")
    gets rt-app's default name and a note saying so."""
    if not str(args.workload or "").endswith(".json"):
        raise CliError("--rtapp-logs writes rt-app's per-thread logs; give an rt-app file (--workload FILE.json)")
    if not Path(args.rtapp_logs).is_dir():
        raise CliError(f"--rtapp-logs: '{args.rtapp_logs}' is not a directory; create it first, as rt-app's logdir")
    if log_basename is None:
        print(
            "hetlab: warning: rt-app itself writes no logs for this file (no global object, or log_size "
            '"disable"); --rtapp-logs writes them as rt-app-<thread>.log',
            file=sys.stderr,
        )
    return log_basename or "rt-app"


def cmd_simulate(args: argparse.Namespace) -> int:
    kwargs = given_options(
        platform=args.platform,
        workload=args.workload,
        cluster=args.cluster,
        governor=args.governor,
        freq=parse_freq(args.freq) if args.freq else None,
        tunables=parse_tunables(args.tunable) if args.tunable else None,
        offline=api.comma_items(args.offline, "--offline") if args.offline is not None else None,
        scheduler=args.scheduler,
        switching=args.switching,
        sched_tunables=parse_tunables(args.sched_tunable, "--sched-tunable", "up_threshold=512")
        if args.sched_tunable
        else None,
        cpuidle=args.cpuidle,
        cpu_dma_latency_us=args.cpu_dma_latency_us,
        dsu_khz=args.dsu_khz,
        resolve_tolerance=args.resolve_tolerance,
        model=args.model,
        perf_cpus=ints(args.perf_cpus, "--perf-cpus", minimum=0),  # CPU numbers
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
    warnings, log_basename = api.rtapp_notes(args.workload) if args.workload else ([], None)
    for warning in warnings:
        print(f"hetlab: warning: {warning}", file=sys.stderr)
    if args.rtapp_logs:
        log_basename = _rtapp_log_prefix(args, log_basename)
    if args.governor == "anti-snoop" and args.model is None:
        print(
            f"hetlab: anti-snoop uses the built-in model {api.BUILTIN_MODEL} (the paper's Figure 4 trees, in the "
            "authors' counter scaling); give --model with one `hetlab train` made for this platform",
            file=sys.stderr,
        )
    if args.series or args.report:
        # what those outputs are made with, imported before the run (the rest of the command loads
        # neither): a library that fails to load fails here, not after the trace is written
        import pandas  # noqa: F401

        if args.report:
            from hetlab import html_report  # noqa: F401
    # a single long run shows the simulated time it reached; several show runs done
    limit_s = args.time_limit if args.time_limit is not None else api_default(api.simulate, "time_limit_s")
    reached = _SimulatedProgress(limit_s) if args.reps == 1 and sys.stderr.isatty() else None
    try:
        runs = api.simulate_reps(
            args.reps,
            trace=bool(args.trace),
            trace_format=args.trace_format or api_default(api.simulate, "trace_format"),
            intervals=bool(args.report),
            # the series is kept only when a file or the page shows it (memory stays constant)
            series=bool(args.series or args.report),
            rtapp_logs=bool(args.rtapp_logs),
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
        write_output(args.trace, runs[0].trace_text or "", "--trace file")
        if args.trace != "-":
            write_output(api.plat_info_path(args.trace), runs[0].plat_info_text or "", "--trace platform info")
    if args.series:
        write_output(args.series, runs[0].series_df().to_csv(index=False), "--series file")
    if args.rtapp_logs:
        for thread, text in runs[0].rtapp_logs.items():
            write_output(Path(args.rtapp_logs) / f"{log_basename}-{thread}.log", text, "--rtapp-logs file")
    if args.report:
        from hetlab import html_report

        s = runs[0].summary
        title = f"hetlab simulate: {s['workload']} on {s['platform']} (seed {s['seed']})"
        write_output(args.report, html_report.run_page(runs[0], title), "--report file")
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


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab simulate`: the run's options, then its outputs'."""
    sim = sub.add_parser(
        "simulate",
        help="simulate a workload",
        description=SIMULATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_run_options(sim)
    _add_output_options(sim)
    sim.set_defaults(func=cmd_simulate)


def _add_run_options(sim: argparse.ArgumentParser) -> None:
    """What is simulated: platform, workload, governors, placement, idle, kernel, seeds, limits."""
    sim_default = functools.partial(api_default, api.simulate)
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
    sim.add_argument(
        "--dsu-khz",
        type=int,
        metavar="KHZ",
        help="hold a DynamIQ platform's DSU clock (shared L3, snoop filter) at KHZ, one of its [dsu] opps (DSU "
        "DVFS off; default: the platform's [dsu] governor)",
    )
    sim.add_argument(
        "--resolve-tolerance",
        type=float,
        metavar="T",
        help="trade exactness for speed: a cluster whose own threads and clock are unchanged keeps its speeds and "
        "CCI rates until its miss latency (moved by DRAM load) or the bandwidth stretch has moved more than T "
        f"(relative) since they were solved; speeds, rates and power stay within T*(2+T) of the exact model "
        f"(0 <= T <= {_core.MAX_RESOLVE_TOLERANCE:g}; default: {sim_default('resolve_tolerance'):g}, exact)",
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


def _add_output_options(sim: argparse.ArgumentParser) -> None:
    """What is written: the JSON summary, the trace, the series, the HTML page."""
    sim.add_argument("--json", action="store_true", help="print the JSON summary (with --reps: all runs plus mean/std)")
    sim.add_argument(
        "--trace",
        metavar="FILE",
        help="write a trace of the first run (ftrace text by default, which Perfetto UI and LISA open; see "
        "--trace-format), and LISA's platform info beside it (FILE.plat_info.yml); - writes the trace alone to "
        "standard output",
    )
    sim.add_argument(
        "--trace-format",
        choices=api.TRACE_FORMATS,
        help="the --trace file's layout: ftrace (default), the kernel's trace file, for Perfetto UI and LISA's"
        " HRTxtTraceParser; trace-cmd, as `trace-cmd report -R` prints it, for LISA's TxtTraceParser (its rt-app"
        " analysis reads the rt-app markers directly); perfetto, Perfetto's native protobuf trace (sched, frequency"
        " and idle events, named threads, counter tracks with units: power, snoop latency, PELT, capacity)",
    )
    sim.add_argument(
        "--rtapp-logs",
        metavar="DIR",
        help="write rt-app's per-thread logs of the first run into DIR (an rt-app file's threads: "
        "<log_basename>-<thread>.log, rt-app's columns idx perf run period start end rel_st slack c_duration "
        "c_period wu_lat, one row per loop)",
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
