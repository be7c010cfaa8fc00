#!/usr/bin/env python3
"""Run LISA's rt-app analysis (``trace.ana.rta``) on a hetlab trace and print what it finds as
JSON on stdout.

Run it with the LISA venv's interpreter (``scripts/lisa-venv.sh`` prints its path):

    .venv-lisa/bin/python tests/lisa_rtapp_analysis.py TRACE PLAT_INFO_YML [--format trace-cmd]

Output (times in seconds, the trace's own timestamps)::

    {"window": [start, end],                                   # rtapp_window (rtapp_main)
     "tasks": {comm: {"pid": pid,
                      "task": [[time, event], ...],              # df_rtapp_task
                      "phases": [[start, duration, phase], ...], # df_phases
                      "events": N,                               # df_rtapp_event rows
                      "stats": [[time, period, run, slack, c_period, c_run, perf_index], ...],
                      "active_s": s}}}                           # ana.tasks: time running

hetlab's trace is the kernel's `trace` text, where a write to trace_marker prints as
``tracing_mark_write: <text>`` (the ``print`` event's format: the writing function, then the
text). LISA takes user-space events (``userspace@rtapp_loop``, ...) from the ``print`` event as
``trace-cmd report`` shows it, which its text parser for the kernel's format does not produce.
So the lines are read as they are, with LISA's ``HRTxtTraceParser``, and handed back to LISA as
the ``print`` events they are (``ip`` tracing_mark_write, ``buf`` the text) through its
``MockTraceParser``: LISA's own meta-event parsing and rt-app analysis then run on them.

With ``--format trace-cmd`` the trace is hetlab's ``trace-cmd report -R`` layout
(``hetlab simulate --trace-format trace-cmd``), which LISA's ``TxtTraceParser`` reads as it is,
markers included: no help from this script.

Exit status 2 on a usage error, 1 if LISA fails.
"""

import argparse
import sys

from lisa_common import print_json, read_text_trace

SCHED_EVENTS = ["sched_switch", "sched_wakeup", "sched_wakeup_new", "sched_waking"]


def kernel_format_trace(trace_path, plat_info_path):
    """The kernel's format: its markers handed back to LISA as ``print`` events (above)."""
    from lisa.trace import MockTraceParser, Trace

    text = read_text_trace(trace_path, plat_info_path, [*SCHED_EVENTS, "tracing_mark_write"])
    dfs = {event: text.df_event(event) for event in SCHED_EVENTS}
    marks = text.df_event("tracing_mark_write")
    dfs["print"] = marks.assign(ip="tracing_mark_write")[["__cpu", "__pid", "__comm", "ip", "buf"]]
    trace = Trace(
        parser=MockTraceParser(dfs, time_range=(text.start, text.end)),
        plat_info=text.plat_info,
        normalize_time=False,
        enable_swap=False,
    )
    return trace, text


def trace_cmd_trace(trace_path, plat_info_path):
    """``trace-cmd report -R``'s layout, read by LISA's own parser for it."""
    from lisa.platforms.platinfo import PlatformInfo
    from lisa.trace import Trace, TxtTraceParser

    trace = Trace(
        trace_path,
        plat_info=PlatformInfo.from_yaml_map(plat_info_path),
        parser=TxtTraceParser.from_txt_file,
        normalize_time=False,
        enable_swap=False,
    )
    return trace, trace


def analyse(trace_path, plat_info_path, trace_format):
    from lisa.analysis.tasks import TaskState

    read = trace_cmd_trace if trace_format == "trace-cmd" else kernel_format_trace
    trace, text = read(trace_path, plat_info_path)
    rta = trace.ana.rta
    start, end = rta.rtapp_window
    out = {"window": [float(start), float(end)], "tasks": {}}
    for task in rta.rtapp_tasks:
        phases = rta.df_phases(task)
        stats = rta.df_rtapp_stats(task)
        states = text.ana.tasks.df_task_states(task.pid)
        task_events = rta.df_rtapp_task(task)
        stat_columns = ["period", "run", "slack", "c_period", "c_run", "perf_index"]
        out["tasks"][task.comm] = {
            "pid": int(task.pid),
            "task": [[float(t), str(e)] for t, e in zip(task_events.index, task_events["event"])],
            "phases": [
                [float(t), float(d), int(p)] for t, d, p in zip(phases.index, phases["duration"], phases["phase"])
            ],
            "events": len(rta.df_rtapp_event(task)),
            "stats": [[float(t), *map(float, row)] for t, row in zip(stats.index, stats[stat_columns].to_numpy())],
            "active_s": float(states["delta"][states["curr_state"] == TaskState.TASK_ACTIVE].sum()),
        }
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("plat_info")
    parser.add_argument("--format", choices=["ftrace", "trace-cmd"], default="ftrace", help="the trace's layout")
    args = parser.parse_args()
    return print_json(analyse, args.trace, args.plat_info, args.format)


if __name__ == "__main__":
    sys.exit(main())
