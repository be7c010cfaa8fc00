//! The engine's mechanisms, end to end in Rust: the snoop effect and the L2 step of the seed
//! paper, the energy account, determinism, kernel threads, the scheduler seam (a policy of the
//! test's own, the tick, migrating a running thread), the CPU map and the cost of threads.

use super::*;
use crate::sched::{Migration, SchedPolicy, SchedView, WakeKind};
use crate::trace::TraceEvent;
use crate::workload::{Access, MemProfile, Order, Pattern, Phase, PhaseKind, Task};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

fn exynos() -> Platform {
    Platform::builtin("exynos5422").unwrap()
}

fn cluster(p: &Platform, name: &str) -> usize {
    p.cluster_index(name).unwrap()
}

/// `governor` on every policy, with `freq` pins, tasks restricted to `on` (a cluster name).
fn config(p: &Platform, governor: &str, on: Option<&str>, freq: &[(&str, u32)]) -> SimConfig {
    let active = on.map(|n| cluster(p, n));
    let fixed: Vec<(usize, u32)> = freq.iter().map(|&(n, khz)| (cluster(p, n), khz)).collect();
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], active, &fixed).unwrap());
    c.cluster = active;
    c
}

fn run(p: &Platform, workload: &str, config: SimConfig) -> RunResult {
    simulate(p, &Workload::from_spec(workload).unwrap(), config).unwrap()
}

/// ns per load of a ccbench chase of `size` elements on LITTLE at 1.4 GHz with the idle big
/// cluster at `big_khz`.
fn chase_ns(p: &Platform, size: u64, big_khz: u32) -> f64 {
    let loads = 2_000_000;
    let c = config(p, "userspace", Some("little"), &[("little", 1_400_000), ("big", big_khz)]);
    run(p, &format!("ccbench:size={size},pattern=random,iterations={loads}"), c).time_s * 1e9 / loads as f64
}

#[test]
fn snoops_served_by_a_slow_idle_cluster_slow_down_the_other() {
    let p = exynos();
    // 4 MB misses the A7's L2: every miss snoops the idle big cluster
    let slow = chase_ns(&p, 1_048_576, 200_000);
    let fast = chase_ns(&p, 1_048_576, 2_000_000);
    assert!(slow / fast > 2.5, "slow {slow} ns vs fast {fast} ns per load");
    // 32 KB stays in the L1 and L2: no L2 miss, no snoop, no effect
    let ratio = chase_ns(&p, 8192, 200_000) / chase_ns(&p, 8192, 2_000_000);
    assert!((ratio - 1.0).abs() < 1e-3, "{ratio}");
}

#[test]
fn the_a7_l2_step_sits_at_its_512_kb() {
    let p = exynos();
    // 256 KB fits; at 512 KB the system's share of the L2 (page tables, code) already costs misses
    let fits = chase_ns(&p, 65_536, 2_000_000);
    let at_size = chase_ns(&p, 131_072, 2_000_000);
    assert!(at_size / fits > 2.0, "{fits} -> {at_size} ns per load");
    let misses = chase_ns(&p, 262_144, 2_000_000);
    assert!(misses / fits > 5.0, "{fits} -> {misses} ns per load");
}

#[test]
fn every_joule_is_in_the_account() {
    let p = exynos();
    let r = run(&p, "cpu-bound:threads=4,instructions=1e9", config(&p, "ondemand", None, &[]));
    let e = &r.energy;
    let clusters: f64 = e.clusters_j.iter().sum();
    assert!((e.sensors_j - (clusters + e.dram_j)).abs() < 1e-12);
    assert!((e.total_j - (e.sensors_j + e.board_j)).abs() < 1e-12);
    for (c, j) in r.clusters.iter().zip(&e.clusters_j) {
        assert!((c.dynamic_j + c.static_j - j).abs() < 1e-12);
    }
    // the board draws its rest power for the whole run (and the first reading after it)
    assert!(e.board_j >= p.board.rest_power_mw * 1e-3 * r.time_s);
    // the paper's sampled readings agree with the exact integral within a reading's worth
    let reading_j = (clusters + e.dram_j) / r.time_s * p.sensors.period_us as f64 * 1e-6;
    assert!((e.sensor_readings_j - e.sensors_j).abs() < 2.0 * reading_j, "{e:?}");
    // kernel bursts on the idle LITTLE CPUs switch: their dynamic energy is charged
    let idle = run(&p, "ccbench:size=4096,iterations=20000000", config(&p, "performance", Some("big"), &[]));
    assert!(idle.clusters[cluster(&p, "little")].dynamic_j > 0.0);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let p = exynos();
    let json = |seed| {
        let mut c = config(&p, "ondemand", None, &[]);
        c.seed = seed;
        c.scheduler = SchedPolicy::Smp;
        serde_json::to_string(&run(&p, "mixed8", c)).unwrap()
    };
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
}

