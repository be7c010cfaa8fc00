//! The group tree, the pick through the levels, preemption at the common level, shares and
//! the hierarchical loads, on `sched::testutil`'s fixture.

use super::shares::{calc_shares, contribution_due};
use super::*;
use crate::sched::cfs::Tunables;
use crate::sched::testutil::Fixture;

#[test]
fn sched_idle_rules_come_before_vruntimes_at_wakeup() {
    use crate::workload::SchedClass;
    let mut f = Fixture::new(1, &[&[0], &[0]]);
    f.put(0, 0);
    let t = Tunables::for_cpus(1);
    // the waking task is 10 ms ahead in vruntime: CFS alone keeps the running one
    (f.tasks[0].vruntime, f.tasks[1].vruntime) = (0.0, 10_000.0);
    assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
    // a running SCHED_IDLE task is preempted by any normal one
    f.tasks[0].class = SchedClass::Idle;
    assert!(f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
    // a waking SCHED_IDLE task 1 s behind never preempts, not even an idle one
    f.tasks[1].class = SchedClass::Idle;
    f.tasks[1].vruntime = -1e6;
    assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
    f.tasks[0].class = SchedClass::Normal;
    assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
    // a waking SCHED_BATCH task 1 s behind the running normal one would preempt it as
    // SCHED_OTHER (1 s past the 1 ms wake-up granularity), but does not
    f.tasks[1].class = SchedClass::Normal;
    assert!(f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
    f.tasks[1].class = SchedClass::Batch;
    assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
}

#[test]
fn shares_split_by_load_as_each_kernel_computes_them() {
    // one CPU with the whole group: the group's shares, whatever its load
    assert_eq!(calc_shares(Kernel::V3_10, 1024, 0, 0, 4096, 0), 1024);
    assert_eq!(calc_shares(Kernel::V5_10, 1024, 0, 0, 4096, 0), 1024);
    // 3.10: this CPU's 1024 of weight against 3072 tracked elsewhere (its own old
    // contribution, 500, taken out): 1024·1024/(3572 - 500 + 1024) = 256
    assert_eq!(calc_shares(Kernel::V3_10, 1024, 3572, 500, 1024, 9000), 256);
    // 5.10 takes the larger of the weight and the average: 1024·9000/(3572 - 500 + 9000),
    // within the group's shares
    assert_eq!(calc_shares(Kernel::V5_10, 1024, 3572, 500, 1024, 9000), 763);
    // never below MIN_SHARES: an empty run queue (3.10) or a tiny share
    assert_eq!(calc_shares(Kernel::V3_10, 1024, 100_000, 0, 0, 0), MIN_SHARES);
    assert_eq!(calc_shares(Kernel::V3_10, 52, 100_000, 0, 15, 0), MIN_SHARES);
    // contributions: an eighth (3.10) or a 64th (5.10) of the last, or forced
    assert!(!contribution_due(Kernel::V3_10, 800, 900, false));
    assert!(contribution_due(Kernel::V3_10, 800, 901, false));
    assert!(contribution_due(Kernel::V3_10, 800, 810, true));
    assert!(contribution_due(Kernel::V5_10, 6400, 6501, false));
    assert!(!contribution_due(Kernel::V5_10, 6400, 6400, true));
}

/// Groups `/a` (shares 1024), `/a/b` and `/c` on 2 CPUs; threads: 0 root, 1 in /a, 2 in
/// /a/b, 3 in /c.
fn groups(kernel: Kernel) -> Groups {
    let specs = [("/a".to_string(), 1024), ("/a/b".to_string(), 1024), ("/c".to_string(), 512)];
    let mut g = Groups::new(2, kernel, &specs, 4);
    for (t, path) in [(1, "/a"), (2, "/a/b"), (3, "/c")] {
        let i = g.find(path).unwrap();
        g.assign(t, i);
    }
    g
}

#[test]
fn paths_make_a_tree() {
    let g = groups(Kernel::V3_10);
    let (a, b, c) = (g.find("/a").unwrap(), g.find("/a/b").unwrap(), g.find("/c").unwrap());
    assert_eq!((g.group(a).parent, g.group(b).parent, g.group(c).parent), (ROOT, a, ROOT));
    assert_eq!((g.group(b).depth, g.group(c).shares), (2, 512));
    assert!(g.contains(a, b) && !g.contains(b, a) && g.contains(ROOT, c));
    // entities at their common level: a task of /a/b against one of /c meet as /a and /c;
    // against one of /a as /a/b's entity and the task; against the root's as /a and itself
    assert_eq!(g.matching(Entity::Task(2), Entity::Task(3)), (Entity::Group(a), Entity::Group(c)));
    assert_eq!(g.matching(Entity::Task(2), Entity::Task(1)), (Entity::Group(b), Entity::Task(1)));
    assert_eq!(g.matching(Entity::Task(0), Entity::Task(2)), (Entity::Task(0), Entity::Group(a)));
    assert_eq!(g.top_entity(2), Entity::Group(a));
    assert!(Groups::default().find("/a").is_none() && !Groups::default().is_active());
}

/// A fixture of 2 CPUs and `groups()`'s 4 threads, every group's run queue signals at 0.
fn fixture(kernel: Kernel) -> (Fixture, Now, Tunables) {
    let mut f = Fixture::new(2, &[&[0, 1], &[0, 1], &[0, 1], &[0, 1]]);
    f.groups = groups(kernel);
    let now = Now { us: 0.0, ns: 0, scale: State::IDLE };
    (f, now, Tunables::for_cpus(1))
}

/// Thread `t` joins CPU 0 waiting (or running if `run`).
fn enqueue(f: &mut Fixture, now: &Now, tunables: &Tunables, t: usize, run: bool) {
    f.groups.join(0, t, &mut f.rqs[0], &f.tasks, now, tunables);
    if run {
        f.rqs[0].curr = Some(t);
        f.groups.set_next(0, t, now);
    } else {
        f.groups.insert_task(0, t, &mut f.rqs[0], &f.tasks);
    }
}

#[test]
fn picking_descends_and_groups_weigh_their_shares() {
    let (mut f, now, tun) = fixture(Kernel::V3_10);
    let (a, b, c) = (f.groups.find("/a").unwrap(), f.groups.find("/a/b").unwrap(), f.groups.find("/c").unwrap());
    f.tasks[0].vruntime = 5.0;
    f.tasks[2].vruntime = 1.0;
    f.tasks[3].vruntime = 0.0;
    for t in [0, 2, 3] {
        enqueue(&mut f, &now, &tun, t, false);
    }
    // the root level: task 0 (1024), /a's entity (1024) and /c's (its whole 512 here)
    assert_eq!(f.rqs[0].load_weight, 1024 + 1024 + 512);
    assert_eq!(f.groups.level(c, 0).se.weight, 512);
    assert_eq!(f.groups.level(a, 0).load_weight, 1024);
    // the groups' entities were placed as waking at the root's floor (0), at most half a
    // latency behind it: /a's and /c's at 0, before task 0 (5); /a first on the tie, then
    // /a/b's entity in /a, then task 2 in /a/b
    assert_eq!(f.groups.pick(0, &f.rqs[0], &f.tasks, None, false), Some(2));
    assert_eq!(f.groups.nr_running(0, ROOT, &f.rqs[0]), 3);
    // the CPU's queue keeps every waiting task
    assert_eq!(f.rqs[0].queue.len(), 3);
    // run task 2: /a and /a/b become running on their parents; put back, they wait again
    assert!(f.groups.remove_task(0, 2, &mut f.rqs[0], &f.tasks));
    f.rqs[0].curr = Some(2);
    f.groups.set_next(0, 2, &now);
    assert_eq!(f.groups.level(a, 0).curr, Some(Entity::Group(b)));
    assert!(f.groups.level(a, 0).se.running && f.groups.top[0].len() == 2);
    // its h_load: 1024 · (1024/(2561)) · (1024/1025) · (1024/1025)
    let h = f.groups.task_h_load(2, &f.rqs, &f.tasks);
    assert_eq!(h, 1024 * (2560 * 1024 / 2561 * 1024 / 1025) / 1025);
    // it sleeps: /a/b and then /a have nothing left, their entities leave
    f.groups.leave(0, 2, &mut f.rqs[0], &f.tasks, &now);
    f.rqs[0].curr = None;
    f.groups.put_prev(0, 2, &now);
    assert!(!f.groups.level(a, 0).se.on_rq && !f.groups.level(b, 0).se.on_rq);
    assert_eq!((f.rqs[0].load_weight, f.groups.top[0].len()), (1024 + 512, 2));
    assert_eq!(f.groups.pick(0, &f.rqs[0], &f.tasks, None, false), Some(3));
}

#[test]
fn a_waking_task_preempts_by_its_entity_on_the_common_run_queue() {
    // running task 1 of /a is far ahead of waking task 3 of /c (100 ms of vruntime), but
    // they meet as /a's and /c's entities: /c's 50 ms ahead of /a's, no preemption; the
    // other way round it preempts
    let (mut f, now, tun) = fixture(Kernel::V3_10);
    let (a, c) = (f.groups.find("/a").unwrap(), f.groups.find("/c").unwrap());
    (f.tasks[1].vruntime, f.tasks[3].vruntime) = (100_000.0, 0.0);
    enqueue(&mut f, &now, &tun, 1, true);
    enqueue(&mut f, &now, &tun, 3, false);
    f.groups.level_mut(a, 0).se.vruntime = 0.0;
    f.groups.level_mut(c, 0).se.vruntime = 50_000.0;
    assert!(!f.groups.wakeup_preempts(0, 1, 3, &f.tasks, &tun));
    (f.groups.level_mut(a, 0).se.vruntime, f.groups.level_mut(c, 0).se.vruntime) = (50_000.0, 0.0);
    assert!(f.groups.wakeup_preempts(0, 1, 3, &f.tasks, &tun));
    // within one group, the tasks themselves: task 2 of /a/b against task 1 of /a meet as
    // /a/b's entity (placed at /a's floor) and task 1
    let (mut f, now, tun) = fixture(Kernel::V3_10);
    f.tasks[1].vruntime = 100_000.0;
    enqueue(&mut f, &now, &tun, 1, true);
    enqueue(&mut f, &now, &tun, 2, false);
    assert!(f.groups.wakeup_preempts(0, 1, 2, &f.tasks, &tun));
}

#[test]
fn the_5_10_pick_keeps_a_groups_turn_while_its_tasks_switch() {
    // tasks 2 of /a/b and then task 1 of /a run in turn on CPU 0: /a's entity is on both
    // ways; 3.10 starts its turn anew at the switch, 5.10 keeps it
    for (kernel, kept) in [(Kernel::V3_10, false), (Kernel::V5_10, true)] {
        let (mut f, mut now, tun) = fixture(kernel);
        let a = f.groups.find("/a").unwrap();
        enqueue(&mut f, &now, &tun, 2, true);
        enqueue(&mut f, &now, &tun, 1, false);
        now.us = 3000.0;
        f.groups.update_curr(0, 2, &mut f.rqs[0], &f.tasks, now.us);
        f.groups.insert_task(0, 2, &mut f.rqs[0], &f.tasks);
        f.groups.put_prev(0, 2, &now);
        assert!(f.groups.remove_task(0, 1, &mut f.rqs[0], &f.tasks));
        f.groups.set_next(0, 1, &now);
        assert_eq!(f.groups.level(a, 0).se.slice_start_us == 0.0, kept, "{kernel:?}");
        assert_eq!(f.groups.level(a, 0).curr, Some(Entity::Task(1)));
    }
}

#[test]
fn a_cpu_shares_a_group_by_load_and_wake_affine_counts_its_share() {
    // /c (512 shares) has a task on CPU 0 and its run queue there has carried 1024 for long;
    // CPU 1 has none: a task of /c joining CPU 1 would add 512·1024/(1024+1024) = 256
    let (mut f, mut now, tun) = fixture(Kernel::V3_10);
    let c = f.groups.find("/c").unwrap();
    enqueue(&mut f, &now, &tun, 3, true);
    now.ns = 1_000_000_000;
    now.us = 1e6;
    now.scale.runnable = true;
    f.groups.update_level(c, 0, &now);
    f.groups.update_shares(0, c, true, &mut f.rqs[0], &now);
    assert_eq!(f.groups.group(c).load_avg, 1024);
    f.tasks.push(f.tasks[3].clone());
    f.groups.of_task.push(c);
    // its entity on CPU 1 as its last task there left it (an empty run queue's share, 3.10)
    f.groups.level_mut(c, 1).se.weight = MIN_SHARES;
    assert_eq!(f.groups.effective_load(4, 1, &f.tasks), 256 - 2);
    // on CPU 0 it would add nothing: the group's entity has its whole shares there already
    assert_eq!(f.groups.effective_load(4, 0, &f.tasks), 0);
    // a root task adds its weight
    assert_eq!(f.groups.effective_load(0, 1, &f.tasks), 1024);
}
