//! The big.LITTLE MP scheduler (`hmp`) and vanilla CFS (`smp`) end to end on the Exynos 5422
//! (its kernel's HMP settings: up 700, down 256, no packing, no priority filter; HZ=200):
//! forced up-migration once the load crosses the threshold, the priority filter, short tasks
//! staying on LITTLE, the delay between migrations, no balancing across clusters.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::TraceEvent;
use hetlab_core::workload::Workload;

fn exynos() -> Platform {
    Platform::builtin("exynos5422").unwrap()
}

/// A run of `workload` (TOML text) under `scheduler` with `knobs` and `governor` everywhere,
/// traced, for at most `limit_s`.
fn run(
    p: &Platform,
    workload: &str,
    scheduler: SchedPolicy,
    knobs: &[(&str, f64)],
    governor: &str,
    limit_s: f64,
) -> RunResult {
    let w = Workload::from_toml("test.toml", workload).unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.sched_tunables = knobs.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    c.trace = true;
    c.series = false;
    c.time_limit_s = limit_s;
    simulate(p, &w, c).unwrap()
}

/// CPU time of the threads whose name starts with `task` on `cluster`, s.
fn on(r: &RunResult, task: &str, cluster: &str) -> f64 {
    r.threads
        .iter()
        .filter(|t| t.name.starts_with(task))
        .flat_map(|t| t.cpu_time_on_s.iter().enumerate())
        .filter(|(cpu, _)| r.cpus[*cpu].cluster == cluster)
        .map(|(_, s)| s)
        .sum()
}

fn tid(r: &RunResult, name: &str) -> u32 {
    r.threads.iter().find(|t| t.name == name).unwrap().tid
}

/// Times `tid` was switched in on a CPU of `cluster`, µs.
fn switched_in(r: &RunResult, tid: u32, cluster: &str) -> Vec<f64> {
    r.trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::SchedSwitch { time_us, cpu, next_tid, .. }
                if next_tid == tid && r.cpus[cpu].cluster == cluster =>
            {
                Some(time_us)
            }
            _ => None,
        })
        .collect()
}

/// Times `tid` was woken, µs.
fn wakeups(r: &RunResult, tid: u32) -> Vec<f64> {
    r.trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::SchedWaking { time_us, tid: t, .. } if t == tid => Some(time_us),
            _ => None,
        })
        .collect()
}

/// `threads` threads of a light periodic warm-up (their load settles low and they move to
/// LITTLE), a `sleep_ms` sleep (the load decays to nothing), then `instructions` of CPU-bound
/// work.
fn warm_then_hog(name: &str, threads: u32, sleep_ms: u64, instructions: f64) -> String {
    format!(
        "[[tasks]]\nname='{name}'\nthreads={threads}\n[[tasks.phases]]\nrun_us=100\nperiod_us=20000\n\
         duration_us=1000000\n[[tasks.phases]]\nsleep_us={}\n[[tasks.phases]]\ninstructions={instructions}\n",
        sleep_ms * 1000
    )
}

#[test]
fn a_cpu_bound_task_on_little_goes_up_at_the_first_tick_after_its_load_crosses_700() {
    let p = exynos();
    let w = format!("name='w'\n{}", warm_then_hog("hog", 1, 500, 4e9));
    let r = run(&p, &w, SchedPolicy::Hmp, &[], "performance", 10.0);
    let hog = tid(&r, "hog-0");
    // the last wake-up starts the CPU-bound phase, on LITTLE
    let woke = *wakeups(&r, hog).last().unwrap();
    let little_since = switched_in(&r, hog, "little").into_iter().rfind(|&t| t <= woke + 1.0).unwrap();
    assert!(little_since >= woke - 1.0, "woke at {woke} µs but ran on LITTLE from {little_since}");
    let up = switched_in(&r, hog, "big").into_iter().find(|&t| t > woke).unwrap();
    // from a load of ~0 the ratio passes 700 after 32·log2(1024/324) = 53.1 periods of
    // 1.048576 ms = 55.7 ms; the tick (5 ms) that sees it pushes the task to an idle A15
    let delay_ms = (up - woke) / 1000.0;
    assert!((55.5..=61.0).contains(&delay_ms), "went up {delay_ms} ms after waking");
    println!("CPU-bound task on an A7 at 1.4 GHz: forced up {delay_ms:.2} ms after it started (closed form 55.7 ms)");
    // and stayed there to the end
    assert!(on(&r, "hog", "big") > 0.9 * (r.time_s - up * 1e-6), "{} s on big", on(&r, "hog", "big"));
}

