"""LISA's task-state, load-tracking and frequency analyses on a simulated trace, checked against
the run.

A workload that migrates (short bursts that sleep, beside CPU hogs, on all 8 CPUs of the Exynos
5422) runs under `SCHEDULER` with schedutil (which makes the engine track PELT); `hetlab simulate
--trace` writes the trace and its LISA platform info. ARM's LISA (lisa-linux==3.1.0, in its own
venv: conftest.py's `lisa_python`) reads both in tests/lisa_sched_analyses.py and reports what its
analyses find; the checks compare that with the run's own report, with the workload, with the
events as tests/ftrace_text.py reads them, and with PELT replayed over the recorded schedule by
tests/pelt_oracle.py. A hand-written sample covers the events a `smp` run does not produce
(`sched_overutilized`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

import processes

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
if str(TESTS) not in sys.path:  # also works under --import-mode=importlib
    sys.path.insert(0, str(TESTS))

import ftrace_text  # noqa: E402
import pelt_oracle  # noqa: E402

# The placement under test: "hmp" once it lands (the one word to change).
SCHEDULER = "smp"
PLATFORM = "exynos5422"
BURST_THREADS, BURST_SLEEPS = 10, 120
WORKLOAD = f"""\
name = "lisa-sched-mix"
description = "short bursts that sleep (wake-up placement, migrations) beside CPU hogs (queueing, preemption, new-idle pulls); one hog at nice 5"

[[tasks]]
name = "burst"
threads = {BURST_THREADS}
repeat = {BURST_SLEEPS}

[[tasks.phases]]
instructions = 3e6

[[tasks.phases]]
sleep_us = 4000

[[tasks]]
name = "hog"
threads = 2

[[tasks.phases]]
instructions = 2e9

[[tasks]]
name = "nice-hog"
nice = 5

