"""The end of `make run`: what the run found, in a few lines, from the JSON summaries the
Makefile's steps wrote into RESULTS (results/ by default), and where the files are.

    python scripts/run_findings.py [RESULTS]
"""

import json
import sys
from pathlib import Path

from hetlab.api import SimResult


def run(results: Path, name: str) -> SimResult:
    return SimResult(json.loads((results / f"{name}.json").read_text()), {})


def main() -> None:
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
    slow, fast = run(results, "big-200MHz"), run(results, "big-2GHz")
    ondemand, anti = run(results, "ondemand"), run(results, "anti-snoop")

    def little_port(r: SimResult) -> dict:
        return next(p for p in r.summary["cci_ports"] if p["cluster"] == "little")

    def retried_pct(r: SimResult) -> float:
        port = little_port(r)
        return 100 * port["mi_retry_speculative_fetch"] / max(port["si_rrq_hs_any"], 1)

    def idle_mhz(r: SimResult) -> float:
        return r.cluster("big")["avg_freq_khz"] / 1000

    o, a = ondemand.metrics(), anti.metrics()
    print()
    print(f"What this run found (files in {results}/):")

    def stalls_per_read(r: SimResult) -> float:
        port = little_port(r)
        return port["si_rrq_stall_tt_full"] / max(port["si_rrq_hs_any"], 1)

    # how a miss meets its snoop is the platform's `speculative_fetch` (overlap: the DRAM fetch
    # waits for the answer; retry: a fetch back before it is issued again)
    retried = retried_pct(slow)
    how = (
        f"a speculative DRAM fetch back before the snoop's answer is retried ({retried:.0f}% vs "
        f"{retried_pct(fast):.0f}% of the reads)"
        if retried > 0
        else "each miss waits for the snoop's answer before its DRAM data is used"
    )
    print(
        f"- The snoop effect: ccbench (random, 4 MB) on LITTLE takes {slow.time_s:.2f} s with the idle big cluster "
        f"at 200 MHz and {fast.time_s:.2f} s at 2 GHz, {slow.time_s / fast.time_s:.2f}x slower: the CCI-400 answers "
        f"LITTLE's snoops at the big cluster's clock, and {how}. The LITTLE port's read-tracker stall counter "
        f"(the paper's Figure 2c) reads {stalls_per_read(slow):.2e} vs {stalls_per_read(fast):.2e} stall cycles "
        "per read."
    )
    print(
        f"- ondemand keeps the idle big cluster at {idle_mhz(ondemand):.0f} MHz: {o['time_s']:.2f} s, "
        f"{o['energy_j']:.2f} J (the board's sensors: CPU clusters and DRAM)."
    )
    print(
        f"- The anti-snoop governor with the model trained here raises it to {idle_mhz(anti):.0f} MHz: "
        f"{a['time_s']:.2f} s, {a['energy_j']:.2f} J: {o['time_s'] / a['time_s']:.2f}x faster than ondemand "
        f"with {a['energy_j'] / o['energy_j']:.2f}x its energy."
    )
    print(
        f"- Files: {results}/sweep.parquet (the characterization sweep), {results}/model/ (model.json for "
        f"--model, model.h for a kernel module, model.dot, model.txt), {results}/anti-snoop.trace (Perfetto, "
        f"LISA) and {results}/anti-snoop.csv (pandas), the training report (train.txt) and each run's JSON summary."
    )


if __name__ == "__main__":
    main()
