"""The `rcu-amp` reproduction: seed 002 (McKenney, Eggemann, Randhawa, "Improving Energy Efficiency
On Asymmetric Multiprocessing Systems", 2013): RCU callback offload (`rcu_nocbs=`) and enforced
idle (RCU_FAST_NO_HZ) on the ARM TC2 (2x Cortex-A15 + 3x Cortex-A7) under the big.LITTLE MP
scheduler, six benchmarks of fixed work.

This module owns what is specific to the seed: its benchmarks and four kernel configurations,
what it reads off each run (energy from the TC2 cluster meters, wake-ups per CPU, cluster
power-down residency, where the RCU work ran), its claims, the sensitivity sweep over the
callback rate and HZ, charts and report sections. The mechanisms are the simulator's
(`kernel::rcu`, `engine::kernel_work`, `data/platforms/tc2.toml`, the six workloads' TOML files).
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hetlab import _core, api
from hetlab.experiment import Benchmark, Chart, Claim, Config, Context, Experiment, Metric, Prepared, Table

if TYPE_CHECKING:
    import pandas as pd

    from hetlab.experiment import ChartData

TC2 = "tc2"
A15_CPUS, A7_CPUS = (0, 1), (2, 3, 4)  # tc2.toml: cpu0-1 A15, cpu2-4 A7
CLUSTERS = ("a15", "a7")

DESCRIPTION = """\
Six benchmarks of fixed work (seed 002 §5) on the TC2 (tc2), big.LITTLE MP (hmp: LSK's 512/256
thresholds of the seed's date), ondemand, cpuidle with cluster power-down, HZ=100, 5 seeds each:

  cyclictest, sysbench, andebench2, andebench8, audio, audio-bbench (data/workloads/*.toml;
  their RCU callback rates and costs are stated assumptions)

under four kernel configurations:
  reference    stock RCU: callbacks run in RCU_SOFTIRQ where queued; idle CPUs holding
               callbacks keep their tick every jiffy
  nocb         rcu_nocbs=0-1: the A15s' callbacks go to rcuo kthreads pinned to the A7s
  fast-no-hz   rcu_fast_no_hz: an idle CPU with callbacks wakes every 4 jiffies (6 s if lazy)
  both         the two together

Outputs: runs.csv (energy from the cluster meters, time, wake-ups per CPU per second, cluster
power-down residency, RCU work on A15 vs A7), summary.csv (energy and time mean/min/max per
benchmark and configuration), summary.md, report.md (the seed's claims judged from the runs,
benefits and range overlaps, the sensitivity of the benefits to the callback rate and HZ), PNG
figures."""

BENCHMARK_NAMES = ("cyclictest", "sysbench", "andebench2", "andebench8", "audio", "audio-bbench")
GROUP = "tc2"
BENCHMARKS = tuple(Benchmark(name, name, name, GROUP) for name in BENCHMARK_NAMES)

# The seed's kernel: Rasmussen's MP patches (hmp with tc2.toml's [hmp]), stock idle states.
# ASSUMPTION: ondemand (the Linaro TC2 images' default; the seed names no governor).
COMMON = {"scheduler": "hmp", "governor": "ondemand", "cpuidle": "cluster-off"}
NOCBS = f"rcu_nocbs={A15_CPUS[0]}-{A15_CPUS[-1]}"
CONFIGS = (
    Config("reference", "reference: stock RCU and idle", {**COMMON, "kernel": ""}, colour="#7f7f7f"),
    Config("nocb", f"RCU processing offload ({NOCBS}, rcuo on the A7s)", {**COMMON, "kernel": NOCBS}, colour="#1f77b4"),
    Config("fast-no-hz", "enforced idle (rcu_fast_no_hz)", {**COMMON, "kernel": "rcu_fast_no_hz"}, colour="#ff7f0e"),
    Config(
        "both",
        "both (not in the seed's table: its 'preliminary results')",
        {**COMMON, "kernel": f"{NOCBS},rcu_fast_no_hz"},
        paper=False,
        colour="#2ca02c",
    ),
)
BASELINE = "reference"
METHODS = ("nocb", "fast-no-hz", "both")

# --- what each run gives (runs.csv columns) -----------------------------------------------------


def run_columns(bench: Benchmark, config: Config, r: api.SimResult) -> dict:
    """TC2's meters measure the two cluster rails (their Jcore energy counters, read before and
    after: the exact integral), so `energy_j` is the clusters' energy; then the wake-ups, the
    residencies and where RCU's work ran."""
    s = r.summary
    t = max(r.time_s, 1e-9)
    clusters = {c["name"]: (c, j) for c, j in zip(s["clusters"], s["energy"]["clusters_j"])}
    row: dict = {"energy_j": sum(j for _, j in clusters.values())}
    row["edp_js"] = row["energy_j"] * r.time_s
    for i, c in enumerate(s["cpus"]):
        row[f"wakeups_cpu{i}_per_s"] = c["wakeups"] / t
    for name in CLUSTERS:
        c, _ = clusters[name]
        row[f"off_share_{name}"] = c["off_s"] / t
        row[f"power_downs_{name}"] = c["power_downs"]
    rcu = s.get("rcu") or {}
    softirq = rcu.get("softirq_s", [0.0] * len(s["cpus"]))
    rcuo = [0.0] * len(s["cpus"])
    for th in s["threads"]:
        if th["name"].startswith("rcuop/"):
            rcuo = [a + b for a, b in zip(rcuo, th["cpu_time_on_s"])]
    row["rcu_a15_ms"] = 1000 * sum(softirq[c] + rcuo[c] for c in A15_CPUS)
    row["rcu_a7_ms"] = 1000 * sum(softirq[c] + rcuo[c] for c in A7_CPUS)
    # where the scheduler ran the benchmark's own threads: a configuration may move them
    # (HMP migrates by load, which follows the clock ondemand chose)
    user = [th for th in s["threads"] if not th["name"].startswith("rcuop/")]
    row["threads_a15_ms"] = 1000 * sum(th["cpu_time_on_s"][c] for th in user for c in A15_CPUS)
    row["rcu_callbacks"] = rcu.get("callbacks_queued", 0)
    row["rcu_idle_ticks"] = sum(rcu.get("idle_ticks", []))
    row["grace_periods"] = rcu.get("grace_periods", 0)
    return row


METRICS = (
    Metric("energy_j", "energy (TC2 cluster meters: A15 + A7 rails)", "J"),
    Metric("time_s", "run time", "s"),
)

# --- the sensitivity sweep (prepare) ------------------------------------------------------------

RATE_FACTORS = (0.25, 1.0, 4.0)  # every call_rcu_per_s of every workload, times this
COST_FACTORS = (0.25, 4.0)  # every rcu_callback_us, times this (at rate factor 1, HZ 100)
HZ_VALUES = (100, 250, 1000)  # CONFIG_HZ of the TC2 (tc2.toml: 100)


@dataclass
class Sweep(Prepared):
    """The sensitivity sweep's points: (rate factor, cost factor, HZ) -> config -> benchmark ->
    (energy J, time s)."""

    points: dict[tuple[float, float, int], dict[str, dict[str, tuple[float, float]]]] = field(default_factory=dict)
    seed: int = 1
    sweep_seeds: tuple[int, ...] = (1, 2, 3)  # each sweep point's energy and time: their mean
    # the warm-up: per benchmark, each cluster's steady temperature under it, °C
    start_temps: dict[str, list[float]] = field(default_factory=dict)


def _scaled_workload(name: str, rate: float, cost: float) -> str:
    text = _core.builtin_workload_text(name)
    for key, factor in (("call_rcu_per_s", rate), ("rcu_callback_us", cost)):
        text = re.sub(
            rf"^{key} = ([0-9.eE+-]+)", lambda m, k=key, f=factor: f"{k} = {float(m[1]) * f!r}", text, flags=re.M
        )
    return text


def _platform_at(hz: int) -> str:
    text = _core.builtin_platform_text(TC2)
    return re.sub(r"^hz = \d+", f"hz = {hz}", text, count=1, flags=re.M)


def _warm_up(ctx: Context, sweep: Sweep) -> None:
    """The seed ran the board ten minutes before measuring, to a steady temperature. Per
    benchmark: one reference run gives each cluster's mean power P; its thermal node's steady
    state is ambient + R x P (tc2.toml's R; ten minutes are over a hundred of its time constants),
    where every configuration's runs of that benchmark then start."""
    import tomllib

    board = tomllib.loads(api.load_platform(ctx.platform).text)
    ambient = float(board["thermal"]["ambient_c"])
    resistance = [float(c["thermal_resistance_c_per_w"]) for c in board["clusters"]]
    reference = next(c for c in CONFIGS if c.name == BASELINE)
    for bench in BENCHMARK_NAMES:
        r = api.simulate(ctx.platform, bench, seed=sweep.seed, **reference.options)
        t = max(r.time_s, 1e-9)
        power_w = [j / t for j in r.summary["energy"]["clusters_j"]]
        sweep.start_temps[bench] = [round(ambient + k * w, 3) for k, w in zip(resistance, power_w)]


def simulate_options(bench: Benchmark, config: Config, prepared: Prepared) -> dict:
    """Every run starts from the warmed-up board."""
    temps = prepared.start_temps.get(bench.name, []) if isinstance(prepared, Sweep) else []
    return {**bench.options, **config.options, "start_temp_c": temps}


def prepare(plan: object, out: Path, ctx: Context) -> Sweep:
    """The warm-up temperatures, then the sensitivity sweep: every benchmark under every configuration with the callback
    rates scaled (at HZ 100) and at other HZ (rates as stated), one seed. The varied files are
    written to a temporary directory and removed."""
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.perf_counter()
    sweep = Sweep()
    _warm_up(ctx, sweep)
    sweep.timings_s["warm-up"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    points = (
        [(f, 1.0, 100) for f in RATE_FACTORS]
        + [(1.0, k, 100) for k in COST_FACTORS]
        + [(1.0, 1.0, hz) for hz in HZ_VALUES if hz != 100]
    )
    with tempfile.TemporaryDirectory(prefix="hetlab-rcu-amp-") as tmp:
        files = {}
        for f, k, hz in points:
            p = Path(tmp) / f"tc2-hz{hz}.toml"
            p.write_text(_platform_at(hz))
            for name in BENCHMARK_NAMES:
                w = Path(tmp) / f"{name}-rate{f}-cost{k}.toml"
                w.write_text(_scaled_workload(name, f, k))
                files[(f, k, hz, name)] = (str(p), str(w))
        jobs = [(pt, c, name) for pt in points for c in CONFIGS for name in BENCHMARK_NAMES]

        def one(job):
            (f, k, hz), config, name = job
            platform, workload = files[(f, k, hz, name)]
            runs = [
                api.simulate(platform, workload, seed=s, start_temp_c=sweep.start_temps[name], **config.options)
                for s in sweep.sweep_seeds
            ]
            energy = sum(sum(r.summary["energy"]["clusters_j"]) for r in runs) / len(runs)
            return energy, sum(r.time_s for r in runs) / len(runs)

        with ThreadPoolExecutor(max_workers=ctx.jobs or None) as pool:
            results = list(pool.map(one, jobs))
    for (pt, config, name), value in zip(jobs, results):
        sweep.points.setdefault(pt, {}).setdefault(config.name, {})[name] = value
    sweep.timings_s["sensitivity"] = time.perf_counter() - t0
    return sweep


# --- claims -------------------------------------------------------------------------------------


def _values(runs: pd.DataFrame, bench: str, config: str, column: str):
    g = runs[(runs.label == bench) & (runs.config == config)]
    return g[column].to_numpy(dtype=float)


def _benefit(runs: pd.DataFrame, bench: str, config: str, column: str) -> float:
    """% less than the reference's mean (positive: better)."""
    ref = _values(runs, bench, BASELINE, column).mean()
    return 100.0 * (ref - _values(runs, bench, config, column).mean()) / ref


def _overlaps(runs: pd.DataFrame, bench: str, config: str, column: str, other: str = BASELINE) -> bool:
    """The seed's rule: a configuration's [min, max] over the seeds overlaps the reference's (or
    `other`'s)."""
    a, b = _values(runs, bench, config, column), _values(runs, bench, other, column)
    return bool(a.min() <= b.max() and b.min() <= a.max())


def _benches(runs: pd.DataFrame) -> list[str]:
    return [b for b in BENCHMARK_NAMES if (runs.label == b).any()]


def _gains(runs: pd.DataFrame, config: str) -> list[tuple[str, float, bool]]:
    """(benchmark, energy benefit %, distinct from the reference) per benchmark."""
    return [
        (b, _benefit(runs, b, config, "energy_j"), not _overlaps(runs, b, config, "energy_j")) for b in _benches(runs)
    ]


def _list(gains) -> str:
    return ", ".join(f"{b} {g:+.1f} %{'' if d else ' (overlaps)'}" for b, g, d in gains)


def _why(runs: pd.DataFrame, bench: str, config: str) -> str:
    """What moved between the reference and `config` on `bench`, from the runs: RCU's idle
    ticks, the benchmark's threads on the A15s and the two rails."""

    def m(c: str, col: str) -> float:
        return float(_values(runs, bench, c, col).mean())

    return (
        f"{bench} under {config}: RCU idle ticks {m(config, 'rcu_idle_ticks'):.0f} vs "
        f"{m(BASELINE, 'rcu_idle_ticks'):.0f}, its threads on the A15s {m(config, 'threads_a15_ms'):.0f} vs "
        f"{m(BASELINE, 'threads_a15_ms'):.0f} ms, A15 rail {m(config, 'energy_a15_j'):.3f} vs "
        f"{m(BASELINE, 'energy_a15_j'):.3f} J, A7 rail {m(config, 'energy_a7_j'):.3f} vs "
        f"{m(BASELINE, 'energy_a7_j'):.3f} J"
    )


def _losses(runs: pd.DataFrame, configs) -> str:
    """The data behind every distinct energy loss of `configs` (empty if none)."""
    lost = [_why(runs, b, c) for c in configs for b, g, distinct in _gains(runs, c) if distinct and g < 0]
    return ("; distinct losses: " + "; ".join(lost)) if lost else ""


def claims(summary: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    out = []
    nocb, fast, both = (_gains(runs, c) for c in METHODS)
    distinct = {c: [b for b, g, d in gains if d and g > 0] for c, gains in zip(METHODS, (nocb, fast, both))}
    n_ok = [len(distinct["nocb"]) >= 2, len(distinct["fast-no-hz"]) >= 2]
    out.append(
        Claim(
            "Both methods give substantial energy gains",
            "§5: offload's improvements 'are substantial, especially for cyclictest and audio+bbench'; "
            "enforced idle 'provides even better energy efficiency'",
            f"nocb: {_list(nocb)}; fast-no-hz: {_list(fast)}",
            "yes" if all(n_ok) else "partly" if any(n_ok) else "no",
            "a gain counts when it is positive and its range does not overlap the reference's (the seed's rule); "
            "'yes' needs two such benchmarks per method. RCU's share of these benchmarks' energy is small at the "
            "stated rates (the wake-ups it removes are a fraction of the threads' own)"
            + _losses(runs, ("nocb", "fast-no-hz")),
        )
    )
    mean_nocb = sum(g for _, g, _ in nocb) / max(len(nocb), 1)
    mean_fast = sum(g for _, g, _ in fast) / max(len(fast), 1)
    double = [b for b, g, d in fast if g >= 10.0 and d]
    parts = [mean_fast > mean_nocb, bool(double)]
    out.append(
        Claim(
            "Enforced idle saves more than offload, with double-digit gains on some benchmarks",
            "§5: 'even better energy efficiency, with several benchmarks showing double-digit improvements'",
            f"mean gain fast-no-hz {mean_fast:+.1f} % vs nocb {mean_nocb:+.1f} %; double-digit: "
            f"{', '.join(double) or 'none'}",
            "yes" if all(parts) else "partly" if any(parts) else "no",
            "the gain comes from the wake-ups it removes (wakeups_cpu*_per_s, rcu_idle_ticks in runs.csv); "
            "double-digit gains need RCU wake-ups to be a large share of a benchmark's energy",
        )
    )
    worse_than_best = []
    for b in _benches(runs):
        best, single = max((_benefit(runs, b, c, "energy_j"), c) for c in ("nocb", "fast-no-hz"))
        g = _benefit(runs, b, "both", "energy_j")
        if g > best and not _overlaps(runs, b, "both", "energy_j", single):
            worse_than_best.append(f"{b} ({g:+.1f} % vs {single} {best:+.1f} %)")
    out.append(
        Claim(
            "Combining the two does no better than each alone",
            "§6: 'combining enforced idle and RCU processing offload do not result in further improvements'",
            "both beats the better single method with a range apart from it on: "
            + (", ".join(worse_than_best) or "none"),
            "yes" if not worse_than_best else "no",
            "offloaded CPUs hold no callbacks, so fast-no-hz has nothing left to do on them "
            "(the kernel's own interaction, McKenney db4cb768)",
        )
    )
    distinct_time = [
        f"{b}/{c} ({_benefit(runs, b, c, 'time_s'):+.1f} %)"
        for b in _benches(runs)
        for c in METHODS
        if not _overlaps(runs, b, c, "time_s") and _benefit(runs, b, c, "time_s") < 0
    ]
    out.append(
        Claim(
            "Durations are not unambiguously degraded",
            "§5: 'all of the test-duration measurements show overlap'",
            "longer with a distinct range: " + (", ".join(distinct_time) or "none"),
            "yes" if not distinct_time else "partly" if len(distinct_time) <= 2 else "no",
            "a longer run comes from callbacks run later (4-jiffy timer) or rcuo kthreads competing for the A7s",
        )
    )
    return out


# --- report sections ----------------------------------------------------------------------------


def _mean(runs: pd.DataFrame, bench: str, config: str, column: str) -> float:
    return float(_values(runs, bench, config, column).mean())


def runs_sections(summary: pd.DataFrame, runs: pd.DataFrame, prepared: Prepared) -> list[list[str]]:
    benches = _benches(runs)
    table = [
        "## Energy and time against the reference",
        "",
        "Benefit: % below the reference's mean (positive: less energy, shorter run); 'overlap': the "
        "configuration's min-max range over the seeds overlaps the reference's (the seed's 'insufficiently "
        "different').",
        "",
        "| benchmark | config | energy J (min-max) | benefit | overlap | time s (min-max) | benefit | overlap |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b in benches:
        for c in (BASELINE, *METHODS):
            e, t = _values(runs, b, c, "energy_j"), _values(runs, b, c, "time_s")
            if len(e) == 0:
                continue
            if c == BASELINE:
                cells = ["", "", ""]
                tcells = ["", ""]
            else:
                cells = [
                    f"{_benefit(runs, b, c, 'energy_j'):+.1f} %",
                    "yes" if _overlaps(runs, b, c, "energy_j") else "**no**",
                ]
                tcells = [
                    f"{_benefit(runs, b, c, 'time_s'):+.1f} %",
                    "yes" if _overlaps(runs, b, c, "time_s") else "**no**",
                ]
            table.append(
                f"| {b} | {c} | {e.mean():.3f} ({e.min():.3f}-{e.max():.3f}) | {cells[0]} | {cells[1]} | "
                f"{t.mean():.3f} ({t.min():.3f}-{t.max():.3f}) | {tcells[0]} | {tcells[1]} |"
            )
    why = [
        "## Why: wake-ups, residencies and where RCU's work ran",
        "",
        "Means over the seeds. Wake-ups: idle exits per second (threads, RCU's ticks and timers, jitter), "
        "averaged over each cluster's CPUs; RCU idle ticks: ticks taken by idle CPUs because RCU held "
        "callbacks there (fast-no-hz timer wake-ups included), per run; off: share of the run the cluster "
        "spent powered down; RCU work: callback CPU time in RCU_SOFTIRQ and rcuo kthreads, ms per run; threads "
        "on A15: the benchmark's own threads' CPU time on the A15s, ms per run (HMP moves them by load, which "
        "follows the clock ondemand chose, and ondemand samples an idle CPU when it wakes: RCU's ticks change it).",
        "",
        "| benchmark | config | wake-ups/s A15 | wake-ups/s A7 | RCU idle ticks | off A15 | off A7 "
        "| RCU work A15 ms | RCU work A7 ms | threads on A15 ms | callbacks |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for b in benches:
        for c in (BASELINE, *METHODS):
            if not ((runs.label == b) & (runs.config == c)).any():
                continue
            w15 = sum(_mean(runs, b, c, f"wakeups_cpu{i}_per_s") for i in A15_CPUS) / len(A15_CPUS)
            w7 = sum(_mean(runs, b, c, f"wakeups_cpu{i}_per_s") for i in A7_CPUS) / len(A7_CPUS)
            why.append(
                f"| {b} | {c} | {w15:.1f} | {w7:.1f} | {_mean(runs, b, c, 'rcu_idle_ticks'):.0f} | "
                f"{100 * _mean(runs, b, c, 'off_share_a15'):.1f} % | {100 * _mean(runs, b, c, 'off_share_a7'):.1f} % | "
                f"{_mean(runs, b, c, 'rcu_a15_ms'):.2f} | {_mean(runs, b, c, 'rcu_a7_ms'):.2f} | "
                f"{_mean(runs, b, c, 'threads_a15_ms'):.1f} | {_mean(runs, b, c, 'rcu_callbacks'):.0f} |"
            )
    return [table, why, _sensitivity_section(prepared), _warm_up_section(prepared), _method_section()]


def _warm_up_section(prepared: Prepared) -> list[str]:
    if not isinstance(prepared, Sweep) or not prepared.start_temps:
        return []
    lines = [
        "## Warm-up",
        "",
        "Start temperature of each cluster per benchmark (°C): "
        + "; ".join(
            f"{b} {'/'.join(f'{t:.1f}' for t in temps)} ({'/'.join(CLUSTERS)})"
            for b, temps in prepared.start_temps.items()
        )
        + ".",
    ]
    return lines


def _sensitivity_section(prepared: Prepared) -> list[str]:
    if not isinstance(prepared, Sweep) or not prepared.points:
        return []
    lines = [
        "## Sensitivity: callback rate and HZ",
        "",
        "No published call_rcu rate or per-callback cost exists for these benchmarks (shared/reference/"
        "sched-rcu-platforms.md §5.6), and the seed's HZ is not stated. Each row reruns every benchmark "
        f"(seeds {', '.join(map(str, prepared.sweep_seeds))}, their mean) with every workload's call_rcu_per_s "
        "or rcu_callback_us times a factor, or "
        "at another CONFIG_HZ; cells: energy benefit against the reference at that point, mean over the "
        "benchmarks (min .. max).",
        "",
        "| rate factor | cost factor | HZ | " + " | ".join(METHODS) + " |",
        "|---|---|---|" + "---|" * len(METHODS),
    ]
    for (f, k, hz), by_config in sorted(
        prepared.points.items(), key=lambda kv: (kv[0][2], kv[0][1] != 1.0, kv[0][0], kv[0][1])
    ):
        ref = by_config[BASELINE]
        cells = []
        for c in METHODS:
            g = [100.0 * (ref[b][0] - by_config[c][b][0]) / ref[b][0] for b in ref]
            cells.append(f"{sum(g) / len(g):+.1f} % ({min(g):+.1f} .. {max(g):+.1f})")
        lines.append(f"| {f:g} | {k:g} | {hz} | " + " | ".join(cells) + " |")
    return lines


def _method_section() -> list[str]:
    return [
        "## Method and what differs from the seed",
        "",
        "- Board: `tc2` (data/platforms/tc2.toml, every number with its source); energy is the two cluster "
        "rails' (TC2's Jcore meters), time the run's duration.",
        "- Warm-up: the seed ran the board ten minutes first to reach a steady temperature. Here each "
        "benchmark's runs start with every cluster at the steady temperature of that benchmark's mean power "
        "under the reference (one warm-up run; ten minutes are over a hundred thermal time constants of "
        "tc2.toml's clusters); the temperature moves leakage only (no thermal trip on TC2).",
        "- Power: tc2.toml's legacy EAS tables: per-CPU busy power, the cluster's shared logic while any of its "
        "CPUs is busy (`active_mw`), idle-state power and wake-up energy. A cluster's exit latency is charged as "
        "busy time of the waking CPU (the engine's convention for every board), which costs more than the EAS "
        "wake-up energy alone: configurations that power clusters down more often pay for it.",
        "- Ondemand samples from deferrable timers: an idle CPU's sample runs when it next wakes (a thread, "
        "jitter or an RCU tick), so RCU's idle ticks also let ondemand lower an idle cluster's clock sooner.",
        "- RCU: Tree RCU with one node (kernel::rcu): grace periods end when every CPU reported a quiescent "
        "state from its tick or was found idle by the force-quiescent-state scan (3 jiffies); the grace-period "
        "kthread's own wake-ups are not modelled.",
        "- nocb offloads both A15s (`rcu_nocbs=0-1`, as 3.10's RCU_NOCB_CPU_ALL allows; the first no-CBs "
        "kernels, v3.7-3.8, could not offload CPU 0, an A15 on TC2 — the seed's exact list is not stated) and "
        "pins the rcuo kthreads to the A7s, as the seed did.",
        "- The benchmarks' RCU rates and costs are assumptions stated in their files; the sensitivity table "
        "shows how the benefits move with them.",
    ]


# --- charts -------------------------------------------------------------------------------------


def _grouped(ax, data: ChartData, value, ylabel: str, configs=METHODS) -> None:
    """Bars per benchmark, one per configuration, with whiskers from min to max over the seeds."""
    import numpy as np

    runs = data.runs
    benches = _benches(runs)
    width = 0.8 / len(configs)
    colours = {c.name: c.colour for c in data.configs}
    for k, c in enumerate(configs):
        means, lo, hi = [], [], []
        for b in benches:
            v = value(runs, b, c)
            means.append(v.mean())
            lo.append(v.mean() - v.min())
            hi.append(v.max() - v.mean())
        x = np.arange(len(benches)) + (k - (len(configs) - 1) / 2) * width
        ax.bar(x, means, width, yerr=[lo, hi], label=c, color=colours.get(c), capsize=2)
    ax.set_xticks(range(len(benches)))
    ax.set_xticklabels(benches, rotation=20)
    ax.set_ylabel(ylabel)
    ax.axhline(0, color="black", lw=0.8)
    ax.legend(fontsize=8)


def _per_seed_benefit(column: str):
    def value(runs, b, c):
        import numpy as np

        ref = _values(runs, b, BASELINE, column).mean()
        return 100.0 * (ref - np.asarray(_values(runs, b, c, column))) / ref

    return value


def draw_benefits(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    from hetlab.plots import save_figure  # pandas and matplotlib: loaded when a chart is drawn

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    _grouped(a, data, _per_seed_benefit("energy_j"), "energy benefit vs reference, %")
    a.set_title("Energy (cluster meters)")
    _grouped(b, data, _per_seed_benefit("time_s"), "time benefit vs reference, %")
    b.set_title("Duration")
    save_figure(fig, path)


def draw_wakeups(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    from hetlab.plots import save_figure  # pandas and matplotlib: loaded when a chart is drawn

    configs = (BASELINE, *METHODS)

    def per_cluster(cpus):
        def value(runs, b, c):
            return np.mean([_values(runs, b, c, f"wakeups_cpu{i}_per_s") for i in cpus], axis=0)

        return value

    def off(name):
        def value(runs, b, c):
            return 100.0 * _values(runs, b, c, f"off_share_{name}")

        return value

    fig, axes = plt.subplots(2, 2, figsize=(12, 7))
    _grouped(axes[0][0], data, per_cluster(A15_CPUS), "wake-ups per CPU per s", configs)
    axes[0][0].set_title("A15 CPUs: wake-ups from idle")
    _grouped(axes[0][1], data, per_cluster(A7_CPUS), "wake-ups per CPU per s", configs)
    axes[0][1].set_title("A7 CPUs: wake-ups from idle")
    _grouped(axes[1][0], data, off("a15"), "% of the run powered down", configs)
    axes[1][0].set_title("A15 cluster power-down residency")
    _grouped(axes[1][1], data, off("a7"), "% of the run powered down", configs)
    axes[1][1].set_title("A7 cluster power-down residency")
    save_figure(fig, path)


def draw_rcu_work(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    from hetlab.plots import save_figure  # pandas and matplotlib: loaded when a chart is drawn

    configs = (BASELINE, *METHODS)
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    _grouped(a, data, lambda r, bb, c: _values(r, bb, c, "rcu_a15_ms"), "ms per run", configs)
    a.set_title("RCU callback CPU time on the A15s")
    _grouped(b, data, lambda r, bb, c: _values(r, bb, c, "rcu_a7_ms"), "ms per run", configs)
    b.set_title("RCU callback CPU time on the A7s (softirq + rcuo)")
    save_figure(fig, path)


CHARTS = (
    Chart(
        "fig_benefits.png",
        "Energy and time benefit against the reference",
        (GROUP,),
        draw_benefits,
        "Bars: mean over the seeds of the per-seed benefit against the reference's mean; whiskers: min to max.",
    ),
    Chart(
        "fig_wakeups_residency.png",
        "Wake-ups per CPU and cluster power-down residency",
        (GROUP,),
        draw_wakeups,
        "What the energy differences come from: fewer wake-ups of idle CPUs let clusters stay powered down.",
    ),
    Chart(
        "fig_rcu_work.png",
        "Where RCU's callback work ran",
        (GROUP,),
        draw_rcu_work,
        "nocb moves the A15s' callbacks to rcuo kthreads on the A7s.",
    ),
)


EXPERIMENT = Experiment(
    name="rcu-amp",
    title="RCU callback offload and enforced idle on the ARM TC2 (big.LITTLE MP)",
    source="seed 002: McKenney, Eggemann, Randhawa, 'Improving Energy Efficiency On Asymmetric Multiprocessing "
    "Systems', 2013, §5 (Table 1)",
    description=DESCRIPTION,
    method="Each benchmark ran on tc2 with hmp placement, ondemand and cluster power-down",
    platform=TC2,
    benchmarks=BENCHMARKS,
    configs=CONFIGS,
    baseline=BASELINE,
    groups={GROUP: (GROUP,)},
    names_help=", ".join(BENCHMARK_NAMES),
    labels_help="",
    tables=(Table("Seed 002's benchmarks on the TC2", (GROUP,)),),
    figures=(),
    claims=claims,
    reps=5,
    metrics=METRICS,
    wide_summary=True,
    charts=CHARTS,
    run_columns=run_columns,
    prepare=prepare,
    simulate_options=simulate_options,
    runs_sections=runs_sections,
)
