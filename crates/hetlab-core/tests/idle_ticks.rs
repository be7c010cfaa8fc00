//! NO_HZ in the engine's loop: while every CPU is idle the scheduler tick is no event (it would
//! change nothing but where an idle-time sum is cut; `Engine::skip_idle_ticks`), and while a CPU
//! is busy every tick still is one (CFS, PELT and the placement act there).

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;

/// `spec` on the XU3 under smp (whose load balancer acts at ticks, so a tick is asked for
/// throughout) and ondemand, for 2 simulated seconds.
fn run(spec: &str) -> RunResult {
    let platform = Platform::builtin("exynos5422").unwrap();
    let plan = SimConfig::governor_plan(&platform, "ondemand", &[], None, &[]).unwrap();
    let mut config = SimConfig::new(plan);
    config.scheduler = SchedPolicy::Smp;
    config.time_limit_s = 2.0;
    simulate(&platform, &Workload::from_spec(spec).unwrap(), config).unwrap()
}

/// Ticks in 2 s at the XU3's HZ = 200.
const TICKS: u64 = 400;

#[test]
fn a_mostly_idle_run_has_no_idle_tick_among_its_events() {
    // 40 jobs of 200 µs: the CPUs are idle 99.6 % of the time. Its other events are about 540
    // (OS jitter on 8 CPUs, 80 job starts and ends, governor samples); with every tick an event
    // it had 898 (at 0efce25).
    let r = run("periodic:threads=1,run_us=200,period_us=50000,duration_us=2000000");
    assert!(r.completed);
    assert!(r.events < 540 + TICKS / 4, "{} events in {TICKS} ticks' time", r.events);
}

#[test]
fn a_busy_cpu_keeps_every_tick() {
    let r = run("cpu-bound:threads=1,instructions=1e12");
    assert!(r.events >= TICKS, "{} events in {TICKS} ticks' time", r.events);
}
