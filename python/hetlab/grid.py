"""`hetlab.sweep`: a design-space study as one call, over a grid of platforms x workloads x
configurations x seeds, on any executor (`hetlab.executor`), with one row of metrics per run
(`SimResult.metrics()`), in grid order whatever ran it. With `out`, the rows are streamed to
Parquet as they come back, so memory follows the executor's window, not the number of runs.
"""

from __future__ import annotations

import inspect
import json
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hetlab import _core, api
from hetlab._checked import checked
from hetlab._files import check_output_path, discard, publish, temporary_path
from hetlab.api import HetlabError
from hetlab.executor import DaskExecutor, LocalExecutor, using

# rows per Parquet row group when streaming
ROWS_PER_CHUNK = 1024
KEY_COLUMNS = ("platform", "workload", "config", "seed")
_PER_RUN = {"seed", "platform", "workload", "trace", "intervals"}  # set by the grid, or per-run output


def _options_of_simulate() -> set[str]:
    return {
        name
        for name, p in inspect.signature(api.simulate).parameters.items()
        if p.kind is p.KEYWORD_ONLY and name not in _PER_RUN
    }


def _one_run(platform: str, workload: str, config: str, options: dict, seed: int) -> dict:
    """One grid point, on an executor's worker."""
    r = api.simulate(platform, workload, seed=seed, **options)
    return {"platform": platform, "workload": workload, "config": config, "seed": seed, **r.metrics()}


def _as_list(value: Any, what: str, one: tuple[type, ...], kind: str) -> list:
    """One item of the types `one` (a `kind`), or a list of them."""
    if isinstance(value, one) and not isinstance(value, bool):
        return [value]
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise HetlabError(f"sweep: {what} must be one or a list, got {value!r}")
    items = list(value)
    if not items:
        raise HetlabError(f"sweep: {what} is empty; give at least one")
    for item in items:
        if not isinstance(item, one) or isinstance(item, bool):
            raise HetlabError(f"sweep: an item of {what} is {item!r}, not {kind}")
    return items


@checked(types=False)
def sweep(
    platforms: str | Sequence[str],
    workloads: str | Sequence[str],
    configs: Mapping[str, Mapping[str, Any]],
    seeds: int | Sequence[int] = api.DEFAULT_SEED,
    *,
    executor: str | LocalExecutor | DaskExecutor | None = None,
    jobs: int | None = None,
    out: str | os.PathLike | None = None,
):
    """Every platform x workload x configuration x seed, simulated.

    platforms, workloads: names, specs or files, as `simulate` takes them.
    configs: name -> `simulate` keyword options, e.g. {"hmp": {"scheduler": "hmp"},
        "eas": {"scheduler": "eas", "governor": "schedutil"}}.
    seeds: one seed or several.
    executor: `local` (default, `jobs` threads), `dask://HOST:PORT` or an executor object.
    out: a Parquet file to stream the rows to (returns its Path); without it, a DataFrame.

    Columns: platform, workload, config, seed, then `SimResult.metrics()`'s (per-cluster
    columns of every platform in the grid; empty where a platform lacks that cluster)."""
    platforms = [os.fspath(p) for p in _as_list(platforms, "platforms", (str, os.PathLike), "a name or path")]
    workloads = [os.fspath(w) for w in _as_list(workloads, "workloads", (str, os.PathLike), "a name, spec or path")]
    seeds = [
        api._integer("sweep: a seed", s, 0, api.MAX_SEED)
        for s in _as_list(seeds, "seeds", (numbers.Integral,), "an integer")
    ]
    if not isinstance(configs, Mapping):
        raise HetlabError(f"sweep: configs must be a dict of name -> simulate options, got {configs!r}")
    if not configs:
        raise HetlabError("sweep: configs is empty; give at least one, e.g. {'default': {}}")
    known = _options_of_simulate()
    for name, options in configs.items():
        if not isinstance(options, Mapping):
            raise HetlabError(
                f"sweep: configuration '{name}' must be a dict of simulate options, e.g. {{'scheduler': 'hmp'}}, "
                f"got {options!r}"
            )
        unknown = sorted(set(options) - known)
        if unknown:
            raise HetlabError(
                f"sweep: configuration '{name}' has unknown option(s) {', '.join(unknown)}; "
                f"simulate takes {', '.join(sorted(known))}"
            )
        try:
            api.check_options(options)
        except HetlabError as e:
            raise HetlabError(f"sweep: configuration '{name}': {e}") from None
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral)):
        raise HetlabError(f"sweep: jobs must be a number of threads, got {jobs!r}")
    if executor is not None and not isinstance(executor, (str, LocalExecutor, DaskExecutor)):
        raise HetlabError(f"sweep: executor must be 'local', 'dask://HOST:PORT' or an executor, got {executor!r}")
    grid = [
        (platform, workload, name, dict(options), seed)
        for platform in platforms
        for workload in workloads
        for name, options in configs.items()
        for seed in seeds
    ]
    columns = _columns(platforms)  # a bad platform or workload fails before anything runs
    for workload in workloads:
        try:
            _core.workload_summary(*api._workload_args(workload))
        except ValueError as e:
            raise HetlabError(str(e)) from None
    with using(executor, jobs) as runner:
        sink = _ParquetSink(Path(out), columns) if out is not None else _FrameSink(columns)
        try:
            runner.run(_one_run, grid, sink.put)
        except BaseException:
            sink.abort()
            raise
        return sink.finish()


