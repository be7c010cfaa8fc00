"""The `lctes2020` reproduction: the seed paper's §5 (Wolff & Porter, LCTES'20, Figures 5 and 6).

This module owns everything specific to the paper: its benchmarks and configurations, the ccbench
iteration calibration, its claims, figures and report sections; the anti-snoop model its
anti-snoop column runs with (the options, sweep and training that make it) is lctes2020_model.py's.
DESCRIPTION says what it runs (`hetlab reproduce --help`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hetlab import _core, api
from hetlab.experiment import (
    NOT_RUN,
    Benchmark,
    Claim,
    Config,
    Context,
    Experiment,
    Figure,
    Table,
    merged_options,
)
from hetlab.experiments import measured_profiles
from hetlab.experiments.lctes2020_model import (
    FIG4,
    Settings,
    Trained,
    accuracy_section,
    check,
    prepare,
    provenance,
)

if TYPE_CHECKING:
    import pandas as pd

CLUSTERS = ("little", "big")
CLUSTER_TAG = {"little": "L", "big": "b"}  # the paper's {name}-{input}-{b|L} labels
TRAINED = "<trained>"  # stands for the model trained (or given) in this run
RUN_S = 0.75  # ccbench grid: simulated seconds per run under all-max

DESCRIPTION = """\
Every benchmark runs on one cluster (the other idle) under five configurations and is compared
with Linux ondemand:

    ondemand         the baseline
    idle-min         active cluster at its top OPP, idle cluster at its lowest
    all-max          both clusters at their top OPP
    anti-snoop       ondemand-anti-snoop with the model trained on this platform
    anti-snoop-fig4  the same governor with the paper's own trees (extra column)

The trained model comes from the characterization sweep and training run into OUT (resumable:
an existing sweep and model in OUT are reused when made with the same options), or from
--model. Figures: fig5_ccbench_time.png, fig6a_time.png, fig6b_energy.png; report.md adds the
model's held-out accuracy and the governor's PMC overhead next to the paper's §5.3."""

# --- benchmarks and configurations --------------------------------------------------------------

# The paper's own ccbench sizes (Figure 5's labels), 4-byte elements: 16 B, 256 KB, 512 KB,
# 625 KB, 4 MB, 128 MB and 256 MB; the sweep's paper layout uses the same list.
CCBENCH_SIZES = tuple(_core.PAPER_CCBENCH_SIZES)
FIG5_AXIS_TOP = 2.4  # the top of Figure 5's speedup axis (seed 001)
CCBENCH_PATTERNS = ("random", "sequential", "stride-16")
GRID = tuple(
    (f"ccbench-{size}-{pattern}", f"ccbench:size={size},pattern={pattern}")
    for pattern in CCBENCH_PATTERNS
    for size in CCBENCH_SIZES
)

# The paper's Figure 6 benchmarks (§5.1) and their built-in hetlab workloads.
REALISTIC = (
    ("gcc-g23", "spec-gcc-g23", "spec"),
    ("bwaves-test", "spec-bwaves-test", "spec"),
    ("povray-train", "spec-povray-train", "spec"),
    ("h264ref-train", "spec-h264ref-train", "spec"),
    ("bbench", "bbench", "web"),
    ("speedometer2", "speedometer2", "web"),
    ("mplayer-1080p", "mplayer-1080p", "video"),
)
REALISTIC_GROUPS = ("spec", "web", "video")


def _pinned(name: str, workload: str, group: str, cluster: str, calibrate: bool = False) -> Benchmark:
    """A benchmark on one cluster, the other idle (taskset)."""
    return Benchmark(name, f"{name}-{CLUSTER_TAG[cluster]}", workload, group, {"cluster": cluster}, calibrate)


# Plan order (and the figures' order): the ccbench grid all-LITTLE then all-big as in Figure 5;
# the other benchmarks in table order, each on LITTLE then big, as in Figure 6. The grid's
# iteration counts are calibrated at run time (`calibrate`).
BENCHMARKS = (
    *(_pinned(name, spec, "ccbench", c, calibrate=True) for c in CLUSTERS for name, spec in GRID),
    *(_pinned(name, spec, group, c) for name, spec, group in REALISTIC for c in CLUSTERS),
)

