"""The Python API. It mirrors the CLI: `simulate(...)` takes the same options as
`hetlab simulate` and returns a `SimResult`."""

from __future__ import annotations

import inspect
import json
import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hetlab import _core
from hetlab._checked import checked
from hetlab._errors import HetlabError
from hetlab._files import note_input

DEFAULT_PLATFORM: str = _core.DEFAULT_PLATFORM
TRACE_FORMATS: tuple[str, ...] = tuple(_core.TRACE_FORMATS)  # `simulate(trace_format=)`
DEFAULT_TRACE_FORMAT = "ftrace"
DEFAULT_SEED = 1
MAX_SEED = (1 << 64) - 1  # seeds are u64 in the engine
MAX_REPS = 100_000  # repetitions of one run (each keeps its summary in memory)
MAX_WORKERS = 1024  # threads of one simulate_reps (far above any machine's cores)
MAX_KHZ = (1 << 32) - 1  # frequencies are u32 kHz, as in cpufreq


def _read(path: str, what: str) -> str:
    """An input file's text, read in Rust as every input is (a regular file, bounded, UTF-8:
    a FIFO or /dev/zero given as a file is refused, never waited on or read into memory)."""
    try:
        text = _core.read_input(str(path))
    except ValueError as e:
        raise HetlabError(f"cannot read {what} file '{path}': {e}; give a TOML/JSON {what} file") from None
    note_input(path)
    return text


def _spec(value: str | os.PathLike, what: str) -> tuple[str, bool]:
    """(the text of a name, spec or path, whether it names a file): a path object always does."""
    if isinstance(value, os.PathLike):
        return os.fspath(value), True
    if not isinstance(value, str):
        raise HetlabError(f"{what} must be a name, a spec or a path to a file, got {value!r}")
    return value, value.endswith((".toml", ".json")) or os.sep in value


def load_platform(platform: str | os.PathLike | _core.Platform) -> _core.Platform:
    """The platform parsed once, as the handle (`hetlab._core.Platform`) every binding function
    takes: from a built-in name or a path to a platform TOML; a handle is returned as it is. A
    platform that does not load is a HetlabError saying why."""
    if isinstance(platform, _core.Platform):
        return platform
    text, is_file = _spec(platform, "platform")
    file_text = _read(text, "platform") if is_file else None
    try:
        return _core.Platform(None, text, file_text) if is_file else _core.Platform(text)
    except ValueError as e:
        raise HetlabError(str(e)) from None


def _workload_args(workload: str | os.PathLike) -> tuple[str, str, str | None]:
    text, is_file = _spec(workload, "workload")
    return (text, text, _read(text, "workload")) if is_file else (text, "", None)


# the anti-snoop governor's built-in model: the seed paper's Figure 4 trees
BUILTIN_MODEL = "lctes2020-fig4"


def _model_json(model: str | os.PathLike | None) -> str | None:
    if model is None or model == BUILTIN_MODEL:
        return None
    return _read(_spec(model, "model")[0], "model")


# --- simulate's keyword options, checked and converted for the engine -----------------------


