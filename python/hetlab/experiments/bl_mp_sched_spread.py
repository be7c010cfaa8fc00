"""bl-mp-sched's run-to-run spread: how much SurfaceFlinger's execution time and the render
times vary over the seeds under each vexpress configuration, and how that depends on the
workload's spread inputs (bbench-android.toml: `instructions_cv` from DebugBear's page-load
spread, `sleep_late_max_us` from JavaScript timers' lateness). Each sensitivity point reruns
the vexpress part over SEEDS with one input edited in the workload's text; one control point
runs SMP with the nice-10 workers confined to the slowed CPUs, as hmp's priority filter
confines them, to test the mechanism behind the SMP bound. Imported by bl_mp_sched only."""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hetlab import _core, api
from hetlab import runs as runs_lib
from hetlab.experiment import Prepared

if TYPE_CHECKING:
    from hetlab.experiment import Config, Context

WORKLOAD = "bbench-android"
SEEDS = 20  # seeds 1..20 at every point, as the reproduction's default
METRICS = ("sf_exec_s", "render2_s", "render6_s")
SPREAD_KEYS = ("instructions_cv", "sleep_late_max_us")
WORKERS = ("bg-worker5", "bg-worker6", "bg-worker7")


def _scale(text: str, key: str, factor: float) -> str:
    """Every `key = number` line times `factor`; factor 0 removes the line (nothing drawn)."""

    def edit(m: re.Match) -> str:
        return "" if factor == 0 else f"{m[1]}{float(m[2]) * factor!r}{m[3]}"

    return re.sub(rf"(?m)^(\s*{key}\s*=\s*)([0-9.eE+-]+)(.*\n)", edit, text)


def _workers_on(cpus: tuple[int, ...]) -> Callable[[str], str]:
    """The nice-10 workers' tasks get `affinity = cpus`."""

    def edit(text: str) -> str:
        for name in WORKERS:
            text = text.replace(f'name = "{name}"\n', f'name = "{name}"\naffinity = {list(cpus)}\n', 1)
        return text

    return edit


def _back_to_back(text: str) -> str:
    """SurfaceFlinger's frames composed back to back, unpaced (the model before the vsync): each
    `frames` phase becomes one phase of all its frames' instructions (its instructions_cv then
    per render, as before), its vsync and the vsync wake-up's lateness removed."""

    def phase(m: re.Match) -> str:
        return f"instructions = {float(m[1]) * int(m[2])!r}\n"

    text = re.sub(r"(?m)^instructions = ([0-9.eE+-]+)[^\n]*\nframes = (\d+)[^\n]*\n", phase, text)
    return re.sub(r"(?m)^vsync_us = [^\n]*\n(sleep_late_max_us = [^\n]*\n)?", "", text)


def _wake_up_jitter(factor: float) -> Callable[[str], str]:
    """The timer-slack wake-up jitter ([SLACK] lines' sleep_late_max_us) times `factor`."""

    def edit(text: str) -> str:
        return re.sub(
            r"(?m)^(sleep_late_max_us = )([0-9.eE+-]+)(.*\[SLACK\].*\n)",
            lambda m: f"{m[1]}{float(m[2]) * factor!r}{m[3]}",
            text,
        )

    return edit


@dataclass(frozen=True)
class Point:
    """One row of the sweep: what it changes, the edit of the workload's text, its configs."""

    name: str
    edit: Callable[[str], str]
    configs: tuple[str, ...] | None = None  # None: every vexpress configuration
    platform: Callable[[str], str] | None = None  # an edit of the platform's text, if any


def _code_cold(share: float) -> Callable[[str], str]:
    """The perf handler's code lines cold in the L1I for this share of the samples
    ([perf_sample] code_cold_share; without it the task's code churns as its data does)."""

    def edit(text: str) -> str:
        return re.sub(r"(?m)^\[perf_sample\]\n", f"[perf_sample]\ncode_cold_share = {share!r}\n", text, count=1)

    return edit


# Points whose edit touches only what SMP never uses (the perf sample's cost) run the two b.L
# configurations; SMP's row is the stated point's.
PERF_CONFIGS = ("bL-vanilla", "bL-optimized")


