//! Any bytes as an rt-app file, simulated for 20 ms of the Exynos 5422 under EAS (5.10) or, for
//! inputs of odd length, `smp` (3.10): the file loads or is an error line, and the run (threads
//! waiting on one another's mutexes, conditions, barriers, semaphores, timers, forks and phase
//! affinities; RT tasks throttled within 5 ms of each 10 ms period, RR turns of 5 ms) ends or
//! is an error; never a panic or a hang.
#![no_main]
use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::sched::SchedPolicy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(workload) = from_rtapp_json("fuzz.json", text) else { return };
    // bounded work per input: the engine's cost follows events, and threads make events
    if workload.nthreads() > 64 {
        return;
    }
    let platform = Platform::builtin("exynos5422").expect("built-in");
    let plan = SimConfig::governor_plan(&platform, "schedutil", &[], None, &[]).expect("schedutil");
    let mut config = SimConfig::new(plan);
    config.scheduler = if data.len() % 2 == 0 { SchedPolicy::Eas } else { SchedPolicy::Smp };
    config.sched_tunables =
        [("sched_rt_period_us", 10_000.0), ("sched_rt_runtime_us", 5_000.0), ("sched_rr_timeslice_ms", 5.0)]
            .map(|(name, value)| (name.to_string(), value))
            .to_vec();
    config.series = false;
    // no trace: a work-less forever loop (reported after a million events at one instant)
    // would record millions of events first; the markers have their own tests
    config.trace = false;
    config.time_limit_s = 0.02;
    // a work-less loop ends after 10^4 events here, not 10^6: in this instrumented build an
    // event costs ~30 µs, and a million of them (27 s) made such inputs slow units that a
    // loaded machine pushed past the timeout; the bound's own test is in the engine's tests
    config.max_events_without_progress = 10_000;
    let _ = simulate(&platform, &workload, config);
});