#[test]
fn series_off_changes_nothing_but_the_series() {
    let p = exynos();
    let with = run(&p, "mixed8", config(&p, "ondemand", None, &[]));
    let mut c = config(&p, "ondemand", None, &[]);
    c.series = false;
    let without = run(&p, "mixed8", c);
    assert!(!with.series.is_empty() && without.series.is_empty());
    assert_eq!(serde_json::to_string(&with).unwrap(), serde_json::to_string(&without).unwrap());
}

fn compute_phase(instructions: f64) -> Phase {
    let access = Access::new(16384, Pattern::Sequential, 4, Order::Cyclic);
    Phase {
        kind: PhaseKind::Compute { instructions },
        mem: MemProfile::single(1.0, 0.25, access, false, 0.0),
        mark: None,
        rcu: Default::default(),
        spread: Default::default(),
    }
}

#[test]
fn kernel_threads_are_placed_like_tasks_and_do_not_keep_a_run_alive() {
    let p = exynos();
    let mut c = config(&p, "performance", Some("big"), &[]);
    // a kthread on CPU 1 with far more work than the workload
    c.kernel_threads = vec![crate::kernel::kthread("kworker/1:1", Some(vec![1]), vec![compute_phase(1e12)])];
    let r = run(&p, "cpu-bound:threads=1,instructions=1e9", c);
    assert!(r.completed);
    let k = r.threads.iter().find(|t| t.name == "kworker/1:1").unwrap();
    assert!(k.tid < crate::kernel::FIRST_USER_TID && k.cpu_time_s > 0.0);
    // it ran on CPU 1 (a LITTLE CPU, although the workload is restricted to big) for the
    // whole run
    assert!((r.cpus[1].busy_s - r.time_s).abs() < 0.01, "{} vs {}", r.cpus[1].busy_s, r.time_s);
}

/// A placement of the test's own: `pinned`'s choices, plus at the first tick after `at_us` it
/// moves thread 0, running, to `to_cpu`; it counts the ticks it sees per CPU.
struct MoveAt {
    at_us: f64,
    to_cpu: usize,
    moved: bool,
    ticks: Arc<Vec<AtomicU32>>,
}

impl MoveAt {
    fn new(at_us: f64, to_cpu: usize) -> MoveAt {
        MoveAt { at_us, to_cpu, moved: false, ticks: Arc::new((0..8).map(|_| AtomicU32::new(0)).collect()) }
    }
}

impl Placement for MoveAt {
    fn name(&self) -> &'static str {
        "move-at"
    }
    fn select_cpu(&mut self, view: &SchedView, thread: usize, kind: WakeKind) -> usize {
        crate::sched::pinned::Pinned.select_cpu(view, thread, kind)
    }
    fn tick(&mut self, view: &SchedView, cpu: usize, out: &mut Vec<Migration>) {
        self.ticks[cpu].fetch_add(1, Ordering::Relaxed);
        if !self.moved && view.now_us >= self.at_us && view.rqs[cpu].curr == Some(0) {
            self.moved = true;
            out.push(Migration { thread: 0, to_cpu: self.to_cpu });
        }
    }
    fn uses_tick(&self) -> bool {
        true
    }
}

