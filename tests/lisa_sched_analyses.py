#!/usr/bin/env python3
"""Run LISA's task-state, load-tracking, frequency and idle analyses on a hetlab trace and print what
they find as JSON on stdout.

Run it with the LISA venv's interpreter (``scripts/lisa-venv.sh`` prints its path), not with the
project's Python: ``lisa-linux==3.1.0`` needs its own pins (constraints-lisa.txt).

    .venv-lisa/bin/python tests/lisa_sched_analyses.py TRACE PLAT_INFO_YML

The trace is read with ``HRTxtTraceParser`` and the platform info with
``PlatformInfo.from_yaml_map`` (hetlab writes it beside the trace). Output (times in seconds,
the trace's own timestamps)::

    {"lisa_version": "3.1.0",
     "plat_info": {"cpus-count": N, "capacities": {cpu: orig}, "freq-domains": [[cpu, ...], ...],
                   "freqs": {cpu: [kHz, ...]}},
     "tasks": {pid: {"comm": str, "residency": {cpu: s}, "wakeups": N,      # ana.tasks
                     "first_active": time or null}},
     "migrations": [[time, pid, orig_cpu, dest_cpu], ...],                  # sched_migrate_task
     "task_signals": {pid: [[time, cpu, util, load, update_time], ...]},    # ana.load_tracking
     "cpu_signals": {cpu: [[time, util, load, update_time], ...]},          # ana.load_tracking
     "capacities": [[time, cpu, capacity, capacity_orig, capacity_curr], ...],
     "frequencies": [[time, cpu, kHz], ...],                                # ana.frequency
     "freq_residency": {first_cpu_of_domain: {kHz: [total_s, active_s]}},   # ana.frequency
     "idle_residency": {cpu: {state: s}},  # ana.idle; state -1: not idle
     "overutilized": [[time, overutilized, len_s], ...]}                    # ana.status

Exit status 2 on a usage error, 1 if LISA fails.
"""

import argparse
import sys

from lisa_common import print_json, read_text_trace

EVENTS = [
    "sched_switch",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_waking",
    "sched_migrate_task",
    "sched_pelt_se",
    "sched_pelt_cfs",
    "sched_cpu_capacity",
    "sched_overutilized",
    "cpu_frequency",
    "cpu_idle",
]


def _records(df, columns):
    """Rows of `df` as [time, *columns] with plain Python numbers."""
    out = []
    for t, *values in zip(df.index.tolist(), *(df[c].tolist() for c in columns)):
        out.append([float(t), *(v if isinstance(v, str) else int(v) for v in values)])
    return out


def analyse(trace_path, plat_info_path):
    from importlib.metadata import version

    from lisa.analysis.tasks import TaskState
    from lisa.trace import MissingTraceEventError

    trace = read_text_trace(trace_path, plat_info_path, EVENTS)
    plat_info = trace.plat_info
    out = {
        "lisa_version": version("lisa-linux"),
        "plat_info": {
            "cpus-count": int(plat_info["cpus-count"]),
            "capacities": {int(c): int(v) for c, v in plat_info["cpu-capacities"]["orig"].items()},
            "freq-domains": [[int(c) for c in d] for d in plat_info["freq-domains"]],
            "freqs": {int(c): [int(f) for f in fs] for c, fs in plat_info["freqs"].items()},
        },
    }

    # Task states: each task's time ACTIVE per CPU, and its wake-ups.
    tasks = trace.ana.tasks
    wakeups = tasks.df_tasks_wakeups()["wakeups"]
    out["tasks"] = {}
    for task in trace.task_ids:
        if task.pid == 0:
            continue
        residency = tasks.df_task_total_residency(task.pid)["runtime"]
        states = tasks.df_task_states(task.pid)
        active = states.index[states["curr_state"] == TaskState.TASK_ACTIVE]
        out["tasks"][int(task.pid)] = {
            "comm": task.comm,
            "residency": {int(cpu): float(s) for cpu, s in residency.items()},
            "wakeups": int(wakeups.get(task.pid, 0)),
            "first_active": float(active[0]) if len(active) else None,
        }
    out["migrations"] = _records(trace.df_event("sched_migrate_task"), ["pid", "orig_cpu", "dest_cpu"])

    # Load tracking: PELT signals of tasks and CPUs, and CPU capacities.
    lt = trace.ana.load_tracking
    util, load = lt.df_tasks_signal("util"), lt.df_tasks_signal("load")
    assert (util.index == load.index).all() and (util["pid"] == load["pid"]).all()
    util = util.assign(load=load["load"])
    out["task_signals"] = {}
    for pid, df in util.groupby("pid", observed=True, sort=True):
        out["task_signals"][int(pid)] = _records(df, ["cpu", "util", "load", "update_time"])
    util, load = lt.df_cpus_signal("util"), lt.df_cpus_signal("load")
    util = util.assign(load=load["load"])
    out["cpu_signals"] = {
        int(cpu): _records(df, ["util", "load", "update_time"])
        for cpu, df in util.groupby("cpu", observed=True, sort=True)
    }
    out["capacities"] = _records(lt.df_cpus_signal("capacity"), ["cpu", "capacity", "capacity_orig", "capacity_curr"])

    # Frequency: transitions per CPU and the time each domain spent at each frequency.
    freq = trace.ana.frequency
    out["frequencies"] = _records(freq.df_cpus_frequency(signals_init=False), ["cpu", "frequency"])
    out["freq_residency"] = {}
    for domain in plat_info["freq-domains"]:
        df = freq.df_domain_frequency_residency(domain[0])
        out["freq_residency"][int(domain[0])] = {
            int(khz): [float(row.total_time), float(row.active_time)] for khz, row in df.iterrows()
        }

    # Idle: the time each CPU spent in each cpu_idle state (-1: not idle).
    idle = trace.ana.idle
    out["idle_residency"] = {
        cpu: {int(state): float(row.time) for state, row in idle.df_cpu_idle_state_residency(cpu).iterrows()}
        for cpu in range(int(plat_info["cpus-count"]))
    }

    try:
        ou = trace.ana.status.df_overutilized()
    except MissingTraceEventError:
        out["overutilized"] = []
    else:
        out["overutilized"] = [[float(t), int(o), float(n)] for t, o, n in zip(ou.index, ou["overutilized"], ou["len"])]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="hetlab ftrace text trace")
    ap.add_argument("plat_info", help="its LISA platform info (<trace>.plat_info.yml)")
    args = ap.parse_args(argv)
    return print_json(analyse, args.trace, args.plat_info)


if __name__ == "__main__":
    sys.exit(main())