[[tasks.phases]]
instructions = 2e9
"""


def run_script(lisa_python: str, script: str, *args: str) -> dict:
    proc = processes.run([lisa_python, str(TESTS / script), *args], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{script} {' '.join(args)} failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout)


def assert_same_events(ours: dict, lisa: dict, events: list[str], what: str) -> None:
    """`ours`: ftrace_text.summary (µs); `lisa`: lisa_read_trace.py --sched output (s)."""
    for event in events:
        assert lisa["counts"][event] == ours["counts"][event], f"{what}: {event} count"
        for i, (m, t) in enumerate(zip(ours[event], lisa[event])):
            assert abs(t[0] * 1e6 - m[0]) <= 1.0, f"{what}: {event} row {i} time {t[0]} s vs {m[0]} µs"
            assert t[1:] == m[1:], f"{what}: {event} row {i}: LISA {t} vs text {m}"


# ------------------------------------------------------------------------------------------------
# The events of a hand-written sample: every scheduler event, over-utilisation included, and a
# task group's run queue and entity (path /bg, pid -1), which LISA's load tracking leaves out of
# the tasks' and the CPUs' signals


SAMPLE = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 31/31   #P:2
#
#           TASK-PID     CPU#     TIMESTAMP  FUNCTION
#              | |         |         |         |
          <idle>-0     [000]     0.000000: cpu_frequency:        state=1000000 cpu_id=0
          <idle>-0     [000]     0.000000: cpu_frequency:        state=1000000 cpu_id=1
          <idle>-0     [000]     0.000000: sched_cpu_capacity:   cpu=0 capacity=512 capacity_orig=512 capacity_curr=256
          <idle>-0     [001]     0.000000: sched_cpu_capacity:   cpu=1 capacity=1024 capacity_orig=1024 capacity_curr=512
          <idle>-0     [000]     0.000000: sched_overutilized:   overutilized=0 span=0x3
          <idle>-0     [001]     0.000000: cpu_idle:             state=0 cpu_id=1
          <idle>-0     [000]     0.000000: sched_wakeup_new:     comm=task0 pid=1001 prio=120 target_cpu=000
          <idle>-0     [000]     0.000000: sched_switch:         prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=task0 next_pid=1001 next_prio=120
           task0-1001  [000]     0.001050: sched_pelt_se:        cpu=0 path=(null) comm=task0 pid=1001 load=1023 runnable=1023 util=10 update_time=1048576
           task0-1001  [000]     0.001050: sched_pelt_cfs:       cpu=0 path=/ load=1023 runnable=1023 util=10 update_time=1048576
           task0-1001  [000]     0.002000: sched_overutilized:   overutilized=1 span=0x3
           task0-1001  [000]     0.003000: cpu_frequency:        state=2000000 cpu_id=0
           task0-1001  [000]     0.003000: cpu_frequency:        state=2000000 cpu_id=1
           task0-1001  [000]     0.003000: sched_cpu_capacity:   cpu=0 capacity=512 capacity_orig=512 capacity_curr=512
           task0-1001  [000]     0.003000: sched_cpu_capacity:   cpu=1 capacity=1024 capacity_orig=1024 capacity_curr=1024
           task0-1001  [000]     0.004000: sched_switch:         prev_comm=task0 prev_pid=1001 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [000]     0.004000: cpu_idle:             state=0 cpu_id=0
          <idle>-0     [000]     0.006000: sched_waking:         comm=task0 pid=1001 prio=120 target_cpu=000
          <idle>-0     [000]     0.006000: sched_migrate_task:   comm=task0 pid=1001 prio=120 orig_cpu=0 dest_cpu=1
          <idle>-0     [001]     0.006000: sched_wakeup:         comm=task0 pid=1001 prio=120 target_cpu=001
          <idle>-0     [001]     0.006000: cpu_idle:             state=4294967295 cpu_id=1
          <idle>-0     [001]     0.006000: sched_switch:         prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=task0 next_pid=1001 next_prio=120
           task0-1001  [001]     0.006000: sched_pelt_cfs:       cpu=0 path=/ load=0 runnable=1002 util=0 update_time=5999616
           task0-1001  [001]     0.006000: sched_pelt_cfs:       cpu=1 path=/ load=1001 runnable=0 util=18 update_time=5999616
           task0-1001  [001]     0.007000: sched_overutilized:   overutilized=0 span=0x3
           task0-1001  [001]     0.008000: sched_pelt_se:        cpu=1 path=(null) comm=task0 pid=1001 load=1001 runnable=1001 util=43 update_time=7999488
           task0-1001  [001]     0.008000: sched_pelt_cfs:       cpu=1 path=/bg load=1024 runnable=1001 util=43 update_time=7999488
           task0-1001  [001]     0.008000: sched_pelt_se:        cpu=1 path=/bg comm=(null) pid=-1 load=1001 runnable=1001 util=43 update_time=7999488
           task0-1001  [001]     0.009000: sched_switch:         prev_comm=task0 prev_pid=1001 prev_prio=120 prev_state=X ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     [001]     0.009000: cpu_idle:             state=0 cpu_id=1
          <idle>-0     [001]     0.010000: cpu_idle:             state=4294967295 cpu_id=1
"""

SAMPLE_PLAT_INFO = """\
platform-info:
    conf:
        name: "sample"
        os: linux
        cpus-count: 2
        numa-nodes-count: 1
        cpu-capacities:
            writeable: false
            orig:
                0: 512
                1: 1024
        freq-domains:
        - [0, 1]
        freqs:
            0: [1000000, 2000000]
            1: [1000000, 2000000]
"""


@pytest.mark.lisa
@pytest.mark.parametrize("parser", ["hrtxt", "systrace"])
def test_lisa_reads_every_scheduler_event_of_the_sample(lisa_python, tmp_path, parser):
    trace = tmp_path / "sample.trace"
    trace.write_text(SAMPLE)
    events = ftrace_text.EVENTS + ftrace_text.SCHED_EVENTS
    ours = ftrace_text.summary(ftrace_text.parse_text(SAMPLE), events)
    assert all(ours["counts"][e] > 0 for e in events)
    lisa = run_script(lisa_python, "lisa_read_trace.py", str(trace), "--parser", parser, "--sched")
    assert_same_events(ours, lisa, events, f"sample/{parser}")