#[test]
fn the_priority_filter_keeps_nice_10_off_big() {
    // a nice-10 and a nice-0 CPU-bound task from the start (fork), and a heavy periodic nice-0
    // task whose idle periods make big CPUs pull (idle pull)
    let p = exynos();
    let w = "name='w'\n[[tasks]]\nname='low'\nnice=10\n[[tasks.phases]]\ninstructions=3e9\n\
             [[tasks]]\nname='normal'\n[[tasks.phases]]\ninstructions=3e9\n\
             [[tasks]]\nname='frames'\nthreads=4\n[[tasks.phases]]\nrun_us=6000\nperiod_us=10000\nduration_us=1500000\n";
    let knobs = [("prio_filter", 1.0), ("prio_filter_val", 5.0)];
    let r = run(&p, w, SchedPolicy::Hmp, &knobs, "performance", 2.0);
    assert_eq!(on(&r, "low", "big"), 0.0, "{:?}", r.threads[0]);
    assert!(on(&r, "low", "little") > 1.0);
    assert!(on(&r, "normal", "big") > 0.9 * on(&r, "normal", "little") + 0.5);
    // without the filter the nice-10 task is forked onto big like any other
    let r = run(&p, w, SchedPolicy::Hmp, &[], "performance", 2.0);
    assert!(on(&r, "low", "big") > 0.1, "{:?}", r.threads[0]);
    // seed 003's first stab: only nice <= 0 goes up
    let r = run(&p, w, SchedPolicy::Hmp, &[("prio_filter", 1.0), ("prio_filter_val", 1.0)], "performance", 2.0);
    assert_eq!(on(&r, "low", "big"), 0.0);
}

#[test]
fn a_short_periodic_task_stays_on_little() {
    // 1 ms of reference work every 10 ms: about 27 % of an A7 at 1.4 GHz, a load of ~280
    let p = exynos();
    let w = "name='w'\n[[tasks]]\nname='tick'\n[[tasks.phases]]\nrun_us=1000\nperiod_us=10000\nduration_us=3000000\n";
    let r = run(&p, w, SchedPolicy::Hmp, &[], "performance", 4.0);
    let t = tid(&r, "tick-0");
    // forked onto big fully loaded (LSK-MP 0027), it goes down once its load at a sleep is
    // below 256, within about 65 ms (the decay from 1023), and never comes back
    let last_big = switched_in(&r, t, "big").last().copied().unwrap_or(0.0);
    assert!(last_big < 150_000.0, "last on big at {last_big} µs");
    assert!(on(&r, "tick", "little") > 0.7, "{} s on LITTLE", on(&r, "tick", "little"));
    // under packing and LSK's own 700/512 it stays there as well
    let r = run(&p, w, SchedPolicy::Hmp, &[("down_threshold", 512.0), ("packing_enable", 1.0)], "performance", 4.0);
    assert!(switched_in(&r, t, "big").last().copied().unwrap_or(0.0) < 150_000.0);
}

#[test]
fn a_big_cpu_going_idle_pulls_the_heavy_task_left_on_little() {
    // four tasks take the four A15s; a fifth turns heavy 100 ms later, finds no idle A15 and
    // stays on its A7 until the first A15 goes idle, which pulls it at once (hmp_idle_pull)
    let p = exynos();
    let w = format!("name='w'\n{}{}", warm_then_hog("short", 4, 500, 1e9), warm_then_hog("long", 1, 600, 4e9));
    let r = run(&p, &w, SchedPolicy::Hmp, &[], "performance", 10.0);
    let long = tid(&r, "long-4");
    let woke = *wakeups(&r, long).last().unwrap();
    let first_short_done =
        r.threads.iter().filter(|t| t.name.starts_with("short")).map(|t| t.finish_s).fold(f64::MAX, f64::min);
    let up = switched_in(&r, long, "big").into_iter().find(|&t| t > woke).unwrap();
    assert!(
        up * 1e-6 > first_short_done - 1e-9 && up * 1e-6 < first_short_done + 1e-4,
        "up {up} µs, done {first_short_done} s"
    );
    assert!(on(&r, "long", "little") > 0.2, "{}", on(&r, "long", "little"));
}

#[test]
fn on_the_emulated_vexpress_a_heavy_task_ends_on_the_unslowed_cpus() {
    // seed 003's b.L emulation: four A9s, `perf record -c 10000` slowing CPUs 1 and 3, the
    // HMP domains set by the CPU masks (fast 0,2; slow 1,3)
    let p = Platform::builtin("vexpress-a9").unwrap();
    let w = Workload::from_toml("w.toml", &format!("name='w'\n{}", warm_then_hog("hog", 1, 500, 1e9))).unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
    c.scheduler = SchedPolicy::Hmp;
    c.sched_tunables = vec![("fast_cpu_mask".into(), 5.0), ("slow_cpu_mask".into(), 10.0)];
    c.perf_sampling =
        Some(hetlab_core::kernel::perf_sampling::PerfSampling { cpus: vec![1, 3], period_instructions: 10_000 });
    c.series = false;
    let r = simulate(&p, &w, c).unwrap();
    let t = &r.threads[0];
    let fast = t.cpu_time_on_s[0] + t.cpu_time_on_s[2];
    let slow = t.cpu_time_on_s[1] + t.cpu_time_on_s[3];
    // the light warm-up settles on a slow CPU, the CPU-bound part goes up within ~60 ms
    assert!(slow > 0.01 && slow < 0.2, "{:?}", t.cpu_time_on_s);
    assert!(fast > 0.9 * (t.cpu_time_s - slow), "{:?}", t.cpu_time_on_s);
}

