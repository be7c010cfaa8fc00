"""Every claim of `four-vs-eight` at each value of the inputs that are not sourced: the
platform file's ASSUMPTION and DERIVED-from-a-prior values (the A53's per-class throughput among
them) and the Sandra workload files' `shared_*` values. Each variant reruns the whole claim grid
(every benchmark, both allocators, all-8/big-4/little-4, first seed) and hands its times to the
experiment's judge, so a verdict that moves shows up as a changed row.

The experiment passes in what to run and how to judge (`Grid`): this module knows no claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from hetlab import _core, api
from hetlab.runs import simulate_within

# The platform file's unsourced values that may move a claim: (name, the line's regular
# expression in exynos5433.toml with the text before the value as group 1, its value there, the
# values run). The A57's dependency_cpi is the one after `issue_width = 3.0`; the A53's, after
# `issue_width = 2.0`, is FIT on Dhrystone per clock (1024/578); held-back whole programs give other
# per-clock A57/A53 ratios (docs/validation-core-classes.md), and its values here are the ones
# fitted on each of them: 7-Zip decompression (1.09x), SPECint2000 gzip (1.41x), 7-Zip compression
# (1.87x), and 1.0 (2.57x) above them all. tests/test_core_class_fit.py checks they are the fits. The A53's FP32/FP64
# and Q-form NEON float costs are measured (docs/validation-core-classes.md); their rows run the
# values the file had before the fit (the TRM reading: one FP op a cycle, Q-form two cycles).
# The A53 dependency_cpi fitted on 7zip-decompress, specint2000-164.gzip, 7zip-compress (3 decimals).
A53_DEPENDENCY_CPI_FITS = (0.136, 0.319, 0.591)
PLATFORM = (
    (
        "A53 dependency_cpi (Dhrystone fit)",
        r"(issue_width = 2\.0\n(?:#.*\n)*dependency_cpi = )0\.5334",
        0.5334,
        A53_DEPENDENCY_CPI_FITS + (1.0,),
    ),
    ("A53 neon_int cycles (ASSUMPTION)", r'(\nneon_int = \{ unit = "fpu", cycles = )1\.030', 1.030, (0.515, 2.0)),
    (
        "A53 fp32/fp64 cycles (measured; TRM reading)",
        r'(\n(?:fp32|fp64) = \{ unit = "fpu", cycles = )0\.5(?:27|58)',
        "0.527/0.558",
        (1.0,),
    ),
    (
        "A53 neon_fp32 cycles (measured; TRM reading)",
        r'(\nneon_fp32 = \{ unit = "fpu", cycles = )1\.030',
        1.030,
        (2.0,),
    ),
    ("A57 dependency_cpi", r"(issue_width = 3\.0\n(?:#.*\n)*dependency_cpi = )0\.25", 0.25, (0.125, 0.5)),
    ("A53 mlp", r"(\nmlp = )1\.5", 1.5, (1.0, 3.0)),
    ("DRAM bandwidth_efficiency", r"(\nbandwidth_efficiency = )0\.7", 0.7, (0.5, 0.9)),
    ("DRAM idle_latency_ns", r"(\nidle_latency_ns = )145\.0", 145.0, (100.0, 200.0)),
    ("CCI snoop_path_l2_lookups", r"(\nsnoop_path_l2_lookups = )3\.49", 3.49, (1.75, 7.0)),
    # the TRM's retry of a speculative fetch that beats the snoop (issue 31's sensitivity row)
    ("CCI speculative_fetch", r'(\nspeculative_fetch = ")overlap(?=")', "overlap", ("retry",)),
    ("sched switch_transfer_us", r"(\nswitch_transfer_us = )30\.0", 30.0, (0.0, 300.0)),
)
# Every `shared_*` value of the Sandra files (from the seed's one-line class descriptions, the
# fractions ASSUMPTIONs or DERIVED from one): (name, benchmark, regular expression, its value
# there, the values run). tests/test_four_vs_eight.py checks every `shared_*` line has a row.
WORKLOAD = (
    ("binomial shared_rmw_fraction", "binomial", r"(\nshared_rmw_fraction = )0\.05", 0.05, (0.0, 0.1)),
    ("binomial shared_working_set", "binomial", r"(\nshared_working_set = )true", "true", ("false",)),
    # DERIVED from binomial's by the access width (its file); run at 0 and at binomial's value
    (
        "binomial-fp64 shared_rmw_fraction",
        "binomial-fp64",
        r"(\nshared_rmw_fraction = )0\.025",
        0.025,
        (0.0, 0.05),
    ),
    ("binomial-fp64 shared_working_set", "binomial-fp64", r"(\nshared_working_set = )true", "true", ("false",)),
    ("monte-carlo shared_working_set", "monte-carlo", r"(\nshared_working_set = )true", "true", ("false",)),
    ("monte-carlo-fp64 shared_working_set", "monte-carlo-fp64", r"(\nshared_working_set = )true", "true", ("false",)),
    ("nbody shared_working_set", "nbody", r"(\nshared_working_set = )true", "true", ("false",)),
    ("dnbody shared_working_set", "dnbody", r"(\nshared_working_set = )true", "true", ("false",)),
)


@dataclass(frozen=True)
class Grid:
    """What one variant runs: (benchmark, allocator) pairs, configuration name -> simulate
    options, the extra (benchmark, allocator, configuration) runs, the judge that turns
    {(benchmark, allocator, configuration): time_s} into {column: value}, and `--time-limit`
    (None: each run its own limit)."""

    runs: tuple[tuple[str, str], ...]
    configs: dict[str, dict]
    claim_configs: tuple[str, ...]
    extra: tuple[tuple[str, str, str], ...]
    judge: Callable[[dict], dict]
    time_limit_s: float | None = None


def simulate(grid: Grid, what: str, platform: str, spec: str, **options) -> api.SimResult:
    """`api.simulate` under the grid's --time-limit (hetlab.runs.simulate_within)."""
    return simulate_within(grid.time_limit_s, what, platform, spec, **options)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def workload_file(text: str, threads: int, alloc: str) -> str:
    """A Sandra file as `NAME:threads=N,allocation=ALLOC` would make it (the file form takes no
    parameters): N threads, and a static split drops the pool's chunk size."""
    text = re.sub(r"\nthreads = \d+\n", f"\nthreads = {threads}\n", text, count=1)
    if alloc == "static":
        text = re.sub(r'allocation = "dynamic"\nchunk_instructions = .*\n', 'allocation = "static"\n', text)
    return text


