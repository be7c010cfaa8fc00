//! CFS's wake-up on CPUs of asymmetric capacity, as Linux 5.10 has it (kernel/sched/fair.c,
//! `select_task_rq_fair`'s fast path): where `eas` puts a waking task while the root domain is
//! over-utilised (`find_energy_efficient_cpu` declines then).
//!
//! - `record_wakee` / `wake_wide`: a task counts how often it wakes another task than the one
//!   it woke last (`wakee_flips`, halved at most once a second, when it next wakes one). If the
//!   waker and the wakee both flip a lot — the smaller count at least the LLC size, the larger
//!   at least that many times the smaller — the pattern is one-to-many and the wakee is not
//!   pulled towards the waker.
//! - `wake_affine` (WA_IDLE, then WA_WEIGHT with WA_BIAS; the domain holding both CPUs has
//!   imbalance_pct 117, 5.10's `sd_init`): the waker's CPU when it is idle and shares the
//!   previous CPU's cache (the previous one if that is idle too); the previous one when it is
//!   idle; else the waker's when its load with the task, ×100 × `capacity_of(prev)`, is below
//!   the previous CPU's, ×108 × `capacity_of(this)`; else the previous CPU.
//! - `select_idle_sibling` on asymmetric capacity (`select_idle_capacity` over
//!   `sd_asym_cpucapacity`, which spans every online CPU of a big.LITTLE SoC; 5.7+): from that
//!   target on, wrapping, the first allowed CPU that is idle or runs only SCHED_IDLE tasks
//!   (`sched_idle_cpu`) and that the task fits (`fits_capacity` of its clamped utilisation
//!   against `capacity_of`); else such a CPU with the most `capacity_of`; else the target.
//!
//! The model's CFS loads are the run queues' weights and the tasks' hierarchical weights
//! (`sched::select`, `sched::balance`) where 5.10 reads PELT's load averages (`cpu_load`,
//! `task_h_load`); so a sleeping task's load is not on its previous CPU, and is not taken off
//! it as 5.10 takes its blocked load off. No sync wake-ups (`WF_SYNC`); the task's utilisation
//! is `util_avg` (no `util_est`). The caller keeps `smp`'s path for forks and for CPUs all of
//! one capacity (no `sd_asym_cpucapacity`).

use super::pelt::State;
use super::select::weighted_cpuload;
use super::util_est::task_util_est;
use super::{rt, SchedEntity, SchedView};
use crate::workload::SchedClass;

/// `capacity_margin` / `fits_capacity` (5.10): `cap · 1280 < max · 1024`, i.e. under 80 %.
pub fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

/// A task's `util_avg` decayed to `now_ns` as if it had slept since its last update (a waking
/// task's utilisation as the wake-up path reads it).
pub(super) fn task_util_now(task: &SchedEntity, now_ns: u64) -> u64 {
    let mut avg = task.avg;
    avg.update(now_ns, State::IDLE);
    avg.util_avg
}

/// `imbalance_pct` of a big.LITTLE SoC's MC and DIE domains (5.10's `sd_init`: 117 for every
/// level but SMT, "sched/fair: Reduce minimal imbalance threshold", 2020).
const IMBALANCE_PCT: i128 = 117;

/// One task's `wakee_flips` bookkeeping.
#[derive(Debug, Clone, Copy, Default)]
struct Flips {
    flips: u32,
    decay_jiffy: u64,
    last_wakee: Option<usize>,
}

/// Every task's wakee flips; the wakers are the threads and each CPU's idle task (a timer's
/// wake-up runs in the interrupt, on behalf of whatever the CPU was running).
#[derive(Debug, Clone)]
pub struct Wakees {
    threads: Vec<Flips>,
    idle: Vec<Flips>,
    tick_us: u64,
}

impl Wakees {
    pub fn new(ncpus: usize, tick_us: u64) -> Wakees {
        Wakees { threads: Vec::new(), idle: vec![Flips::default(); ncpus], tick_us }
    }

    fn of(&self, task: Option<usize>, cpu: usize) -> Flips {
        match task {
            Some(t) => self.threads.get(t).copied().unwrap_or_default(),
            None => self.idle[cpu],
        }
    }

    /// `record_wakee`: the task running on the waker's CPU wakes `thread`.
    pub fn record(&mut self, view: &SchedView, thread: usize) {
        let this = view.this_cpu;
        let jiffy = view.now_us as u64 / self.tick_us;
        let per_second = 1_000_000 / self.tick_us; // HZ
        let waker = match view.rqs[this].curr {
            Some(t) => {
                if self.threads.len() <= t {
                    self.threads.resize(t + 1, Flips::default());
                }
                &mut self.threads[t]
            }
            None => &mut self.idle[this],
        };
        if jiffy > waker.decay_jiffy + per_second {
            waker.flips >>= 1;
            waker.decay_jiffy = jiffy;
        }
        if waker.last_wakee != Some(thread) {
            waker.last_wakee = Some(thread);
            waker.flips += 1;
        }
    }

