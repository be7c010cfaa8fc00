//! The HMP placement's rules, case by case.

/// The platform checks `[hmp]` with its own table (it sits below the scheduler): the two
/// must declare the same knobs and ranges.
#[test]
fn the_platforms_hmp_table_is_the_schedulers() {
    let ours: Vec<(&str, f64, f64)> = tunables().iter().map(|t| (t.name, t.min, t.max)).collect();
    assert_eq!(ours, crate::platform::HMP_KNOBS.to_vec());
}

use super::*;
use crate::sched::pelt::{SchedAvg, State, LOAD_AVG_MAX};
use crate::sched::testutil::Fixture;
use crate::sched::SchedPolicy;

/// Entity signals with `load_avg_ratio() == ratio`, a long-lived task's (period sum at
/// LOAD_AVG_MAX), running all the time it was runnable.
fn avg(ratio: u64) -> SchedAvg {
    let runnable_sum = (ratio * (LOAD_AVG_MAX + 1)).div_ceil(1024);
    let a = SchedAvg { runnable_sum, usage_sum: runnable_sum, period_sum: LOAD_AVG_MAX, ..Default::default() };
    assert_eq!(a.load_avg_ratio(), ratio);
    a
}

fn knobs(k: Knobs) -> Hmp {
    let p = Platform::builtin("exynos5422").unwrap();
    let mut h = Hmp::new(&p, &Values::check("hmp", &tunables(), &[]).unwrap()).unwrap();
    h.knobs = k;
    h
}

/// LITTLE CPUs 0-1 (capacity 377), big 2-3 (1024), `n` tasks allowed everywhere, at 10 s.
fn two_by_two(n: usize) -> Fixture {
    let all = [0, 1, 2, 3];
    let mut f = Fixture::new(4, &vec![&all[..]; n]);
    f.cluster_of = vec![0, 0, 1, 1];
    f.capacity = vec![377, 377, 1024, 1024];
    f.now_us = 10e6;
    f
}

const XU3: Knobs = Knobs { down_threshold: 256, packing_enable: false, ..LSK_DEFAULTS };

#[test]
fn thresholds_are_crossed_when_the_closed_form_says() {
    // reference §1.2: from ratio 0, busy all the time, n = 32·log2(1/(1 - r)) periods. A
    // period is 1024 units of 1024 ns (`delta >>= 10`), 1.048576 ms, not the 1.024 ms the
    // reference multiplies by. The kernel sees the crossing at the first tick after:
    // printed for the note.
    for (threshold, hz) in [(512u64, 100u64), (512, 200), (700, 100), (700, 200), (700, 1000)] {
        let r = threshold as f64 / 1024.0;
        let periods = 32.0 * (1.0 / (1.0 - r)).log2();
        let closed_ms = periods * 1.048576;
        // an old task idle for long: runnable sum ~0, period sum at its maximum
        let mut a = SchedAvg::new_task(0);
        let start_ns = 10_000_000_000u64;
        a.update(start_ns, State::IDLE);
        assert!(a.load_avg_ratio() == 0 && a.period_sum > LOAD_AVG_MAX - 1024);
        let busy = State { runnable: true, running: true, ..State::IDLE };
        // continuously (every µs), then as the tick updates it
        let (mut exact, mut b) = (None, a);
        for us in 1..200_000u64 {
            b.update(start_ns + us * 1000, busy);
            if b.load_avg_ratio() >= threshold {
                exact = Some(us as f64 / 1000.0);
                break;
            }
        }
        let exact = exact.unwrap();
        let tick_us = 1_000_000 / hz;
        let (mut at_tick, mut b) = (None, a);
        for k in 1..1000u64 {
            b.update(start_ns + k * tick_us * 1000, busy);
            if b.load_avg_ratio() >= threshold {
                at_tick = Some((k * tick_us) as f64 / 1000.0);
                break;
            }
        }
        let at_tick = at_tick.unwrap();
        println!(
            "load_avg_ratio {threshold}: closed form {periods:.1} periods = {closed_ms:.2} ms, integer PELT \
             {exact:.2} ms, seen at the tick {at_tick:.0} ms (HZ={hz})"
        );
        // within the truncation (a tenth of a period) of the closed form, and seen at the
        // first tick after
        assert!((exact - closed_ms).abs() <= 0.11, "{exact} vs {closed_ms}");
        assert!(at_tick >= exact && at_tick < exact + tick_us as f64 / 1000.0, "{at_tick} vs {exact}");
    }
}

