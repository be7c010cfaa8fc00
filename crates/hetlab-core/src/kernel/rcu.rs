//! Tree RCU's deferred work (3.8-3.10 `kernel/rcutree.c`, `rcutree_plugin.h`; the constants and
//! the code paths are in shared/reference/sched-rcu-platforms.md §5):
//!
//! - `call_rcu()` queues a callback on the calling CPU's list; threads queue them at the rates
//!   their workload phases declare (`workload::RcuCalls`).
//! - Grace periods: one starts when some CPU has callbacks waiting for one; it ends when every
//!   CPU has passed a quiescent state. A CPU reports one from its scheduling-clock tick (the
//!   tick interrupted user mode or idle); a CPU in dyntick-idle (no tick) is detected remotely
//!   by the grace-period kthread's force-quiescent-state scan, first `JIFFIES_TILL_FIRST_FQS`
//!   jiffies after the start. A callback queued during a grace period waits for the next one.
//! - Callbacks whose grace period ended run in RCU_SOFTIRQ, raised at the queuing CPU's tick:
//!   at most `BLIMIT` per pass from a busy CPU, the whole list from the idle task.
//! - An idle CPU holding callbacks keeps its tick (`rcu_needs_cpu`), every jiffy.
//! - `rcu_fast_no_hz` (3.9/3.10 RCU_FAST_NO_HZ): an idle CPU with callbacks first runs the ready
//!   ones, then stops its tick and wakes at `round_up(jiffies + RCU_IDLE_GP_DELAY, 4)`, or
//!   `RCU_IDLE_LAZY_GP_DELAY` later when only lazy (kfree_rcu) callbacks remain.
//! - `rcu_nocbs=CPUS` (RCU_NOCB_CPU): those CPUs' callbacks go to a per-CPU `rcuo` kthread,
//!   woken when its list becomes non-empty: it takes the list, waits for a grace period (woken
//!   again at its end) and invokes every callback (no batch limit). The CPU itself never holds
//!   callbacks, so RCU never keeps its tick; it also skips the fast-no-hz idle hooks, which is
//!   the kernel's own interaction of the two options (McKenney, db4cb768: "CPUs with
//!   offloaded callbacks do not benefit from CONFIG_RCU_FAST_NO_HZ=y").
//!
//! This module is the state machine in jiffies and counts, and the rcuo kthreads' tasks; the
//! engine (`engine::kernel_work`, `engine::flow`) runs it from the tick, idle entry and the rcuo
//! kthreads, and charges the CPU time; the grace-period kthread's passes (its wake-ups and
//! FQS scans, `GpPass`) are queued to the board's kernel (`kernel::kthreads`). Not modelled:
//! the 3.8 `RCU_IDLE_FLUSHES` drain loop.

use crate::platform::Platform;
use crate::workload::{Access, MemProfile, Order, Pattern, Phase, PhaseKind, RcuCalls, Spread, Task};

/// Callbacks one RCU_SOFTIRQ pass invokes from a busy CPU (`blimit`, rcutree.c).
pub const BLIMIT: u64 = 10;
/// Above this many queued callbacks the batch limit is lifted (`qhimark`) ...
pub const QHIMARK: u64 = 10_000;
/// ... and restored at or below this many (`qlowmark`).
pub const QLOWMARK: u64 = 100;
/// First force-quiescent-state scan, jiffies after a grace period starts, and the scans after
/// it (`jiffies_till_first_fqs`, `jiffies_till_next_fqs`: `RCU_JIFFIES_TILL_FORCE_QS`, 3.10
/// rcutree.h).
pub const JIFFIES_TILL_FIRST_FQS: u64 = 3;
pub const JIFFIES_TILL_NEXT_FQS: u64 = 3;
/// RCU_FAST_NO_HZ: an idle CPU with non-lazy callbacks wakes at most every this many jiffies.
pub const RCU_IDLE_GP_DELAY: u64 = 4;
/// RCU_FAST_NO_HZ with only lazy callbacks: `6 * HZ` jiffies (about six seconds).
pub fn rcu_idle_lazy_gp_delay(hz: u32) -> u64 {
    6 * u64::from(hz)
}

