"""A small, strict parser of the ftrace text that hetlab writes (`--trace PATH`).

The layout is the one in shared/reference/ecosystem.md §7: a `# tracer: nop` header and `#`
legend lines, then one line per event without the irq-flags column::

              <idle>-0     [004]   100.000100: sched_switch:         prev_comm=swapper/4 ...
               task0-1001  [004]   100.000150: cpu_frequency:        state=1800000 cpu_id=4
               task0-1001  [004]   100.000150: tracing_mark_write:   C|0|power_mw|12.5

Used by the tests as the reference reading of a trace, to compare with what LISA returns.
Times are kept as integer microseconds (the text has exactly 6 decimals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

LINE_RE = re.compile(
    r"^\s*(?P<comm>\S.*)-(?P<pid>\d+)\s+\[(?P<cpu>\d{3,})\]\s+"
    r"(?P<secs>\d+)\.(?P<usecs>\d{6}): (?P<event>\w+):\s+(?P<body>.*)$"
)
# sched_switch comms may not contain spaces (the writer sanitises them), so plain split works.
KV_RE = re.compile(r"^(?P<key>\w+)=(?P<value>\S+)$")

EVENTS = ["sched_switch", "sched_waking", "cpu_frequency", "cpu_idle"]
# The scheduler events LISA's task-state and load-tracking analyses read.
SCHED_EVENTS = [
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_pelt_se",
    "sched_pelt_cfs",
    "sched_cpu_capacity",
    "sched_overutilized",
]
# Per event, the fields a summary row holds after the time (`__cpu`: the line's CPU).
COLUMNS = {
    "sched_switch": ["__cpu", "prev_pid", "next_pid"],
    "sched_waking": ["__cpu", "pid", "target_cpu"],
    "cpu_frequency": ["cpu_id", "state"],
    "cpu_idle": ["cpu_id", "state"],
    "sched_wakeup": ["__cpu", "pid", "target_cpu"],
    "sched_wakeup_new": ["__cpu", "pid", "target_cpu"],
    "sched_migrate_task": ["__cpu", "pid", "orig_cpu", "dest_cpu"],
    "sched_pelt_se": ["cpu", "path", "pid", "load", "runnable", "util", "update_time"],
    "sched_pelt_cfs": ["cpu", "path", "load", "runnable", "util", "update_time"],
    "sched_cpu_capacity": ["cpu", "capacity", "capacity_orig", "capacity_curr"],
    "sched_overutilized": ["__cpu", "overutilized", "span"],
}


@dataclass
class Line:
    comm: str
    pid: int
    cpu: int
    time_us: int
    event: str
    body: str
    fields: dict = field(default_factory=dict)


@dataclass
class Counter:
    time_us: int
    cpu: int
    pid: int
    name: str
    value: float


class FtraceFormatError(ValueError):
    pass


def parse_text(text: str) -> list[Line]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "# tracer: nop":
        raise FtraceFormatError("first line is not '# tracer: nop'")
    out = []
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        m = LINE_RE.match(raw)
        if m is None:
            raise FtraceFormatError(f"line {lineno}: not an ftrace event line: {raw!r}")
        line = Line(
            comm=m["comm"],
            pid=int(m["pid"]),
            cpu=int(m["cpu"]),
            time_us=int(m["secs"]) * 1_000_000 + int(m["usecs"]),
            event=m["event"],
            body=m["body"],
        )
        if line.event != "tracing_mark_write":
            for token in line.body.split():
                if token == "==>":
                    continue
                kv = KV_RE.match(token)
                if kv is None:
                    raise FtraceFormatError(f"line {lineno}: bad field {token!r} in {raw!r}")
                line.fields[kv["key"]] = kv["value"]
        out.append(line)
    return out


def parse_file(path) -> list[Line]:
    return parse_text(Path(path).read_text(encoding="ascii"))


def counters(lines: list[Line]) -> list[Counter]:
    """The atrace `C|pid|name|value` counters."""
    out = []
    for line in lines:
        if line.event != "tracing_mark_write" or not line.body.startswith("C|"):
            continue
        parts = line.body.split("|")
        if len(parts) != 4:
            raise FtraceFormatError(f"bad counter {line.body!r}")
        out.append(Counter(line.time_us, line.cpu, int(parts[1]), parts[2], float(parts[3])))
    return out


def _value(line: Line, column: str):
    """A field as a summary holds it: an integer (`0x` hexadecimal too, as LISA reads a CPU
    mask), or the text when it is not a number."""
    text = str(line.cpu) if column == "__cpu" else line.fields[column]
    if text.startswith("0x"):
        return int(text, 16)
    return int(text) if text.lstrip("-").isdigit() else text


def summary(lines: list[Line], events: list[str] = EVENTS) -> dict:
    """Same shape as tests/lisa_read_trace.py's output, times as integer µs instead of seconds:
    per event of `events`, rows [time, *COLUMNS[event]]."""
    by_event = {e: [line for line in lines if line.event == e] for e in events}
    out = {"counts": {e: len(v) for e, v in by_event.items()}}
    for e in events:
        out[e] = [[ln.time_us, *(_value(ln, c) for c in COLUMNS[e])] for ln in by_event[e]]
    return out


def check_consistency(lines: list[Line]) -> None:
    """Invariants of a hetlab trace: sorted times, and each line's comm-pid is the task current
    on its CPU (tracked from sched_switch, `<idle>-0` at first)."""
    current: dict[int, int] = {}
    prev_t = -1
    for ln in lines:
        if ln.time_us < prev_t:
            raise FtraceFormatError(f"time goes backwards at {ln}")
        prev_t = ln.time_us
        cur = current.get(ln.cpu, 0)
        if ln.pid != cur:
            raise FtraceFormatError(f"prefix pid {ln.pid} but pid {cur} is current on cpu {ln.cpu}: {ln}")
        if (ln.pid == 0) != (ln.comm == "<idle>"):
            raise FtraceFormatError(f"idle task must print as <idle>-0: {ln}")
        if ln.event == "sched_switch":
            if int(ln.fields["prev_pid"]) != cur:
                raise FtraceFormatError(f"prev_pid is not the current task: {ln}")
            current[ln.cpu] = int(ln.fields["next_pid"])
