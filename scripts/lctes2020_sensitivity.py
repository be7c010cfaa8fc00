"""The memory system's and power model's unknowns against the seed paper's claims: re-runs
`hetlab reproduce lctes2020` on variants of the Exynos 5422 platform file, one unknown changed at
a time, and prints a Markdown table with every claim at each value (docs/training.md shows its
output).

    python scripts/lctes2020_sensitivity.py [OUT]      # about 10 minutes on 2 cores

The unknowns: each CCI slave port's read tracker (SIx_R_MAX, not public: S3, the A7's, is
inferred from the paper's Figures 2c and 4a; S4's is an assumption bounded by the A15's copy
bandwidth), the kernel wake-ups' footprint (the reads beside a lone chase), the snoop's
frequency-independent part (with the snoop path re-derived from the same observation, the
paper's 0.6-0.7 GHz threshold: (145 ns - fixed) x 0.65 GHz / 27 A15 L2 cycles), what the CCI
does with a speculative fetch that returns before the snoop response (the TRM's retry, alone and
with a fixed part), and the switching activity of a core stalled on memory (no source for the
A7's).
"""

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

PLATFORM = Path(__file__).resolve().parent.parent / "data" / "platforms" / "exynos5422.toml"

# (label, {key: value}) — the default first.
VARIANTS = [
    ("default (S3 3 entries, S4 4, footprint 128 lines, fixed 0 ns, overlap)", {}),
    # S3 (the A7's port) is the first read_tracker_entries in the file, S4 the second
    ("S3 read_tracker_entries = 2", {"read_tracker_entries#1": "2"}),
    ("S3 read_tracker_entries = 4", {"read_tracker_entries#1": "4"}),
    ("S4 read_tracker_entries = 8", {"read_tracker_entries#2": "8"}),
    ("S4 read_tracker_entries = 16", {"read_tracker_entries#2": "16"}),
    ("kernel_wakeup_footprint_lines = 32", {"kernel_wakeup_footprint_lines": "32.0"}),
    ("kernel_wakeup_footprint_lines = 512", {"kernel_wakeup_footprint_lines": "512.0"}),
    *(
        (
            f"snoop_fixed_ns = {fixed} (lookups {(145 - fixed) * 0.65 / 27:.2f})",
            {"snoop_fixed_ns": f"{fixed:.1f}", "snoop_path_l2_lookups": f"{(145 - fixed) * 0.65 / 27:.4f}"},
        )
        for fixed in (40, 100)
    ),
    ('speculative_fetch = "retry"', {"speculative_fetch": '"retry"'}),
    (
        'speculative_fetch = "retry", snoop_fixed_ns = 100 (lookups 1.08)',
        {"speculative_fetch": '"retry"', "snoop_fixed_ns": "100.0", "snoop_path_l2_lookups": "1.0833"},
    ),
    # A core stalled on memory keeps its clocks running (an in-order A7 waiting on a load still
    # clocks its pipeline, L1 and L2; model-review §2.4): the bound of the unknown activity.
    ("stall_activity = 1 (both core types)", {"stall_activity": "1.0"}),
]

# The claims shown, by the start of their text in report.md's claims table.
CLAIMS = [
    ("gcc-L speedup", "gcc-g23 on LITTLE: anti-snoop speedup"),
    ("gcc-L energy", "gcc-g23 on LITTLE: anti-snoop energy"),
    ("ccbench never slower", "ccbench grid: anti-snoop never"),
    ("ccbench mean", "ccbench grid: mean"),
    ("order", "Realistic benchmarks: all-max fastest"),
    ("all-max most energy", "Realistic benchmarks: all-max spends"),
    ("gcc snoop penalty", "snoop penalty of gcc"),
    ("realistic penalty", "snoop penalty of the realistic"),
    ("povray", "povray-train"),
    ("h264ref", "h264ref-train"),
    ("bbench", "bbench:"),
    ("speedometer2", "speedometer2:"),
    ("mplayer", "mplayer-1080p:"),
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
    """(claim, hetlab, holds?) from report.md's claims table (claim, paper, band, hetlab, holds?,
    mechanism)."""
    rows = []
    table = report.read_text().split("## Claims", 1)[1].split("### Notes", 1)[0]
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 6 and cells[4] in ("yes", "no", "partly"):
            rows.append((cells[0], cells[3], cells[4]))
    return rows


def gcc_idle_mhz(summary: Path) -> str:
    """Where the trained governor held the idle big cluster for gcc-g23-L, MHz on average."""
    s = pd.read_csv(summary)
    row = s[(s.label == "gcc-g23-L") & (s.config == "anti-snoop")]
    return f"{row.idle_freq_mhz.iloc[0]:.0f}" if not row.empty else "–"


def held_at_top(report: Path) -> str:
    """The pairs whose idle cluster the trained governor held at its top OPP (report.md, "The idle
    cluster's clock": the last cell of a held pair's row starts with "held")."""
    section = report.read_text().split("## The idle cluster's clock", 1)[1].split("\n## ", 1)[0]
    held = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().split("|")[1:-1]]
        if len(cells) > 2 and cells[-1].startswith("held"):
            held.append(cells[0])
    return ", ".join(held) or "none"


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "cci-sensitivity")
    out.mkdir(parents=True, exist_ok=True)
    header = [
        "variant",
        "claims held (partly)",
        *(name for name, _ in CLAIMS),
        "gcc-L idle big MHz",
        "paper's trees: gcc-L / ccbench",
        "held at the idle cluster's top OPP",
    ]
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
        cells.append(gcc_idle_mhz(run / "summary.csv"))
        cells.append(fig4_speedups(run / "summary.csv"))
        cells.append(held_at_top(run / "report.md"))
        print(f"| {label} | {held}/{len(rows)} ({partly}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
