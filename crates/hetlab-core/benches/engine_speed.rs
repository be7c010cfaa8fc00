//! Engine speed benchmark: simulated seconds per wall second. Prints figures; asserts nothing.
//!
//! (a) ccbench random 4 MB on the LITTLE cluster under ondemand;
//! (b) 8 mixed periodic and CPU-bound tasks on 8 CPUs under ondemand (smp placement).

use hetlab_core::engine::{simulate, CpuIdle, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;
use std::time::Instant;

/// Runs the case `reps` times (seeds 1..) and reports the best and the median wall time per
/// run: this machine is shared, so the best is the engine's speed and the median its spread.
fn measure(label: &str, platform: &Platform, workload: &Workload, config: SimConfig, reps: u32) {
    let mut walls = Vec::new();
    let (mut sim_s, mut events) = (0.0, 0);
    for i in 0..reps {
        let mut c = config.clone();
        c.seed = 1 + i as u64;
        let start = Instant::now();
        let r = simulate(platform, workload, c).expect("simulation runs");
        walls.push(start.elapsed().as_secs_f64());
        sim_s += r.time_s;
        events += r.events;
    }
    walls.sort_by(f64::total_cmp);
    let per_run_sim_s = sim_s / reps as f64;
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    println!(
        "{label}: {:.0}x real time best, {:.0}x median ({:.1} simulated s per run, {:.2} µs per event best)",
        per_run_sim_s / best,
        per_run_sim_s / median,
        per_run_sim_s,
        best * 1e6 / (events as f64 / reps as f64),
    );
}

fn main() {
    let platform = Platform::builtin("exynos5422").unwrap();
    let little = platform.cluster_index("little");
    let plan = |governor: &str| SimConfig::governor_plan(&platform, governor, &[], little, &[]).unwrap();
    let ccbench = Workload::from_spec("ccbench:size=1048576,pattern=random,iterations=60000000").unwrap();
    let config = SimConfig {
        seed: 1,
        scheduler: SchedPolicy::Pinned,
        governors: plan("ondemand"),
        model: None,
        offline_clusters: vec![],
        cluster: little,
        cpuidle: CpuIdle::Wfi,
        kernel_threads: vec![],
        trace: false,
        series: true,
        time_limit_s: 3600.0,
    };
    measure("(a) ccbench random 4 MB, LITTLE, ondemand", &platform, &ccbench, config.clone(), 20);
    let mixed = Workload::from_spec("mixed8").unwrap();
    let config = SimConfig { scheduler: SchedPolicy::Smp, cluster: None, ..config };
    measure("(b) mixed8: 4 periodic + 4 CPU-bound on 8 CPUs, ondemand", &platform, &mixed, config, 20);
}
