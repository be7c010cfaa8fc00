"""rcu-amp's preparation: the warm-up temperatures, and the sensitivity of every energy benefit to
each input that has no measurement (the ASSUMPTIONs of tc2.toml's [kernel] section and of the
seed-002 workloads, and CONFIG_HZ). Each point reruns every benchmark under every configuration
with one input varied in the files' text (the others as stated); a run whose platform and
workload text are the same as the stated point's is that run (determinism), so it is not redone.
Imported by rcu_amp only."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hetlab import _core, api
from hetlab._files import write_output
from hetlab.experiment import Prepared
from hetlab.runs import simulate_within

if TYPE_CHECKING:
    from hetlab.experiment import Config, Context


@dataclass(frozen=True)
class Point:
    """One sensitivity point: the assumption, its value as shown, and the edits of the platform
    and workload texts that give it."""

    assumption: str
    value: str
    platform: Callable[[str], str] = lambda text: text
    workload: Callable[[str, str], str] = lambda name, text: text  # (benchmark name, text)


def _scale_key(text: str, key: str, factor: float, section: str | None = None) -> str:
    """Every `key = number` (in the lines after `[section]`/`[[section]]` headers named
    `section` until the next header, if given) times `factor`."""
    lines, current = text.splitlines(keepends=True), None
    out = []
    for line in lines:
        header = re.match(r"^\s*\[+([^\]]+)\]+", line)
        if header:
            current = header[1].strip()
        m = re.match(rf"^(\s*{re.escape(key)}\s*=\s*)([0-9.eE+-]+)(.*)$", line, flags=re.S)
        if m and (section is None or current == section):
            scaled = float(m[2]) * factor
            # an integer field stays an integer (the platform's latencies are whole µs)
            number = str(round(scaled)) if re.fullmatch(r"[0-9]+", m[2]) else repr(scaled)
            line = f"{m[1]}{number}{m[3]}"
        out.append(line)
    return "".join(out)


def _scale_keys(text: str, keys: tuple[str, ...], factor: float, section: str) -> str:
    """`_scale_key` for each of `keys` in `section`."""
    for key in keys:
        text = _scale_key(text, key, factor, section)
    return text


def _scale_device(text: str, device: str, factor: float) -> str:
    """The `handler_us` of the `[[kernel.devices]]` table named `device`, times `factor`."""
    within = r"(?:(?!\[\[)[\s\S])*?"  # inside the same table
    pattern = rf'(\[\[kernel\.devices\]\]{within}name = "{re.escape(device)}"{within}handler_us = )([0-9.eE+-]+)'
    return re.sub(pattern, lambda m: f"{m[1]}{float(m[2]) * factor!r}", text, count=1)


# The Android userspace the seed's board ran beside each benchmark (system services, the
# harness's adb shell) queues callbacks at a rate nobody published: a background thread that
# wakes every 100 ms for 100 µs of reference work and queues `rate` callbacks per second of
# wall time on the CPU it runs on (its rcu_callback_us: the stated benchmarks' 0.5 µs).
BACKGROUND = """
[[tasks]]
name = "android-background"
repeat = {repeat}
[[tasks.phases]]
run_us = 100.0
call_rcu_per_s = {per_s}
rcu_callback_us = 0.5
[[tasks.phases]]
sleep_us = 100000
"""


def _with_background(rate: float, seconds: float = 1200.0):
    def edit(name: str, text: str) -> str:
        # the benchmark's own tasks end the run (the background is stopped with them): where
        # none says so already, every one of its tasks does
        if not re.search(r"^ends_run = true", text, flags=re.M):
            text = re.sub(r'(\[\[tasks\]\]\s*\nname = "[^"]*"\n)', r"\1ends_run = true\n", text)
        per_s = rate * 1e5 / 100.0  # `rate` per wall second: 100 µs of work per 100 ms
        return text + BACKGROUND.format(repeat=int(seconds * 10), per_s=per_s)

    return edit


# SurfaceFlinger's frame: 1.2e7 instructions at CPI 1.2 (bbench-android.toml), 0.012 s of the
# reference core (an A15 at 1.2 GHz); `n` fence files per frame are n / 0.012 per reference second.
FRAME_REFERENCE_S = 1.2e7 * 1.2 / 1.2e9


def _with_fence_files(per_frame: float):
    """SurfaceFlinger's composition phases queue `per_frame` file_free_rcu callbacks per frame
    (each 0.5 µs, the page loads' file_free_rcu): the display pipeline of [LAZY]
    (audio-bbench.toml). A workload without SurfaceFlinger is left as it is."""

    def edit(name: str, text: str) -> str:
        m = re.search(r'^\[\[tasks\]\]\s*\nname = "SurfaceFlinger"', text, flags=re.M)
        if not m:
            return text
        end = text.find("\n[[tasks]]", m.end())
        end = len(text) if end < 0 else end
        rate = per_frame / FRAME_REFERENCE_S
        block = re.sub(
            r"^(instructions = [^\n]*\n)",
            lambda i: f"{i[1]}call_rcu_per_s = {rate!r}\nrcu_callback_us = 0.5\n",
            text[m.start() : end],
            flags=re.M,
        )
        return text[: m.start()] + block + text[end:]

    return edit


def points() -> list[Point]:
    """The sensitivity points, stated value first (the baseline the others compare with)."""
    pts = [Point("stated", "as stated")]
    for f in (0.5, 2.0):
        pts += [
            Point(
                "interrupt paths (irq_entry_us, timer_irq_us, ipi_us)",
                f"x{f:g}",
                lambda t, f=f: _scale_keys(t, ("irq_entry_us", "timer_irq_us", "ipi_us"), f, "kernel"),
            ),
            Point("AACI handler (handler_us 20)", f"x{f:g}", lambda t, f=f: _scale_device(t, "aaci", f)),
            Point("SP804 broadcast handler (handler_us 5)", f"x{f:g}", lambda t, f=f: _scale_device(t, "sp804", f)),
            Point(
                "grace-period kthread passes (rcu_gp_*_us)",
                f"x{f:g}",
                lambda t, f=f: _scale_keys(t, ("rcu_gp_init_us", "rcu_gp_fqs_us", "rcu_gp_cleanup_us"), f, "kernel"),
            ),
            Point(
                "kworker pass and vmstat work",
                f"x{f:g}",
                lambda t, f=f: _scale_key(_scale_key(t, "kworker_pass_us", f, "kernel"), "work_us", f, "kernel.timers"),
            ),
        ]
    # A cluster power-up is charged its exit latency at busy power on top of [EAS]'s wake-up
    # energy (39 µJ on the A15s, what 26 µs at their shared logic's busy power costs): x0.1
    # leaves about [EAS]'s figure alone, the low end of what the power-up may cost.
    for f in (0.1, 0.5):
        pts.append(
            Point(
                "cluster power-up cost (exit latency charged at busy power)",
                f"x{f:g}",
                lambda t, f=f: _scale_key(t, "cluster_off_exit_latency_us", f),
            )
        )
    for f in (0.25, 4.0):
        pts.append(
            Point(
                "call_rcu rates (call_rcu_per_s)",
                f"x{f:g}",
                workload=lambda n, t, f=f: _scale_key(t, "call_rcu_per_s", f),
            )
        )
        pts.append(
            Point(
                "callback cost (rcu_callback_us)",
                f"x{f:g}",
                workload=lambda n, t, f=f: _scale_key(t, "rcu_callback_us", f),
            )
        )
    for rate in (100.0, 1000.0):
        pts.append(Point("Android background callbacks (per s)", f"{rate:g}", workload=_with_background(rate)))
    for per_frame in (3.0, 6.0):
        pts.append(
            Point(
                "display pipeline's fence files (per composed frame)",
                f"{per_frame:g}",
                workload=_with_fence_files(per_frame),
            )
        )
    for hz in (250,):
        pts.append(
            Point(
                "CONFIG_HZ (100)", str(hz), lambda t, hz=hz: re.sub(r"^hz = \d+", f"hz = {hz}", t, count=1, flags=re.M)
            )
        )
    return pts


@dataclass
class Sweep(Prepared):
    """What prepare made: per benchmark each cluster's warmed-up start temperature, °C; and per
    sensitivity point (assumption, value) -> config -> benchmark -> (energy J, time s)."""

    start_temps: dict[str, list[float]] = field(default_factory=dict)
    points: dict[tuple[str, str], dict[str, dict[str, tuple[float, float]]]] = field(default_factory=dict)
    seed: int = 1


def warm_up(ctx: Context, sweep: Sweep, reference: Config, benchmarks: tuple[str, ...]) -> None:
    """The seed ran the board ten minutes before measuring, to a steady temperature. Per
    benchmark: one reference run gives each cluster's mean power P; its thermal node's steady
    state is ambient + R x P (tc2.toml's R; ten minutes are over a hundred of its time constants),
    where every configuration's runs of that benchmark then start."""
    import tomllib

    board = tomllib.loads(api.load_platform(ctx.platform).text)
    ambient = float(board["thermal"]["ambient_c"])
    resistance = [float(c["thermal_resistance_c_per_w"]) for c in board["clusters"]]
    for bench in benchmarks:
        what = f"the warm-up's {bench} run under {reference.name}"
        r = simulate_within(ctx.time_limit_s, what, ctx.platform, bench, seed=sweep.seed, **reference.options)
        t = max(r.time_s, 1e-9)
        power_w = [j / t for j in r.summary["energy"]["clusters_j"]]
        sweep.start_temps[bench] = [round(ambient + k * w, 3) for k, w in zip(resistance, power_w)]


def sensitivity(ctx: Context, sweep: Sweep, configs: tuple[Config, ...], benchmarks: tuple[str, ...]) -> None:
    """Every point's runs (one seed, `sweep.seed`), in parallel; identical inputs run once."""
    import hashlib
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    base_platform = api.load_platform(ctx.platform).text
    jobs, keys = {}, {}
    with tempfile.TemporaryDirectory(prefix="hetlab-rcu-amp-") as tmp:
        for pt in points():
            ptext = pt.platform(base_platform)
            for name in benchmarks:
                wtext = pt.workload(name, _core.builtin_workload_text(name))
                digest = hashlib.sha256((ptext + "\0" + wtext).encode()).hexdigest()[:16]
                if digest not in jobs:
                    p, w = Path(tmp) / f"p-{digest}.toml", Path(tmp) / f"w-{digest}.toml"
                    p.write_text(ptext)
                    w.write_text(wtext)
                    jobs[digest] = (str(p), str(w), name)
                keys[(pt.assumption, pt.value, name)] = digest
        by_name = {c.name: c for c in configs}
        todo = [(d, c.name) for d in jobs for c in configs]

        def one(job):
            digest, config = job[0], by_name[job[1]]
            platform, workload, name = jobs[digest]
            what = f"the sensitivity sweep's {name} run under {config.name}"
            r = simulate_within(
                ctx.time_limit_s,
                what,
                platform,
                workload,
                seed=sweep.seed,
                start_temp_c=sweep.start_temps[name],
                **config.options,
            )
            return sum(r.summary["energy"]["clusters_j"]), r.time_s

        with ThreadPoolExecutor(max_workers=ctx.jobs or None) as pool:
            results = dict(zip(todo, pool.map(one, todo)))
    for (assumption, value, name), digest in keys.items():
        for c in configs:
            sweep.points.setdefault((assumption, value), {}).setdefault(c.name, {})[name] = results[(digest, c.name)]


def prepare(ctx: Context, out: Path, configs: tuple[Config, ...], benchmarks: tuple[str, ...]) -> Sweep:
    """The warm-up, then the sensitivity sweep; sensitivity.csv in `out`."""
    reference = configs[0]
    sweep = Sweep()
    t0 = time.perf_counter()
    warm_up(ctx, sweep, reference, benchmarks)
    sweep.timings_s["warm-up"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sensitivity(ctx, sweep, configs, benchmarks)
    sweep.timings_s["sensitivity"] = time.perf_counter() - t0
    lines = ["assumption,value,benchmark,config,energy_j,time_s,energy_benefit_pct"]
    for (assumption, value), by_config in sweep.points.items():
        ref = by_config[reference.name]
        for c in configs:
            for name, (e, t) in by_config[c.name].items():
                benefit = 100.0 * (ref[name][0] - e) / ref[name][0]
                lines.append(f'"{assumption}",{value},{name},{c.name},{e:.6f},{t:.6f},{benefit:.3f}')
    write_output(out / "sensitivity.csv", "\n".join(lines) + "\n")
    return sweep


def section(sweep: Prepared, methods: tuple[str, ...], benchmarks: list[str]) -> list[str]:
    """report.md's sensitivity tables: per configuration, each benchmark's energy benefit at every
    point (the stated point first)."""
    if not isinstance(sweep, Sweep) or not sweep.points:
        return []
    reference = next(iter(next(iter(sweep.points.values()))))
    lines = [
        "## Sensitivity: the benefits at each unmeasured input",
        "",
        f"Each row reruns every benchmark (seed {sweep.seed}) with one input varied in tc2.toml or the workload "
        "files, the others as stated; cells: the energy benefit against the reference configuration at that point. "
        "Every value is in sensitivity.csv (with energy and time). 'Android background' adds a thread queuing that "
        "many callbacks per second on its CPU (the seed's Android userspace queued some at a rate nobody "
        "published; the benchmarks' own are derived in their files).",
    ]
    for c in methods:
        lines += [
            "",
            f"**{c}**",
            "",
            "| assumption | value | " + " | ".join(benchmarks) + " |",
            "|---|---|" + "---:|" * len(benchmarks),
        ]
        for (assumption, value), by_config in sweep.points.items():
            ref, mine = by_config[reference], by_config[c]
            cells = [f"{100.0 * (ref[b][0] - mine[b][0]) / ref[b][0]:+.1f} %" for b in benchmarks if b in mine]
            lines.append(f"| {assumption} | {value} | " + " | ".join(cells) + " |")
    return lines


# A benefit at a sensitivity point (one seed) counts as a gain when it is larger than the
# reference's spread over the seeds at the stated point (its (max - min) / mean, from the
# reproduction's runs: the seed's 'ranges apart' with the stated runs' spread standing for the
# point's), and at least 0.1 % (printed benefits round to it).
MIN_GAIN_PCT = 0.1


def _gain_counts(benefit: float, band_pct: float) -> bool:
    return benefit > max(band_pct, MIN_GAIN_PCT)


def _point_verdicts(by_config: dict, reference: str, bands: dict[str, float]) -> list[str]:
    """The seed's two claims and its §7 hypothesis at one point, judged with `bands` (per benchmark,
    the stated reference's spread over the seeds, %)."""
    ref = by_config[reference]

    def benefit(config: str, b: str) -> float:
        return 100.0 * (ref[b][0] - by_config[config][b][0]) / ref[b][0]

    def counted(config: str) -> list[str]:
        return [b for b in ref if config in by_config and _gain_counts(benefit(config, b), bands.get(b, 0.0))]

    def verdict(parts: list[bool]) -> str:
        return "yes" if all(parts) else "partly" if any(parts) else "no"

    nocb, fast = counted("nocb"), counted("fast-no-hz")
    substantial = verdict([len(nocb) >= 2, len(fast) >= 2])
    double = [b for b in fast if benefit("fast-no-hz", b) >= 10.0]
    margin = {b: benefit("fast-no-hz", b) - benefit("nocb", b) for b in ref}
    ahead = [b for b, d in margin.items() if _gain_counts(d, bands.get(b, 0.0))]
    behind = [b for b, d in margin.items() if _gain_counts(-d, bands.get(b, 0.0))]
    more = verdict([bool(ahead) and not behind, bool(double)])
    if "offload" not in by_config:
        return [substantial, more, "not run"]
    diff = {b: benefit("offload", b) - benefit("nocb", b) for b in ref}
    better = [b for b, d in diff.items() if _gain_counts(d, bands.get(b, 0.0))]
    worse = [b for b, d in diff.items() if _gain_counts(-d, bands.get(b, 0.0))]
    hypothesis = "yes" if len(better) >= 2 and not worse else "partly" if better else "no"
    return [
        f"{substantial} (nocb {len(nocb)}, fast-no-hz {len(fast)})",
        f"{more} (ahead: {', '.join(ahead) or 'none'}; behind: {', '.join(behind) or 'none'}; double-digit: "
        f"{', '.join(double) or 'none'})",
        f"{hypothesis} (better: {', '.join(better) or 'none'}; worse: {', '.join(worse) or 'none'})",
    ]


def claims_section(sweep: Prepared, bands: dict[str, float]) -> list[str]:
    """report.md's table of the claims at every sensitivity point."""
    if not isinstance(sweep, Sweep) or not sweep.points:
        return []
    reference = next(iter(next(iter(sweep.points.values()))))
    lines = [
        "### The claims at each point",
        "",
        "The seed's claims judged at every sensitivity point from its one-seed runs: a benefit counts as a gain when "
        "it exceeds the reference's spread over the seeds in the stated runs (per benchmark: "
        + ", ".join(f"{b} {v:.1f} %" for b, v in bands.items())
        + f"; at least {MIN_GAIN_PCT:g} %). 'Substantial': two counted gains per method; 'enforced idle more': "
        "fast-no-hz ahead of nocb by a counted margin on some benchmark and behind on none, and a counted "
        "double-digit gain; §7: offload ahead of nocb by a "
        "counted margin on two benchmarks, behind on none.",
        "",
        "| assumption | value | both methods substantial | enforced idle more, double-digit | §7 offload beyond nocb |",
        "|---|---|---|---|---|",
    ]
    for (assumption, value), by_config in sweep.points.items():
        lines.append(f"| {assumption} | {value} | " + " | ".join(_point_verdicts(by_config, reference, bands)) + " |")
    return lines