    /// `wake_wide`: the waker (running on `view.this_cpu`) and `thread` wake one-to-many.
    fn wide(&self, view: &SchedView, thread: usize, llc_size: u32) -> bool {
        let waker = self.of(view.rqs[view.this_cpu].curr, view.this_cpu).flips;
        let wakee = self.of(Some(thread), 0).flips;
        let (master, slave) = (waker.max(wakee), waker.min(wakee));
        slave >= llc_size && master >= slave.saturating_mul(llc_size)
    }
}

/// `available_idle_cpu`: nothing runs or waits on `cpu`.
fn available_idle_cpu(view: &SchedView, cpu: usize) -> bool {
    view.rqs[cpu].nr_running() == 0
}

/// `sched_idle_cpu` (5.4+): what runs or waits on `cpu` is all SCHED_IDLE.
fn sched_idle_cpu(view: &SchedView, cpu: usize) -> bool {
    let rq = &view.rqs[cpu];
    rq.nr_running() > 0
        && rq.rt.is_empty()
        && rq.dl.is_empty()
        && rq.curr.into_iter().chain(rq.queue.iter()).all(|t| view.tasks[t].class == SchedClass::Idle)
}

/// The fast path of 5.10's `select_task_rq_fair` for a waking `thread` whose allowed CPUs are
/// of more than one capacity; `wakees` must have recorded this wake-up.
pub fn select_wakeup(view: &SchedView, wakees: &Wakees, thread: usize) -> usize {
    let task = &view.tasks[thread];
    let (this, prev) = (view.this_cpu, task.cpu);
    let online = |c: usize| view.rqs[c].online;
    let llc_size = (0..view.ncpus()).filter(|&c| online(c) && view.cluster_of[c] == view.cluster_of[this]).count();
    let want_affine = !wakees.wide(view, thread, llc_size as u32) && task.allowed.contains(this);
    let target = if want_affine && this != prev { wake_affine(view, thread, this, prev) } else { prev };
    select_idle_capacity(view, thread, target).unwrap_or(target)
}

/// `wake_affine`: `this` (the waker's CPU) or `prev` as the search's starting point.
fn wake_affine(view: &SchedView, thread: usize, this: usize, prev: usize) -> usize {
    // wake_affine_idle
    let share_cache = view.cluster_of[this] == view.cluster_of[prev];
    if available_idle_cpu(view, this) && share_cache {
        return if available_idle_cpu(view, prev) { prev } else { this };
    }
    if available_idle_cpu(view, prev) {
        return prev;
    }
    // wake_affine_weight, in i128 as the kernel's s64 (no overflow at any load)
    let task_load = i128::from(view.groups.task_h_load(thread, view.rqs, view.tasks));
    let this_eff_load =
        (i128::from(weighted_cpuload(view, this)) + task_load) * 100 * i128::from(rt::capacity_of(view, prev));
    let prev_eff_load = i128::from(weighted_cpuload(view, prev))
        * (100 + (IMBALANCE_PCT - 100) / 2)
        * i128::from(rt::capacity_of(view, this));
    if this_eff_load < prev_eff_load {
        this
    } else {
        prev
    }
}

