"""The `rcu-amp` reproduction: seed 002 (McKenney, Eggemann, Randhawa, "Improving Energy Efficiency
On Asymmetric Multiprocessing Systems", 2013): RCU callback offload (`rcu_nocbs=`) and enforced
idle (RCU_FAST_NO_HZ) on the ARM TC2 (2x Cortex-A15 + 3x Cortex-A7) under the big.LITTLE MP
scheduler, six benchmarks of fixed work; and the seed's closing hypothesis, that moving the
other deferred work (interrupts and their softirqs, timers, workqueues) off the A15s saves more.

This module owns what is specific to the seed: its benchmarks and configurations, what it reads
off each run (energy from the TC2 cluster meters, wake-ups and IPIs per CPU, cluster power-down
residency, where RCU's and the interrupts' work ran, per CPU), its claims, charts and report
sections. The warm-up and the sensitivity sweep are rcu_amp_sensitivity.py's. The mechanisms are
the simulator's (`kernel::rcu`, `kernel::irq`, `kernel::kthreads`, `data/platforms/tc2.toml`'s
[kernel], the six workloads' TOML files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hetlab import api
from hetlab.experiment import Benchmark, Chart, Claim, Config, Context, Experiment, Metric, Prepared, Table
from hetlab.experiments import rcu_amp_sensitivity as sens
from hetlab.plots import save_figure

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from hetlab.experiment import ChartData

TC2 = "tc2"
A15_CPUS, A7_CPUS = (0, 1), (2, 3, 4)  # tc2.toml: cpu0-1 A15, cpu2-4 A7
CPUS = A15_CPUS + A7_CPUS
CLUSTERS = ("a15", "a7")

DESCRIPTION = """\
Six benchmarks (seed 002 §5) as ARM's workload-automation defines them, on the TC2 (tc2, its
kernel's interrupts, timers, kthreads and RCU modelled where Linux 3.x puts them), big.LITTLE
MP (hmp: LSK's 512/256 thresholds of the seed's date), ondemand, cpuidle with cluster
power-down, HZ=100, 5 seeds each:

  cyclictest (30 s, 8 threads), sysbench (cpu, 10,000 requests), andebench2, andebench8,
  audio (30 s, paced by the codec's interrupts), audio-bbench (11 pages with music)

under six kernel configurations (--kernel, named as the kernel names them):
  reference     stock: device interrupts and the broadcast timer on CPU 0 (an A15),
                callbacks run in RCU_SOFTIRQ where queued, idle CPUs holding callbacks tick
  nocb          rcu_nocbs=0-1: the A15s' callbacks to rcuo kthreads pinned to the A7s
  fast-no-hz    rcu_fast_no_hz: an idle CPU with callbacks wakes every 4 jiffies
  both          the two together
  offload       the seed's §7 hypothesis: nocb, plus irqaffinity=2-4 (interrupts, their
                softirqs and the broadcast timer on an A7) and workqueue.unbound_cpus=2-4
  offload-nohz  offload with nohz_full=0-1 (the A15s' timers and the grace-period kthread
                on housekeeping CPUs, as v4.x kernels do it)

