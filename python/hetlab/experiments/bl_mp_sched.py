"""The `bl-mp-sched` reproduction: seed 003 (Rasmussen, ARM, "Research Update on big.LITTLE MP
Scheduling", 2012), its vexpress evaluation and its LinSched test case, and the same workloads
on the Exynos 5422 under today's placements.

This module owns everything specific to the seed: its three parts (benchmarks on their boards),
their configurations, the numbers it reads off each run (execution time, render times, where
each task ran), its claims, charts and report sections. DESCRIPTION says what it runs. The chart
kinds are drawn by bl_mp_sched_charts.py; this module says what each chart shows.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING

from hetlab import api
from hetlab.api import HetlabError
from hetlab.experiment import NOT_RUN, Benchmark, Chart, Claim, Config, Context, Experiment, Metric, Prepared, Table
from hetlab.experiments import bl_mp_sched_charts as charts
from hetlab.experiments import bl_mp_sched_spread as spread

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from hetlab.experiment import ChartData

DESCRIPTION = """\
Three parts, each on its own board, 20 seeds per configuration:

  vexpress  bbench-android on vexpress-a9 (4x Cortex-A9 at 400 MHz), seed 003's big.LITTLE
            emulation: `perf record -e instructions -C 1,3 -c 10000` slows CPUs 1 and 3
    smp           4 A9s, none slowed, vanilla CFS (the upper bound)
    bL-vanilla    CPUs 1,3 slowed, vanilla CFS (capacity-blind)
    bL-optimized  CPUs 1,3 slowed, hmp: fast domain {0,2}, slow {1,3}, seed 003's first stab
  linsched  linsched-test (the seed's 7 tasks) on linsched-2b2l (2 LITTLE + 2 big, big 2x), 10 s
    vanilla, hmp (first stab: up 512, down 256, only nice <= 0 goes up, no packing)
  exynos    bbench-android and linsched-test (to completion) on the Exynos 5422
    smp, hmp (its vendor kernel's settings) with ondemand and schedutil; eas with schedutil

Metrics (runs.csv, summary.csv): SurfaceFlinger's execution time (the time it held a CPU,
perf's sample handlers included), page render times #2 (scroll) and #6 (new page), each task's
CPU time on big and LITTLE CPUs (on the vexpress: the unslowed CPUs 0,2 and the slowed 1,3),
time, energy, migrations. Figures: SurfaceFlinger's execution time per run, render times, the
residencies, which CPU each task ran on over time (first seed; intervals.csv), the Exynos
table; report.md judges the seed's statements from the runs, and gives the spread over the seeds
beside the seed's words with its sensitivity to bbench-android's spread inputs (a sweep of the
vexpress part, seeds 1-20, with a control: SMP with the nice-10 workers on CPUs 1,3)."""

# --- the boards and the seed's emulation --------------------------------------------------------

VEXPRESS = "vexpress-a9"
LINSCHED = "linsched-2b2l"
EXYNOS = "exynos5422"
# `perf record -a -e instructions -C 1,3 -c 10000 -o /dev/null sleep 7200` (seed 003)
SLOWED_CPUS = (1, 3)
PERF_PERIOD = 10_000
VEXPRESS_CPUS = (0, 1, 2, 3)
FAST_CPUS = tuple(c for c in VEXPRESS_CPUS if c not in SLOWED_CPUS)
LINSCHED_LIMIT_S = 10.0  # linsched-test.toml: LinSched's tasks never end; run 10 s


def _mask(cpus: tuple[int, ...]) -> int:
    return sum(1 << c for c in cpus)


# Seed 003's "first stab" (its "Experimental Implementation", the 2012 prototype of ARM's
# big.LITTLE MP patches): the thresholds of that time (LSK-MP 0003: up 512, down 256; 700/512
# came in 2013), "task priority is default or higher (nice <= 0)" as the priority filter at nice
# 1, and no packing (LSK-MP 0046, 2013). Fork boost and idle pull (2013) are in hmp and cannot
# be switched off: they are named where they matter.
FIRST_STAB = {"up_threshold": 512, "down_threshold": 256, "prio_filter": 1, "prio_filter_val": 1, "packing_enable": 0}
# The backup slide's domains: {0,2} and {1,3}, no balancing between them.
EMULATED_DOMAINS = {"fast_cpu_mask": _mask(FAST_CPUS), "slow_cpu_mask": _mask(SLOWED_CPUS)}

# --- benchmarks and configurations --------------------------------------------------------------

BBENCH, LINSCHED_TEST = "bbench-android", "linsched-test"
PARTS = ("vexpress", "linsched", "exynos")  # the benchmark groups

BENCHMARKS = (
    Benchmark(BBENCH, f"{BBENCH}-vexpress", BBENCH, "vexpress"),
    Benchmark(
        LINSCHED_TEST,
        f"{LINSCHED_TEST}-linsched",
        LINSCHED_TEST,
        "linsched",
        {"time_limit_s": LINSCHED_LIMIT_S},
        platform=LINSCHED,
    ),
    Benchmark(BBENCH, f"{BBENCH}-exynos", BBENCH, "exynos", platform=EXYNOS),
    Benchmark(LINSCHED_TEST, f"{LINSCHED_TEST}-exynos", LINSCHED_TEST, "exynos", platform=EXYNOS),
)

_PERF = {"perf_cpus": SLOWED_CPUS, "perf_period": PERF_PERIOD}
# No DVFS on the vexpress and in LinSched (one OPP): `performance` holds it and samples nothing.
_FIXED = {"governor": "performance"}
CONFIGS = (
    Config(
        "smp",
        "SMP: 4 A9s, none slowed, vanilla CFS (upper bound)",
        {"scheduler": "smp", **_FIXED},
        colour="#7f7f7f",
        groups=("vexpress",),
    ),
    Config(
        "bL-vanilla",
        "b.L vanilla: CPUs 1,3 slowed by perf, vanilla CFS",
        {"scheduler": "smp", **_FIXED, **_PERF},
        colour="#d62728",
        groups=("vexpress",),
    ),
    Config(
        "bL-optimized",
        "b.L optimized: CPUs 1,3 slowed by perf, hmp (first stab, domains {0,2} {1,3})",
        {"scheduler": "hmp", "sched_tunables": {**FIRST_STAB, **EMULATED_DOMAINS}, **_FIXED, **_PERF},
        colour="#1f77b4",
        groups=("vexpress",),
    ),
    Config("vanilla", "LinSched: vanilla CFS", {"scheduler": "smp", **_FIXED}, colour="#d62728", groups=("linsched",)),
    Config(
        "hmp-first-stab",
        "LinSched: hmp, first stab (512/256, nice <= 0 up, no packing)",
        {"scheduler": "hmp", "sched_tunables": FIRST_STAB, **_FIXED},
        colour="#1f77b4",
        groups=("linsched",),
    ),
    Config(
        "smp-ondemand",
        "Exynos: vanilla CFS, ondemand",
        {"scheduler": "smp", "governor": "ondemand"},
        colour="#7f7f7f",
        groups=("exynos",),
    ),
    Config(
        "smp-schedutil",
        "Exynos: vanilla CFS, schedutil",
        {"scheduler": "smp", "governor": "schedutil"},
        colour="#c7c7c7",
        groups=("exynos",),
    ),
    Config(
        "hmp-ondemand",
        "Exynos: hmp (vendor kernel's settings), ondemand",
        {"scheduler": "hmp", "governor": "ondemand"},
        colour="#1f77b4",
        groups=("exynos",),
    ),
    Config(
        "hmp-schedutil",
        "Exynos: hmp (vendor kernel's settings), schedutil",
        {"scheduler": "hmp", "governor": "schedutil"},
        colour="#aec7e8",
        groups=("exynos",),
    ),
    Config(
        "eas-schedutil",
        "Exynos: EAS, schedutil (EAS needs it)",
        {"scheduler": "eas", "governor": "schedutil"},
        colour="#2ca02c",
        groups=("exynos",),
    ),
)
VEXPRESS_CONFIGS = ("smp", "bL-vanilla", "bL-optimized")
LINSCHED_CONFIGS = ("vanilla", "hmp-first-stab")

GROUPS = {part: (part,) for part in PARTS}
TABLES = (
    Table("vexpress: bbench-android, SMP vs emulated big.LITTLE", ("vexpress",)),
    Table("LinSched test case on 2 LITTLE + 2 big", ("linsched",)),
    Table("Exynos 5422: smp, hmp and eas", ("exynos",)),
)

# --- what each run gives (runs.csv columns) -----------------------------------------------------

# The threads of each workload by role: task names (a thread is `<task>-<n>`).
TASK_GROUPS = {
    BBENCH: {
        "WebViewCoreThread": ("WebViewCoreThread",),
        "SurfaceFlinger": ("SurfaceFlinger",),
        "noise": ("noise",),
        "bg-workers": ("bg-worker5", "bg-worker6", "bg-worker7"),
    },
    LINSCHED_TEST: {
        "tasks1-2": ("task1-noise", "task2-noise"),
        "tasks3-4": ("task3-heavy", "task4-heavy"),
        "tasks5-7": ("task5-low", "task6-low", "task7-low"),
    },
}
KEY_TASKS = ("WebViewCoreThread", "SurfaceFlinger")  # bbench's render chain
SF = "SurfaceFlinger"
RENDERS = {2: "scroll", 6: "new page"}  # bbench-android.toml: render #2 scrolls, #6 loads page 2


def _task(thread: str) -> str:
    return thread.rsplit("-", 1)[0]


@functools.cache
def _big_cpus(platform: str) -> tuple[int, ...]:
    """The CPUs of the platform's most capable clusters."""
    clusters = json.loads(api.load_platform(platform).summary())["clusters"]
    top = max(c["capacity"] for c in clusters)
    return tuple(sorted(cpu for c in clusters if c["capacity"] == top for cpu in c["cpus"]))


def big_cpus(bench: Benchmark, platform: str) -> tuple[int, ...]:
    """The CPUs a residency calls big: on the vexpress the CPUs the b.L configurations leave
    unslowed (in every configuration, as the seed's slides label them), elsewhere the most
    capable cluster's."""
    return FAST_CPUS if bench.group == "vexpress" else _big_cpus(platform)


def run_columns(bench: Benchmark, config: Config, r: api.SimResult) -> dict:
    """SurfaceFlinger's execution time, the render times, each task group's CPU time on big and
    LITTLE CPUs, and the run's migrations."""
    threads = r.summary["threads"]
    big = set(big_cpus(bench, r.summary["platform"]))
    row: dict = {"platform": r.summary["platform"], "migrations": sum(t["migrations"] for t in threads)}
    if r.intervals is not None:
        # Execution time: how long the thread held a CPU (sched_switch in to out), which is what
        # a scheduler trace shows and what the kernel's task clock counts on these ARM kernels:
        # the perf sample handlers (and other interrupts) run in the interrupted task's time.
        iv = r.intervals_df()
        held = (iv.end_s - iv.start_s).groupby(iv.thread.map(_task)).sum()
        row["sf_exec_s"] = float(held[SF]) if SF in held.index else float("nan")
    starts = [m["time_s"] for m in r.marks if m["name"] == "render-start"]
    dones = [m["time_s"] for m in r.marks if m["name"] == "render-done"]
    for i in RENDERS:
        row[f"render{i}_s"] = dones[i - 1] - starts[i - 1] if len(dones) >= i and len(starts) >= i else float("nan")
    for name, tasks in TASK_GROUPS.get(bench.name, {}).items():
        mine = [t for t in threads if _task(t["name"]) in tasks]
        on_big = sum(s for t in mine for cpu, s in enumerate(t["cpu_time_on_s"]) if cpu in big)
        total = sum(t["cpu_time_s"] for t in mine)
        row[f"{name}_big_s"] = on_big
        row[f"{name}_little_s"] = total - on_big
        row[f"{name}_big_share"] = on_big / total if total > 0 else float("nan")
    return row


def check(settings: None, ctx: Context) -> None:
    """The board the vexpress part runs on (--platform may replace it) must take every one of
    its configurations (four CPUs, a perf sample cost, the HMP masks): a 1 ms probe of each,
    before anything is written."""
    for bench in BENCHMARKS:
        if bench.platform is not None:
            continue
        for config in CONFIGS:
            if config.runs(bench):
                try:
                    api.simulate(ctx.platform, bench.workload, **{**config.options, "time_limit_s": 0.001})
                except HetlabError as e:
                    raise HetlabError(
                        f"platform '{ctx.platform}' cannot run {bench.label} {config.name}: {e}"
                    ) from None


def prepare(plan: None, out: Path, ctx: Context) -> spread.Spread:
    """The spread's sensitivity sweep over the vexpress configurations (bl_mp_sched_spread), when
    the vexpress benchmark is selected (its report sections are the only ones that read it)."""
    vexpress = BENCHMARKS[0]
    if ctx.selected and vexpress.label not in ctx.selected:
        return spread.Spread()
    configs = tuple(c for c in CONFIGS if c.name in VEXPRESS_CONFIGS)
    return spread.sweep(ctx, configs, SLOWED_CPUS, lambda config, r: run_columns(vexpress, config, r))


def simulate_options(bench: Benchmark, config: Config, prepared: Prepared) -> dict:
    """Every run records where its threads ran (the execution time and the placement charts)."""
    return {**bench.options, **config.options, "intervals": True}


METRICS = (
    Metric("sf_exec_s", "SurfaceFlinger execution time", "s"),
    *(Metric(f"render{i}_s", f"render #{i} ({what}) time", "s") for i, what in RENDERS.items()),
    *(
        Metric(f"{name}_{what}", f"{name}: {title}", unit)
        for groups in TASK_GROUPS.values()
        for name in groups
        for what, title, unit in (
            ("big_share", "share of CPU time on big", "share"),
            ("big_s", "CPU time on big", "s"),
            ("little_s", "CPU time on LITTLE", "s"),
        )
    ),
    Metric("time_s", "run time", "s"),
    Metric("energy_j", "energy (sensors: CPU clusters and DRAM)", "J"),
    Metric("migrations", "migrations (all threads)", "count"),
)

# --- claims -------------------------------------------------------------------------------------


class _Stats:
    """Summary lookups: (label, config, metric) -> the summary row."""

    def __init__(self, summary: pd.DataFrame, runs: pd.DataFrame):
        self.rows = {(r["benchmark"], r["config"], r["metric"]): r for r in summary.to_dict("records")}
        self.runs = runs

    def __call__(self, label: str, config: str, metric: str) -> dict | None:
        return self.rows.get((label, config, metric))

    def values(self, label: str, config: str, column: str):
        g = self.runs[(self.runs.label == label) & (self.runs.config == config)]
        return g[column].dropna().to_numpy(dtype=float)

    def have(self, label: str, configs: tuple[str, ...], metric: str) -> bool:
        return all(self(label, c, metric) is not None for c in configs)


def _ms(r: dict) -> str:
    return f"{r['mean']:.3f} ± {r['std']:.3f} s"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


VX = f"{BBENCH}-vexpress"
LS = f"{LINSCHED_TEST}-linsched"
SLOWED = f"CPUs {','.join(map(str, SLOWED_CPUS))}"


def _vanilla_variance(S: _Stats) -> Claim:
    claim = (
        "Vanilla variance: on b.L vanilla SurfaceFlinger's execution time varies significantly over the runs "
        "(coefficient of variation ≥ 5%, standard deviation at least twice SMP's and b.L optimized's) because where "
        "it runs is more or less random (its share on the slowed CPUs takes low (< 25%) and high (> 75%) values over "
        "the runs and explains the time: correlation ≥ 0.9)"
    )
    paper = "'Execution time varies significantly on b.L vanilla. Task affinity is more or less random.'"
    if not S.have(VX, VEXPRESS_CONFIGS, "sf_exec_s"):
        return Claim(claim, paper, "–", NOT_RUN)
    import numpy as np

    smp, van, opt = (S(VX, c, "sf_exec_s") for c in ("smp", "bL-vanilla", "bL-optimized"))
    times = S.values(VX, "bL-vanilla", "sf_exec_s")
    slowed = 1 - S.values(VX, "bL-vanilla", f"{SF}_big_share")
    r = float(np.corrcoef(slowed, times)[0, 1]) if times.std() > 0 and slowed.std() > 0 else float("nan")
    cv = van["std"] / van["mean"]
    random_place = slowed.min() < 0.25 and slowed.max() > 0.75 and r >= 0.9
    varies = cv >= 0.05 and van["std"] >= 2 * max(smp["std"], opt["std"])
    hetlab = (
        f"std: b.L vanilla {van['std']:.2f} s (CV {100 * cv:.1f}%), SMP {smp['std']:.2f} s, b.L optimized "
        f"{opt['std']:.2f} s; SurfaceFlinger's share on the slowed CPUs over the runs {_pct(slowed.min())}-"
        f"{_pct(slowed.max())}, correlation with its time {r:.2f}"
    )
    holds = "yes" if varies and random_place else ("partly" if varies or random_place else "no")
    note = (
        "vanilla CFS places by idleness, not capacity (3.10 select_task_rq_fair: select_idle_sibling keeps a "
        "waking task on its previous CPU while that is idle, fork balancing takes the idlest), so SurfaceFlinger "
        f"stays wherever the run's timing first put it; on {SLOWED} every {PERF_PERIOD:,} instructions raise a perf "
        "sample whose handler runs in SurfaceFlinger's time"
    )
    return Claim(claim, paper, hetlab, holds, note)


def _optimized_times(S: _Stats) -> list[Claim]:
    from scipy import stats

    shorter_claim = (
        "Shorter: b.L optimized gives SurfaceFlinger a shorter execution time than b.L vanilla (Welch's t-test, "
        "one-sided p < 0.05)"
    )
    steadier_claim = (
        "Steadier: b.L optimized's SurfaceFlinger execution time varies at most half as much as b.L vanilla's "
        "(standard deviation)"
    )
    shorter_paper = "'Shorter execution time.' (b.L optimizations slide)"
    steadier_paper = "'The b.L optimizations solves this issue.'"
    if not S.have(VX, ("bL-vanilla", "bL-optimized"), "sf_exec_s"):
        return [Claim(shorter_claim, shorter_paper, "–", NOT_RUN), Claim(steadier_claim, steadier_paper, "–", NOT_RUN)]
    van, opt = S(VX, "bL-vanilla", "sf_exec_s"), S(VX, "bL-optimized", "sf_exec_s")
    a, b = S.values(VX, "bL-optimized", "sf_exec_s"), S.values(VX, "bL-vanilla", "sf_exec_s")
    p = float(stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue) if len(a) > 1 and len(b) > 1 else 1.0
    share = S(VX, "bL-optimized", f"{SF}_big_share")
    up = (
        f"hmp's HMP domains ({{0,2}} fast, {{1,3}} slow): SurfaceFlinger's load_avg_ratio (runnable time) is above "
        "up_threshold 512 while it composes, so up-migration at wake-up (select_task_rq_fair) and forced migration "
        f"of the running task from the tick keep it on the unslowed CPUs ({_pct(share['mean'])} of its CPU time, "
        "mean over the runs), where no perf sample interrupts it"
    )
    return [
        Claim(
            shorter_claim,
            shorter_paper,
            f"{_ms(opt)} vs {_ms(van)}; p = {p:.2g}",
            _yes(opt["mean"] < van["mean"] and p < 0.05),
            up,
        ),
        Claim(
            steadier_claim,
            steadier_paper,
            f"std {opt['std']:.3f} s vs {van['std']:.3f} s",
            _yes(opt["std"] <= 0.5 * van["std"]),
            "its placement no longer depends on the run's timing: the same mechanism puts it on {0,2} in every run "
            f"(share there {_pct(share['min'])}-{_pct(share['max'])} over the runs)",
        ),
    ]


def _upper_bound(S: _Stats) -> Claim:
    claim = (
        "Upper bound: SMP (4 unslowed A9s) gives SurfaceFlinger's execution time and render times #2 and #6 no longer "
        "than either b.L configuration (ties within the two standard deviations allowed)"
    )
    paper = "'SMP: 4xA9 no slow-down (upper bound for performance)'"
    metrics = ("sf_exec_s", *(f"render{i}_s" for i in RENDERS))
    if not all(S.have(VX, VEXPRESS_CONFIGS, m) for m in metrics):
        return Claim(claim, paper, "–", NOT_RUN)
    names = {"sf_exec_s": "SurfaceFlinger", **{f"render{i}_s": f"render #{i}" for i in RENDERS}}
    parts, beaten = [], []
    for m in metrics:
        smp = S(VX, "smp", m)
        rows = {c: S(VX, c, m) for c in VEXPRESS_CONFIGS[1:]}
        parts.append(
            f"{names[m]}: SMP {smp['mean']:.3f} s, " + ", ".join(f"{c} {r['mean']:.3f} s" for c, r in rows.items())
        )
        beaten += [(m, c) for c, r in rows.items() if smp["mean"] > r["mean"] + smp["std"] + r["std"]]
    note = ""
    if beaten:
        cpu = {c: S(VX, c, f"{SF}_big_s")["mean"] + S(VX, c, f"{SF}_little_s")["mean"] for c in VEXPRESS_CONFIGS}
        wv = {
            c: S(VX, c, "WebViewCoreThread_big_s")["mean"] + S(VX, c, "WebViewCoreThread_little_s")["mean"]
            for c in VEXPRESS_CONFIGS
        }
        workers = {c: S(VX, c, "bg-workers_big_share")["mean"] for c in VEXPRESS_CONFIGS}
        note = (
            "shorter than SMP: "
            + ", ".join(f"{names[m]} under {c}" for m, c in beaten)
            + ". The render chain's own CPU time (instructions only, no waiting) is smaller there: SurfaceFlinger "
            + ", ".join(f"{c} {cpu[c]:.2f} s" for c in VEXPRESS_CONFIGS)
            + "; WebViewCoreThread "
            + ", ".join(f"{c} {wv[c]:.2f} s" for c in VEXPRESS_CONFIGS)
            + ". Mechanism: the shared L2 and DRAM. hmp's priority filter keeps the three nice-10 workers (which run "
            "during page loads and miss heavily in the shared L2) in the slow domain (share on {0,2}: "
            + ", ".join(f"{c} {_pct(workers[c])}" for c in VEXPRESS_CONFIGS)
            + "), so at most two of them run at once instead of three, and the render chain's misses wait less in "
            "the DRAM queue; it also keeps them off the render chain's CPUs. SMP's CPUs are unslowed, but its vanilla "
            "CFS spreads the workers over all four"
        )
    return Claim(claim, paper, "; ".join(parts), _yes(not beaten), note)


def _render_variation(S: _Stats) -> Claim:
    claim = "Render variation: b.L optimized's render times #2 and #6 vary less than b.L vanilla's (standard deviation)"
    paper = "'b.L optimizations reduce render time variations.' (page render time slide)"
    metrics = [f"render{i}_s" for i in RENDERS]
    if not all(S.have(VX, ("bL-vanilla", "bL-optimized"), m) for m in metrics):
        return Claim(claim, paper, "–", NOT_RUN)
    parts, ok = [], []
    for i, m in zip(RENDERS, metrics):
        van, opt = S(VX, "bL-vanilla", m), S(VX, "bL-optimized", m)
        parts.append(
            f"#{i}: std {opt['std']:.3f} s vs {van['std']:.3f} s (means {opt['mean']:.2f} vs {van['mean']:.2f} s)"
        )
        ok.append(opt["std"] < van["std"])
    holds = "yes" if all(ok) else ("partly" if any(ok) else "no")
    note = (
        "a render is WebViewCoreThread's work, then SurfaceFlinger's composition; under vanilla CFS each runs on a "
        "slowed or an unslowed CPU by chance (and may share it with the nice-10 workers), under hmp both run in the "
        "fast domain once their load crosses up_threshold"
    )
    return Claim(claim, paper, "; ".join(parts), holds, note)


def _key_tasks_big(S: _Stats) -> Claim:
    claim = (
        "Key tasks on big: under b.L optimized WebViewCoreThread and SurfaceFlinger run mainly on the unslowed CPUs "
        "(≥ 90% of their CPU time), more than under b.L vanilla"
    )
    paper = "'Key tasks have higher big residency.' 'Key tasks mainly on big cores'"
    if not all(S.have(VX, ("bL-vanilla", "bL-optimized"), f"{t}_big_share") for t in KEY_TASKS):
        return Claim(claim, paper, "–", NOT_RUN)
    parts, ok = [], []
    for t in KEY_TASKS:
        van, opt = S(VX, "bL-vanilla", f"{t}_big_share"), S(VX, "bL-optimized", f"{t}_big_share")
        parts.append(f"{t} {_pct(opt['mean'])} (min {_pct(opt['min'])}) vs {_pct(van['mean'])}")
        ok.append(opt["mean"] >= 0.9 and opt["mean"] > van["mean"])
    holds = "yes" if all(ok) else ("partly" if any(ok) else "no")
    note = (
        "their load_avg_ratio (runnable time, so waiting counts too) crosses up_threshold 512 within tens of ms of a "
        "render's start; nice ≤ 0 passes the priority filter; hmp's wake-up placement and forced migration put them "
        "on {0,2}. Under vanilla WebViewCoreThread stays high as well: it is forked first onto CPU 0 and, always "
        "waking to an idle CPU 0, keeps it (select_idle_sibling)"
    )
    return Claim(claim, paper, "; ".join(parts), holds, note)


def _short_tasks_little(S: _Stats) -> Claim:
    claim = (
        "Short tasks on LITTLE: the frequent short noise threads (3 ms busy, 40 ms asleep) spend more of their CPU "
        "time on the slowed CPUs under b.L optimized than under b.L vanilla"
    )
    paper = "'Frequent short task has higher little residency.'"
    metric = "noise_big_share"
    if not S.have(VX, ("bL-vanilla", "bL-optimized"), metric):
        return Claim(claim, paper, "–", NOT_RUN)
    van, opt = S(VX, "bL-vanilla", metric), S(VX, "bL-optimized", metric)
    note = (
        "a 3 ms in 43 ms task's load_avg_ratio stays below down_threshold 256: hmp sends it to the slow domain at "
        "every wake-up (the fork boost gives it its first job on {0,2})"
    )
    return Claim(
        claim,
        paper,
        f"on the slowed CPUs {_pct(1 - opt['mean'])} vs {_pct(1 - van['mean'])}",
        _yes(1 - opt["mean"] > 1 - van["mean"]),
        note,
    )


def _linsched_claims(S: _Stats) -> list[Claim]:
    hmp, van = "hmp-first-stab", "vanilla"
    specs = [
        (
            "LinSched 3-4: under hmp with the priority filter the CPU-intensive nice-0 tasks 3-4 run mostly on big "
            "(> 50% of their CPU time)",
            "'3-4: Important tasks', 'big candidate'",
            "tasks3-4",
            lambda r: r["mean"] > 0.5,
            "200 ms busy per 300-320 ms keeps their load_avg_ratio above up_threshold 512; nice 0 passes the filter; "
            "forced migration moves them up while they run",
        ),
        (
            "LinSched 5-7: under hmp with the priority filter the nice-10 tasks 5-7 never run on big",
            "'High intensity low priority tasks will not be scheduled on big cores' (first stab)",
            "tasks5-7",
            lambda r: r["max"] == 0.0,
            "the priority filter: a task at nice ≥ prio_filter_val (1) never goes up and goes down whenever it may "
            "(here also at fork and idle pull)",
        ),
        (
            "LinSched 1-2: under hmp the noise tasks 1-2 (3 ms busy, 40 ms asleep) stay on LITTLE (< 10% of their "
            "CPU time on big)",
            "'1-2: Background noise tasks', 'too short for big'",
            "tasks1-2",
            lambda r: r["mean"] < 0.1,
            "their load_avg_ratio stays far below up_threshold; their only big time is the first job, forked onto "
            "big fully loaded (LSK-MP 0027's fork boost)",
        ),
    ]
    out = []
    for claim, paper, group, ok, note in specs:
        r = S(LS, hmp, f"{group}_big_share")
        if r is None:
            out.append(Claim(claim, paper, "–", NOT_RUN))
            continue
        hetlab = f"{_pct(r['mean'])} on big (runs {_pct(r['min'])}-{_pct(r['max'])})"
        out.append(Claim(claim, paper, hetlab, _yes(ok(r)), note))
    claim = (
        "LinSched vanilla: vanilla CFS ignores capacity: the nice-10 tasks 5-7 get big time (> 10%) and the heavy "
        "tasks 3-4 do not keep big (< 80%)"
    )
    paper = "the vanilla LinSched run ('LinSched: Vanilla Linux Scheduler')"
    rows = {g: S(LS, van, f"{g}_big_share") for g in TASK_GROUPS[LINSCHED_TEST]}
    if any(r is None for r in rows.values()):
        out.append(Claim(claim, paper, "–", NOT_RUN))
    else:
        out.append(
            Claim(
                claim,
                paper,
                "; ".join(f"{g} {_pct(r['mean'])} on big" for g, r in rows.items()),
                _yes(rows["tasks5-7"]["mean"] > 0.1 and rows["tasks3-4"]["mean"] < 0.8),
                "vanilla CFS balances load (the weight of runnable tasks) over one MC domain of all four CPUs, blind "
                "to capacity: a nice-10 task lands on a big CPU as readily as a heavy nice-0 one",
            )
        )
    return out


def claims(summary: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    """Seed 003's statements, each judged from the runs."""
    S = _Stats(summary, runs)
    return [
        _vanilla_variance(S),
        *_optimized_times(S),
        _upper_bound(S),
        _render_variation(S),
        _key_tasks_big(S),
        _short_tasks_little(S),
        *_linsched_claims(S),
    ]


# --- report.md: its sections ---------------------------------------------------------------------


def _vexpress_section(summary: pd.DataFrame) -> list[str]:
    rows = {(r["config"], r["metric"]): r for r in summary[summary.benchmark == VX].to_dict("records")}
    configs = [c for c in VEXPRESS_CONFIGS if (c, "sf_exec_s") in rows]
    if not configs:
        return []
    head = "| | " + " | ".join(configs) + " |"
    rule = "|---|" + "---:|" * len(configs)
    lines = [
        "## vexpress: the seed's tables",
        "",
        "**Execution time** of SurfaceFlinger is the time it held a CPU over the whole run: the sum of its "
        "intervals from being switched in to being switched out (`SimResult.intervals`, from the sched_switch "
        "events). That is what a scheduler trace shows and what the kernel accounts to the task: the perf "
        "sample handlers that slow CPUs 1 and 3 run in the interrupted task's time, so they lengthen it, while "
        "its own CPU time (`cpu_time_s`, its instructions alone) would hide the slowdown. Seconds, over "
        f"{rows[(configs[0], 'sf_exec_s')]['n']} runs:",
        "",
        head,
        rule,
    ]
    for stat in ("mean", "min", "max", "std"):
        lines.append(f"| {stat} | " + " | ".join(f"{rows[(c, 'sf_exec_s')][stat]:.3f}" for c in configs) + " |")
    lines += [
        "",
        "**Page render times** (render-start of WebViewCoreThread to render-done of SurfaceFlinger), s:",
        "",
        head,
        rule,
    ]
    for i, what in RENDERS.items():
        for stat in ("mean", "std"):
            cells = [f"{rows[(c, f'render{i}_s')][stat]:.3f}" if (c, f"render{i}_s") in rows else "–" for c in configs]
            lines.append(f"| #{i} {what} {stat} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "**Residency**: share of each task's CPU time on CPUs 0,2 (unslowed in the b.L configurations), mean "
        "[min, max] over the runs:",
        "",
        head,
        rule,
    ]
    for t in TASK_GROUPS[BBENCH]:
        cells = []
        for c in configs:
            r = rows.get((c, f"{t}_big_share"))
            cells.append(f"{_pct(r['mean'])} [{_pct(r['min'])}, {_pct(r['max'])}]" if r else "–")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    return lines


def _linsched_section(summary: pd.DataFrame) -> list[str]:
    rows = {(r["config"], r["metric"]): r for r in summary[summary.benchmark == LS].to_dict("records")}
    configs = [c for c in LINSCHED_CONFIGS if (c, "tasks3-4_big_share") in rows]
    if not configs:
        return []
    lines = [
        "## LinSched: big residency",
        "",
        "Share of each task group's CPU time on the big CPUs (2, 3) over the first 10 s, mean [min, max] over the "
        "runs:",
        "",
        "| tasks | " + " | ".join(configs) + " |",
        "|---|" + "---:|" * len(configs),
    ]
    for g in TASK_GROUPS[LINSCHED_TEST]:
        cells = [
            f"{_pct(rows[(c, f'{g}_big_share')]['mean'])} [{_pct(rows[(c, f'{g}_big_share')]['min'])}, "
            f"{_pct(rows[(c, f'{g}_big_share')]['max'])}]"
            for c in configs
        ]
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    if all(r["std"] == 0 for (c, m), r in rows.items() if m.endswith("_big_share")):
        lines += [
            "",
            "Every seed gave the same run: the LinSched model has no source of noise (no OS jitter, no DRAM noise, "
            "compute-only phases; linsched-2b2l.toml), as LinSched itself.",
        ]
    return lines


def _exynos_section(summary: pd.DataFrame) -> list[str]:
    part = summary[summary.benchmark.str.endswith("-exynos")]
    if part.empty:
        return []
    rows = {(r["benchmark"], r["config"], r["metric"]): r for r in part.to_dict("records")}
    lines = [
        "## Exynos 5422: smp, hmp and eas",
        "",
        "Mean ± standard deviation over the runs. Time: until the last thread finished (linsched-test runs to "
        "completion here); energy: the board's sensors (CPU clusters and DRAM); migrations: of all threads. hmp "
        "uses the vendor kernel's settings (platform [hmp]); eas runs only with schedutil. bbench-android's run "
        "time is its noise threads' (2,300 cycles of a 40 ms sleep and 3 ms of A9 work), so it grows when they run "
        "on slow CPUs at a low OPP; its render times and SurfaceFlinger's execution time say how the render chain "
        "fared.",
    ]
    cols = [("time_s", "time (s)"), ("energy_j", "energy (J)"), ("migrations", "migrations")]
    extra = {
        f"{BBENCH}-exynos": [
            ("sf_exec_s", "SurfaceFlinger exec (s)"),
            ("render6_s", "render #6 (s)"),
            (f"{SF}_big_share", "SurfaceFlinger on big"),
        ],
        f"{LINSCHED_TEST}-exynos": [(f"{g}_big_share", f"{g} on big") for g in TASK_GROUPS[LINSCHED_TEST]],
    }
    for label in dict.fromkeys(part.benchmark):
        these = cols + extra.get(label, [])
        lines += ["", f"**{label}**", "", "| config | " + " | ".join(t for _, t in these) + " |"]
        lines.append("|---|" + "---:|" * len(these))
        for c in dict.fromkeys(part[part.benchmark == label].config):
            cells = []
            for m, _ in these:
                r = rows.get((label, c, m))
                if r is None:
                    cells.append("–")
                elif m.endswith("_share"):
                    cells.append(f"{_pct(r['mean'])} ± {_pct(r['std'])}")
                else:
                    cells.append(f"{r['mean']:.4g} ± {r['std']:.2g}")
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return lines


def _method_section(summary: pd.DataFrame) -> list[str]:
    return [
        "## How the seed's setups are modelled",
        "",
        f"- big.LITTLE emulation: `perf record -a -e instructions -C {','.join(map(str, SLOWED_CPUS))} -c "
        f"{PERF_PERIOD}` as what it is (`kernel::perf_sampling`): the PMU counts each CPU's instructions and every "
        f"{PERF_PERIOD:,} raises an overflow whose handler costs the platform's `[perf_sample]` cycles, stolen from "
        "the running task; nothing sets a speed, and a task that stops before an overflow escapes it.",
        "- b.L optimized: `hmp` with the HMP domains set by `fast_cpu_mask`/`slow_cpu_mask` "
        f"({_mask(FAST_CPUS)}/{_mask(SLOWED_CPUS)}: {{0,2}} and {{1,3}}, no balancing between them, the backup "
        f"slide's sched-domain dump) and the first stab's knobs {FIRST_STAB}. The 2013 additions fork boost and "
        "idle pull are part of `hmp` and cannot be switched off.",
        "- Forced migration of a running task pays the vexpress's measured ~160 µs stopper latency (`[sched]`).",
        "- The vexpress and LinSched have one OPP; their runs use the `performance` governor, which changes nothing.",
    ]


# What seed 003 says of each spread (its numbers are withheld from this copy).
SEED_SAYS = {
    "sf_exec_s": "'Execution time varies significantly on b.L vanilla.' 'The b.L optimizations solves this issue.'",
    "render2_s": "'b.L optimizations reduce render time variations.'",
    "render6_s": "'b.L optimizations reduce render time variations.'",
}
SPREAD_TITLES = {"sf_exec_s": "SurfaceFlinger exec", "render2_s": "render #2", "render6_s": "render #6"}


def _spread_section(summary: pd.DataFrame) -> list[str]:
    """The seeds' mean and standard deviation of SurfaceFlinger and the renders, beside the seed."""
    rows = {(r["config"], r["metric"]): r for r in summary[summary.benchmark == VX].to_dict("records")}
    configs = [c for c in VEXPRESS_CONFIGS if (c, "sf_exec_s") in rows]
    if not configs:
        return []
    lines = [
        "## Spread over the seeds, beside the seed",
        "",
        f"Mean ± standard deviation (coefficient of variation) over {rows[(configs[0], 'sf_exec_s')]['n']} seeds, s. "
        "The spread comes from bbench-android.toml's per-render and per-frame work (instructions_cv, DebugBear's "
        "page-load spread), JavaScript timers' lateness and the 50 µs timer slack of the other sleeps "
        "(sleep_late_max_us), SurfaceFlinger's frames waiting for the display's next 60 Hz vsync (a frame that "
        "ends just after one waits almost a period), the platform's OS jitter and DRAM noise, and where each "
        "run's timing puts the threads.",
        "",
        "| | " + " | ".join(configs) + " | seed 003 says |",
        "|---|" + "---:|" * len(configs) + "---|",
    ]
    for m, title in SPREAD_TITLES.items():
        cells = []
        for c in configs:
            r = rows.get((c, m))
            cells.append(f"{r['mean']:.3f} ± {r['std']:.3f} ({100 * r['std'] / r['mean']:.1f}%)" if r else "–")
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {SEED_SAYS[m]} |")
    return lines


def report_sections(summary: pd.DataFrame, prepared: Prepared) -> list[list[str]]:
    sens = spread.section(prepared, VEXPRESS_CONFIGS, SPREAD_TITLES) if isinstance(prepared, spread.Spread) else []
    return [
        _vexpress_section(summary),
        _spread_section(summary),
        spread.smp_bound_section(prepared, VEXPRESS_CONFIGS, SPREAD_TITLES, SLOWED_CPUS)
        if isinstance(prepared, spread.Spread)
        else [],
        sens,
        _linsched_section(summary),
        _exynos_section(summary),
        _method_section(summary),
    ]


# --- charts -------------------------------------------------------------------------------------


def draw_sf_exec(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    n = int((data.runs.label == VX).sum() / max(1, data.runs[data.runs.label == VX].config.nunique()))
    charts.dots(
        ax,
        data,
        VX,
        VEXPRESS_CONFIGS,
        "sf_exec_s",
        "SurfaceFlinger execution time (s)",
        f"vexpress, bbench-android: SurfaceFlinger execution time, {n} runs (dots), mean ± std",
    )
    charts.save(fig, path)


def draw_render_times(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(RENDERS), figsize=(10, 4.0), dpi=120)
    for ax, (i, what) in zip(axes, RENDERS.items()):
        charts.dots(ax, data, VX, VEXPRESS_CONFIGS, f"render{i}_s", "render time (s)", f"render #{i} ({what})")
    fig.suptitle("vexpress: page render time, WebViewCore start -> SurfaceFlinger done", fontsize=11)
    charts.save(fig, path)


def draw_vexpress_residency(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.2), dpi=120)
    charts.share_bars(ax, data, VX, VEXPRESS_CONFIGS, list(TASK_GROUPS[BBENCH]), "share of CPU time on CPUs 0,2")
    ax.set_title("vexpress: residency on the unslowed CPUs 0,2 (the rest on the slowed 1,3), mean ± std", fontsize=10)
    charts.save(fig, path)


def draw_linsched_residency(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.8), dpi=120)
    charts.share_bars(ax, data, LS, LINSCHED_CONFIGS, list(TASK_GROUPS[LINSCHED_TEST]), "share of CPU time on big")
    ax.set_title("LinSched test case: big residency (2 LITTLE + 2 big, 10 s), mean ± std", fontsize=10)
    charts.save(fig, path)


# The vexpress window: page 1's load render (JavaScript timer 2 s, ~5 s of rendering) and render
# #2, the first scroll after the 8 s delay.
VEXPRESS_WINDOW_S = (0.0, 20.0)


def draw_vexpress_placement(data: ChartData, path: Path) -> None:
    seed = int(data.intervals.seed.min()) if not data.intervals.empty else 0
    charts.placement(
        data,
        path,
        VX,
        VEXPRESS_CONFIGS,
        FAST_CPUS,
        VEXPRESS_WINDOW_S,
        f"vexpress, bbench-android (seed {seed}): which CPU each thread ran on; big = unslowed CPUs 0,2",
    )


def draw_linsched_placement(data: ChartData, path: Path) -> None:
    seed = int(data.intervals.seed.min()) if not data.intervals.empty else 0
    charts.placement(
        data,
        path,
        LS,
        LINSCHED_CONFIGS,
        _big_cpus(LINSCHED),
        (0.0, LINSCHED_LIMIT_S),
        f"LinSched test case (seed {seed}): which CPU each task ran on",
    )


CHARTS = (
    Chart(
        "fig_sf_exec_time.png",
        "SurfaceFlinger execution time (vexpress)",
        ("vexpress",),
        draw_sf_exec,
        "Each dot one run (seed); black: mean ± standard deviation. The seed's 'total execution time for 20 runs'.",
    ),
    Chart(
        "fig_render_times.png",
        "Page render times #2 and #6 (vexpress)",
        ("vexpress",),
        draw_render_times,
        "Render time = WebViewCoreThread's render-start to SurfaceFlinger's render-done, per run.",
    ),
    Chart(
        "fig_vexpress_residency.png",
        "Residency on the unslowed CPUs (vexpress)",
        ("vexpress",),
        draw_vexpress_residency,
        "Share of each task's CPU time on CPUs 0,2; the rest ran on 1,3.",
    ),
    Chart(
        "fig_vexpress_placement.png",
        "Which CPU each thread ran on (vexpress, first seed)",
        ("vexpress",),
        draw_vexpress_placement,
        "The first 20 s of the first seed's run: page 1's load render and render #2 (its first scroll); "
        "intervals.csv holds every interval.",
    ),
    Chart(
        "fig_linsched_placement.png",
        "Which CPU each task ran on (LinSched, first seed)",
        ("linsched",),
        draw_linsched_placement,
        "The seed's LinSched slides: the 7 tasks over the 10 s, coloured by CPU.",
    ),
    Chart(
        "fig_linsched_residency.png",
        "Big residency of tasks 1-2, 3-4 and 5-7 (LinSched)",
        ("linsched",),
        draw_linsched_residency,
        "Share of each task group's CPU time on the big CPUs.",
    ),
    Chart(
        "fig_exynos.png",
        "The workloads on the Exynos 5422",
        ("exynos",),
        charts.draw_exynos,
        "Time, sensor energy and migrations per configuration.",
    ),
)


EXPERIMENT = Experiment(
    name="bl-mp-sched",
    title="big.LITTLE MP scheduling: vexpress with perf-slowed CPUs, the LinSched test case, the Exynos 5422",
    source="seed 003: Rasmussen (ARM), 'Research Update on big.LITTLE MP Scheduling', 2012: the vexpress and "
    "LinSched evaluations",
    description=DESCRIPTION,
    method="Each part ran on its own board (vexpress-a9, linsched-2b2l, exynos5422)",
    platform=VEXPRESS,
    benchmarks=BENCHMARKS,
    configs=CONFIGS,
    baseline="smp",  # the seed's upper bound; the long summary has no ratios
    groups=GROUPS,
    names_help=f"{BBENCH}, {LINSCHED_TEST}",
    labels_help="or one part: NAME-vexpress, NAME-linsched, NAME-exynos",
    tables=TABLES,
    figures=(),
    claims=claims,
    reps=20,
    metrics=METRICS,
    charts=CHARTS,
    run_columns=run_columns,
    check=check,
    prepare=prepare,
    simulate_options=simulate_options,
    report_sections=report_sections,
)