#[test]
fn a_wakeup_goes_up_only_to_an_idle_faster_cpu_and_down_below_the_threshold() {
    let mut f = two_by_two(1);
    f.this_cpu = 0;
    f.tasks[0].avg = avg(700);
    let mut h = knobs(XU3);
    assert_eq!(h.select_cpu(&f.view(), 0, WakeKind::Wakeup), 2);
    // both A15 busy: stays on LITTLE (CFS's choice there)
    let mut h = knobs(XU3);
    f.busy(2, 1);
    f.busy(3, 1);
    assert_eq!(h.select_cpu(&f.view(), 0, WakeKind::Wakeup), 0);
    f.busy(0, 1);
    assert_eq!(h.select_cpu(&f.view(), 0, WakeKind::Wakeup), 1);
    // a light task on big goes to the least loaded LITTLE CPU below 256, stays above
    let mut f = two_by_two(1);
    f.tasks[0].cpu = 3;
    f.this_cpu = 3;
    f.tasks[0].avg = avg(255);
    f.busy(0, 1);
    assert_eq!(knobs(XU3).select_cpu(&f.view(), 0, WakeKind::Wakeup), 1);
    f.tasks[0].avg = avg(256);
    assert_eq!(knobs(XU3).select_cpu(&f.view(), 0, WakeKind::Wakeup), 3);
    // CFS would take the waker's CPU on the other cluster: the task stays in its domain
    f.this_cpu = 1;
    f.busy(3, 1);
    assert_eq!(knobs(XU3).select_cpu(&f.view(), 0, WakeKind::Wakeup), 3);
}

#[test]
fn packing_fills_little_cpus_in_order_up_to_the_limit() {
    let mut f = two_by_two(3);
    let lsk = || knobs(LSK_DEFAULTS);
    f.tasks[0].avg = avg(100);
    f.tasks[1].avg = avg(500);
    f.tasks[2].avg = avg(200);
    f.put(1, 0); // CPU 0 carries 500: 500 + 100 fits 650
    f.this_cpu = 1;
    f.tasks[0].cpu = 1;
    assert_eq!(lsk().select_cpu(&f.view(), 0, WakeKind::Wakeup), 0);
    // 500 + 200 does not: the next CPU (its own, so no move: CFS's choice stays)
    f.this_cpu = 1;
    f.tasks[2].cpu = 1;
    assert_eq!(lsk().select_cpu(&f.view(), 2, WakeKind::Wakeup), 1);
    // a task above 90 % is not packed but spread to the least loaded
    f.tasks[2].avg = avg(930);
    f.busy(2, 1);
    f.busy(3, 1);
    f.tasks[2].cpu = 0;
    f.this_cpu = 0;
    assert_eq!(lsk().select_cpu(&f.view(), 2, WakeKind::Wakeup), 1);
}

#[test]
fn a_user_task_forks_onto_the_least_recently_disturbed_idle_big_cpu() {
    let mut f = two_by_two(2);
    f.this_cpu = 0;
    let mut h = knobs(XU3);
    assert_eq!(h.select_cpu(&f.view(), 0, WakeKind::Fork), 2);
    // CPU 2 now carries a fresh HMP stamp; with both busy the other one is chosen
    f.busy(2, 1);
    f.busy(3, 1);
    assert_eq!(h.select_cpu(&f.view(), 1, WakeKind::Fork), 3);
    // a kernel thread is placed by CFS alone (parent's cluster)
    f.tasks[1].kernel = true;
    assert!(h.select_cpu(&f.view(), 1, WakeKind::Fork) < 2);
    // the priority filter keeps a low-priority task off big at fork too
    let mut h = knobs(Knobs { prio_filter: true, ..XU3 });
    f.tasks[1].kernel = false;
    f.tasks[1].nice = 5;
    assert!(h.select_cpu(&f.view(), 1, WakeKind::Fork) < 2);
}

