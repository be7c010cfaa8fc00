"""Calibrates the Exynos 5422's `[caches] system_share` — the share of every data cache held by
lines outside a program's working set (page tables, code, stack, the kernel's) — on the A7
rows of ramlat's pointer chase (data/measurements/ramlat-hc2.csv), and reports the A15 rows,
which the fit does not see, as validation. Prints a Markdown table (docs/model.md shows it).

    python scripts/calibrate_caches.py          # a few seconds

The chase is simulated as ramlat runs it: one dependent load per 64-byte line, random order,
every line once per lap, on one core with the A7s at 1.4 GHz and the A15s at 2.0 GHz.
"""

import math
import re
import tempfile
from pathlib import Path

import pandas as pd

from hetlab import api

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "data" / "platforms" / "exynos5422.toml"
RAMLAT = ROOT / "data" / "measurements" / "ramlat-hc2.csv"
LOADS = 2_000_000
FREQ = {"little": 1_400_000, "big": 2_000_000}


def chase_ns(tmp: Path, platform: Path, cluster: str, size_bytes: int) -> float:
    """ns per load of the chase over `size_bytes` on `cluster`."""
    workload = tmp / f"ramlat-{size_bytes}.toml"
    workload.write_text(
        "name = 'ramlat'\n[[tasks]]\nname = 'chase'\n[[tasks.phases]]\n"
        f"instructions = {LOADS}\ncpi = 0.0\nrefs_per_instr = 1.0\nworking_set_bytes = {size_bytes}\n"
        "pattern = 'random'\nstride_bytes = 64\norder = 'cyclic'\ndependent_loads = true\n"
    )
    r = api.simulate(str(platform), str(workload), cluster=cluster, governor="userspace", freq=FREQ)
    return r.time_s * 1e9 / LOADS


def with_share(tmp: Path, share: float) -> Path:
    text, n = re.subn(r"(?m)^system_share = .*$", f"system_share = {share!r}", PLATFORM.read_text(), count=1)
    assert n == 1, "exynos5422.toml has no [caches] system_share"
    path = tmp / f"share-{share!r}.toml"
    path.write_text(text)
    return path


def main() -> None:
    rows = pd.read_csv(RAMLAT, comment="#")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        def predict(share: float, cluster: str) -> list[float]:
            platform = with_share(tmp, share)
            return [chase_ns(tmp, platform, cluster, int(s)) for s in rows.size_bytes]

        def a7_error(share: float) -> float:
            # squared log error: every row counts by its relative error
            return sum(math.log(p / m) ** 2 for p, m in zip(predict(share, "little"), rows.a7_ns))

        # golden-section search over [0, 0.5]
        lo, hi = 0.0, 0.5
        g = (math.sqrt(5) - 1) / 2
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        fa, fb = a7_error(a), a7_error(b)
        while hi - lo > 1e-4:
            if fa < fb:
                hi, b, fb = b, a, fa
                a = hi - g * (hi - lo)
                fa = a7_error(a)
            else:
                lo, a, fa = a, b, fb
                b = lo + g * (hi - lo)
                fb = a7_error(b)
        share = round((lo + hi) / 2, 3)

        print(f"system_share fitted on the A7 rows: {share}")
        print()
        print("| core | size | ramlat ns | share 0 | error | fitted | error |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for cluster, core, col in (("little", "A7 (fitted)", "a7_ns"), ("big", "A15 (validation)", "a15_ns")):
            zero, fitted = predict(0.0, cluster), predict(share, cluster)
            for size, measured, z, f in zip(rows.size_bytes, rows[col], zero, fitted):
                kb = f"{size // 1024} KB" if size < 1 << 20 else f"{size >> 20} MB"
                print(
                    f"| {core} | {kb} | {measured} | {z:.1f} | {100 * (z / measured - 1):+.1f} % | {f:.1f} "
                    f"| {100 * (f / measured - 1):+.1f} % |"
                )
            rms = lambda xs, col=col: math.sqrt(sum(math.log(x / m) ** 2 for x, m in zip(xs, rows[col])) / len(xs))  # noqa: E731
            print(f"| {core} | rms log error | | | {100 * rms(zero):.1f} % | | {100 * rms(fitted):.1f} % |")


if __name__ == "__main__":
    main()
