//! PELT where the kernel updates it (`crate::sched::pelt` holds the arithmetic): a task's
//! signals at enqueue, dequeue, the tick and migration; a run queue's CFS, RT and DL signals
//! before what they count changes; the utilisation schedutil reads (`sched::cpu_util`).

use super::{Scheduler, ThreadState};
use crate::engine::outputs::Outputs;
use crate::sched::cpu_perf;
use crate::sched::cpu_util::{self, CpuSignals, UtilType};
use crate::sched::group::Now;
use crate::sched::pelt::{self, State};

/// `now_us` in ns, PELT's clock.
pub fn ns(now_us: f64) -> u64 {
    (now_us * 1000.0).round() as u64
}

impl Scheduler<'_> {
    /// The PELT scale of `cpu` now: its cluster's `cur/max` frequency and its capacity; for the
    /// 3.x load sums LSK-MP 0019's `cur / (max >> 10)` against the thermally capped maximum.
    pub fn pelt_state(&self, cpu: usize, runnable: bool, running: bool) -> State {
        let c = self.cluster_of[cpu];
        let (cur_khz, cap_khz) = self.freq_khz[c];
        let max_khz = self.platform.clusters[c].max_khz();
        let freq_scale = (cur_khz as u64 * pelt::SCALE) / max_khz as u64;
        let load_freq_scale = if self.load_freq_invariant[c] {
            cur_khz as u64 / (max_khz.min(cap_khz) as u64 >> 10)
        } else {
            pelt::SCALE
        };
        let nr_runnable = u64::from(runnable);
        State {
            runnable,
            running,
            freq_scale,
            cpu_scale: self.capacity[cpu] as u64,
            load_freq_scale,
            load: 0,
            nr_runnable,
        }
    }

    /// Now for `cpu`'s task-group run queues (their PELT scales, when the run has groups).
    pub fn group_now(&self, cpu: usize, now_us: f64) -> Now {
        let scale = if self.groups.is_active() { self.pelt_state(cpu, false, false) } else { State::IDLE };
        Now { us: now_us, ns: ns(now_us), scale }
    }

    /// Accounts `t`'s PELT signals up to now in the state it has been in since the last update.
    pub fn update_entity_avg(&mut self, t: usize, now_us: f64, out: &mut Outputs) {
        // an RT or DL task has no CFS signal to update (5.10 tracks their time per run queue)
        if !self.track_util || !self.entities[t].is_fair() {
            return;
        }
        let cpu = self.entities[t].cpu;
        let state = match self.threads[t].state {
            ThreadState::Running => self.pelt_state(cpu, true, true),
            ThreadState::Runnable => self.pelt_state(cpu, true, false),
            _ => State::IDLE,
        };
        if self.entities[t].avg.update(ns(now_us), state) {
            self.entities[t].util_est.util_changed(); // `cfs_se_util_change`
            self.trace_pelt_se(t, now_us, out);
        }
    }

    /// Accounts `cpu`'s CFS run-queue signals up to now (runnable while a CFS task is queued
    /// there, running while one runs).
    pub fn update_rq_avg(&mut self, cpu: usize, now_us: f64, out: &mut Outputs) {
        if !self.track_util {
            return;
        }
        let rq = &self.rqs[cpu];
        let nr_running = rq.cfs_nr_running() as u64;
        // the runnable sum counts each queued CFS task (6.x's `h_nr_running`)
        let state = State { nr_runnable: nr_running, ..self.pelt_state(cpu, nr_running > 0, rq.cfs_curr().is_some()) };
        if self.rqs[cpu].avg.update(ns(now_us), state) {
            self.trace_pelt_cfs(cpu, now_us, out);
        }
    }

    /// Accounts `cpu`'s RT utilisation up to now (`update_rt_rq_load_avg`: running while an
    /// RT task runs there).
    pub fn update_rt_avg(&mut self, cpu: usize, now_us: f64) {
        if !self.track_util {
            return;
        }
        let running = self.rqs[cpu].rt.running.is_some();
        let state = self.pelt_state(cpu, running, running);
        self.rqs[cpu].avg_rt.update(ns(now_us), state);
    }

    /// Accounts `cpu`'s DL utilisation up to now (`update_dl_rq_load_avg`: running while a DL
    /// task runs there).
    pub fn update_dl_avg(&mut self, cpu: usize, now_us: f64) {
        if !self.track_util || !self.dl_used {
            return;
        }
        let running = self.rqs[cpu].dl.running.is_some();
        let state = self.pelt_state(cpu, running, running);
        self.rqs[cpu].avg_dl.update(ns(now_us), state);
    }

    /// The run queue's and its running thread's signals up to now (before either changes).
    pub fn update_util(&mut self, cpu: usize, now_us: f64, out: &mut Outputs) {
        self.update_rt_avg(cpu, now_us);
        self.update_dl_avg(cpu, now_us);
        self.update_rq_avg(cpu, now_us, out);
        if let Some(t) = self.rqs[cpu].curr {
            self.update_entity_avg(t, now_us, out);
        }
    }

    /// The CPU's PELT utilisation now (`cfs_rq->avg.util_avg`), at least its `runnable_avg`
    /// with 6.4+'s runnable boost (`cpu_util_cfs_boost`), and at least its queued tasks'
    /// util_est (`UTIL_EST`; zero but on Linux 6.6+ runs).
    fn cpu_util(&mut self, cpu: usize, now_us: f64, out: &mut Outputs) -> u32 {
        self.update_rq_avg(cpu, now_us, out);
        let avg = &self.rqs[cpu].avg;
        let boost = if self.eevdf.is_some_and(|e| e.features.runnable_boost) { avg.runnable_util_avg() } else { 0 };
        avg.util_avg.max(boost).max(self.rqs[cpu].util_est) as u32
    }

    /// Schedutil reads 6.8+'s performance request (`sched::cpu_perf`, the headroom already in
    /// it) rather than a utilisation.
    pub fn asks_effective_cpu_perf(&self) -> bool {
        self.eevdf.is_some_and(|e| e.features.effective_cpu_perf)
    }

    /// What schedutil reads (`sugov_get_util`) of the CPU's CFS utilisation: 5.10's
    /// `schedutil_cpu_util` FREQUENCY_UTIL (`sched::cpu_util`), or 6.8+'s performance request
    /// ([`asks_effective_cpu_perf`](Self::asks_effective_cpu_perf)).
    pub fn cpu_util_for_frequency(&mut self, cpu: usize, now_us: f64, out: &mut Outputs) -> u32 {
        // the CFS signal is brought up to date (and traced) only where it is read (a runnable
        // RT task without uclamp asks for the top under either rule)
        let util_cfs = if cpu_util::rt_asks_for_the_top(&self.cpu_signals(cpu, now_us), UtilType::Frequency) {
            0
        } else {
            u64::from(self.cpu_util(cpu, now_us, out))
        };
        let max = u64::from(self.capacity[cpu]);
        let signals = self.cpu_signals(cpu, now_us);
        if self.asks_effective_cpu_perf() {
            return cpu_perf::cpu_perf(&signals, util_cfs.min(max), max, None) as u32;
        }
        cpu_util::schedutil_cpu_util(&signals, util_cfs, max, UtilType::Frequency, None) as u32
    }

    /// What `schedutil_cpu_util` reads of `cpu` now.
    fn cpu_signals(&self, cpu: usize, now_us: f64) -> CpuSignals<'_> {
        CpuSignals { rq: &self.rqs[cpu], now_ns: ns(now_us), uclamp_used: self.uclamp_used }
    }

    /// A CFS task's utilisation joins `cpu`'s run queue's signal.
    pub fn attach_avg(&mut self, cpu: usize, t: usize, now_us: f64, out: &mut Outputs) {
        if self.track_util {
            self.update_rq_avg(cpu, now_us, out);
            let mut avg = self.entities[t].avg;
            self.rqs[cpu].avg.attach(&mut avg);
            self.entities[t].avg = avg;
        }
    }

    /// A CFS task's utilisation leaves `cpu`'s run queue's signal (it exits or leaves the class;
    /// `detach_entity_load_avg`).
    pub fn detach_avg(&mut self, cpu: usize, t: usize) {
        if self.track_util {
            let avg = self.entities[t].avg;
            self.rqs[cpu].avg.detach(&avg);
        }
    }
}
