# --- lisa marker and the LISA interpreter (tests/test_trace_lisa*.py) ------------------------------
# Tests that read hetlab traces with ARM's LISA in its own venv (.venv-lisa, built on first use by
# scripts/lisa-venv.sh). Deselect with `-m "not lisa"`.
#
# Environment:
#   HETLAB_LISA_PYTHON=/path/to/python  use an existing LISA interpreter instead of .venv-lisa
#   HETLAB_REQUIRE_LISA=1               fail (instead of skip) when the venv cannot be built
#                                       because the package index is unreachable

import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.register_assert_rewrite("processes")
import processes  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

# Every process a test starts, stopped with its process group after the test; children start
# with SIGINT at its default; nothing outlives the session (tests/processes.py).
pytest_plugins = ("processes",)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "lisa: reads hetlab's ftrace output with ARM's LISA (builds .venv-lisa on first use)",
    )


def _index_reachable(timeout=5.0) -> tuple[bool, str]:
    """Can we open a TCP connection to the package index (or the proxy in front of it)?"""
    url = os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    target = urlsplit(proxy or url)
    host = target.hostname or "pypi.org"
    port = target.port or (443 if target.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, f"{host}:{port} reachable"
    except OSError as exc:
        return False, f"{host}:{port} unreachable ({exc})"


@pytest.fixture(scope="session")
def lisa_python() -> str:
    """The LISA venv's interpreter (scripts/lisa-venv.sh builds the venv once)."""
    override = os.environ.get("HETLAB_LISA_PYTHON")
    if override:
        assert Path(override).exists(), f"HETLAB_LISA_PYTHON={override} does not exist"
        return override
    proc = processes.run(
        ["bash", str(REPO / "scripts" / "lisa-venv.sh")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        log = proc.stderr[-4000:]
        reachable, why = _index_reachable()
        if not reachable and os.environ.get("HETLAB_REQUIRE_LISA") != "1":
            pytest.skip(f"cannot build the LISA venv without network: {why}")
        pytest.fail(f"scripts/lisa-venv.sh failed (index: {why}):\n{log}")
    python = proc.stdout.strip().splitlines()[-1]
    assert Path(python).exists(), f"lisa-venv.sh printed {python!r}"
    return python


@pytest.fixture(scope="session")
def reproduced(tmp_path_factory) -> Path:
    """A small reproduction's folder (four-vs-eight, one benchmark, one seed: seconds), made once
    per session for the tests of `hetlab report`'s readers; they copy it before changing it."""
    out = tmp_path_factory.mktemp("reproduced") / "out"
    args = ["reproduce", "four-vs-eight", "--benchmarks", "dhrystone", "--reps", "1", "--out", str(out)]
    r = processes.run([sys.executable, "-m", "hetlab", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


class LisaScripts:
    """The tests' LISA scripts run in one LISA interpreter for the whole session
    (tests/lisa_runner.py): each `run()` gives what the script as a process of its own gives."""

    def __init__(self, python: str):
        self._log = tempfile.TemporaryFile()  # LISA's own logging, read only when it fails
        self._proc = processes.popen(
            [python, str(REPO / "tests" / "lisa_runner.py")],
            lasting=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self._answer(600.0, "importing LISA") == {"ready": True}

    def _read(self) -> None:
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # the runner ended

    def _answer(self, timeout_s: float, what: str) -> dict:
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            self.close()
            pytest.fail(f"LISA runner: no answer to {what} in {timeout_s:g} s (stopped)")
        if line is None:
            self._log.seek(0)
            pytest.fail(f"LISA runner ended during {what}:\n{self._log.read()[-4000:].decode(errors='replace')}")
        return json.loads(line)

    def run(self, script: str, *args, timeout_s: float = 1800.0) -> subprocess.CompletedProcess:
        path = REPO / "tests" / script
        self._proc.stdin.write(json.dumps({"script": str(path), "args": [str(a) for a in args]}) + "\n")
        self._proc.stdin.flush()
        a = self._answer(timeout_s, f"{script} {' '.join(map(str, args))}")
        return subprocess.CompletedProcess([script, *args], a["returncode"], a["stdout"], a["stderr"])

    def close(self) -> None:
        processes.stop(self._proc)
        self._log.close()


@pytest.fixture(scope="session")
def lisa_scripts(lisa_python):
    """Runs tests/lisa_*.py scripts in LISA: `lisa_scripts.run("lisa_read_trace.py", trace, "--parser", p)`."""
    scripts = LisaScripts(lisa_python)
    yield scripts
    scripts.close()
