//! CFS's choice of a CPU for a waking or new task, without energy awareness
//! (`select_task_rq_fair`, Linux 3.10 kernel/sched/fair.c as the ODROID-XU3 tree has it):
//!
//! - a wake-up whose waker's domain also holds the task's previous CPU may move to the waker
//!   (`wake_affine`: if that keeps the two CPUs within half the domain's imbalance margin),
//!   then takes an idle CPU sharing the cache if the chosen one is busy
//!   (`select_idle_sibling`); otherwise it stays on its previous CPU (no MC domain has
//!   `SD_BALANCE_WAKE`);
//! - a fork goes to the least loaded CPU of the parent's domain if that is clearly less loaded
//!   than the parent's (`find_idlest_group`, `find_idlest_cpu`), else stays on the parent's.
//!
//! Loads are run-queue weights (`weighted_cpuload` = `rq->load.weight`; the `cpu_load[]`
//! history behind `wake_idx`/`forkexec_idx` is index 0 on MC, so none is needed) and every
//! CPU counts as `SCHED_POWER_SCALE` (capacity-blind). Sync wake-ups (`WF_SYNC`) are not
//! modelled: no workload wakes its waker's successor synchronously.

use super::domains::{DomainParams, Domains};
use super::{SchedView, WakeKind};

/// `weighted_cpuload`: the weights of the tasks on `cpu`'s run queue.
pub fn weighted_cpuload(view: &SchedView, cpu: usize) -> u64 {
    view.rqs[cpu].load_weight
}

/// `idle_cpu`: nothing runs on `cpu`.
pub fn idle_cpu(view: &SchedView, cpu: usize) -> bool {
    view.rqs[cpu].curr.is_none()
}

/// `select_task_rq_fair` for `thread`, woken or forked from `view.this_cpu`.
pub fn select_task_rq_fair(
    view: &SchedView,
    domains: &Domains,
    params: &DomainParams,
    thread: usize,
    kind: WakeKind,
) -> usize {
    let task = &view.tasks[thread];
    let prev = task.cpu;
    if task.allowed.count() == 1 {
        return prev;
    }
    let this = view.this_cpu;
    let span = domains.span(this);
    let cpu = match kind {
        WakeKind::Wakeup => {
            // SD_WAKE_AFFINE: the waker's domain must hold the previous CPU too
            if !(task.allowed.contains(this) && span.contains(prev)) {
                return prev;
            }
            let target = if this != prev && wake_affine(view, params, this, prev, thread) { this } else { prev };
            select_idle_sibling(view, domains, thread, target)
        }
        WakeKind::Fork => find_idlest_cpu(view, params, span, thread, this).unwrap_or(this),
    };
    // select_fallback_rq: the parent's CPU may not be allowed
    if task.allowed.contains(cpu) {
        cpu
    } else {
        task.allowed.first().expect("a task has an allowed CPU")
    }
}

/// `wake_affine`: whether `thread` may wake on `this` (the waker's CPU) rather than `prev`:
/// the waker's load with the task (what it adds through its task groups: `effective_load`)
/// stays within half the imbalance margin of the previous CPU's, or `this` carries no more
/// than one average task of its own.
fn wake_affine(view: &SchedView, params: &DomainParams, this: usize, prev: usize, thread: usize) -> bool {
    let load = weighted_cpuload(view, prev);
    let this_load = weighted_cpuload(view, this);
    let balanced = this_load == 0 || {
        let added = view.groups.effective_load(thread, this, view.tasks);
        let this_eff_load = 100 * (this_load as i64 + added);
        let prev_eff_load = (100 + (params.imbalance_pct as i64 - 100) / 2) * load as i64;
        this_eff_load <= prev_eff_load
    };
    let nr = view.rqs[this].nr_running() as u64;
    let tl_per_task = this_load.checked_div(nr).unwrap_or(0);
    balanced || (this_load <= load && this_load + load <= tl_per_task)
}

/// `select_idle_sibling`: `target` if idle, else the previous CPU if idle and sharing the
/// cache, else the first idle allowed CPU of target's domain walking from target's group.
pub fn select_idle_sibling(view: &SchedView, domains: &Domains, thread: usize, target: usize) -> usize {
    if idle_cpu(view, target) {
        return target;
    }
    let task = &view.tasks[thread];
    let prev = task.cpu;
    if prev != target && domains.share_cache(prev, target) && idle_cpu(view, prev) {
        return prev;
    }
    domains
        .span(target)
        .iter_from(target)
        .find(|&c| c != target && task.allowed.contains(c) && idle_cpu(view, c))
        .unwrap_or(target)
}

