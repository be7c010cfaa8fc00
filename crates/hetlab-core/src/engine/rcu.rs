//! RCU in the engine (`kernel::rcu` holds the state machine): callbacks queued as threads
//! work, the tick of idle CPUs that RCU keeps (NO_HZ idle otherwise), RCU_SOFTIRQ charged to
//! the queuing CPU, RCU_FAST_NO_HZ's idle entry and timer, and the rcuo kthreads of
//! `rcu_nocbs=` CPUs, which the scheduler places like any task.

use super::state::ThreadState;
use super::Engine;
use crate::kernel::rcu::{Batch, Rcu, RcuOptions};
use crate::platform::Platform;
use crate::workload::{Access, MemProfile, Order, Pattern, Phase, PhaseKind, RcuCalls, Task};

/// Reference work of one rcuo pass besides the callbacks (wake-up, taking the list, the
/// grace-period bookkeeping), µs on the reference core. ASSUMPTION: a few hundred
/// instructions, as a short kthread wake-up; the callbacks' own cost dominates.
const RCUO_PASS_US: f64 = 1.0;

/// The engine's RCU: the state machine and, per offloaded CPU, its rcuo thread and event.
pub(super) struct RcuState {
    pub rcu: Rcu,
    pub rcuo_thread: Vec<Option<usize>>,
    pub rcuo_event: Vec<Option<usize>>,
    /// rcuo kthreads to wake at the next tick (their list became non-empty).
    pub pending_wakes: Vec<usize>,
    /// RCU ever had work in this run (the report is given then, or with options set).
    pub used: bool,
}

/// The event an rcuo kthread sleeps on.
fn rcuo_event_name(cpu: usize) -> String {
    format!("rcuo/{cpu}")
}

/// The rcuo kthreads for `options` (`rcuop/N`, RCU-preempt's, as on Android's PREEMPT
/// kernels): each sleeps until woken, then makes one pass; their affinity is the option's, or
/// the lowest-capacity cluster's CPUs (the seed moved them to the LITTLE CPUs).
pub(super) fn rcuo_kthreads(platform: &Platform, options: &RcuOptions) -> Vec<Task> {
    let little = (0..platform.clusters.len()).min_by_key(|&c| (platform.cpu_capacity(c), c)).unwrap_or(0);
    let affinity = options.rcuo_affinity.clone().unwrap_or_else(|| platform.clusters[little].cpus.clone());
    let mem = MemProfile::single(1.0, 0.3, Access::new(16384, Pattern::Random, 64, Order::Uniform), false, 0.2);
    options
        .nocbs
        .iter()
        .map(|&cpu| {
            let phases = vec![
                Phase {
                    kind: PhaseKind::Suspend { event: rcuo_event_name(cpu) },
                    mem,
                    mark: None,
                    rcu: RcuCalls::default(),
                },
                // its work is set at each pass (`rcuo_pass_instructions`)
                Phase { kind: PhaseKind::Compute { instructions: 1.0 }, mem, mark: None, rcu: RcuCalls::default() },
            ];
            let mut task = crate::kernel::kthread(&format!("rcuop/{cpu}"), Some(affinity.clone()), phases);
            task.repeat = u32::MAX;
            task
        })
        .collect()
}

impl RcuState {
    pub fn new(
        platform: &Platform,
        options: RcuOptions,
        tasks: &[Task],
        thread_task: &[usize],
        sync: &super::sync::SyncObjects,
    ) -> RcuState {
        let ncpus = platform.ncpus();
        let mut rcuo_thread = vec![None; ncpus];
        let mut rcuo_event = vec![None; ncpus];
        for &cpu in &options.nocbs {
            let name = format!("rcuop/{cpu}");
            rcuo_thread[cpu] = thread_task.iter().position(|&ti| tasks[ti].name == name);
            rcuo_event[cpu] = sync.find(super::sync::Object::Condition, &rcuo_event_name(cpu));
        }
        let used = options != RcuOptions::default();
        RcuState {
            rcu: Rcu::new(options, ncpus, platform.hz),
            rcuo_thread,
            rcuo_event,
            pending_wakes: Vec::new(),
            used,
        }
    }
}

