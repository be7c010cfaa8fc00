//! Any bytes as an rt-app file, simulated for 20 ms of the Exynos 5422 under EAS: the file loads
//! or is an error line, and the run (threads waiting on one another's mutexes, conditions,
//! barriers, semaphores, timers, forks and phase affinities) ends or is an error; never a
//! panic or a hang.
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
    config.scheduler = SchedPolicy::Eas;
    config.series = false;
    // no trace: a work-less forever loop (reported after a million events at one instant)
    // would record millions of events first; the markers have their own tests
    config.trace = false;
    config.time_limit_s = 0.02;
    let _ = simulate(&platform, &workload, config);
});
