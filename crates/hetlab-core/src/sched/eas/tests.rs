//! EAS's rules (5.10's feec and 6.12's fit ranking), case by case.

use super::*;
use crate::sched::testutil::Fixture;
use crate::sched::CpuMask;

/// The Exynos 5422 as a view: CPUs 0-3 LITTLE (377), 4-7 big (1024); one task allowed
/// everywhere, on `prev`, with utilisation `task_util`; `cpu_utils` per CPU (the previous
/// CPU's includes the task's blocked utilisation, as the kernel's does).
fn exynos(prev: usize, task_util: u64, cpu_utils: [u64; 8]) -> Fixture {
    let mut f = Fixture::new(8, &[&[0, 1, 2, 3, 4, 5, 6, 7]]);
    f.cluster_of = vec![0, 0, 0, 0, 1, 1, 1, 1];
    f.capacity = vec![377, 377, 377, 377, 1024, 1024, 1024, 1024];
    f.tasks[0].cpu = prev;
    f.tasks[0].avg.util_avg = task_util;
    for (rq, u) in f.rqs.iter_mut().zip(cpu_utils) {
        rq.avg.util_avg = u;
    }
    f
}

fn eas() -> Eas {
    Eas::new(&Platform::builtin("exynos5422").unwrap()).unwrap()
}

/// EAS that has placed threads 0 and 1 before (their next placement is a wake-up).
fn eas_placed() -> Eas {
    let mut e = eas();
    e.placed = vec![true; 2];
    e
}

fn feec(f: &Fixture) -> usize {
    eas().find_energy_efficient_cpu(&f.view(), 0)
}