def points(slowed: tuple[int, ...]) -> tuple[Point, ...]:
    cpus = ",".join(map(str, slowed))
    return (
        Point("as stated (instructions_cv 0.05, timers 0-2 ms late, 50 µs slack, vsync)", lambda t: t),
        Point("no spread (both keys removed)", lambda t: _scale(_scale(t, SPREAD_KEYS[0], 0), SPREAD_KEYS[1], 0)),
        Point("instructions_cv 0.10 ([WBD])", lambda t: _scale(t, SPREAD_KEYS[0], 2.0)),
        Point("timers on time, no wake-up jitter (sleep_late_max_us 0)", lambda t: _scale(t, SPREAD_KEYS[1], 0)),
        Point("wake-up jitter x10 (timer slack 500 µs)", _wake_up_jitter(10.0)),
        Point("frames back to back (no vsync)", _back_to_back),
        Point("perf handler's code always warm (code_cold_share 0)", lambda t: t, PERF_CONFIGS, _code_cold(0.0)),
        Point("perf handler's code always cold (code_cold_share 1)", lambda t: t, PERF_CONFIGS, _code_cold(1.0)),
        Point(f"control: SMP, nice-10 workers on CPUs {cpus}", _workers_on(slowed), ("smp",)),
    )


@dataclass
class Spread(Prepared):
    """(point, config) -> metric -> (mean, std) over SEEDS seeds, and the control's workers."""

    rows: dict[tuple[str, str], dict[str, tuple[float, float]]] = field(default_factory=dict)
    point_names: list[str] = field(default_factory=list)


def sweep(
    ctx: Context,
    configs: tuple[Config, ...],
    slowed: tuple[int, ...],
    columns: Callable[[Config, api.SimResult], dict],
) -> Spread:
    """Every point's runs over SEEDS seeds on ctx.platform; `columns` reads a run's metrics."""
    import numpy as np

    out = Spread()
    t0 = time.perf_counter()
    base = _core.builtin_workload_text(WORKLOAD)
    board = api.load_platform(ctx.platform).text
    by_name = {c.name: c for c in configs}
    with tempfile.TemporaryDirectory(prefix="hetlab-bl-mp-sched-") as tmp:
        for i, pt in enumerate(points(slowed)):
            path = Path(tmp) / f"w{i}.toml"
            path.write_text(pt.edit(base))
            platform = ctx.platform
            if pt.platform is not None:
                platform = str(Path(tmp) / f"p{i}.toml")
                Path(platform).write_text(pt.platform(board))
            out.point_names.append(pt.name)
            for name in pt.configs or tuple(by_name):
                # --time-limit cuts the sweep's runs as it cuts the reproduction's
                options, cut = runs_lib.limited(by_name[name].options, ctx.time_limit_s)
                runs = api.simulate_reps(
                    SEEDS, seed=1, workers=ctx.jobs, platform=platform, workload=str(path), intervals=True, **options
                )
                what = f"the spread sweep's {name} runs ({pt.name})"
                runs_lib.check_finished(runs, cut, what, ctx.time_limit_s)
                values = [columns(by_name[name], r) for r in runs]
                out.rows[(pt.name, name)] = {
                    m: (float(np.nanmean(v)), float(np.nanstd(v, ddof=1)))
                    for m in (*METRICS, "bg-workers_big_share")
                    for v in [np.array([row[m] for row in values], dtype=float)]
                }
            if pt.platform is not None and "smp" in by_name and "smp" not in (pt.configs or ()):
                out.rows[(pt.name, "smp")] = out.rows[(out.point_names[0], "smp")]
    out.timings_s["spread sweep"] = time.perf_counter() - t0
    return out


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def verdicts(r: dict, configs: tuple[str, ...]) -> dict[str, str]:
    """The claims that judge spreads, on one point's config -> metric -> (mean, std) (configs:
    SMP, b.L vanilla, b.L optimized), with bl_mp_sched's bands (Vanilla variance: its spread
    part only)."""
    smp, van, opt = (r[c] for c in configs)
    sd = lambda x, m="sf_exec_s": x[m][1]  # noqa: E731
    renders = [sd(opt, m) < sd(van, m) for m in METRICS[1:]]
    beaten = [m for m in METRICS for x in (van, opt) if smp[m][0] > x[m][0] + smp[m][1] + x[m][1]]
    return {
        "Vanilla variance (CV ≥ 5%, std ≥ 2x)": _yes(
            sd(van) / van["sf_exec_s"][0] >= 0.05 and sd(van) >= 2 * max(sd(smp), sd(opt))
        ),
        "Steadier": _yes(sd(opt) <= 0.5 * sd(van)),
        "Render variation": "yes" if all(renders) else ("partly" if any(renders) else "no"),
        "Upper bound": _yes(not beaten),
    }