@pytest.mark.lisa
def test_lisa_analyses_of_the_sample(lisa_python, tmp_path):
    trace, plat_info = tmp_path / "sample.trace", tmp_path / "sample.trace.plat_info.yml"
    trace.write_text(SAMPLE)
    plat_info.write_text(SAMPLE_PLAT_INFO)
    a = run_script(lisa_python, "lisa_sched_analyses.py", str(trace), str(plat_info))
    task = a["tasks"]["1001"]
    assert task["residency"] == pytest.approx({"0": 0.004, "1": 0.003}, abs=1e-9)
    assert task["wakeups"] == 1
    assert a["migrations"] == [[pytest.approx(0.006), 1001, 0, 1]]
    assert [row[1:] for row in a["task_signals"]["1001"]] == [[0, 10, 1023, 1048576], [1, 43, 1001, 7999488]]
    assert [row[1:] for row in a["cpu_signals"]["1"]] == [[18, 1001, 5999616]]
    assert [row[1:] for row in a["capacities"]] == [
        [0, 512, 512, 256],
        [1, 1024, 1024, 512],
        [0, 512, 512, 512],
        [1, 1024, 1024, 1024],
    ]
    # 0-3 ms at 1 GHz, 3-10 ms at 2 GHz (the window ends at the last event)
    assert a["freq_residency"]["0"]["1000000"][0] == pytest.approx(0.003)
    assert a["freq_residency"]["0"]["2000000"][0] == pytest.approx(0.007)
    # ana.status: over-utilised from 2 to 7 ms
    assert [(round(t, 6), o) for t, o, _ in a["overutilized"]] == [(0.0, 0), (0.002, 1), (0.007, 0)]
    assert a["overutilized"][1][2] == pytest.approx(0.005)


# ------------------------------------------------------------------------------------------------
# A simulated run