#[test]
fn a_small_task_stays_on_little() {
    // util 50 on an idle LITTLE: prev CPU 0 with it: max 50 -> 1750000·50/377 = 232095 kHz
    // -> 300 MHz (21 mW, cost 98): 98·50/377 = 12; on big 200 MHz (cost 500): 500·50/1024 = 24
    let f = exynos(0, 50, [50, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(feec(&f), 0);
    // the same task last ran on big: LITTLE's max-spare CPU 0 costs 12 against 24 on big,
    // a saving of 12 > (24 + 0) >> 4 = 1: it moves down
    let f = exynos(5, 50, [0, 0, 0, 0, 0, 50, 0, 0]);
    assert_eq!(feec(&f), 0);
}

#[test]
fn under_eevdf_a_capped_clock_takes_capacity_from_the_fit() {
    // 6.12 (eas-eevdf): the small task of the test above stays on LITTLE's CPU 0 while its
    // clock is free. Capped at 200 of 1400 MHz, LITTLE loses 377 - 377·200/1400 = 377 - 53
    // = 324 of its capacity (cpufreq pressure): capacity_of is 53, which util 50 does not fit
    // (50·1280 = 64000 > 53·1024 = 54272), so no LITTLE CPU is a candidate and the task
    // goes to big's max-spare CPU 4
    let mut e = Eas { eevdf: Some(Default::default()), ..eas() };
    let mut f = exynos(0, 50, [50, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(e.find_energy_efficient_cpu(&f.view(), 0), 0);
    f.pressure = vec![324, 324, 324, 324, 0, 0, 0, 0];
    assert_eq!(rt::capacity_of(&f.view(), 0), 53);
    assert_eq!(e.find_energy_efficient_cpu(&f.view(), 0), 4);
}

/// `eas-eevdf`: EAS with Linux 6.12's feec.
fn eas_612() -> Eas {
    Eas { eevdf: Some(Default::default()), ..eas() }
}

#[test]
fn under_6_12_lesser_fits_stay_candidates_and_the_bigger_actual_capacity_wins() {
    // 6.12 find_energy_efficient_cpu / util_fits_cpu: util 50 on prev CPU 0 with util_min
    // 600. big's clock is capped (cpufreq pressure 500): actual capacity 1024 - 500 = 524,
    // capacity_of 524. LITTLE: 50 fits 377 (64000 < 386048), 50 < 600 > 377: -1. big: 50
    // fits 524, 600 > 524: -1. Both lesser fits; LITTLE's other CPUs have no more spare
    // than prev (327 each), big's CPU 4 is priced (max_fits -1, actual 524 > 0) and becomes
    // best (best_fits -1). best_fits < 0 and 524 > prev's 377: CPU 4
    let mut f = exynos(0, 50, [50, 0, 0, 0, 0, 0, 0, 0]);
    f.tasks[0].uclamp = Clamp { min: 600, max: 1024 };
    f.pressure = vec![0, 0, 0, 0, 500, 500, 500, 500];
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 4);
    // 5.10 asks the clamped 600 to fit with the margin: 768000 is above LITTLE's 386048
    // and the pressed big's 524·1024 = 536576: no candidate, prev stays (Linux 5.10 had no
    // cpufreq pressure; without it big fits, 768000 < 1048576, and takes the task)
    let mut e = eas();
    assert_eq!(e.find_energy_efficient_cpu(&f.view(), 0), 0);
    f.pressure = vec![0; 8];
    assert_eq!(e.find_energy_efficient_cpu(&f.view(), 0), 4);
    // pinned to LITTLE, 6.12 has only lesser fits of one actual capacity: prev stays
    f.tasks[0].allowed = CpuMask::of([0, 1, 2, 3]);
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 0);
}

#[test]
fn under_6_12_a_full_fit_beats_a_cheaper_lesser_fit_and_a_util_min_alone_is_placed() {
    // util 50 with util_min 400 last ran on LITTLE CPU 0: LITTLE is a lesser fit (400 > 377),
    // big a full one (400 <= 1024): best_fits 1 > prev_fits -1 takes big's CPU 4 whatever
    // the energy
    let mut f = exynos(0, 50, [50, 0, 0, 0, 0, 0, 0, 0]);
    f.tasks[0].uclamp = Clamp { min: 400, max: 1024 };
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 4);
    // a task with no utilisation but a util_min is placed too (6.12: `!task_util_est(p) &&
    // p_util_min == 0` returns prev; 5.10 returns prev on no utilisation alone)
    let mut f = exynos(0, 0, [0; 8]);
    f.tasks[0].uclamp = Clamp { min: 400, max: 1024 };
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 4);
    assert_eq!(eas().find_energy_efficient_cpu(&f.view(), 0), 0);
    // without the util_min it stays in both
    f.tasks[0].uclamp = Clamp::default();
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 0);
}

#[test]
fn under_6_12_a_util_max_at_little_capacity_makes_a_heavy_task_fit_there() {
    // util 400, util_max 377 (LITTLE's original capacity), last on LITTLE CPU 0; every big
    // CPU at 600. 6.12 util_fits_cpu: 400 does not fit 377, but util_max 377 <= 377 forces
    // a full fit. prev's delta: the task's util capped at 377, asking 377 -> 1.4 GHz (cost
    // 204): 204·377/377 = 204. big CPU 4 (the first of equal spare 24, forced to fit by
    // the same cap): big's max asks 1.25·600 = 750 -> 1.5 GHz (perf 768, cost
    // 562·2000/1500 = 749) with or without the task (its CPU's 1000 is capped at 377):
    // 749·2800/1024 - 749·2400/1024 = 2048 - 1755 = 293 > 204: prev stays
    let mut f = exynos(0, 400, [400, 0, 0, 0, 600, 600, 600, 600]);
    f.tasks[0].uclamp = Clamp { min: 0, max: 377 };
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 0);
    // a cap of 378 is above LITTLE's 377: 400 does not fit there (0), only big is forced to
    // fit: CPU 4
    f.tasks[0].uclamp = Clamp { min: 0, max: 378 };
    assert_eq!(eas_612().find_energy_efficient_cpu(&f.view(), 0), 4);
    // 5.10 fits the clamped utilisation with the margin, the run queue's util_max (1024 on
    // these, 5.10 reads it also when no task is queued) max-aggregated with the task's:
    // LITTLE's min(377, 377)·1280 > 377·1024 and big's 1000·1280 > 1024·1024; no candidate,
    // prev stays at either cap
    assert_eq!(eas().find_energy_efficient_cpu(&f.view(), 0), 0);
}

