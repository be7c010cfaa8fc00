"""rt-app JSON workloads (`hetlab_core::rtapp`) through the API and the command line: `run` is
calibrated work that stretches on slower cores while `runtime` is wall time, a timer keeps its
period under load, a `memrun` chase on LITTLE slows with the idle big cluster's clock as
ccbench does, and what is not supported is one error line naming it. (The events' semantics,
one by one: crates/hetlab-core/tests/rtapp_events.rs.)"""

import json

import pytest

from helpers import hetlab_cli
from hetlab import api


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def thread(result: api.SimResult, name: str) -> dict:
    return next(t for t in result.summary["threads"] if t["name"].startswith(name))


def test_run_is_reference_work_that_stretches_on_little(tmp_path):
    # rt-app's own dialect: comments and trailing commas
    doc = write(
        tmp_path,
        "burst.json",
        """/* one burst of calibrated work */
        { "global": { "calibration": 110, },
          "tasks": { "burst": { "loop": 1, "run": 200000, }, }, // 200 ms on the calibration CPU
        }""",
    )
    on = {c: api.simulate("exynos5422", doc, cluster=c, governor="performance") for c in ("big", "little")}
    big_s, little_s = (thread(on[c], "burst")["finish_s"] for c in ("big", "little"))
    # the reference is the biggest core at its top OPP: 200 ms there, longer on the A7
    assert big_s == pytest.approx(0.2, rel=0.02)
    assert little_s > 1.5 * big_s


def test_runtime_is_wall_time_on_little(tmp_path):
    # calibrated on the A15 (CPU4): 100 ms of `run` stretches on the A7, `runtime` does not
    times = {}
    for event in ("run", "runtime"):
        doc = {"global": {"calibration": "CPU4"}, "tasks": {"t": {"loop": 1, event: 100000}}}
        path = write(tmp_path, f"{event}.json", json.dumps(doc))
        times[event] = thread(api.simulate("exynos5422", path, cluster="little", governor="performance"), "t")
    assert times["runtime"]["finish_s"] == pytest.approx(0.1, abs=0.001)
    assert times["run"]["finish_s"] > 1.5 * times["runtime"]["finish_s"]


def test_a_timer_keeps_its_period_under_load(tmp_path):
    periodic = {"loop": 100, "cpus": [0], "run": 1000, "timer": {"ref": "tick", "period": 10000, "mode": "absolute"}}
    hog = {"loop": 1, "cpus": [0], "run": 500000}
    alone = write(tmp_path, "alone.json", json.dumps({"tasks": {"frame": periodic}}))
    loaded = write(tmp_path, "loaded.json", json.dumps({"tasks": {"frame": periodic, "hog": hog}}))
    options = dict(cluster="little", governor="performance", scheduler="smp")
    frame_alone = thread(api.simulate("exynos5422", alone, **options), "frame")
    run = api.simulate("exynos5422", loaded, **options)
    frame, hog_thread = thread(run, "frame"), thread(run, "hog")
    # 100 periods of 10 ms from the start, hog or not: the hog shares the CPU, the timer's
    # expiries stay on their absolute schedule
    for f in (frame_alone, frame):
        assert 1.0 <= f["finish_s"] <= 1.0 + 0.002, f
    assert hog_thread["finish_s"] > frame["finish_s"] / 2 and frame["cpu_time_s"] == pytest.approx(
        frame_alone["cpu_time_s"], rel=0.05
    )


