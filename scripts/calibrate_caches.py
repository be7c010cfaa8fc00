"""Calibrates two Exynos 5422 inputs together on the A7 rows of ramlat's pointer chase
(data/measurements/ramlat-hc2.csv) and reports the A15 rows, which the fit does not see, as
validation: `[caches] system_share`, the share of every data cache held by lines outside a
program's working set (page tables, code, stack, the kernel's), and `[dram] idle_latency_ns`,
the DRAM's own latency, which the rows beyond the L2 measure together with the page walks
(`model::tlb`), switched on for the fit. Prints the fit, a Markdown table (docs/model.md shows
it; "shipped" is the platform file as it is, translation off) and the validation error of the
alternatives (LPAE descriptors, the A15 walking through its L1), each refitted.

    python scripts/calibrate_caches.py          # about a minute

The chase is simulated as ramlat runs it: one dependent load per 64-byte line, random order,
every line once per lap, on one core with the A7s at 1.4 GHz and the A15s at 2.0 GHz.
"""

import math
import re
import tempfile
from pathlib import Path

import pandas as pd
from scipy.optimize import minimize

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


def platform_with(tmp: Path, share: float, dram_ns: float, edits: tuple[tuple[str, str], ...] = ()) -> Path:
    """The platform file with `system_share`, `idle_latency_ns` and the `edits` (regex,
    replacement) applied."""
    text = PLATFORM.read_text()
    edits = ((r"(?m)^system_share = .*$", f"system_share = {share!r}"),
             (r"(?m)^idle_latency_ns = .*$", f"idle_latency_ns = {dram_ns!r}")) + edits  # fmt: skip
    for pattern, replacement in edits:
        text, n = re.subn(pattern, replacement, text, count=1)
        assert n == 1, f"exynos5422.toml has no {pattern}"
    path = tmp / f"p-{abs(hash((share, dram_ns, edits)))}.toml"
    path.write_text(text)
    return path


WALKS = ((r"(?m)^translation = false$", "translation = true"),)
ALTERNATIVES = {
    "LPAE descriptors (8 bytes)": WALKS + ((r"(?m)^descriptor_bytes = 4$", "descriptor_bytes = 8"),),
    "the A15 walks through its L1": WALKS
    + ((r"(?m)^tlb_entries = 512$", "tlb_entries = 512\npage_walk_via_l1 = true"),),
}


def main() -> None:
    rows = pd.read_csv(RAMLAT, comment="#")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        def predict(share: float, dram_ns: float, cluster: str, edits=WALKS) -> list[float]:
            platform = platform_with(tmp, share, dram_ns, edits)
            return [chase_ns(tmp, platform, cluster, int(s)) for s in rows.size_bytes]

        def rms(xs: list[float], col: str) -> float:
            return math.sqrt(sum(math.log(x / m) ** 2 for x, m in zip(xs, rows[col])) / len(xs))

        def fit(edits) -> tuple[float, float]:
            def a7_error(x) -> float:
                share, dram_ns = float(x[0]), float(x[1])
                if not (0.0 <= share < 0.5 and dram_ns > 0.0):
                    return math.inf
                return rms(predict(share, dram_ns, "little", edits), "a7_ns")

            x = minimize(a7_error, [0.117, 145.0], method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-7}).x
            return round(float(x[0]), 3), round(float(x[1]), 1)

        share, dram_ns = fit(WALKS)
        print(f"fitted on the A7 rows with page walks: system_share = {share}, idle_latency_ns = {dram_ns}")
        print()
        print("| core | size | ramlat ns | shipped | error | fitted, with walks | error |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for cluster, core, col in (("little", "A7 (fitted)", "a7_ns"), ("big", "A15 (validation)", "a15_ns")):
            shipped = predict(0.117, 145.0, cluster, edits=())
            fitted = predict(share, dram_ns, cluster)
            for size, measured, b, f in zip(rows.size_bytes, rows[col], shipped, fitted):
                kb = f"{size // 1024} KB" if size < 1 << 20 else f"{size >> 20} MB"
                print(
                    f"| {core} | {kb} | {measured} | {b:.1f} | {100 * (b / measured - 1):+.1f} % | {f:.1f} "
                    f"| {100 * (f / measured - 1):+.1f} % |"
                )
            print(
                f"| {core} | rms log error | | | {100 * rms(shipped, col):.1f} % | | {100 * rms(fitted, col):.1f} % |"
            )
        print()
        print("| with walks and | system_share | idle_latency_ns | A7 rms (fit) | A15 rms (validation) |")
        print("|---|---:|---:|---:|---:|")
        for name, edits in {"the shipped choices": WALKS, **ALTERNATIVES}.items():
            s, d = fit(edits)
            a7, a15 = predict(s, d, "little", edits), predict(s, d, "big", edits)
            print(f"| {name} | {s} | {d} | {100 * rms(a7, 'a7_ns'):.1f} % | {100 * rms(a15, 'a15_ns'):.1f} % |")


if __name__ == "__main__":
    main()