Outputs: runs.csv (cluster-meter energy, time, per CPU: wake-ups, IPIs, RCU and interrupt work;
cluster power-down residency), summary.csv (energy and time mean/min/max per benchmark and
configuration), summary.md, sensitivity.csv (every benefit at every unmeasured input),
report.md (the seed's claims judged from the runs, the benefits with their ranges over the
seeds, where the kernel's work ran, the sensitivity tables), PNG figures."""

BENCHMARK_NAMES = ("cyclictest", "sysbench", "andebench2", "andebench8", "audio", "audio-bbench")
GROUP = "tc2"
BENCHMARKS = tuple(Benchmark(name, name, name, GROUP) for name in BENCHMARK_NAMES)

# The seed's kernel: Rasmussen's MP patches (hmp with tc2.toml's [hmp]), stock idle states.
# ASSUMPTION: ondemand (the Linaro TC2 images' default; the seed names no governor).
COMMON = {"scheduler": "hmp", "governor": "ondemand", "cpuidle": "cluster-off"}
NOCBS = f"rcu_nocbs={A15_CPUS[0]}-{A15_CPUS[-1]}"
LITTLE = f"{A7_CPUS[0]}-{A7_CPUS[-1]}"
OFFLOAD = f"{NOCBS},rcuo_affinity={LITTLE},irqaffinity={LITTLE},workqueue.unbound_cpus={LITTLE}"
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
    Config(
        "offload",
        "the seed's §7 hypothesis: interrupts, softirqs, workqueues and callbacks on the A7s",
        {**COMMON, "kernel": OFFLOAD},
        paper=False,
        colour="#9467bd",
    ),
    Config(
        "offload-nohz",
        "offload with nohz_full=0-1 (timers and the grace-period kthread off the A15s)",
        {**COMMON, "kernel": f"{OFFLOAD},nohz_full={A15_CPUS[0]}-{A15_CPUS[-1]}"},
        paper=False,
        colour="#8c564b",
    ),
)
BASELINE = "reference"
METHODS = ("nocb", "fast-no-hz", "both", "offload", "offload-nohz")
SEED_METHODS = ("nocb", "fast-no-hz")

# --- what each run gives (runs.csv columns) -----------------------------------------------------

RCU_KTHREADS = ("rcuop/", "rcu_preempt")


def _per_cpu_kthreads(threads: list[dict], prefixes: tuple[str, ...]) -> list[float]:
    """CPU time per CPU of the kernel threads whose names start with one of `prefixes`, s."""
    out = [0.0] * len(CPUS)
    for th in threads:
        if th["name"].startswith(prefixes):
            out = [a + b for a, b in zip(out, th["cpu_time_on_s"])]
    return out


def run_columns(bench: Benchmark, config: Config, r: api.SimResult) -> dict:
    """TC2's meters measure the two cluster rails (their Jcore energy counters, read before and
    after: the exact integral), so `energy_j` is the clusters' energy; then per CPU the wake-ups,
    IPIs, RCU work (RCU_SOFTIRQ, rcuo and grace-period kthreads) and interrupt work (every source:
    device handlers and softirqs, local and broadcast timers, IPIs, kworkers); the clusters'
    residencies."""
    s = r.summary
    t = max(r.time_s, 1e-9)
    clusters = {c["name"]: (c, j) for c, j in zip(s["clusters"], s["energy"]["clusters_j"])}
    row: dict = {"energy_j": sum(j for _, j in clusters.values())}
    row["edp_js"] = row["energy_j"] * r.time_s
    for name in CLUSTERS:
        c, _ = clusters[name]
        row[f"off_share_{name}"] = c["off_s"] / t
        row[f"power_downs_{name}"] = c["power_downs"]
    rcu = s.get("rcu") or {}
    softirq = rcu.get("softirq_s", [0.0] * len(CPUS))
    rcu_kthreads = _per_cpu_kthreads(s["threads"], RCU_KTHREADS)
    kworkers = _per_cpu_kthreads(s["threads"], ("kworker/",))
    sources = (s.get("interrupts") or {}).get("sources", [])
    for cpu in CPUS:
        row[f"wakeups_cpu{cpu}_per_s"] = s["cpus"][cpu]["wakeups"] / t
        row[f"rcu_cpu{cpu}_ms"] = 1000 * (softirq[cpu] + rcu_kthreads[cpu])
        row[f"irq_cpu{cpu}_ms"] = 1000 * (sum(src["cpu_s"][cpu] for src in sources) + kworkers[cpu])
        row[f"ipis_cpu{cpu}"] = sum(src["count"][cpu] for src in sources if src["name"].startswith("IPI_"))
    row["rcu_a15_ms"] = sum(row[f"rcu_cpu{c}_ms"] for c in A15_CPUS)
    row["rcu_a7_ms"] = sum(row[f"rcu_cpu{c}_ms"] for c in A7_CPUS)
    row["irq_a15_ms"] = sum(row[f"irq_cpu{c}_ms"] for c in A15_CPUS)
    row["irq_a7_ms"] = sum(row[f"irq_cpu{c}_ms"] for c in A7_CPUS)
    # where the scheduler ran the benchmark's own threads: a configuration may move them
    # (HMP migrates by load, which follows the clock ondemand chose)
    user = [th for th in s["threads"] if th["tid"] >= 1000]
    row["threads_a15_ms"] = 1000 * sum(th["cpu_time_on_s"][c] for th in user for c in A15_CPUS)
    row["rcu_callbacks"] = rcu.get("callbacks_queued", 0)
    row["rcu_idle_ticks"] = sum(rcu.get("idle_ticks", []))
    row["grace_periods"] = rcu.get("grace_periods", 0)
    row["gp_kthread_wakes"] = rcu.get("gp_kthread_wakes", 0)
    row["broadcasts"] = sum(sum(src["count"]) for src in sources if src["name"] == "broadcast")
    return row


