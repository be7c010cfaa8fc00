"""The seed paper's claims as the `lctes2020` reproduction judges them: each numeric claim has a
band fixed here, before any run — the paper's gain within ±25 % holds, within ±50 % holds
partly, anything else (too little *or too much*) does not — and a mechanism column that says,
from the runs, what in the model produces hetlab's number. lctes2020.py owns the rest.

The rule for a gain g = ratio − 1 the paper gives (or a range of gains g_lo..g_hi): holds for
ratios in [1 + 0.75·g_lo, 1 + 1.25·g_hi], partly in [1 + 0.5·g_lo, 1 + 1.5·g_hi]. Overshooting
the paper by far is not holding (issue 31): a 2.27x against the paper's 1.4x does not hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hetlab.experiment import NOT_RUN, Claim

if TYPE_CHECKING:
    import pandas as pd

FIG5_AXIS_TOP = 2.4  # the top of Figure 5's speedup axis (seed 001)
# Orderings treat two configurations as tied when their means differ by less than the sum of
# their standard deviations, or by less than TIE (relative) when the runs hardly vary.
TIE = 0.005
PAPER_CONFIGS = ("ondemand", "idle-min", "all-max", "anti-snoop")  # the paper's four configurations


@dataclass(frozen=True)
class Band:
    """What counts as holding: `holds` and `partly` are closed intervals of the ratio."""

    holds: tuple[float, float]
    partly: tuple[float, float]
    unit: str = "x"

    @classmethod
    def from_gain(cls, lo: float, hi: float | None = None) -> Band:
        """The module's rule for the paper's gain `lo` (or gains lo..hi)."""
        hi = lo if hi is None else hi
        return cls((1 + 0.75 * lo, 1 + 1.25 * hi), (1 + 0.5 * lo, 1 + 1.5 * hi))

    def judge(self, x: float) -> str:
        if self.holds[0] <= x <= self.holds[1]:
            return "yes"
        return "partly" if self.partly[0] <= x <= self.partly[1] else "no"

    def text(self) -> str:
        f = (lambda v: f"{v:.0%}") if self.unit == "%" else (lambda v: f"{v:.2f}x")
        return f"holds {f(self.holds[0])}-{f(self.holds[1])}; partly {f(self.partly[0])}-{f(self.partly[1])}"


# The bands, fixed before the runs (the paper's numbers and where they are).
BANDS = {
    "gcc_speedup": Band.from_gain(0.4),  # 1.4x (§5.2, Fig. 6a)
    "gcc_energy": Band.from_gain(0.7),  # 1.7x (§5.2, Fig. 6b)
    "ccbench_mean": Band.from_gain(0.4),  # 1.4x on average (§5.2, Fig. 5)
    "gcc_penalty": Band((0.60, 1.00), (0.40, 1.20), "%"),  # 'an 80% slowdown' (§1): ±25 %, ±50 %
    "max_penalty": Band((0.0, 1.00), (0.0, 1.20), "%"),  # 'up to 80%' (§1): the largest, same rule
    "povray": Band((0.95, 1.05), (0.90, 1.10)),  # 'a very minor speedup' (§5.2): within 5 %
    "bbench": Band.from_gain(0.10, 0.25),  # 1.1-1.25x for page loading (§5.2)
    "speedometer2": Band.from_gain(0.10, 0.30),  # up to 1.3x (§5.2), the web range's low end below
    "mplayer-1080p": Band.from_gain(0.30),  # 'a 30% speedup in ... video decoding' (abstract)
}


def _worst(verdicts: list[str]) -> str:
    """Every row holds: yes; none holds even partly: no; otherwise partly."""
    if all(v == "yes" for v in verdicts):
        return "yes"
    return "no" if all(v == "no" for v in verdicts) else "partly"


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


def _idle_mechanism(S: _Lookup, label: str) -> str:
    """Where anti-snoop held the idle cluster and how much of all-max's gain that recovered."""
    a, od, am = S(label, "anti-snoop"), S(label, "ondemand"), S(label, "all-max")
    if a is None or od is None or am is None:
        return ""
    gap = am["speedup_mean"] - 1
    recovered = f"{(a['speedup_mean'] - 1) / gap:.0%}" if gap > 1e-9 else "none"
    return (
        f"{label}: idle cluster {a['idle_freq_mhz']:.0f} MHz on average under anti-snoop (ondemand "
        f"{od['idle_freq_mhz']:.0f}, all-max {am['idle_freq_mhz']:.0f}); all-max {am['speedup_mean']:.2f}x, "
        f"anti-snoop recovers {recovered} of it. Each L2 miss waits for the idle cluster's snoop once it "
        "outlasts the DRAM access (below 0.65 GHz on big, 0.41 GHz on LITTLE); the governor climbs while "
        "the trained tree reads the port's stall cycles per read as snooping and stops where it no longer does"
    )


