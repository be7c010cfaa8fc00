"""The seed paper's §3 next to its §5 in the `lctes2020` report: Figures 2 and 3 (cycles per
access, the process's `mem_bus_access` per cycle and the active cluster's CCI stall cycles per
read against the idle cluster's frequency, per array size and pattern) drawn from the
characterization sweep the model was trained on, the Figure 2c counter at the OPPs the paper
names and the anti-snoop governor's trace of the idle cluster's clock (Algorithm 2); the idle
cluster's average clock per configuration is lctes2020_idle.py's. lctes2020.py owns the rest of
the reproduction."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from hetlab import api
from hetlab.experiment import Chart

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from hetlab.experiment import ChartData, Prepared

ACTIVE = {"little": ("LITTLE", "big"), "big": ("big", "LITTLE")}  # active -> (its name, the idle one's)
# The idle-cluster OPPs the paper names for the onset of the snoop penalty (§3.1: big below
# 0.7 GHz, LITTLE below 0.4 GHz), with the lowest and the top.
FIG2C_IDLE_MHZ = {"little": (200, 400, 700, 2000), "big": (200, 300, 400, 500, 1400)}
TRACE_CASES = (("gcc-g23", "spec-gcc-g23"), ("ccbench random 4 MB", "ccbench:size=1048576,pattern=random"))
TRACE_S = 0.6  # simulated seconds of each governor trace
TRACE_ROWS = 30  # samples listed per trace


@lru_cache(maxsize=2)
def _active_top(sweep_path: str) -> pd.DataFrame:
    """Per (active cluster, pattern, size, idle kHz), the active cluster at its top OPP: cycles
    per access, bus accesses per cycle of the process, and its port's stall cycles per read."""
    import pandas as pd

    cols = ["run_id", "active_cluster", "idle_cluster", "big_khz", "little_khz", "pattern", "size_elements"]
    cols += ["iterations", "run_time_s", "cpu_cycles", "bus_access"]
    cols += [f"{k}_{c}" for k in ("si_rrq_hs_any", "si_rrq_stall_tt_full") for c in ("little", "big")]
    # only the rows with the active cluster at its top OPP (a twentieth of the sweep or less)
    top = pd.read_parquet(sweep_path, columns=["little_khz", "big_khz"]).max()
    keep = [[("active_cluster", "==", active), (f"{active}_khz", "==", int(top[f"{active}_khz"]))] for active in ACTIVE]
    d = pd.read_parquet(sweep_path, columns=cols, filters=keep)
    parts = []
    for active, g in d.groupby("active_cluster"):
        idle = g.idle_cluster.iloc[0]
        per_run = g.groupby("run_id").agg(
            pattern=("pattern", "first"),
            size_elements=("size_elements", "first"),
            idle_khz=(f"{idle}_khz", "first"),
            active_khz=(f"{active}_khz", "first"),
            iterations=("iterations", "first"),
            run_time_s=("run_time_s", "first"),
            cycles=("cpu_cycles", "sum"),
            bus=("bus_access", "sum"),
            reads=(f"si_rrq_hs_any_{active}", "sum"),
            stalls=(f"si_rrq_stall_tt_full_{active}", "sum"),
        )
        per_run["cycles_per_access"] = per_run.run_time_s * per_run.active_khz * 1e3 / per_run.iterations
        agg = per_run.groupby(["pattern", "size_elements", "idle_khz"]).agg(
            cycles_per_access=("cycles_per_access", "mean"),
            cycles=("cycles", "sum"),
            bus=("bus", "sum"),
            reads=("reads", "sum"),
            stalls=("stalls", "sum"),
        )
        agg["memory_access"] = agg.bus / agg.cycles.where(agg.cycles > 0)
        agg["stall_per_read"] = agg.stalls / agg.reads.where(agg.reads > 0)
        agg = agg.reset_index()
        agg.insert(0, "active", active)
        parts.append(agg)
    return pd.concat(parts, ignore_index=True)