METRICS = (
    Metric("energy_j", "energy (TC2 cluster meters: A15 + A7 rails)", "J"),
    Metric("time_s", "run time", "s"),
)

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


def _configs(runs: pd.DataFrame, names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c for c in names if (runs.config == c).any())


def _gains(runs: pd.DataFrame, config: str) -> list[tuple[str, float, bool]]:
    """(benchmark, energy benefit %, distinct from the reference) per benchmark."""
    return [
        (b, _benefit(runs, b, config, "energy_j"), not _overlaps(runs, b, config, "energy_j")) for b in _benches(runs)
    ]


def _list(gains) -> str:
    return ", ".join(f"{b} {g:+.1f} %{'' if d else ' (overlaps)'}" for b, g, d in gains)


def _why(runs: pd.DataFrame, bench: str, config: str) -> str:
    """What moved between the reference and `config` on `bench`, from the runs."""

    def m(c: str, col: str) -> float:
        return float(_values(runs, bench, c, col).mean())

    return (
        f"{bench} under {config}: A15 cluster off {100 * m(config, 'off_share_a15'):.1f} % vs "
        f"{100 * m(BASELINE, 'off_share_a15'):.1f} %, A15 power-downs {m(config, 'power_downs_a15'):.0f} vs "
        f"{m(BASELINE, 'power_downs_a15'):.0f}, its threads on the A15s {m(config, 'threads_a15_ms'):.0f} vs "
        f"{m(BASELINE, 'threads_a15_ms'):.0f} ms, A15 rail {m(config, 'energy_a15_j'):.3f} vs "
        f"{m(BASELINE, 'energy_a15_j'):.3f} J, A7 rail {m(config, 'energy_a7_j'):.3f} vs "
        f"{m(BASELINE, 'energy_a7_j'):.3f} J"
    )


def _losses(runs: pd.DataFrame, configs) -> str:
    """The data behind every distinct energy loss of `configs` (empty if none)."""
    lost = [_why(runs, b, c) for c in configs for b, g, distinct in _gains(runs, c) if distinct and g < 0]
    return ("; distinct losses: " + "; ".join(lost)) if lost else ""


def _rcu_share(runs: pd.DataFrame) -> str:
    """How much RCU work the benchmarks had: callbacks and RCU CPU time per run, reference."""
    parts = []
    for b in _benches(runs):
        cb = float(_values(runs, b, BASELINE, "rcu_callbacks").mean())
        ms = float((_values(runs, b, BASELINE, "rcu_a15_ms") + _values(runs, b, BASELINE, "rcu_a7_ms")).mean())
        parts.append(f"{b} {cb:.0f} callbacks, {ms:.2f} ms")
    return "RCU work per reference run: " + ", ".join(parts)