def _columns(platforms: list[str]) -> list[str]:
    """Every column a row of these platforms can have: the grid's keys, then `metrics()`'s
    (per-cluster columns in the order the platforms name their clusters)."""
    clusters: list[str] = []
    for platform in platforms:
        summary = json.loads(api.load_platform(platform).summary())
        clusters += [c["name"] for c in summary["clusters"] if c["name"] not in clusters]
    return [*KEY_COLUMNS, *api.metric_columns(clusters)]


class _InOrder:
    """Rows arrive in completion order; `ready()` hands them back in grid order."""

    def __init__(self):
        self.waiting: dict[int, dict] = {}
        self.next = 0

    def put(self, index: int, row: dict) -> None:
        self.waiting[index] = row

    def ready(self) -> list[dict]:
        rows = []
        while self.next in self.waiting:
            rows.append(self.waiting.pop(self.next))
            self.next += 1
        return rows


class _FrameSink:
    def __init__(self, columns: list[str]):
        self.columns, self.order, self.rows = columns, _InOrder(), []

    def put(self, index: int, row: dict) -> None:
        self.order.put(index, row)
        self.rows += self.order.ready()

    def abort(self) -> None:
        pass

    def finish(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)


class _ParquetSink:
    """Rows in grid order, ROWS_PER_CHUNK per row group, written through a temporary file that
    replaces `path` only when the sweep is complete."""

    def __init__(self, path: Path, columns: list[str]):
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not path.parent.is_dir():
            raise HetlabError(f"sweep: cannot write '{path}': directory '{path.parent}' does not exist")
        text = {"platform", "workload", "config"}
        ints = {"seed", "instructions", "governor_samples"}
        self.schema = pa.schema(
            [
                (
                    c,
                    pa.string()
                    if c in text
                    else pa.int64()
                    if c in ints
                    else pa.bool_()
                    if c == "completed"
                    else pa.float64(),
                )
                for c in columns
            ]
        )
        check_output_path(path, "sweep")
        self.path, self.tmp = path, temporary_path(path)
        self.writer = pq.ParquetWriter(self.tmp, self.schema)
        self.order, self.pending = _InOrder(), []

    def put(self, index: int, row: dict) -> None:
        self.order.put(index, row)
        self.pending += self.order.ready()
        # exactly ROWS_PER_CHUNK rows per group: the file's bytes must not depend on the order
        # in which runs finished
        while len(self.pending) >= ROWS_PER_CHUNK:
            self._write(self.pending[:ROWS_PER_CHUNK])
            self.pending = self.pending[ROWS_PER_CHUNK:]

    def _write(self, rows: list[dict]) -> None:
        import pyarrow as pa

        if rows:
            self.writer.write_table(pa.Table.from_pylist(rows, schema=self.schema))

    def abort(self) -> None:
        self.writer.close()
        discard(self.tmp)

    def finish(self) -> Path:
        self._write(self.pending)
        self.writer.close()
        publish(self.tmp, self.path)
        return self.path
