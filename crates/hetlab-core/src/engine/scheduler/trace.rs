//! The scheduler's trace events beyond context switches, built from its state where the
//! kernel's tracepoints fire: task migrations (`set_task_cpu`), wake-ups, PELT signals of
//! tasks and run queues (when an update crossed a period, `___update_load_avg`, and at
//! attach/detach), CPU capacities (at boot, at a frequency change, when the CPU map moves a
//! logical CPU onto another core type) and the placement's over-utilisation state. Nothing is
//! computed unless a trace is being recorded.

use super::Scheduler;
use crate::engine::outputs::Outputs;
use crate::sched::pelt::SchedAvg;
use crate::trace::{PeltSignals, TraceEvent};

impl Scheduler<'_> {
    /// `t` moves from `from` to `to` (`sched_migrate_task`), seen from `on_cpu`.
    pub fn trace_migrate(&self, t: usize, (from, to, on_cpu): (usize, usize, usize), now_us: f64, out: &mut Outputs) {
        if from == to || !out.tracing() {
            return;
        }
        let tid = self.threads[t].tid;
        out.trace(TraceEvent::SchedMigrateTask { time_us: now_us, cpu: on_cpu, tid, orig_cpu: from, dest_cpu: to });
    }

    /// `try_to_wake_up` begins for `t` on `waker_cpu`; the task is still on its last CPU.
    pub fn trace_waking(&self, t: usize, waker_cpu: usize, now_us: f64, out: &mut Outputs) {
        let (tid, target_cpu) = (self.threads[t].tid, self.entities[t].cpu);
        out.trace(TraceEvent::SchedWaking { time_us: now_us, waker_cpu, tid, target_cpu });
    }

    /// `t` is runnable on the CPU it was placed on (`sched_wakeup`, `sched_wakeup_new` when new).
    pub fn trace_wakeup(&self, t: usize, new_task: bool, now_us: f64, out: &mut Outputs) {
        let (tid, cpu) = (self.threads[t].tid, self.entities[t].cpu);
        out.trace(TraceEvent::SchedWakeup { time_us: now_us, cpu, tid, target_cpu: cpu, new_task });
    }

    /// `t`'s PELT signals as they are now (`sched_pelt_se`).
    pub(super) fn trace_pelt_se(&self, t: usize, now_us: f64, out: &mut Outputs) {
        if !out.tracing() {
            return;
        }
        let se = &self.entities[t];
        let signals = pelt_signals(&se.avg, se.avg.load_avg_contrib(se.weight));
        let (cpu, tid) = (se.cpu, self.threads[t].tid);
        out.trace(TraceEvent::SchedPeltSe { time_us: now_us, cpu, tid, signals });
    }

    /// `cpu`'s run-queue signals as they are now (`sched_pelt_cfs`); its load is the sum of
    /// its queued entities' loads (3.x `runnable_load_avg`).
    pub(super) fn trace_pelt_cfs(&self, cpu: usize, now_us: f64, out: &mut Outputs) {
        if !out.tracing() {
            return;
        }
        let rq = &self.rqs[cpu];
        let e = &self.entities;
        let load = if self.groups.is_active() {
            self.groups.root_load(cpu, rq, e)
        } else {
            rq.curr.into_iter().chain(rq.queue.iter()).map(|t| e[t].avg.load_avg_contrib(e[t].weight)).sum()
        };
        let signals = pelt_signals(&rq.avg, load);
        out.trace(TraceEvent::SchedPeltCfs { time_us: now_us, cpu, signals });
    }

    /// The task-group run queues whose signals crossed a PELT period since the last call, and
    /// their entities (`sched_pelt_cfs`, `sched_pelt_se` with the group's path): a group run
    /// queue's load is its load average (what its shares follow), its entity's its runnable
    /// share at its weight.
    pub fn trace_group_signals(&mut self, now_us: f64, out: &mut Outputs) {
        if !out.tracing() || !self.groups.is_active() {
            return;
        }
        let crossed = self.take_crossed_levels();
        for &(cpu, g) in &crossed {
            let l = self.groups.level_of(g, cpu);
            let group = g as u32;
            let signals = pelt_signals(&l.avg, l.avg.load_avg);
            out.trace(TraceEvent::SchedPeltGroupCfs { time_us: now_us, cpu, group, signals });
            let signals = pelt_signals(&l.avg, l.avg.load_avg_contrib(l.se.weight));
            out.trace(TraceEvent::SchedPeltGroupSe { time_us: now_us, cpu, group, signals });
        }
        self.give_back_crossed(crossed);
    }

    /// `cpu`'s capacities now (`sched_cpu_capacity`): at its top OPP, and at its cluster's
    /// current frequency. No RT, deadline or IRQ pressure is modelled, so CFS may use all of it.
    pub fn trace_capacity(&self, cpu: usize, now_us: f64, out: &mut Outputs) {
        if !out.tracing() || !self.rqs[cpu].online {
            return;
        }
        let c = self.cluster_of[cpu];
        let orig = self.capacity[cpu];
        let curr = (orig as u64 * self.freq_khz[c].0 as u64 / self.platform.clusters[c].max_khz() as u64) as u32;
        out.trace(TraceEvent::SchedCpuCapacity {
            time_us: now_us,
            cpu,
            capacity: orig,
            capacity_orig: orig,
            capacity_curr: curr,
        });
    }

    /// The capacities of the logical CPUs on cluster `c` (its clock changed).
    pub fn trace_cluster_capacity(&self, c: usize, now_us: f64, out: &mut Outputs) {
        if !out.tracing() {
            return;
        }
        for &cpu in &self.cpus_of_cluster[c] {
            self.trace_capacity(cpu, now_us, out);
        }
    }

    /// Traces the placement's over-utilisation state if it changed (`sched_overutilized`, over
    /// the online CPUs, the root domain); `cpu` is where the decision was taken.
    pub fn note_overutilized(&self, cpu: usize, now_us: f64, out: &mut Outputs) {
        if !out.tracing() {
            return;
        }
        let now = self.placement.overutilized();
        if !out.overutilized_changed(now) {
            return;
        }
        if let Some(overutilized) = now {
            let span = (0..self.rqs.len()).filter(|&c| self.rqs[c].online).fold(0u64, |m, c| m | 1 << c);
            out.trace(TraceEvent::SchedOverutilized { time_us: now_us, cpu, overutilized, span });
        }
    }

    /// The scheduler's state at boot: every online CPU's capacity, and the over-utilisation
    /// state if the placement has one.
    pub fn trace_boot(&self, out: &mut Outputs) {
        if !out.tracing() {
            return;
        }
        for cpu in 0..self.rqs.len() {
            self.trace_capacity(cpu, 0.0, out);
        }
        let first_online = self.rqs.iter().position(|rq| rq.online).unwrap_or(0);
        self.note_overutilized(first_online, 0.0, out);
    }
}

fn pelt_signals(avg: &SchedAvg, load: u64) -> PeltSignals {
    PeltSignals { load, runnable: avg.load_avg_ratio(), util: avg.util_avg, update_time_ns: avg.last_update_ns }
}