def _gcc_claims(S: _Lookup) -> list[Claim]:
    out = []
    for key, metric, claim, paper in (
        ("gcc_speedup", "speedup", "gcc-g23 on LITTLE: anti-snoop speedup over ondemand", "1.4x (§5.2, Fig. 6a)"),
        (
            "gcc_energy",
            "energy_saving",
            "gcc-g23 on LITTLE: anti-snoop energy saving over ondemand",
            "1.7x (§5.2, Fig. 6b)",
        ),
    ):
        r, band = S("gcc-g23-L", "anti-snoop"), BANDS[key]
        if r is None:
            out.append(Claim(claim, paper, "–", NOT_RUN, band=band.text()))
            continue
        mech = _idle_mechanism(S, "gcc-g23-L")
        od = S("gcc-g23-L", "ondemand")
        if metric == "energy_saving" and od is not None:
            power = (od["energy_j_mean"] / od["time_s_mean"]) / (r["energy_j_mean"] / r["time_s_mean"])
            mech = (
                f"E = A·T + W: ondemand's mean rail power is {power:.2f}x anti-snoop's, so the saving is the "
                f"speedup ({r['speedup_mean']:.2f}x) times that; anti-snoop clocks the idle big cluster's shared "
                f"logic at {r['idle_freq_mhz']:.0f} MHz on average, ondemand's run is longer and stalled "
                "(the energy account below)"
            )
        out.append(
            Claim(claim, paper, _x(r, metric), band.judge(r[f"{metric}_mean"]), band=band.text(), mechanism=mech)
        )
    return out


def _ccbench_claims(S: _Lookup) -> list[Claim]:
    grid = S.summary[(S.summary.group == "ccbench") & (S.summary.config == "anti-snoop")]
    worst_claim = (
        "ccbench grid: anti-snoop never more than 2% slower than ondemand on any configuration (speedup ≥ 0.98x)"
    )
    worst_paper = "always at least as good as ondemand (§5.2, Fig. 5)"
    mean_claim = (
        f"ccbench grid: mean anti-snoop speedup over ondemand, every bar within Figure 5's {FIG5_AXIS_TOP}x axis"
    )
    mean_paper = "1.4x on average (§5.2, Fig. 5)"
    band = BANDS["ccbench_mean"]
    if grid.empty:
        return [
            Claim(worst_claim, worst_paper, "–", NOT_RUN, band="worst ≥ 0.98x"),
            Claim(mean_claim, mean_paper, "–", NOT_RUN, band=band.text()),
        ]
    worst = grid.loc[grid.speedup_mean.idxmin()]
    slower = grid[grid.speedup_mean < 0.98]
    above = grid[grid.speedup_mean > FIG5_AXIS_TOP]
    mean = grid.speedup_mean.mean()
    verdict = band.judge(mean)
    if not above.empty and verdict == "yes":
        verdict = "partly"  # bars beyond what the paper drew are overshoot too
    return [
        Claim(
            worst_claim,
            worst_paper,
            f"worst {worst.speedup_mean:.3f}x ± {worst.speedup_std:.3f} ({worst.label})"
            f" over {len(grid)} configurations",
            _yes(slower.empty),
            "" if slower.empty else "slower than 0.98x: " + ", ".join(slower.label),
            band="worst ≥ 0.98x",
            mechanism="anti-snoop never goes below ondemand's load-based choice (Algorithm 2, line 13), "
            "so it only loses the PMC reads' cost (§5.3)",
        ),
        Claim(
            mean_claim,
            mean_paper,
            f"{mean:.2f}x (range {grid.speedup_mean.min():.2f}-{grid.speedup_mean.max():.2f}"
            f" over {len(grid)} configurations; {len(above)} above {FIG5_AXIS_TOP}x)",
            verdict,
            "" if above.empty else f"above Figure 5's {FIG5_AXIS_TOP}x axis: " + ", ".join(above.label),
            band=band.text() + f"; a bar above {FIG5_AXIS_TOP}x caps it at partly",
            mechanism="chases and streams beyond the L2 wait for the idle cluster's snoop at its low OPPs; "
            "the largest bars are DRAM-bound LITTLE chases whose every access is a snooped miss",
        ),
    ]


