"""The `hetlab` command line, run as a separate process like a user would."""

import json
import os
import sys
from pathlib import Path

import pytest

import processes
from hetlab import __version__, api

SMALL = "ccbench:size=1048576,pattern=random,iterations=200000"


def hetlab(*args, cwd=None):
    return processes.run([sys.executable, "-m", "hetlab", *args], capture_output=True, text=True, cwd=cwd)


def test_help_explains_the_commands():
    r = hetlab("--help")
    assert r.returncode == 0
    for word in ("simulate", "governors", "platforms", "workloads", "snoop"):
        assert word in r.stdout
    r = hetlab("simulate", "--help")
    assert r.returncode == 0 and "ccbench:size=N" in r.stdout and "--freq" in r.stdout


def test_a_command_starts_without_the_data_libraries():
    # pandas, numpy and matplotlib cost 0.6 s per start (every test of this file pays it); only
    # the commands that draw or tabulate import them, where they do.
    heavy = ("pandas", "numpy", "matplotlib", "scipy", "sklearn", "pyarrow")
    for args in (["--help"], ["simulate", "--help"], ["reproduce", "--list"], ["governors"]):
        r = processes.run([sys.executable, "-X", "importtime", "-m", "hetlab", *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        imported = {line.split("|")[-1].strip().split(".")[0] for line in r.stderr.splitlines() if "|" in line}
        assert not imported & set(heavy), (args, sorted(imported & set(heavy)))


# What one `hetlab simulate` run (no output files) has no use for: the data libraries, the
# experiments and the other commands' modules, a thread pool and its logging, the statistics of
# several runs, the installed metadata, and what writing or hashing a file takes. Each cost every
# run milliseconds of its start (issue 38's lean process); a module listed here that the command
# comes to import fails this test, which names it.
NOT_FOR_ONE_RUN = {
    *("numpy", "pandas", "matplotlib", "scipy", "pyarrow", "tqdm", "importlib.metadata"),
    *("concurrent.futures", "logging", "statistics", "fractions", "decimal"),
    *("hashlib", "secrets", "tempfile", "random"),
    *("hetlab.reproduce", "hetlab.experiments", "hetlab.experiment", "hetlab.advise", "hetlab.html_report"),
    *("hetlab.report", "hetlab.train", "hetlab.profile", "hetlab.model_export", "hetlab.energy_model"),
    *("hetlab.plots", "hetlab.runs", "hetlab.page_figures"),
    *(f"hetlab.cli.{group}" for group in ("board", "model", "platform", "experiments", "catalogue")),
}


# the command run as `hetlab` runs it, then every module the process holds (-X importtime would not
# list those loaded with importlib.import_module)
MODULES_AFTER = """
import sys
from hetlab.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
sys.stdout.flush()
print(*sorted(sys.modules), file=sys.stderr)
sys.exit(code)
"""


def test_one_simulate_run_imports_only_what_it_uses():
    for args in (["simulate", "--help"], ["simulate", "--workload", SMALL, "--cluster", "little", "--json"]):
        r = processes.run([sys.executable, "-c", MODULES_AFTER, *args], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        imported = set(r.stderr.split())
        assert {"hetlab.cli.simulate", "hetlab.api", "argparse"} <= imported
        unused = {name for name in imported if name in NOT_FOR_ONE_RUN or name.split(".")[0] in NOT_FOR_ONE_RUN}
        assert not unused, (args, sorted(unused))
    assert json.loads(r.stdout)["completed"]


def test_a_library_an_output_needs_fails_to_load_before_any_file_is_written(tmp_path):
    # --series is made with pandas, which the command imports before the run: a pandas that fails
    # to load stops it there, not after the trace beside it was written
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "pandas.py").write_text("raise ImportError('this pandas does not load')\n")
    r = processes.run(
        [sys.executable, "-m", "hetlab", "simulate", "--workload", SMALL, "--trace", "t.trace", "--series", "s.csv"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "lib")},
    )
    assert r.returncode != 0 and "this pandas does not load" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib"]


def test_simulate_prints_time_energy_frequency_and_pmcs():
    r = hetlab("simulate", "--workload", SMALL, "--cluster", "little", "--governor", "ondemand")
    assert r.returncode == 0, r.stderr
    for word in (
        "time",
        "energy",
        "avg MHz",
        "residency",
        "cpu_cycles",
        "l2d_refill",
        "si_rrq_hs_any",
        "S3 little",
        "S4 big",
    ):
        assert word in r.stdout, word


def test_json_output_and_reps_statistics():
    r = hetlab("simulate", "--workload", SMALL, "--cluster", "little", "--freq", "little=1400000,big=200000", "--json")
    doc = json.loads(r.stdout)
    assert doc["governors"] == ["userspace", "userspace"]
    assert doc["clusters"][1]["residency"][0] == [200000, pytest.approx(doc["time_s"], rel=0.01)]
    r = hetlab("simulate", "--workload", SMALL, "--cluster", "little", "--reps", "3", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [run["seed"] for run in doc["runs"]] == [1, 2, 3]
    assert doc["time_s"]["std"] > 0


def test_same_seed_gives_byte_identical_json():
    a = hetlab("simulate", "--workload", SMALL, "--cluster", "little", "--seed", "5", "--json").stdout
    b = hetlab("simulate", "--workload", SMALL, "--cluster", "little", "--seed", "5", "--json").stdout
    assert a and a == b


def test_listing_commands():
    r = hetlab("governors")
    assert r.returncode == 0
    for name in (
        "ondemand",
        "conservative",
        "schedutil",
        "interactive",
        "anti-snoop",
        "up_threshold",
        "sampling_rate",
        "all-max",
    ):
        assert name in r.stdout
    assert "exynos5422" in hetlab("platforms").stdout
    assert "ccbench" in hetlab("workloads").stdout


BAD_INPUTS = [
    (["--governor", "turbo"], "unknown governor 'turbo'"),
    (["--workload", "ccbench:size=1024,sise=3"], "unknown workload key 'sise'"),
    (["--workload", "nosuch"], "unknown workload 'nosuch'"),
    (["--freq", "little=1450000"], "not an OPP of cluster little"),
    (["--freq", "medium=1400000"], "unknown cluster 'medium'"),
    (["--tunable", "up_threshold=120"], "up_threshold"),
    (["--platform", "missing.toml"], "cannot read platform file 'missing.toml'"),
    (["--governor", "idle-min"], "needs --cluster"),
    (["--scheduler", "eas", "--governor", "ondemand"], "scheduler 'eas' needs the schedutil governor"),
    (["--kernel", "rcu_nocb=1"], "unknown option 'rcu_nocb'; known: rcu_nocbs=CPUS"),
    (["--kernel", "rcu_nocbs=0-9"], "rcu_nocbs names cpu9; the platform has cpu0-7"),
    (["--kernel", "rcu_fast_no_hz=1"], "rcu_fast_no_hz takes no value"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS)
def test_bad_input_is_one_clear_line_and_no_output_file(tmp_path, args, message):
    trace = tmp_path / "out.trace"
    r = hetlab("simulate", "--workload", SMALL, *args, "--trace", str(trace))
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetlab: error:") and message in lines[0], r.stderr
    assert r.stdout == ""
    assert not trace.exists() and list(tmp_path.iterdir()) == []


def test_a_trace_format_without_a_trace_is_one_line():
    r = hetlab("simulate", "--workload", SMALL, "--trace-format", "trace-cmd")
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr == "hetlab: error: --trace-format trace-cmd lays out a trace; give --trace FILE too\n"


def test_eas_places_by_energy_under_schedutil():
    # a CPU-bound thread starts on LITTLE (CPU 0) and, once it no longer fits there, is moved
    # to big by the misfit balance
    wl = "cpu-bound:threads=1,instructions=4000000000"
    r = hetlab("simulate", "--workload", wl, "--scheduler", "eas", "--governor", "schedutil", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["scheduler"] == "eas" and s["threads"][0]["migrations"] == 1
    busy = {c["cluster"]: 0.0 for c in s["cpus"]}
    for c in s["cpus"]:
        busy[c["cluster"]] += c["busy_s"]
    assert busy["big"] > 3 * busy["little"], busy


def test_trace_comes_with_lisa_platform_info(tmp_path):
    trace = tmp_path / "out.trace"
    r = hetlab("simulate", "--workload", SMALL, "--trace", str(trace))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.trace", "out.trace.plat_info.yml"]
    assert trace.read_text().startswith("# tracer: nop\n")
    text = (tmp_path / "out.trace.plat_info.yml").read_text()
    # the platform's own description, from the engine (the API gives the same text)
    assert text == api.simulate(workload=SMALL, trace=True).plat_info_text
    lines = text.splitlines()
    assert "platform-info:" in lines and '        name: "exynos5422"' in lines
    assert "        - [0, 1, 2, 3]" in lines and "        - [4, 5, 6, 7]" in lines
    assert "                4: 1024" in lines


def test_malformed_platform_file_names_file_and_field(tmp_path):
    text = (Path(__file__).parents[1] / "data/platforms/exynos5422.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("[200000, 900000], [300000, 900000]", "[300000, 900000], [200000, 900000]", 1))
    r = hetlab("simulate", "--platform", str(bad), "--workload", SMALL, "--trace", str(tmp_path / "t.txt"))
    assert r.returncode != 0
    assert "bad.toml" in r.stderr and "opps" in r.stderr and "sorted" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t.txt").exists()
    bad.write_text(text.replace("hz = 200", "hz = 200\nwarp = 9"))
    r = hetlab("simulate", "--platform", str(bad), "--workload", SMALL)
    assert r.returncode != 0 and "unknown field `warp`" in r.stderr and "bad.toml:" in r.stderr


def test_workload_file_and_series_csv(tmp_path):
    wl = tmp_path / "w.toml"
    wl.write_text(
        'name = "two-phase"\n[[tasks]]\nname = "t"\n'
        '[[tasks.phases]]\ninstructions = 20000000\nworking_set_bytes = 8388608\npattern = "random"\n'
        "[[tasks.phases]]\nsleep_us = 20000\n"
    )
    series = tmp_path / "s.csv"
    r = hetlab("simulate", "--workload", str(wl), "--cluster", "big", "--series", str(series), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["workload"] == "two-phase"
    import pandas as pd

    df = pd.read_csv(series)
    assert {"time_s", "cluster", "freq_khz", "load_pct", "cci_congestion", "memory_access"} <= set(df.columns)
    assert set(df.cluster) == {"little", "big"}


def test_perf_sampling_flags_and_a_platform_without_cci():
    r = hetlab(
        "simulate",
        "--platform",
        "vexpress-a9",
        "--workload",
        "cpu-bound:threads=1,instructions=10000000",
        "--perf-cpus",
        "0,1,2,3",
        "--perf-period",
        "10000",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cci_ports"] == [] and doc["cci_cycles"] == 0
    assert "no CCI on this platform" in hetlab("simulate", "--platform", "vexpress-a9").stdout
    assert "no CCI" in hetlab("platforms").stdout
    r = hetlab("simulate", "--platform", "vexpress-a9", "--perf-cpus", "1,x")
    assert r.returncode == 2 and r.stderr.startswith("hetlab: error: --perf-cpus") and r.stderr.count("\n") == 1


def test_version_names_the_package_version():
    proc = hetlab("--version")
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert proc.returncode == 0 and proc.stdout.strip() == f"hetlab {__version__}"
    assert __version__ == pyproject["project"]["version"]


def test_show_model_prints_the_built_in_trees():
    proc = hetlab("show-model", "lctes2020-fig4")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("model lctes2020-fig4")
    for cluster in ("big", "little"):
        assert f"manage the frequency of the {cluster} cluster" in proc.stdout
    assert "cci_congestion <= 0.01074" in proc.stdout  # Figure 4a's root split


def test_anti_snoop_without_a_model_says_once_which_it_uses():
    args = ["simulate", "--workload", "mixed8", "--governor", "anti-snoop", "--time-limit", "0.2", "--reps", "2"]
    proc = hetlab(*args)
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "built-in model lctes2020-fig4" in line]
    assert len(notes) == 1
    assert "built-in model" not in hetlab(*args[:-2], "--model", "lctes2020-fig4").stderr


def test_kernel_rcu_options_on_tc2_and_a_negative_rate_refused(tmp_path):
    # a task that queues callbacks (cyclictest's loop closes no file: its run has no RCU work)
    rcu = tmp_path / "rcu.toml"
    rcu.write_text(
        'name = "rcu"\n[[tasks]]\nname = "t"\n[[tasks.phases]]\ninstructions = 2e8\n'
        "call_rcu_per_s = 2000.0\nrcu_callback_us = 2.0\n"
    )
    args = ["simulate", "--platform", "tc2", "--workload", str(rcu), "--scheduler", "hmp"]
    stock = hetlab(*args)
    assert stock.returncode == 0, stock.stderr
    assert "RCU (stock)" in stock.stdout and "idle ticks" in stock.stdout
    both = hetlab(*args, "--kernel", "rcu_nocbs=0-1,rcu_fast_no_hz")
    assert both.returncode == 0, both.stderr
    assert "RCU rcu_nocbs=0,1,rcu_fast_no_hz" in both.stdout
    # the Exynos 5422 takes the same options (its big CPUs are 4-7)
    assert hetlab("simulate", "--workload", SMALL, "--kernel", "rcu_nocbs=4-7").returncode == 0
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'name = "bad"\n[[tasks]]\nname = "t"\n[[tasks.phases]]\ninstructions = 1e6\n'
        "call_rcu_per_s = -5.0\nrcu_callback_us = 2.0\n"
    )
    r = hetlab("simulate", "--workload", str(bad))
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and r.stdout == ""
    assert len(lines) == 1 and "call_rcu_per_s must not be negative, got -5" in lines[0], r.stderr


def _each_value_is_refused(args, option, bad):
    """`hetlab ARGS OPTION VALUE` for each value of `bad`: a non-zero exit, nothing on stdout and
    one `hetlab: error:` line that says `bad[value]`."""
    for value, says in bad.items():
        r = hetlab(*args, option, value)
        assert r.returncode != 0 and r.stdout == "", r.stdout
        assert r.stderr.startswith("hetlab: error: ") and len(r.stderr.splitlines()) == 1, r.stderr
        assert says in r.stderr, r.stderr


def test_cpu_dma_latency_keeps_the_a57_cluster_up_and_bad_values_are_one_line():
    # the 5433's A57 cluster state takes 300 µs to leave: a PM QoS limit of 299 µs forbids it
    periodic = "periodic:run_us=1000,period_us=10000,duration_us=300000"
    args = ["simulate", "--platform", "exynos5433", "--workload", periodic, "--cluster", "little"]
    args += ["--governor", "performance", "--cpuidle", "cluster-off", "--json"]

    def big_power_downs(*extra):
        r = hetlab(*args, *extra)
        assert r.returncode == 0, r.stderr
        return next(c["power_downs"] for c in json.loads(r.stdout)["clusters"] if c["name"] == "big")

    assert big_power_downs() >= 1
    assert big_power_downs("--cpu-dma-latency-us", "300") == big_power_downs()
    assert big_power_downs("--cpu-dma-latency-us", "299") == 0
    bad = {"-1": "cpu_dma_latency", "2000000001": "cpu_dma_latency", "soon": "expects a whole number"}
    _each_value_is_refused(args, "--cpu-dma-latency-us", bad)


def test_resolve_tolerance_zero_is_the_exact_run_and_bad_values_are_one_line():
    # memory-bound periodic threads on both clusters: the DRAM utilisation moves at every event
    spec = "periodic:threads=8,run_us=2000,period_us=5000,duration_us=500000,working_set_bytes=4194304"
    args = ["simulate", "--workload", spec, "--scheduler", "smp", "--json"]
    exact = hetlab(*args)
    assert exact.returncode == 0, exact.stderr
    assert hetlab(*args, "--resolve-tolerance", "0").stdout == exact.stdout
    # a tolerance keeps solutions the exact run re-solves: the option reaches the engine
    kept = hetlab(*args, "--resolve-tolerance", "0.01")
    assert kept.returncode == 0 and kept.stdout != exact.stdout, kept.stderr
    bad = {"-0.001": "resolve tolerance", "0.5": "resolve tolerance", "soon": "expects a number"}
    _each_value_is_refused(args, "--resolve-tolerance", bad)


def test_every_listing_has_json_for_scripts():
    """`platforms`, `workloads`, `governors`, `schedulers` and `reproduce --list` print JSON with
    `--json`, the same items as their text."""
    outputs = {}
    for command in (["platforms"], ["workloads"], ["governors"], ["schedulers"], ["reproduce", "--list"]):
        run = hetlab(*command, "--json")
        assert run.returncode == 0 and run.stderr == "", (command, run.stderr)
        outputs[command[0]] = json.loads(run.stdout)
    assert [p["name"] for p in outputs["platforms"]] == [p["name"] for p in api.platforms()]
    assert outputs["workloads"]["builtin"] == api.workloads()
    assert [g["name"] for g in outputs["workloads"]["generators"]] == ["ccbench", "periodic", "cpu-bound"]
    assert [g["name"] for g in outputs["governors"]] == [g["name"] for g in api.governors()]
    assert [s["name"] for s in outputs["schedulers"]] == [s["name"] for s in api.schedulers()]
    experiments = {e["name"]: e for e in outputs["reproduce"]}
    assert set(experiments) == {"lctes2020", "bl-mp-sched", "rcu-amp", "four-vs-eight", "modern-placement"}
    for e in experiments.values():
        assert e["title"] and e["source"] and e["platform"] and e["benchmarks"] and e["reps"] >= 1
    wrong = hetlab("reproduce", "--json")
    assert wrong.returncode == 2 and "--json goes with --list" in wrong.stderr
