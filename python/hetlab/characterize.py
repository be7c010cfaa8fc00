"""The characterization sweep (seed paper §3.1): ccbench's pointer chase on one cluster, the
other idle, over every pair of cluster frequencies, three access patterns and array sizes on
both sides of every cache level, repeated. Each run records its time and, per governor sampling
period, the CCI and core counters (schema: docs/dataset.md).

The plan, the runs and the rows are Rust's (`hetlab_core::sweep`); this module writes them as
Parquet. The simulated sweep is split into chunks (one per active cluster, pattern and size)
written as they finish, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hetlab import _core, api
from hetlab._checked import checked
from hetlab._files import check_output_path, discard, publish, temporary_path, write_output
from hetlab.api import HetlabError
from hetlab.executor import DaskExecutor, LocalExecutor, check_workers, using

_DEFAULTS = _core.SWEEP_DEFAULTS
PATTERNS: tuple[str, ...] = tuple(_DEFAULTS["known_patterns"])
ACTIVE_OPP: tuple[str, ...] = tuple(_DEFAULTS["active_opps"])


def sweep_plan(platform: str | _core.Platform, sweep: dict, flags: str = "--"):
    """The simulated sweep's plan on `platform` (`hetlab_core::sweep`, whose
    `SweepOptions::validate` is the one rule for the options; its rows record the platform's
    SHA-256). Its errors name hetlab characterize's options (--reps, --run-s, ...); `flags` is
    the prefix of the caller's own names for them (reproduce's --sweep-reps, ...)."""
    counts = [("reps", sweep["reps"]), ("seed", sweep["seed"]), *(("sizes", s) for s in sweep["sizes"])]
    for name, value in counts:  # unsigned in Rust: a negative one would not even convert
        if value < 0:
            raise HetlabError(f"{flags}{name} must not be negative, got {value}")
    handle = api.load_platform(platform)
    try:
        return _core.SweepPlan(handle, **sweep)
    except OverflowError as e:
        raise HetlabError(f"{flags}reps, {flags}seed or {flags}sizes is too large: {e}") from None
    except ValueError as e:
        message = str(e)
        if flags != "--" and "pattern" in message and not message.startswith("--"):
            message = f"{flags}patterns: {message}"  # the caller's option, named
        raise HetlabError(re.sub(r"(?<![\w-])--(?=reps|run-s|sizes|active-opp)", flags, message)) from None


@checked
def characterize(
    out: str,
    platform: str = api.DEFAULT_PLATFORM,
    backend: str = "sim",
    *,
    reps: int = _DEFAULTS["reps"],
    patterns: Sequence[str] = tuple(_DEFAULTS["patterns"]),
    sizes: Sequence[int] | None = None,
    run_s: float = _DEFAULTS["run_s"],
    seed: int = _DEFAULTS["seed"],
    active_opp: str = _DEFAULTS["active_opp"],
    workers: int | None = None,
    executor: str | LocalExecutor | DaskExecutor | None = None,
    progress: Callable[[int, int], object] | None = None,
    period_us: int | None = None,
    freqs_khz: Mapping[str, Sequence[int]] | None = None,
    chase_cpus: Mapping[str, int] | None = None,
    pmu: str | None = None,
    sysfs_root: str | None = None,
    procfs_root: str | None = None,
    allow_missing_counters: bool = False,
    cluster_names: Sequence[str] | None = None,
) -> Path:
    """Runs the sweep and writes it to `out` (Parquet). Returns the path.

    backend: `sim` (the simulator) or `linux` (this board: root; cpufreq sysfs and
        perf_event_open; the options below; `hetlabd characterize` is the same sweep).
    reps: repetitions per configuration (at least 2: the labels come from a t-test).
    patterns: some of PATTERNS. sizes: array sizes in 4-byte elements (default: half and twice
        every L1 and L2 of the platform).
    run_s: a run's length at both clusters' top OPP, s. seed: run i uses seed + i.
    active_opp: `all` (every pair of OPPs) or `top` (the active cluster at its top OPP).
    workers: simulated runs in parallel (default: one per CPU).
    executor: where the simulated chunks run: None or `local` (here, `workers` threads), or
        `dask://HOST:PORT` or an executor (`hetlab.executor`): one job per chunk, each chunk's
        file written as it comes back, so an interrupted sweep resumes from its finished chunks.
    progress: `progress(total_runs, runs_done)` returns a bar with `update(n)` and `close()`
        (e.g. tqdm), for the simulated sweep.

    Board only (None: hetlabd's defaults, see `hetlab characterize --help`): period_us, the
    counter sampling period; freqs_khz, the frequencies to sweep per cluster name (default every
    OPP of its policy); chase_cpus, the CPU running the chase per cluster; pmu, `hardware` or
    `software` stand-ins; sysfs_root, procfs_root, trees laid out like /sys and /proc (the lock
    and saved-state files live in `run` beside the sysfs root: /run for /sys or any mount of
    it); allow_missing_counters, write 0 for counters the board lacks; cluster_names, name the
    policies after these platform clusters. SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked in
    the calling thread while the board sweep runs (see `hetlab.govern`): a signal stops it,
    restores the policies and writes nothing.
    """
    board = dict(
        period_us=period_us,
        freqs_khz=None if freqs_khz is None else [(c, list(f)) for c, f in freqs_khz.items()],
        chase_cpus=None if chase_cpus is None else list(chase_cpus.items()),
        pmu=pmu,
        sysfs_root=sysfs_root,
        procfs_root=procfs_root,
        allow_missing_counters=bool(allow_missing_counters),
        cluster_names=None if cluster_names is None else list(cluster_names),
    )
    if backend not in ("sim", "linux"):
        raise HetlabError(f"unknown backend '{backend}'; use sim or linux")
    given = [name for name, value in board.items() if value not in (None, False)]
    if backend == "sim" and given:
        raise HetlabError(f"{', '.join(given)}: board options, for backend 'linux' only")
    out_path = Path(out)
    check_output_path(out_path, "sweep")
    check_workers(workers)
    sweep = dict(
        patterns=list(patterns), sizes=list(sizes or []), reps=reps, run_s=run_s, seed=seed, active_opp=active_opp
    )
    if backend == "linux":
        try:
            columns, runs, restored, stopped_by = _core.characterize_board(
                api.load_platform(platform), **sweep, **board
            )
        except ValueError as e:
            raise HetlabError(str(e)) from None
        if stopped_by:
            raise HetlabError(
                f"stopped by {stopped_by} after {runs} runs; nothing written (restored {'; '.join(restored)})"
            )
        write_parquet(_table(columns), out_path)
        return out_path
    handle = api.load_platform(platform)
    with using(executor) as runner:
        remote = None if isinstance(runner, LocalExecutor) else runner
        return _run_simulated(out_path, platform, handle, backend, sweep, workers, remote, progress)


def _run_simulated(
    out_path: Path,
    platform: str,
    handle: _core.Platform,
    backend: str,
    sweep: dict,
    workers: int | None,
    remote: DaskExecutor | None,
    progress: Callable[[int, int], object] | None,
) -> Path:
    """The simulated sweep on `platform` (as given; `handle` parsed), chunk by chunk, here or on
    `remote`; see `characterize`.

    Each finished chunk is kept in OUT.partial/ (for a resume) and appended to OUT in plan order
    as soon as the chunks before it are in, while the others still run."""
    plan = sweep_plan(handle, sweep)
    partial = out_path.with_name(out_path.name + ".partial")
    plan_doc = {
        "platform": platform,
        "backend": backend,
        **sweep,
        "sizes": plan.sizes,
        "platform_sha256": handle.sha256,
    }
    chunks = plan.chunks
    files = [partial / f"chunk-{active}-{pattern}-{size}.arrow" for active, pattern, size, _ in chunks]
    _open_partial(partial, plan_doc)
    done = sum(runs for (*_, runs), f in zip(chunks, files) if f.exists())
    bar = progress(sum(runs for *_, runs in chunks), done) if progress else None
    todo = [index for index, file in enumerate(files) if not file.exists()]
    stopping = threading.Event()
    counted = threading.Lock()

    def tick(runs: int) -> None:
        """Called by the engine with the runs it finished (from any worker thread)."""
        if stopping.is_set():
            raise KeyboardInterrupt  # this process is leaving: the chunk stops
        if bar and runs:
            with counted:
                bar.update(runs)

    try:
        with _OrderedParquet(out_path, files, todo) as result:
            if remote is None:

                def here(i: int) -> None:
                    """Chunk `todo[i]` on a local worker thread: simulated, converted, kept and
                    appended to OUT there, so that --jobs N keeps N cores busy, not N plus the
                    main thread's Parquet encoding (which releases the GIL as the engine does)."""
                    table = _table(plan.run_chunk(todo[i], workers=1, progress=tick))
                    _write_chunk(table, files[todo[i]])
                    result.add(i, table)

                LocalExecutor(workers).run(here, [(i,) for i in range(len(todo))], lambda i, _: None)
            else:
                # A worker that sees OUT.partial/ (the same folder, by this run's token in it)
                # writes its chunk's part there itself and sends back its path; one on another
                # file system sends the part's bytes, already converted and compressed. Either
                # way this process only appends parts to OUT: no conversion or compression here.
                token = _run_token(partial)

                def arrived(i: int, part: str | bytes) -> None:
                    file = files[todo[i]]
                    if isinstance(part, bytes):
                        write_output(file, part, "sweep chunk")
                    tick(chunks[todo[i]][3])
                    result.add(i, _read_chunk(file))

                jobs = [(handle, sweep, index, str(files[index]), token) for index in todo]
                remote.run(_run_chunk_part, jobs, arrived)
    except ValueError as e:
        _drop_if_empty(partial)  # a failed sweep's leftovers never block the corrected one
        raise HetlabError(str(e)) from None
    finally:
        stopping.set()
        if bar:
            bar.close()
    import shutil  # here: `import hetlab` (every command) does not load it

    shutil.rmtree(partial)
    return out_path


_TOKEN_PREFIX = ".run-"


def _run_token(partial: Path) -> str:
    """A random name of this run, as an empty file in OUT.partial/ (not a chunk: a resume
    ignores it; removed with the folder): a worker that finds it there shares the folder."""
    token = os.urandom(8).hex()
    write_output(partial / (_TOKEN_PREFIX + token), b"", "sweep run token")
    return token


def _run_chunk_part(platform: _core.Platform, sweep: dict, index: int, file: str, token: str) -> str | bytes:
    """One chunk of the simulated sweep, on an executor's worker, as its part (Arrow IPC, the
    resume file): written at `file` when this worker sees the client's folder (its run `token`
    is there), and its path returned; otherwise the part's bytes. The plan is rebuilt here from
    the same arguments (the platform pickled as its text), so chunk `index` is the same runs
    with the same seeds."""
    table = _table(_core.SweepPlan(platform, **sweep).run_chunk(index, workers=1))
    part = Path(file)
    if (part.parent / (_TOKEN_PREFIX + token)).is_file():
        _write_chunk(table, part)
        return file
    return _chunk_bytes(table)


def _table(columns: dict):
    """The engine's numpy columns as an Arrow table, their memory shared, not copied; a text
    column comes as (codes, values) and becomes an Arrow string column (decoded in Arrow, not
    row by row in Python). Built from buffers: `pa.array` would import pandas (0.2 s) on a
    path that never needs it."""
    import numpy as np
    import pyarrow as pa

    def shared(values, kind):
        return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])

    def arrow(values):
        if isinstance(values, tuple):
            codes, names = values
            utf8 = [name.encode() for name in names]
            offsets = np.cumsum([0, *map(len, utf8)], dtype=np.int32)
            dictionary = pa.Array.from_buffers(
                pa.string(), len(names), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(utf8))]
            )
            return pa.DictionaryArray.from_arrays(shared(codes, pa.int32()), dictionary).cast(pa.string())
        return shared(values, pa.from_numpy_dtype(values.dtype))

    return pa.Table.from_arrays([arrow(v) for v in columns.values()], names=list(columns))


