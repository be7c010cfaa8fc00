"""`four-vs-eight` on a phone that heats: Sandra's tests run as Sandra runs them, each for the
length of a test and one after another on a warm phone. Per configuration and allocator, one
chain: every benchmark in the report's order, each starting at the temperature the one before
it left each cluster at (the engine's `start_temp_c`), its work scaled so that it lasts about
TEST_S on all 8 cores (cold). The chain reports each run's time (the claims are judged on them
as on the cold runs) and, per configuration, each cluster's average clock and its mean and peak
temperature, and the lowest thermal cap the trips set.

The experiment passes in what to run and how to judge: this module knows no claim.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hetlab import _core, api
from hetlab.experiments.four_vs_eight_sensitivity import Grid, simulate, workload_file

# ASSUMPTION: how long Sandra runs one test. SiSoftware does not publish it; its benchmarks run
# each test until the result is stable, several seconds on a phone. 10 s on all 8 cores, cold.
TEST_S = 10.0
# The clusters' thermal resistance is an ASSUMPTION (exynos5433.toml: a phone without a fan);
# the warm chains of the static split (the one the claims are judged on) rerun with both
# clusters' resistance (and so their time constant) scaled.
RESISTANCE_SCALES = (0.75, 1.5)


def _scaled(text: str, k: int) -> str:
    """The workload's parallel phase's instructions times k. A workload of rounds in lockstep
    (a task `repeat`, the inter-core bandwidth test) keeps its own length: its rounds are
    hetlab's choice, not a Sandra figure, and 10 s of them costs minutes of simulation."""
    if re.search(r"\nrepeat = \d+\n", text):
        return text
    return re.sub(
        r"\nparallel_instructions = ([0-9.e]+)\n", lambda m: f"\nparallel_instructions = {float(m[1]) * k:g}\n", text
    )


def _resistance_variant(text: str, scale: float) -> str:
    return re.sub(
        r"\nthermal_resistance_c_per_w = ([0-9.]+)",
        lambda m: f"\nthermal_resistance_c_per_w = {float(m[1]) * scale:g}",
        text,
    )


def _chain(grid: Grid, platform: str, files: dict, benches: list[str], alloc: str, config: str) -> dict:
    """One configuration's tests back to back: {bench: time_s} and per-cluster statistics
    weighted by each run's time."""
    temps: list[float] = []
    times, stats = {}, {}
    runaway = None
    options = grid.configs[config]
    for bench in benches:
        what = f"the warm-phone run of {bench}-{alloc} under {config}"
        r = simulate(grid, what, platform, files[(bench, alloc, config)], seed=1, start_temp_c=temps, **options)
        times[bench] = r.time_s
        clusters = r.summary["clusters"]
        if any(c["end_temp_c"] is None or c["mean_temp_c"] is None for c in clusters):
            # the temperature diverged (leakage rising with it faster than the trips' caps cut
            # power; the 115 °C hardware trip and hotplug-out are not modelled): the chain stops
            runaway = bench
            del times[bench]
            break
        temps = [c["end_temp_c"] for c in clusters]
        for c in clusters:
            s = stats.setdefault(
                c["name"], {"t": 0.0, "t_online": 0.0, "khz_s": 0.0, "temp_s": 0.0, "peak": 0.0, "cap": 1e12}
            )
            s["t"] += r.time_s
            s["temp_s"] += c["mean_temp_c"] * r.time_s
            s["peak"] = max(s["peak"], c["peak_temp_c"])
            s["cap"] = min(s["cap"], c["min_thermal_cap_khz"])
            online_s = sum(sec for _, sec in c["residency"])
            s["t_online"] += online_s
            s["khz_s"] += c["avg_freq_khz"] * online_s
    per_cluster = {
        name: {
            "avg_mhz": s["khz_s"] / s["t_online"] / 1000 if s["t_online"] > 0 else float("nan"),
            "mean_temp_c": s["temp_s"] / s["t"],
            "peak_temp_c": s["peak"],
            "min_cap_mhz": s["cap"] / 1000,
        }
        for name, s in stats.items()
    }
    return {"times": times, "clusters": per_cluster, "chain_s": sum(times.values()), "runaway": runaway}


def run(platform: str, out: Path, grid: Grid, jobs: int) -> list[dict]:
    """One row per thermal variant (the file, each resistance scale): its name, the judge's
    columns on the warm runs, and per (configuration, allocator) the chain's cluster figures."""
    text = api.load_platform(platform).text
    wdir = out / "warm"
    wdir.mkdir(exist_ok=True)
    benches = list(dict.fromkeys(b for b, _ in grid.runs))
    allocs = list(dict.fromkeys(a for _, a in grid.runs))
    # the scale of each benchmark's work: its cold static all-8 run stretched to TEST_S
    cold = {
        b: simulate(
            grid,
            f"the warm phone's sizing run of {b} under all-8",
            platform,
            f"sandra-{b}:threads=cpus,allocation=static",
            seed=1,
            **grid.configs["all-8"],
        ).time_s
        for b in benches
    }
    files = {}
    for bench, alloc in grid.runs:
        scaled = _scaled(_core.builtin_workload_text(f"sandra-{bench}"), max(1, math.ceil(TEST_S / cold[bench])))
        for config in grid.claim_configs:
            threads = 4 if "cluster" in grid.configs[config] else 8
            path = wdir / f"{bench}-{alloc}-{threads}.toml"
            path.write_text(workload_file(scaled, threads, alloc))
            files[(bench, alloc, config)] = str(path)
    variants = [("file values", platform)]
    for scale in RESISTANCE_SCALES:
        path = wdir / f"thermal-resistance-x{scale:g}.toml"
        path.write_text(_resistance_variant(text, scale))
        variants.append((f"thermal_resistance_c_per_w x{scale:g}", str(path)))
    chains = [
        (v, a, c) for v in variants for a in allocs for c in grid.claim_configs if v is variants[0] or a == "static"
    ]

    def one(item):
        (name, ppath), alloc, config = item
        todo = [b for b in benches if (b, alloc) in grid.runs]
        return _chain(grid, ppath, files, todo, alloc, config)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = dict(zip(chains, pool.map(one, chains)))
    rows = []
    for v in variants:
        mine = {(a, c): results[(v, a, c)] for vv, a, c in chains if vv == v}
        times = {(b, a, c): t for (a, c), r in mine.items() for b, t in r["times"].items()}
        rows.append({"variant": v[0], **grid.judge(times), "chains": mine})
    return rows