CONFIGS = (
    Config("ondemand", "ondemand (baseline)", {"governor": "ondemand"}),
    Config("idle-min", "idle-min (active max, idle min)", {"governor": "idle-min"}, colour="#9e9e9e"),
    Config("all-max", "all-max (both clusters max)", {"governor": "all-max"}, colour="#e6550d"),
    Config(
        "anti-snoop", "anti-snoop (model trained here)", {"governor": "anti-snoop", "model": TRAINED}, colour="#3182bd"
    ),
    Config(
        "anti-snoop-fig4",
        "anti-snoop (paper's Fig. 4 trees)",
        {"governor": "anti-snoop", "model": FIG4},
        paper=False,
        colour="#9ecae1",
        hatch="//",
    ),
)

GROUPS = {
    "ccbench": ("ccbench",),
    "realistic": REALISTIC_GROUPS,
    "spec": ("spec",),
    "web": ("web",),
    "video": ("video",),
}

TABLES = (
    Table("Figure 5: ccbench grid", ("ccbench",)),
    Table("Figure 6: realistic benchmarks", REALISTIC_GROUPS),
)

_SPEEDUP = "speedup over ondemand (t_ondemand / t)"
FIGURES = (
    Figure(
        "fig5_ccbench_time.png",
        "Figure 5: time on ccbench 'caches' (size-pattern-cluster), ondemand = 1",
        ("ccbench",),
        "speedup",
        _SPEEDUP,
        separate_by="cluster",  # Figure 5 lists LITTLE, then big
    ),
    Figure(
        "fig6a_time.png",
        "Figure 6a: time on realistic benchmarks, ondemand = 1",
        REALISTIC_GROUPS,
        "speedup",
        _SPEEDUP,
    ),
    Figure(
        "fig6b_energy.png",
        "Figure 6b: energy on realistic benchmarks, ondemand = 1",
        REALISTIC_GROUPS,
        "energy_saving",
        "energy saving over ondemand (E_ondemand / E)",
    ),
)


# --- each run's options -------------------------------------------------------------------------


def simulate_options(bench: Benchmark, config: Config, prepared: Trained) -> dict:
    options = merged_options(bench, config, prepared)
    if options.get("model") == TRAINED:
        options["model"] = prepared.model_path
    return options


# --- calibration --------------------------------------------------------------------------------


def _round2(x: float) -> int:
    """Two significant digits, so workload specs read well (ccbench iterations)."""
    if x < 100:
        return max(1, int(round(x)))
    e = 10 ** (int(math.floor(math.log10(x))) - 1)
    return int(round(x / e) * e)


def calibrate(benchmarks: list[Benchmark], ctx: Context) -> dict[str, str]:
    """The workload spec of each label: ccbench grid points get the iteration count that makes
    one run last about RUN_S under all-max (measured with a short probe)."""
    specs = {}
    for b in benchmarks:
        spec = b.workload
        if b.calibrate:
            probe = 200_000
            r = api.simulate(
                ctx.platform, f"{spec},iterations={probe}", cluster=b.options["cluster"], governor="all-max", seed=1
            )
            spec = f"{spec},iterations={_round2(RUN_S * probe / r.time_s)}"
        specs[b.label] = spec
    return specs


# --- summary columns ----------------------------------------------------------------------------


def measures(g: pd.DataFrame, row: dict) -> dict:
    """Per label and configuration: the two clusters' average clocks, the L2 misses, the idle
    cluster's share of the energy and the governor's cost per sample."""
    idle = "big" if row["cluster"] == "little" else "little"
    samples = g.governor_samples.sum()
    return {
        "active_freq_mhz": float(g[f"avg_freq_{row['cluster']}_khz"].mean()) / 1000,
        "idle_freq_mhz": float(g[f"avg_freq_{idle}_khz"].mean()) / 1000,
        "l2_mpki": float(g.l2_mpki.mean()),
        "idle_cluster_energy_share": float((g[f"energy_{idle}_j"] / g.energy_j).mean()),
        "governor_overhead_us_per_sample": float(1e6 * g.governor_overhead_s.sum() / samples) if samples else 0.0,
    }