def write_parquet(table, path: Path) -> None:
    """Writes an Arrow table whole through `write_output` (a random temporary name, renamed
    over the target)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    write_output(path, buffer.getvalue().to_pybytes(), "sweep")


def _write_chunk(table, path: Path) -> None:
    """A finished chunk, kept for a resume as Arrow IPC (LZ4): written and read back at memory
    speed, where Parquet would encode every chunk twice."""
    write_output(path, _chunk_bytes(table), "sweep chunk")


def _chunk_bytes(table) -> bytes:
    """A chunk's table as its part file's bytes (Arrow IPC, LZ4)."""
    import pyarrow as pa

    buffer = pa.BufferOutputStream()
    with pa.ipc.new_file(buffer, table.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer:
        writer.write_table(table)
    return buffer.getvalue().to_pybytes()


class _OrderedParquet:
    """OUT written one row group per chunk, in plan order, as chunks arrive in any order: a
    chunk waits in memory only until the ones before it are in; chunks finished by an earlier,
    interrupted run are read from their files at their turn. OUT appears (renamed from a random
    temporary name) only when every chunk is in."""

    def __init__(self, out_path: Path, files: Sequence[Path], todo: Sequence[int]):
        self.out_path, self.files, self.todo = out_path, files, todo
        self.running = set(todo)
        self.waiting: dict[int, object] = {}
        self.next = 0  # the first chunk (plan index) not yet in OUT
        self.tmp = temporary_path(out_path)
        self.writer = None
        self.lock = threading.Lock()  # chunks arrive on any worker thread
        self.closed = False  # a worker still running after a failure or Ctrl-C adds nothing

    def __enter__(self):
        try:
            self._flush()  # finished chunks at the head of the plan
        except BaseException as e:  # a damaged chunk: no __exit__ follows a failed __enter__
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def add(self, i: int, table) -> None:
        """Chunk `todo[i]` arrived (from any thread)."""
        with self.lock:
            if self.closed:
                return
            self.waiting[self.todo[i]] = table
            self._flush()

    def _flush(self) -> None:
        import pyarrow.parquet as pq

        while self.next < len(self.files):
            table = self.waiting.pop(self.next, None)
            if table is None:
                if self.next in self.running:
                    return  # still running
                table = _read_chunk(self.files[self.next])
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.tmp, table.schema)
            self.writer.write_table(table)
            self.next += 1

    def __exit__(self, kind, error, traceback) -> None:
        with self.lock:
            self.closed = True
        if self.writer is not None:
            self.writer.close()
        if kind is None and self.next == len(self.files):
            publish(self.tmp, self.out_path)
        else:
            discard(self.tmp)


def _read_chunk(path: Path):
    """A finished chunk of an earlier run, or one error line naming it when it is damaged."""
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).read_all()
    except (pa.ArrowException, OSError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:120]
        raise HetlabError(
            f"chunk '{path}' of the interrupted sweep is damaged ({first}); remove it and run again (it is "
            "computed again)"
        ) from None


def _chunk_files(partial: Path) -> list[Path]:
    return [f for f in partial.iterdir() if f.name.startswith("chunk-")]


def _open_partial(partial: Path, plan_doc: dict) -> None:
    """Creates OUT.partial/ with its plan.json, or checks that an existing one holds an
    interrupted sweep of the same plan. A directory with no finished chunk is taken over."""
    try:
        st = os.lstat(partial)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise HetlabError(f"'{partial}' exists and is not a directory (sweep resume data); remove it")
    plan_file = partial / "plan.json"
    wanted = json.loads(json.dumps(plan_doc))
    if st is not None:
        try:
            same = json.loads(plan_file.read_text()) == wanted
        except (OSError, ValueError):
            same = False
        if not same and _chunk_files(partial):
            raise HetlabError(
                f"'{partial}' holds an interrupted sweep with other parameters; "
                "delete it or rerun with the same options"
            )
        if same:
            return
    else:
        try:
            partial.mkdir(mode=0o755)
        except OSError as e:
            raise HetlabError(f"cannot create '{partial}': {e.strerror}; choose a writable directory") from None
    write_output(plan_file, json.dumps(plan_doc, indent=2), "sweep plan")


def _drop_if_empty(partial: Path) -> None:
    import shutil

    if partial.is_dir() and not partial.is_symlink() and not _chunk_files(partial):
        shutil.rmtree(partial, ignore_errors=True)