def test_a_fifo_frame_beside_a_hog_keeps_its_latency_and_the_trace_prints_its_priority(tmp_path):
    # 100 frames of 7 ms every 10 ms on CPU0 beside a CFS hog; rt-app's default RT priority 10
    frame = {"loop": 100, "cpus": [0], "run": 7000, "timer": {"ref": "tick", "period": 10000}}
    hog = {"loop": 1, "cpus": [0], "run": 3000000}
    cpu_time = {}
    for policy in ("SCHED_OTHER", "SCHED_FIFO"):
        doc = {"global": {"calibration": "CPU0"}, "tasks": {"frame": {**frame, "policy": policy}, "hog": hog}}
        path = write(tmp_path, f"{policy}.json", json.dumps(doc))
        trace = tmp_path / f"{policy}.trace"
        run = hetlab_cli(
            "simulate", "--workload", path, "--cluster", "little", "--governor", "performance",
            "--scheduler", "smp", "--time-limit", "0.5", "--trace", str(trace), "--json",
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        summary = json.loads(run.stdout)
        frames = next(t for t in summary["threads"] if t["name"].startswith("frame"))
        cpu_time[policy] = frames["cpu_time_s"]
        prios = {line.split("next_prio=")[1] for line in trace.read_text().splitlines() if "next_comm=frame" in line}
        assert prios == ({"89"} if policy == "SCHED_FIFO" else {"120"}), prios
    # FIFO: every frame runs its 7 ms as soon as its period starts, 50 of them in 0.5 s; under
    # CFS the hog takes its fair half and the frames fall behind their timer
    assert cpu_time["SCHED_FIFO"] == pytest.approx(0.35, rel=0.03)
    assert cpu_time["SCHED_OTHER"] < 0.9 * cpu_time["SCHED_FIFO"]


@pytest.mark.parametrize(
    "task, says",
    [
        ({"taskgroup": "bg", "run": 10}, "tasks.t.taskgroup: taskgroup 'bg' must start with /"),
        ({"policy": "SCHED_FIFO", "taskgroup": "/bg", "run": 10}, "rt-app has no taskgroup support for SCHED_FIFO"),
        ({"util_min": 600, "util_max": 500, "run": 10}, "min <= max"),
        ({"policy": "SCHED_DEADLINE", "run": 10}, "tasks.t: a SCHED_DEADLINE runtime of 0 µs is below"),
        ({"policy": "SCHED_RR", "priority": 100, "run": 10}, "tasks.t: a real-time priority is within 1..=99, got 100"),
        ({"memrun": {"type": "scan", "size": 4096, "count": 1}}, "memrun.type must be read, write or chase"),
        ({"phases": {"p": {"loop": 0, "run": 10}}}, "tasks.t.phases.p.loop: 0 makes rt-app run the phase until"),
        ({"loop": 1, "phases": {"p": {"cpus": [99], "run": 10}}}, "a phase's cpus name cpu99"),
    ],
)
def test_what_is_not_supported_is_one_error_line(tmp_path, task, says):
    doc = write(tmp_path, "bad.json", json.dumps({"tasks": {"t": task}}))
    run = hetlab_cli("simulate", "--workload", doc)
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("hetlab: error: ") and says in run.stderr


def test_taskgroups_per_task_and_per_phase_share_the_cpu_by_group(tmp_path):
    # rt-app creates the cgroups and moves each thread itself: "bg" in /bg from its start with
    # four instances, "ui" in /ui for its first phase and in the root group for its second (a
    # phase without a taskgroup would leave it in /ui); all on CPU4 for 1 s
    hog = {"cpus": [4], "run": 10_000_000}
    ui = {
        "cpus": [4],
        "loop": 1,
        "phases": {"in_ui": {"taskgroup": "/ui", "run": 300_000}, "out": {"taskgroup": "/", "run": 300_000}},
    }
    doc = {
        "global": {"duration": 1, "calibration": "CPU4"},
        "tasks": {"bg": {**hog, "instance": 4, "taskgroup": "/bg"}, "ui": ui},
    }
    path = write(tmp_path, "groups.json", json.dumps(doc))
    run = api.simulate("exynos5422", path, governor="performance", scheduler="smp", time_limit_s=1.0)
    groups = {g["path"]: g for g in run.summary["taskgroups"]}
    assert set(groups) == {"/bg", "/ui"} and all(g["shares"] == 1024 for g in groups.values())
    ui_thread, bg_threads = thread(run, "ui"), [t for t in run.summary["threads"] if t["name"].startswith("bg")]
    assert all(t["taskgroup"] == "/bg" for t in bg_threads) and "taskgroup" not in ui_thread
    # in /ui its 300 ms take half the CPU (600 ms): /ui and /bg weigh the same; in the root
    # group the ui thread weighs as much as /bg's entity again
    assert groups["/ui"]["cpu_time_s"] == pytest.approx(0.3, rel=0.01)
    assert ui_thread["cpu_time_s"] == pytest.approx(0.5, rel=0.02)
    assert groups["/bg"]["cpu_time_s"] == pytest.approx(0.5, rel=0.02)


def test_a_forever_loop_of_workless_events_ends_with_an_error(tmp_path):
    # rt-app would spin here; a simulation must not hang on it
    doc = write(tmp_path, "spin.json", json.dumps({"tasks": {"t": {"loop": -1, "resume": "nobody"}}}))
    run = hetlab_cli("simulate", "--workload", doc)
    assert run.returncode != 0 and run.stderr.startswith("hetlab: error: no progress in simulated time")


def test_a_memrun_chase_on_little_slows_with_the_idle_big_clock_like_ccbench(tmp_path):
    # 4 MB, random: the LITTLE L2 misses and every miss snoops the idle big cluster
    chase = {"type": "chase", "size": 4 * 1024 * 1024, "count": 500_000, "stride": 64}
    doc = write(tmp_path, "chase.json", json.dumps({"tasks": {"t": {"loop": 1, "memrun": chase}}}))
    ccbench = "ccbench:size=1048576,pattern=random,iterations=500000"

    def slowdown(workload: str) -> float:
        time_s = {
            big: api.simulate("exynos5422", workload, cluster="little", freq={"little": 1400000, "big": big}).time_s
            for big in (200000, 2000000)
        }
        return time_s[200000] / time_s[2000000]

    chase_slowdown, ccbench_slowdown = slowdown(doc), slowdown(ccbench)
    assert chase_slowdown > 1.5
    assert chase_slowdown == pytest.approx(ccbench_slowdown, rel=0.1)


def test_what_rt_app_ignores_runs_with_one_warning_per_key(tmp_path):
    # rt-app's older examples carry keys its parser never reads (global.frag); a SCHED_OTHER
    # dl-runtime is Linux 6.12's custom slice, which hetlab's kernels do not have
    doc = {
        "global": {"frag": 6, "duration": 1},
        "tasks": {
            "t": {"loop": 10, "run": 1000, "sleep": 1000, "comment": "x"},
            "u": {"dl-runtime": 3000, "loop": 5, "run": 100, "timer": {"ref": "tu", "period": 4000, "slack": 1}},
        },
    }
    run = hetlab_cli("simulate", "--workload", write(tmp_path, "old.json", json.dumps(doc)), "--json")
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("hetlab: warning: ")]
    assert len(warnings) == 4 and len(run.stderr.splitlines()) == 4, run.stderr
    for says in [
        "global.frag: rt-app does not read",
        "tasks.t.comment:",
        "tasks.u.timer.slack:",
        "Linux 6.12's custom",
    ]:
        assert sum(says in w for w in warnings) == 1, says
    assert json.loads(run.stdout)["completed"]