# --- claims -------------------------------------------------------------------------------------

# Orderings treat two configurations as tied when their means differ by less than the sum of
# their standard deviations, or by less than TIE (relative) when the runs hardly vary.
TIE = 0.005


class _Lookup:
    def __init__(self, summary: pd.DataFrame):
        self.rows = {(r["label"], r["config"]): r for r in summary.to_dict("records")}
        self.summary = summary

    def __call__(self, label: str, config: str) -> dict | None:
        return self.rows.get((label, config))

    def labels(self, benchmark: str) -> list[str]:
        return [lab for lab in dict.fromkeys(self.summary.label) if lab.rsplit("-", 1)[0] == benchmark]


def _x(row: dict, metric: str = "speedup") -> str:
    return f"{row[f'{metric}_mean']:.2f}x ± {row[f'{metric}_std']:.2f}"


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def _at_least(S, label: str, metric: str, threshold: float, claim: str, paper: str) -> Claim:
    r = S(label, "anti-snoop")
    if r is None:
        return Claim(claim, paper, "–", NOT_RUN)
    return Claim(claim, paper, _x(r, metric), _yes(r[f"{metric}_mean"] >= threshold))


def _ccbench_claims(S: _Lookup) -> list[Claim]:
    grid = S.summary[(S.summary.group == "ccbench") & (S.summary.config == "anti-snoop")]
    worst_claim = (
        "ccbench grid: anti-snoop never more than 2% slower than ondemand on any configuration (speedup ≥ 0.98x)"
    )
    worst_paper = "always at least as good as ondemand (§5.2, Fig. 5)"
    mean_claim = "ccbench grid: mean anti-snoop speedup over ondemand ≥ 1.2x"
    mean_paper = "1.4x on average (§5.2, Fig. 5)"
    if grid.empty:
        return [Claim(worst_claim, worst_paper, "–", NOT_RUN), Claim(mean_claim, mean_paper, "–", NOT_RUN)]
    worst = grid.loc[grid.speedup_mean.idxmin()]
    slower = grid[grid.speedup_mean < 0.98]
    return [
        Claim(
            worst_claim,
            worst_paper,
            f"worst {worst.speedup_mean:.3f}x ± {worst.speedup_std:.3f} ({worst.label})"
            f" over {len(grid)} configurations",
            _yes(slower.empty),
            "" if slower.empty else "slower than 0.98x: " + ", ".join(slower.label),
        ),
        Claim(
            mean_claim,
            mean_paper,
            f"{grid.speedup_mean.mean():.2f}x (range {grid.speedup_mean.min():.2f}-{grid.speedup_mean.max():.2f}"
            f" over {len(grid)} configurations)",
            _yes(grid.speedup_mean.mean() >= 1.2),
            # Figure 5's speedup axis ends at 2.4: bars above it are outside what the paper drew
            f"{(grid.speedup_mean > FIG5_AXIS_TOP).sum()} of {len(grid)} above Figure 5's {FIG5_AXIS_TOP}x axis",
        ),
    ]