def _order_claims(S: _Lookup) -> list[Claim]:
    realistic = [lab for lab in dict.fromkeys(S.summary[S.summary.group != "ccbench"].label)]
    paper_configs = [c for c in PAPER_CONFIGS if c in set(S.summary.config)]
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
            band="every pair in that order (ties as stated): yes; some: partly; none: no",
            mechanism="all-max takes the snoop out of every miss; anti-snoop raises the idle cluster only while "
            "its tree reads snooping in the counters; ondemand leaves the idle cluster at its lowest OPP",
        ),
        Claim(
            energy_claim,
            energy_paper,
            h2,
            y2,
            "" if not bad_energy else "all-max not the most: " + "; ".join(bad_energy),
            band="every pair: yes; some: partly; none: no",
            mechanism="all-max clocks the idle cluster's shared logic at its top OPP and voltage; it saves "
            "energy where its speedup exceeds its power ratio (the notes)",
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
        "snoop penalty of gcc: idle cluster at its lowest vs its top OPP (active cluster at its top OPP), "
        "about 80% slower"
    )
    gcc_paper = "'gcc, for example, can suffer an 80% slowdown due to this mechanism' (§1)"
    max_claim = "snoop penalty of the realistic benchmarks: at most 80% slower, as above"
    max_paper = "'a slowdown of up to 80% for the most memory-intensive applications' (§1)"
    realistic = list(dict.fromkeys(S.summary[S.summary.group != "ccbench"].label))
    slow = {lab: _snoop_slowdown(S, lab) for lab in realistic}
    slow = {lab: x for lab, x in slow.items() if x is not None}
    gcc = {lab: x for lab, x in slow.items() if lab.startswith("gcc-")}
    mech = (
        "every L2 miss of the active cluster waits for the idle cluster's snoop, at its lowest OPP "
        "slower than the DRAM access it overlaps (A15 at 200 MHz: 471 ns; A7: 297 ns; DRAM 145 ns); the "
        "penalty is the workload's share of time in L2 misses times that stretch"
    )
    gband, mband = BANDS["gcc_penalty"], BANDS["max_penalty"]
    claims = []
    if gcc:
        worst = max(gcc, key=gcc.get)
        claims.append(
            Claim(
                gcc_claim,
                gcc_paper,
                "; ".join(f"{lab} {x:+.0%}" for lab, x in gcc.items()),
                gband.judge(gcc[worst]),
                band=gband.text() + " (the larger of the two clusters)",
                mechanism=mech,
            )
        )
    else:
        claims.append(Claim(gcc_claim, gcc_paper, "–", NOT_RUN, band=gband.text()))
    if slow:
        over = {lab: x for lab, x in slow.items() if x > mband.holds[1]}
        worst = max(slow, key=slow.get)
        holds = mband.judge(slow[worst])
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
                band=mband.text() + " (the largest)",
                mechanism=mech,
            )
        )
    else:
        claims.append(Claim(max_claim, max_paper, "–", NOT_RUN, band=mband.text()))
    return claims