#[test]
fn a_tick_hook_migrates_a_running_thread() {
    let p = exynos();
    let workload = Workload::from_spec("cpu-bound:threads=1,instructions=4e9").unwrap();
    let mut c = config(&p, "performance", None, &[]);
    let mut on_little = c.clone();
    on_little.cluster = Some(cluster(&p, "little"));
    let little_only = simulate(&p, &workload, on_little).unwrap();

    // start it on CPU 0 (LITTLE): pinned puts thread 0 on its first allowed CPU
    c.scheduler = SchedPolicy::Smp;
    let mut engine = Engine::with_placement(&p, &workload, c.clone(), Box::new(MoveAt::new(500_000.0, 4))).unwrap();
    assert!(!engine.run_until(400_000.0));
    assert_eq!(engine.sched.cpu_of(0), 0);
    let r = engine.run().unwrap();
    assert_eq!(r.threads[0].migrations, 1);
    // half a second on an A7, then the rest on an A15 at 2 GHz: much sooner than all on LITTLE
    assert!(r.cpus[0].busy_s > 0.49 && r.cpus[0].busy_s < 0.52, "{:?}", r.cpus[0]);
    assert!(r.cpus[4].busy_s > 0.0);
    assert!(r.time_s < 0.7 * little_only.time_s, "{} vs {}", r.time_s, little_only.time_s);

    // ticks come at HZ (200 on the Exynos 5422) on busy CPUs only, jiffies-aligned
    let counter = MoveAt::new(f64::INFINITY, 0);
    let ticks = Arc::clone(&counter.ticks);
    let mut engine = Engine::with_placement(&p, &workload, c, Box::new(counter)).unwrap();
    engine.run_until(1e6);
    let per_cpu: Vec<u32> = ticks.iter().map(|t| t.load(Ordering::Relaxed)).collect();
    assert_eq!(per_cpu[0], 200, "{per_cpu:?}");
    assert!(per_cpu[1..].iter().all(|&n| n == 0), "idle CPUs have stopped their tick: {per_cpu:?}");
}

#[test]
fn a_running_thread_moved_by_the_stopper_waits_the_platforms_latency() {
    // the same move at 0.5 s with the platform's stopper latency at 0 and at 1 ms: the run
    // ends 1 ms later, and the A15 counts it as busy (the stopper and the switch run there)
    let workload = Workload::from_spec("cpu-bound:threads=1,instructions=4e9").unwrap();
    let ends = |latency_us: f64| {
        let mut p = exynos();
        p.sched.active_migration_latency_us = latency_us;
        let mut c = config(&p, "performance", None, &[]);
        c.kernel_threads = vec![];
        let engine = Engine::with_placement(&p, &workload, c, Box::new(MoveAt::new(500_000.0, 4))).unwrap();
        let r = engine.run().unwrap();
        (r.time_s, r.cpus[4].busy_s)
    };
    let (fast, busy_fast) = ends(0.0);
    let (slow, busy_slow) = ends(1000.0);
    assert!(((slow - fast) - 1e-3).abs() < 1e-6, "{fast} s vs {slow} s");
    assert!(((busy_slow - busy_fast) - 1e-3).abs() < 1e-6);
    // the Exynos 5422's own figure (TC2's short end, LSK-MP 0075)
    assert_eq!(exynos().sched.active_migration_latency_us, 80.0);
}

#[test]
fn a_logical_cpu_moved_to_a_big_core_runs_at_big_speed() {
    let p = exynos();
    let workload = Workload::from_spec("cpu-bound:threads=1,instructions=4e9").unwrap();
    let mut c = config(&p, "performance", None, &[]);
    c.kernel_threads = vec![];
    let little_only = {
        let mut l = c.clone();
        l.cluster = Some(cluster(&p, "little"));
        simulate(&p, &workload, l).unwrap()
    };
    let mut l = c.clone();
    l.cluster = Some(cluster(&p, "little"));
    let mut engine = Engine::new(&p, &workload, l).unwrap();
    engine.run_until(500_000.0);
    // the in-kernel switcher's move: logical CPU 0 onto core 4 (an A15)
    engine.move_cpu_to_core(0, 4).unwrap();
    assert_eq!((engine.core_of(0), engine.core_of(4)), (4, 0));
    assert!(engine.move_cpu_to_core(0, 99).is_err());
    let r = engine.run().unwrap();
    assert_eq!(r.cpus[0].cluster, "big");
    assert!(r.time_s < 0.7 * little_only.time_s, "{} vs {}", r.time_s, little_only.time_s);
}

#[test]
fn sleep_timers_wake_each_thread_on_time() {
    // 200 threads on one CPU, thread i sleeps i ms then runs a short job: each wakes at its
    // time (the timer queues of every CPU), and with one CPU they finish in order
    let p = exynos();
    let phases = |i: usize| {
        vec![
            Phase { kind: PhaseKind::Sleep { duration_us: 1000 * i as u64 }, ..compute_phase(0.0) },
            compute_phase(1e5),
        ]
    };
    let w = Workload {
        duration_us: None,
        reference_cpu: None,
        taskgroups: Vec::new(),
        irqs: Vec::new(),
        name: "sleepers".into(),
        tasks: (1..=200).map(|i| Task { affinity: Some(vec![4]), ..Task::new(format!("s{i}"), phases(i)) }).collect(),
    };
    let r = simulate(&p, &w, config(&p, "performance", None, &[])).unwrap();
    for (i, th) in r.threads.iter().enumerate() {
        let woke_s = (i + 1) as f64 * 1e-3;
        // 1e5 instructions at 2 GHz take ~60 µs; a kernel burst may add tens of µs
        assert!(th.finish_s > woke_s && th.finish_s < woke_s + 5e-4, "{}: {}", th.name, th.finish_s);
    }
    assert!(r.threads.windows(2).all(|w| w[0].finish_s < w[1].finish_s));
}