def _draw_panels(t: pd.DataFrame, active: str, axes, colours) -> None:
    """One column of the figure: cycles per access, bus accesses per cycle, stall cycles per read."""
    styles = {"random": "-", "sequential": ":", "stride-16": "--"}
    codes = {"random": 0, "sequential": 1, "stride-16": 16}  # the paper's legend
    sizes = sorted(t.size_elements.unique())
    for (pattern, size), g in t[t.active == active].groupby(["pattern", "size_elements"]):
        g = g.sort_values("idle_khz")
        x = g.idle_khz / 1e6
        kw = {"ls": styles.get(pattern, "-"), "color": colours[sizes.index(size) % len(colours)], "lw": 1.2}
        axes[0].plot(x, g.cycles_per_access, label=f"{size}_{codes.get(pattern, pattern)}", **kw)
        axes[1].plot(x, g.memory_access, **kw)
        axes[2].plot(x, g.stall_per_read.clip(lower=1e-6), **kw)
    name, idle_name = ACTIVE[active]
    axes[0].set_title(f"Figure {2 if active == 'little' else 3}: on {name} ({name} at its top OPP), {idle_name} idle")
    axes[0].set_ylabel("CPU cycles per access")
    axes[1].set_ylabel("mem_bus_access per cycle")
    axes[2].set_ylabel(f"CCI stall cycles per read, {name} port")
    axes[2].set_yscale("log")
    axes[2].set_xlabel(f"idle {idle_name} cluster's clock, GHz")
    axes[0].legend(fontsize=6, ncol=3, title="size_pattern", title_fontsize=6)


def _draw(data: ChartData, path: Path) -> None:
    import matplotlib.pyplot as plt

    prepared = data.prepared
    sweep = getattr(prepared, "sweep_path", None) if prepared is not None else None
    fig, axes = plt.subplots(3, 2, figsize=(12, 9), sharex="col")
    if sweep is None:
        axes[0][0].text(0.5, 0.5, "no characterization sweep in this run (--model given)", ha="center")
    else:
        t = _active_top(sweep)
        colours = plt.get_cmap("viridis")([0.0, 0.25, 0.5, 0.75, 0.95])
        for column, active in enumerate(ACTIVE):
            _draw_panels(t, active, [axes[row][column] for row in range(3)], colours)
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    save = {"format": "svg"} if path.suffix == ".svg" else {"format": "png", "metadata": {"Software": None}}
    fig.savefig(path, **save)
    plt.close(fig)


CHARTS = (
    Chart(
        "fig2_fig3_ccbench_counters.png",
        "Figures 2 and 3: ccbench against the idle cluster's clock (from the characterization sweep)",
        ("ccbench",),
        _draw,
        "Each line one array size and pattern of the sweep (legend: elements_pattern, 0 random, 1 sequential, "
        "16 a line's stride), the active cluster at its top OPP; row (c) is the counter the tree managing the "
        "idle cluster reads. Sizes whose reads stay in the L2 read nothing on the port (no line in (c)).",
        uses_intervals=False,
    ),
)