def _order_claims(S: _Lookup) -> list[Claim]:
    realistic = [lab for lab in dict.fromkeys(S.summary[S.summary.group != "ccbench"].label)]
    paper_configs = [c.name for c in CONFIGS if c.paper]
    order_claim = (
        "Realistic benchmarks: all-max fastest, anti-snoop second, ondemand third"
        " (ties within spread, at least 0.5%, allowed)"
    )
    order_paper = (
        "all-max fastest; anti-snoop 'consistently comes second, followed by the ondemand governor' (§5.2, Fig. 6a)"
    )
    energy_claim = "Realistic benchmarks: all-max spends the most energy of the four configurations (ties as above)"
    energy_paper = "all-max 'uses far more energy' (§5.2, Fig. 6b)"
    if not realistic:
        return [Claim(order_claim, order_paper, "–", NOT_RUN), Claim(energy_claim, energy_paper, "–", NOT_RUN)]

    def tol(a: dict, b: dict, col: str) -> float:  # the two spreads, and never below TIE of the larger mean
        return max(a[f"{col}_std"] + b[f"{col}_std"], TIE * max(a[f"{col}_mean"], b[f"{col}_mean"]))

    def not_slower(a: dict, b: dict) -> bool:  # a's time <= b's, ties allowed
        return a["time_s_mean"] <= b["time_s_mean"] + tol(a, b, "time_s")

    bad_order, bad_energy = [], []
    for lab in realistic:
        am, an, od = S(lab, "all-max"), S(lab, "anti-snoop"), S(lab, "ondemand")
        if not (not_slower(am, an) and not_slower(an, od)):
            ranks = sorted(paper_configs, key=lambda c: S(lab, c)["time_s_mean"])
            bad_order.append(f"{lab} ({' < '.join(ranks)})")
        most = max(paper_configs, key=lambda c: S(lab, c)["energy_j_mean"])
        top = S(lab, most)
        if top["energy_j_mean"] > am["energy_j_mean"] + tol(am, top, "energy_j"):
            bad_energy.append(f"{lab} (most: {most}; all-max {1 / am['energy_saving_mean']:.2f}x ondemand's energy)")
    n = len(realistic)

    def result(bad: list[str]) -> tuple[str, str]:
        holds = "yes" if not bad else ("no" if len(bad) == n else "partly")
        return f"{n - len(bad)}/{n} benchmark-cluster pairs", holds

    h1, y1 = result(bad_order)
    h2, y2 = result(bad_energy)
    if bad_energy:
        ods = [S(lab, "ondemand") for lab in realistic]
        share = sum(r["idle_cluster_energy_share"] for r in ods) / len(ods)
        bad_energy.append(
            f"all-max spends less than ondemand wherever its speedup exceeds its power ratio to ondemand "
            f"({_race_facts(S, realistic)}); the idle cluster's leakage is {share:.0%} of ondemand's "
            "sensor energy on average, so racing with both clusters at their top OPP can pay for itself "
            "when snoops slow ondemand's run enough"
        )
    return [
        Claim(
            order_claim,
            order_paper,
            h1,
            y1,
            "" if not bad_order else "not in that order (fastest first): " + "; ".join(bad_order),
        ),
        Claim(
            energy_claim,
            energy_paper,
            h2,
            y2,
            "" if not bad_energy else "all-max not the most: " + "; ".join(bad_energy),
        ),
    ]


def _race_facts(S: _Lookup, labels: list[str]) -> str:
    """all-max speedup vs its power ratio to ondemand, for the pairs where all-max saves energy."""
    facts = []
    for lab in labels:
        am, od = S(lab, "all-max"), S(lab, "ondemand")
        power_ratio = (am["energy_j_mean"] / am["time_s_mean"]) / (od["energy_j_mean"] / od["time_s_mean"])
        if am["speedup_mean"] > power_ratio:
            facts.append(f"{lab} {am['speedup_mean']:.2f}x faster at {power_ratio:.2f}x the power")
    return ", ".join(facts) or "no such pair"


def _snoop_slowdown(S: _Lookup, label: str) -> float | None:
    """How much slower `label` runs with the idle cluster at its lowest OPP than at its top OPP,
    the active cluster at its top OPP in both (idle-min vs all-max): the snoop penalty alone."""
    slow, fast = S(label, "idle-min"), S(label, "all-max")
    if slow is None or fast is None:
        return None
    return slow["time_s_mean"] / fast["time_s_mean"] - 1