#[test]
fn schedutil_follows_pelt() {
    // a CPU-bound thread on big: PELT util climbs to the capacity, schedutil goes to the top
    // OPP; the idle LITTLE cluster's util stays near 0 and so does its frequency
    let p = exynos();
    let r = run(&p, "cpu-bound:threads=1,instructions=4e9", config(&p, "schedutil", Some("big"), &[]));
    let (big, little) = (&r.clusters[cluster(&p, "big")], &r.clusters[cluster(&p, "little")]);
    let top = big.residency.last().unwrap();
    assert!(top.1 > 0.8 * r.time_s, "{:?}", big.residency);
    assert!(little.avg_freq_khz < 400_000.0, "{}", little.avg_freq_khz);
}

#[test]
fn a_streamed_series_is_the_kept_one() {
    let p = exynos();
    let w = Workload::from_spec("mixed8").unwrap();
    let kept = simulate(&p, &w, config(&p, "ondemand", None, &[])).unwrap().series;
    let mut streamed = Vec::new();
    let mut engine = Engine::new(&p, &w, config(&p, "ondemand", None, &[])).unwrap();
    engine.stream_series(|row| streamed.push(row.time_s));
    let r = engine.run().unwrap();
    assert!(r.series.is_empty());
    assert_eq!(streamed, kept.iter().map(|row| row.time_s).collect::<Vec<_>>());
}

/// A workload of CPU-bound tasks, one thread each, all pinned to CPU 4 (an A15), with `nice`s.
fn sharing(nices: &[i32]) -> Workload {
    let tasks = nices
        .iter()
        .enumerate()
        .map(|(i, &nice)| Task {
            nice,
            affinity: Some(vec![4]),
            ..Task::new(format!("t{i}"), vec![compute_phase(1e12)])
        })
        .collect();
    Workload {
        name: "sharing".into(),
        tasks,
        duration_us: None,
        reference_cpu: None,
        taskgroups: Vec::new(),
        irqs: Vec::new(),
    }
}

fn cpu_times(p: &Platform, w: &Workload, limit_s: f64) -> Vec<f64> {
    let mut c = config(p, "performance", None, &[]);
    c.time_limit_s = limit_s;
    simulate(p, w, c).unwrap().threads.iter().map(|t| t.cpu_time_s).collect()
}

#[test]
fn cfs_shares_a_cpu_by_weight() {
    let p = exynos();
    // two nice-0 tasks: 50/50 within 1 %
    let t = cpu_times(&p, &sharing(&[0, 0]), 2.0);
    assert!((t[0] / (t[0] + t[1]) - 0.5).abs() < 0.01, "{t:?}");
    // nice 0 against nice 5: by their weights, 1024 : 335
    let t = cpu_times(&p, &sharing(&[0, 5]), 2.0);
    let want = 1024.0 / (1024.0 + 335.0);
    assert!((t[0] / (t[0] + t[1]) - want).abs() < 0.01, "{t:?} want {want}");
}

