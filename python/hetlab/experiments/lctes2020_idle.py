"""The idle cluster's clock in the `lctes2020` report, and whether the counter justifies it.

Issue 31 asks that no realistic benchmark-cluster pair be held at the idle cluster's top OPP
unless its counter says snooping continues there. The counter the tree managing the idle
cluster reads (stall cycles per read on the active cluster's CCI port) has two parts: the waits
the idle cluster's slow snoops add to every read, which fall as it speeds up, and the waits the
active cluster's own reads in flight make, which do not. So the check is the last step: with the
active cluster at its top OPP, the counter and the run time with the idle cluster one OPP below
its top and at its top. If both still fall, snooping continues at the top and holding it there
is right; if both are flat, the snoop has stopped costing below the top and what the tree reads
there is the workload's own traffic. The trained tree's verdict on the top OPP's counters says
which of its regions that traffic falls in. lctes2020.py owns the rest of the reproduction.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from hetlab import _core, api

if TYPE_CHECKING:
    import pandas as pd

    from hetlab.experiment import Prepared

HELD = 0.9  # anti-snoop's average idle clock at or above this share of the top OPP: "held at the top"
FLAT = 0.005  # a relative change below this between the last two OPPs is flat (time and counter)
CHECK_SEED = 1


def _opps_khz(platform: str) -> dict[str, list[int]]:
    import json

    summary = json.loads(api.load_platform(platform).summary())
    return {c["name"]: list(c["opps_khz"]) for c in summary["clusters"]}


def _model_text(model_path: str) -> str:
    if not model_path or model_path == "lctes2020-fig4":
        return _core.builtin_model_json("lctes2020-fig4")
    with open(model_path) as f:
        return f.read()


def _last_step(platform: str, pairs: dict[str, tuple[str, str]]) -> dict[str, dict]:
    """Per label: the run (seed CHECK_SEED, active cluster at its top OPP) with the idle cluster
    one OPP below its top and at its top: time, the active port's counts and the threads'."""
    opps = _opps_khz(platform)
    jobs = []
    for label, (workload, active) in pairs.items():
        idle = next(c for c in opps if c != active)
        for where, khz in (("below", opps[idle][-2]), ("top", opps[idle][-1])):
            freq = {active: opps[active][-1], idle: khz}
            jobs.append((label, where, idle, workload, active, freq))

    def run(job):
        label, where, idle, workload, active, freq = job
        r = api.simulate(platform, workload, cluster=active, freq=freq, seed=CHECK_SEED)
        port = next(p for p in r.summary["cci_ports"] if p["cluster"] == active)
        pmu = [t["pmu"] for t in r.summary["threads"]]
        return (
            label,
            where,
            idle,
            {
                "time_s": r.time_s,
                "stalls": port["si_rrq_stall_tt_full"],
                "reads": port["si_rrq_hs_any"],
                "bus_access": sum(p["bus_access"] for p in pmu),
                "cpu_cycles": sum(p["cpu_cycles"] for p in pmu),
            },
        )

    out: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:  # the engine releases the GIL
        for label, where, idle, r in pool.map(run, jobs):
            out.setdefault(label, {"idle": idle})[where] = r
    return out


def _per_read(r: dict) -> float:
    return r["stalls"] / r["reads"] if r["reads"] else 0.0


def _tree_says(model_text: str, idle: str, r: dict) -> str:
    """The governor's own evaluator on the whole run's counts (features in the tree's order)."""
    import numpy as np  # here, not at import: every command imports the experiments' registry

    counts = {"cci_congestion": (r["stalls"], r["reads"]), "memory_access": (r["bus_access"], r["cpu_cycles"])}
    order = list(_core.TREE_FEATURES)
    nums = [np.array([counts[f][0]], dtype=np.uint64) for f in order]
    dens = [np.array([counts[f][1]], dtype=np.uint64) for f in order]
    try:
        increase = bool(_core.tree_predict(model_text, idle, nums, dens)[0])
    except ValueError:
        return "-"
    return "increase" if increase else "decrease"


def _falls(below: float, top: float) -> bool:
    return below > top * (1 + FLAT) and below - top > 1e-12


def _verdict(held: bool, step: dict, tree: str) -> str:
    below, top = step["below"], step["top"]
    counter_falls = _falls(_per_read(below), _per_read(top))
    time_falls = _falls(below["time_s"], top["time_s"])
    if not held:
        return "not held at the top"
    if counter_falls and time_falls:
        return "held: snooping continues at the top (counter and time still fall on the last step)"
    return (
        f"held, though the snoop stopped costing below the top (counter {'falls' if counter_falls else 'flat'}, "
        f"time {'falls' if time_falls else 'flat'} on the last step): the tree reads the pair's own reads in "
        f"flight as '{tree}'"
    )


def idle_clock_section(summary: pd.DataFrame, prepared: Prepared, pairs: dict[str, tuple[str, str]]) -> list[str]:
    """The idle cluster's average clock per realistic pair and configuration; the counter at the
    idle cluster's lowest OPP (idle-min), one below its top and at its top; the run's slowdown on
    the last step; the trained tree's verdict at the top; and whether a hold at the top is
    justified by the counter."""
    part = summary[summary.label.isin(list(pairs))]
    if part.empty:
        return []
    platform = getattr(prepared, "platform", "") or "exynos5422"
    step = _last_step(platform, {label: pairs[label] for label in part.label.unique()})
    model_text = _model_text(getattr(prepared, "model_path", ""))
    lines = [
        "## The idle cluster's clock under each configuration",
        "",
        "Average idle-cluster clock (MHz) per benchmark-cluster pair. Then, the active cluster at its top OPP, "
        "the stall cycles per read on its CCI port (the counter the tree managing the idle cluster reads) "
        "with the idle cluster at its lowest OPP (idle-min runs, mean over seeds), one OPP below its top and "
        f"at its top (seed {CHECK_SEED}), the run's slowdown one OPP below the top, and what the trained tree "
        "says on the top OPP's counters over the whole run. A pair is held at the top when anti-snoop's "
        f"average idle clock is at least {HELD:.0%} of the top OPP; that is justified only if the counter (and "
        "the run time) still fall on the last step, i.e. snooping continues at the top. Where both are flat, "
        "the counter there is the active cluster's own reads in flight filling its port's read tracker, which "
        "the tree, trained on ccbench alone, reads as snooping.",
        "",
        "| pair | ondemand | anti-snoop | anti-snoop (Fig. 4 trees) | all-max | counter at lowest | counter one "
        "below top | counter at top | slowdown one below top | trained tree at top | hold at the top |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for label, g in part.groupby("label", sort=False):
        by = g.set_index("config")

        def get(config: str, col: str, by=by) -> float:
            return float(by.loc[config, col]) if config in by.index else float("nan")

        s = step[label]
        top_mhz = get("all-max", "idle_freq_mhz")
        held = get("anti-snoop", "idle_freq_mhz") >= HELD * top_mhz
        tree = _tree_says(model_text, s["idle"], s["top"])
        slowdown = s["below"]["time_s"] / s["top"]["time_s"] - 1
        lines.append(
            f"| {label} | {get('ondemand', 'idle_freq_mhz'):.0f} | {get('anti-snoop', 'idle_freq_mhz'):.0f} "
            f"| {get('anti-snoop-fig4', 'idle_freq_mhz'):.0f} | {top_mhz:.0f} "
            f"| {get('idle-min', 'active_port_stall_per_read'):.2e} | {_per_read(s['below']):.2e} "
            f"| {_per_read(s['top']):.2e} | {100 * slowdown:+.1f}% | {tree} | {_verdict(held, s, tree)} |"
        )
    return lines