def test_rtapp_logs_are_rt_apps_per_thread_files(tmp_path):
    doc = {
        "global": {"calibration": 150, "log_basename": "demo"},
        "tasks": {"frame": {"instance": 2, "loop": 4, "run": 1500, "timer": {"ref": "unique", "period": 10000}}},
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    run = hetlab_cli(
        "simulate", "--workload", write(tmp_path, "f.json", json.dumps(doc)), "--rtapp-logs", str(logs), "--json"
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in logs.iterdir()) == ["demo-frame-0.log", "demo-frame-1.log"]
    lines = (logs / "demo-frame-1.log").read_text().splitlines()
    assert lines[0].split() == [
        "#idx", "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration", "c_period", "wu_lat"
    ]  # fmt: skip
    rows = [list(map(int, line.split())) for line in lines[1:]]
    assert len(rows) == 4
    for idx, perf, run_us, period, start, end, rel_st, slack, c_duration, c_period, _ in rows:
        # perf: rt-app's loops of calibrated work, in thousands: 1500 µs at 150 ns per loop
        assert (idx, perf, c_duration, c_period) == (1, 10, 1500, 10000)
        assert end - start == period and rel_st == start and 0 < run_us <= period and slack == period - run_us
    not_rtapp = hetlab_cli("simulate", "--workload", "cpu-bound", "--rtapp-logs", str(logs))
    assert not_rtapp.returncode == 2 and "give an rt-app file" in not_rtapp.stderr