#[test]
fn a_sched_idle_task_gets_its_weight_of_3_and_the_cpu_when_it_is_otherwise_idle() {
    use crate::workload::SchedClass;
    let p = exynos();
    // a nice-0 hog and a SCHED_IDLE hog on CPU 4 for 10 s: 1024/(1024+3) = 99.71 % to the
    // first. HZ 200: the idle task runs one 5 ms tick per turn, which puts it 5·1024/3 =
    // 1707 ms ahead in vruntime, so it gets 5 or 6 turns (25-30 ms) in 10 s.
    let mut w = sharing(&[0, -20]);
    w.tasks[1].class = SchedClass::Idle; // its nice value does not matter
    let t = cpu_times(&p, &w, 10.0);
    let share = t[0] / (t[0] + t[1]);
    assert!((share - 1024.0 / 1027.0).abs() < 0.0006, "{t:?}: {share}");
    assert!(t[1] > 0.02, "{t:?}");
    // beside a task that runs 2 ms of each 10 ms (rt-app-like periodic), it takes the rest,
    // and the periodic one is never kept waiting: it preempts at each release
    let mut w = sharing(&[0]);
    w.tasks[0].class = SchedClass::Idle;
    w.tasks.push(Task {
        name: "periodic".into(),
        phases: vec![Phase {
            kind: PhaseKind::Periodic { run_us: 2000.0, period_us: 10_000, count: 50 },
            ..compute_phase(0.0)
        }],
        ..w.tasks[0].clone()
    });
    w.tasks[1].class = SchedClass::Normal;
    let mut c = config(&p, "performance", None, &[]);
    c.time_limit_s = 1.0;
    let r = simulate(&p, &w, c).unwrap();
    let (idle, periodic) = (r.threads[0].cpu_time_s, &r.threads[1]);
    // 50 jobs of 2 ms from a random start within the first period: done 0.492 s after it, the
    // rest of the second the idle task's
    assert!(periodic.finish_s > 0.4919 && periodic.finish_s < 0.5021, "{periodic:?}");
    assert!((periodic.cpu_time_s - 0.1).abs() < 0.0005, "{periodic:?}");
    assert!((idle - 0.9).abs() < 0.001, "{idle}");
}

#[test]
fn a_waking_sleeper_preempts_a_cpu_hog() {
    // a hog on CPU 4, and a task that sleeps 50 ms then runs 0.1 ms: woken far behind in
    // vruntime, it preempts the hog at once (wake-up preemption) instead of waiting a turn
    let p = exynos();
    let mut w = sharing(&[0]);
    let phases =
        vec![Phase { kind: PhaseKind::Sleep { duration_us: 50_000 }, ..compute_phase(0.0) }, compute_phase(2e5)];
    w.tasks.push(Task { affinity: Some(vec![4]), ..Task::new("sleeper", phases) });
    let mut c = config(&p, "performance", None, &[]);
    c.time_limit_s = 0.2;
    let r = simulate(&p, &w, c).unwrap();
    let sleeper = r.threads.iter().find(|t| t.name.starts_with("sleeper")).unwrap();
    assert!(sleeper.finish_s > 0.050 && sleeper.finish_s < 0.0505, "{}", sleeper.finish_s);
}

#[test]
fn resume_wakes_the_suspended_and_a_lost_resume_is_lost() {
    let p = exynos();
    let text = |first: &str, second: &str| {
        format!(
            "name='pair'\n[[tasks]]\nname='a'\naffinity=[4]\n[[tasks.phases]]\n{first}\n[[tasks.phases]]\nresume='go'\n\
             [[tasks]]\nname='b'\naffinity=[5]\n[[tasks.phases]]\n{second}\n[[tasks.phases]]\nsuspend='go'\n\
             [[tasks.phases]]\ninstructions=1e6\nmark='b-runs'\n"
        )
    };
    let mut c = config(&p, "performance", None, &[]);
    c.time_limit_s = 1.0;
    // b suspends at once; a works 1e9 instructions (about half a second on an A15) then resumes it
    let w = Workload::from_toml("pair.toml", &text("instructions=1e9", "sleep_us=1")).unwrap();
    let r = simulate(&p, &w, c.clone()).unwrap();
    assert!(r.completed);
    let (a, b) = (&r.threads[0], &r.threads[1]);
    assert!(b.finish_s > a.finish_s && b.finish_s < a.finish_s + 0.001, "{} {}", a.finish_s, b.finish_s);
    // the mark records when b entered its work phase: at a's resume
    assert_eq!(r.marks.len(), 1);
    assert_eq!((r.marks[0].tid, r.marks[0].name.as_str()), (b.tid, "b-runs"));
    assert!((r.marks[0].time_s - a.finish_s).abs() < 1e-9);
    // b suspends only after a's resume: the broadcast found nobody and is lost (rt-app's
    // condition-variable semantics), so b waits to the time limit
    let w = Workload::from_toml("pair.toml", &text("sleep_us=1", "sleep_us=100000")).unwrap();
    let r = simulate(&p, &w, c).unwrap();
    assert!(!r.completed);
}

