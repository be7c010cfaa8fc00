"""The distributed executor on a real Dask cluster: a scheduler and two worker processes started
with Dask's own commands on the loopback interface, as a user would start them. Sweeps and
reproductions run there must give the same bytes as the local executor, also when a worker dies
in the middle."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import processes

distributed = pytest.importorskip("distributed")

BIN = Path(sys.executable).parent
SWEEP = ["--platform", "exynos5422", "--patterns", "random", "--reps", "2"]
# runs 12x longer: the sweep still has seconds to go when its first chunk is back, so a worker
# killed or a Ctrl-C sent then always lands mid-sweep
LONG_SWEEP = [*SWEEP, "--run-s", "1"]


def hetlab(*args, check=True):
    proc = processes.run([str(BIN / "hetlab"), *args], capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _wait_for(predicate, what: str, timeout_s: float = processes.HANG_GUARD_S):
    """Waits for an event; the time bound is only against a hang (a busy machine may be slow)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """`dask scheduler` and `dask worker --nworkers 2` on 127.0.0.1; yields the executor spec
    and a client for the test's own inspection."""
    tmp = tmp_path_factory.mktemp("dask")
    scheduler_file = tmp / "scheduler.json"
    logs = [open(tmp / name, "w") for name in ("scheduler.log", "workers.log")]
    procs = [
        processes.popen(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0"]
            + ["--scheduler-file", str(scheduler_file)],
            stdout=logs[0],
            stderr=subprocess.STDOUT,
            cwd=tmp,
        )
    ]
    _wait_for(scheduler_file.exists, "the scheduler file")
    procs.append(
        processes.popen(
            [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "2"]
            + ["--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
            stdout=logs[1],
            stderr=subprocess.STDOUT,
            cwd=tmp,
        )
    )
    address = json.loads(scheduler_file.read_text())["address"]
    client = distributed.Client(address, timeout=30)
    try:
        client.wait_for_workers(2, timeout=processes.HANG_GUARD_S)
        yield "dask://" + address.removeprefix("tcp://"), client
    finally:
        client.close()
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()


def test_a_sweep_on_the_cluster_is_byte_identical_to_the_local_one(cluster, tmp_path):
    spec, client = cluster
    hetlab("characterize", *SWEEP, "--out", str(tmp_path / "local.parquet"))
    hetlab("characterize", *SWEEP, "--out", str(tmp_path / "dask.parquet"), "--executor", spec)
    assert (tmp_path / "local.parquet").read_bytes() == (tmp_path / "dask.parquet").read_bytes()
    # both worker processes took part
    assert len(client.scheduler_info()["workers"]) == 2


def test_a_reproduction_on_the_cluster_is_byte_identical_to_the_local_one(cluster, tmp_path):
    spec, _ = cluster
    args = ["reproduce", "bl-mp-sched", "--reps", "2", "--benchmarks", "linsched-test-linsched"]
    hetlab(*args, "--out", str(tmp_path / "local"))
    hetlab(*args, "--out", str(tmp_path / "dask"), "--executor", spec)
    for name in ("runs.csv", "summary.csv", "summary.md", "intervals.csv"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes(), name
    local = (tmp_path / "local" / "report.md").read_text().replace(str(tmp_path / "local"), "OUT")
    remote = (tmp_path / "dask" / "report.md").read_text().replace(str(tmp_path / "dask"), "OUT")
    assert local == remote


def test_a_worker_killed_mid_sweep_has_its_chunks_run_elsewhere(cluster, tmp_path):
    spec, client = cluster
    out = tmp_path / "dask.parquet"
    partial = tmp_path / "dask.parquet.partial"
    sweep = processes.popen(
        [str(BIN / "hetlab"), "characterize", *LONG_SWEEP, "--out", str(out), "--executor", spec],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # once the first chunk is back, the others are queued or running on both workers
    _wait_for(lambda: partial.exists() and any(partial.glob("chunk-*.arrow")), "the first chunk")
    victim = sorted(client.run(os.getpid).items())[0][1]
    os.kill(victim, signal.SIGKILL)
    _, stderr = sweep.communicate(timeout=processes.HANG_GUARD_S)
    assert sweep.returncode == 0, stderr
    # the killed worker's nanny starts a new one: the cluster is whole again for the next test
    client.wait_for_workers(2, timeout=processes.HANG_GUARD_S)
    hetlab("characterize", *LONG_SWEEP, "--out", str(tmp_path / "local.parquet"))
    assert out.read_bytes() == (tmp_path / "local.parquet").read_bytes()


def test_an_interrupted_cluster_sweep_resumes_from_its_finished_chunks(cluster, tmp_path):
    spec, _ = cluster
    out = tmp_path / "dask.parquet"
    partial = tmp_path / "dask.parquet.partial"
    args = [str(BIN / "hetlab"), "characterize", *LONG_SWEEP, "--out", str(out), "--executor", spec]
    sweep = processes.popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: partial.exists() and any(partial.glob("chunk-*.arrow")), "the first chunk")
    sweep.send_signal(signal.SIGINT)  # Ctrl-C
    _, stderr = sweep.communicate(timeout=60)
    assert sweep.returncode == 130 and "Traceback" not in stderr, stderr
    finished = {p.name for p in partial.glob("chunk-*.arrow")}
    assert finished and not out.exists()
    hetlab(*args[1:])  # the same command again: only the unfinished chunks go to the cluster
    hetlab("characterize", *LONG_SWEEP, "--out", str(tmp_path / "local.parquet"))
    assert out.read_bytes() == (tmp_path / "local.parquet").read_bytes()
    assert not partial.exists()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("dask://127.0.0.1:9", "no Dask scheduler answers there"),
        ("spark://x", "use local or dask://HOST:PORT"),
        ("dask://h:\u00b2", "use local or dask://HOST:PORT"),  # a superscript two: isdigit, not a port
    ],
)
def test_a_bad_executor_is_one_line_and_writes_nothing(tmp_path, spec, message):
    out = tmp_path / "sweep.parquet"
    proc = hetlab("characterize", *SWEEP, "--out", str(out), "--executor", spec, check=False)
    assert proc.returncode != 0
    assert proc.stderr.startswith("hetlab: error: ") and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def _listening(answer: bytes | None):
    """A loopback port held by a service that is not Dask: it accepts and says `answer` (then
    closes), or with None accepts and never says anything. Returns (port, stop)."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            if answer is None:
                held.append(conn)
            else:
                conn.sendall(answer)
                conn.close()

    threading.Thread(target=serve, daemon=True).start()

    def stop():
        server.close()
        for conn in held:
            conn.close()

    return server.getsockname()[1], stop


@pytest.mark.parametrize(
    "answer, message",
    [
        (None, "no Dask scheduler answers there (no answer in 10 s)"),
        (b"HTTP/1.0 426 Upgrade Required\r\ncontent-length: 0\r\n\r\n", "what answers there is not a Dask scheduler"),
    ],
)
def test_a_port_held_by_another_service_is_one_line_not_a_hang(tmp_path, answer, message):
    """Dask's Client would wait forever on a silent port, and read an HTTP answer's bytes as a
    frame length of exabytes; the executor asks the server what it is first."""
    port, stop = _listening(answer)
    try:
        out = tmp_path / "sweep.parquet"
        spec = f"dask://127.0.0.1:{port}"
        proc = hetlab("characterize", *SWEEP, "--out", str(out), "--executor", spec, check=False)
    finally:
        stop()
    assert proc.returncode != 0
    assert proc.stderr.startswith(f"hetlab: error: --executor {spec}: ") and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


GRID = dict(
    platforms=["exynos5422", "linsched-2b2l"],
    workloads=["linsched-test", "mixed8"],
    configs={
        "smp": {"scheduler": "smp"},
        "hmp": {"scheduler": "hmp"},
        "eas": {"scheduler": "eas", "governor": "schedutil"},
    },
)


def test_the_sweep_api_streams_the_same_rows_from_the_cluster(cluster, tmp_path):
    import hetlab

    spec, _ = cluster
    local = hetlab.sweep(**GRID, seeds=[1, 2], out=tmp_path / "local.parquet")
    remote = hetlab.sweep(**GRID, seeds=[1, 2], out=tmp_path / "dask.parquet", executor=spec)
    assert local.read_bytes() == remote.read_bytes()
    frame = hetlab.sweep(**GRID, seeds=[1, 2])
    import pandas as pd

    assert pd.read_parquet(local).equals(frame)
    # grid order: platform, workload, configuration, seed
    assert list(frame.config[:6]) == ["smp", "smp", "hmp", "hmp", "eas", "eas"]
    assert list(frame.seed[:2]) == [1, 2] and frame.platform.iloc[-1] == "linsched-2b2l"
    assert frame.completed.all() and (frame.time_s > 0).all() and (frame.energy_j > 0).all()


def test_advise_on_the_cluster_gives_the_same_advice(cluster):
    spec, _ = cluster
    args = ["advise", "sandra-dhrystone", "--platform", "exynos5433", "--objective", "edp", "--no-progress"]
    local = hetlab(*args)
    remote = hetlab(*args, "--executor", spec)
    assert "recommended for edp" in local.stdout and remote.stdout == local.stdout


def test_a_worker_writes_its_sweep_part_where_it_sees_the_run_and_sends_the_bytes_where_not(tmp_path):
    """A Dask worker writes its chunk's part itself (the client only appends parts to OUT) when
    it sees the client's OUT.partial/, and sends the same bytes when it does not (another
    machine): the part is the same either way, and the same as the local executor's."""
    import importlib

    from hetlab import api

    characterize = importlib.import_module("hetlab.characterize")  # the module, not the function
    handle = api.load_platform("exynos5422")
    sweep = dict(patterns=["random"], sizes=[], reps=2, run_s=0.08, seed=1, active_opp="all")
    token = characterize._run_token(tmp_path)
    part = tmp_path / "chunk-0.arrow"
    assert characterize._run_chunk_part(handle, sweep, 0, str(part), token) == str(part)
    elsewhere = tmp_path / "elsewhere" / "chunk-0.arrow"  # a folder without this run's token
    elsewhere.parent.mkdir()
    sent = characterize._run_chunk_part(handle, sweep, 0, str(elsewhere), token)
    assert isinstance(sent, bytes) and sent == part.read_bytes() and not elsewhere.exists()
    local = characterize._table(characterize.sweep_plan(handle, sweep).run_chunk(0, workers=1))
    assert characterize._read_chunk(part).equals(local) and local.num_rows > 0