def figure_2c_section(prepared: Prepared) -> list[str]:
    """The Figure 2c and 3c counter at the idle OPPs the paper names, per size and pattern."""
    sweep = getattr(prepared, "sweep_path", None)
    lines = ["## Figures 2c and 3c: the CCI counter against the idle cluster's clock", ""]
    if sweep is None:
        return [*lines, "Not shown: no characterization sweep in this run (--model given)."]
    t = _active_top(sweep)
    lines += [
        "Stall cycles per read request (`si_rrq_stall_tt_full / si_rrq_hs_any`) on the active cluster's "
        "CCI port, active cluster at its top OPP, from the characterization sweep (all its repetitions). "
        "The paper: 'when clock frequencies are too low under certain memory access patterns, we get "
        "higher stalling cycles recorded on this PMC' (§3.1).",
    ]
    for active, mhz in FIG2C_IDLE_MHZ.items():
        name, idle_name = ACTIVE[active]
        part = t[(t.active == active) & (t.idle_khz // 1000).isin(mhz)]
        wide = part.pivot_table(index=["pattern", "size_elements"], columns="idle_khz", values="stall_per_read")
        lines += [
            "",
            f"ccbench on {name} ({name} port), idle {idle_name} at:",
            "",
            "| pattern | size (elements) | " + " | ".join(f"{k // 1000} MHz" for k in wide.columns) + " |",
            "|---|---:|" + "---:|" * len(wide.columns),
        ]
        for (pattern, size), row in wide.iterrows():
            lines.append(f"| {pattern} | {size} | " + " | ".join(f"{v:.2e}" for v in row) + " |")
    return lines


def _trace(platform: str, spec: str, model: str) -> pd.DataFrame:
    """The idle big cluster's governor samples for `spec` on LITTLE under anti-snoop: its clock
    and target, and the LITTLE port's counter and the process's bus accesses over each period."""
    import pandas as pd

    r = api.simulate(
        platform, spec, cluster="little", governor="anti-snoop", model=model, seed=1, time_limit_s=TRACE_S, series=True
    )
    s = pd.DataFrame({k: list(v) for k, v in r.series.items()})
    big = s[s.cluster == "big"].copy()
    big["stall_per_read"] = big.si_rrq_stall_tt_full_little / big.si_rrq_hs_any_little.where(
        big.si_rrq_hs_any_little > 0
    )
    big["memory_access"] = big.bus_access_little / big.cpu_cycles_little.where(big.cpu_cycles_little > 0)
    return big


def governor_trace_section(platform: str, prepared: Prepared) -> list[str]:
    """Algorithm 2 at work: the idle big cluster's clock, sample by sample, for gcc and a chase."""
    lines = [
        "## The anti-snoop governor at work (Algorithm 2)",
        "",
        "Each sample of the idle big cluster's policy: below up_threshold the tree reads the LITTLE "
        "port's stall cycles per read and the LITTLE process's bus accesses per cycle over the last "
        "period and says increase or decrease; the target is one OPP above or below the current clock "
        "(`cpu_freq_step`: the 5422's OPPs are 100 MHz apart), never below ondemand's load-based choice "
        "(line 13's max); samples come every 10 ms while a CPU of the policy is busy, at its next "
        "wake-up otherwise (an idle cluster's kernel wake-ups here). The model's snoops answer within "
        "the DRAM access from 700 MHz up (crossover 0.65 GHz), so that is where a climb should stop. "
        f"First {TRACE_S} simulated seconds, seed 1; the cluster starts at its top OPP.",
    ]
    if prepared.model_path == "lctes2020-fig4" or not prepared.model_path:
        model = "lctes2020-fig4"
    else:
        model = prepared.model_path
    for title, spec in TRACE_CASES:
        big = _trace(platform, spec, model)
        rows = big.iloc[:: max(1, -(-len(big) // TRACE_ROWS))]
        lines += [
            "",
            f"{title} on LITTLE ({len(big)} samples; every {max(1, -(-len(big) // TRACE_ROWS))} listed):",
            "",
            "| t ms | idle big MHz | LITTLE port stall cycles per read | bus accesses per cycle | target MHz |",
            "|---:|---:|---:|---:|---:|",
        ]
        for r in rows.itertuples():
            arrow = "↑" if r.target_khz > r.freq_khz else ("↓" if r.target_khz < r.freq_khz else "=")
            lines.append(
                f"| {1000 * r.time_s:.0f} | {r.freq_khz / 1000:.0f} | {r.stall_per_read:.2e} "
                f"| {r.memory_access:.4f} | {arrow} {r.target_khz / 1000:.0f} |"
            )
        late = big[big.time_s > TRACE_S / 2]
        if not late.empty:
            share = late.freq_khz.value_counts(normalize=True).sort_index()
            lines += [
                "",
                "Second half of the trace, share of samples at each clock: "
                + ", ".join(f"{k // 1000} MHz {v:.0%}" for k, v in share.items())
                + ".",
            ]
    return lines