def _variants(platform: str, out: Path, benches: set[str]) -> list[tuple[str, object, str, dict[str, str]]]:
    """(parameter, value, platform path, {benchmark: workload text}) per variant, the file
    values first; platform variants are written to OUT/sensitivity/. A workload's variants only
    when its benchmark is among `benches` (the others would repeat the file values' row)."""
    text = api.load_platform(platform).text
    (out / "sensitivity").mkdir(exist_ok=True)
    variants: list[tuple[str, object, str, dict[str, str]]] = [("file values", "", platform, {})]
    for name, pattern, _, values in PLATFORM:
        if re.search(pattern, text) is None:
            continue
        for value in values:
            path = out / "sensitivity" / f"{_slug(name)}-{value}.toml"
            path.write_text(re.sub(pattern, lambda m, v=value: f"{m[1]}{v}", text))
            variants.append((name, value, str(path), {}))
    for name, bench, pattern, _, values in WORKLOAD:
        if bench not in benches:
            continue
        wtext = _core.builtin_workload_text(f"sandra-{bench}")
        if re.search(pattern, wtext) is None:
            continue
        for value in values:
            variants.append((name, value, platform, {bench: re.sub(pattern, lambda m, v=value: f"{m[1]}{v}", wtext)}))
    return variants


def run(platform: str, out: Path, grid: Grid, jobs: int) -> list[dict]:
    """One row per variant: parameter, value and the judge's columns. Runs a variant shares
    with the file values (same platform, same workload) are run once."""
    variants = _variants(platform, out, {b for b, _ in grid.runs})
    wdir = out / "sensitivity" / "workloads"
    wdir.mkdir(parents=True, exist_ok=True)
    jobs_by_key: dict[tuple, tuple[str, str, dict]] = {}
    plan = []
    for name, value, ppath, workloads in variants:
        keys = {}
        for bench, alloc in grid.runs:
            for config in grid.claim_configs + tuple(c for b, a, c in grid.extra if (b, a) == (bench, alloc)):
                options = grid.configs[config]
                if bench in workloads:
                    threads = 4 if "cluster" in options or "switching" in options else 8
                    wpath = wdir / f"{_slug(name)}-{value}-{threads}-{alloc}.toml"
                    wpath.write_text(workload_file(workloads[bench], threads, alloc))
                    spec = str(wpath)
                else:
                    spec = f"sandra-{bench}:threads=cpus,allocation={alloc}"
                key = (ppath, spec, config)
                jobs_by_key[key] = (ppath, spec, options)
                keys[(bench, alloc, config)] = key
        plan.append((name, value, keys))

    def one(item):
        key, (ppath, spec, options) = item
        what = f"the sensitivity run of {Path(spec).stem if spec.endswith('.toml') else spec} under {key[2]}"
        return key, simulate(grid, what, ppath, spec, seed=1, **options).time_s

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        times = dict(pool.map(one, jobs_by_key.items()))
    return [
        {"parameter": name, "value": value, **grid.judge({k: times[key] for k, key in keys.items()})}
        for name, value, keys in plan
    ]


def moved(rows: list[dict], verdict_columns: tuple[str, ...]) -> dict[str, list[str]]:
    """parameter -> the verdict columns whose value differs from the file values' at some value."""
    base = rows[0]
    out: dict[str, list[str]] = {}
    for r in rows[1:]:
        for c in verdict_columns:
            if r[c] != base[c] and c not in out.setdefault(r["parameter"], []):
                out[r["parameter"]].append(c)
        out.setdefault(r["parameter"], [])
    return out
