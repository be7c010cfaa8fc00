"""An independent PELT, in exact Python integers from the kernel's kernel/sched/pelt.c, replayed
over the schedule a hetlab trace records, for the test that checks the task signals LISA's
load-tracking analysis reads (`sched_pelt_se`) against the run. hetlab itself computes PELT only
in Rust (`crates/hetlab-core/src/sched/pelt.rs`).

What is replayed is the engine's documented PELT (sched/pelt.rs): 1024-ns units, 1024-unit
periods, `decay_load` with the kernel's `runnable_avg_yN_inv` table, `util_sum` scaled by the
CPU's `cur/max` frequency and its capacity, the 3.x runnable/period sums scaled by frequency,
new tasks starting at LOAD_AVG_MAX runnable and 0 utilisation, and `attach_entity_load_avg`'s
`util_sum = util_avg * divider` on migration. The schedule (who runs, waits or sleeps where,
and the CPU frequencies) comes from the trace's sched_switch, sched_waking/sched_wakeup(_new),
sched_migrate_task and cpu_frequency lines; updates happen at those events, at the scheduler
tick (every `tick_us`, jiffies-aligned, on the CPUs running a task) and at the traced PELT
samples' `update_time`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LOAD_AVG_PERIOD = 32
LOAD_AVG_MAX = 47742
SCALE = 1024

# y^n * 2^32, n = 0..31 (kernel/sched/sched-pelt.h, runnable_avg_yN_inv)
RUNNABLE_AVG_YN_INV = [
    0xFFFFFFFF, 0xFA83B2DA, 0xF5257D14, 0xEFE4B99A, 0xEAC0C6E6, 0xE5B906E6, 0xE0CCDEEB, 0xDBFBB796,
    0xD744FCC9, 0xD2A81D91, 0xCE248C14, 0xC9B9BD85, 0xC5672A10, 0xC12C4CC9, 0xBD08A39E, 0xB8FBAF46,
    0xB504F333, 0xB123F581, 0xAD583EE9, 0xA9A15AB4, 0xA5FED6A9, 0xA2704302, 0x9EF5325F, 0x9B8D39B9,
    0x9837F050, 0x94F4EFA8, 0x91C3D373, 0x8EA4398A, 0x8B95C1E3, 0x88980E80, 0x85AAC367, 0x82CD8698,
]  # fmt: skip

# kernel/sched/core.c sched_prio_to_weight, nice -20..19
PRIO_TO_WEIGHT = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
    1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
    110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
]  # fmt: skip


def weight_of_prio(prio: int) -> int:
    return PRIO_TO_WEIGHT[prio - 100]


def decay_load(val: int, n: int) -> int:
    if n > LOAD_AVG_PERIOD * 63:
        return 0
    val >>= n // LOAD_AVG_PERIOD
    return (val * RUNNABLE_AVG_YN_INV[n % LOAD_AVG_PERIOD]) >> 32


def _segments(periods: int, d1: int, d3: int) -> int:
    return decay_load(d1, periods) + (LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024) + d3


@dataclass
class Avg:
    """`struct sched_avg` of a new task (created at time 0)."""

    last_update_ns: int = 0
    period_contrib: int = 0
    runnable_sum: int = LOAD_AVG_MAX
    usage_sum: int = LOAD_AVG_MAX
    period_sum: int = LOAD_AVG_MAX
    util_sum: int = 0
    util_avg: int = 0

    def divider(self) -> int:
        return LOAD_AVG_MAX - 1024 + self.period_contrib

    def update(self, now_ns: int, runnable: bool, running: bool, freq_scale: int, cpu_scale: int) -> None:
        if now_ns <= self.last_update_ns:
            return
        delta = (now_ns - self.last_update_ns) >> 10
        if delta == 0:
            return
        self.last_update_ns += delta << 10
        contrib = delta
        total = delta + self.period_contrib
        periods = total // 1024
        if periods:
            self.runnable_sum = decay_load(self.runnable_sum, periods)
            self.usage_sum = decay_load(self.usage_sum, periods)
            self.period_sum = decay_load(self.period_sum, periods)
            self.util_sum = decay_load(self.util_sum, periods)
            contrib = _segments(periods, 1024 - self.period_contrib, total % 1024)
        self.period_contrib = total % 1024
        scaled = (contrib * freq_scale) >> 10
        self.period_sum += contrib
        if runnable:
            self.runnable_sum += scaled
        if running:
            self.usage_sum += scaled
            self.util_sum += scaled * cpu_scale
        self.util_avg = self.util_sum // self.divider()

    def attach(self) -> None:
        """`attach_entity_load_avg`: the sum restated from the average (the remainder is lost)."""
        self.util_sum = self.util_avg * self.divider()

    def load(self, weight: int) -> int:
        """The 3.x `load_avg_contrib`."""
        return self.runnable_sum * weight // (self.period_sum + 1)


@dataclass
class _Task:
    avg: Avg = field(default_factory=Avg)
    state: str = "sleeping"  # sleeping | runnable | running
    cpu: int = 0
    weight: int = 1024


@dataclass
class Sample:
    """A traced `sched_pelt_se` and what the replay computes at that point."""

    time_us: int
    pid: int
    cpu: int
    update_time_ns: int
    traced_util: int
    traced_load: int
    # the replay's: the CPU the task is on, its util_avg and load
    task_cpu: int
    util: int
    load: int


def replay(lines, capacities: dict[int, int], max_khz: dict[int, int], tick_us: int) -> list[Sample]:
    """PELT of every task over the schedule in `lines` (tests/ftrace_text.py's parse of a hetlab
    trace, file order) on CPUs of `capacities` and top frequencies `max_khz`, with a scheduler
    tick every `tick_us`; returns one Sample per sched_pelt_se line."""
    tasks: dict[int, _Task] = {}
    khz: dict[int, int] = {}
    samples = []
    next_tick_us = tick_us

    def task(pid: int, prio: str | None = None) -> _Task:
        t = tasks.setdefault(pid, _Task())
        if prio is not None:
            t.weight = weight_of_prio(int(prio))
        return t

    def update(t: _Task, now_ns: int) -> None:
        cpu = t.cpu
        freq_scale = khz.get(cpu, max_khz[cpu]) * SCALE // max_khz[cpu]
        if t.state == "sleeping":
            t.avg.update(now_ns, False, False, SCALE, SCALE)
        else:
            t.avg.update(now_ns, True, t.state == "running", freq_scale, capacities[cpu])

    for ln in lines:
        # ticks due before this line (a tick at the time of events comes after them)
        while next_tick_us < ln.time_us:
            for t in tasks.values():
                if t.state == "running":
                    update(t, next_tick_us * 1000)
            next_tick_us += tick_us
        f, now_ns = ln.fields, ln.time_us * 1000
        if ln.event == "cpu_frequency":
            khz[int(f["cpu_id"])] = int(f["state"])
        elif ln.event in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            t = task(int(f["pid"]), f["prio"])
            update(t, now_ns)
            if ln.event != "sched_waking":
                t.state, t.cpu = "runnable", int(f["target_cpu"])
        elif ln.event == "sched_migrate_task":
            t = task(int(f["pid"]), f["prio"])
            update(t, now_ns)
            t.cpu = int(f["dest_cpu"])
            t.avg.attach()
        elif ln.event == "sched_switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            if prev:
                t = task(prev, f["prev_prio"])
                update(t, now_ns)
                t.state = "runnable" if f["prev_state"].startswith("R") else "sleeping"
            if nxt:
                t = task(nxt, f["next_prio"])
                update(t, now_ns)
                t.state, t.cpu = "running", ln.cpu
        elif ln.event == "sched_pelt_se":
            pid = int(f["pid"])
            t = task(pid)
            update(t, int(f["update_time"]))
            samples.append(
                Sample(
                    ln.time_us,
                    pid,
                    int(f["cpu"]),
                    int(f["update_time"]),
                    int(f["util"]),
                    int(f["load"]),
                    t.cpu,
                    t.avg.util_avg,
                    t.avg.load(t.weight),
                )
            )
    return samples
