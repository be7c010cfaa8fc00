# --- lisa marker (tests/test_trace_lisa.py) ------------------------------------------------------
# Tests that read hetlab traces with ARM's LISA in its own venv (.venv-lisa, built on first use by
# scripts/lisa-venv.sh). Deselect with `-m "not lisa"`.


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "lisa: reads hetlab's ftrace output with ARM's LISA (builds .venv-lisa on first use)",
    )