#[test]
fn per_cluster_domains_never_balance_across_clusters() {
    // 12 CPU-bound tasks starting with a sleep (no fork placement) on the first LITTLE CPU:
    // with up-migration off (no load reaches 1024) hmp leaves every one on LITTLE, balanced
    // over the four A7s; vanilla CFS spreads them over all eight CPUs
    let p = exynos();
    let w = "name='w'\n[[tasks]]\nname='spin'\nthreads=12\n[[tasks.phases]]\nsleep_us=1000\n\
             [[tasks.phases]]\ninstructions=1e9\n";
    let r = run(&p, w, SchedPolicy::Hmp, &[("up_threshold", 1024.0)], "performance", 10.0);
    assert_eq!(on(&r, "spin", "big"), 0.0);
    let little: Vec<f64> = r.cpus.iter().filter(|c| c.cluster == "little").map(|c| c.busy_s).collect();
    let (min, max) = little.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &b| (lo.min(b), hi.max(b)));
    assert!(min > 0.8 * max, "LITTLE CPUs busy {little:?}");
    let r = run(&p, w, SchedPolicy::Smp, &[], "performance", 10.0);
    assert!(on(&r, "spin", "big") > 0.3 * on(&r, "spin", "little"), "{} s", on(&r, "spin", "big"));
}

/// Placement knobs: (sysfs name, value).
type Knobs<'a> = &'a [(&'a str, f64)];

/// Seed 003's LinSched case (linsched-2b2l, linsched-test: the seven tasks for 10 s) under
/// `scheduler` with `knobs`: per task, its CPU time and the share of it on big.
fn linsched(scheduler: SchedPolicy, knobs: &[(&str, f64)]) -> Vec<(String, f64, f64)> {
    let p = Platform::builtin("linsched-2b2l").unwrap();
    let w = Workload::from_spec("linsched-test").unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.sched_tunables = knobs.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    c.series = false;
    c.time_limit_s = 10.0;
    let r = simulate(&p, &w, c).unwrap();
    r.threads
        .iter()
        .map(|t| {
            let big: f64 =
                t.cpu_time_on_s.iter().enumerate().filter(|(c, _)| r.cpus[*c].cluster == "big").map(|(_, s)| s).sum();
            (t.name.clone(), t.cpu_time_s, big / t.cpu_time_s)
        })
        .collect()
}

#[test]
fn the_linsched_case_big_for_the_heavy_nice_0_tasks_only() {
    let share = |rows: &[(String, f64, f64)], task: &str| rows.iter().find(|r| r.0.starts_with(task)).unwrap().2;
    let settings: [(&str, SchedPolicy, Knobs); 4] = [
        ("smp (vanilla)", SchedPolicy::Smp, &[]),
        ("hmp, LSK defaults, priority filter at nice 5", SchedPolicy::Hmp, &[("prio_filter", 1.0)]),
        (
            "hmp, seed 003's first stab (512/256, nice <= 0 up, no packing)",
            SchedPolicy::Hmp,
            &[
                ("up_threshold", 512.0),
                ("down_threshold", 256.0),
                ("prio_filter", 1.0),
                ("prio_filter_val", 1.0),
                ("packing_enable", 0.0),
            ],
        ),
        ("hmp, LSK defaults (no filter)", SchedPolicy::Hmp, &[]),
    ];
    let mut runs = Vec::new();
    for (label, scheduler, knobs) in settings {
        let rows = linsched(scheduler, knobs);
        println!("{label}: CPU time and share on big");
        for (name, cpu_s, big) in &rows {
            println!("  {name:14} {cpu_s:5.2} s  {:5.1} % on big", 100.0 * big);
        }
        runs.push(rows);
    }
    // hmp with the priority filter (either setting): 3-4 mostly on big, 5-7 never, 1-2 on
    // LITTLE but for the first job (forked onto big fully loaded)
    for rows in &runs[1..3] {
        for heavy in ["task3", "task4"] {
            assert!(share(rows, heavy) > 0.9, "{rows:?}");
        }
        for low in ["task5", "task6", "task7"] {
            assert_eq!(share(rows, low), 0.0, "{rows:?}");
        }
        for noise in ["task1", "task2"] {
            assert!(share(rows, noise) < 0.05, "{rows:?}");
        }
    }
    // vanilla: placement ignores capacity; the low-priority tasks get big time, the heavy ones
    // do not keep it
    let smp = &runs[0];
    assert!(["task5", "task6", "task7"].iter().all(|t| share(smp, t) > 0.1), "{smp:?}");
    assert!(["task3", "task4"].iter().all(|t| share(smp, t) < 0.8), "{smp:?}");
    // without the filter nice 10 no longer keeps a task off big
    assert!(["task5", "task6", "task7"].iter().all(|t| share(&runs[3], t) > 0.3), "{:?}", runs[3]);
}