/// The boot options, as the kernel names them (`rcu_nocbs=`, RCU_FAST_NO_HZ).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RcuOptions {
    /// CPUs whose callbacks are offloaded to rcuo kthreads.
    pub nocbs: Vec<usize>,
    pub fast_no_hz: bool,
    /// Where the rcuo kthreads may run (the seed pinned them to the LITTLE CPUs); `None`: the
    /// lowest-capacity cluster's CPUs.
    pub rcuo_affinity: Option<Vec<usize>>,
}

impl RcuOptions {
    /// The options as `BootOptions::parse` reads them back (`rcu_nocbs=0-1,rcu_fast_no_hz`);
    /// "" for none.
    pub fn spec(&self) -> String {
        let mut parts = Vec::new();
        if !self.nocbs.is_empty() {
            parts.push(format!("rcu_nocbs={}", super::cpulist(&self.nocbs)));
        }
        if self.fast_no_hz {
            parts.push("rcu_fast_no_hz".into());
        }
        if let Some(a) = &self.rcuo_affinity {
            parts.push(format!("rcuo_affinity={}", super::cpulist(a)));
        }
        parts.join(",")
    }
}

/// Queued callbacks: how many, how many lazy, and their cost (µs on the reference core at its
/// top OPP, summed).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Batch {
    pub n: u64,
    pub lazy: u64,
    pub cost_us: f64,
}

impl Batch {
    fn add(&mut self, other: Batch) {
        self.n += other.n;
        self.lazy += other.lazy;
        self.cost_us += other.cost_us;
    }

    /// Removes up to `limit` callbacks (their share of the cost, lazy ones last).
    fn take(&mut self, limit: u64) -> Batch {
        if limit >= self.n {
            return std::mem::take(self);
        }
        let cost_us = self.cost_us * limit as f64 / self.n as f64;
        let lazy = self.lazy.saturating_sub(self.n - limit);
        let taken = Batch { n: limit, lazy, cost_us };
        self.n -= limit;
        self.lazy -= lazy;
        self.cost_us -= cost_us;
        taken
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// One CPU's callback lists (`rcu_data`'s segments) and its RCU_FAST_NO_HZ timer.
#[derive(Debug, Clone, Default)]
struct CpuLists {
    /// Fractions of callbacks queued (rates times run time), not yet whole: (non-lazy, lazy),
    /// with their cost per callback.
    frac: [f64; 2],
    frac_cost_us: [f64; 2],
    /// Not yet assigned a grace period (RCU_NEXT_TAIL).
    next: Batch,
    /// Waiting for grace period `.0` (RCU_WAIT_TAIL / NEXT_READY).
    wait: Vec<(u64, Batch)>,
    /// Ready to invoke (RCU_DONE_TAIL).
    done: Batch,
    /// The batch limit is lifted (more than `QHIMARK` queued) until the list drains.
    unlimited: bool,
    /// Jiffy of the fast-no-hz wake-up timer, if armed.
    timer_jiffy: Option<u64>,
    /// Quiescent state reported in the current grace period.
    qs: bool,
    /// In dyntick-idle at some jiffy end since the last force-quiescent-state scan (the
    /// dynticks counter moved: `rcu_implicit_dynticks_qs`).
    idle_since_scan: bool,
}

impl CpuLists {
    fn queued(&self) -> u64 {
        self.next.n + self.wait.iter().map(|(_, b)| b.n).sum::<u64>() + self.done.n
    }

    fn lazy_only(&self) -> bool {
        let lazy = self.next.lazy + self.wait.iter().map(|(_, b)| b.lazy).sum::<u64>() + self.done.lazy;
        lazy == self.queued()
    }
}

/// An offloaded CPU's rcuo kthread's lists.
#[derive(Debug, Clone, Default)]
struct Rcuo {
    /// Enqueued by the CPU, not yet taken by the kthread (`nocb_head`).
    list: Batch,
    /// Taken, waiting for grace period `.0`.
    waiting: Option<(u64, Batch)>,
    /// Its grace period ended: the kthread invokes these next.
    ready: Batch,
    /// The kthread has been woken and has not run yet.
    woken: bool,
}

/// What the engine must do after a step of the state machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wakes {
    /// rcuo kthreads (by offloaded CPU) to wake.
    pub rcuo: Vec<usize>,
    /// The grace-period kthread's pass this jiffy, if it has one.
    pub gp: Option<GpPass>,
}

/// One wake-up of the grace-period kthread (`rcu_gp_kthread`) and what it does before it
/// sleeps again: end a grace period (`rcu_gp_cleanup`), scan for quiescent states
/// (`rcu_gp_fqs`), start the next one (`rcu_gp_init`: the cleanup's `gp_flags` loops it back
/// without sleeping).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpPass {
    pub fqs: bool,
    pub cleanup: bool,
    pub init: bool,
    /// The CPU whose wake-up it is (`None`: its own timeout, on its timer's CPU): the CPU that
    /// needed a grace period (`rcu_start_gp`), or that reported the last quiescent state
    /// (`rcu_report_qs_rsp`).
    pub waker: Option<usize>,
}

