"""Where a sweep's independent jobs run: in this process (threads; the Rust engine releases the
GIL) or on a Dask distributed cluster (`dask://HOST:PORT`).

Every sweep-shaped command (`characterize`, `reproduce`) hands its jobs to an executor as a
function and a list of argument tuples, and gets each result back through `on_result(index,
result)` as it finishes. Callers put results in place by index, so the output does not depend
on which executor ran the jobs, in which order they finished, or how many workers there were.

Why Dask (distributed) rather than Ray: it is pure Python (about 15 MB with its dependencies,
against Ray's 60+ MB native core), a cluster is two commands (`dask scheduler`, then `dask
worker tcp://HOST:8786` on each machine with hetlab installed), results come back over its own
TCP transport, and a job whose worker dies is re-run on another worker by the scheduler.

A cluster with no worker would hold the jobs forever: a run waits at most
HETLAB_DASK_WORKER_WAIT_S (60 s) for a first worker, and stops with one error line when the
cluster has had none for as long while jobs remain (its last worker lost).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hetlab.api import HetlabError

EXECUTOR_HELP = (
    "where the runs go: local (default: threads in this process, --jobs of them) or "
    "dask://HOST:PORT (a Dask distributed scheduler; every worker needs hetlab installed, and "
    "files the runs read, such as a trained model, must be at the same path there; a run stops with "
    "an error when the cluster has no worker for HETLAB_DASK_WORKER_WAIT_S, 60 s by default)"
)


JOBS_PER_THREAD = 4


def _batch(fn: Callable, items: Sequence[tuple]) -> list:
    return [fn(*item) for item in items]


# How long a run waits for a Dask worker (none at the start, or after the last one was lost)
# before it stops with an error; HETLAB_DASK_WORKER_WAIT_S sets it (a positive number of s).
DEFAULT_WORKER_WAIT_S = 60.0
WORKER_POLL_S = 0.5


def _worker_wait_s() -> float:
    text = os.environ.get("HETLAB_DASK_WORKER_WAIT_S")
    if text is None:
        return DEFAULT_WORKER_WAIT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and 0 < value <= 86_400):
        raise HetlabError(f"HETLAB_DASK_WORKER_WAIT_S={text!r}: give a number of seconds in (0, 86400]")
    return value


def check_workers(workers: int | None) -> None:
    """`--jobs`: None (one per CPU) or at least 1 (0 is not "the default", a negative count
    nothing a pool can have); commands call it before they start anything."""
    if workers is not None and workers < 1:
        raise HetlabError(f"--jobs must be at least 1, got {workers}")


class LocalExecutor:
    """Threads in this process: the engine releases the GIL while it simulates."""

    def __init__(self, workers: int | None = None):
        check_workers(workers)
        self.workers = workers or os.cpu_count() or 1

    def run(self, fn: Callable, items: Sequence[tuple], on_result: Callable[[int, Any], None]) -> None:
        # imported here: concurrent.futures (and the logging it loads) costs every command's start
        from concurrent.futures import ThreadPoolExecutor, as_completed

        pool = ThreadPoolExecutor(max_workers=self.workers)
        try:
            futures = {pool.submit(fn, *item): i for i, item in enumerate(items)}
            for f in as_completed(futures):
                # dropped as it is handed over: a sweep's results are not all kept in memory
                on_result(futures.pop(f), f.result())
        finally:
            # Ctrl-C or a failed job leaves at once: queued jobs are dropped, running ones
            # not waited for
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        pass


class DaskExecutor:
    """A Dask distributed cluster. The scheduler re-runs a job whose worker died; a job that
    raises is not retried (the error is the simulation's, it would raise again)."""

    def __init__(self, address: str, connect_timeout_s: float = 10.0, worker_wait_s: float | None = None):
        try:
            from distributed import Client
        except ImportError:
            raise HetlabError(
                f"--executor {address}: needs Dask distributed; pip install 'hetlab[cluster]' "
                "(or pip install distributed)"
            ) from None
        self.spec = address
        self.worker_wait_s = _worker_wait_s() if worker_wait_s is None else worker_wait_s
        tcp = self.tcp = "tcp://" + address.removeprefix("dask://")
        start = f"start one with `dask scheduler --port {tcp.rpartition(':')[2]}` and workers with `dask worker {tcp}`"
        try:
            reply = _identity(tcp, connect_timeout_s)
        except (OSError, TimeoutError) as e:
            raise HetlabError(f"--executor {address}: no Dask scheduler answers there ({e}); {start}") from None
        except Exception as e:  # a port held by another service: its bytes are no Dask message
            raise HetlabError(
                f"--executor {address}: what answers there is not a Dask scheduler ({type(e).__name__}); {start}"
            ) from None
        if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
            what = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
            raise HetlabError(f"--executor {address}: a Dask {what} answers there, not a scheduler; {start}")
        try:
            self.client = Client(tcp, timeout=connect_timeout_s, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise HetlabError(f"--executor {address}: no Dask scheduler answers there ({e}); {start}") from None

    def run(self, fn: Callable, items: Sequence[tuple], on_result: Callable[[int, Any], None]) -> None:
        import queue

        # A cluster with no worker would hold the jobs forever: wait for one within the
        # deadline, and while the jobs run, give up once none has been there for as long.
        self._wait_for_a_worker()
        # Jobs go in batches, about JOBS_PER_THREAD per worker thread: a task costs the scheduler
        # milliseconds, a simulation often less.
        threads = sum(self.client.nthreads().values()) or 1
        size = max(1, len(items) // (JOBS_PER_THREAD * threads))
        starts = range(0, len(items), size)
        futures = [self.client.submit(_batch, fn, items[s : s + size], pure=False) for s in starts]
        start_of = {f.key: s for f, s in zip(futures, starts)}
        finished: queue.Queue = queue.Queue()
        for f in futures:
            f.add_done_callback(finished.put)
        try:
            left, no_worker_since = len(futures), None
            while left:
                try:
                    f = finished.get(timeout=WORKER_POLL_S)
                except queue.Empty:
                    no_worker_since = self._check_workers(no_worker_since)
                    continue
                left -= 1
                # a finished batch whose worker died before its results came over is computed
                # again: wait for it under the same deadline
                while True:
                    try:
                        results = f.result(timeout=WORKER_POLL_S)
                        break
                    except TimeoutError:
                        no_worker_since = self._check_workers(no_worker_since)
                for offset, result in enumerate(results):
                    on_result(start_of[f.key] + offset, result)
        except (HetlabError, ValueError):  # the job's own error, raised again here
            self.client.cancel(futures)
            raise
        except Exception as e:  # the cluster's: a lost scheduler, workers with another hetlab
            self.client.cancel(futures)
            first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise HetlabError(
                f"--executor {self.spec}: the cluster failed ({first_line}); check that its workers run "
                "this hetlab version (restart them after an upgrade)"
            ) from None
        except BaseException:
            self.client.cancel(futures)
            raise

    def _wait_for_a_worker(self) -> None:
        try:
            self.client.wait_for_workers(1, timeout=self.worker_wait_s)
        except TimeoutError:
            raise HetlabError(
                f"--executor {self.spec}: the Dask scheduler has no worker (waited {self.worker_wait_s:g} s); "
                f"start one with `dask worker {self.tcp}`"
            ) from None

    def _check_workers(self, since: float | None) -> float | None:
        """When the cluster has had no worker since `since` (monotonic s) for longer than the
        deadline, an error; returns when it has had none (None: it has some)."""
        if self.client.nthreads():
            return None
        now = time.monotonic()
        since = now if since is None else since
        if now - since > self.worker_wait_s:
            raise HetlabError(
                f"--executor {self.spec}: the cluster lost its last worker and none came back in "
                f"{self.worker_wait_s:g} s; start one with `dask worker {self.tcp}` and run again"
            )
        return since

    def close(self) -> None:
        self.client.close()


def _identity(tcp: str, timeout_s: float) -> object:
    """What the Dask server at `tcp` says it is (its reply to `identity`), within `timeout_s`;
    raises TimeoutError or the transport's error. Asked before `Client` connects: on a port that
    accepts and never answers, Client waits forever (its timeout covers the TCP connect only),
    and on one that speaks another protocol it reads the first bytes as a frame length. Asked
    from a thread of its own, so that a caller's running event loop (Jupyter) is no obstacle and
    Ctrl-C still stops the wait."""
    import asyncio
    import threading

    from distributed.comm import connect

    async def ask() -> object:
        comm = await connect(tcp, timeout=timeout_s)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["reply"] = asyncio.run(asyncio.wait_for(ask(), timeout_s))
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e

    asker = threading.Thread(target=run, name="hetlab-dask-identity", daemon=True)
    asker.start()
    asker.join(timeout_s + 1.0)
    if "reply" in outcome:
        return outcome["reply"]
    error = outcome.get("error")
    if error is None or isinstance(error, asyncio.TimeoutError):
        raise TimeoutError(f"no answer in {timeout_s:g} s")
    raise error


def executor_from_spec(spec: str | None, workers: int | None = None) -> LocalExecutor | DaskExecutor:
    """`local` (or None) or `dask://HOST:PORT`; anything else is a one-line error."""
    if spec is None or spec == "local":
        return LocalExecutor(workers)
    host, _, port = spec.removeprefix("dask://").rpartition(":")
    if spec.startswith("dask://") and host and port.isascii() and port.isdigit() and 1 <= int(port) <= 65535:
        if workers is not None:
            raise HetlabError(f"--jobs applies to the local executor; {spec}'s workers are set where they start")
        return DaskExecutor(spec)
    raise HetlabError(
        f"--executor '{spec}': use local or dask://HOST:PORT with a port in 1..65535 (e.g. dask://127.0.0.1:8786)"
    )


@contextmanager
def using(executor: str | LocalExecutor | DaskExecutor | None, workers: int | None = None) -> Iterator:
    """The executor `executor` is, or the one its spec names (`executor_from_spec`); one made
    here is closed on leaving."""
    if isinstance(executor, (LocalExecutor, DaskExecutor)):
        yield executor
        return
    made = executor_from_spec(executor, workers)
    try:
        yield made
    finally:
        made.close()