def _integer(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise HetlabError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise HetlabError(f"{name} must be in {lo}..{hi}, got {value}")
    return int(value)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise HetlabError(f"{name} must be a number, got {value!r}")
    return float(value)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise HetlabError(f"{name} must be a string, got {value!r}")
    return value


def _items(name: str, value: Any, example: str) -> list:
    """A list or tuple of items; a string is refused, not taken as its characters."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise HetlabError(f"{name} must be a list, e.g. {example}, got {value!r}")
    return list(value)


def _pairs(name: str, value: Any, convert: Callable[[str, Any], Any], example: str) -> list[tuple[str, Any]]:
    """A dict of name -> value as (name, converted value) pairs; None is no pairs."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise HetlabError(f"{name} must be a dict of name -> value, e.g. {example}, got {value!r}")
    return [(_text(f"a key of {name}", k), convert(f"{name}['{k}']", v)) for k, v in value.items()]


def _khz(name: str, value: Any) -> int:
    return _integer(f"{name} (kHz)", value, 1, MAX_KHZ)


def _engine_options(
    *,
    cluster,
    governor,
    freq,
    tunables,
    offline,
    scheduler,
    sched_tunables,
    switching,
    cpuidle,
    cpu_dma_latency_us,
    dsu_khz,
    resolve_tolerance,
    model,
    perf_cpus,
    perf_period,
    kernel,
    start_temp_c,
    seed,
    trace,
    trace_format,
    intervals,
    series,
    time_limit_s,
    on_progress,
    rtapp_logs,
) -> dict[str, Any]:
    """`simulate`'s keyword options, each checked for its type and range, as `_core.simulate`
    takes them; a wrong one is a HetlabError naming it (the engine checks what it owns: names
    of schedulers, governors and clusters, tunables' ranges, the time limit's)."""
    if cpu_dma_latency_us is not None:
        cpu_dma_latency_us = _integer("cpu_dma_latency_us", cpu_dma_latency_us, 0, _core.MAX_CPU_DMA_LATENCY_US)
    for name, flag in (("trace", trace), ("intervals", intervals), ("series", series), ("rtapp_logs", rtapp_logs)):
        if not isinstance(flag, bool):
            raise HetlabError(f"{name} must be True or False, got {flag!r}")
    if not trace and trace_format != DEFAULT_TRACE_FORMAT:
        raise HetlabError(f"trace_format={trace_format!r} lays out a trace; give trace=True too")
    if on_progress is not None and not callable(on_progress):
        raise HetlabError(f"on_progress must be a function of the simulated time, got {on_progress!r}")
    return dict(
        seed=_integer("seed", seed, 0, MAX_SEED),
        scheduler=_text("scheduler", scheduler),
        sched_tunables=_pairs("sched_tunables", sched_tunables, _number, "{'up_threshold': 512}"),
        switching=_text("switching", switching),
        governor=_text("governor", governor),
        tunables=_pairs("tunables", tunables, _number, "{'up_threshold': 80}"),
        cluster=None if cluster is None else _text("cluster", cluster),
        freq=_pairs("freq", freq, _khz, "{'big': 200000}"),
        offline=[_text("an item of offline", c) for c in _items("offline", offline, "['big']")],
        model=_model_json(model),
        cpuidle=_text("cpuidle", cpuidle),
        cpu_dma_latency_us=cpu_dma_latency_us,
        # the engine checks it against the platform's DSU OPPs
        dsu_khz=None if dsu_khz is None else _khz("dsu_khz", dsu_khz),
        # the engine checks its range
        resolve_tolerance=_number("resolve_tolerance", resolve_tolerance),
        # any CPU number converts; the engine names the ones the platform lacks
        perf_cpus=[_integer("an item of perf_cpus", c, 0, MAX_SEED) for c in _items("perf_cpus", perf_cpus, "[0, 1]")],
        perf_period=_integer("perf_period (instructions per sample)", perf_period, 1, MAX_SEED),
        kernel=_text("kernel", kernel),
        start_temp_c=[_number("an item of start_temp_c", t) for t in _items("start_temp_c", start_temp_c, "[45.0]")],
        trace=_text("trace_format", trace_format) if trace else None,
        intervals=intervals,
        series=series,
        time_limit_s=_number("time_limit_s", time_limit_s),
        progress=on_progress,
        rtapp_logs=rtapp_logs,
    )


def check_options(options: Mapping[str, Any]) -> None:
    """Raises HetlabError for the first of `simulate`'s keyword options (over its defaults)
    that has a wrong type or range, as `simulate` would (`hetlab.sweep` checks its configs
    before any run starts)."""
    defaults = {n: p.default for n, p in inspect.signature(simulate).parameters.items() if p.kind is p.KEYWORD_ONLY}
    _engine_options(**{**defaults, **options})


def metric_columns(clusters: Sequence[str]) -> list[str]:
    """The columns of `SimResult.metrics()`, in order, for a platform with these clusters: a
    table of runs (hetlab.sweep's Parquet) can lay out its schema before any run ends."""
    return [
        "completed",
        "time_s",
        "energy_j",
        "edp_js",
        "energy_total_j",
        *(f"energy_{c}_j" for c in clusters),
        "energy_dram_j",
        "energy_board_j",
        *(f"avg_freq_{c}_khz" for c in clusters),
        "instructions",
        "l2_mpki",
        "governor_samples",
        "governor_overhead_s",
    ]


@dataclass
class SimResult:
    """One simulated run: `summary` is the JSON summary as a dict; `series` the per-sample
    time series as numpy columns (one row per governor sample of a cluster), when the run was
    asked to keep it (`series=True`; else None); `trace_text` the
    ftrace text when a trace was asked for, and `plat_info_text` the platform as the YAML map
    LISA's `PlatformInfo.from_yaml_map` reads (capacities, frequency domains, frequencies), to
    store beside it (`<trace>.plat_info.yml`). `intervals` (when asked for): where each thread
    ran, one row per stretch it was the running task of a CPU, as numpy columns `tid`, `cpu`,
    `start_s`, `end_s` (`intervals_df()` adds the thread's name). `platform`: the handle of the
    platform it ran on (`load_platform`), e.g. for its `line_bytes`."""

    summary: dict[str, Any] = field(repr=False)
    series: dict[str, Any] | None = field(repr=False)
    trace_text: str | bytes | None = field(default=None, repr=False)  # bytes for trace_format="perfetto"
    summary_json: str = field(default="", repr=False)
    plat_info_text: str | None = field(default=None, repr=False)
    intervals: dict[str, Any] | None = field(default=None, repr=False)
    platform: _core.Platform | None = field(default=None, repr=False)  # the platform it ran on
    # rt-app's per-thread logs (`rtapp_logs=True`): thread name -> the log file's text
    rtapp_logs: dict[str, str] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"SimResult(platform={s.get('platform')!r}, workload={s.get('workload')!r}, seed={s.get('seed')}, "
            f"completed={s.get('completed')}, time_s={self.time_s:.6g}, energy_j={self.energy_j:.6g})"
        )

    @property
    def time_s(self) -> float:
        return self.summary["time_s"]

    @property
    def energy_j(self) -> float:
        return self.summary["energy"]["total_j"]

    def metrics(self) -> dict[str, Any]:
        """The run's headline numbers as one flat row (the columns of `hetlab reproduce`'s
        runs.csv and of `hetlab.sweep`): whether it completed, time, energy (the seed paper's
        sensors: CPU clusters and DRAM; the whole board beside it), per-cluster energy and mean
        frequency, instructions, L2 misses per kilo-instruction, the governor's samples and cost."""
        s = self.summary
        # The seed paper's energy: the on-board sensors (CPU clusters and DRAM rails) read every
        # 263,808 µs (LCTES'20 §5.2); the whole board's energy is kept beside it.
        sensors_j = s["energy"]["sensor_readings_j"]
        inst = sum(t["pmu"]["inst_retired"] for t in s["threads"])
        refills = sum(t["pmu"]["l2d_cache_refill"] for t in s["threads"])
        values = {
            "completed": bool(s["completed"]),
            "time_s": self.time_s,
            "energy_j": sensors_j,
            "edp_js": self.time_s * sensors_j,
            "energy_total_j": self.energy_j,
            **{f"energy_{c['name']}_j": j for c, j in zip(s["clusters"], s["energy"]["clusters_j"])},
            "energy_dram_j": s["energy"]["dram_j"],
            "energy_board_j": s["energy"]["board_j"],
            **{f"avg_freq_{c['name']}_khz": c["avg_freq_khz"] for c in s["clusters"]},
            "instructions": inst,
            "l2_mpki": 1000.0 * refills / inst if inst else 0.0,
            "governor_samples": s.get("governor_samples", 0),
            "governor_overhead_s": s.get("governor_overhead_s", 0.0),
        }
        return {name: values[name] for name in metric_columns([c["name"] for c in s["clusters"]])}

    @property
    def marks(self) -> list[dict[str, Any]]:
        """Each time a thread entered a phase with a `mark`: time_s, tid, name (time order)."""
        return self.summary["marks"]

    @checked
    def cluster(self, name: str) -> dict[str, Any]:
        for c in self.summary["clusters"]:
            if c["name"] == name:
                return c
        names = ", ".join(c["name"] for c in self.summary["clusters"])
        raise HetlabError(f"SimResult.cluster(): no cluster '{name}' in this run; give one of {names}")

    def series_df(self):
        """The time series as a pandas DataFrame (one row per governor sample; a run made with
        `series=True`)."""
        import pandas as pd

        if self.series is None:
            raise HetlabError("this run kept no time series; simulate it with series=True")
        return pd.DataFrame(self.series)

    def residency_df(self):
        """Frequency residency as a DataFrame: cluster, freq_khz, seconds."""
        import pandas as pd

        rows = [
            {"cluster": c["name"], "freq_khz": khz, "seconds": s}
            for c in self.summary["clusters"]
            for khz, s in c["residency"]
        ]
        return pd.DataFrame(rows)

    def intervals_df(self):
        """The run intervals as a DataFrame: tid, thread, cpu, start_s, end_s (a run made with
        `intervals=True`). A thread's time there includes what was stolen from it while it held
        the CPU: interrupts such as perf's samples, OS jitter, cache refills after a migration."""
        import pandas as pd

        if self.intervals is None:
            raise HetlabError("this run recorded no intervals; simulate it with intervals=True")
        df = pd.DataFrame(self.intervals)
        names = {t["tid"]: t["name"] for t in self.summary["threads"]}
        df.insert(1, "thread", df.tid.map(names))
        return df

    def to_json(self) -> str:
        return self.summary_json


