"""hetlab: energy and performance management for big.LITTLE SoCs.

The model lives in Rust (`hetlab._core`); this package is the thin layer users touch:
`simulate()` and its result objects, and the `hetlab` command line.
"""

from hetlab.api import SimResult, governors, platforms, simulate, simulate_reps, workloads

__all__ = ["SimResult", "governors", "platforms", "simulate", "simulate_reps", "workloads"]
__version__ = "0.1.0"
