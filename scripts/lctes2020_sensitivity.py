"""The memory system's and power model's unknowns against the seed paper's claims: re-runs
`hetlab reproduce lctes2020` on variants of the Exynos 5422 platform file, one unknown changed at
a time, and prints a Markdown table of the claims each variant holds (docs/training.md shows
its output).

    python scripts/lctes2020_sensitivity.py [OUT]      # about 5 minutes on 2 cores

The unknowns: the read tracker's entries per slave port (SIx_R_MAX, not public), the snoop's
frequency-independent part (with the snoop path re-derived from the same observation, the
paper's 0.6-0.7 GHz threshold: (145 ns - fixed) x 0.65 GHz / 27 A15 L2 cycles), what the CCI
does with a speculative fetch that returns before the snoop response (the TRM's retry, or
keeping the early data), the DRAM at the paper's 933 MHz, a GPU rail in the sensor sum,
BUS_ACCESS per beat, the switching activity of a core stalled on memory (no source), the energy
of a snoop an L2 serves (no source), the A7's
power coefficient (the HC2 wall increment suggests about half), and how the XU3 measurements'
loose splits (A7 leakage, A15 clock vs leakage, A15 per-core coefficient) could fall, with the
power model before them as the last row.
"""

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

PLATFORM = Path(__file__).resolve().parent.parent / "data" / "platforms" / "exynos5422.toml"

# (label, {key: value}) — the default first.
VARIANTS = [
    ("default (4 entries, fixed 0 ns, retry)", {}),
    ("read_tracker_entries = 1", {"read_tracker_entries": "1"}),
    ("read_tracker_entries = 2", {"read_tracker_entries": "2"}),
    ("read_tracker_entries = 8", {"read_tracker_entries": "8"}),
    *(
        (
            f"snoop_fixed_ns = {fixed} (lookups {(145 - fixed) * 0.65 / 27:.2f})",
            {"snoop_fixed_ns": f"{fixed:.1f}", "snoop_path_l2_lookups": f"{(145 - fixed) * 0.65 / 27:.4f}"},
        )
        for fixed in (40, 100)
    ),
    ('speculative_fetch = "overlap"', {"speculative_fetch": '"overlap"'}),
    # The paper ran the DMC at 933 MHz (seed 001 §3.2): 14.9 GB/s (ref §1.1.4); how much of the
    # 145 ns idle latency (measured at 825 MHz) follows the memory clock is not known: all of it
    # is the bound, 145 x 825 / 933 = 128 ns.
    ("DRAM 933 MHz, bandwidth only", {"peak_bandwidth_mb_s": "14900.0"}),
    ("DRAM 933 MHz, latency 128 ns too", {"peak_bandwidth_mb_s": "14900.0", "idle_latency_ns": "128.2"}),
    # The XU3's GPU rail with the GPU idle, in the sensor sum (no measured figure: a probe).
    ("unmodelled_rails_mw = 100 (GPU rail)", {"unmodelled_rails_mw": "100.0"}),
    # BUS_ACCESS per L1-L2 data beat (a 128-bit path: 4 per 64-byte line) instead of per L2 line.
    ('bus_access = "l1-beat", beat_bytes = 16', {"bus_access": '"l1-beat"\nbeat_bytes = 16'}),
    # A core stalled on memory keeps its clocks running (an in-order A7 waiting on a load still
    # clocks its pipeline, L1 and L2; model-review §2.4): the bound of the unknown activity.
    ("stall_activity = 1 (both core types)", {"stall_activity": "1.0"}),
    # Energy per snoop an L2 serves (no source; the platform file's bounds from SRAM read energies):
    # a tag lookup, and a whole line read on every snoop.
    ("snoop_lookup_energy_nj = 0.025 (a tag lookup)", {"snoop_lookup_energy_nj": "0.025"}),
    ("snoop_lookup_energy_nj = 1 (a line read)", {"snoop_lookup_energy_nj": "1.0"}),
    # 4 busy A7s at 1.4 GHz add 385 mW at the HC2's wall, 845 mW in the model (model-review §3.2,
    # a weak source): the A7's coefficient halved.
    ("A7 dynamic_power_coefficient = 45", {"dynamic_power_coefficient#1": "45"}),
    # The A7's leakage at the bound its idle draw at 200 MHz sets (the platform file's comment).
    ("A7 leakage_mw = 6.2 (the bound)", {"leakage_mw#1": "6.2"}),
    # The A15's shared draw split the other way: all of it clocked (the fit with clock alone).
    ("A15 clock 161, leakage 0", {"clock_power_coefficient#2": "161.0", "leakage_mw#2": "0.0"}),
    # The A15's cores drawing what the kernel's EM says (the DT's 310) instead of the measured 414.
    ("A15 measured_power_coefficient = 310 (DT)", {"measured_power_coefficient": "310.0"}),
    # The power model before the XU3 measurements: leakage ASSUMPTIONS (A7 40 mW, A15 300 mW),
    # no clocked shared logic, the DT coefficient, the board constant 3400 mW.
    (
        "before the XU3 power data",
        {
            "leakage_mw#1": "40.0",
            "leakage_mw#2": "300.0",
            "clock_power_coefficient": "0.0",
            "measured_power_coefficient": "310.0",
            "rest_power_mw": "3400.0",
        },
    ),
]