#[test]
fn cpu_time_is_kept_per_cpu() {
    // the migration test's thread: its time on CPU 0, then on CPU 4, adds up to its CPU time
    let p = exynos();
    let workload = Workload::from_spec("cpu-bound:threads=1,instructions=4e9").unwrap();
    let mut c = config(&p, "performance", None, &[]);
    c.scheduler = SchedPolicy::Smp;
    let r = Engine::with_placement(&p, &workload, c, Box::new(MoveAt::new(500_000.0, 4))).unwrap().run().unwrap();
    let on = &r.threads[0].cpu_time_on_s;
    assert!((on.iter().sum::<f64>() - r.threads[0].cpu_time_s).abs() < 1e-9);
    assert!((on[0] - r.cpus[0].busy_s).abs() < 0.01 && on[4] > 0.0, "{on:?}");
}

/// A caller's stop flag ends a run with `STOPPED` once set, and changes nothing while unset.
#[test]
fn a_stop_flag_ends_a_run_and_is_otherwise_invisible() {
    let p = exynos();
    let w = Workload::from_spec("mixed8").unwrap();
    let plain = simulate(&p, &w, config(&p, "ondemand", None, &[])).unwrap();
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watched =
        simulate(&p, &w, SimConfig { stop: Some(flag.clone()), ..config(&p, "ondemand", None, &[]) }).unwrap();
    assert_eq!(serde_json::to_string(&plain).unwrap(), serde_json::to_string(&watched).unwrap());
    flag.store(true, Ordering::Relaxed);
    let stopped = simulate(&p, &w, SimConfig { stop: Some(flag), ..config(&p, "ondemand", None, &[]) });
    assert_eq!(stopped.unwrap_err(), STOPPED);
}

/// A task that loops through work-less phases forever, all inside one event (resume wakes no
/// one and takes no time), ends as making no progress instead of hanging.
#[test]
fn a_loop_of_workless_phases_inside_one_event_is_an_error() {
    let p = exynos();
    let w = Workload::from_toml(
        "loop.toml",
        "name = \"loop\"\n[[tasks]]\nname = \"spin\"\nrepeat = 4294967295\n[[tasks.phases]]\nresume = \"nobody\"\n",
    )
    .unwrap();
    let e = simulate(&p, &w, config(&p, "ondemand", None, &[])).unwrap_err();
    assert!(e.starts_with("no progress in simulated time"), "{e}");
}

/// OS jitter on an idle CPU is traced ahead (its idle entry at the burst's end); a thread
/// switched in before that end waits for the burst, and the entry is dropped: in time order, no
/// CPU enters an idle state while a thread runs on it, and each CPU's busy time is the time a
/// thread or a burst held it, counted once.
#[test]
fn a_thread_switched_in_during_a_kernel_burst_waits_for_it() {
    let p = exynos();
    let mut c = config(&p, "schedutil", None, &[]);
    c.scheduler = SchedPolicy::parse("smp").unwrap();
    c.trace = true;
    let r = run(&p, "mixed8", c);
    let mut events: Vec<&TraceEvent> = r.trace.iter().collect();
    events.sort_by(|a, b| a.time_us().total_cmp(&b.time_us()));
    let mut running = vec![false; p.ncpus()];
    for e in events {
        match *e {
            TraceEvent::SchedSwitch { cpu, next_tid, .. } => running[cpu] = next_tid != 0,
            TraceEvent::CpuIdle { cpu, state, time_us } if state != crate::trace::CPU_IDLE_EXIT => {
                assert!(!running[cpu], "CPU {cpu} enters idle state {state} at {time_us} µs with a thread on it");
            }
            _ => {}
        }
    }
}