@checked(types=False)
def simulate(
    platform: str | os.PathLike | _core.Platform = DEFAULT_PLATFORM,
    workload: str = "ccbench:size=1048576,pattern=random",
    *,
    cluster: str | None = None,
    governor: str = "ondemand",
    freq: Mapping[str, int] | None = None,
    tunables: Mapping[str, float] | None = None,
    offline: Sequence[str] = (),
    scheduler: str = "pinned",
    sched_tunables: Mapping[str, float] | None = None,
    switching: str = "gts",
    cpuidle: str = "wfi",
    cpu_dma_latency_us: int | None = None,
    dsu_khz: int | None = None,
    resolve_tolerance: float = 0.0,
    model: str | None = None,
    perf_cpus: Sequence[int] = (),
    perf_period: int = 10_000,
    kernel: str = "",
    start_temp_c: Sequence[float] = (),
    seed: int = DEFAULT_SEED,
    trace: bool = False,
    trace_format: str = DEFAULT_TRACE_FORMAT,
    intervals: bool = False,
    series: bool = False,
    time_limit_s: float = 3600.0,
    on_progress: Callable[[float], None] | None = None,
    rtapp_logs: bool = False,
) -> SimResult:
    """Simulate `workload` on `platform`.

    platform: a built-in name (`exynos5422`), a path to a platform TOML, or a platform parsed
        once with `load_platform` (for many runs).
    workload: a generator spec (`ccbench:size=1048576,pattern=random`), a built-in name or a
        path to a workload TOML.
    cluster: restrict every task to this cluster (`little`/`big`), like taskset.
    governor: a governor name, or `all-max` / `idle-min` (the seed paper's baselines).
    freq: fix clusters' frequencies in kHz, e.g. {"big": 200000} (userspace governor).
    tunables: governor tunables with their sysfs names, e.g. {"up_threshold": 80}.
    offline: clusters whose CPUs are hotplugged off (cluster powered down, not snooped).
    scheduler: task placement, `pinned`, `smp`, `hmp` or `eas` (list: `schedulers()`).
    sched_tunables: the placement's knobs with their sysfs names, e.g. {"up_threshold": 512}
        for `hmp` (/sys/kernel/hmp/); defaults are the platform's, else the policy's.
    switching: which cores the OS's CPUs run on (list: `switching_modes()`): `gts` (every core;
        the default), `iks` (the in-kernel switcher: one CPU per big/LITTLE pair, switched by
        the frequency its governor asks on the virtual OPP table) or `cluster-switching` (one
        cluster online, switched whole the same way).
    cpuidle: `wfi` (default; idle clusters stay powered and snooped, as on the seed paper's
        board) or `cluster-off` (cpuidle may power idle cores and clusters down, the platform's
        power-down states, when the menu governor expects the idle to outlast their residency).
    cpu_dma_latency_us: the PM QoS latency limit, µs, as a process holding /dev/cpu_dma_latency
        asks it: cpuidle enters no state whose exit latency is longer (0: WFI only). None
        (default): no request, no limit.
    dsu_khz: hold a DynamIQ platform's DSU clock (shared L3, snoop filter) at this kHz, one of its
        `[dsu] opps` (DSU DVFS off). None (default): the platform's `[dsu]` governor sets it.
    resolve_tolerance: trades exactness for fewer re-solutions of the model: a cluster whose own
        threads, clock and power state are unchanged keeps its threads' speeds and its CCI port's
        rates until its L2 miss latency (moved by the DRAM utilisation) or the bandwidth stretch
        has moved by more than this relative amount since they were solved; every speed, port
        read rate, DRAM line rate and cluster power then stays within t*(2+t) of the exact
        solution at the same instant (docs/performance.md). 0 (default): exact, bit for bit.
    model: anti-snoop model: `lctes2020-fig4` (default) or a path to a trained model.json.
    perf_cpus: CPUs that `perf record -a -e instructions -C <cpus> -c <perf_period>` samples
        beside the workload (seed 003's big.LITTLE emulation; empty: off); each counter
        overflow costs the CPU the platform's `perf_sample` cost.
    perf_period: instructions per sample (`perf record -c`).
    kernel: RCU's boot options as the kernel names them, comma-separated: `rcu_nocbs=CPUS`
        (offload those CPUs' callbacks to rcuo kthreads, placed on the LITTLE CPUs unless
        `rcuo_affinity=CPUS`), `rcu_fast_no_hz` (RCU_FAST_NO_HZ); "" (default): neither.
        They matter for workloads whose phases queue RCU callbacks (`call_rcu_per_s`).
    start_temp_c: each cluster's temperature at the start, °C, in platform order (empty: ambient),
        for a board warmed up before the run.
    seed: the same seed gives byte-identical results.
    trace: record the ftrace text (`SimResult.trace_text`) and LISA's platform info.
    trace_format: the text's layout (`TRACE_FORMATS`): `ftrace` (default), the kernel's trace
        file, which Perfetto UI and LISA's `HRTxtTraceParser` open; `trace-cmd`, what `trace-cmd
        report -R` prints, for LISA's `TxtTraceParser` (its rt-app analysis reads the markers as
        `print` events directly); `perfetto`, Perfetto's native protobuf trace (`trace_text` is
        then bytes), with named threads and counter tracks that carry their units.
    intervals: record where each thread ran (`SimResult.intervals`, from the sched_switch events).
    series: keep the per-sample time series (`SimResult.series`, `series_df()`); off by default,
        so that a long run's memory stays constant.
    time_limit_s: stop after this much simulated time.
    on_progress: called with the simulated time reached (s) every 50 ms of wall time while the
        run lasts (an exception it raises stops the run).
    rtapp_logs: keep rt-app's per-thread logs of an rt-app workload (`SimResult.rtapp_logs`:
        thread name -> the text rt-app writes to `<log_basename>-<thread>.log`).

    An unknown keyword (say `cpu_idle=`) is a TypeError; a value of the wrong type or range is a
    HetlabError naming it.
    """
    options = {name: value for name, value in locals().items() if name not in ("platform", "workload")}
    engine_options = _engine_options(**options)
    handle, w_args = load_platform(platform), _workload_args(workload)
    try:
        summary_json, columns, trace_text, plat_info_text, run_intervals, logs = _core.simulate(
            handle, *w_args, **engine_options
        )
    except ValueError as e:
        raise HetlabError(str(e)) from None
    summary = json.loads(summary_json)
    kept = _series(summary, columns) if series else None
    return SimResult(summary, kept, trace_text, summary_json, plat_info_text, run_intervals, handle, dict(logs))