#[test]
fn rt_utilisation_takes_capacity_from_cfs_and_adds_to_the_energy() {
    // the small task of the test above, whose LITTLE CPU 0 ran RT work for the last second
    // at a capacity scale of 330: its RT signal is about 330 and leaves 47 of 377, which
    // util 50 does not fit (50·1280 > 47·1024). The RT utilisation also sets LITTLE's OPP
    // in the estimate (330 of 377: near its top), so the task costs more on LITTLE's CPU 1
    // than on an idle big CPU at its lowest OPP: CPU 4
    let mut f = exynos(0, 50, [50, 0, 0, 0, 0, 0, 0, 0]);
    let busy = State { runnable: true, running: true, cpu_scale: 330, ..State::IDLE };
    f.rqs[0].avg_rt.update(1_000_000_000, busy);
    let left = rt::capacity_of(&f.view(), 0);
    assert!((46..=50).contains(&left), "{left}");
    assert_eq!(feec(&f), 4);
    // without the RT signal it stays on CPU 0 (the test above)
    assert_eq!(feec(&exynos(0, 50, [50, 0, 0, 0, 0, 0, 0, 0])), 0);
    // no RT task runs there: the signal decays, to half 32 ms later
    let half = rt::util_now(&f.rqs[0], 1_032_000_000);
    assert!((160..=170).contains(&half), "{half}");
}

#[test]
fn the_energy_estimate_counts_the_dl_signal_and_the_frequency_the_dl_bandwidth() {
    // a light task (util 50) last ran on big CPU 5; LITTLE CPU 0 runs a DL server of 25 ms
    // every 100 ms (active bandwidth 0.25 << 20: 256 in capacity units) whose running-time
    // signal is 200
    let mut f = exynos(5, 50, [0, 0, 0, 0, 0, 50, 0, 0]);
    f.rqs[0].dl.running = Some(100_000_000);
    f.rqs[0].avg_dl.util_avg = 200;
    f.rqs[0].dl.running_bw = crate::sched::deadline::to_ratio(100_000_000, 25_000_000);
    let mut e = eas();
    let view = f.view();
    e.refresh_utils(&view);
    let little = &e.em.domains[0];
    let w = Wakee { prev: 5, util: 50, est: 0, clamp: Clamp::default() };
    // without the task: ENERGY_UTIL 200 (the DL signal), FREQUENCY_UTIL 256 (the bandwidth):
    // 1750000·256/377 = 1188329 kHz -> 1.2 GHz (cost 196): 196·200/377 = 103
    assert_eq!(e.compute_energy(&view, little, w, None), 103);
    // on CPU 1: Σ 250 at the same OPP: 196·250/377 = 129, a delta of 26
    assert_eq!(e.compute_energy(&view, little, w, Some(1)), 129);
    // on CPU 0: FREQUENCY_UTIL 50 + 256 = 306 asks 1420424 kHz -> 1.4 GHz (cost 204):
    // 204·250/377 = 135
    assert_eq!(e.compute_energy(&view, little, w, Some(0)), 135);
    // big CPU 5 costs 500·50/1024 = 24 at 200 MHz, less than LITTLE's 26: it stays. Without
    // the DL terms LITTLE would cost 98·50/377 = 12 at 300 MHz and win
    assert_eq!(e.find_energy_efficient_cpu(&view, 0), 5);
    f.rqs[0].dl = Default::default();
    assert_eq!(eas().find_energy_efficient_cpu(&f.view(), 0), 1);
}