#[test]
fn an_idle_core_powers_down_and_takes_its_share_of_the_leakage() {
    // The 5433's vendor cpuidle: each A53 may power down (C2, 20 µs out, 750 µs residency),
    // the A57 cluster as a whole (C2-1); a thread busy 1 ms in every 10 on one A53.
    let p = Platform::builtin("exynos5433").unwrap();
    let work = "periodic:run_us=1000,period_us=10000,duration_us=1000000,threads=1";
    let traced = |cpuidle| {
        let mut c = config(&p, "performance", Some("little"), &[]);
        c.cpuidle = cpuidle;
        c.trace = true;
        run(&p, work, c)
    };
    let (wfi, deep) = (traced(CpuIdle::Wfi), traced(CpuIdle::ClusterOff));
    let static_j = |r: &RunResult| r.clusters[cluster(&p, "little")].static_j;
    // With core_leakage_share 0.30, gating all four A53s all along would take 0.30 of the
    // cluster's leakage away, the three idle ones alone 0.30 · 3/4; the busy one is gated 9 ms
    // in 10, and OS jitter wakes each core now and then.
    let ratio = static_j(&deep) / static_j(&wfi);
    assert!((1.0 - 0.30..1.0 - 0.30 * 3.0 / 4.0).contains(&ratio), "static energy ratio {ratio}");
    let entries = |r: &RunResult, cpus: std::ops::Range<usize>, state: u32| {
        r.trace
            .iter()
            .filter(|e| matches!(**e, TraceEvent::CpuIdle { cpu, state: s, .. } if cpus.contains(&cpu) && s == state))
            .count()
    };
    // the busy A53 enters its core state once per period; the LITTLE cluster has no cluster
    // state, the idle A57s go core-off then cluster-off (index 2 after the core state)
    assert!(entries(&deep, 0..4, 1) >= 100, "{}", entries(&deep, 0..4, 1));
    assert_eq!(entries(&deep, 0..4, 2), 0);
    assert!(entries(&deep, 4..8, 2) >= 4);
    assert_eq!(entries(&wfi, 0..8, 1) + entries(&wfi, 0..8, 2), 0);
    // each wake-up from the core state holds the thread 20 µs longer on its CPU: 99 of them
    // (the first wake-up finds the core powered), a little more where it joins kernel work
    // that woke the core just before and paid the exit itself
    let on_cpu_us = |r: &RunResult| {
        let tid = r.threads.iter().find(|t| t.name.starts_with("periodic")).unwrap().tid;
        let (mut since, mut total) = (None, 0.0);
        for e in &r.trace {
            if let TraceEvent::SchedSwitch { time_us, prev_tid, next_tid, .. } = *e {
                if let Some(t0) = since.filter(|_| prev_tid == tid) {
                    total += time_us - t0;
                    since = None;
                }
                if next_tid == tid {
                    since = Some(time_us);
                }
            }
        }
        total
    };
    let extra_us = on_cpu_us(&deep) - on_cpu_us(&wfi);
    assert!((99.0 * 20.0 - 1.0..99.0 * 20.0 * 1.2).contains(&extra_us), "{extra_us} µs");
}

#[test]
fn short_idles_between_hand_offs_stay_in_wfi() {
    // Sandra's inter-core bandwidth test hands lines from core to core: each wait ends when
    // another CPU signals, which no timer announces. The menu governor's recent-history
    // prediction keeps those idles shallow; deciding on timers alone powered cores and the A57
    // cluster down between transfers (8x slower on the four A57s).
    let p = Platform::builtin("exynos5433").unwrap();
    let time_s = |cpuidle| {
        let mut c = config(&p, "performance", Some("big"), &[]);
        c.cpuidle = cpuidle;
        run(&p, "sandra-intercore-bandwidth", c).time_s
    };
    let ratio = time_s(CpuIdle::ClusterOff) / time_s(CpuIdle::Wfi);
    assert!(ratio < 1.05, "{ratio}");
}

/// Idle entries of `cpu` in `state` from `from_us` on.
fn idle_entries(r: &RunResult, on: usize, state: u32, from_us: f64, to_us: f64) -> usize {
    r.trace
        .iter()
        .filter(|e| {
            matches!(**e, TraceEvent::CpuIdle { cpu, state: s, time_us }
                if cpu == on && s == state && (from_us..to_us).contains(&time_us))
        })
        .count()
}

