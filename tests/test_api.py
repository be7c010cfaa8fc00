"""The Python API mirrors the CLI and returns result objects that convert to pandas."""

import re

import pytest

import hetlab
import processes
from hetlab.api import HetlabError


def test_result_objects_and_dataframes():
    r = hetlab.simulate(
        workload="ccbench:size=1048576,pattern=random,iterations=300000",
        cluster="little",
        governor="ondemand",
        series=True,
    )
    df = r.series_df()
    assert len(df) == r.summary["governor_samples"]
    assert df.time_s.is_monotonic_increasing
    little = df[df.cluster == "little"]
    assert (little.load_pct > 95).mean() > 0.8  # the chase keeps one LITTLE CPU busy
    # ondemand takes the idle big cluster down to its lowest OPP
    assert df[df.cluster == "big"].freq_khz.iloc[-1] == 200000
    res = r.residency_df()
    assert res.groupby("cluster").seconds.sum().min() == pytest.approx(r.time_s, rel=0.05)


def test_reps_run_in_parallel_with_consecutive_seeds():
    runs = hetlab.simulate_reps(4, seed=10, workload="ccbench:size=1048576,iterations=100000", cluster="little")
    assert [r.summary["seed"] for r in runs] == [10, 11, 12, 13]


def test_errors_are_hetlab_errors():
    with pytest.raises(HetlabError, match="unknown scheduler"):
        hetlab.simulate(scheduler="cfs-rt")
    with pytest.raises(HetlabError, match="unknown platform"):
        hetlab.simulate(platform="tc3")
    with pytest.raises(HetlabError, match="unknown trace format 'dat'; give ftrace or trace-cmd"):
        hetlab.simulate(trace=True, trace_format="dat")


def test_smp_spreads_threads_and_slices_time():
    r = hetlab.simulate(workload="cpu-bound:threads=12,instructions=50000000", scheduler="smp", governor="performance")
    busy = [c["busy_s"] for c in r.summary["cpus"]]
    assert min(busy) > 0.5 * max(busy)
    # 12 threads on 8 CPUs: some threads share a CPU and take turns
    assert sum(t["migrations"] for t in r.summary["threads"]) >= 0
    assert all(t["finish_s"] > 0 for t in r.summary["threads"])


def test_an_unknown_option_is_an_error_not_ignored():
    # a misspelled option must not run the default silently (cpuidle, not cpu_idle)
    with pytest.raises(HetlabError, match="unexpected keyword argument 'cpu_idle' \\(did you mean 'cpuidle'\\?\\)"):
        hetlab.simulate(cpu_idle="cluster-off")
    with pytest.raises(HetlabError, match="unexpected keyword argument 'cpu_idle'"):
        hetlab.simulate_reps(2, cpu_idle="cluster-off")
    from hetlab import _core

    typed = dict(
        seed=1,
        scheduler="pinned",
        sched_tunables=[],
        switching="gts",
        governor="ondemand",
        tunables=[],
        cluster=None,
        freq=[],
        offline=[],
        model=None,
        cpuidle="wfi",
        cpu_dma_latency_us=None,
        perf_cpus=[],
        perf_period=10_000,
        kernel="",
        start_temp_c=[],
        trace=None,
        intervals=False,
        series=False,
        time_limit_s=1.0,
    )
    with pytest.raises(TypeError, match="unexpected keyword argument 'cpu_idle'"):
        _core.simulate(_core.Platform("exynos5422"), "ccbench", "", None, cpu_idle="wfi", **typed)
    with pytest.raises(TypeError, match="time_limit_s"):
        _core.simulate(_core.Platform("exynos5422"), "ccbench", "", None, **{**typed, "time_limit_s": "long"})