/// Counts for the run's report.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RcuReport {
    pub options: String,
    pub grace_periods: u64,
    pub callbacks_queued: u64,
    /// Callbacks invoked in RCU_SOFTIRQ, per CPU.
    pub softirq_callbacks: Vec<u64>,
    /// CPU time of those invocations, per CPU, s.
    pub softirq_s: Vec<f64>,
    /// Callbacks invoked by rcuo kthreads (their CPU time is in the threads' report).
    pub rcuo_callbacks: u64,
    /// Wake-ups of the grace-period kthread and its force-quiescent-state scans.
    pub gp_kthread_wakes: u64,
    pub fqs_scans: u64,
    /// Ticks taken by idle CPUs because RCU needed them (including fast-no-hz timer wake-ups),
    /// per CPU.
    pub idle_ticks: Vec<u64>,
}

/// Tree RCU for one platform (one `rcu_node`: ≤ 16 CPUs are one leaf in the kernel too).
#[derive(Debug, Clone)]
pub struct Rcu {
    options: RcuOptions,
    hz: u32,
    offloaded: Vec<bool>,
    cpus: Vec<CpuLists>,
    rcuo: Vec<Rcuo>,
    /// The grace period in progress (number, start jiffy); `completed` is the last one ended.
    gp: Option<(u64, u64)>,
    completed: u64,
    /// The CPU that reported the latest quiescent state of the grace period in progress.
    last_qs_cpu: Option<usize>,
    pub report: RcuReport,
}

impl Rcu {
    pub fn new(options: RcuOptions, ncpus: usize, hz: u32) -> Rcu {
        let offloaded = (0..ncpus).map(|c| options.nocbs.contains(&c)).collect();
        let report = RcuReport {
            options: options.spec(),
            softirq_callbacks: vec![0; ncpus],
            softirq_s: vec![0.0; ncpus],
            idle_ticks: vec![0; ncpus],
            ..RcuReport::default()
        };
        Rcu {
            options,
            hz,
            offloaded,
            cpus: vec![CpuLists::default(); ncpus],
            rcuo: vec![Rcuo::default(); ncpus],
            gp: None,
            completed: 0,
            last_qs_cpu: None,
            report,
        }
    }

    pub fn options(&self) -> &RcuOptions {
        &self.options
    }

    pub fn offloaded(&self, cpu: usize) -> bool {
        self.offloaded[cpu]
    }

    /// Anything for RCU to do: callbacks queued anywhere or a grace period in progress (the
    /// engine then runs the tick every jiffy; CPUs that do not need it skip it).
    pub fn active(&self) -> bool {
        self.gp.is_some()
            || self.cpus.iter().any(|l| l.queued() > 0)
            || self.rcuo.iter().any(|r| !r.list.is_empty() || r.waiting.is_some() || !r.ready.is_empty())
    }