def _snoop_claims(S: _Lookup) -> list[Claim]:
    """The paper's two statements of how large the snoop penalty is (LCTES'20 §1), as
    validation of the memory model and workload profiles rather than of the governor."""
    gcc_claim = (
        "snoop penalty of gcc: idle cluster at its lowest vs its top OPP (active cluster at its top OPP) "
        "about 80% slower (60-100%)"
    )
    gcc_paper = "'gcc, for example, can suffer an 80% slowdown due to this mechanism' (§1)"
    max_claim = "snoop penalty of the realistic benchmarks: at most 80% slower, as above (≤ 85% allowed)"
    max_paper = "'a slowdown of up to 80% for the most memory-intensive applications' (§1)"
    realistic = list(dict.fromkeys(S.summary[S.summary.group != "ccbench"].label))
    slow = {lab: _snoop_slowdown(S, lab) for lab in realistic}
    slow = {lab: x for lab, x in slow.items() if x is not None}
    gcc = {lab: x for lab, x in slow.items() if lab.startswith("gcc-")}
    claims = []
    if gcc:
        worst = max(gcc, key=gcc.get)
        claims.append(
            Claim(
                gcc_claim,
                gcc_paper,
                "; ".join(f"{lab} {x:+.0%}" for lab, x in gcc.items()),
                _yes(0.6 <= gcc[worst] <= 1.0),
            )
        )
    else:
        claims.append(Claim(gcc_claim, gcc_paper, "–", NOT_RUN))
    if slow:
        over = {lab: x for lab, x in slow.items() if x > 0.85}
        worst = max(slow, key=slow.get)
        holds = "yes" if not over else ("no" if len(over) == len(slow) else "partly")
        note = (
            (
                "above the paper's bound: "
                + ", ".join(f"{lab} {x:+.0%}" for lab, x in over.items())
                + " — these workload profiles (ASSUMPTION, see their files) make more L2 misses on that cluster than "
                "the paper's runs can have"
            )
            if over
            else ""
        )
        claims.append(
            Claim(
                max_claim,
                max_paper,
                f"largest {worst} {slow[worst]:+.0%}; {len(slow) - len(over)}/{len(slow)} "
                "benchmark-cluster pairs within",
                holds,
                note,
            )
        )
    else:
        claims.append(Claim(max_claim, max_paper, "–", NOT_RUN))
    return claims


def _per_cluster(S: _Lookup, benchmark: str) -> list[dict]:
    return [r for r in (S(lab, "anti-snoop") for lab in S.labels(benchmark)) if r is not None]


def _povray(S: _Lookup) -> Claim:
    claim, paper = (
        "povray-train: anti-snoop gains < 5% (speedup < 1.05x on each cluster)",
        "'a very minor speedup' (§5.2, Fig. 6a)",
    )
    rows = _per_cluster(S, "povray-train")
    if not rows:
        return Claim(claim, paper, "–", NOT_RUN)
    return Claim(
        claim,
        paper,
        "; ".join(f"{r['label']} {_x(r)}" for r in rows),
        _yes(all(r["speedup_mean"] < 1.05 for r in rows)),
    )


def _h264(S: _Lookup) -> Claim:
    claim = (
        "h264ref-train: anti-snoop gains much more on LITTLE than on big "
        "(gain on LITTLE > 0, ≥ 2x the gain on big, and the difference beyond the spread)"
    )
    paper = "LITTLE faces high snoop latency, big 'should not suffer much' (§5.1, Fig. 6a)"
    L, b = S("h264ref-train-L", "anti-snoop"), S("h264ref-train-b", "anti-snoop")
    if L is None or b is None:
        return Claim(claim, paper, "–", NOT_RUN)
    gl, gb = L["speedup_mean"] - 1, b["speedup_mean"] - 1
    ok = gl > 0 and gl >= 2 * max(gb, 0.0) and gl - gb > L["speedup_std"] + b["speedup_std"]
    return Claim(claim, paper, f"LITTLE {gl:+.1%} ({_x(L)}); big {gb:+.1%} ({_x(b)})", _yes(ok))