def test_the_cli_and_the_api_share_their_defaults():
    # `hetlab simulate` with no option is `hetlab.simulate()` with none
    import json
    import sys

    spec = "ccbench:size=4096,iterations=100000"
    cli = processes.run(
        [sys.executable, "-m", "hetlab", "simulate", "--workload", spec, "--json"], capture_output=True, text=True
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == hetlab.simulate(workload=spec).summary


def test_simulate_takes_one_set_of_options_in_the_api_the_binding_and_the_cli():
    # The same options under three names' rules: `hetlab.simulate`'s keywords, `_core.simulate`'s
    # and the destinations of `hetlab simulate`'s flags. The intended differences, each listed:
    import argparse
    import inspect

    from hetlab import _core
    from hetlab.cli import build_parser

    api_keys = set(inspect.signature(hetlab.simulate).parameters)
    binding_keys = set(inspect.signature(_core.simulate).parameters)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    cli_keys = {a.dest for a in sub.choices["simulate"]._actions} - {"help"}

    # API -> binding: the API reads a workload file and gives its spec, origin and text; its
    # `trace` (whether) and `trace_format` (how) are the binding's one `trace` (a format or None)
    api_to_binding = {
        "workload": {"workload_spec", "workload_origin", "workload_text"},
        "trace_format": {"trace"},
        "on_progress": {"progress"},
    }
    assert {b for k in api_keys for b in api_to_binding.get(k, {k})} == binding_keys
    # API -> CLI: repeatable flags are singular, the time limit's flag has no unit
    api_to_cli = {"tunables": "tunable", "sched_tunables": "sched_tunable", "time_limit_s": "time_limit"}
    # in the API only: a warmed-up start, and what the CLI asks for its own outputs (--report
    # records the intervals, the progress line listens to on_progress)
    api_only = {"start_temp_c", "intervals", "on_progress"}
    # in the CLI only: repetitions (`hetlab.simulate_reps`) and the outputs it writes (--trace
    # and --series are files there: they set the API's trace=True and series=True)
    cli_only = {"reps", "json", "report"}
    assert {api_to_cli.get(k, k) for k in api_keys - api_only} == cli_keys - cli_only


def test_a_platform_is_parsed_once_into_a_handle(tmp_path):
    import hashlib
    import pickle

    from hetlab import _core

    p = hetlab.api.load_platform("exynos5422")
    assert hetlab.api.load_platform(p) is p and p.name == "exynos5422" and p.line_bytes == 64
    assert p.sha256 == hashlib.sha256(_core.builtin_platform_text("exynos5422").encode()).hexdigest()
    spec = "ccbench:size=4096,iterations=100000"
    assert hetlab.simulate(p, spec).summary == hetlab.simulate("exynos5422", spec).summary
    again = pickle.loads(pickle.dumps(p))  # to an executor's worker, as its text
    assert (again.name, again.sha256, again.summary()) == (p.name, p.sha256, p.summary())
    # a file: its own text, hashed; one line size per platform
    text = p.text.replace("line_bytes = 64", "line_bytes = 32", 1)
    (tmp_path / "mixed.toml").write_text(text)
    mixed = hetlab.api.load_platform(tmp_path / "mixed.toml")
    assert mixed.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert pickle.loads(pickle.dumps(mixed)).text == text
    with pytest.raises(HetlabError, match=r"different cache lines \(cortex-a7 32 B, cortex-a15 64 B\)"):
        hetlab.api.line_bytes(mixed)
    assert hetlab.api.line_bytes("vexpress-a9") == 32
    with pytest.raises(HetlabError, match="unknown platform 'nope'"):
        hetlab.api.load_platform("nope")


def test_perf_sampling_slows_the_sampled_cpus_only():
    # seed 003's big.LITTLE emulation: perf record -C 1,3 -c 10000 on the vexpress
    kw = dict(platform="vexpress-a9", workload="cpu-bound:threads=4,instructions=100000000", governor="performance")
    plain = hetlab.simulate(**kw).summary["cpus"]
    sampled = hetlab.simulate(**kw, perf_cpus=[1, 3], perf_period=10_000).summary["cpus"]
    busy = [c["busy_s"] for c in sampled]
    # a sample's cost is the handler's cycles and what it and the task evict of each other's
    # lines (vexpress-a9's [perf_sample]): about a sixth of a 10,000-cycle period here
    assert busy[1] > 1.1 * busy[0] and busy[3] > 1.1 * busy[2]
    assert busy[0] == pytest.approx(plain[0]["busy_s"], rel=1e-3)
    assert busy[2] == pytest.approx(plain[2]["busy_s"], rel=1e-3)
    with pytest.raises(HetlabError, match=r"no \[perf_sample\] cost"):
        hetlab.simulate(workload="cpu-bound:instructions=1000000", perf_cpus=[1])
    with pytest.raises(HetlabError, match="cpu9 does not exist"):
        hetlab.simulate(platform="vexpress-a9", workload="cpu-bound:instructions=1000000", perf_cpus=[9])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(configs={"x": {"sheduler": "hmp"}}), "configuration 'x' has unknown option(s) sheduler"),
        (dict(configs={}), "configs is empty"),
        (dict(platforms=[]), "platforms is empty"),
        (dict(platforms=["no-such-board"]), "no-such-board"),
        (dict(workloads=["no-such-workload"]), "no-such-workload"),
        (dict(executor="spark://x"), "use local or dask://HOST:PORT"),
    ],
)
def test_sweep_refuses_a_bad_grid_before_running_anything(tmp_path, kwargs, message):
    grid = dict(platforms="exynos5422", workloads="mixed8", configs={"smp": {"scheduler": "smp"}})
    with pytest.raises(HetlabError, match=re.escape(message)):
        hetlab.sweep(**{**grid, **kwargs}, out=tmp_path / "grid.parquet")
    assert list(tmp_path.iterdir()) == []


