# --- lisa marker and the LISA interpreter (tests/test_trace_lisa*.py) ------------------------------
# Tests that read hetlab traces with ARM's LISA in its own venv (.venv-lisa, built on first use by
# scripts/lisa-venv.sh). Deselect with `-m "not lisa"`.
#
# Environment:
#   HETLAB_LISA_PYTHON=/path/to/python  use an existing LISA interpreter instead of .venv-lisa
#   HETLAB_REQUIRE_LISA=1               fail (instead of skip) when the venv cannot be built
#                                       because the package index is unreachable

import os
import socket
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