def _range_note(S: _Lookup, r: dict, lo: float, hi: float) -> str:
    """Why an anti-snoop speedup falls outside [lo, hi], from the runs' own data."""
    lab = r["label"]
    am, od = S(lab, "all-max"), S(lab, "ondemand")
    gap = am["speedup_mean"] - 1
    recovered = f"{(r['speedup_mean'] - 1) / gap:.0%}" if gap > 1e-9 else "none"
    facts = (
        f"{lab}: anti-snoop {r['speedup_mean']:.2f}x, all-max {am['speedup_mean']:.2f}x; idle cluster at "
        f"{od['idle_freq_mhz']:.0f} / {r['idle_freq_mhz']:.0f} / {am['idle_freq_mhz']:.0f} MHz and active cluster at "
        f"{od['active_freq_mhz']:.0f} / {r['active_freq_mhz']:.0f} / {am['active_freq_mhz']:.0f} MHz "
        f"(ondemand / anti-snoop / all-max); L2 MPKI {od['l2_mpki']:.1f}"
    )
    same_active = am["active_freq_mhz"] <= 1.05 * od["active_freq_mhz"]
    if r["speedup_mean"] < lo and am["speedup_mean"] < lo:
        why = (
            f"even all-max, both clusters at their top OPP, gains only {am['speedup_mean']:.2f}x, so no frequency "
            "setting reaches the paper's range on this workload: ondemand loses little to snoops here"
        )
    elif r["speedup_mean"] < lo:
        why = f"anti-snoop recovers {recovered} of the ondemand → all-max gap"
    elif same_active:
        why = (
            "ondemand already runs the active cluster at (nearly) all-max's frequency, "
            "so all-max's gain comes from the "
            "idle cluster's clock, i.e. from snoops answered by the slow idle cluster: this workload's memory traffic "
            f"pays a larger snoop penalty than the paper's runs did; anti-snoop recovers {recovered} of it"
        )
    else:
        why = (
            f"part of the gain is the active cluster's clock (ondemand {od['active_freq_mhz']:.0f} MHz vs "
            f"{am['active_freq_mhz']:.0f} MHz), the rest the idle cluster's; anti-snoop recovers {recovered} of the gap"
        )
    return f"{facts}: {why}"


def _range(S: _Lookup, benchmark: str, paper: str, lo: float = 1.1, hi: float = 1.3) -> Claim:
    claim = f"{benchmark}: anti-snoop speedup over ondemand in the paper's range {lo}-{hi}x"
    rows = _per_cluster(S, benchmark)
    if not rows:
        return Claim(claim, paper, "–", NOT_RUN)
    inside = [lo <= r["speedup_mean"] <= hi for r in rows]
    holds = "yes" if all(inside) else ("no" if not any(inside) else "partly")
    note = "; ".join(_range_note(S, r, lo, hi) for r, ok in zip(rows, inside) if not ok)
    return Claim(claim, paper, "; ".join(f"{r['label']} {_x(r)}" for r in rows), holds, note)


def claims(summary: pd.DataFrame, runs: pd.DataFrame | None) -> list[Claim]:
    """The paper's claims (§1 and §5.2, with the reproduction's acceptance thresholds), each
    judged from the summary."""
    S = _Lookup(summary)
    out = [
        _at_least(
            S,
            "gcc-g23-L",
            "speedup",
            1.25,
            "gcc-g23 on LITTLE: anti-snoop speedup over ondemand ≥ 1.25x",
            "1.4x (§5.2, Fig. 6a)",
        ),
        _at_least(
            S,
            "gcc-g23-L",
            "energy_saving",
            1.3,
            "gcc-g23 on LITTLE: anti-snoop energy saving over ondemand ≥ 1.3x",
            "1.7x (§5.2, Fig. 6b)",
        ),
    ]
    out += _ccbench_claims(S)
    out += _order_claims(S)
    out += _snoop_claims(S)
    out += [
        _povray(S),
        _h264(S),
        _range(S, "bbench", "1.1-1.25x for page loading (§5.2)"),
        _range(S, "speedometer2", "up to 1.3x (§5.2)"),
        _range(S, "mplayer-1080p", "in Fig. 6a only; the web range 1.1-1.3x (§5.2)"),
    ]
    return out


