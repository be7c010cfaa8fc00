"""hetlab: energy and performance management for big.LITTLE SoCs.

The model lives in Rust (`hetlab._core`); this package is the thin layer users touch:
`simulate()` and its result objects, the characterization sweep, the real board (`chase()`,
`govern()`, `characterize(backend="linux")`), design-space sweeps (`sweep()`, here or on a
Dask cluster) and the `hetlab` command line.
"""

from hetlab.api import (
    ChaseResult,
    GovernResult,
    SimResult,
    chase,
    govern,
    governors,
    platforms,
    simulate,
    simulate_reps,
    workloads,
)
from hetlab.characterize import characterize
from hetlab.grid import sweep

__all__ = [
    "ChaseResult",
    "GovernResult",
    "SimResult",
    "characterize",
    "chase",
    "governors",
    "govern",
    "platforms",
    "simulate",
    "simulate_reps",
    "sweep",
    "workloads",
]


def __getattr__(name: str):
    # `hetlab.__version__`, read from the installed metadata (pyproject.toml holds the one
    # version number) only when asked: importlib.metadata costs every command ~55 ms otherwise
    if name == "__version__":
        from importlib import metadata

        return metadata.version("hetlab")
    raise AttributeError(f"module 'hetlab' has no attribute {name!r}")