impl Engine<'_> {
    fn jiffy_now(&self) -> u64 {
        (self.now_us / self.sched.tick_us + 1e-9).floor() as u64
    }

    /// CPU time, µs, of `reference_us` of kernel work on `cpu` at its current frequency
    /// (the reference core at its top OPP does it in `reference_us`).
    fn kernel_work_us(&self, cpu: usize, reference_us: f64) -> f64 {
        let c = self.sched.cluster_of[cpu];
        let reference = (0..self.platform.clusters.len()).max_by_key(|&c| self.platform.cpu_capacity(c)).unwrap_or(0);
        let ref_khz = self.platform.clusters[reference].max_khz() as f64;
        reference_us * ref_khz / self.hw.clusters[c].cur_khz as f64 * self.platform.core_type_of(c).cpi_factor
    }

    /// RCU_SOFTIRQ invoking `batch` on `cpu` now.
    fn run_callbacks(&mut self, cpu: usize, batch: Batch) -> f64 {
        if batch.is_empty() {
            return 0.0;
        }
        let us = self.kernel_work_us(cpu, batch.cost_us);
        self.rcu.rcu.report.softirq_s[cpu] += us * 1e-6;
        us
    }

    /// The tick's RCU part at a jiffy (after the scheduler's on busy CPUs): busy CPUs report a
    /// quiescent state and run ready callbacks (`BLIMIT` of them); idle CPUs that RCU keeps
    /// ticking wake for it (the cluster powers up if it was down) and run all of theirs;
    /// then the grace period advances and rcuo kthreads are woken.
    pub(super) fn rcu_tick(&mut self) {
        if !self.rcu.rcu.active() && self.rcu.pending_wakes.is_empty() {
            return;
        }
        let jiffy = self.jiffy_now();
        let ncpus = self.cpus.len();
        // CPUs without a tick this jiffy (idle in dyntick mode, or offline)
        let mut dyntick_idle = vec![true; ncpus];
        for (cpu, no_tick) in dyntick_idle.iter_mut().enumerate() {
            if !self.sched.rqs[cpu].online {
                continue;
            }
            if self.sched.rqs[cpu].curr.is_some() {
                *no_tick = false;
                let batch = self.rcu.rcu.tick(cpu, false);
                let us = self.run_callbacks(cpu, batch);
                if us > 0.0 {
                    self.charge_kernel_time(cpu, us);
                }
            } else if self.rcu.rcu.idle_needs_tick(cpu, jiffy) {
                *no_tick = false;
                self.rcu.rcu.report.idle_ticks[cpu] += 1;
                let exit_us = self.wake_cpu(cpu);
                // a governor sample that fell due while the CPU slept runs now (its deferrable
                // timer), as at any wake-up (`kernel_jitter`)
                self.wake_policy(self.policy_of(cpu));
                let batch = self.rcu.rcu.tick(cpu, true);
                let tick_us = self.tick_handler_us(cpu);
                let us = exit_us + tick_us + self.run_callbacks(cpu, batch);
                // back to idle: rcu_prepare_for_idle re-arms the fast-no-hz timer
                self.rcu.rcu.enter_idle(cpu, jiffy);
                self.charge_kernel_time(cpu, us);
            }
        }
        let wakes = self.rcu.rcu.end_jiffy(jiffy, &dyntick_idle);
        self.rcu.pending_wakes.extend(wakes.rcuo);
        self.rcu_wake_pending();
    }

    /// Wakes the rcuo kthreads whose list became non-empty (`call_rcu` during the last
    /// interval: the wake-up comes at its end, the next event) or whose grace period ended.
    pub(super) fn rcu_wake_pending(&mut self) {
        if self.rcu.pending_wakes.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut self.rcu.pending_wakes);
        pending.sort_unstable();
        pending.dedup();
        for &cpu in &pending {
            self.wake_rcuo(cpu);
        }
        pending.clear();
        self.rcu.pending_wakes = pending;
    }

    /// CPU time of the tick handler on an idle CPU (wake from WFI, tick_sched_timer,
    /// rcu_check_callbacks, softirq entry), µs: the platform's `[sched] tick_cycles`.
    fn tick_handler_us(&self, cpu: usize) -> f64 {
        let khz = self.hw.clusters[self.sched.cluster_of[cpu]].cur_khz as f64;
        self.platform.sched.tick_cycles * 1000.0 / khz
    }

    /// `cpu` just went idle: RCU_FAST_NO_HZ runs its ready callbacks and arms its timer.
    pub(super) fn rcu_enter_idle(&mut self, cpu: usize) {
        if !self.rcu.rcu.has_callbacks(cpu) {
            return;
        }
        let jiffy = self.jiffy_now();
        let batch = self.rcu.rcu.enter_idle(cpu, jiffy);
        let us = self.run_callbacks(cpu, batch);
        if us > 0.0 {
            self.charge_kernel_time(cpu, us);
        }
    }

    /// When idle `cpu` next wakes for RCU, µs (infinity: RCU does not need it).
    pub(super) fn rcu_next_wakeup_us(&self, cpu: usize) -> f64 {
        let next = self.jiffy_now() + 1;
        self.rcu.rcu.idle_wakeup_jiffy(cpu, next).map_or(f64::INFINITY, |j| j as f64 * self.sched.tick_us)
    }

    /// Wakes `cpu`'s rcuo kthread if it sleeps on its event (a wake-up of a running or queued
    /// kthread is lost: it finds the work when it comes back to sleep).
    fn wake_rcuo(&mut self, cpu: usize) {
        let (Some(t), Some(event)) = (self.rcu.rcuo_thread[cpu], self.rcu.rcuo_event[cpu]) else {
            return;
        };
        if self.threads[t].state != ThreadState::Suspended || !self.sync.waiters[event].contains(&t) {
            return;
        }
        self.sync.waiters[event].retain(|&w| w != t);
        self.threads[t].progress.phase += 1;
        self.enter_phase(t, None);
    }

    /// If `t` is an rcuo kthread with work waiting, its offloaded CPU.
    pub(super) fn rcuo_with_work(&self, t: usize) -> Option<usize> {
        let cpu = self.rcu.rcuo_thread.iter().position(|&r| r == Some(t))?;
        self.rcu.rcu.rcuo_has_work(cpu).then_some(cpu)
    }

    /// The instructions of rcuo kthread `t`'s pass now (`None`: `t` is no rcuo kthread).
    pub(super) fn rcuo_pass_instructions(&mut self, t: usize) -> Option<f64> {
        let cpu = self.rcu.rcuo_thread.iter().position(|&r| r == Some(t))?;
        let batch = self.rcu.rcu.rcuo_run(cpu);
        let th = &self.threads[t];
        let ips = self.reference_ips[th.task][th.progress.phase];
        Some((batch.cost_us + RCUO_PASS_US) * ips)
    }
}
