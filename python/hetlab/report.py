"""Tables, claims and report.md of `hetlab reproduce` (see hetlab.reproduce).

Ratios are to the baseline (ondemand) run with the same benchmark, cluster and seed, so each
repetition gives one ratio; a summary row holds their mean and standard deviation:
speedup = t_ondemand / t, energy_saving = E_ondemand / E, edp_ratio = EDP_ondemand / EDP
(above 1: better than ondemand).
"""

from __future__ import annotations

import json
import os
import platform as _platform
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

RATIOS = (("speedup", "time_s"), ("energy_saving", "energy_j"), ("edp_ratio", "edp_js"))
# Orderings treat two configurations as tied when their means differ by less than the sum of
# their standard deviations, or by less than TIE (relative) when the runs hardly vary.
TIE = 0.005


# --- tables -------------------------------------------------------------------------------------


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for col in [c for c in df.columns if c.startswith("energy_") or c.startswith("avg_freq_")]:
        df[col] = df[col].fillna(0.0)
    return df


def _std(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def summarize(runs: pd.DataFrame, experiment) -> pd.DataFrame:
    """One row per (benchmark, cluster, config), in the order of runs.csv."""
    base = runs[runs.config == experiment.baseline].set_index(["label", "seed"])
    out = []
    for (label, config), g in runs.groupby(["label", "config"], sort=False):
        b = base.loc[[(label, s) for s in g.seed]]
        row = {
            "benchmark": g.benchmark.iloc[0],
            "cluster": g.cluster.iloc[0],
            "label": label,
            "group": g.group.iloc[0],
            "config": config,
            "reps": len(g),
            "completed": bool(g.completed.all()),
        }
        for col in ("time_s", "energy_j", "edp_js"):
            row[f"{col}_mean"] = float(g[col].mean())
            row[f"{col}_std"] = _std(g[col].to_numpy())
        for name, col in RATIOS:
            r = b[col].to_numpy() / g[col].to_numpy()
            row[f"{name}_mean"] = float(r.mean())
            row[f"{name}_std"] = _std(r)
        idle = "big" if row["cluster"] == "little" else "little"
        row["active_freq_mhz"] = float(g[f"avg_freq_{row['cluster']}_khz"].mean()) / 1000
        row["idle_freq_mhz"] = float(g[f"avg_freq_{idle}_khz"].mean()) / 1000
        row["l2_mpki"] = float(g.l2_mpki.mean())
        row["idle_cluster_energy_share"] = float((g[f"energy_{idle}_j"] / g.energy_j).mean())
        samples = g.governor_samples.sum()
        row["governor_overhead_us_per_sample"] = float(1e6 * g.governor_overhead_s.sum() / samples) if samples else 0.0
        out.append(row)
    return pd.DataFrame(out)


def _fmt_ratio(mean: float, std: float) -> str:
    return f"{mean:.2f} ± {std:.2f}"


def summary_markdown(summary: pd.DataFrame, experiment) -> str:
    configs = [c for c in experiment.configs if c.name != experiment.baseline]
    lines = [
        f"# {experiment.title}",
        "",
        "Ratios to ondemand with the same seed, mean ± standard deviation over the repetitions "
        "(above 1: better than ondemand). speedup = t_ondemand / t; energy saving = E_ondemand / E; "
        "EDP ratio = EDP_ondemand / EDP.",
        "",
        "Configurations: " + "; ".join(f"`{c.name}` = {c.title}" for c in experiment.configs) + ".",
    ]
    sections = [
        ("Figure 5: ccbench grid", summary.group == "ccbench"),
        ("Figure 6: realistic benchmarks", summary.group != "ccbench"),
    ]
    for title, mask in sections:
        part = summary[mask]
        if part.empty:
            continue
        for metric, what, unit_col, unit in (
            ("speedup", "time", "time_s_mean", "s"),
            ("energy_saving", "energy", "energy_j_mean", "J"),
            ("edp_ratio", "energy-delay product", "edp_js_mean", "J·s"),
        ):
            lines += ["", f"## {title}: {what}", ""]
            lines.append(f"| benchmark | ondemand {what} ({unit}) | " + " | ".join(c.name for c in configs) + " |")
            lines.append("|---|---:|" + "---:|" * len(configs))
            for label, g in part.groupby("label", sort=False):
                by = g.set_index("config")
                base = by.loc[experiment.baseline]
                cells = [
                    _fmt_ratio(by.loc[c.name, f"{metric}_mean"], by.loc[c.name, f"{metric}_std"])
                    if c.name in by.index
                    else "–"
                    for c in configs
                ]
                lines.append(
                    f"| {label} | {base[unit_col]:.4g} ± {base[unit_col.replace('_mean', '_std')]:.2g} | "
                    + " | ".join(cells)
                    + " |"
                )
    incomplete = summary[~summary.completed]
    if not incomplete.empty:
        lines += [
            "",
            "Runs that hit the time limit (their times are lower bounds): "
            + ", ".join(f"{r.label} {r.config}" for r in incomplete.itertuples())
            + ".",
        ]
    return "\n".join(lines) + "\n"


# --- claims -------------------------------------------------------------------------------------


@dataclass
class Claim:
    claim: str
    paper: str
    hetlab: str
    holds: str  # yes | no | partly | not run
    note: str = ""


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


NOT_RUN = "not run"


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
        ),
    ]


