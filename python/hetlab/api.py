"""The Python API. It mirrors the CLI: `simulate(...)` takes the same options as
`hetlab simulate` and returns a `SimResult`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hetlab import _core

DEFAULT_PLATFORM: str = _core.DEFAULT_PLATFORM
DEFAULT_SEED = 1


class HetlabError(ValueError):
    """Bad input: the message names the thing and the fix."""


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as e:
        raise HetlabError(f"cannot read {what} file '{path}': {e.strerror}") from None


def _looks_like_file(spec: str) -> bool:
    return spec.endswith(".toml") or os.sep in spec


def _platform_args(platform: str) -> tuple[str | None, str, str | None]:
    if _looks_like_file(platform):
        return None, platform, _read(platform, "platform")
    return platform, "", None


def _workload_args(workload: str) -> tuple[str, str, str | None]:
    if _looks_like_file(workload):
        return workload, workload, _read(workload, "workload")
    return workload, "", None


def _model_json(model: str | None) -> str | None:
    if model is None or model == "lctes2020-fig4":
        return None
    return _read(model, "model")


@dataclass
class SimResult:
    """One simulated run: `summary` is the JSON summary as a dict; `series` the per-sample
    time series as numpy columns (one row per governor sample of a cluster); `trace_text` the
    ftrace text when a trace was asked for."""

    summary: dict[str, Any]
    series: dict[str, Any]
    trace_text: str | None = None
    summary_json: str = field(default="", repr=False)

    @property
    def time_s(self) -> float:
        return self.summary["time_s"]

    @property
    def energy_j(self) -> float:
        return self.summary["energy"]["total_j"]

    def cluster(self, name: str) -> dict[str, Any]:
        for c in self.summary["clusters"]:
            if c["name"] == name:
                return c
        raise KeyError(name)

    def series_df(self):
        """The time series as a pandas DataFrame (one row per governor sample)."""
        import pandas as pd

        return pd.DataFrame(self.series)

    def residency_df(self):
        """Frequency residency as a DataFrame: cluster, freq_khz, seconds."""
        import pandas as pd

        rows = [
            {"cluster": c["name"], "freq_khz": khz, "seconds": s}
            for c in self.summary["clusters"]
            for khz, s in c["residency"]
        ]
        return pd.DataFrame(rows)

    def to_json(self) -> str:
        return self.summary_json


def simulate(
    platform: str = DEFAULT_PLATFORM,
    workload: str = "ccbench:size=1048576,pattern=random",
    *,
    cluster: str | None = None,
    governor: str = "ondemand",
    freq: Mapping[str, int] | None = None,
    tunables: Mapping[str, float] | None = None,
    offline: Sequence[str] = (),
    scheduler: str = "pinned",
    cpuidle: str = "wfi",
    model: str | None = None,
    seed: int = DEFAULT_SEED,
    trace: bool = False,
    time_limit_s: float = 3600.0,
) -> SimResult:
    """Simulate `workload` on `platform`.

    platform: a built-in name (`exynos5422`) or a path to a platform TOML.
    workload: a generator spec (`ccbench:size=1048576,pattern=random`), a built-in name or a
        path to a workload TOML.
    cluster: restrict every task to this cluster (`little`/`big`), like taskset.
    governor: a governor name, or `all-max` / `idle-min` (the seed paper's baselines).
    freq: fix clusters' frequencies in kHz, e.g. {"big": 200000} (userspace governor).
    tunables: governor tunables with their sysfs names, e.g. {"up_threshold": 80}.
    offline: clusters whose CPUs are hotplugged off (cluster powered down, not snooped).
    cpuidle: `wfi` (default; idle clusters stay powered and snooped, as on the seed paper's
        board) or `cluster-off` (cpuidle may power an idle cluster down).
    model: anti-snoop model: `lctes2020-fig4` (default) or a path to a trained model.json.
    seed: the same seed gives byte-identical results.
    time_limit_s: stop after this much simulated time.

    An unknown keyword (say `cpu_idle=`) is a TypeError.
    """
    p_args, w_args, model_json = _platform_args(platform), _workload_args(workload), _model_json(model)
    try:
        summary_json, columns, trace_text = _core.simulate(
            *p_args,
            *w_args,
            seed=int(seed),
            scheduler=scheduler,
            governor=governor,
            tunables=[(k, float(v)) for k, v in (tunables or {}).items()],
            cluster=cluster,
            freq=[(k, int(v)) for k, v in (freq or {}).items()],
            offline=list(offline),
            model=model_json,
            cpuidle=cpuidle,
            trace=bool(trace),
            time_limit_s=float(time_limit_s),
        )
    except ValueError as e:
        raise HetlabError(str(e)) from None
    summary = json.loads(summary_json)
    return SimResult(summary, _series(summary, columns), trace_text, summary_json)


def _series(summary: dict, columns: dict) -> dict:
    """The engine's numpy columns, with the cluster index turned into cluster names."""
    import numpy as np

    names = np.asarray([c["name"] for c in summary["clusters"]], dtype=object)
    series = {"time_s": columns.pop("time_s"), "cluster": names[columns.pop("cluster_index")]}
    series.update(columns)
    return series


def simulate_reps(
    reps: int,
    *,
    seed: int = DEFAULT_SEED,
    workers: int | None = None,
    progress: Callable[[Iterable], Iterable] | None = None,
    **kwargs: Any,
) -> list[SimResult]:
    """`reps` runs with seeds seed, seed+1, ...; runs in parallel threads (the Rust engine
    releases the GIL). `progress` wraps the iterator of finished runs (e.g. tqdm)."""
    if reps < 1:
        raise HetlabError(f"--reps must be at least 1, got {reps}")
    workers = workers or min(reps, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(simulate, seed=seed + i, **kwargs) for i in range(reps)]
        done = (f.result() for f in futures)
        return list(progress(done) if progress else done)


def governors() -> list[dict[str, Any]]:
    """Governors with their tunables (sysfs names, defaults, units)."""
    return json.loads(_core.governors())


def platforms() -> list[dict[str, Any]]:
    """Built-in platforms with their clusters and OPP tables."""
    return [json.loads(_core.platform_summary(name)) for name in _core.builtin_platforms()]


def workloads() -> list[str]:
    """Built-in named workloads (generators are listed in `hetlab workloads`)."""
    return list(_core.builtin_workloads())
