//! `eas` on the simulated Exynos 5422, end to end (issue 10, "EAS on the Exynos 5422"): a small
//! periodic task stays on LITTLE and a heavy one moves to big; over-utilisation hands over to
//! load balancing and back (as the trace's `sched_overutilized` events show); a light mixed
//! workload uses less energy than under `smp`. The figures are printed (`cargo test --release --test eas_exynos5422 -- --nocapture`).

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::model::idle::CpuIdle;
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::TraceEvent;
use hetlab_core::workload::Workload;

fn exynos() -> Platform {
    Platform::builtin("exynos5422").unwrap()
}

fn config(p: &Platform, scheduler: SchedPolicy, governor: &str, cpuidle: CpuIdle, seed: u64) -> SimConfig {
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.cpuidle = cpuidle;
    c.seed = seed;
    c
}

/// An rt-app-style periodic task: `run_us` of work on an A15 at 2 GHz every `period_us`.
fn periodic(name: &str, threads: u32, run_us: u64, period_us: u64, duration_us: u64) -> String {
    format!(
        "[[tasks]]\nname = \"{name}\"\nthreads = {threads}\n[[tasks.phases]]\nrun_us = {run_us}\n\
         period_us = {period_us}\nduration_us = {duration_us}\ncpi = 1.2\nrefs_per_instr = 0.3\n\
         working_set_bytes = 65536\npattern = \"random\"\n"
    )
}

fn workload(name: &str, tasks: &[String]) -> Workload {
    Workload::from_toml(&format!("{name}.toml"), &format!("name = \"{name}\"\n{}", tasks.concat())).unwrap()
}

/// Per thread (by name): CPU seconds on LITTLE (CPUs 0-3) and on big (4-7).
fn residency(r: &RunResult) -> Vec<(String, f64, f64)> {
    r.threads
        .iter()
        .map(|t| (t.name.clone(), t.cpu_time_on_s[..4].iter().sum(), t.cpu_time_on_s[4..].iter().sum()))
        .collect()
}

/// A traced run and the changes of the over-utilised flag after boot (µs, new value), from its
/// `sched_overutilized` events.
fn run_traced(p: &Platform, w: &Workload, mut c: SimConfig) -> (RunResult, Vec<(f64, bool)>) {
    c.trace = true;
    let r = simulate(p, w, c).unwrap();
    let states: Vec<(f64, bool)> = r
        .trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::SchedOverutilized { time_us, overutilized, .. } => Some((time_us, overutilized)),
            _ => None,
        })
        .collect();
    assert_eq!(states.first(), Some(&(0.0, false)), "the boot state");
    (r, states[1..].to_vec())
}

