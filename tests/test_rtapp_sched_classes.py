"""rt-app's SCHED_IDLE and SCHED_DEADLINE through the API and the command line (the mechanisms
one by one: crates/hetlab-core/src/sched/cfs.rs, sched/deadline.rs and engine/tests.rs)."""

import json

import pytest

from helpers import hetlab_cli
from hetlab import api


def write(tmp_path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def thread(result: api.SimResult, name: str) -> dict:
    return next(t for t in result.summary["threads"] if t["name"].startswith(name))


def test_sched_idle_gets_its_weight_of_3_beside_a_normal_task(tmp_path):
    # two hogs on CPU4 for 2 s: 1024/(1024+3) of it to the normal one; the SCHED_IDLE one runs one
    # 5 ms tick (HZ 200) per turn, a turn being 5·1024/3 ms of the other's, so once or twice
    hog = {"cpus": [4], "run": 10_000_000}
    doc = {
        "global": {"duration": 2, "calibration": "CPU4"},
        "tasks": {"normal": hog, "idle": {**hog, "policy": "SCHED_IDLE"}},
    }
    options = dict(governor="performance", scheduler="smp")
    run = api.simulate("exynos5422", write(tmp_path, "idle.json", doc), **options)
    normal, idle = thread(run, "normal")["cpu_time_s"], thread(run, "idle")["cpu_time_s"]
    assert normal / (normal + idle) == pytest.approx(1024 / 1027, abs=0.003)
    assert 0.004 < idle < 0.011
    # in a task group of its own, its weight counts within the group only: the group's entity
    # (cpu.shares 1024) shares the CPU half and half with the normal task
    doc["tasks"]["idle"]["taskgroup"] = "/bg"
    run = api.simulate("exynos5422", write(tmp_path, "grouped.json", doc), **options)
    normal, idle = thread(run, "normal")["cpu_time_s"], thread(run, "idle")["cpu_time_s"]
    assert normal / (normal + idle) == pytest.approx(0.5, abs=0.01)


def test_a_toml_task_takes_policy_idle_or_batch(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text(
        'name = "w"\n[[tasks]]\nname = "bg"\npolicy = "idle"\naffinity = [4]\n[[tasks.phases]]\ninstructions = 1e8\n'
    )
    run = hetlab_cli("simulate", "--workload", str(toml), "--json")
    assert run.returncode == 0, run.stderr
    batch = tmp_path / "batch.toml"
    batch.write_text(toml.read_text().replace('"idle"', '"batch"'))
    run = hetlab_cli("simulate", "--workload", str(batch), "--json")
    assert run.returncode == 0, run.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace('"idle"', '"ext"'))
    run = hetlab_cli("simulate", "--workload", str(bad))
    assert run.returncode != 0 and run.stderr.count("\n") == 1
    assert run.stderr.startswith("hetlab: error: ") and "unknown policy 'ext'" in run.stderr


DL_OPTIONS = dict(cluster="big", governor="schedutil", scheduler="eas")


def test_a_deadline_task_gets_its_runtime_each_period(tmp_path):
    # linsched-2b2l's big cluster (2 CPUs of capacity 1024, one OPP, HZ 1000): 3 ms of each 10 ms
    # for a task that wants 5 ms each period, so 300 ms of CPU time in 1 s
    task = {
        "policy": "SCHED_DEADLINE",
        "dl-runtime": 3000,
        "dl-period": 10000,
        "run": 5000,
        "timer": {"ref": "t", "period": 10000},
    }
    doc = {"global": {"duration": 1, "calibration": "CPU2"}, "tasks": {"dl": task}}
    run = api.simulate("linsched-2b2l", write(tmp_path, "dl.json", doc), **DL_OPTIONS)
    assert thread(run, "dl")["cpu_time_s"] == pytest.approx(0.3, abs=0.0015)


def test_three_deadline_tasks_share_two_cpus_by_global_edf(tmp_path):
    task = {
        "instance": 3,
        "policy": "SCHED_DEADLINE",
        "dl-runtime": 6000,
        "dl-period": 10000,
        "run": 6000,
        "timer": {"ref": "unique", "period": 10000},
    }
    doc = {"global": {"duration": 1, "calibration": "CPU2"}, "tasks": {"t": task}}
    run = api.simulate("linsched-2b2l", write(tmp_path, "edf.json", doc), **DL_OPTIONS)
    times = [t["cpu_time_s"] for t in run.summary["threads"] if t["name"].startswith("t-")]
    assert times == pytest.approx([0.6] * 3, abs=0.012)


@pytest.mark.parametrize(
    "task, options, says",
    [
        ({"instance": 4}, DL_OPTIONS, "task 't': SCHED_DEADLINE admission refused"),
        ({}, dict(cluster="big", scheduler="smp"), "SCHED_DEADLINE needs Linux 3.14+"),
        ({"cpus": [2]}, DL_OPTIONS, "a SCHED_DEADLINE task's affinity must span its root domain"),
        ({"dl-runtime": 20000}, DL_OPTIONS, "runtime <= deadline <= period, got 20000 / 10000 / 10000"),
        ({"dl-period": 10_000_000}, DL_OPTIONS, "outside 100..=4194304 µs"),
    ],
)
def test_deadline_refusals_are_one_error_line(tmp_path, task, options, says):
    base = {"policy": "SCHED_DEADLINE", "dl-runtime": 5000, "dl-period": 10000, "loop": 1, "run": 100}
    doc = write(tmp_path, "bad.json", {"tasks": {"t": {**base, **task}}})
    argv = ["simulate", "--platform", "linsched-2b2l", "--workload", doc]
    for key, value in options.items():
        argv += [f"--{key}", value]
    run = hetlab_cli(*argv)
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("hetlab: error: ") and says in run.stderr, run.stderr


def test_a_toml_task_takes_policy_deadline_and_the_trace_prints_prio_minus_1(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text(
        'name = "w"\n[[tasks]]\nname = "dl"\npolicy = "deadline"\ndl_runtime_us = 2000\ndl_period_us = 10000\n'
        "[[tasks.phases]]\nrun_us = 1000\nperiod_us = 10000\ncount = 10\n"
    )
    trace = tmp_path / "w.trace"
    argv = ["simulate", "--platform", "linsched-2b2l", "--workload", str(toml), "--trace", str(trace)]
    run = hetlab_cli(*argv, "--cluster", "big", "--governor", "schedutil", "--scheduler", "eas")
    assert run.returncode == 0, run.stderr
    assert "next_comm=dl-0 next_pid=1000 next_prio=-1" in trace.read_text()