@pytest.fixture(scope="module")
def sched_run(tmp_path_factory, lisa_python):
    """(the run's JSON summary, the trace's lines as ftrace_text reads them, LISA's analyses)."""
    d = tmp_path_factory.mktemp("lisa-sched")
    workload, trace = d / "lisa-sched-mix.toml", d / f"{PLATFORM}-{SCHEDULER}-schedutil.trace"
    workload.write_text(WORKLOAD)
    env = dict(os.environ)
    if importlib.util.find_spec("hetlab") is None:  # source checkout without an install
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    args = ["--platform", PLATFORM, "--workload", str(workload), "--scheduler", SCHEDULER]
    args += ["--governor", "schedutil", "--seed", "1", "--json", "--trace", str(trace)]
    proc = processes.run(
        [sys.executable, "-m", "hetlab", "simulate", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, f"hetlab simulate failed:\n{proc.stderr[-4000:]}"
    run = json.loads(proc.stdout)
    plat_info = Path(f"{trace}.plat_info.yml")
    assert trace.exists() and plat_info.exists()
    lines = ftrace_text.parse_file(trace)
    ftrace_text.check_consistency(lines)
    analyses = run_script(lisa_python, "lisa_sched_analyses.py", str(trace), str(plat_info))
    return run, lines, analyses, trace


@pytest.mark.lisa
@pytest.mark.parametrize("parser", ["hrtxt", "systrace"])
def test_lisa_reads_every_scheduler_event_of_the_run(lisa_python, sched_run, parser):
    _, lines, _, trace = sched_run
    events = ftrace_text.EVENTS + ftrace_text.SCHED_EVENTS
    ours = ftrace_text.summary(lines, events)
    lisa = run_script(lisa_python, "lisa_read_trace.py", str(trace), "--parser", parser, "--sched")
    assert_same_events(ours, lisa, events, f"run/{parser}")


@pytest.mark.lisa
def test_lisa_platform_info_is_the_platform(sched_run):
    run, _, a, _ = sched_run
    info = a["plat_info"]
    assert info["cpus-count"] == len(run["cpus"]) == 8
    assert info["freq-domains"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for cpu in run["cpus"]:
        cluster = next(c for c in run["clusters"] if c["name"] == cpu["cluster"])
        assert info["freqs"][str(cpu["cpu"])] == [khz for khz, _ in cluster["residency"]]
    assert {info["capacities"][str(c)] for c in range(4, 8)} == {1024}
    assert 0 < info["capacities"]["0"] < 1024


@pytest.mark.lisa
def test_lisa_task_states_match_the_run(sched_run):
    """ana.tasks: the time each thread was on a CPU, its wake-ups and its migrations."""
    run, lines, a, _ = sched_run
    by_cpu = [0.0] * len(run["cpus"])
    migrations_traced = 0
    wakings = {(ln.time_us, int(ln.fields["pid"])) for ln in lines if ln.event == "sched_waking"}
    for th in run["threads"]:
        task = a["tasks"][str(th["tid"])]
        assert task["comm"] == th["name"]
        # the time on each CPU: the thread's own (cpu_time_on_s) plus what the engine charges to
        # the running thread besides its work (interrupts, cache refills after a migration),
        # within the µs rounding of each switch in the trace
        rounding_s = 2e-6 * (task["wakeups"] + th["migrations"] + 2)
        extra_s = 0.0
        for cpu, own_s in enumerate(th["cpu_time_on_s"]):
            on_cpu_s = task["residency"].get(str(cpu), 0.0)
            assert on_cpu_s >= own_s - rounding_s, (th["name"], cpu, on_cpu_s, own_s)
            extra_s += max(0.0, on_cpu_s - own_s)
        assert extra_s <= 0.01 * th["cpu_time_s"], (th["name"], extra_s)
        assert sum(th["cpu_time_on_s"]) == pytest.approx(th["cpu_time_s"], rel=1e-9)
        for cpu, s in task["residency"].items():
            by_cpu[int(cpu)] += s
        # each sleep of the workload is one wake-up
        assert task["wakeups"] == (BURST_SLEEPS if th["name"].startswith("burst-") else 0), th["name"]
        # the run counts every move but the wake-up placement of a thread that has not run yet
        moves = [m for m in a["migrations"] if m[1] == th["tid"]]
        first_placement = [m for m in moves if m[0] <= task["first_active"] and (round(m[0] * 1e6), m[1]) in wakings]
        assert len(moves) - len(first_placement) == th["migrations"], th["name"]
        assert sum(1 for s in task["residency"].values() if s > 0) <= len(moves) + 1, th["name"]
        migrations_traced += len(moves)
    assert migrations_traced >= 20, "the workload must make the placement migrate"
    # a CPU's busy time also holds the kernel's work while no thread ran
    for cpu, on_cpu_s in zip(run["cpus"], by_cpu):
        switches = sum(1 for ln in lines if ln.event == "sched_switch" and ln.cpu == cpu["cpu"])
        assert cpu["busy_s"] * 0.99 <= on_cpu_s <= cpu["busy_s"] + 1e-6 * switches, cpu


@pytest.mark.lisa
def test_lisa_load_tracking_is_pelt_of_the_run(sched_run):
    """ana.load_tracking: every task's util and load as traced, and as PELT of the schedule."""
    _, lines, a, _ = sched_run
    info = a["plat_info"]
    capacities = {int(c): v for c, v in info["capacities"].items()}
    max_khz = {int(c): max(f) for c, f in info["freqs"].items()}
    platform = tomllib.loads((REPO / "data" / "platforms" / f"{PLATFORM}.toml").read_text())
    replayed = pelt_oracle.replay(lines, capacities, max_khz, tick_us=1_000_000 // platform["hz"])
    assert len(replayed) >= 1000
    by_pid: dict[int, list] = {}
    for s in replayed:
        by_pid.setdefault(s.pid, []).append(s)
    assert sorted(by_pid) == sorted(int(p) for p in a["task_signals"])
    for pid, rows in a["task_signals"].items():
        samples = by_pid[int(pid)]
        assert len(rows) == len(samples), pid
        for (t, cpu, util, load, update_time), s in zip(rows, samples):
            # LISA reads what the trace holds
            assert abs(t * 1e6 - s.time_us) <= 1.0 and (cpu, update_time) == (s.cpu, s.update_time_ns), (pid, t)
            assert (util, load) == (s.traced_util, s.traced_load), (pid, t)
            # the kernel's PELT of the recorded schedule gives the same within 2 units: trace
            # times are whole µs while the engine's PELT clock counts ns, which can move an
            # update by one 1024-ns unit
            assert cpu == s.task_cpu, (pid, t)
            assert abs(util - s.util) <= 2 and abs(load - s.load) <= 2, (pid, t, util, load, s)
    # CPU signals: LISA reads the run queues' signals as traced
    cfs = [ln for ln in lines if ln.event == "sched_pelt_cfs"]
    for cpu, rows in a["cpu_signals"].items():
        traced = [ln.fields for ln in cfs if ln.fields["cpu"] == cpu]
        assert [r[1:] for r in rows] == [[int(f["util"]), int(f["load"]), int(f["update_time"])] for f in traced]
    assert sum(len(rows) for rows in a["cpu_signals"].values()) == len(cfs) >= 1000


@pytest.mark.lisa
def test_lisa_capacities_follow_the_frequency(sched_run):
    _, _, a, _ = sched_run
    info = a["plat_info"]
    khz: dict[int, int] = {}
    changes = sorted([(t, 0, cpu, f) for t, cpu, f in a["frequencies"]] + [(t, 1, *c) for t, *c in a["capacities"]])
    seen = set()
    for _, kind, cpu, *values in changes:
        if kind == 0:
            khz[cpu] = values[0]
            continue
        capacity, orig, curr = values
        seen.add(cpu)
        assert capacity == orig == info["capacities"][str(cpu)]
        assert curr == orig * khz[cpu] // max(info["freqs"][str(cpu)]), (cpu, khz[cpu], curr)
    assert seen == set(range(8))


@pytest.mark.lisa
def test_lisa_frequency_residency_is_the_runs(sched_run):
    """ana.frequency: the time each frequency domain spent at each OPP."""
    run, _, a, _ = sched_run
    for cluster, first_cpu in zip(run["clusters"], ("0", "4")):
        lisa = a["freq_residency"][first_cpu]
        # each transition's time is rounded to the µs in the trace
        tolerance_s = 1e-6 * (cluster["transitions"] + 2)
        used = 0
        for khz, seconds in cluster["residency"]:
            total_s, active_s = lisa.get(str(khz), [0.0, 0.0])
            assert abs(total_s - seconds) <= tolerance_s, (cluster["name"], khz, total_s, seconds)
            assert 0.0 <= active_s <= total_s + 1e-9
            used += seconds > 0
        assert used >= 3, f"{cluster['name']}: schedutil must move the frequency"
        assert sum(t for t, _ in lisa.values()) == pytest.approx(run["time_s"], abs=1e-5)


@pytest.mark.lisa
def test_lisa_idle_residency_is_the_runs_busy_time(sched_run):
    """ana.idle: the time each CPU spent out of idle (cpu_idle state -1) is the CPU's busy time
    in the run's summary; the rest of the run it sat in an idle state."""
    run, _, a, _ = sched_run
    for cpu in run["cpus"]:
        residency = {int(state): s for state, s in a["idle_residency"][str(cpu["cpu"])].items()}
        # each cpu_idle event's time is rounded to the µs in the trace
        tolerance_s = 1e-6 * (cpu["wakeups"] * 2 + 2)
        assert residency.get(-1, 0.0) == pytest.approx(cpu["busy_s"], abs=tolerance_s), cpu["cpu"]
        assert sum(residency.values()) == pytest.approx(run["time_s"], abs=1e-5)
        assert any(state >= 0 and s > 0 for state, s in residency.items()), f"CPU {cpu['cpu']} never idled"
