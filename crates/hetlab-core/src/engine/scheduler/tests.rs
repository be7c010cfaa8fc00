//! The scheduler part on its own: built from a run's plan, without an engine.

use super::*;
use crate::engine::config::SimConfig;
use crate::engine::outputs::Outputs;
use crate::workload::{SchedClass, Workload};

/// A scheduler of `workload` on the Exynos 5422 under `policy` (schedutil for EAS).
fn scheduler<'p>(p: &'p Platform, workload: &Workload, policy: crate::sched::SchedPolicy) -> Scheduler<'p> {
    let governor = if policy == crate::sched::SchedPolicy::Eas { "schedutil" } else { "performance" };
    let mut config = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    config.scheduler = policy;
    let placement = policy.build(p, &[]).unwrap();
    let plan = config.check_for(p, workload, &*placement).unwrap();
    let mut threads = Vec::new();
    for (ti, &n) in plan.threads.iter().enumerate() {
        for _ in 0..n {
            threads.push((ti, 1000 + threads.len() as u32, false));
        }
    }
    let setup = SchedSetup {
        workload,
        tasks: &plan.tasks,
        threads: &threads,
        allowed: &plan.allowed,
        online: &plan.online,
        cluster_of: &plan.cluster_of,
        user_cpus: plan.user_cpus,
        sysctls: Sysctls::check(p, &[], &*placement).unwrap(),
        governors_read_util: false,
    };
    Scheduler::new(p, &config, placement, setup).unwrap()
}

#[test]
fn a_second_cfs_task_waits_and_takes_the_cpu_when_its_vruntime_is_smaller() {
    let p = Platform::builtin("exynos5422").unwrap();
    let w = Workload::from_spec("cpu-bound:threads=2,instructions=1e9").unwrap();
    let mut s = scheduler(&p, &w, crate::sched::SchedPolicy::Pinned);
    let mut out = Outputs::new(false, false);
    let cpu = s.cpu_of(0);
    assert_eq!(s.enqueue_fair(cpu, 0, Arrival::Fork, 0.0), FairEnqueue::RunsNow);
    s.start_running(cpu, 0, 0.0, &mut out);
    s.update_curr(cpu, 0.0);
    assert_eq!(s.enqueue_fair(cpu, 1, Arrival::Fork, 0.0), FairEnqueue::Waits { preempts: false });
    assert!(s.is_queued(1) && s.is_running(0));
    // thread 1 starts a slice after the minimum (START_DEBIT: 12 ms of two tasks' 24 ms
    // period on 8 CPUs): until thread 0 ran past that, it keeps the CPU
    s.update_curr(cpu, 10_000.0);
    assert_eq!(s.preempt_choice(cpu, 10_000.0), None);
    s.update_curr(cpu, 30_000.0);
    assert_eq!(s.preempt_choice(cpu, 30_000.0), Some((0, 1)));
    s.put_back(cpu, 0, 1, 30_000.0);
    s.start_running(cpu, 1, 30_000.0, &mut out);
    assert_eq!((s.curr(cpu), s.state(0)), (Some(1), ThreadState::Runnable));
}

#[test]
fn an_rt_task_preempts_cfs_and_leaves_its_cpu_to_it_when_throttled() {
    let p = Platform::builtin("exynos5422").unwrap();
    let mut w = Workload::from_spec("cpu-bound:threads=1,instructions=1e9").unwrap();
    let mut rt = w.tasks[0].clone();
    rt.class = SchedClass::Fifo(10);
    w.tasks.push(rt);
    // Linux 5.10 (eas): no RT_RUNTIME_SHARE, so a CPU cannot borrow runtime from the others
    let mut s = scheduler(&p, &w, crate::sched::SchedPolicy::Eas);
    let mut out = Outputs::new(false, false);
    let cpu = s.cpu_of(0);
    assert_eq!(s.cpu_of(1), cpu, "both on the first CPU they may use");
    assert_eq!(s.enqueue_fair(cpu, 0, Arrival::Fork, 0.0), FairEnqueue::RunsNow);
    s.start_running(cpu, 0, 0.0, &mut out);
    assert_eq!(s.enqueue_rt(cpu, 1, 0.0), RtEnqueue::Waits { preempts: true });
    assert_eq!(s.preempt_choice(cpu, 0.0), Some((0, 1)));
    s.put_back(cpu, 0, 1, 0.0);
    s.start_running(cpu, 1, 0.0, &mut out);
    // 950 ms of the 1 s period is the RT runtime: past it the RT queue is throttled
    assert!(!s.rt_throttle_if_over(cpu, 1, 900_000.0));
    assert!(s.rt_throttle_if_over(cpu, 1, 960_000.0));
    assert_eq!((s.curr(cpu), s.take_first_dl_or_rt(cpu)), (None, None), "a throttled RT queue runs nothing");
    assert_eq!(s.take_first_cfs(cpu), Some(0));
}

#[test]
fn the_tick_is_kept_only_where_something_needs_it() {
    let p = Platform::builtin("exynos5422").unwrap();
    let w = Workload::from_spec("cpu-bound:threads=1,instructions=1e9").unwrap();
    let pinned = scheduler(&p, &w, crate::sched::SchedPolicy::Pinned);
    assert!(!pinned.tick_needed(), "one CFS task, no placement at ticks, no PELT reader");
    let eas = scheduler(&p, &w, crate::sched::SchedPolicy::Eas);
    assert!(eas.tick_needed(), "EAS reads PELT");
    let tick = p.tick_us() as f64;
    assert_eq!(eas.next_tick_after_us(0.5 * tick), tick);
    assert_eq!(eas.jiffy(2.0 * tick), 2);
}