def test_sweep_streams_to_parquet_in_row_groups(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from hetlab import grid

    monkeypatch.setattr(grid, "ROWS_PER_CHUNK", 4)
    path = hetlab.sweep(
        "exynos5422", "linsched-test", {"smp": {"scheduler": "smp"}}, seeds=range(1, 11), out=tmp_path / "g.parquet"
    )
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 10 and meta.num_row_groups == 3
    assert list(pq.read_table(path).column("seed").to_pylist()) == list(range(1, 11))
    assert [p.name for p in tmp_path.iterdir()] == ["g.parquet"]


def test_a_result_prints_in_one_line():
    r = hetlab.simulate("exynos5422", "mixed8", scheduler="smp", time_limit_s=0.5)
    text = repr(r)
    assert text.startswith("SimResult(platform='exynos5422', workload='mixed8'") and "\n" not in text
    assert len(text) < 200 and f"time_s={r.time_s:.6g}" in text


W = "cpu-bound:threads=1,instructions=100000"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(workload=5), "workload must be a name, a spec or a path to a file, got 5"),
        (dict(seed="abc"), "seed must be an integer, got 'abc'"),
        (dict(seed=1.7), "seed must be an integer, got 1.7"),  # was truncated to seed 1
        (dict(freq={"big": "fast"}), "freq['big'] (kHz) must be an integer, got 'fast'"),
        (dict(freq=[("big", 200000)]), "freq must be a dict of name -> value"),
        (dict(tunables={"up_threshold": "high"}), "tunables['up_threshold'] must be a number, got 'high'"),
        (
            dict(sched_tunables={"uclamp_buckets_count": None}),
            "sched_tunables['uclamp_buckets_count'] must be a number",
        ),
        (dict(offline="big"), "offline must be a list, e.g. ['big'], got 'big'"),  # was 'unknown cluster b'
        (dict(perf_cpus="1,3"), "perf_cpus must be a list"),
        (dict(scheduler=3), "scheduler must be a string, got 3"),
        (dict(start_temp_c="30"), "start_temp_c must be a list"),  # was [3.0, 0.0] °C
        (dict(on_progress=5), "on_progress must be a function"),
        (dict(trace_format="trace-cmd"), "trace_format='trace-cmd' lays out a trace; give trace=True too"),
        (dict(time_limit_s="long"), "time_limit_s must be a number, got 'long'"),
        (dict(intervals="yes"), "intervals must be True or False"),
    ],
)
def test_a_wrong_type_is_a_hetlab_error_naming_the_argument(kwargs, message):
    with pytest.raises(HetlabError, match=re.escape(message)):
        hetlab.simulate(**{"workload": W, **kwargs})


def test_paths_are_taken_as_files(tmp_path):
    from pathlib import Path

    platform = Path(__file__).parent.parent / "data" / "platforms" / "tc2.toml"
    workload = tmp_path / "w"  # a path object is a file even without a suffix
    workload.write_text('name = "w"\n[[tasks]]\nname = "t"\n[[tasks.phases]]\ninstructions = 100000\n')
    r = hetlab.simulate(platform, workload)  # were AttributeError: 'PosixPath' has no 'endswith'
    assert r.summary["platform"] == "tc2" and r.summary["workload"] == "w" and r.summary["completed"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(configs=[{"scheduler": "smp"}]), "configs must be a dict of name -> simulate options"),
        (dict(configs={"a": "smp"}), "configuration 'a' must be a dict of simulate options"),
        (dict(configs={"a": {"freq": {"big": "x"}}}), "configuration 'a': freq['big'] (kHz) must be an integer"),
        (dict(platforms=5), "platforms must be one or a list, got 5"),
        (dict(seeds="abc"), "seeds must be one or a list, got 'abc'"),
        (dict(seeds=[1.5]), "an item of seeds is 1.5, not an integer"),
        (dict(jobs="2"), "jobs must be a number of threads"),
        (dict(executor=5), "executor must be 'local', 'dask://HOST:PORT' or an executor"),
    ],
)
def test_sweep_refuses_wrong_types_before_running_anything(tmp_path, kwargs, message):
    grid = dict(platforms="exynos5422", workloads="mixed8", configs={"smp": {"scheduler": "smp"}})
    with pytest.raises(HetlabError, match=re.escape(message)):
        hetlab.sweep(**{**grid, **kwargs}, out=tmp_path / "grid.parquet")
    assert list(tmp_path.iterdir()) == []


def test_simulate_reps_is_bounded():
    with pytest.raises(HetlabError, match=re.escape("--reps must be in 1..100000, got 1000000000000")):
        hetlab.simulate_reps(10**12, workload=W)
    with pytest.raises(HetlabError, match="--reps must be an integer, got '3'"):
        hetlab.simulate_reps("3", workload=W)