def rtapp_notes(workload: str | os.PathLike) -> tuple[list[str], str | None]:
    """For an rt-app file (`*.json`): what rt-app would read past in it, one warning per line,
    and its logs' file name prefix (`global.log_basename`; None where rt-app writes no logs).
    Any other workload: no warnings, no prefix."""
    spec, origin, text = _workload_args(workload)
    if text is None or not origin.endswith(".json"):
        return [], None
    try:
        warnings, basename = _core.rtapp_file_notes(origin, text)
    except ValueError as e:
        raise HetlabError(str(e)) from None
    return list(warnings), basename


def line_bytes(platform: str | os.PathLike | _core.Platform) -> int:
    """The cache line of the platform's core types, bytes: what a run's counts of lines moved
    (`dram_lines`, a thread's `peer_lines_in`) are in. A platform whose core types' lines differ
    has no one size: a HetlabError."""
    try:
        return load_platform(platform).line_bytes
    except ValueError as e:
        raise HetlabError(str(e)) from None


def plat_info_path(trace_path: str | os.PathLike) -> str:
    """Where a trace's LISA platform info goes: beside it, `<trace>.plat_info.yml` (LISA's own
    `<name>.plat_info.yml` naming). Load both with
    `Trace(trace_path, plat_info=PlatformInfo.from_yaml_map(plat_info_path(trace_path)))`."""
    return f"{os.fspath(trace_path)}.plat_info.yml"