def _order_claims(S: _Lookup, experiment) -> list[Claim]:
    realistic = [lab for lab in dict.fromkeys(S.summary[S.summary.group != "ccbench"].label)]
    paper_configs = [c.name for c in experiment.configs if c.paper]
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


def evaluate_claims(experiment, summary: pd.DataFrame, runs: pd.DataFrame) -> list[Claim]:
    """The paper's claims (LCTES'20 §5.2, and the acceptance thresholds of the reproduction),
    each judged from the data."""
    S = _Lookup(summary)
    claims = [
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
    claims += _ccbench_claims(S)
    claims += _order_claims(S, experiment)
    claims += _snoop_claims(S)
    claims += [
        _povray(S),
        _h264(S),
        _range(S, "bbench", "1.1-1.25x for page loading (§5.2)"),
        _range(S, "speedometer2", "up to 1.3x (§5.2)"),
        _range(S, "mplayer-1080p", "in Fig. 6a only; the web range 1.1-1.3x (§5.2)"),
    ]
    return claims


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def claims_markdown(claims: list[Claim]) -> str:
    lines = ["| claim | paper | hetlab | holds? |", "|---|---|---|---|"]
    lines += [f"| {_cell(c.claim)} | {_cell(c.paper)} | {_cell(c.hetlab)} | {c.holds} |" for c in claims]
    return "\n".join(lines)


# --- provenance and report.md -------------------------------------------------------------------


def _versions() -> dict[str, str]:
    from hetlab.train import library_versions

    return {
        "python": _platform.python_version(),
        **library_versions(("hetlab", "numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "pyarrow")),
    }


def _shown_path(path: str, out: Path) -> str:
    p = Path(path)
    try:
        return str(p.resolve().relative_to(out.resolve()))
    except ValueError:
        return str(path)


def provenance(
    experiment,
    out: Path,
    model_path: str,
    reps: int,
    seed: int,
    specs: dict,
    sweep_plan: dict | None,
    platform: str,
    platform_sha: str,
) -> dict:
    from hetlab.reproduce import CLUSTER_TAG, FIG4, sha256_file

    prov = {
        "experiment": experiment.name,
        "platform": platform,
        "platform_sha256": platform_sha,
        "seeds": list(range(seed, seed + reps)),
        "configurations": {c.name: {"governor": c.governor, "model": c.model} for c in experiment.configs},
        "workloads": {f"{b}-{CLUSTER_TAG[c]}": spec for (b, c), spec in specs.items()},
        "versions": _versions(),
    }
    if model_path == FIG4:
        prov["model"] = {"path": FIG4}
    else:
        model = json.loads(Path(model_path).read_text())
        prov["model"] = {
            "path": _shown_path(model_path, out),
            "sha256": sha256_file(Path(model_path)),
            "name": model.get("name", ""),
        }
        prov["model_metrics"] = model.get("metrics", {})
        prov["model_training"] = model.get("provenance", {}).get("training", {})
        prov["model_sweep"] = model.get("provenance", {}).get("sweep", {})
    if sweep_plan is not None:
        prov["sweep"] = sweep_plan
    return prov


def _accuracy_section(prov: dict) -> list[str]:
    lines = ["## The anti-snoop model", ""]
    m = prov["model"]
    if m["path"].startswith("lctes2020-fig4"):
        return lines + [
            "The `anti-snoop` column uses the paper's Figure 4 trees (`--model lctes2020-fig4`); no held-out accuracy."
        ]
    lines.append(f"`{m['path']}` (`{m['name']}`, sha256 `{m['sha256'][:16]}…`).")
    sweep = prov.get("model_sweep", {})
    if sweep:
        lines.append(
            f"Trained on a characterization sweep of {sweep.get('configurations', '?')} configurations "
            f"({sweep.get('runs', '?')} runs; patterns {', '.join(sweep.get('patterns', []))}; sizes "
            f"{', '.join(str(s) for s in sweep.get('sizes_elements', []))} elements), "
            f"depth {prov.get('model_training', {}).get('max_depth', '?')},"
            f" labels `{prov.get('model_training', {}).get('label_rule', '?')}`."
        )
    metrics = prov.get("model_metrics", {})
    if metrics:
        lines += [
            "",
            "| tree (manages) | held-out accuracy | held-out rows | held-out configurations"
            " | confusion [[TN, FP], [FN, TP]] |",
            "|---|---:|---:|---:|---|",
        ]
        for cluster, m in sorted(metrics.items()):
            h = m.get("heldout", {})
            lines.append(
                f"| {cluster} | {h.get('accuracy', float('nan')):.3f} | {h.get('test_rows', '?')} | "
                f"{h.get('test_configs', '?')} | {h.get('confusion_matrix', {}).get('counts', '?')} |"
            )
        lines += [
            "",
            "The paper reports no accuracy for its trees;"
            " `hetlab show-model` prints them in the layout of its Figure 4.",
        ]
    else:
        lines.append("The model file holds no held-out metrics.")
    return lines


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


def report_markdown(experiment, summary: pd.DataFrame, claims: list[Claim], prov: dict, figures: list[str]) -> str:
    counts = {k: sum(c.holds == k for c in claims) for k in ("yes", "partly", "no", NOT_RUN)}
    lines = [
        f"# Reproduction: {experiment.title}",
        "",
        "Every number below comes from this run's simulations (runs.csv); 'holds?' is computed from them. "
        f"Each benchmark ran on one cluster with the other idle, {len(prov['seeds'])} seeds "
        f"({', '.join(map(str, prov['seeds']))}) per configuration; ratios are to ondemand with the same seed, "
        "mean ± standard deviation.",
        "",
        f"Claims: {counts['yes']} hold, {counts['partly']} partly, {counts['no']} do not"
        + (f", {counts[NOT_RUN]} not run (benchmarks not selected)" if counts[NOT_RUN] else "")
        + ".",
        "",
        "## Claims",
        "",
        claims_markdown(claims),
    ]
    notes = [c for c in claims if c.note]
    if notes:
        lines += ["", "### Notes (from the data)", ""]
        lines += [f"- **{c.claim.split(':')[0]}** — {c.note}" for c in notes]
    if figures:
        lines += ["", "## Figures", ""] + [f"![{f}]({f})" for f in figures]
        lines += [
            "",
            "Bars: ratio to ondemand (above 1: better); error bars: standard deviation of the per-seed ratio; "
            "the line at 1 is ondemand. Tables: summary.md, summary.csv; every run: runs.csv.",
        ]
    lines += [""] + _accuracy_section(prov)
    overhead = _overhead_section(summary)
    if overhead:
        lines += [""] + overhead
    lines += [
        "",
        "## Provenance",
        "",
        f"- experiment `{prov['experiment']}`, platform `{prov['platform']}`"
        f" (sha256 `{prov['platform_sha256'][:16]}…`)",
        f"- seeds {', '.join(map(str, prov['seeds']))}",
        "- configurations: "
        + "; ".join(
            f"`{k}` = governor `{v['governor']}`" + (f", model `{v['model']}`" if v["model"] else "")
            for k, v in prov["configurations"].items()
        ),
        f"- model `{prov['model']['path']}`"
        + (f", sha256 `{prov['model']['sha256']}`" if "sha256" in prov["model"] else ""),
    ]
    if "sweep" in prov:
        lines.append(
            "- characterization sweep: "
            + ", ".join(f"{k} {v}" for k, v in prov["sweep"].items())
            + " (sweep.parquet, sweep.json)"
        )
    lines.append("- versions: " + ", ".join(f"{k} {v}" for k, v in prov["versions"].items()))
    lines += ["- workloads:", ""] + [f"  - `{lab}`: `{spec}`" for lab, spec in prov["workloads"].items()]
    return "\n".join(lines) + "\n"


# --- writing ------------------------------------------------------------------------------------


def write_outputs(
    out: Path, experiment, runs: pd.DataFrame, summary: pd.DataFrame, claims: list[Claim], prov: dict, model_path: str
) -> list[Path]:
    """Renders every output into a staging directory inside `out`, then moves each into place
    (os.replace); outputs of an earlier run that this run does not produce are removed."""
    from hetlab import plots
    from hetlab.reproduce import OUTPUTS

    staging = Path(tempfile.mkdtemp(dir=out, prefix=".staging."))
    try:
        (staging / "runs.csv").write_text(runs.to_csv(index=False))
        (staging / "summary.csv").write_text(summary.to_csv(index=False))
        (staging / "summary.md").write_text(summary_markdown(summary, experiment))
        figures = plots.write_figures(staging, experiment, summary)
        (staging / "report.md").write_text(report_markdown(experiment, summary, claims, prov, figures))
        produced = sorted(p.name for p in staging.iterdir())
        for name in produced:
            os.replace(staging / name, out / name)
        for name in OUTPUTS:
            if name not in produced:
                (out / name).unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in OUTPUTS if name in produced]
