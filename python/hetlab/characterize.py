"""The characterization sweep (seed paper §3.1): ccbench's pointer chase on one cluster, the
other idle, over every pair of cluster frequencies, three access patterns and array sizes on
both sides of every cache level, repeated. Each run records its time and, per governor sampling
period, the CCI and core counters (schema: docs/dataset.md).

The sweep is split into chunks (one per active cluster, pattern and size) written as they
finish, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from hetlab import api
from hetlab.api import HetlabError

PATTERNS = ("random", "sequential", "stride-16")
COUNTERS = ("si_rrq_hs_any", "si_rrq_stall_tt_full")
PROCESS_COUNTERS = ("cpu_cycles", "inst_retired", "bus_access", "l2d_cache_refill")


@dataclass(frozen=True)
class SweepParams:
    platform: str
    backend: str
    patterns: tuple[str, ...]
    sizes: tuple[int, ...]
    reps: int
    run_s: float
    seed: int


def default_sizes(platform: dict) -> tuple[int, ...]:
    """Array sizes (4-byte elements) half and twice every cache size of every cluster: each
    size fits, or does not fit, each L1 and L2 (the paper's choice)."""
    sizes = set()
    for c in platform["clusters"]:
        for cache_bytes in (c["l1d_bytes"], c["l2_bytes"]):
            sizes.update({cache_bytes // 4 // 2, cache_bytes // 4 * 2})
    return tuple(sorted(sizes))


def _platform_summary(platform: str) -> tuple[dict, str]:
    """The platform's summary and the SHA-256 of its description."""
    p_name, p_origin, p_text = api._platform_args(platform)
    from hetlab import _core

    try:
        summary = json.loads(_core.platform_summary(p_name, p_origin, p_text))
    except ValueError as e:
        raise HetlabError(str(e)) from None
    text = p_text if p_text is not None else _core.builtin_platform_text(p_name)
    return summary, hashlib.sha256(text.encode()).hexdigest()


def _chase(size: int, pattern: str, iterations: int) -> str:
    return f"ccbench:size={size},pattern={pattern},iterations={iterations}"


def _iterations(params: SweepParams, active: str, pattern: str, size: int, top: dict[str, int]) -> int:
    """Loads per run so that a run lasts about `run_s` with both clusters at their top OPP
    (slow configurations last longer, and get more sampling periods)."""
    probe = 20_000
    r = api.simulate(params.platform, _chase(size, pattern, probe), cluster=active, freq=top, seed=params.seed)
    return max(1000, int(params.run_s / (r.time_s / probe)))


def _run_rows(params, sha, run_id, active, idle, pattern, size, iterations, rep, freq, clusters):
    seed = params.seed + run_id
    r = api.simulate(params.platform, _chase(size, pattern, iterations), cluster=active, freq=freq, seed=seed)
    s = r.series
    rows = []
    t0 = 0.0
    index = 0
    for i, cluster in enumerate(s["cluster"]):
        if cluster != active:
            continue
        row = {
            "backend": params.backend,
            "platform": params.platform,
            "platform_sha256": sha,
            "run_id": run_id,
            "config_id": f"{active}-{pattern}-{size}-{freq['big']}-{freq['little']}",
            "active_cluster": active,
            "idle_cluster": idle,
            "big_khz": freq["big"],
            "little_khz": freq["little"],
            "pattern": pattern,
            "size_elements": size,
            "iterations": iterations,
            "rep": rep,
            "seed": seed,
            "run_time_s": r.time_s,
            "period_index": index,
            "t_end_s": s["time_s"][i] - t0,
            "period_s": s["period_s"][i],
            "cci_cycles": s["cci_cycles"][i],
        }
        for c in clusters:
            reads, stalls = s[f"si_rrq_hs_any_{c}"][i], s[f"si_rrq_stall_tt_full_{c}"][i]
            row[f"si_rrq_hs_any_{c}"] = reads
            row[f"si_rrq_stall_tt_full_{c}"] = stalls
            row[f"cci_congestion_{c}"] = stalls / reads if reads else 0.0
        for k in PROCESS_COUNTERS:
            row[k] = s[f"{k}_{active}"][i]
        row["memory_access"] = row["bus_access"] / row["cpu_cycles"] if row["cpu_cycles"] else 0.0
        rows.append(row)
        index += 1
    return rows


def characterize(
    out: str,
    platform: str = "exynos5422",
    backend: str = "sim",
    reps: int = 5,
    patterns: tuple[str, ...] = PATTERNS,
    sizes: tuple[int, ...] | None = None,
    run_s: float = 0.08,
    seed: int = 1,
    workers: int | None = None,
    progress=None,
) -> Path:
    """Runs the sweep and writes it to `out` (Parquet). Returns the path."""
    if backend != "sim":
        raise HetlabError(f"backend '{backend}' is not available in this build; use --backend sim")
    if reps < 2:
        raise HetlabError(f"--reps must be at least 2 (the t-test needs repetitions), got {reps}")
    unknown = [p for p in patterns if p not in PATTERNS]
    if unknown:
        raise HetlabError(f"unknown pattern(s) {', '.join(unknown)}; known: {', '.join(PATTERNS)}")
    summary, sha = _platform_summary(platform)
    clusters = [c["name"] for c in summary["clusters"]]
    if len(clusters) != 2:
        raise HetlabError(f"the sweep needs a platform with two clusters; {summary['name']} has {len(clusters)}")
    params = SweepParams(platform, backend, tuple(patterns), tuple(sizes or default_sizes(summary)), reps, run_s, seed)
    out_path = Path(out)
    if not out_path.parent.is_dir():
        raise HetlabError(f"cannot write '{out}': directory '{out_path.parent}' does not exist")
    partial = out_path.with_name(out_path.name + ".partial")
    plan_file = partial / "plan.json"
    plan = {**asdict(params), "platform_sha256": sha}
    if partial.exists():
        if not plan_file.exists() or json.loads(plan_file.read_text()) != json.loads(json.dumps(plan)):
            raise HetlabError(f"'{partial}' holds an interrupted sweep with other parameters; delete it or rerun with the same options")
    else:
        partial.mkdir()
        plan_file.write_text(json.dumps(plan, indent=2))

    opps = {c["name"]: c["opps_khz"] for c in summary["clusters"]}
    top = {c: opps[c][-1] for c in clusters}
    pairs = [(b, l) for b in opps["big"] for l in opps["little"]]
    chunks = [(a, p, s) for a in clusters for p in params.patterns for s in params.sizes]
    runs_per_chunk = len(pairs) * reps
    total = len(chunks) * runs_per_chunk
    todo = [c for c in chunks if not (partial / _chunk_name(*c)).exists()]
    bar = progress(total, total - len(todo) * runs_per_chunk) if progress else None
    workers = workers or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for chunk_index, (active, pattern, size) in enumerate(chunks):
            if (active, pattern, size) not in todo:
                continue
            idle = next(c for c in clusters if c != active)
            iterations = _iterations(params, active, pattern, size, top)
            first_run = chunk_index * runs_per_chunk
            jobs = []
            for k, (big_khz, little_khz) in enumerate(pairs):
                for rep in range(reps):
                    run_id = first_run + k * reps + rep
                    freq = {"big": big_khz, "little": little_khz}
                    jobs.append(pool.submit(_run_rows, params, sha, run_id, active, idle, pattern, size, iterations, rep, freq, clusters))
            rows = []
            for job in jobs:
                rows.extend(job.result())
                if bar:
                    bar.update(1)
            _write_parquet(pd.DataFrame(rows), partial / _chunk_name(active, pattern, size))
    if bar:
        bar.close()
    frames = [pd.read_parquet(partial / _chunk_name(*c)) for c in chunks]
    _write_parquet(pd.concat(frames, ignore_index=True), out_path)
    shutil.rmtree(partial)
    return out_path


def _chunk_name(active: str, pattern: str, size: int) -> str:
    return f"chunk-{active}-{pattern}-{size}.parquet"


def _write_parquet(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)