#[test]
fn the_tick_forces_up_the_heaviest_of_the_first_queued_and_offloads_the_starving() {
    // CPU 0 runs a light task with a heavy one and a lighter one waiting
    let mut f = two_by_two(4);
    f.tasks[0].avg = avg(300);
    f.tasks[1].avg = avg(900);
    f.tasks[2].avg = avg(800);
    f.tasks[1].vruntime = 5.0;
    for t in [0, 1, 2] {
        f.put(t, 0);
    }
    f.this_cpu = 0;
    let mut h = knobs(XU3);
    let mut out = vec![];
    h.tick(&f.view(), 0, &mut out);
    // task 1 to the first idle A15; task 2 is not the heaviest on CPU 0
    assert_eq!(out[0], Migration { thread: 1, to_cpu: 2 });
    assert!(!out.iter().any(|m| m.thread == 2 && m.to_cpu >= 2), "{out:?}");
    // offload: big CPU 2 runs two tasks, the lightest waiting one starves (runs 70 % of
    // its runnable time), the big domain has no idle CPU, a LITTLE one is idle
    let mut f = two_by_two(4);
    for (t, cpu) in [(0, 2), (1, 2), (2, 3)] {
        f.put(t, cpu);
        f.tasks[t].avg = avg(1000);
    }
    f.tasks[1].avg.usage_sum = f.tasks[1].avg.runnable_sum * 7 / 10;
    let mut h = knobs(XU3);
    let mut out = vec![];
    h.tick(&f.view(), 2, &mut out);
    assert_eq!(out[0], Migration { thread: 1, to_cpu: 0 });
    // not starving (runs 80 % of its runnable time): stays
    f.tasks[1].avg.usage_sum = f.tasks[1].avg.runnable_sum * 8 / 10;
    let mut out = vec![];
    knobs(XU3).tick(&f.view(), 2, &mut out);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn an_idle_big_cpu_pulls_the_heaviest_eligible_little_task() {
    let mut f = two_by_two(3);
    for (t, ratio, cpu) in [(0, 720, 0), (1, 950, 1), (2, 600, 2)] {
        f.tasks[t].avg = avg(ratio);
        f.put(t, cpu);
    }
    // CPU 3 goes idle: nothing to pull in its domain (CPU 2 runs one task), so it pulls
    // the heavier of the running LITTLE tasks
    let mut h = knobs(XU3);
    assert_eq!(h.balance_newidle(&f.view(), 3), Some(Migration { thread: 1, to_cpu: 3 }));
    // a LITTLE CPU going idle does not
    f.rqs[0].curr = None;
    assert_eq!(knobs(XU3).balance_newidle(&f.view(), 0), None);
    // below the threshold nobody is pulled
    f.tasks[1].avg = avg(650);
    assert_eq!(knobs(XU3).balance_newidle(&f.view(), 3), None);
}

#[test]
fn a_task_moves_the_same_way_at_most_once_per_4_19_ms() {
    // three domains (LITTLE 0, middle 1, big 2): a task moved up to the middle cannot go
    // on up for 4096·1024 ns; a move down in between would clear it (two clusters never
    // see the rule bind but after an aborted push)
    let mut f = Fixture::new(3, &[&[0, 1, 2]]);
    f.cluster_of = vec![0, 1, 2];
    f.capacity = vec![300, 600, 1024];
    f.tasks[0].avg = avg(800);
    f.now_us = 10e6;
    let mut h = knobs(XU3);
    h.prepare(&f.view());
    let mut out = vec![];
    f.put(0, 0);
    h.tick(&f.view(), 0, &mut out);
    assert_eq!(out, [Migration { thread: 0, to_cpu: 1 }]);
    // now on the middle CPU, heavy: 4.19 ms must pass
    f.rqs[0].curr = None;
    f.rqs[0].load_weight = 0;
    f.put(0, 1);
    for (dt_us, moves) in [(4194.0, false), (4195.0, true)] {
        let mut g = Fixture { now_us: 10e6 + dt_us, ..Fixture::new(3, &[&[0, 1, 2]]) };
        (g.cluster_of, g.capacity, g.tasks, g.rqs) =
            (f.cluster_of.clone(), f.capacity.clone(), f.tasks.clone(), f.rqs.clone());
        let mut out = vec![];
        h.last_scan = None;
        h.tick(&g.view(), 1, &mut out);
        assert_eq!(out.contains(&Migration { thread: 0, to_cpu: 2 }), moves, "{dt_us} µs: {out:?}");
    }
    assert!(!too_soon(0, 1) && too_soon(1, 4096 * 1024) && !too_soon(1, 4096 * 1024 + 1));
}

#[test]
fn cpu_masks_split_one_cluster_as_seed_003s_emulation_did() {
    // the vexpress's four A9s, CPUs 1 and 3 slowed by perf: fast 0,2 and slow 1,3 give the
    // seed's "big.LITTLE optimizations" domains, balancing within each pair only
    let p = Platform::builtin("vexpress-a9").unwrap();
    let given = [("fast_cpu_mask".to_string(), 5.0), ("slow_cpu_mask".to_string(), 10.0)];
    let mut h = Hmp::new(&p, &Values::check("hmp", &tunables(), &given).unwrap()).unwrap();
    let f = Fixture::new(4, &[&[0, 1, 2, 3]]);
    h.prepare(&f.view());
    let topo = h.topo.as_ref().unwrap();
    let describe = topo.domains.describe();
    assert!(
        describe.contains("CPU2 attaching sched-domain:\n domain 0: span 0,2 level MC\n  groups: 2 0\n"),
        "{describe}"
    );
    assert!(
        describe.contains("CPU3 attaching sched-domain:\n domain 0: span 1,3 level MC\n  groups: 3 1\n"),
        "{describe}"
    );
    assert_eq!(describe.matches("domain 1: does not load-balance").count(), 4);
    assert!(topo.is_fastest(2) && topo.is_slowest(1) && topo.faster(3) == CpuMask::of([0, 2]));
    // without masks one cluster is one HMP domain: nothing ever moves between domains
    let mut h = Hmp::new(&p, &Values::check("hmp", &tunables(), &[]).unwrap()).unwrap();
    h.prepare(&f.view());
    assert_eq!(h.topo.as_ref().unwrap().hmp.len(), 1);
    // masks must split the CPUs in two
    for (fast, slow) in [(5.0, 0.0), (5.0, 2.0), (5.0, 11.0), (5.0, 26.0)] {
        let given = [("fast_cpu_mask".to_string(), fast), ("slow_cpu_mask".to_string(), slow)];
        let e = Hmp::new(&p, &Values::check("hmp", &tunables(), &given).unwrap()).err().unwrap();
        assert!(
            e.starts_with("hmp: fast_cpu_mask 0x5 and slow_cpu_mask") && e.contains("split the platform's 4 CPUs"),
            "{e}"
        );
    }
}

#[test]
fn knobs_come_from_lsk_then_the_platform_then_the_user() {
    let p = Platform::builtin("exynos5422").unwrap();
    let none = Values::check("hmp", &tunables(), &[]).unwrap();
    // the XU3 kernel's 700/256 without packing
    assert_eq!(Knobs::resolve(&p, &none).unwrap(), XU3);
    let given = Values::check("hmp", &tunables(), &[("down_threshold".into(), 512.0)]).unwrap();
    assert_eq!(Knobs::resolve(&p, &given).unwrap().down_threshold, 512);
    // a platform without [hmp]: LSK 15.07
    let mut bare = p.clone();
    bare.hmp.clear();
    assert_eq!(Knobs::resolve(&bare, &none).unwrap(), LSK_DEFAULTS);
    bare.hmp.insert("up_treshold".into(), 600.0);
    let e = Knobs::resolve(&bare, &none).unwrap_err();
    assert!(
        e.starts_with("platform 'exynos5422' [hmp]: hmp: unknown tunable 'up_treshold'; known: up_threshold"),
        "{e}"
    );
    let e = SchedPolicy::Hmp.build(&p, &[("up_threshold".into(), 2000.0)]).err().unwrap();
    assert_eq!(e, "hmp: up_threshold must be in 0..=1024, got 2000");
    assert!(!knobs(Knobs { frequency_invariant_load_scale: false, ..XU3 }).frequency_invariant_load());
}