    /// `call_rcu()` from `cpu`: `callbacks` (a rate times a run time, fractional) of
    /// `cost_us` each. Returns the CPU whose rcuo kthread must be woken (its list was empty).
    pub fn call_rcu(&mut self, cpu: usize, callbacks: f64, cost_us: f64, lazy: bool) -> Option<usize> {
        let l = &mut self.cpus[cpu];
        let k = usize::from(lazy);
        l.frac[k] += callbacks;
        l.frac_cost_us[k] = cost_us;
        let whole = l.frac[k].floor();
        if whole < 1.0 {
            return None;
        }
        l.frac[k] -= whole;
        let n = whole as u64;
        let batch = Batch { n, lazy: if lazy { n } else { 0 }, cost_us: whole * cost_us };
        self.report.callbacks_queued += n;
        if self.offloaded[cpu] {
            let r = &mut self.rcuo[cpu];
            let was_empty = r.list.is_empty();
            r.list.add(batch);
            if was_empty && !r.woken {
                r.woken = true;
                return Some(cpu);
            }
            return None;
        }
        l.next.add(batch);
        if l.queued() > QHIMARK {
            l.unlimited = true;
        }
        None
    }

    /// Holds callbacks that keep it from dyntick-idle (never on an offloaded CPU).
    pub fn has_callbacks(&self, cpu: usize) -> bool {
        !self.offloaded[cpu] && self.cpus[cpu].queued() > 0
    }

    /// Whether idle `cpu` takes the tick at `jiffy`: it holds callbacks and, with fast-no-hz,
    /// its timer is due.
    pub fn idle_needs_tick(&self, cpu: usize, jiffy: u64) -> bool {
        if !self.has_callbacks(cpu) {
            return false;
        }
        match (self.options.fast_no_hz, self.cpus[cpu].timer_jiffy) {
            (false, _) => true,
            (true, Some(t)) => jiffy >= t,
            (true, None) => true, // not yet through idle entry
        }
    }

    /// The next jiffy at or after `jiffy` at which idle `cpu` wakes for RCU, if any.
    pub fn idle_wakeup_jiffy(&self, cpu: usize, jiffy: u64) -> Option<u64> {
        if !self.has_callbacks(cpu) {
            return None;
        }
        match (self.options.fast_no_hz, self.cpus[cpu].timer_jiffy) {
            (true, Some(t)) => Some(t.max(jiffy)),
            _ => Some(jiffy),
        }
    }

    /// The scheduling-clock tick on `cpu` (user mode or idle: a quiescent state) at `jiffy`;
    /// `idle`: from the idle task. Assigns new callbacks a grace period and returns the ready
    /// callbacks RCU_SOFTIRQ invokes now (all from idle; `BLIMIT` from a busy CPU).
    pub fn tick(&mut self, cpu: usize, idle: bool) -> Batch {
        if self.gp.is_some() && !self.cpus[cpu].qs {
            self.cpus[cpu].qs = true;
            self.last_qs_cpu = Some(cpu);
        }
        if self.offloaded[cpu] {
            return Batch::default();
        }
        self.accelerate(cpu);
        let l = &mut self.cpus[cpu];
        let limit = if idle || l.unlimited { u64::MAX } else { BLIMIT };
        let ran = l.done.take(limit);
        if l.queued() <= QLOWMARK {
            l.unlimited = false;
        }
        l.timer_jiffy = None;
        self.report.softirq_callbacks[cpu] += ran.n;
        ran
    }

    /// `rcu_prepare_for_idle` at `jiffy` on a CPU that just went idle: with fast-no-hz, the
    /// ready callbacks are run before the tick stops (returned), and the wake-up timer is
    /// armed. Without it nothing happens here: the tick goes on while callbacks remain.
    pub fn enter_idle(&mut self, cpu: usize, jiffy: u64) -> Batch {
        if !self.options.fast_no_hz || self.offloaded[cpu] || self.cpus[cpu].queued() == 0 {
            return Batch::default();
        }
        self.accelerate(cpu);
        let l = &mut self.cpus[cpu];
        let ran = std::mem::take(&mut l.done);
        self.report.softirq_callbacks[cpu] += ran.n;
        if l.queued() == 0 {
            l.timer_jiffy = None;
        } else if l.timer_jiffy.is_none_or(|t| t <= jiffy) {
            l.timer_jiffy = Some(if l.lazy_only() {
                jiffy + rcu_idle_lazy_gp_delay(self.hz)
            } else {
                (jiffy + RCU_IDLE_GP_DELAY).div_ceil(RCU_IDLE_GP_DELAY) * RCU_IDLE_GP_DELAY
            });
        }
        ran
    }