# --- report.md: its sections and provenance -----------------------------------------------------


def _overhead_section(summary: pd.DataFrame) -> list[str]:
    a = summary[summary.config == "anti-snoop"]
    if a.empty:
        return []
    lines = [
        "## Governor overhead",
        "",
        "The paper measured 41.82 µs per update of the per-thread PMCs for the single-threaded SPEC "
        "benchmarks and 415.18 µs for Speedometer 2.0's 71 threads (§5.3). hetlab charges each anti-snoop "
        "sample's PMC reads to the CPU that runs it; mean cost per sample:",
        "",
        "| group | anti-snoop µs per sample (range over benchmark-cluster pairs) |",
        "|---|---|",
    ]
    for group, g in a.groupby("group", sort=False):
        lines.append(
            f"| {group} | {g.governor_overhead_us_per_sample.mean():.1f} "
            f"({g.governor_overhead_us_per_sample.min():.1f}-{g.governor_overhead_us_per_sample.max():.1f}) |"
        )
    return lines


def run_columns(bench: Benchmark, config: Config, r: api.SimResult) -> dict:
    """Where each run's rail energy went, for report.md's energy account: leakage of both
    clusters, switching on the active and on the idle cluster, the DRAM lines moved and the
    speculative fetches retried (read twice)."""
    clusters = {c["name"]: c for c in r.summary["clusters"]}
    active = bench.options["cluster"]
    return {
        "static_j": sum(c["static_j"] for c in clusters.values()),
        "dynamic_active_j": clusters[active]["dynamic_j"],
        "dynamic_idle_j": sum(c["dynamic_j"] for name, c in clusters.items() if name != active),
        "dram_lines": r.summary["dram_lines"],
        "retried_fetches": sum(p["mi_retry_speculative_fetch"] for p in r.summary["cci_ports"]),
    }


ACCOUNTED = "gcc-g23-L"  # the benchmark of the paper's energy claim (1.7x)
ACCOUNT_CONFIGS = ("ondemand", "anti-snoop", "all-max")


