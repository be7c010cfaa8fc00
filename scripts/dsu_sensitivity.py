"""The DSU parameters' sensitivity (docs/dsu.md): every ASSUMPTION of a platform's [dsu] moved to
a low and a high value, one at a time, and at each value (1) a dependent chase over 1 MiB on an
A55 (past its L2, inside the L3) at the DSU's lowest and top OPPs, and (2) the modern-placement
experiment's DSU claims on the 60 Hz phone mix under EAS: the SoC energy the voted DSU saves
against one fixed at its top OPP, and the frame-deadline misses it adds.

    .venv/bin/python scripts/dsu_sensitivity.py [--platforms gs101,rk3588] [--seed 1]

Prints a markdown table per platform. Every number is the simulator's.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hetlab import _core, api
from hetlab.experiments.modern_placement import frame_misses

# (key, low, high): the [dsu] ASSUMPTIONs; a factor where the key's value is scaled
VARIANTS = (
    ("l3_hit_cycles", 20.0, 40.0),
    ("snoop_filter_cycles", 5.0, 20.0),
    ("vote_ratios", 0.4, 0.8),
    ("clock_coefficient", "x0.5", "x2"),
    ("static_mw", 0.0, 30.0),
    ("l3_hit_nj", "x0.5", "x2"),
)


def _with(text: str, key: str, value) -> str:
    """The platform text with [dsu] `key` set to `value` (a "xF" string scales the stated value)."""
    dsu = tomllib.loads(text)["dsu"]
    if key == "vote_ratios":
        new = "[" + ", ".join(str(value) for _ in dsu["vote_ratios"]) + "]"
    elif isinstance(value, str):
        new = repr(float(dsu[key]) * float(value[1:]))
    else:
        new = repr(float(value))
    head, sep, tail = text.partition("\n[dsu]\n")
    tail = re.sub(rf"^{key} = [^\n#]*", f"{key} = {new}", tail, count=1, flags=re.M)
    return head + sep + tail


def _chase_ns(platform: str, dsu_khz: int) -> float:
    """ns per instruction of a dependent 1 MiB chase on an A55 at its top OPP."""
    p = tomllib.loads(api.load_platform(platform).text)
    little = p["clusters"][0]
    r = api.simulate(
        platform,
        "ccbench:size=262144,pattern=random",
        cluster=little["name"],
        freq={little["name"]: little["opps"][-1][0]},
        governor="performance",
        dsu_khz=dsu_khz,
    )
    inst = sum(t["pmu"]["inst_retired"] for t in r.summary["threads"])
    return 1e9 * r.time_s / inst


def _phone(platform: str, dsu_khz: int | None, seed: int) -> tuple[float, float]:
    options = {} if dsu_khz is None else {"dsu_khz": dsu_khz}
    r = api.simulate(platform, "phone-mix-60", scheduler="eas-eevdf", governor="schedutil", seed=seed, **options)
    e = r.summary["energy"]
    return sum(e["clusters_j"]) + e["dsu_j"] + e["dram_j"], frame_misses(r.summary["marks"], 1 / 60)["miss_pct"]


def row(text: str, seed: int) -> list[float]:
    opps = tomllib.loads(text)["dsu"]["opps"]
    low, top = opps[0][0], opps[-1][0]
    with tempfile.TemporaryDirectory(prefix="hetlab-dsu-") as tmp:
        path = str(Path(tmp) / "platform.toml")
        Path(path).write_text(text)
        slow, fast = _chase_ns(path, low), _chase_ns(path, top)
        (e_vote, m_vote), (e_fixed, m_fixed) = _phone(path, None, seed), _phone(path, top, seed)
    return [slow, fast, 100 * (e_fixed - e_vote) / e_fixed, m_vote - m_fixed]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platforms", default="gs101,rk3588")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for platform in args.platforms.split(","):
        base = _core.builtin_platform_text(platform)
        points = [("as stated", base)] + [
            (f"{key} {v}", _with(base, key, v)) for key, lo, hi in VARIANTS for v in (lo, hi)
        ]
        with ThreadPoolExecutor() as pool:
            rows = list(pool.map(lambda p: row(p[1], args.seed), points))
        print(f"\n### {platform}\n")
        print(
            "| [dsu] value | A55 chase over 1 MiB, ns per instruction, DSU at its lowest OPP | ... at the top | "
            "phone-mix-60 (EAS): energy the voted DSU saves vs fixed | misses it adds, points |"
        )
        print("|---|---|---|---|---|")
        for (name, _), (slow, fast, saving, misses) in zip(points, rows):
            print(f"| {name} | {slow:.1f} | {fast:.1f} | {saving:+.1f} % | {misses:+.1f} |")


if __name__ == "__main__":
    main()