def _per_cluster(S: _Lookup, benchmark: str) -> list[dict]:
    return [r for r in (S(lab, "anti-snoop") for lab in S.labels(benchmark)) if r is not None]


def _povray(S: _Lookup) -> Claim:
    claim, paper = (
        "povray-train: anti-snoop gains very little on each cluster",
        "'a very minor speedup' (§5.2, Fig. 6a)",
    )
    band = BANDS["povray"]
    rows = _per_cluster(S, "povray-train")
    if not rows:
        return Claim(claim, paper, "–", NOT_RUN, band=band.text())
    return Claim(
        claim,
        paper,
        "; ".join(f"{r['label']} {_x(r)}" for r in rows),
        _worst([band.judge(r["speedup_mean"]) for r in rows]),
        band=band.text() + " (each cluster)",
        mechanism="; ".join(_idle_mechanism(S, r["label"]).split(". ")[0] for r in rows)
        + "; povray's few L2 misses make the snoop's stretch small",
    )


def _h264(S: _Lookup) -> Claim:
    claim = (
        "h264ref-train: anti-snoop gains much more on LITTLE than on big "
        "(gain on LITTLE > 0, ≥ 2x the gain on big, and the difference beyond the spread)"
    )
    paper = "LITTLE faces high snoop latency, big 'should not suffer much' (§5.1, Fig. 6a)"
    L, b = S("h264ref-train-L", "anti-snoop"), S("h264ref-train-b", "anti-snoop")
    if L is None or b is None:
        return Claim(claim, paper, "–", NOT_RUN, band="qualitative: as stated")
    gl, gb = L["speedup_mean"] - 1, b["speedup_mean"] - 1
    ok = gl > 0 and gl >= 2 * max(gb, 0.0) and gl - gb > L["speedup_std"] + b["speedup_std"]
    return Claim(
        claim,
        paper,
        f"LITTLE {gl:+.1%} ({_x(L)}); big {gb:+.1%} ({_x(b)})",
        _yes(ok),
        band="qualitative: as stated",
        mechanism="its working set fits the A15's 2 MB L2 but not the A7's 512 KB: on LITTLE its misses wait "
        "for big's snoops, on big there are few misses to snoop",
    )


def _range_note(S: _Lookup, r: dict, band: Band) -> str:
    """Why an anti-snoop speedup falls outside the band, from the runs' own data."""
    lab = r["label"]
    am, od = S(lab, "all-max"), S(lab, "ondemand")
    lo = band.holds[0]
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


def _range(S: _Lookup, benchmark: str, paper: str) -> Claim:
    band = BANDS[benchmark]
    claim = f"{benchmark}: anti-snoop speedup over ondemand as the paper's"
    rows = _per_cluster(S, benchmark)
    if not rows:
        return Claim(claim, paper, "–", NOT_RUN, band=band.text())
    verdicts = [band.judge(r["speedup_mean"]) for r in rows]
    note = "; ".join(_range_note(S, r, band) for r, v in zip(rows, verdicts) if v != "yes")
    return Claim(
        claim,
        paper,
        "; ".join(f"{r['label']} {_x(r)}" for r in rows),
        _worst(verdicts),
        note,
        band=band.text() + " (each cluster)",
        mechanism="; ".join(_idle_mechanism(S, r["label"]).split(". ")[0] for r in rows),
    )


def claims(summary: pd.DataFrame, runs: pd.DataFrame | None) -> list[Claim]:
    """The paper's claims (§1 and §5.2), each judged from the summary against its band."""
    S = _Lookup(summary)
    out = _gcc_claims(S)
    out += _ccbench_claims(S)
    out += _order_claims(S)
    out += _snoop_claims(S)
    out += [
        _povray(S),
        _h264(S),
        _range(S, "bbench", "1.1-1.25x for page loading (§5.2)"),
        _range(S, "speedometer2", "up to 1.3x (§5.2)"),
        _range(S, "mplayer-1080p", "'a 30% speedup in common mobile applications such as video decoding' (abstract)"),
    ]
    return out
