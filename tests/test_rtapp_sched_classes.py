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
        "tasks": {"normal": hog, "idle": {**hog, "policy": "SCHED_IDLE", "taskgroup": "/bg"}},
    }
    run = api.simulate("exynos5422", write(tmp_path, "idle.json", doc), governor="performance", scheduler="smp")
    normal, idle = thread(run, "normal")["cpu_time_s"], thread(run, "idle")["cpu_time_s"]
    assert normal / (normal + idle) == pytest.approx(1024 / 1027, abs=0.003)
    assert 0.004 < idle < 0.011


def test_a_toml_task_takes_policy_idle(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text(
        'name = "w"\n[[tasks]]\nname = "bg"\npolicy = "idle"\naffinity = [4]\n'
        "[[tasks.phases]]\ninstructions = 1e8\n"
    )
    run = hetlab_cli("simulate", "--workload", str(toml), "--json")
    assert run.returncode == 0, run.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace('"idle"', '"batch"'))
    run = hetlab_cli("simulate", "--workload", str(bad))
    assert run.returncode != 0 and run.stderr.count("\n") == 1
    assert run.stderr.startswith("hetlab: error: ") and "unknown policy 'batch'" in run.stderr