/// `find_idlest_group` then `find_idlest_cpu` over `span` (groups of one CPU) for a task
/// forked on `this`: the least loaded allowed CPU (first in the walk from `this` on ties),
/// unless `this` is within half the imbalance margin of it.
fn find_idlest_cpu(
    view: &SchedView,
    params: &DomainParams,
    span: super::CpuMask,
    thread: usize,
    this: usize,
) -> Option<usize> {
    let allowed = view.tasks[thread].allowed;
    let imbalance = 100 + (params.imbalance_pct as u64 - 100) / 2;
    let mut this_load = 0;
    let mut idlest: Option<(usize, u64)> = None;
    for cpu in span.iter_from(this).filter(|&c| allowed.contains(c)) {
        let load = weighted_cpuload(view, cpu);
        if cpu == this {
            this_load = load;
        } else if idlest.is_none_or(|(_, min)| load < min) {
            idlest = Some((cpu, load));
        }
    }
    let (cpu, min_load) = idlest?;
    (100 * this_load >= imbalance * min_load).then_some(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::domains::{Layout, SD_MC_INIT};
    use crate::sched::testutil::Fixture;

    fn pick(f: &Fixture, layout: Layout, kind: WakeKind) -> usize {
        let d = Domains::build(layout, &f.view());
        select_task_rq_fair(&f.view(), &d, &SD_MC_INIT, 0, kind)
    }

    #[test]
    fn a_wakeup_takes_an_idle_cpu_sharing_the_cache() {
        // 4 CPUs, thread 0 last ran on CPU 1, woken by its own timer there
        let mut f = Fixture::new(4, &[&[0, 1, 2, 3]]);
        f.tasks[0].cpu = 1;
        f.this_cpu = 1;
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Wakeup), 1); // idle: stays
        f.busy(1, 1);
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Wakeup), 2); // the next idle one from 1
        f.busy(2, 1);
        f.busy(3, 1);
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Wakeup), 0);
        f.busy(0, 1);
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Wakeup), 1); // none idle: target
                                                                    // per cluster: CPU 0 and 2 idle but only 3 shares the cache with 1
        let mut f = Fixture::new(4, &[&[0, 1, 2, 3]]);
        f.cluster_of = vec![0, 1, 0, 1];
        f.tasks[0].cpu = 1;
        f.this_cpu = 1;
        f.busy(1, 1);
        assert_eq!(pick(&f, Layout::PerCluster, WakeKind::Wakeup), 3);
        f.busy(3, 1);
        assert_eq!(pick(&f, Layout::PerCluster, WakeKind::Wakeup), 1);
        // a waker on another cluster's CPU: no common domain, the task stays on its previous
        f.this_cpu = 0;
        assert_eq!(pick(&f, Layout::PerCluster, WakeKind::Wakeup), 1);
    }

    #[test]
    fn wake_affine_pulls_to_a_waker_that_is_not_too_loaded() {
        let mut f = Fixture::new(2, &[&[0, 1]]);
        f.tasks[0].cpu = 1;
        f.this_cpu = 0;
        // the waker runs one nice-0 task, the previous CPU two: 100·(1024+1024) <= 112·2048
        f.busy(0, 1);
        f.busy(1, 2);
        assert!(wake_affine(&f.view(), &SD_MC_INIT, 0, 1, 0));
        // one each: 100·2048 > 112·1024, and not lighter than one task
        let mut f = Fixture::new(2, &[&[0, 1]]);
        f.busy(0, 1);
        f.busy(1, 1);
        assert!(!wake_affine(&f.view(), &SD_MC_INIT, 0, 1, 0));
        // an idle waker always
        let mut f = Fixture::new(2, &[&[0, 1]]);
        f.busy(1, 3);
        assert!(wake_affine(&f.view(), &SD_MC_INIT, 0, 1, 0));
    }

    #[test]
    fn wake_affine_counts_what_a_grouped_task_adds_to_the_wakers_load() {
        // the waker's CPU 0 runs two root tasks and one of /bg (shares 52: its entity weighs
        // 52 there), the previous CPU 1 two root tasks: a root task would make CPU 0 too
        // loaded (100·(2100+1024) > 112·2048) and stays; a task of /bg adds nothing to CPU 0's
        // load (/bg's entity already has its whole shares there) and comes to the waker
        let all: &[usize] = &[0, 1];
        let mut f = Fixture::new(2, &[all; 7]);
        f.groups(crate::sched::Kernel::V3_10, &[("/bg", 52)], &[(2, "/bg"), (5, "/bg")]);
        for (t, cpu) in [(0, 0), (1, 0), (2, 0), (3, 1), (4, 1)] {
            f.put(t, cpu);
        }
        assert_eq!(f.rqs[0].load_weight, 2048 + 52);
        for t in [5, 6] {
            f.tasks[t].cpu = 1;
        }
        f.this_cpu = 0;
        let d = Domains::build(Layout::Vanilla, &f.view());
        assert_eq!(select_task_rq_fair(&f.view(), &d, &SD_MC_INIT, 6, WakeKind::Wakeup), 1);
        assert_eq!(select_task_rq_fair(&f.view(), &d, &SD_MC_INIT, 5, WakeKind::Wakeup), 0);
    }

    #[test]
    fn a_fork_goes_to_the_idlest_cpu_unless_the_parents_is_close() {
        let mut f = Fixture::new(4, &[&[0, 1, 2, 3]]);
        f.this_cpu = 2;
        // all idle: 100·0 >= 112·0, the first other CPU from the parent's
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Fork), 3);
        f.busy(3, 1);
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Fork), 0);
        // the parent's CPU idle and the others loaded: stays (100·0 < 112·1024)
        for c in [0, 1] {
            f.busy(c, 1);
        }
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Fork), 2);
        // a parent's CPU the child may not use: the first allowed
        let mut f = Fixture::new(4, &[&[1, 3]]);
        f.this_cpu = 0;
        f.busy(1, 1);
        f.busy(3, 1);
        assert_eq!(pick(&f, Layout::Vanilla, WakeKind::Fork), 1);
    }
}