#[test]
fn a_small_periodic_task_stays_on_little_and_a_heavy_one_moves_to_big() {
    let p = exynos();
    // small: 1 ms every 16 ms (util ≈ 64 of 1024); heavy: 8 ms every 16 ms (≈ 512: more than a
    // LITTLE's whole capacity, 377); 2 s each. Both start on LITTLE (their forks, CFS's path).
    let w = workload(
        "small-heavy",
        &[periodic("small", 1, 1000, 16000, 2_000_000), periodic("heavy", 1, 8000, 16000, 2_000_000)],
    );
    let mut c = config(&p, SchedPolicy::Eas, "schedutil", CpuIdle::Wfi, 1);
    let (r, flips) = run_traced(&p, &w, c.clone());
    let res = residency(&r);
    println!(
        "eas small+heavy: {:.3} s, {:.3} J; (thread, LITTLE s, big s): {res:?}; migrations {:?}; over-utilised {flips:?}",
        r.time_s,
        r.energy.total_j,
        r.threads.iter().map(|t| t.migrations).collect::<Vec<_>>()
    );
    let (small, heavy) = (&res[0], &res[1]);
    assert!(small.2 == 0.0 && small.1 > 0.1, "{small:?}");
    // on LITTLE it overruns (its jobs never sleep) until its utilisation passes 80 % of the A7
    // and the misfit balance moves it, after the PELT and schedutil ramp from the lowest OPP;
    // on big it fits and stays: one migration. The flag is set while it overruns on LITTLE and
    // again while it catches up its late jobs on big, then stays clear
    assert_eq!(r.threads[1].migrations, 1);
    assert!(heavy.1 < 0.5 && heavy.2 > 0.9, "{heavy:?}");
    assert!(flips.iter().all(|&(t, _)| t < 1_000_000.0) && !flips.last().unwrap().1, "{flips:?}");
    // smp, capacity-blind, leaves the heavy task on its first (LITTLE) CPU, where its jobs
    // overrun: the 2 s of frames take twice as long
    c.scheduler = SchedPolicy::Smp;
    let smp = simulate(&p, &w, c.clone()).unwrap();
    let smp_res = residency(&smp);
    println!("smp small+heavy: {:.3} s, {:.3} J; {smp_res:?}", smp.time_s, smp.energy.total_j);
    assert!(smp_res[1].2 == 0.0 && smp.time_s > 1.5 * r.time_s);

    // a CPU-bound thread forked onto LITTLE CPU 0 never wakes up: the misfit balance moves it
    // once its utilisation passes 80 % of the A7's capacity (about 75 ms of PELT ramp at the
    // top OPP, plus schedutil's ramp), by active migration to an idle A15
    let w = Workload::from_spec("cpu-bound:threads=1,instructions=4e9").unwrap();
    c.scheduler = SchedPolicy::Eas;
    let (r, flips) = run_traced(&p, &w, c);
    let res = residency(&r);
    println!(
        "eas cpu-bound: {:.3} s; {res:?}; migrations {}; over-utilised {flips:?}",
        r.time_s, r.threads[0].migrations
    );
    assert_eq!(r.threads[0].migrations, 1);
    assert!(res[0].1 > 0.05 && res[0].1 < 0.3 && res[0].2 > 1.0, "{res:?}");
    // schedutil reads the run queue's util_avg that EAS reads: on big it climbs to 1024 and
    // the A15s run at 2 GHz for most of the thread's time there
    let top = r.clusters[1].residency.last().unwrap();
    assert!(top.0 == 2_000_000 && top.1 > 0.8 * res[0].2, "{:?}", r.clusters[1].residency);
    // the flag: set on LITTLE, cleared once it has left (its utilisation leaves with it), set
    // again for good when it passes 819 of 1024 on big (nothing can be done about that)
    assert_eq!(flips.iter().map(|f| f.1).collect::<Vec<_>>(), [true, false, true], "{flips:?}");
}

#[test]
fn over_utilisation_flips_to_load_balancing_and_back() {
    let p = exynos();
    // background: three small periodic tasks for 3 s; the burst: 8 CPU-bound threads that
    // sleep 1 s, then run 1e9 instructions each (about 0.5 s on an A15, more on an A7)
    let burst = "[[tasks]]\nname = \"burst\"\nthreads = 8\n[[tasks.phases]]\nsleep_us = 1000000\n\
                 [[tasks.phases]]\ninstructions = 1e9\ncpi = 1.0\nrefs_per_instr = 0.25\n\
                 working_set_bytes = 16384\npattern = \"sequential\"\n";
    let w = workload("burst", &[periodic("ui", 3, 1000, 16000, 3_000_000), burst.to_string()]);
    let c = config(&p, SchedPolicy::Eas, "schedutil", CpuIdle::Wfi, 1);
    let (r, changes) = run_traced(&p, &w, c);
    let burst_end_s = r.threads.iter().filter(|t| t.name.starts_with("burst")).map(|t| t.finish_s).fold(0.0, f64::max);
    let sets: Vec<f64> = changes.iter().filter(|c| c.1).map(|c| c.0 * 1e-6).collect();
    let clears: Vec<f64> = changes.iter().filter(|c| !c.1).map(|c| c.0 * 1e-6).collect();
    println!(
        "burst at 1 s, last burst thread done at {burst_end_s:.3} s, run {:.3} s: {} times over-utilised, set at {sets:.3?} s, \
         cleared at {clears:.3?} s",
        r.time_s,
        sets.len()
    );
    // over-utilised during the burst, and back to EAS after it
    let during = |t: f64| t >= 1.0 && t <= burst_end_s;
    assert!(sets.iter().any(|&t| during(t) && t < 1.3), "{sets:?}");
    let last = changes.last().unwrap();
    assert!(!last.1 && last.0 * 1e-6 > burst_end_s && last.0 * 1e-6 < burst_end_s + 0.3, "{changes:?}");
    // the flag is set only while the burst runs or while the tasks' first placements settle
    assert!(sets.iter().all(|&t| during(t) || t < 0.6), "{sets:?}");
    // while it is set, load balancing spreads the burst over all eight CPUs
    assert!(r.cpus.iter().all(|c| c.busy_s > 0.3), "{:?}", r.cpus.iter().map(|c| c.busy_s).collect::<Vec<_>>());
}