#[test]
fn wake_ups_before_the_timer_teach_the_menu_governor_to_stay_shallow() {
    // On an A53 of the 5433 (core C2: 20 µs out, 750 µs residency) a thread sleeps 40 ms at a
    // time, so the next timer is far; another is woken every 150-650 µs by a thread on CPU 0
    // (irregular, so the recent-history predictor finds no typical period). At first the
    // timer is believed and the core powers down; each early wake-up lowers the correction
    // factor of its bucket until the corrected prediction falls under the residency.
    let p = Platform::builtin("exynos5433").unwrap();
    let waker_phases: String = [150, 600, 250, 500, 180, 650, 300, 450]
        .iter()
        .map(|us| format!("[[tasks.phases]]\nsleep_us={us}\n[[tasks.phases]]\nresume='go'\n"))
        .collect();
    let text = format!(
        "name='early'\n[[tasks]]\nname='timer'\naffinity=[1]\nrepeat=100\n[[tasks.phases]]\nsleep_us=40000\n\
         [[tasks.phases]]\ninstructions=1e4\n\
         [[tasks]]\nname='waiter'\naffinity=[1]\nrepeat=100000\n[[tasks.phases]]\nsuspend='go'\n\
         [[tasks.phases]]\ninstructions=1e4\n\
         [[tasks]]\nname='waker'\naffinity=[0]\nrepeat=100000\n{waker_phases}"
    );
    let w = Workload::from_toml("early.toml", &text).unwrap();
    let mut c = config(&p, "performance", None, &[]);
    c.cpuidle = CpuIdle::ClusterOff;
    c.trace = true;
    let mut engine = Engine::new(&p, &w, c).unwrap();
    engine.run_until(400_000.0);
    // bucket 4 (next timer 10-100 ms) learnt idles of about 1/50 of the timer
    let factor = engine.idle.correction_ratio(1, 4);
    assert!(factor < 0.1, "correction factor {factor}");
    let r = engine.finish(false);
    let share = |from_us, to_us| {
        let idles = idle_entries(&r, 1, crate::model::idle::STATE_WFI, from_us, to_us);
        idle_entries(&r, 1, crate::model::idle::STATE_CORE_OFF, from_us, to_us) as f64 / idles as f64
    };
    let (first, last) = (share(0.0, 5_000.0), share(200_000.0, 400_000.0));
    assert!(first > 0.8, "core-off in {first} of the first idles");
    assert!(last < 0.2, "core-off in {last} of the idles after 200 ms");
}

#[test]
fn a_cpu_dma_latency_limit_keeps_the_cluster_up() {
    // The 5433's A57 cluster state takes 300 µs to leave, each A57's own 30 µs: a limit
    // between them keeps the idle cluster powered while its cores still power down; 0 keeps
    // every CPU in WFI.
    let p = Platform::builtin("exynos5433").unwrap();
    let work = "periodic:run_us=1000,period_us=10000,duration_us=300000,threads=1";
    let traced = |limit_us| {
        let mut c = config(&p, "performance", Some("little"), &[]);
        c.cpuidle = CpuIdle::ClusterOff;
        c.cpu_dma_latency_us = limit_us;
        c.trace = true;
        run(&p, work, c)
    };
    let deep =
        |r: &RunResult, state: u32| (4..8).map(|cpu| idle_entries(r, cpu, state, 0.0, f64::INFINITY)).sum::<usize>();
    let (free, limited, zero) = (traced(None), traced(Some(299)), traced(Some(0)));
    assert!(deep(&free, 2) >= 4 && deep(&limited, 1) >= 4, "{} {}", deep(&free, 2), deep(&limited, 1));
    assert_eq!(deep(&limited, 2), 0);
    assert_eq!(deep(&traced(Some(300)), 2), deep(&free, 2));
    assert_eq!((0..8).map(|cpu| idle_entries(&zero, cpu, 1, 0.0, f64::INFINITY) + idle_entries(&zero, cpu, 2, 0.0, f64::INFINITY)).sum::<usize>(), 0);
    assert_eq!(zero.clusters[cluster(&p, "big")].power_downs, 0);
}

mod resolve_tolerance;
mod rt_classes;
mod sched_trace;

#[test]
fn an_offline_cpu_takes_no_timer_under_nohz_full() {
    // TC2 with its A15 cluster (cpu0-1) offline and nohz_full on two of the three A7 CPUs: the
    // timers they arm go to the online housekeeping cpu2, not to cpu0 (which took the broadcast
    // timer's IPI_TIMERs before, hotplugged off as it is)
    let p = Platform::builtin("tc2").unwrap();
    // ondemand (the CLI's default) lets the A7s idle between cyclictest's wake-ups
    let mut c = config(&p, "ondemand", None, &[]);
    c.scheduler = SchedPolicy::Hmp;
    c.offline_clusters = vec![cluster(&p, "a15")];
    c.kernel = crate::kernel::boot::BootOptions::parse("nohz_full=3-4", p.ncpus()).unwrap();
    c.time_limit_s = 0.5;
    let r = run(&p, "cyclictest", c);
    let irqs = r.interrupts.expect("tc2 describes its kernel");
    assert!(irqs.sources.iter().any(|s| s.count[2] > 0), "the timers run on cpu2");
    for s in &irqs.sources {
        assert_eq!(&s.count[..2], &[0, 0], "{} on an offline CPU", s.name);
    }
}