def _substantial(runs: pd.DataFrame) -> Claim:
    nocb, fast = (_gains(runs, c) for c in SEED_METHODS)
    distinct = {c: [b for b, g, d in gains if d and g > 0] for c, gains in zip(SEED_METHODS, (nocb, fast))}
    n_ok = [len(distinct[c]) >= 2 for c in SEED_METHODS]
    return Claim(
        "Both methods give substantial energy gains",
        "§5: offload's improvements 'are substantial, especially for cyclictest and audio+bbench'; "
        "enforced idle 'provides even better energy efficiency'",
        f"nocb: {_list(nocb)}; fast-no-hz: {_list(fast)}",
        "yes" if all(n_ok) else "partly" if any(n_ok) else "no",
        "a gain counts when it is positive and its range does not overlap the reference's (the seed's rule); "
        "'yes' needs two such benchmarks per method. The benchmarks queue callbacks only where their system "
        "calls free RCU-protected objects (derived in each workload file): " + _rcu_share(runs) + ". The sensitivity "
        "section shows the benefits with an Android background queuing 100 and 1000 callbacks per second"
        + _losses(runs, SEED_METHODS),
    )


def _double_digit(runs: pd.DataFrame) -> Claim:
    nocb, fast = (_gains(runs, c) for c in SEED_METHODS)
    mean_nocb = sum(g for _, g, _ in nocb) / max(len(nocb), 1)
    mean_fast = sum(g for _, g, _ in fast) / max(len(fast), 1)
    double = [b for b, g, d in fast if g >= 10.0 and d]
    # fast-no-hz ahead of nocb with ranges apart on some benchmark, and none the other way
    ahead = [b for b in _benches(runs) if not _overlaps(runs, b, "fast-no-hz", "energy_j", "nocb")]
    fast_ahead = [
        b for b in ahead if _benefit(runs, b, "fast-no-hz", "energy_j") > _benefit(runs, b, "nocb", "energy_j")
    ]
    parts = [bool(fast_ahead) and len(fast_ahead) == len(ahead), bool(double)]
    return Claim(
        "Enforced idle saves more than offload (ahead with ranges apart on some benchmark, behind on none), with "
        "double-digit gains on some benchmarks",
        "§5: 'even better energy efficiency, with several benchmarks showing double-digit improvements'",
        f"mean gain fast-no-hz {mean_fast:+.1f} % vs nocb {mean_nocb:+.1f} %; ranges apart: "
        f"{', '.join(ahead) or 'none'} (fast-no-hz ahead on {', '.join(fast_ahead) or 'none'}); double-digit: "
        f"{', '.join(double) or 'none'}",
        "yes" if all(parts) else "partly" if any(parts) else "no",
        "fast-no-hz changes only idle CPUs that hold callbacks (rcu_idle_ticks in runs.csv): a double-digit gain "
        "needs RCU's idle ticks to be a large share of a benchmark's energy",
    )


def _no_better_combined(runs: pd.DataFrame) -> Claim:
    worse_than_best = []
    for b in _benches(runs):
        best, single = max((_benefit(runs, b, c, "energy_j"), c) for c in SEED_METHODS)
        g = _benefit(runs, b, "both", "energy_j")
        if g > best and not _overlaps(runs, b, "both", "energy_j", single):
            worse_than_best.append(f"{b} ({g:+.1f} % vs {single} {best:+.1f} %)")
    return Claim(
        "Combining the two does no better than each alone",
        "§6: 'combining enforced idle and RCU processing offload do not result in further improvements'",
        "both beats the better single method with a range apart from it on: " + (", ".join(worse_than_best) or "none"),
        "yes" if not worse_than_best else "no",
        "offloaded CPUs hold no callbacks, so fast-no-hz has nothing left to do on them "
        "(the kernel's own interaction, McKenney db4cb768)",
    )


def _durations(runs: pd.DataFrame) -> Claim:
    distinct_time = [
        f"{b}/{c} ({_benefit(runs, b, c, 'time_s'):+.1f} %)"
        for b in _benches(runs)
        for c in _configs(runs, SEED_METHODS + ("both",))
        if not _overlaps(runs, b, c, "time_s") and _benefit(runs, b, c, "time_s") < 0
    ]
    return Claim(
        "Durations are not unambiguously degraded",
        "§5: 'all of the test-duration measurements show overlap'",
        "longer with a distinct range: " + (", ".join(distinct_time) or "none"),
        "yes" if not distinct_time else "partly" if len(distinct_time) <= 2 else "no",
        "a longer run comes from callbacks run later (4-jiffy timer) or rcuo kthreads competing for the A7s",
    )