# The claims shown, by the start of their text in report.md's claims table.
CLAIMS = [
    ("gcc-L speedup", "gcc-g23 on LITTLE: anti-snoop speedup"),
    ("gcc-L energy", "gcc-g23 on LITTLE: anti-snoop energy"),
    ("ccbench mean", "ccbench grid: mean"),
    ("gcc snoop penalty", "snoop penalty of gcc"),
    ("all-max most energy", "Realistic benchmarks: all-max spends"),
    ("bbench", "bbench:"),
    ("speedometer2", "speedometer2:"),
]


def variant_text(changes: dict[str, str]) -> str:
    """The platform file with each key's value replaced: every occurrence (a core-type key is
    set on both core types), or only the N-th where the key is written `key#N` (the A7's
    cluster and core type come first, the A15's second)."""
    text = PLATFORM.read_text()
    for spec, value in changes.items():
        key, _, nth = spec.partition("#")
        seen = 0

        def replace(m: re.Match, key: str = key, nth: str = nth, value: str = value) -> str:
            nonlocal seen
            seen += 1
            return f"{key} = {value}" if not nth or seen == int(nth) else m.group(0)

        text = re.sub(rf"(?m)^{key} = [^#\n]*", replace, text)
        assert seen >= max(1, int(nth or 1)), spec
    return text


def fig4_speedups(summary: Path) -> str:
    """The paper's own Figure 4 trees (`anti-snoop-fig4`): gcc-g23-L's speedup over ondemand and
    the ccbench grid's mean."""
    s = pd.read_csv(summary)
    fig4 = s[s.config == "anti-snoop-fig4"]
    gcc = fig4[fig4.label == "gcc-g23-L"].speedup_mean.iloc[0]
    grid = fig4[fig4.group == "ccbench"].speedup_mean.mean()
    return f"{gcc:.2f}x / {grid:.2f}x"


def claims(report: Path) -> list[tuple[str, str, str]]:
    rows = []
    for line in report.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[-1] in ("yes", "no", "partly"):
            rows.append((cells[0], cells[-2], cells[-1]))
    return rows


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "cci-sensitivity")
    out.mkdir(parents=True, exist_ok=True)
    header = ["variant", "claims held (partly)", *(name for name, _ in CLAIMS), "paper's trees: gcc-L / ccbench"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for i, (label, changes) in enumerate(VARIANTS):
        platform = out / f"variant-{i}.toml"
        platform.write_text(variant_text(changes))
        run = out / f"variant-{i}"
        subprocess.run(
            ["hetlab", "reproduce", "lctes2020", "--platform", str(platform), "--out", str(run)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        rows = claims(run / "report.md")
        held = sum(r[2] == "yes" for r in rows)
        partly = sum(r[2] == "partly" for r in rows)
        cells = []
        for _, start in CLAIMS:
            claim, value, verdict = next(r for r in rows if r[0].startswith(start))
            cells.append(f"{value} ({verdict})")
        cells.append(fig4_speedups(run / "summary.csv"))
        print(f"| {label} | {held}/{len(rows)} ({partly}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
