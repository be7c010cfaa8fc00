//! The scheduler's trace events beyond context switches, built from the engine's state where
//! the kernel's tracepoints fire: task migrations (`set_task_cpu`), wake-ups, PELT signals of
//! tasks and run queues (when an update crossed a period, `___update_load_avg`, and at
//! attach/detach), CPU capacities (at boot, at a frequency change, when the CPU map moves a
//! logical CPU onto another core type) and the placement's over-utilisation state. Nothing is
//! computed unless a trace is being recorded.

use super::Engine;
use crate::sched::pelt::SchedAvg;
use crate::trace::{PeltSignals, TraceEvent};

impl Engine<'_> {
    fn tracing(&self) -> bool {
        self.out.trace.is_some()
    }

    /// `t` moves from `from` to `to` (`sched_migrate_task`), seen from `on_cpu`.
    pub(super) fn trace_migrate(&mut self, t: usize, from: usize, to: usize, on_cpu: usize) {
        if from == to || !self.tracing() {
            return;
        }
        let (time_us, tid) = (self.now_us, self.threads[t].tid);
        self.out.trace(TraceEvent::SchedMigrateTask { time_us, cpu: on_cpu, tid, orig_cpu: from, dest_cpu: to });
    }

    /// `try_to_wake_up` begins for `t` on `waker_cpu`; the task is still on its last CPU.
    pub(super) fn trace_waking(&mut self, t: usize, waker_cpu: usize) {
        let (time_us, tid, target_cpu) = (self.now_us, self.threads[t].tid, self.sched.entities[t].cpu);
        self.out.trace(TraceEvent::SchedWaking { time_us, waker_cpu, tid, target_cpu });
    }

    /// `t` is runnable on the CPU it was placed on (`sched_wakeup`, `sched_wakeup_new` when new).
    pub(super) fn trace_wakeup(&mut self, t: usize, new_task: bool) {
        let (time_us, tid, cpu) = (self.now_us, self.threads[t].tid, self.sched.entities[t].cpu);
        self.out.trace(TraceEvent::SchedWakeup { time_us, cpu, tid, target_cpu: cpu, new_task });
    }

    /// `t`'s PELT signals as they are now (`sched_pelt_se`).
    pub(super) fn trace_pelt_se(&mut self, t: usize) {
        if !self.tracing() {
            return;
        }
        let se = &self.sched.entities[t];
        let signals = pelt_signals(&se.avg, se.avg.load_avg_contrib(se.weight));
        let (time_us, cpu, tid) = (self.now_us, se.cpu, self.threads[t].tid);
        self.out.trace(TraceEvent::SchedPeltSe { time_us, cpu, tid, signals });
    }

    /// `cpu`'s run-queue signals as they are now (`sched_pelt_cfs`); its load is the sum of
    /// its queued entities' loads (3.x `runnable_load_avg`).
    pub(super) fn trace_pelt_cfs(&mut self, cpu: usize) {
        if !self.tracing() {
            return;
        }
        let rq = &self.sched.rqs[cpu];
        let e = &self.sched.entities;
        let load = rq.curr.iter().chain(&rq.queue).map(|&t| e[t].avg.load_avg_contrib(e[t].weight)).sum();
        let signals = pelt_signals(&rq.avg, load);
        let time_us = self.now_us;
        self.out.trace(TraceEvent::SchedPeltCfs { time_us, cpu, signals });
    }

    /// `cpu`'s capacities now (`sched_cpu_capacity`): at its top OPP, and at its cluster's
    /// current frequency. No RT, deadline or IRQ pressure is modelled, so CFS may use all of it.
    pub(super) fn trace_capacity(&mut self, cpu: usize) {
        if !self.tracing() || !self.sched.rqs[cpu].online {
            return;
        }
        let c = self.sched.cluster_of[cpu];
        let orig = self.sched.capacity[cpu];
        let curr =
            (orig as u64 * self.hw.clusters[c].cur_khz as u64 / self.platform.clusters[c].max_khz() as u64) as u32;
        let time_us = self.now_us;
        self.out.trace(TraceEvent::SchedCpuCapacity {
            time_us,
            cpu,
            capacity: orig,
            capacity_orig: orig,
            capacity_curr: curr,
        });
    }

    /// The capacities of the logical CPUs on cluster `c` (its clock changed).
    pub(super) fn trace_cluster_capacity(&mut self, c: usize) {
        if !self.tracing() {
            return;
        }
        for i in 0..self.sched.cpus_of_cluster[c].len() {
            self.trace_capacity(self.sched.cpus_of_cluster[c][i]);
        }
    }

    /// Traces the placement's over-utilisation state if it changed (`sched_overutilized`, over
    /// the online CPUs, the root domain); `cpu` is where the decision was taken.
    pub(super) fn note_overutilized(&mut self, cpu: usize) {
        if !self.tracing() {
            return;
        }
        let now = self.sched.placement.overutilized();
        if now == self.out.overutilized {
            return;
        }
        self.out.overutilized = now;
        if let Some(overutilized) = now {
            let span = (0..self.sched.rqs.len()).filter(|&c| self.sched.rqs[c].online).fold(0u64, |m, c| m | 1 << c);
            let time_us = self.now_us;
            self.out.trace(TraceEvent::SchedOverutilized { time_us, cpu, overutilized, span });
        }
    }

    /// The scheduler's state at boot: every online CPU's capacity, and the over-utilisation
    /// state if the placement has one.
    pub(super) fn trace_sched_boot(&mut self) {
        if !self.tracing() {
            return;
        }
        for cpu in 0..self.sched.rqs.len() {
            self.trace_capacity(cpu);
        }
        let first_online = self.sched.rqs.iter().position(|rq| rq.online).unwrap_or(0);
        self.note_overutilized(first_online);
    }
}

fn pelt_signals(avg: &SchedAvg, load: u64) -> PeltSignals {
    PeltSignals { load, runnable: avg.load_avg_ratio(), util: avg.util_avg, update_time_ns: avg.last_update_ns }
}
