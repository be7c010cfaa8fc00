//! Engine speed benchmark: simulated seconds per wall second, and µs per event. Prints figures;
//! asserts nothing.
//!
//! - ccbench random 4 MB on the LITTLE cluster under ondemand (the seed paper's case);
//! - mixed8: 4 periodic + 4 CPU-bound tasks on 8 CPUs (smp placement);
//! - the same total work on 1, 8, 64 and 512 threads (smp placement, ondemand), so that the
//!   cost per event can be compared across thread counts:
//!   * CPU-bound: 16e9 instructions split evenly;
//!   * periodic: 4000 jobs per second of 125 µs reference work each (half a CPU), 10 s, the
//!     jobs spread over the threads (each thread's period grows with the thread count);
//! - placement under `hmp` (big.LITTLE MP, the XU3 kernel's settings) on 8, 64 and 512 threads:
//!   the periodic and the CPU-bound cases above (the target: 512 threads at 1,000x real time);
//! - the periodic and CPU-bound cases on 8, 64 and 512 threads under `eas` (schedutil), and
//!   on 512 under `smp` with schedutil for comparison (the same PELT and governor work): the
//!   energy-aware wake-up costs per wake-up what the CPUs and performance domains cost, not
//!   the threads;
//! - a 1-hour ccbench run with the time series off: wall time and the process's peak memory.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;
use std::time::Instant;

/// Runs the case `reps` times (seeds 1..) and reports the best and the median wall time per
/// run: this machine is shared, so the best is the engine's speed and the median its spread.
fn measure(label: &str, platform: &Platform, workload: &Workload, config: &SimConfig, reps: u32) {
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
    let per_run_events = events as f64 / reps as f64;
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    println!(
        "{label:<44} {:>8.0}x best {:>8.0}x median  {:>6.1} sim s  {:>9.0} events  {:.3} µs/event",
        per_run_sim_s / best,
        per_run_sim_s / median,
        per_run_sim_s,
        per_run_events,
        best * 1e6 / per_run_events,
    );
}

/// `threads` CPU-bound threads sharing 16e9 instructions.
fn cpu_bound(threads: u32) -> Workload {
    Workload::from_spec(&format!("cpu-bound:threads={threads},instructions={}", 16e9 / threads as f64)).unwrap()
}

/// 4000 jobs/s of 125 µs over `threads` threads for 10 s.
fn periodic(threads: u32) -> Workload {
    let period_us = 250 * threads as u64;
    let spec = format!("periodic:threads={threads},run_us=125,period_us={period_us},duration_us=10000000");
    Workload::from_spec(&spec).unwrap()
}

/// Peak resident memory of this process so far, MB (Linux /proc/self/status VmHWM).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<f64>().ok().map(|kb| kb / 1024.0)
}

fn main() {
    let platform = Platform::builtin("exynos5422").unwrap();
    let little = platform.cluster_index("little");
    let plan = |governor: &str, cluster| SimConfig::governor_plan(&platform, governor, &[], cluster, &[]).unwrap();

    // First, while the process is small: memory of a long run with the series off.
    let hour = Workload::from_spec("ccbench:size=1048576,pattern=random,iterations=100000000000").unwrap();
    let mut config = SimConfig::new(plan("ondemand", little));
    config.cluster = little;
    config.series = false;
    config.time_limit_s = 3600.0;
    let before = peak_rss_mb();
    let start = Instant::now();
    let r = simulate(&platform, &hour, config).unwrap();
    println!(
        "1 simulated hour of ccbench (series off): {:.2} s wall, {} events, peak memory {:.1} MB (before the run {:.1} MB)",
        start.elapsed().as_secs_f64(),
        r.events,
        peak_rss_mb().unwrap_or(f64::NAN),
        before.unwrap_or(f64::NAN),
    );

    let ccbench = Workload::from_spec("ccbench:size=1048576,pattern=random,iterations=60000000").unwrap();
    let mut config = SimConfig::new(plan("ondemand", little));
    config.cluster = little;
    measure("ccbench random 4 MB, LITTLE, ondemand", &platform, &ccbench, &config, 20);

    let mut smp = SimConfig::new(plan("ondemand", None));
    smp.scheduler = SchedPolicy::Smp;
    measure("mixed8: 4 periodic + 4 CPU-bound, 8 CPUs", &platform, &Workload::from_spec("mixed8").unwrap(), &smp, 20);
    for threads in [1, 8, 64, 512] {
        measure(&format!("CPU-bound, 16e9 instructions on {threads} threads"), &platform, &cpu_bound(threads), &smp, 5);
    }
    for threads in [1, 8, 64, 512] {
        measure(&format!("periodic, 4000 jobs/s on {threads} threads"), &platform, &periodic(threads), &smp, 5);
    }

    let mut hmp = SimConfig::new(plan("ondemand", None));
    hmp.scheduler = SchedPolicy::Hmp;
    for threads in [8, 64, 512] {
        measure(&format!("hmp: periodic, 4000 jobs/s on {threads} threads"), &platform, &periodic(threads), &hmp, 5);
    }
    for threads in [8, 64, 512] {
        measure(
            &format!("hmp: CPU-bound, 16e9 instructions on {threads} threads"),
            &platform,
            &cpu_bound(threads),
            &hmp,
            5,
        );
    }
    let mut eas = SimConfig::new(plan("schedutil", None));
    eas.scheduler = SchedPolicy::Eas;
    for threads in [8, 64, 512] {
        measure(&format!("eas: periodic, 4000 jobs/s on {threads} threads"), &platform, &periodic(threads), &eas, 5);
    }
    for threads in [8, 64, 512] {
        measure(&format!("eas: CPU-bound, 16e9 instr. on {threads} threads"), &platform, &cpu_bound(threads), &eas, 5);
    }
    let mut smp_schedutil = eas.clone();
    smp_schedutil.scheduler = SchedPolicy::Smp;
    measure("smp+schedutil: periodic, 512 threads", &platform, &periodic(512), &smp_schedutil, 5);
    measure("smp+schedutil: CPU-bound, 512 threads", &platform, &cpu_bound(512), &smp_schedutil, 5);
}
