"""Task groups (the cgroup cpu controller, `hetlab_core::sched::group`) from a workload TOML
through the command line: Android's background group at 52 shares beside the top app's, the
groups' table and JSON, their signals in the trace, and a bad path as one error line. (The
mechanism's rules: crates/hetlab-core/src/sched/group/ and tests/taskgroups.rs.)"""

import json

import pytest

from helpers import hetlab_cli

# Android's cgroups before cpusets took over (system/core/rootdir/init.rc):
# /dev/cpuctl/bg_non_interactive/cpu.shares 52, "5.0 %" beside the apps' 1024
ANDROID = """
name = "android-groups"

[taskgroups."/background"]
shares = 52

[[tasks]]
name = "ui"
affinity = [4]
taskgroup = "/top-app"
phases = [{ instructions = 1e13 }]

[[tasks]]
name = "sync"
threads = 4
affinity = [4]
taskgroup = "/background"
phases = [{ instructions = 1e13 }]
"""


def test_a_background_group_gets_its_share_whatever_its_thread_count(tmp_path):
    path = tmp_path / "android.toml"
    path.write_text(ANDROID)
    trace = tmp_path / "android.trace"
    options = ["--workload", str(path), "--governor", "schedutil", "--scheduler", "smp", "--time-limit", "1"]
    run = hetlab_cli("simulate", *options, "--json", "--trace", str(trace))
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    groups = {g["path"]: g for g in summary["taskgroups"]}
    assert {p: g["shares"] for p, g in groups.items()} == {"/background": 52, "/top-app": 1024}
    # the top app's one thread against the background group's four: 1024 : 52
    assert groups["/top-app"]["cpu_time_s"] == pytest.approx(1024 / 1076, abs=0.01)
    assert groups["/background"]["cpu_time_s"] == pytest.approx(52 / 1076, abs=0.01)
    assert {t["taskgroup"] for t in summary["threads"] if t["name"].startswith("sync")} == {"/background"}
    # the groups' run queues and entities as LISA's sched_tp prints them, the root's as before
    # (schedutil reads PELT: the root's signals are kept)
    text = trace.read_text()
    assert "sched_pelt_cfs:       cpu=4 path=/background load=" in text
    assert "sched_pelt_se:        cpu=4 path=/top-app comm=(null) pid=-1 load=" in text
    assert "sched_pelt_cfs:       cpu=4 path=/ load=" in text
    # the table a person reads
    table = hetlab_cli("simulate", *options)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("task group"))
    assert lines[head].split() == ["task", "group", "cpu.shares", "CPU", "s"]
    assert lines[head + 1].split()[:2] == ["/background", "52"]


@pytest.mark.parametrize(
    "change, says",
    [
        (('taskgroup = "/background"', 'taskgroup = "background"'), "taskgroup 'background' must start with /"),
        (("shares = 52", "shares = 1"), "shares must be within 2..=262144"),
    ],
)
def test_a_bad_group_is_one_error_line(tmp_path, change, says):
    path = tmp_path / "bad.toml"
    path.write_text(ANDROID.replace(*change))
    run = hetlab_cli("simulate", "--workload", str(path))
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("hetlab: error: ") and says in run.stderr