    /// Gives `cpu`'s new callbacks the grace period that will surely cover them: the next one
    /// if none is in progress, else the one after (`rcu_accelerate_cbs`).
    fn accelerate(&mut self, cpu: usize) {
        let target = self.gp.map_or(self.completed + 1, |(g, _)| g + 1);
        let l = &mut self.cpus[cpu];
        if !l.next.is_empty() {
            let batch = std::mem::take(&mut l.next);
            match l.wait.iter_mut().find(|(g, _)| *g == target) {
                Some((_, b)) => b.add(batch),
                None => l.wait.push((target, batch)),
            }
        }
    }

    /// The end of `jiffy` (the grace-period kthread's view): a grace period whose every CPU
    /// reported a quiescent state from its tick ends (the last reporter wakes the kthread), or
    /// one whose remaining CPUs were in dyntick-idle ends at a force-quiescent-state scan (the
    /// kthread's timeout: `JIFFIES_TILL_FIRST_FQS` after the start, then every
    /// `JIFFIES_TILL_NEXT_FQS`; the first scan credits CPUs idle then, later ones CPUs idle at
    /// some jiffy since); callbacks it covered become ready; rcuo kthreads take their lists;
    /// a new grace period starts if any callbacks need one.
    pub fn end_jiffy(&mut self, jiffy: u64, dyntick_idle: &[bool]) -> Wakes {
        let mut wakes = Wakes::default();
        for (l, &idle) in self.cpus.iter_mut().zip(dyntick_idle) {
            l.idle_since_scan |= idle;
        }
        if let Some((g, start)) = self.gp {
            let since = jiffy.saturating_sub(start);
            let first = since == JIFFIES_TILL_FIRST_FQS;
            let scan = first
                || (since > JIFFIES_TILL_FIRST_FQS
                    && (since - JIFFIES_TILL_FIRST_FQS).is_multiple_of(JIFFIES_TILL_NEXT_FQS));
            let by_ticks = self.cpus.iter().all(|l| l.qs);
            if scan && !by_ticks {
                self.report.fqs_scans += 1;
                for (l, &idle) in self.cpus.iter_mut().zip(dyntick_idle) {
                    l.qs |= if first { idle } else { l.idle_since_scan };
                    l.idle_since_scan = false;
                }
                wakes.gp = Some(GpPass { fqs: true, ..GpPass::default() });
            }
            if self.cpus.iter().all(|l| l.qs) {
                let pass = wakes.gp.get_or_insert(GpPass { waker: self.last_qs_cpu, ..GpPass::default() });
                pass.cleanup = true;
                self.end_grace_period(g, &mut wakes.rcuo);
            }
        }
        if self.gp.is_none() {
            let needed = self.completed + 1;
            let starter = self.cpus.iter().position(|l| !l.next.is_empty() || l.wait.iter().any(|(g, _)| *g >= needed));
            let starter =
                starter.or_else(|| self.rcuo.iter().position(|r| r.waiting.is_some_and(|(g, _)| g >= needed)));
            if let Some(cpu) = starter {
                self.gp = Some((needed, jiffy));
                self.last_qs_cpu = None;
                for l in &mut self.cpus {
                    l.qs = false;
                    l.idle_since_scan = false;
                }
                let pass = wakes.gp.get_or_insert(GpPass { waker: Some(cpu), ..GpPass::default() });
                pass.init = true;
            }
        }
        if wakes.gp.is_some() {
            self.report.gp_kthread_wakes += 1;
        }
        wakes
    }

    /// Grace period `g` ends: the callbacks it covered are ready, and the rcuo kthreads
    /// waiting for it are to be woken (appended to `rcuo`).
    fn end_grace_period(&mut self, g: u64, rcuo: &mut Vec<usize>) {
        self.completed = g;
        self.gp = None;
        self.report.grace_periods += 1;
        for l in &mut self.cpus {
            l.qs = false;
            let mut rest = Vec::new();
            for (wg, b) in l.wait.drain(..) {
                if wg <= g {
                    l.done.add(b);
                } else {
                    rest.push((wg, b));
                }
            }
            l.wait = rest;
        }
        for (cpu, r) in self.rcuo.iter_mut().enumerate() {
            if let Some((wg, b)) = r.waiting {
                if wg <= g {
                    r.ready.add(b);
                    r.waiting = None;
                    if !r.woken {
                        r.woken = true;
                        rcuo.push(cpu);
                    }
                }
            }
        }
    }