def _hypothesis(runs: pd.DataFrame) -> Claim:
    """§7: offloading the other deferred work too saves more than RCU offload alone."""
    claim = (
        "Moving interrupts, their softirqs, workqueues and callbacks off the A15s (offload) saves more energy than "
        "RCU offload alone (nocb), with a range apart from it, on at least two benchmarks, and loses on none"
    )
    paper = "§7: 'energy efficiency would be further improved if other deferred-work mechanisms (including timers, "
    paper += "work queues, inter-processor interrupts, and softirq handlers) were to offload their work'"
    if not (runs.config == "offload").any():
        return Claim(claim, paper, "–", "not run")
    better, worse = [], []
    for b in _benches(runs):
        g, n = _benefit(runs, b, "offload", "energy_j"), _benefit(runs, b, "nocb", "energy_j")
        apart = not _overlaps(runs, b, "offload", "energy_j", "nocb")
        if apart and g > n:
            better.append(f"{b} {g:+.1f} % vs {n:+.1f} %")
        elif apart and g < n:
            worse.append(f"{b} {g:+.1f} % vs {n:+.1f} %")
    hetlab = f"better: {', '.join(better) or 'none'}; worse: {', '.join(worse) or 'none'}"
    ok = len(better) >= 2 and not worse
    note = "device interrupts and the broadcast timer go to the first CPU of irqaffinity= (GIC routing), so "
    note += "an A15 cluster in power-down is no longer woken for an A7's timer or the codec's FIFO: "
    note += "; ".join(
        _why(runs, b, "offload") for b in _benches(runs) if _benefit(runs, b, "offload", "energy_j") > 1.0
    )
    note += (
        ". The saving is the A15 cluster's power-ups: each is charged its exit latency at busy power on top of "
        "[EAS]'s wake-up energy, and the sensitivity table's 'cluster power-up cost' rows show how much of it that "
        "charge carries"
    )
    if (runs.config == "offload-nohz").any():
        note += (
            ". With nohz_full= too, the A15s' timers go to the A7s: an A15 whose menu governor chose WFI on its "
            "typical idle interval (3.10's menu) is no longer woken by them to choose again, and its cluster stays up"
            + _losses(runs, ("offload-nohz",))
        )
    return Claim(claim, paper, hetlab, "yes" if ok else "partly" if better else "no", note)


