"""hetlab: energy and performance management for big.LITTLE SoCs.

The model lives in Rust (`hetlab._core`); this package is the thin layer users touch:
`simulate()` and its result objects, the characterization sweep, the real board (`chase()`,
`govern()`, `characterize(backend="linux")`), design-space sweeps (`sweep()`, here or on a
Dask cluster) and the `hetlab` command line.
"""

from importlib import metadata as _metadata

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
__version__ = _metadata.version("hetlab")  # pyproject.toml holds the one version number