/// `select_idle_capacity` over the online CPUs `thread` may use, from `target` on; `None`
/// when none is idle.
fn select_idle_capacity(view: &SchedView, thread: usize, target: usize) -> Option<usize> {
    let task = &view.tasks[thread];
    let task_util = task.uclamp.task_util(task_util_est(task_util_now(task, view.now_ns()), task.util_est));
    let mut best: Option<(usize, u64)> = None;
    for cpu in task.allowed.iter_from(target).filter(|&c| c < view.ncpus() && view.rqs[c].online) {
        if !available_idle_cpu(view, cpu) && !sched_idle_cpu(view, cpu) {
            continue;
        }
        let cpu_cap = rt::capacity_of(view, cpu);
        if fits_capacity(task_util, cpu_cap) {
            return Some(cpu);
        }
        if best.is_none_or(|(_, cap)| cpu_cap > cap) {
            best = Some((cpu, cpu_cap));
        }
    }
    best.map(|(cpu, _)| cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::pelt::SchedAvg;
    use crate::sched::testutil::Fixture;

    #[test]
    fn the_fits_capacity_margin_is_80_percent() {
        // 301 of 377: 385280 < 386048; 302: 386560 does not fit
        assert!(fits_capacity(301, 377) && !fits_capacity(302, 377));
        assert!(fits_capacity(819, 1024) && !fits_capacity(820, 1024));
    }

    /// Two clusters of two CPUs: 0-1 LITTLE (capacity 400), 2-3 big (1024); task 0 may run on
    /// every CPU and last ran on `prev`, with utilisation `util`.
    fn big_little(prev: usize, util: u64) -> Fixture {
        let mut f = Fixture::new(4, &[&[0, 1, 2, 3]]);
        f.cluster_of = vec![0, 0, 1, 1];
        f.capacity = vec![400, 400, 1024, 1024];
        f.tasks[0].cpu = prev;
        f.tasks[0].avg = SchedAvg { util_avg: util, ..Default::default() };
        f
    }

    fn wakeup(f: &Fixture, wakees: &mut Wakees) -> usize {
        wakees.record(&f.view(), 0);
        select_wakeup(&f.view(), wakees, 0)
    }

    #[test]
    fn an_idle_cpu_the_task_fits_wins_from_the_target_on_else_the_biggest_idle_one() {
        // a task of utilisation 500 last ran on LITTLE CPU 0, woken from CPU 0 itself (a
        // timer): the target is CPU 0, idle but too small (500·1280 ≥ 400·1024); CPU 1 the
        // same; CPU 2 is the first that fits
        let mut f = big_little(0, 500);
        let mut w = Wakees::new(4, 10_000);
        assert_eq!(wakeup(&f, &mut w), 2);
        // both big CPUs busy: no idle CPU fits, so the idle one with the most capacity (the
        // first of the two LITTLEs, from the target on)
        f.busy(2, 1);
        f.busy(3, 1);
        assert_eq!(wakeup(&f, &mut w), 0);
        // a small task fits its idle previous CPU
        let f = big_little(1, 100);
        assert_eq!(wakeup(&f, &mut Wakees::new(4, 10_000)), 1);
    }

    #[test]
    fn a_cpu_running_only_sched_idle_tasks_counts_as_idle() {
        let mut f = big_little(2, 500);
        f.busy(2, 1);
        f.busy(3, 1);
        let background = f.tasks.len() - 1; // the task on CPU 3
        let mut w = Wakees::new(4, 10_000);
        assert_eq!(wakeup(&f, &mut w), 0, "no big CPU is idle");
        f.tasks[background].class = SchedClass::Idle;
        assert_eq!(wakeup(&f, &mut w), 3, "CPU 3 runs only a SCHED_IDLE task");
    }

    #[test]
    fn wake_affine_starts_the_search_at_an_idle_waker_sharing_the_cache() {
        // the task last ran on big CPU 3, now busy; the waker runs on big CPU 2: WA_IDLE does not
        // apply (CPU 2 runs the waker), WA_WEIGHT compares loads: CPU 2 with the waker (1024)
        // plus the task (1024), ×100 ×1024, against CPU 3's 1024 ×108 ×1024: not lighter, so
        // the search starts at CPU 3 and finds no idle big CPU, then the biggest idle: CPU 0
        let mut f = big_little(3, 500);
        f.busy(2, 1);
        f.busy(3, 1);
        f.this_cpu = 2;
        let mut w = Wakees::new(4, 10_000);
        assert_eq!(wake_affine(&f.view(), 0, 2, 3), 3);
        // with two tasks on CPU 3 the waker's CPU is lighter: it is the starting point
        f.busy(3, 1);
        assert_eq!(wake_affine(&f.view(), 0, 2, 3), 2);
        assert_eq!(wakeup(&f, &mut w), 0);
        // an idle waker CPU in the previous CPU's cluster wins when the previous CPU is busy
        let mut f = big_little(3, 500);
        f.busy(3, 1);
        f.this_cpu = 2;
        assert_eq!(wake_affine(&f.view(), 0, 2, 3), 2);
    }

    #[test]
    fn a_waker_flipping_between_many_wakees_does_not_pull_them() {
        // a waker on CPU 0 wakes four tasks in turn (llc_size 2): its flips reach 4; a wakee that
        // itself flips as often as the LLC size (2) makes the pattern one-to-many
        let mut f = Fixture::new(4, &[&[0, 1, 2, 3], &[0], &[0], &[0], &[0]]);
        f.cluster_of = vec![0, 0, 1, 1];
        f.capacity = vec![400, 400, 1024, 1024];
        f.put(1, 0); // the waker runs on CPU 0
        let mut w = Wakees::new(4, 10_000);
        for wakee in [2, 3, 4, 0] {
            w.record(&f.view(), wakee);
        }
        assert!(!w.wide(&f.view(), 0, 2), "the wakee flips nothing yet");
        w.threads.resize(5, Flips::default());
        w.threads[0].flips = 2;
        assert!(w.wide(&f.view(), 0, 2), "4 ≥ 2·2 and 2 ≥ 2");
        // the waker's flips halve once a second has passed (at its next wake-up)
        f.now_us = 1_020_000.0;
        w.record(&f.view(), 2);
        assert_eq!(w.threads[1].flips, 3, "halved to 2, then one more flip");
    }
}