def claims(summary: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    return [_substantial(runs), _double_digit(runs), _no_better_combined(runs), _durations(runs), _hypothesis(runs)]


# --- report sections ----------------------------------------------------------------------------


def _mean(runs: pd.DataFrame, bench: str, config: str, column: str) -> float:
    return float(_values(runs, bench, config, column).mean())


def _benefit_table(runs: pd.DataFrame) -> list[str]:
    table = [
        "## Energy and time against the reference",
        "",
        "Benefit: % below the reference's mean (positive: less energy, shorter run), with its range over the seeds "
        "(each seed's run against the reference's mean); 'overlap': the configuration's min-max range overlaps the "
        "reference's (the seed's 'insufficiently different').",
        "",
        "| benchmark | config | energy J (min-max) | benefit (range) | overlap | time s (min-max) | benefit "
        "| overlap |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b in _benches(runs):
        ref = _values(runs, b, BASELINE, "energy_j").mean()
        for c in (BASELINE, *METHODS):
            e, t = _values(runs, b, c, "energy_j"), _values(runs, b, c, "time_s")
            if len(e) == 0:
                continue
            cells, tcells = ["", ""], ["", ""]
            if c != BASELINE:
                per_seed = 100.0 * (ref - e) / ref
                cells = [
                    f"{_benefit(runs, b, c, 'energy_j'):+.1f} % ({per_seed.min():+.1f} .. {per_seed.max():+.1f})",
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
    return table


def _where_table(runs: pd.DataFrame) -> list[str]:
    def cpus(b: str, c: str, col: str, fmt: str) -> str:
        return " / ".join(format(_mean(runs, b, c, col.format(cpu=cpu)), fmt) for cpu in CPUS)

    lines = [
        "## Where the kernel's work ran, and what woke the CPUs",
        "",
        "Means over the seeds, per CPU in the order cpu0 / cpu1 (A15) / cpu2 / cpu3 / cpu4 (A7). RCU: callbacks run "
        "in RCU_SOFTIRQ plus the rcuo and grace-period kthreads, ms per run; interrupts: every interrupt source "
        "(device handlers and their softirqs, the local and broadcast timers, IPIs) plus the kworkers, ms per run; "
        "IPIs: IPI_TIMER (the broadcast timer's) and IPI_RESCHEDULE received, per run; wake-ups: idle exits per "
        "second; off: the share of the run the cluster spent powered down.",
        "",
        "| benchmark | config | RCU ms | interrupts ms | IPIs | wake-ups/s | A15 off | A7 off | A15 power-downs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for b in _benches(runs):
        for c in (BASELINE, *METHODS):
            if not ((runs.label == b) & (runs.config == c)).any():
                continue
            lines.append(
                f"| {b} | {c} | {cpus(b, c, 'rcu_cpu{cpu}_ms', '.2f')} | {cpus(b, c, 'irq_cpu{cpu}_ms', '.1f')} | "
                f"{cpus(b, c, 'ipis_cpu{cpu}', '.0f')} | {cpus(b, c, 'wakeups_cpu{cpu}_per_s', '.1f')} | "
                f"{100 * _mean(runs, b, c, 'off_share_a15'):.1f} % | {100 * _mean(runs, b, c, 'off_share_a7'):.1f} % | "
                f"{_mean(runs, b, c, 'power_downs_a15'):.0f} |"
            )
    return lines


def _reference_bands(runs: pd.DataFrame) -> dict[str, float]:
    """Per benchmark, the reference's energy spread over the seeds, (max - min) / mean, %."""
    out = {}
    for b in _benches(runs):
        e = _values(runs, b, BASELINE, "energy_j")
        out[b] = 100.0 * float(e.max() - e.min()) / float(e.mean())
    return out


def runs_sections(summary: pd.DataFrame, runs: pd.DataFrame, prepared: Prepared) -> list[list[str]]:
    benches = _benches(runs)
    return [
        _benefit_table(runs),
        _where_table(runs),
        sens.section(prepared, _configs(runs, SENSITIVITY_CONFIGS[1:]), benches)
        + ["", *sens.claims_section(prepared, _reference_bands(runs))],
        _warm_up_section(prepared),
        _method_section(),
    ]


def _warm_up_section(prepared: Prepared) -> list[str]:
    if not isinstance(prepared, sens.Sweep) or not prepared.start_temps:
        return []
    temps = "; ".join(
        f"{b} {'/'.join(f'{t:.1f}' for t in ts)} ({'/'.join(CLUSTERS)})" for b, ts in prepared.start_temps.items()
    )
    return ["## Warm-up", "", f"Start temperature of each cluster per benchmark (°C): {temps}."]


def _method_section() -> list[str]:
    return [
        "## Method and what differs from the seed",
        "",
        "- Board: `tc2` (data/platforms/tc2.toml, every number with its source); energy is the two cluster "
        "rails' (TC2's Jcore meters), time the run's duration.",
        "- Benchmarks: as ARM's workload-automation defines them (cyclictest 30 s with 8 threads at rt-tests' "
        "intervals, sysbench cpu with 10,000 requests, AndEBench 10 s per thread, audio 30 s, bbench_with_audio's "
        "11 pages with the music stopped when the browser is done); each file gives its sources.",
        "- The kernel's work where Linux 3.x puts it (tc2.toml [kernel]): device interrupts and the SP804 "
        "broadcast timer go to the first CPU of their affinity (CPU 0, an A15, by default; the GIC's rule), their "
        "softirqs run there; a timer due on a CPU whose cluster is powered down (`local-timer-stop`) comes through "
        "the broadcast timer's CPU and an IPI_TIMER; a thread woken on another idle CPU gets an IPI_RESCHEDULE; "
        "audio is paced by the PL041's FIFO interrupts (every 4th completes an ALSA period); vmstat_update is a "
        "deferrable per-CPU kworker item.",
        "- RCU: Tree RCU with one node (kernel::rcu): grace periods end when every CPU reported a quiescent "
        "state from its tick, or at the grace-period kthread's force-quiescent-state scans (3 jiffies, then every "
        "3) that find the rest in dyntick-idle; the kthread (rcu_preempt) is woken by the CPU that needs a grace "
        "period, by its own timer for each scan and by the CPU that reports the last quiescent state. The 3.8 "
        "kernels of the seed send no IPI to holdout CPUs from the scan (rcu_implicit_offline_qs credits only "
        "offline CPUs; 3.10 kicks nohz_full CPUs, whose stopped tick is not modelled); rcuo kthreads are woken "
        "when their list becomes non-empty (by the CPU that called call_rcu) and at their grace period's end (by "
        "the grace-period kthread's CPU).",
        "- nocb offloads both A15s (`rcu_nocbs=0-1`, as 3.10's RCU_NOCB_CPU_ALL allows; the first no-CBs "
        "kernels, v3.7-3.8, could not offload CPU 0 — the seed's exact list is not stated) and pins the rcuo "
        "kthreads to the A7s, as the seed did. offload adds irqaffinity= and workqueue.unbound_cpus= (v6.5's boot "
        "name for v4.0's sysfs mask); offload-nohz adds nohz_full=, with v4.x's housekeeping.",
        "- Warm-up: the seed ran the board ten minutes first to reach a steady temperature. Here each "
        "benchmark's runs start with every cluster at the steady temperature of that benchmark's mean power "
        "under the reference (one warm-up run).",
        "- Power: tc2.toml's legacy EAS tables; a cluster's exit latency is charged as busy time of the waking "
        "CPU, plus the EAS wake-up energy: waking a powered-down cluster for a few µs of interrupt work costs "
        "its exit latency at the cluster's busy power.",
    ]


# --- charts -------------------------------------------------------------------------------------


def _grouped(ax, data: ChartData, value, ylabel: str, configs=METHODS) -> None:
    """Bars per benchmark, one per configuration, with whiskers from min to max over the seeds."""
    import numpy as np

    runs = data.runs
    benches = _benches(runs)
    configs = _configs(runs, configs)
    width = 0.8 / max(len(configs), 1)
    colours = {c.name: c.colour for c in data.configs}
    for k, c in enumerate(configs):
        means, lo, hi = [], [], []
        for b in benches:
            v = value(runs, b, c)
            means.append(v.mean())
            lo.append(max(v.mean() - v.min(), 0.0))
            hi.append(max(v.max() - v.mean(), 0.0))
        x = np.arange(len(benches)) + (k - (len(configs) - 1) / 2) * width
        ax.bar(x, means, width, yerr=[lo, hi], label=c, color=colours.get(c), capsize=2)
    ax.set_xticks(range(len(benches)))
    ax.set_xticklabels(benches, rotation=20)
    ax.set_ylabel(ylabel)
    ax.axhline(0, color="black", lw=0.8)
    ax.legend(fontsize=7)


def _per_seed_benefit(column: str):
    def value(runs, b, c):
        import numpy as np

        ref = _values(runs, b, BASELINE, column).mean()
        return 100.0 * (ref - np.asarray(_values(runs, b, c, column))) / ref

    return value


def _column(col: str, scale: float = 1.0):
    def value(runs, b, c):
        return scale * _values(runs, b, c, col)

    return value


def _summed(cols: list[str]):
    def value(runs, b, c):
        return sum(_values(runs, b, c, col) for col in cols)

    return value


def draw_benefits(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4))
    _grouped(a, data, _per_seed_benefit("energy_j"), "energy benefit vs reference, %")
    a.set_title("Energy (cluster meters)")
    _grouped(b, data, _per_seed_benefit("time_s"), "time benefit vs reference, %")
    b.set_title("Duration")
    save_figure(fig, path)


def draw_wakeups(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    from hetlab.plots import save_figure  # pandas and matplotlib: loaded when a chart is drawn

    configs = (BASELINE, *METHODS)
    fig, axes = plt.subplots(2, 2, figsize=(13, 7))
    a15 = [f"wakeups_cpu{c}_per_s" for c in A15_CPUS]
    a7 = [f"wakeups_cpu{c}_per_s" for c in A7_CPUS]
    _grouped(axes[0][0], data, _summed(a15), "wake-ups per s (both A15s)", configs)
    axes[0][0].set_title("A15 CPUs: wake-ups from idle")
    _grouped(axes[0][1], data, _summed(a7), "wake-ups per s (three A7s)", configs)
    axes[0][1].set_title("A7 CPUs: wake-ups from idle")
    _grouped(axes[1][0], data, _column("off_share_a15", 100.0), "% of the run powered down", configs)
    axes[1][0].set_title("A15 cluster power-down residency")
    _grouped(axes[1][1], data, _column("off_share_a7", 100.0), "% of the run powered down", configs)
    axes[1][1].set_title("A7 cluster power-down residency")
    save_figure(fig, path)


def draw_kernel_work(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    from hetlab.plots import save_figure  # pandas and matplotlib: loaded when a chart is drawn

    configs = (BASELINE, *METHODS)
    fig, axes = plt.subplots(2, 2, figsize=(13, 7))
    for row, kind, what in ((0, "rcu", "RCU work"), (1, "irq", "interrupt work")):
        for col, cluster in enumerate(CLUSTERS):
            ax = axes[row][col]
            _grouped(ax, data, _column(f"{kind}_{cluster}_ms"), "ms per run", configs)
            ax.set_title(f"{what} on the {cluster.upper()}s")
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
        "Wake-ups and cluster power-down residency",
        (GROUP,),
        draw_wakeups,
        "What the energy differences come from: fewer wake-ups of idle CPUs let clusters stay powered down.",
    ),
    Chart(
        "fig_kernel_work.png",
        "Where RCU's and the interrupts' work ran",
        (GROUP,),
        draw_kernel_work,
        "nocb moves the A15s' callbacks to rcuo kthreads on the A7s; offload moves the interrupts there too.",
    ),
)


# The sensitivity sweep's configurations: the reference, the seed's two methods and its §7
# hypothesis ('both' and 'offload-nohz' are left out to keep the reproduction within its time).
SENSITIVITY_CONFIGS = (BASELINE, "nocb", "fast-no-hz", "offload")


def prepare(plan: object, out: Path, ctx: Context) -> sens.Sweep:
    """The warm-up temperatures, then the sensitivity sweep (rcu_amp_sensitivity), of the
    selected benchmarks."""
    configs = tuple(c for c in CONFIGS if c.name in SENSITIVITY_CONFIGS)
    return sens.prepare(ctx, out, configs, tuple(b for b in BENCHMARK_NAMES if not ctx.selected or b in ctx.selected))


def simulate_options(bench: Benchmark, config: Config, prepared: Prepared) -> dict:
    """Every run starts from the warmed-up board."""
    temps = prepared.start_temps.get(bench.name, []) if isinstance(prepared, sens.Sweep) else []
    return {**bench.options, **config.options, "start_temp_c": temps}


EXPERIMENT = Experiment(
    name="rcu-amp",
    title="RCU callback offload, enforced idle and deferred-work offload on the ARM TC2 (big.LITTLE MP)",
    source="seed 002: McKenney, Eggemann, Randhawa, 'Improving Energy Efficiency On Asymmetric Multiprocessing "
    "Systems', 2013, §5 (Table 1) and §7",
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
