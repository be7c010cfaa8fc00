#!/usr/bin/env python3
"""Read an ftrace text trace with ARM's LISA and print a JSON summary on stdout.

Run it with the LISA venv's interpreter (``scripts/lisa-venv.sh`` prints its path), not with the
project's Python: ``lisa-linux==3.1.0`` needs its own pins (constraints-lisa.txt, see
shared/reference/ecosystem.md §7).

    .venv-lisa/bin/python tests/lisa_read_trace.py TRACE [--parser hrtxt|systrace] [--sched]

Output (times in seconds as LISA reports them, i.e. the trace's own timestamps)::

    {"parser": "HRTxtTraceParser", "lisa_version": "3.1.0",
     "counts": {"sched_switch": N, "sched_waking": N, "cpu_frequency": N, "cpu_idle": N},
     "sched_switch":  [[time, cpu, prev_pid, next_pid], ...],
     "sched_waking":  [[time, cpu, pid, target_cpu], ...],
     "cpu_frequency": [[time, cpu_id, state], ...],
     "cpu_idle":      [[time, cpu_id, state], ...]}

With ``--sched`` the scheduler events follow, each as [time, *its COLUMNS] (strings stay
strings: the PELT events' ``path``, sched_overutilized's ``span``).

An event absent from the trace has count 0 and no rows. Exit status 2 on a usage error, 1 if
LISA fails to read the trace.
"""

import argparse
import json
import logging
import sys
import warnings
from pathlib import Path

# The events and the fields a summary row holds: one definition, shared with our own parser.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ftrace_text import COLUMNS, EVENTS, SCHED_EVENTS  # noqa: E402


def _plain(value):
    """A LISA cell as JSON: text (bytes or str) as str, numbers and booleans as int."""
    if isinstance(value, bytes):
        return value.decode("ascii")
    if isinstance(value, str):
        return value
    return int(value)


def _col(df, *names):
    """The first of `names` that is a column of `df` (LISA renames some fields in places)."""
    for name in names:
        if name in df.columns:
            return df[name]
    raise KeyError(f"none of {names} in columns {list(df.columns)}")


def _rows(event, df):
    times = [float(t) for t in df.index]
    # LISA renames a few fields of the base events; the others keep the trace's names
    aliases = {"__cpu": ("__cpu", "cpu"), "cpu_id": ("cpu_id", "cpu"), "state": ("state", "frequency")}
    cols = [_col(df, *aliases.get(c, (c,))) for c in COLUMNS[event]]
    values = [[_plain(v) for v in col.tolist()] for col in cols]
    return [[t, *vals] for t, *vals in zip(times, *values)]


def summarize(path, parser_name, events=EVENTS):
    from importlib.metadata import version

    from lisa.trace import HRTxtTraceParser, MissingTraceEventError, SysTraceParser, Trace

    parser_cls = {"hrtxt": HRTxtTraceParser, "systrace": SysTraceParser}[parser_name]
    trace = Trace(
        path,
        parser=parser_cls.from_txt_file,
        events=events,
        normalize_time=False,
        # No `.<trace>.lisa-swap` directory next to the trace.
        enable_swap=False,
    )
    out = {
        "parser": parser_cls.__name__,
        "lisa_version": version("lisa-linux"),
        "counts": {},
    }
    for event in events:
        try:
            df = trace.df_event(event)
        except MissingTraceEventError:
            rows = []
        else:
            rows = _rows(event, df)
        out["counts"][event] = len(rows)
        out[event] = rows
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="ftrace text file (# tracer: nop, no irq-flags column)")
    ap.add_argument("--parser", choices=["hrtxt", "systrace"], default="hrtxt")
    ap.add_argument("--sched", action="store_true", help="also the scheduler events (SCHED_EVENTS)")
    args = ap.parse_args(argv)

    # LISA 3.1.0 on pandas 2.1 emits FutureWarnings per column; keep stdout JSON-only and
    # stderr readable.
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        summary = summarize(args.trace, args.parser, EVENTS + SCHED_EVENTS if args.sched else EVENTS)
    except Exception as exc:  # report, do not dump a pandas traceback into the JSON stream
        print(f"lisa_read_trace: LISA could not read {args.trace}: {exc!r}", file=sys.stderr)
        return 1
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