    /// Whether `cpu`'s rcuo kthread has something to do (it skips its sleep if so).
    pub fn rcuo_has_work(&self, cpu: usize) -> bool {
        let r = &self.rcuo[cpu];
        !r.ready.is_empty() || (!r.list.is_empty() && r.waiting.is_none())
    }

    /// `cpu`'s rcuo kthread goes to sleep (it checked `rcuo_has_work` first): a wake-up that
    /// came while it ran was consumed by that check, so the next list or grace-period end must
    /// wake it again. Without this a kthread woken while running, then asleep for its grace
    /// period, was never woken at the period's end: its callbacks were never invoked.
    pub fn rcuo_sleeps(&mut self, cpu: usize) {
        self.rcuo[cpu].woken = false;
    }

    /// `cpu`'s rcuo kthread runs: it invokes what is ready and takes the list for the next
    /// grace period (`rcu_nocb_wait_gp` starts one if needed). Returns the callbacks it
    /// invokes.
    pub fn rcuo_run(&mut self, cpu: usize) -> Batch {
        let target = self.gp.map_or(self.completed + 1, |(g, _)| g + 1);
        let r = &mut self.rcuo[cpu];
        r.woken = false;
        let ran = std::mem::take(&mut r.ready);
        if r.waiting.is_none() && !r.list.is_empty() {
            r.waiting = Some((target, std::mem::take(&mut r.list)));
        }
        self.report.rcuo_callbacks += ran.n;
        ran
    }
}

/// Reference work of one rcuo pass besides the callbacks (wake-up, taking the list, the
/// grace-period bookkeeping), µs on the reference core. ASSUMPTION: a few hundred
/// instructions, as a short kthread wake-up; the callbacks' own cost dominates.
pub const RCUO_PASS_US: f64 = 1.0;

/// The event the rcuo kthread of `cpu` sleeps on until its list becomes non-empty.
pub fn rcuo_event_name(cpu: usize) -> String {
    format!("rcuo/{cpu}")
}