#[test]
fn a_heavy_task_goes_to_big() {
    // util 320 does not fit a LITTLE (320·1280 > 377·1024): prev CPU 0 is unusable, the
    // best big CPU (max spare: CPU 4) is taken whatever the energy
    let f = exynos(0, 320, [320, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(feec(&f), 4);
    // and a big task on big stays there (CPU 5: delta = 620·400/1024 = 242 at 1 GHz)
    let f = exynos(5, 400, [0, 0, 0, 0, 0, 400, 0, 0]);
    assert_eq!(feec(&f), 5);
}

#[test]
fn the_most_spare_cpu_of_a_domain_wins_when_it_saves_more_than_a_sixteenth() {
    // task util 60 on CPU 0, which also has 200 of others. LITTLE base (200 on CPU 0):
    // 1750000·200/377 = 928381 -> 1 GHz (108 mW, cost 151): 151·200/377 = 80.
    // prev: max 260 -> 1206896 -> 1.3 GHz (182 mW, cost 196): 196·260/377 = 135, delta 55.
    // CPU 1 (most spare, 317): max 200, Σ 260 at 1 GHz: 151·260/377 = 104, delta 24.
    // big CPU 4: 500·60/1024 = 29. Saving 55 - 24 = 31 > (55 + 80) >> 4 = 8: CPU 1.
    let f = exynos(0, 60, [260, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(feec(&f), 1);
    // the same with every big CPU at 600: big's base energy is 749·2400/1024 = 1755 and the
    // margin (55 + 80 + 1755) >> 4 = 118 exceeds the 31 saved: prev stays
    let f = exynos(0, 60, [260, 0, 0, 0, 600, 600, 600, 600]);
    assert_eq!(feec(&f), 0);
}

#[test]
fn a_negative_delta_keeps_the_previous_cpu() {
    // big CPUs at 690 each: max 690 asks 2500000·690/1024 = 1684570 kHz -> 1.7 GHz (cost
    // 968): base 968·2760/1024 = 2609. The task (util 20) on prev CPU 4 lifts the max to 710
    // -> 1.8 GHz, whose cost is lower (947, a lower voltage): 947·2780/1024 = 2570 < 2609.
    // LITTLE would cost 98·20/377 = 5, but the negative delta returns prev at once.
    let f = exynos(4, 20, [0, 0, 0, 0, 710, 690, 690, 690]);
    assert_eq!(feec(&f), 4);
}

#[test]
fn no_utilisation_no_move_and_affinity_is_kept() {
    let f = exynos(6, 0, [0; 8]);
    assert_eq!(feec(&f), 6);
    // a heavy task allowed only on LITTLE CPUs 2-3 stays among them
    let mut f = exynos(0, 320, [320, 0, 0, 0, 0, 0, 0, 0]);
    f.tasks[0].allowed = CpuMask::of([0, 2, 3]);
    assert_eq!(feec(&f), 0, "nothing fits: best_energy_cpu stays prev");
}

#[test]
fn a_sleeping_tasks_utilisation_decays_to_now() {
    // 1024 at t = 0, asleep for 32 PELT periods (33.55 ms): about half
    let mut f = exynos(4, 1024, [0; 8]);
    f.tasks[0].avg.util_sum = 1024 * (crate::sched::pelt::LOAD_AVG_MAX - 1024);
    let se = &f.tasks[0];
    assert_eq!(task_util_now(se, 32 * 1024 * 1024), 511);
}

#[test]
fn over_utilisation_hands_wakeups_to_cfs_and_the_balance_clears_it() {
    let mut e = eas_placed();
    // big CPU 7 busy at 900 of 1024 (over 80 %): its tick sets the flag
    let mut f = exynos(0, 50, [150, 0, 0, 0, 0, 0, 0, 900]);
    f.tasks.push(f.tasks[0].clone());
    f.rqs[0].curr = Some(1);
    f.rqs[7].curr = Some(1);
    let mut out = vec![];
    e.tick(&f.view(), 7, &mut out);
    assert_eq!(e.overutilized(), Some(true));
    // thread 0 wakes with CPU 0 (its previous) busy: smp takes the first idle CPU, 1;
    // feec would keep it on CPU 0 (prev: 126·150/377 - 126·100/377 = 50 - 33 = 17; CPU 1
    // costs as much; big: 1067·950/1024 - 1067·900/1024 = 989 - 937 = 52)
    assert_eq!(e.select_cpu(&f.view(), 0, WakeKind::Wakeup), 1);
    assert_eq!(eas_placed().select_cpu(&f.view(), 0, WakeKind::Wakeup), 0);
    // a first placement is a fork, CFS's path whatever the flag
    assert_eq!(eas().select_cpu(&f.view(), 0, WakeKind::Wakeup), 1);
    // the load drops; the busy CPU's next root balance (16 x 8 ms = 26 jiffies = 130 ms
    // later) clears the flag
    f.rqs[7].avg.util_avg = 700;
    f.now_us = 100_000.0;
    e.tick(&f.view(), 7, &mut out);
    assert_eq!(e.overutilized(), Some(true), "not yet due");
    f.now_us = 160_000.0;
    e.tick(&f.view(), 7, &mut out);
    assert_eq!(e.overutilized(), Some(false));
    assert!(out.is_empty());
}

#[test]
fn an_enqueue_that_overfills_a_cpu_sets_the_flag() {
    let mut e = eas_placed();
    // util 250 with 200 of others on its previous CPU 0: 450 does not fit there. LITTLE CPU
    // 1 would cost 196·450/377 - 80 = 153 (1.2 GHz), big CPU 4 500·250/1024 = 122 (700 MHz):
    // big, where it fits; the flag stays clear
    let f = exynos(0, 250, [450, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(e.select_cpu(&f.view(), 0, WakeKind::Wakeup), 4);
    assert_eq!(e.overutilized(), Some(false));
    // pinned to its previous CPU 1, at 310 with it: nothing fits, it goes there anyway and
    // the enqueue tips the flag
    let mut f = exynos(1, 250, [0, 310, 0, 0, 0, 0, 0, 0]);
    f.tasks[0].allowed = CpuMask::of([1]);
    assert_eq!(e.select_cpu(&f.view(), 0, WakeKind::Wakeup), 1);
    assert_eq!(e.overutilized(), Some(true));
}

#[test]
fn a_misfit_running_task_is_pulled_by_an_idle_big_cpu() {
    let mut e = eas();
    // thread 0 runs on LITTLE CPU 1 at 370; CPU 4 is busy, 5-7 idle
    let mut f = exynos(1, 370, [0, 370, 0, 0, 500, 0, 0, 0]);
    f.tasks.push(f.tasks[0].clone());
    f.rqs[1].curr = Some(0);
    f.rqs[4].curr = Some(1);
    let mut out = vec![];
    e.tick(&f.view(), 1, &mut out);
    assert_eq!(e.overutilized(), Some(true));
    // the idle balance ran from this tick: the first idle CPU that is big enough, 5, pulls it
    assert_eq!(out, [Migration { thread: 0, to_cpu: 5 }]);
    // not again before the interval (10 ms at HZ=200 for 8 CPUs)
    out.clear();
    f.now_us = 5_000.0;
    e.tick(&f.view(), 1, &mut out);
    assert!(out.is_empty());
    // a task pinned to LITTLE is no misfit
    let mut e = eas();
    f.tasks[0].allowed = CpuMask::of([1]);
    f.now_us = 0.0;
    e.tick(&f.view(), 1, &mut out);
    assert!(out.is_empty());
}

#[test]
fn cfs_balancing_runs_only_while_overutilised() {
    let mut e = eas();
    // CPU 4 at 900 runs thread 0 with threads 1 and 2 waiting: over-utilised, overloaded
    let mut f = exynos(4, 100, [0, 0, 0, 0, 900, 0, 0, 0]);
    f.tasks.extend([f.tasks[0].clone(), f.tasks[0].clone()]);
    for t in 0..3 {
        f.put(t, 4);
    }
    f.now_us = 1e6;
    let mut out = vec![];
    e.tick(&f.view(), 4, &mut out);
    // CFS's idle load balancer, kicked from CPU 4, spreads its two waiting threads over the
    // first idle CPUs (the one CFS would run last first)
    assert_eq!(out, [Migration { thread: 2, to_cpu: 0 }, Migration { thread: 1, to_cpu: 1 }]);
    // below 80 % nothing moves: EAS's placement stands
    let mut e = eas();
    f.rqs[4].avg.util_avg = 700;
    out.clear();
    e.tick(&f.view(), 4, &mut out);
    assert!(out.is_empty());
}

#[test]
fn newidle_pulls_only_while_overutilised_and_overloaded() {
    let mut e = eas();
    // CPU 4 runs one thread and has another waiting: overloaded, but nobody is over 80 %
    let mut f = exynos(4, 100, [0, 0, 0, 0, 300, 0, 0, 0]);
    f.tasks.push(f.tasks[0].clone());
    f.put(0, 4);
    f.put(1, 4);
    assert_eq!(e.balance_newidle(&f.view(), 5), None);
    // at 900 of 1024 CPU 4 is over-utilised: CFS's new-idle pull
    f.rqs[4].avg.util_avg = 900;
    assert_eq!(e.balance_newidle(&f.view(), 5), Some(Migration { thread: 1, to_cpu: 5 }));
    assert_eq!(e.overutilized(), Some(true));
}

#[test]
fn eas_needs_asymmetric_capacities_and_schedutil() {
    let text = crate::platform::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5422").unwrap().1;
    let same = text.replacen("capacity_dmips_mhz = 539", "capacity_dmips_mhz = 1024", 1).replacen(
        "[1400000, 1275000],\n]",
        "[1400000, 1275000], [2000000, 1300000],\n]",
        1,
    );
    let p = Platform::from_toml("same.toml", &same).unwrap();
    assert_eq!((p.cpu_capacity(0), p.cpu_capacity(1)), (1024, 1024));
    let e = Eas::new(&p).err().unwrap();
    assert!(e.contains("SD_ASYM_CPUCAPACITY") && e.contains("1024"), "{e}");
    // the seed's vexpress-A9 (four equal A9s) is symmetric; the LinSched model (2 big at 1024,
    // 2 LITTLE at 512, one OPP each: 133·1000²·1000/10⁹ = 133 mW, 990 mW) is not
    let e = Eas::new(&Platform::builtin("vexpress-a9").unwrap()).err().unwrap();
    assert!(e.contains("SD_ASYM_CPUCAPACITY"), "{e}");
    let linsched = Eas::new(&Platform::builtin("linsched-2b2l").unwrap()).unwrap();
    let costs: Vec<Vec<u64>> = linsched.em.domains.iter().map(|d| d.states.iter().map(|s| s.cost).collect()).collect();
    assert_eq!(costs, [[133], [990]]);
    assert_eq!(eas().required_governor(), Some("schedutil"));
    assert!(eas().uses_util() && eas().uses_tick());
    // 8 CPUs at HZ=200: 8 ms -> 2 jiffies; busy 128 ms -> 26 jiffies
    assert_eq!((eas().balance_interval_us, eas().busy_balance_interval_us), (10_000.0, 130_000.0));
}

/// `eas-eevdf` with a clamped task seen (the kernel's `sched_uclamp_used`).
fn eas_612_clamped() -> Eas {
    Eas { uclamp_used: true, ..eas_612() }
}

#[test]
fn under_6_12_a_util_max_keeps_a_cpu_from_over_utilisation() {
    // thread 0 runs on LITTLE CPU 1 at 370 with util_max 300, counted on the run queue.
    // 6.12 cpu_overutilized: !util_fits_cpu(370, rq 0..300, CPU 1): 370·1280 = 473600 >
    // 377·1024 = 386048 does not fit, but util_max 300 <= 377 forces the fit: not
    // over-utilised; task_fits_cpu (util_est 370, the same cap) fits fully: no misfit.
    // 5.10 asks fits_capacity(370, 377) of the CPU: over-utilised (its misfit test reads the
    // clamped 300, which fits: 384000 < 386048)
    let mut f = exynos(1, 370, [0, 370, 0, 0, 0, 0, 0, 0]);
    f.tasks[0].uclamp = Clamp { min: 0, max: 300 };
    f.rqs[1].curr = Some(0);
    f.rqs[1].uclamp.inc(f.tasks[0].uclamp);
    let mut out = vec![];
    let mut e = eas_612_clamped();
    e.tick(&f.view(), 1, &mut out);
    assert_eq!((e.overutilized(), e.misfit[1]), (Some(false), None));
    let mut e = Eas { uclamp_used: true, ..eas() };
    e.tick(&f.view(), 1, &mut out);
    assert_eq!((e.overutilized(), e.misfit[1]), (Some(true), None));
}

#[test]
fn under_6_12_a_task_misfits_by_its_full_fit_and_never_on_its_biggest_cpu() {
    // util 50 with util_min 320 running on LITTLE CPU 1. 6.12 task_fits_cpu: 50 fits, 320 <=
    // 377 (actual capacity): a full fit, no misfit. 5.10 reads the clamped 320: 409600 >
    // 386048, a misfit
    let mut f = exynos(1, 50, [0, 50, 0, 0, 0, 0, 0, 0]);
    f.tasks[0].uclamp = Clamp { min: 320, max: 1024 };
    f.rqs[1].curr = Some(0);
    let mut out = vec![];
    let mut e = eas_612_clamped();
    e.update_misfit(&f.view(), 1);
    assert_eq!(e.misfit[1], None);
    let mut e = eas();
    e.update_misfit(&f.view(), 1);
    assert_eq!(e.misfit[1], Some(0));
    // util_min 400 is above LITTLE's 377: a lesser fit (-1), not a full one: a misfit in 6.12
    f.tasks[0].uclamp = Clamp { min: 400, max: 1024 };
    let mut e = eas_612_clamped();
    e.update_misfit(&f.view(), 1);
    assert_eq!(e.misfit[1], Some(0));
    // at 950 on big CPU 5 (950·1280 > 1024·1024) it does not fit, but no CPU it may use is
    // bigger (6.10's max_allowed_capacity): no misfit in 6.12; 5.10 flags it
    let mut f = exynos(5, 950, [0, 0, 0, 0, 0, 950, 0, 0]);
    f.rqs[5].curr = Some(0);
    let mut e = eas_612_clamped();
    e.update_misfit(&f.view(), 5);
    assert_eq!(e.misfit[5], None);
    let mut e = eas();
    e.update_misfit(&f.view(), 5);
    assert_eq!(e.misfit[5], Some(0));
    // allowed on LITTLE too but the big CPUs are offline: LITTLE is the biggest it may use
    let mut f = exynos(1, 370, [0, 370, 0, 0, 0, 0, 0, 0]);
    f.rqs[1].curr = Some(0);
    for rq in &mut f.rqs[4..] {
        rq.online = false;
    }
    let mut e = eas_612();
    e.update_misfit(&f.view(), 1);
    assert_eq!(e.misfit[1], None);
    e.tick(&f.view(), 1, &mut out);
    assert!(out.is_empty());
}
