//! Schedutil over EEVDF as Linux 6.x has it (`sched::cpu_perf`, the runnable boost of
//! `sched::pelt`'s run-queue `runnable_avg`), each switched off in turn (`RUNNABLE_BOOST`,
//! `EFFECTIVE_CPU_PERF`), on the Exynos 5422 whose OPPs are 100 MHz apart (big: 200-2000 MHz).

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;

fn run(doc: &str, tunables: &[(&str, f64)]) -> RunResult {
    run_workload(&from_rtapp_json("t.json", doc).unwrap(), tunables)
}

fn run_workload(w: &Workload, tunables: &[(&str, f64)]) -> RunResult {
    let p = Platform::builtin("exynos5422").unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "schedutil", &[], None, &[]).unwrap());
    c.scheduler = SchedPolicy::Eevdf;
    c.sched_tunables = tunables.iter().map(|&(n, v)| (n.to_string(), v)).collect();
    c.series = false;
    c.time_limit_s = 10.0;
    simulate(&p, w, c).unwrap()
}

fn avg_mhz(r: &RunResult, name: &str) -> f64 {
    r.clusters.iter().find(|c| c.name == name).unwrap().avg_freq_khz / 1000.0
}

#[test]
fn util_max_caps_the_request_after_the_headroom_from_6_8() {
    // a hog on big CPU 4 capped at util_max 512 for 2 s. 5.10 (EFFECTIVE_CPU_PERF 0): 1.25 x
    // min(util, 512) = 640 of 1024 -> 1250 MHz -> 1300. 6.8+: min(1.25 x util, 512) = 512 ->
    // 2000 x 512/1024 = 1000 MHz. Both averages include the first ramp from the boot clock.
    let hog = r#"{ "global": { "duration": 2 }, "tasks": { "hog": { "cpus": [4], "util_max": 512,
        "run": 2000000 } } }"#;
    let (rule_68, rule_510) = (run(hog, &[]), run(hog, &[("EFFECTIVE_CPU_PERF", 0.0)]));
    let (mhz_68, mhz_510) = (avg_mhz(&rule_68, "big"), avg_mhz(&rule_510, "big"));
    eprintln!("util_max 512 hog: 6.8+ {mhz_68:.0} MHz, 5.10 {mhz_510:.0} MHz");
    assert!((980.0..=1060.0).contains(&mhz_68), "{mhz_68}");
    assert!((1260.0..=1340.0).contains(&mhz_510), "{mhz_510}");
}

#[test]
fn without_clamps_or_dl_the_6_8_rule_asks_what_5_10_asked() {
    // no clamp, no DL: perf = min(1.25 util, capacity) and 5.10's 1.25 min(util, capacity)
    // ask the same OPP but where util's quarter is truncated (`util >> 2`: 5.10 scales
    // (f + f/4) x util, 6.8 f x (util + util/4)), which a small util on the ramp can put one
    // OPP lower: the big cluster's residencies agree within one 10 ms sample each
    let frame = r#"{ "global": { "duration": 1 }, "tasks": { "ui": { "cpus": [4], "run": 4000,
        "timer": { "ref": "unique", "period": 16000 } } } }"#;
    let (a, b) = (run(frame, &[]), run(frame, &[("EFFECTIVE_CPU_PERF", 0.0)]));
    for ((khz, s_68), (_, s_510)) in a.clusters[1].residency.iter().zip(&b.clusters[1].residency) {
        assert!((s_68 - s_510).abs() <= 0.0101, "{khz} kHz: {s_68} vs {s_510} s");
    }
}

#[test]
fn runnable_boost_raises_the_clock_of_a_contended_cpu() {
    // two tasks on LITTLE CPU 0 released together, 1 ms of work each every 12 ms: while one
    // runs the other waits, so the run queue's runnable_avg passes its util_avg (about 1.5 x:
    // the second task waits as long as the first runs) and, boosted, schedutil asks more than
    // their utilisation alone. UTIL_EST off in both runs: the queued tasks' estimates (each
    // task's utilisation at its last sleep) would otherwise stand above both signals.
    let task = |name: &str| {
        format!(
            "[[tasks]]\nname = \"{name}\"\naffinity = [0]\n[[tasks.phases]]\nrun_us = 1000\nperiod_us = 12000\n\
             duration_us = 2000000\n"
        )
    };
    let pair = Workload::from_toml("pair.toml", &format!("name = \"pair\"\n{}{}", task("a"), task("b"))).unwrap();
    let lone = Workload::from_toml("lone.toml", &format!("name = \"lone\"\n{}", task("a"))).unwrap();
    let no_est = ("UTIL_EST", 0.0);
    let (boosted, plain) = (run_workload(&pair, &[no_est]), run_workload(&pair, &[no_est, ("RUNNABLE_BOOST", 0.0)]));
    let (mhz_boosted, mhz_plain) = (avg_mhz(&boosted, "little"), avg_mhz(&plain, "little"));
    eprintln!("contended LITTLE: boosted {mhz_boosted:.0} MHz, plain {mhz_plain:.0} MHz");
    assert!(mhz_boosted > 1.15 * mhz_plain, "{mhz_boosted} vs {mhz_plain}");
    // a lone task has no waiting time: runnable_avg = util_avg, the boost changes nothing
    let (a, b) = (run_workload(&lone, &[no_est]), run_workload(&lone, &[no_est, ("RUNNABLE_BOOST", 0.0)]));
    assert_eq!(format!("{:?}", a.clusters), format!("{:?}", b.clusters));
}