/// The rcuo kthreads for `options` (`rcuop/N`, RCU-preempt's, as on Android's PREEMPT
/// kernels): each sleeps until woken, then makes one pass (its work set at each pass from the
/// callbacks it takes); their affinity is the option's, or the lowest-capacity cluster's CPUs
/// (the seed moved them to the LITTLE CPUs).
pub fn rcuo_kthreads(platform: &Platform, options: &RcuOptions) -> Vec<Task> {
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
                    spread: Spread::NONE,
                },
                Phase {
                    kind: PhaseKind::Compute { instructions: 1.0 },
                    mem,
                    mark: None,
                    rcu: RcuCalls::default(),
                    spread: Spread::NONE,
                },
            ];
            let mut task = super::kthread(&format!("rcuop/{cpu}"), Some(affinity.clone()), phases);
            task.repeat = u32::MAX;
            task
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grace_period_ends_when_every_cpu_ticked_or_an_idle_one_is_scanned() {
        let mut rcu = Rcu::new(RcuOptions::default(), 2, 100);
        assert_eq!(rcu.call_rcu(0, 2.5, 1.0, false), None);
        assert!(rcu.has_callbacks(0) && !rcu.has_callbacks(1));
        rcu.tick(0, false); // assigned to GP 1
        rcu.end_jiffy(10, &[false, false]); // GP 1 starts at jiffy 10
        assert!(rcu.active());
        // cpu1 busy and ticking: both report at jiffy 11
        assert!(rcu.tick(0, false).is_empty());
        rcu.tick(1, false);
        rcu.end_jiffy(11, &[false, false]);
        assert_eq!(rcu.report.grace_periods, 1);
        // the two whole callbacks are ready, run at the next tick; the half stays
        let ran = rcu.tick(0, false);
        assert_eq!((ran.n, ran.cost_us), (2, 2.0));
        // cpu1 in dyntick-idle: the grace period waits for the FQS scan, 3 jiffies in
        rcu.call_rcu(0, 0.5, 1.0, false);
        rcu.tick(0, false);
        rcu.end_jiffy(20, &[false, true]);
        rcu.tick(0, false);
        rcu.end_jiffy(21, &[false, true]);
        rcu.tick(0, false);
        rcu.end_jiffy(22, &[false, true]);
        assert_eq!(rcu.report.grace_periods, 1);
        rcu.tick(0, false);
        rcu.end_jiffy(23, &[false, true]);
        assert_eq!(rcu.report.grace_periods, 2);
    }

    #[test]
    fn a_busy_cpu_invokes_ten_callbacks_per_softirq_and_an_idle_one_all() {
        let mut rcu = Rcu::new(RcuOptions::default(), 1, 100);
        rcu.call_rcu(0, 25.0, 2.0, false);
        rcu.tick(0, false);
        rcu.end_jiffy(0, &[false]);
        rcu.tick(0, false);
        rcu.end_jiffy(1, &[false]);
        assert_eq!(rcu.tick(0, false).n, BLIMIT);
        let idle = rcu.tick(0, true);
        assert_eq!((idle.n, idle.cost_us), (15, 30.0));
        assert!(!rcu.active());
    }

    #[test]
    fn fast_no_hz_arms_a_timer_on_a_multiple_of_four_jiffies_or_six_seconds_when_lazy() {
        let mut rcu = Rcu::new(RcuOptions { fast_no_hz: true, ..RcuOptions::default() }, 1, 100);
        rcu.call_rcu(0, 1.0, 1.0, false);
        assert!(rcu.enter_idle(0, 13).is_empty());
        // round_up(13 + 4, 4) = 20
        assert_eq!(rcu.idle_wakeup_jiffy(0, 14), Some(20));
        assert!(!rcu.idle_needs_tick(0, 19) && rcu.idle_needs_tick(0, 20));
        let mut lazy = Rcu::new(RcuOptions { fast_no_hz: true, ..RcuOptions::default() }, 1, 100);
        lazy.call_rcu(0, 1.0, 1.0, true);
        lazy.enter_idle(0, 13);
        assert_eq!(lazy.idle_wakeup_jiffy(0, 14), Some(613));
        // without the option an idle CPU with callbacks ticks every jiffy
        let mut stock = Rcu::new(RcuOptions::default(), 1, 100);
        stock.call_rcu(0, 1.0, 1.0, false);
        stock.enter_idle(0, 13);
        assert_eq!(stock.idle_wakeup_jiffy(0, 14), Some(14));
    }

    #[test]
    fn an_offloaded_cpu_holds_no_callbacks_and_its_rcuo_runs_them_after_a_grace_period() {
        let options = RcuOptions { nocbs: vec![0], fast_no_hz: true, ..RcuOptions::default() };
        let mut rcu = Rcu::new(options, 2, 100);
        // the list was empty: wake rcuo 0 (once)
        assert_eq!(rcu.call_rcu(0, 1.0, 3.0, false), Some(0));
        assert_eq!(rcu.call_rcu(0, 1.0, 3.0, false), None);
        assert!(!rcu.has_callbacks(0) && rcu.idle_wakeup_jiffy(0, 0).is_none());
        assert!(rcu.enter_idle(0, 0).is_empty() && rcu.tick(0, false).is_empty());
        assert!(rcu.rcuo_has_work(0));
        assert!(rcu.rcuo_run(0).is_empty()); // takes the list, waits for GP 1
        assert!(!rcu.rcuo_has_work(0));
        assert!(rcu.end_jiffy(5, &[true, true]).rcuo.is_empty()); // GP 1 starts
        assert!(rcu.end_jiffy(7, &[true, true]).rcuo.is_empty()); // no FQS scan yet
                                                                  // the FQS scan finds both idle: the GP ends and wakes the rcuo kthread
        assert_eq!(rcu.end_jiffy(8, &[true, true]).rcuo, vec![0]);
        assert_eq!(rcu.report.grace_periods, 1);
        assert!(rcu.rcuo_has_work(0));
        let ran = rcu.rcuo_run(0);
        assert_eq!((ran.n, ran.cost_us), (2, 6.0));
        assert_eq!(rcu.report.softirq_callbacks, vec![0, 0]);
    }
}
