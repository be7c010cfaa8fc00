"""LISA and hetlab end to end, as a LISA user works with a board:

1. LISA's own rt-app generator (``RTAConf.from_profile``) writes a workload from the platform
   info hetlab gives (``rtapp: calib``, capacities), hetlab runs that file, and LISA's rt-app
   analysis reads the run's trace: every loop's duty cycle is the one LISA asked for, on the
   big core and, scaled by LISA for its capacity, on the LITTLE one; hetlab's rt-app logs
   agree with LISA's reading of the markers.
2. LISA's energy analysis (``EnergyModel.estimate_from_trace``, over the ``nrg-model`` hetlab
   puts in the platform info) runs on a hetlab trace and finds each CPU's energy as the
   model's power at the traced frequency times the traced busy time.

ARM's LISA (lisa-linux==3.1.0) runs in its own venv (conftest.py's ``lisa_python``), driven
through tests/lisa_rtapp_generate.py, lisa_rtapp_analysis.py and lisa_energy_estimate.py.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import pytest

import processes
from hetlab import api, energy_model

TESTS = Path(__file__).resolve().parent
CPU_IDLE_EXIT = 4294967295


def _lisa(lisa_python: str, script: str, *args: str) -> dict:
    proc = processes.run(
        [lisa_python, str(TESTS / script), *map(str, args)], capture_output=True, text=True, timeout=1800
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout)


def _simulate(*args: str) -> dict:
    run = [sys.executable, "-m", "hetlab", "simulate", "--platform", "exynos5422", "--scheduler", "smp"]
    proc = processes.run([*run, "--governor", "performance", "--json", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory, lisa_python):
    """(LISA's generator's output, its JSON, the run, LISA's rt-app analysis, the logs dir)."""
    d = tmp_path_factory.mktemp("lisa-round-trip")
    plat_info = d / "exynos5422.plat_info.yml"
    plat_info.write_text(api.simulate("exynos5422", workload="cpu-bound", trace=True, time_limit_s=0.01).plat_info_text)
    workload = d / "lisa.json"
    asked = _lisa(lisa_python, "lisa_rtapp_generate.py", plat_info, workload)
    trace, logs = d / "lisa.trace", d / "logs"
    logs.mkdir()
    run = _simulate("--workload", str(workload), "--trace", str(trace), "--rtapp-logs", str(logs))
    analysis = _lisa(lisa_python, "lisa_rtapp_analysis.py", trace, f"{trace}.plat_info.yml")
    return asked, json.loads(workload.read_text()), run, analysis, logs


@pytest.mark.lisa
def test_lisa_calibrates_on_the_fastest_cpu_of_hetlabs_calibration(round_trip):
    asked, conf, _, _, _ = round_trip
    calib = api.simulate("exynos5422", workload="cpu-bound", trace=True, time_limit_s=0.01).plat_info_text
    big_ns = int(calib.split("calib:\n")[1].splitlines()[4].split(":")[1])
    assert conf["global"]["calibration"] == asked["calibration"] == big_ns
    assert conf["global"]["ftrace"] == "main,task,loop,event,stats"


@pytest.mark.lisa
def test_every_loop_has_the_duty_cycle_lisa_asked(round_trip):
    _, conf, run, analysis, _ = round_trip
    tasks = analysis["tasks"]
    assert sorted(tasks) == sorted(t["name"] for t in run["threads"]) == ["big-0", "little-1"]
    big, little = tasks["big-0"], tasks["little-1"]
    # big: 20 loops at 20 %, then 20 at 60 % of 16 ms; its phases last 0.32 s each
    assert [p for _, _, p in big["phases"]] == [0, 1]
    assert all(d == pytest.approx(0.32, abs=1e-6) for _, d, _ in big["phases"])
    for i, (_, period, run_us, slack, c_period, c_run, _) in enumerate(big["stats"]):
        duty = 0.2 if i < 20 else 0.6
        assert (c_period, c_run) == (16000, duty * 16000)
        # a loop's run is its work at 2 GHz plus what the kernel takes meanwhile (ticks, jitter)
        assert period == pytest.approx(16000, abs=2) and run_us == pytest.approx(c_run, rel=0.02), i
        assert slack == pytest.approx(period - run_us, abs=2)
    for phase in (big["stats"][:20], big["stats"][20:]):
        ratios = [run_us / c_run for _, _, run_us, _, _, c_run, _ in phase]
        assert sum(ratios) / len(ratios) == pytest.approx(1.0, abs=0.005)
    # little: LISA shrinks its run by the LITTLE's capacity so that it keeps 40 % there
    (phase,) = conf["tasks"]["little"]["phases"].values()
    assert phase["run"] < 0.4 * 8000 * 0.5
    for _, period, run_us, _, c_period, c_run, _ in little["stats"]:
        assert (c_period, c_run) == (8000, phase["run"])
        assert run_us / period == pytest.approx(0.40, abs=0.02)
    duty = [run_us / period for _, period, run_us, *_ in little["stats"]]
    assert sum(duty) / len(duty) == pytest.approx(0.40, abs=0.004)


@pytest.mark.lisa
def test_hetlabs_rt_app_logs_are_what_lisa_reads_in_the_markers(round_trip):
    _, _, _, analysis, logs = round_trip
    for thread, task in analysis["tasks"].items():
        rows = [line.split() for line in (logs / f"rt-app-{thread}.log").read_text().splitlines()[1:]]
        assert len(rows) == len(task["stats"])
        for row, (_, period, run_us, slack, c_period, c_run, _) in zip(rows, task["stats"]):
            # columns: idx perf run period start end rel_st slack c_duration c_period wu_lat
            assert [int(row[i]) for i in (2, 3, 7, 8, 9)] == [run_us, period, slack, c_run, c_period]


def _busy_s(trace: Path, window: tuple[float, float]) -> dict[int, float]:
    """Per CPU, its time out of idle within `window`, from the trace's cpu_idle events."""
    events = collections.defaultdict(list)
    for line in trace.read_text().splitlines():
        if ": cpu_idle:" in line:
            time_s = float(line.split(": cpu_idle:")[0].split()[-1])
            fields = dict(f.split("=") for f in line.split(": cpu_idle:")[1].split())
            events[int(fields["cpu_id"])].append((time_s, int(fields["state"]) == CPU_IDLE_EXIT))
    start, end = window
    busy = {}
    for cpu, changes in events.items():
        total, since = 0.0, None
        state = next((b for t, b in reversed(changes) if t <= start), False)
        since = start if state else None
        for t, out_of_idle in changes:
            if t <= start or t > end:
                continue
            if out_of_idle and since is None:
                since = t
            elif not out_of_idle and since is not None:
                total, since = total + t - since, None
        busy[cpu] = total + (end - since if since is not None else 0.0)
    return busy


@pytest.mark.lisa
def test_lisas_energy_analysis_runs_on_a_hetlab_trace(tmp_path, lisa_python):
    # a thread on CPU 4 busy 20 ms in every 40 ms, the others idle, every cluster at its top OPP
    workload = tmp_path / "busy.json"
    workload.write_text(json.dumps({"tasks": {"b": {"cpus": [4], "loop": 10, "run": 20000, "sleep": 20000}}}))
    trace = tmp_path / "busy.trace"
    _simulate("--workload", str(workload), "--trace", str(trace))
    lisa = _lisa(lisa_python, "lisa_energy_estimate.py", trace, f"{trace}.plat_info.yml")
    em = energy_model.energy_model("exynos5422")
    top_mw = {cpu: d["states"][-1]["power_mw"] for d in em["domains"] for cpu in d["cpus"]}
    top_khz = {cpu: d["states"][-1]["frequency_khz"] for d in em["domains"] for cpu in d["cpus"]}
    assert {int(c): s for c, s in lisa["states"].items()} == {c: [top_khz[c]] for c in range(8)}
    busy = _busy_s(trace, tuple(lisa["window"]))
    assert lisa["window"][1] - lisa["window"][0] > 0.1
    for cpu in range(8):
        # the simplified EM's idle states cost nothing: a CPU's energy is its busy time at its power
        assert lisa["energy"][str(cpu)] == pytest.approx(top_mw[cpu] * busy.get(cpu, 0.0), rel=1e-3, abs=1e-6), cpu
    assert lisa["energy"]["4"] > 100 * max(lisa["energy"][str(c)] for c in range(8) if c != 4)