def section(spread: Spread, configs: tuple[str, ...], titles: dict[str, str]) -> list[str]:
    """The sensitivity tables: every metric's mean ± std under every configuration, per point,
    then the spread claims judged on each point's runs (`verdicts`)."""
    if not spread.rows:
        return []
    lines = [
        "## Sensitivity of the spread to the workload's spread inputs",
        "",
        f"Each row reruns the vexpress part over seeds 1-{SEEDS} with one input of bbench-android.toml "
        "edited (the others as stated); mean ± standard deviation, s. The control row runs SMP with the three "
        "nice-10 workers confined to the slowed CPUs, as hmp's priority filter confines them. The perf handler's "
        "code rows edit vexpress-a9.toml's [perf_sample] (code_cold_share) and run the two b.L configurations; "
        "SMP samples nothing, so its row there is the stated one.",
        "",
        "| input | config | " + " | ".join(titles[m] for m in METRICS) + " | workers on {0,2} |",
        "|---|---|" + "---:|" * (len(METRICS) + 1),
    ]
    for name in spread.point_names:
        for c in configs:
            row = spread.rows.get((name, c))
            if row is None:
                continue
            cells = [f"{row[m][0]:.3f} ± {row[m][1]:.3f}" for m in METRICS]
            cells.append(f"{100 * row['bg-workers_big_share'][0]:.0f}%")
            lines.append(f"| {name} | {c} | " + " | ".join(cells) + " |")
    judged = {
        name: verdicts({c: spread.rows[(name, c)] for c in configs}, configs)
        for name in spread.point_names
        if all((name, c) in spread.rows for c in configs)
    }
    if judged:
        heads = list(next(iter(judged.values())))
        lines += [
            "",
            "The claims on spreads at each point (their bands as in the claims table; Vanilla variance without its "
            "placement part):",
            "",
            "| input | " + " | ".join(heads) + " |",
            "|---|" + "---|" * len(heads),
        ]
        lines += [f"| {name} | " + " | ".join(v[h] for h in heads) + " |" for name, v in judged.items()]
    return lines


def smp_bound_section(
    spread: Spread, configs: tuple[str, ...], titles: dict[str, str], slowed: tuple[int, ...]
) -> list[str]:
    """Why hmp can beat the seed's SMP upper bound: the control run (SMP, workers on the slowed
    CPUs) beside the three configurations (configs: SMP, b.L vanilla, b.L optimized)."""
    if not spread.rows:
        return []
    smp, opt = configs[0], configs[-1]
    control = next((n for n in spread.point_names if n.startswith("control")), None)
    rows = {c: spread.rows.get((spread.point_names[0], c)) for c in configs}
    ctl = spread.rows.get((control, smp)) if control else None
    if ctl is None or any(r is None for r in rows.values()):
        return []
    cpus = ",".join(map(str, slowed))
    lines = [
        "## The mechanism behind the SMP bound",
        "",
        "The seed calls SMP (four unslowed A9s) the upper bound. Here hmp can beat it: its priority filter keeps "
        f"the three nice-10 workers (which run during page loads and miss in the shared L2) in the slow domain "
        f"{{{cpus}}}, so at most two run at once and the render chain's misses wait less in the DRAM queue and "
        "never share a CPU with them; SMP's vanilla CFS spreads them over all four CPUs. The control run tests "
        f"that: SMP with only the workers confined to the same CPUs (seeds 1-{SEEDS}, s):",
        "",
        "| | " + " | ".join(titles[m] for m in METRICS) + " | workers on the unslowed CPUs |",
        "|---|" + "---:|" * (len(METRICS) + 1),
    ]
    for name, r in [*rows.items(), (control, ctl)]:
        cells = [f"{r[m][0]:.3f} ± {r[m][1]:.3f}" for m in METRICS]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {100 * r['bg-workers_big_share'][0]:.0f}% |")
    gaps = [
        f"{p}: {spread.rows[(p, smp)]['render6_s'][0] - spread.rows[(p, opt)]['render6_s'][0]:+.3f} s"
        for p in spread.point_names
        if (p, smp) in spread.rows and (p, opt) in spread.rows
    ]
    lines += [
        "",
        f"Render #6 under {smp} minus under {opt} at each sensitivity point (below): " + "; ".join(gaps) + ". "
        "The gap stays whatever the workload's spread; the Upper bound claim's verdict changes with the spread only "
        "because its band counts a gap within the two standard deviations as a tie.",
    ]
    return lines
