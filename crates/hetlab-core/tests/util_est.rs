//! util_est (Linux 6.12, `sched::util_est`) over whole runs: a frame-like task's utilisation
//! decays while it sleeps, so without util_est schedutil wakes it at a lower clock than its
//! work needs; with it, the CPU counts what the task had when it last slept.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;

/// 4 ms of work every 16.7 ms (a 60 Hz frame) on LITTLE CPU 0 of the Exynos 5422, under
/// `scheduler` and schedutil, with UTIL_EST as given.
fn frames(scheduler: SchedPolicy, util_est: f64) -> RunResult {
    let w = Workload::from_toml(
        "frame.toml",
        "name = \"frame\"\n[[tasks]]\nname = \"ui\"\naffinity = [0]\n[[tasks.phases]]\nrun_us = 4000\n\
         period_us = 16667\nduration_us = 2000000\n",
    )
    .unwrap();
    let p = Platform::builtin("exynos5422").unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "schedutil", &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.sched_tunables = vec![("UTIL_EST".to_string(), util_est)];
    c.series = false;
    c.time_limit_s = 2.5;
    simulate(&p, &w, c).unwrap()
}

fn little_mhz(r: &RunResult) -> f64 {
    r.clusters.iter().find(|c| c.name == "little").unwrap().avg_freq_khz / 1000.0
}

#[test]
fn a_frame_task_wakes_to_the_clock_its_estimate_asks_for() {
    let (with, without) = (frames(SchedPolicy::Eevdf, 1.0), frames(SchedPolicy::Eevdf, 0.0));
    let (busy_with, busy_without) = (with.cpus[0].busy_s, without.cpus[0].busy_s);
    // the same work at a higher clock: less busy time
    assert!(little_mhz(&with) > 1.03 * little_mhz(&without), "{} vs {} MHz", little_mhz(&with), little_mhz(&without));
    assert!(busy_with < 0.97 * busy_without, "{busy_with} vs {busy_without} s");
}