def _series(summary: dict, columns: dict) -> dict:
    """The engine's numpy columns, with the cluster index turned into cluster names."""
    import numpy as np

    names = np.asarray([c["name"] for c in summary["clusters"]], dtype=object)
    series = {"time_s": columns.pop("time_s"), "cluster": names[columns.pop("cluster_index")]}
    series.update(columns)
    return series


def comma_items(text: str, flag: str) -> list[str]:
    """The items of an option's comma-separated list, stripped; an empty one (`,`, `a,,b`, a
    trailing comma) is an error, not skipped: it is a typo, and an empty list would silently
    mean "the default" or "none"."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise HetlabError(f"{flag} '{text}' has an empty item; separate the values by single commas")
    return items


def check_time_limit(seconds: float | None, flag: str = "--time-limit") -> None:
    """A time limit as the engine takes it (`SimConfig::check`), checked before any run starts."""
    if seconds is None:
        return
    if not (isinstance(seconds, numbers.Real) and math.isfinite(seconds) and 0 < seconds <= _core.MAX_TIME_LIMIT_S):
        raise HetlabError(
            f"{flag} {seconds} s is out of range; give a number of simulated seconds in (0, {_core.MAX_TIME_LIMIT_S:g}]"
        )


def check_reps(reps: int, seed: int) -> None:
    """`reps` runs from `seed`: 1..=MAX_REPS of them, every seed a u64."""
    for name, value in (("reps", reps), ("seed", seed)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise HetlabError(f"--{name} must be an integer, got {value!r}")
    if not 1 <= reps <= MAX_REPS:
        raise HetlabError(f"--reps must be in 1..{MAX_REPS}, got {reps}")
    if not 0 <= seed <= MAX_SEED - reps + 1:
        runs = f" for {reps} runs" if reps > 1 else ""
        raise HetlabError(f"--seed must be in 0..{MAX_SEED - reps + 1}{runs}, got {seed}")


@checked(types=False)
def simulate_reps(
    reps: int,
    *,
    seed: int = DEFAULT_SEED,
    workers: int | None = None,
    progress: Callable[[Iterable], Iterable] | None = None,
    **kwargs: Any,
) -> list[SimResult]:
    """`reps` runs with seeds seed, seed+1, ...; runs in parallel threads (the Rust engine
    releases the GIL), one run in the calling thread. `progress` wraps the iterator of finished
    runs (e.g. tqdm)."""
    check_reps(reps, seed)
    if workers is not None:
        _integer("workers", workers, 1, MAX_WORKERS)
    if progress is not None and not callable(progress):
        raise HetlabError(f"progress must be a function wrapping an iterable (e.g. tqdm), got {progress!r}")
    if reps == 1:
        # one run in the calling thread: no pool (concurrent.futures and the logging it loads cost
        # every `hetlab simulate` ~10 ms of start), and Ctrl-C stops it as it stops `simulate`
        done = (simulate(seed=seed, **kwargs) for _ in range(1))
        return list(progress(done) if progress else done)
    from concurrent.futures import ThreadPoolExecutor

    workers = workers or min(reps, os.cpu_count() or 1)
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(simulate, seed=seed + i, **kwargs) for i in range(reps)]
        done = (f.result() for f in futures)
        return list(progress(done) if progress else done)
    finally:
        # an interrupt (Ctrl-C) leaves at once: runs not started are dropped, none is waited for
        pool.shutdown(wait=False, cancel_futures=True)


@checked
def governors() -> list[dict[str, Any]]:
    """Governors with their tunables (sysfs names, defaults, units)."""
    return json.loads(_core.governors())


@checked
def switching_modes() -> list[dict[str, Any]]:
    """The big.LITTLE switching modes: name and summary."""
    return json.loads(_core.switching_modes())


@checked
def schedulers() -> list[dict[str, Any]]:
    """Placement policies with their tunables (sysfs names, defaults)."""
    return json.loads(_core.schedulers())


@checked
def platforms() -> list[dict[str, Any]]:
    """Built-in platforms with their clusters and OPP tables."""
    return [json.loads(_core.Platform(name).summary()) for name in _core.builtin_platforms()]


@checked
def workloads() -> list[str]:
    """Built-in named workloads (generators are listed in `hetlab workloads`)."""
    return list(_core.builtin_workloads())


# --- the real board ----------------------------------------------------------------------------
# The options of chase, govern and the board sweep take their defaults from hetlab-linux (None
# here means "the default"); `hetlab chase --help` and friends quote them.


@dataclass
class ChaseResult:
    """`hetlab chase`: `report` is the JSON document of `hetlabd chase --json` (as a dict),
    `report_json` its text, `text` the table `hetlabd chase` prints."""

    report: dict[str, Any] = field(repr=False)
    report_json: str = field(repr=False)
    text: str

    @property
    def points(self) -> list[dict[str, Any]]:
        return self.report["points"]


@checked
def chase(
    sizes: str | Sequence[int] | None = None,
    *,
    elements: Sequence[int] | None = None,
    patterns: Sequence[str] | None = None,
    cpu: int | None = None,
    min_time_s: float | None = None,
    iterations: int | None = None,
    freq_khz: int | None = None,
    seed: int | None = None,
) -> ChaseResult:
    """The native pointer chase on this machine (ccbench 'caches' semantics): ns per dependent
    load for every (pattern, size).

    sizes: array sizes in bytes, as text (`"16K,64M"`, a doubling range `"4K..64M"`) or counts;
        or `elements`: sizes in 4-byte elements. patterns: `random`, `sequential`, `stride-K`.
    cpu: pin the chase to this CPU. min_time_s: measured time per point. iterations: loads per
    timed chunk. freq_khz: the CPU's frequency, for cycles per access. seed: of the random order.
    """
    try:
        report_json, text = _core.chase(
            sizes=sizes,
            elements=None if elements is None else list(elements),
            patterns=None if patterns is None else list(patterns),
            cpu=cpu,
            min_time_s=min_time_s,
            iterations=iterations,
            freq_khz=freq_khz,
            seed=seed,
        )
    except ValueError as e:
        raise HetlabError(str(e)) from None
    return ChaseResult(json.loads(report_json), report_json, text)


@dataclass
class PingpongResult:
    """`hetlab pingpong --backend linux`: `report` is the JSON document of `hetlabd pingpong
    --json` (cpus, one_way_ns matrix), `text` the table `hetlabd pingpong` prints."""

    report: dict[str, Any]
    report_json: str
    text: str


@checked
def pingpong(cpus: str | None = None, *, round_trips: int | None = None, repeats: int | None = None) -> PingpongResult:
    """The native inter-core latency on this machine: a cache line bounced between two pinned
    threads for every ordered pair of `cpus` (`"0-3,7"`; default: every CPU this process may
    use), ns per one-way transfer, the fastest of `repeats` measurements of `round_trips`."""
    try:
        report_json, text = _core.pingpong(cpus=cpus, round_trips=round_trips, repeats=repeats)
    except ValueError as e:
        raise HetlabError(str(e)) from None
    return PingpongResult(json.loads(report_json), report_json, text)


def line_transfer_ns(platform: str | os.PathLike | _core.Platform = DEFAULT_PLATFORM) -> dict[tuple[str, str], float]:
    """The model's one-way cache-line transfer latency, ns, (from cluster, to cluster) -> ns,
    both clusters at their top OPPs (`model::coherence`): within a cluster through its L2,
    across through the CCI and a snoop of the other cluster."""
    clusters = json.loads(load_platform(platform).summary())["clusters"]
    return {
        (src["name"], dst["name"]): ns for dst in clusters for src, ns in zip(clusters, dst["line_transfer_ns_from"])
    }


@dataclass
class GovernResult:
    """How `govern` ended: why (`SIGTERM`, `SIGINT`, `duration`, ...), governor samples taken,
    frequency writes, and each policy's restored settings (none in a dry run)."""

    stop_reason: str
    samples: int
    writes: int
    restored: list[str]


