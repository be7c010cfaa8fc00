"""Wall time of the default characterization sweep + training on this machine.

Prints figures; asserts nothing. Run with `make bench` (or directly with the venv's python).
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hetlab", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp) / "sweep.parquet"
        t_sweep = timed("characterize", "--platform", "exynos5422", "--backend", "sim", "--out", str(sweep))
        t_train = timed("train", str(sweep), "--out", str(Path(tmp) / "model"))
        runs = __import__("pandas").read_parquet(sweep, columns=["run_id"]).run_id.nunique()
        print(f"characterize: {runs} runs in {t_sweep:.1f} s ({runs / t_sweep:.0f} runs/s)")
        print(f"train:        {t_train:.1f} s")
        print(f"total:        {t_sweep + t_train:.1f} s (target: under 300 s)")


if __name__ == "__main__":
    main()
