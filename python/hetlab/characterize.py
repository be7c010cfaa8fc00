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
from itertools import accumulate
from pathlib import Path

import numpy as np
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
    active_opp: str = "all"  # all | top: see ACTIVE_OPP


# Which frequencies the active cluster runs at: "all" sweeps every pair of cluster OPPs; "top"
# keeps the active cluster at its top OPP and sweeps only the idle cluster, the layout the seed
# paper's Figure 4 sample counts imply (1,995 = 19 big OPPs x 105 and 1,365 = 13 LITTLE OPPs x
# 105, i.e. one sample per idle OPP; docs/training.md), with 13-19x fewer runs.
ACTIVE_OPP = ("all", "top")


def frequency_pairs(opps: dict[str, list[int]], active: str, active_opp: str) -> list[tuple[int, int]]:
    """The (big kHz, LITTLE kHz) pairs a chunk with `active` running sweeps, in sweep order."""
    chosen = dict(opps)
    if active_opp == "top":
        chosen[active] = [max(opps[active])]
    return [(big, little) for big in chosen["big"] for little in chosen["little"]]


def default_sizes(platform: dict) -> tuple[int, ...]:
    """Array sizes (4-byte elements) half and twice every cache size of every cluster: each
    size fits, or does not fit, each L1 and L2 (the paper's choice)."""
    sizes = set()
    for c in platform["clusters"]:
        for cache_bytes in (c["l1d_bytes"], c["l2_bytes"]):
            sizes.update({cache_bytes // 4 // 2, cache_bytes // 4 * 2})
    return tuple(sorted(sizes))


def platform_sha256(platform: str) -> str:
    """The SHA-256 of a platform's description (built-in name or .toml); a one-line
    HetlabError if it does not load."""
    return _platform_summary(platform)[1]


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


def _run_columns(params, sha, run_id, active, idle, pattern, size, iterations, rep, freq, clusters) -> dict:
    """One run, as dataset columns (numpy arrays): one row per sampling period of the active
    cluster."""
    seed = params.seed + run_id
    r = api.simulate(params.platform, _chase(size, pattern, iterations), cluster=active, freq=freq, seed=seed)
    s = r.series
    mine = s["cluster"] == active
    n = int(mine.sum())

    def same(value):
        return np.full(n, value, dtype=object if isinstance(value, str) else None)

    cols = {
        "backend": same(params.backend),
        "platform": same(params.platform),
        "platform_sha256": same(sha),
        "run_id": same(run_id),
        "config_id": same(f"{active}-{pattern}-{size}-{freq['big']}-{freq['little']}"),
        "active_cluster": same(active),
        "idle_cluster": same(idle),
        "big_khz": same(freq["big"]),
        "little_khz": same(freq["little"]),
        "pattern": same(pattern),
        "size_elements": same(size),
        "iterations": same(iterations),
        "rep": same(rep),
        "seed": same(seed),
        "run_time_s": same(r.time_s),
        "period_index": np.arange(n),
        "t_end_s": s["time_s"][mine],
        "period_s": s["period_s"][mine],
        "cci_cycles": s["cci_cycles"][mine].astype(np.int64),
    }
    for c in clusters:
        reads = s[f"si_rrq_hs_any_{c}"][mine].astype(np.int64)
        stalls = s[f"si_rrq_stall_tt_full_{c}"][mine].astype(np.int64)
        cols[f"si_rrq_hs_any_{c}"] = reads
        cols[f"si_rrq_stall_tt_full_{c}"] = stalls
        cols[f"cci_congestion_{c}"] = _ratio(stalls, reads)
    for k in PROCESS_COUNTERS:
        cols[k] = s[f"{k}_{active}"][mine].astype(np.int64)
    cols["memory_access"] = _ratio(cols["bus_access"], cols["cpu_cycles"])
    return cols


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (as the governor reads its features)."""
    out = np.zeros(len(num))
    np.divide(num, den, out=out, where=den > 0)
    return out


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
    active_opp: str = "all",
) -> Path:
    """Runs the sweep and writes it to `out` (Parquet). Returns the path."""
    if backend != "sim":
        raise HetlabError(f"backend '{backend}' is not available in this build; use --backend sim")
    if reps < 2:
        raise HetlabError(f"--reps must be at least 2 (the t-test needs repetitions), got {reps}")
    if active_opp not in ACTIVE_OPP:
        raise HetlabError(f"unknown --active-opp '{active_opp}'; use one of {', '.join(ACTIVE_OPP)}")
    unknown = [p for p in patterns if p not in PATTERNS]
    if unknown:
        raise HetlabError(f"unknown pattern(s) {', '.join(unknown)}; known: {', '.join(PATTERNS)}")
    summary, sha = _platform_summary(platform)
    clusters = [c["name"] for c in summary["clusters"]]
    if len(clusters) != 2:
        raise HetlabError(f"the sweep needs a platform with two clusters; {summary['name']} has {len(clusters)}")
    params = SweepParams(
        platform, backend, tuple(patterns), tuple(sizes or default_sizes(summary)), reps, run_s, seed, active_opp
    )
    out_path = Path(out)
    if not out_path.parent.is_dir():
        raise HetlabError(f"cannot write '{out}': directory '{out_path.parent}' does not exist")
    partial = out_path.with_name(out_path.name + ".partial")
    plan_file = partial / "plan.json"
    plan = {**asdict(params), "platform_sha256": sha}
    if partial.exists():
        if not plan_file.exists() or json.loads(plan_file.read_text()) != json.loads(json.dumps(plan)):
            raise HetlabError(
                f"'{partial}' holds an interrupted sweep with other parameters; "
                "delete it or rerun with the same options"
            )
    else:
        partial.mkdir()
        plan_file.write_text(json.dumps(plan, indent=2))

    opps = {c["name"]: c["opps_khz"] for c in summary["clusters"]}
    top = {c: opps[c][-1] for c in clusters}
    pairs = {a: frequency_pairs(opps, a, params.active_opp) for a in clusters}
    chunks = [(a, p, s) for a in clusters for p in params.patterns for s in params.sizes]
    chunk_runs = [len(pairs[a]) * reps for a, _, _ in chunks]
    first_runs = list(accumulate(chunk_runs, initial=0))  # run ids follow the plan, chunk after chunk
    done = [(partial / _chunk_name(*c)).exists() for c in chunks]
    bar = progress(sum(chunk_runs), sum(n for n, d in zip(chunk_runs, done) if d)) if progress else None
    workers = workers or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for chunk_index, (active, pattern, size) in enumerate(chunks):
            if done[chunk_index]:
                continue
            idle = next(c for c in clusters if c != active)
            iterations = _iterations(params, active, pattern, size, top)
            first_run = first_runs[chunk_index]
            jobs = []
            for k, (big_khz, little_khz) in enumerate(pairs[active]):
                for rep in range(reps):
                    run_id = first_run + k * reps + rep
                    freq = {"big": big_khz, "little": little_khz}
                    jobs.append(
                        pool.submit(
                            _run_columns,
                            params,
                            sha,
                            run_id,
                            active,
                            idle,
                            pattern,
                            size,
                            iterations,
                            rep,
                            freq,
                            clusters,
                        )
                    )
            runs = []
            for job in jobs:
                runs.append(job.result())
                if bar:
                    bar.update(1)
            chunk = pd.DataFrame({k: np.concatenate([run[k] for run in runs]) for k in runs[0]})
            write_parquet(chunk, partial / _chunk_name(active, pattern, size))
    if bar:
        bar.close()
    frames = [pd.read_parquet(partial / _chunk_name(*c)) for c in chunks]
    write_parquet(pd.concat(frames, ignore_index=True), out_path)
    shutil.rmtree(partial)
    return out_path


def _chunk_name(active: str, pattern: str, size: int) -> str:
    return f"chunk-{active}-{pattern}-{size}.parquet"


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    """Writes through a temporary file, so an interrupted write leaves no partial file."""
    tmp = path.with_name(f".{path.name}.tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)