/// Ten light periodic threads of four kinds (frame-rate UI work, audio buffers, network
/// polls, background jobs); together half of one A15 at 2 GHz (a third of the LITTLE cluster),
/// no thread over 7 % of an A15: light, and mixed in size and period.
fn light_mixed() -> Workload {
    let s = 3_000_000;
    workload(
        "light-mixed",
        &[
            periodic("ui", 4, 1000, 16000, s),
            periodic("audio", 2, 300, 4000, s),
            periodic("net", 2, 200, 10000, s),
            periodic("bg", 2, 3000, 100000, s),
        ],
    )
}

#[test]
fn a_light_mixed_workload_uses_less_energy_than_under_smp() {
    // the same governor (schedutil) for both, so that only placement differs; idle clusters
    // kept powered (WFI, the seed paper's board) or powered down (cluster-off)
    let p = exynos();
    let w = light_mixed();
    for cpuidle in [CpuIdle::Wfi, CpuIdle::ClusterOff] {
        let (mut eas_j, mut smp_j) = (0.0, 0.0);
        for seed in 1..=4 {
            let eas = simulate(&p, &w, config(&p, SchedPolicy::Eas, "schedutil", cpuidle, seed)).unwrap();
            let smp = simulate(&p, &w, config(&p, SchedPolicy::Smp, "schedutil", cpuidle, seed)).unwrap();
            println!(
                "light mixed, {cpuidle:?}, seed {seed}: eas {:.3} s {:.3} J (SoC {:.3} J) | smp {:.3} s {:.3} J (SoC {:.3} J)",
                eas.time_s, eas.energy.total_j, eas.energy.sensors_j, smp.time_s, smp.energy.total_j, smp.energy.sensors_j
            );
            assert!(eas.completed && smp.completed);
            assert!((eas.time_s - smp.time_s).abs() < 0.06, "{} vs {}", eas.time_s, smp.time_s);
            // what placement decides: the SoC's rails (clusters and DRAM), every seed
            assert!(eas.energy.sensors_j < smp.energy.sensors_j, "seed {seed}");
            eas_j += eas.energy.total_j;
            smp_j += smp.energy.total_j;
        }
        println!("light mixed, {cpuidle:?}: mean eas {:.3} J, smp {:.3} J", eas_j / 4.0, smp_j / 4.0);
        assert!(eas_j < smp_j, "{cpuidle:?}: eas {eas_j} J, smp {smp_j} J over 4 seeds");
    }
}

#[test]
fn eas_needs_schedutil_on_every_online_policy() {
    let p = exynos();
    let w = light_mixed();
    let e = simulate(&p, &w, config(&p, SchedPolicy::Eas, "ondemand", CpuIdle::Wfi, 1)).unwrap_err();
    assert!(e.contains("needs the schedutil governor") && e.contains("'ondemand'"), "{e}");
    // a LITTLE cluster hotplugged off leaves no governor to check there; big alone still runs
    let mut c = config(&p, SchedPolicy::Eas, "schedutil", CpuIdle::Wfi, 1);
    c.offline_clusters = vec![0];
    assert!(simulate(&p, &w, c).unwrap().completed);
}

/// While over-utilised, 5.10's wake-up path looks for a CPU the task fits among the idle ones
/// and those running only SCHED_IDLE tasks (`select_idle_capacity`, `sched_idle_cpu`): a task
/// busy 95 % of each 10 ms, which outgrows a LITTLE CPU, leaves it for a big CPU whose only
/// work is a SCHED_IDLE hog. (3.10's capacity-blind `select_idle_sibling` kept it on its idle
/// LITTLE CPU for the whole run; the misfit balance cannot help: no big CPU is idle.)
#[test]
fn an_overutilised_wakeup_takes_a_big_cpu_running_only_sched_idle_work() {
    let p = exynos();
    let doc = r#"{ "global": { "duration": 2 }, "tasks": {
        "background": { "instance": 4, "cpus": [4, 5, 6, 7], "policy": "SCHED_IDLE", "runtime": 100000 },
        "heavy": { "runtime": 9500, "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let w = hetlab_core::rtapp::from_rtapp_json("t.json", doc).unwrap();
    let r = simulate(&p, &w, config(&p, SchedPolicy::Eas, "schedutil", CpuIdle::Wfi, 1)).unwrap();
    let (_, little_s, big_s) = residency(&r).into_iter().find(|(name, ..)| name.starts_with("heavy")).unwrap();
    println!("heavy: {little_s:.3} s on LITTLE, {big_s:.3} s on big");
    assert!(big_s > 3.0 * little_s, "heavy: {little_s:.3} s on LITTLE, {big_s:.3} s on big");
}