def _energy_account_section(runs: pd.DataFrame) -> list[str]:
    """The energy ratio's algebra on the runs of the paper's energy claim: which terms grow with
    time and which with work, and where the model puts each one."""
    lines = ["## Where the energy goes: the account behind the energy claims", ""]
    g = runs[(runs.label == ACCOUNTED) & runs.config.isin(ACCOUNT_CONFIGS)]
    if set(g.config) != set(ACCOUNT_CONFIGS):
        return [*lines, f"Not run: {ACCOUNTED} under {', '.join(ACCOUNT_CONFIGS)} was not selected."]
    m = g.groupby("config").mean(numeric_only=True)
    m["rails_j"] = m.energy_little_j + m.energy_big_j + m.energy_dram_j
    lines += [
        f"{ACCOUNTED}, mean of {int(g.groupby('config').size().min())} seeds; energy on the sensed rails (both "
        "clusters and DRAM, integrated exactly rather than read every 263.8 ms):",
        "",
        "| configuration | idle cluster MHz | time s | leakage J | active cluster switching J "
        "| idle cluster switching J | DRAM J | DRAM lines M | retried fetches M | rails J | mean rails W |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    idle_mhz = m.avg_freq_big_khz / 1000  # gcc-g23-L runs on LITTLE: big is the idle cluster
    for config in ACCOUNT_CONFIGS:
        r = m.loc[config]
        lines.append(
            f"| {config} | {idle_mhz[config]:.0f} | {r.time_s:.2f} | {r.static_j:.3f} | {r.dynamic_active_j:.3f} "
            f"| {r.dynamic_idle_j:.3f} "
            f"| {r.energy_dram_j:.3f} | {r.dram_lines / 1e6:.1f} | {r.retried_fetches / 1e6:.1f} | {r.rails_j:.3f} "
            f"| {r.rails_j / r.time_s:.3f} |"
        )
    o, a = m.loc["ondemand"], m.loc["anti-snoop"]
    speedup, saving = o.time_s / a.time_s, o.rails_j / a.rails_j
    lines += [
        "",
        "Write each run's energy as E = A·T + W: A the power that flows whatever the work (leakage, DRAM "
        "background, the idle cluster's clock), W the energy of the work itself. Raising the idle cluster "
        "within one voltage band (the A15's 200-800 MHz share 0.9 V) keeps its leakage but raises its "
        "clocked shared logic (clock tree, L2, snoop control: `clock_power_coefficient`·V²·f, measured on "
        "an XU3) with the clock, so A grows, and E_ondemand / E_anti-snoop ≤ T_ondemand / T_anti-snoop "
        "unless ondemand spends more *work* energy (model-review §2.4). Here anti-snoop's idle cluster "
        f"averaged {idle_mhz['anti-snoop']:.0f} MHz "
        f"(ondemand's {idle_mhz['ondemand']:.0f}), so its leakage per second is "
        f"{a.static_j / a.time_s:.3f} W against ondemand's {o.static_j / o.time_s:.3f} W; the speedup is "
        f"{speedup:.2f}x and the rails' energy saving {saving:.2f}x. What ondemand spends beyond anti-snoop:",
        "",
        f"- leakage {o.static_j - a.static_j:+.3f} J (time-proportional: it runs {o.time_s - a.time_s:.2f} s longer);",
        f"- switching on the active cluster {o.dynamic_active_j - a.dynamic_active_j:+.3f} J: a core stalled on "
        "memory still switches (`stall_activity` of the core type), so the longer, more stalled run costs more;",
        f"- DRAM {o.energy_dram_j - a.energy_dram_j:+.3f} J: its background over the longer run, and "
        f"{(o.dram_lines - a.dram_lines) / 1e6:+.1f} M lines, of which {o.retried_fetches / 1e6:.1f} M are "
        "speculative fetches read a second time because the idle cluster's snoop answered after DRAM "
        f"(anti-snoop: {a.retried_fetches / 1e6:.1f} M);",
        f"- switching on the idle cluster {o.dynamic_idle_j - a.dynamic_idle_j:+.3f} J (anti-snoop clocks it "
        "higher: its shared logic switches at that clock with every core in WFI; the cores only when woken).",
        "",
        "The paper's 1.7x energy at 1.4x speed needs ondemand's mean sensed power to be about 20 % above "
        "anti-snoop's; the last column shows the model's ratio "
        f"({(o.rails_j / o.time_s) / (a.rails_j / a.time_s):.2f}).",
    ]
    return lines


def runs_sections(summary: pd.DataFrame, runs: pd.DataFrame, prepared: Trained) -> list[list[str]]:
    return [_energy_account_section(runs)]


def report_sections(summary: pd.DataFrame, prepared: Trained) -> list[list[str]]:
    return [
        accuracy_section(prepared),
        _overhead_section(summary),
        measured_profiles.section(summary, prepared, EXPERIMENT),
    ]


EXPERIMENT = Experiment(
    name="lctes2020",
    title="LCTES'20 §5: ondemand-anti-snoop vs ondemand, idle-min and all-max (Figures 5 and 6)",
    source="seed 000: Wolff & Porter, 'Performance Optimization on big.LITTLE Architectures: "
    "A Memory-latency Aware Approach', LCTES'20, §5",
    description=DESCRIPTION,
    method="Each benchmark ran on one cluster with the other idle",
    platform="exynos5422",
    benchmarks=BENCHMARKS,
    configs=CONFIGS,
    baseline="ondemand",
    groups=GROUPS,
    names_help=", ".join(name for name, _, _ in REALISTIC) + ", ccbench-SIZE-PATTERN",
    labels_help="optionally -L or -b",
    tables=TABLES,
    figures=FIGURES,
    claims=claims,
    measures=measures,
    settings=Settings,
    check=check,
    prepare=prepare,
    calibrate=calibrate,
    simulate_options=simulate_options,
    run_columns=run_columns,
    report_sections=report_sections,
    runs_sections=runs_sections,
    provenance=provenance,
)