@checked
def govern(
    governor: str,
    *,
    model: str | None = None,
    tunables: Mapping[str, float] | None = None,
    dry_run: bool = False,
    duration_s: float | None = None,
    verbose: bool = False,
    counters: str | None = None,
    pmu: str | None = None,
    platform: str | os.PathLike | _core.Platform = DEFAULT_PLATFORM,
    cluster_names: Sequence[str] | None = None,
    sysfs_root: str | None = None,
    procfs_root: str | None = None,
    read_all_threads: bool = False,
) -> GovernResult:
    """Runs `governor` (the simulator's code) on every cpufreq policy of this board until
    SIGINT/SIGTERM/SIGHUP/SIGQUIT or `duration_s`: `hetlabd govern`. Each policy's governor, min
    and max are saved first and restored at the end, on a signal and on any error. Needs root
    unless `dry_run`.

    The four signals are blocked in the calling thread and read from a signalfd while it runs:
    call it from the main thread, before other threads start (as `hetlab govern` does), or a
    signal may reach a thread that does not block it.

    model: anti-snoop's trees (a model.json; default the paper's Figure 4). tunables: by sysfs
    name. counters: which PMCs are read (`per-cpu`, `cgroup=DIR`, `pid=P,..`, `tid=T,..`, `off`).
    pmu: `hardware` or `software` stand-ins. cluster_names: name the policies after these
    platform clusters. sysfs_root, procfs_root: a tree laid out like /sys and /proc (hetlabd.lock
    and hetlabd.saved live in `run` beside the sysfs root: /run for /sys or any mount of it).
    read_all_threads: with `pid=`/`tid=` counters, read every thread each sample (default: only
    those that may have run since their last read). Sample lines go to stdout, notes to stderr.
    """
    handle, model_json = load_platform(platform), _model_json(model)
    try:
        stop_reason, samples, writes, restored = _core.govern(
            governor,
            model=model_json,
            tunables=[(k, float(v)) for k, v in (tunables or {}).items()],
            dry_run=bool(dry_run),
            duration_s=duration_s,
            verbose=bool(verbose),
            counters=counters,
            pmu=pmu,
            platform=handle,
            cluster_names=None if cluster_names is None else list(cluster_names),
            sysfs_root=sysfs_root,
            procfs_root=procfs_root,
            read_all_threads=bool(read_all_threads),
        )
    except ValueError as e:
        raise HetlabError(str(e)) from None
    return GovernResult(stop_reason, samples, writes, restored)
