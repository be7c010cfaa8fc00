//! Utilisation clamps (`sched::uclamp`) where Linux 5.10 reads them: schedutil's frequency
//! follows a task's util_min up and its util_max down, and EAS places a boosted task where its
//! clamped utilisation fits.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::sched::SchedPolicy;

fn run(doc: &str, scheduler: SchedPolicy) -> RunResult {
    let p = Platform::builtin("exynos5422").unwrap();
    let w = from_rtapp_json("t.json", doc).unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "schedutil", &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.series = false;
    c.time_limit_s = 10.0;
    simulate(&p, &w, c).unwrap()
}

/// Average frequency of cluster `name`, MHz.
fn avg_mhz(r: &RunResult, name: &str) -> f64 {
    r.clusters.iter().find(|c| c.name == name).unwrap().avg_freq_khz / 1000.0
}

/// A task pinned to `cpus`, with `clamps` (JSON members), for 2 s: `run` 4 ms every 16 ms.
fn light(cpus: &str, clamps: &str) -> String {
    format!(
        r#"{{ "global": {{ "duration": 2 }}, "tasks": {{ "t": {{ "cpus": {cpus} {clamps},
            "run": 4000, "timer": {{ "ref": "unique", "period": 16000 }} }} }} }}"#
    )
}

#[test]
fn util_min_raises_schedutils_frequency_and_util_max_lowers_it() {
    let plain = avg_mhz(&run(&light("[4]", ""), SchedPolicy::Smp), "big");
    let boosted = avg_mhz(&run(&light("[4]", r#", "util_min": 1024"#), SchedPolicy::Smp), "big");
    assert!(boosted > 1.5 * plain, "boosted {boosted} vs {plain} MHz");
    // a hog capped at 300: 1.25 x 300/1024 of 2 GHz, the 800 MHz OPP, instead of the top
    let hog = |clamps: &str| {
        let doc = format!(
            r#"{{ "global": {{ "duration": 2 }}, "tasks": {{ "h": {{ "cpus": [4] {clamps}, "runtime": 10000 }} }} }}"#
        );
        avg_mhz(&run(&doc, SchedPolicy::Smp), "big")
    };
    let (free, capped) = (hog(""), hog(r#", "util_max": 300"#));
    assert!(free > 1800.0, "{free}");
    assert!((capped - 800.0).abs() < 60.0, "{capped}");
}

#[test]
fn eas_places_a_boosted_task_where_its_clamped_utilisation_fits() {
    // a light task stays on LITTLE under EAS; boosted to 600 it fits only a big CPU (5.10's
    // fit test: a boost to 1024 would fit nowhere, and the task would stay where it was)
    let big_share = |clamps: &str| {
        let r = run(&light("[0, 1, 2, 3, 4, 5, 6, 7]", clamps), SchedPolicy::Eas);
        let t = &r.threads[0];
        t.cpu_time_on_s[4..].iter().sum::<f64>() / t.cpu_time_s
    };
    let (plain, boosted) = (big_share(""), big_share(r#", "util_min": 600"#));
    assert!(plain < 0.1, "{plain}");
    assert!(boosted > 0.9, "{boosted}");
}

#[test]
fn a_phase_sets_its_own_clamps() {
    // the same light frames, boosted in one phase only: the boost lasts while that phase runs
    let doc = |boost: &str| {
        format!(
            r#"{{ "tasks": {{ "t": {{ "cpus": [4], "loop": 1, "phases": {{
                "first": {{ "loop": 60 {boost}, "run": 4000, "timer": {{ "ref": "unique", "period": 16000 }} }},
                "then": {{ "loop": 60, "util_min": 0, "run": 4000, "timer": {{ "ref": "unique", "period": 16000 }} }} }} }} }} }}"#
        )
    };
    let (plain, boosted) = (run(&doc(""), SchedPolicy::Smp), run(&doc(r#", "util_min": 1024"#), SchedPolicy::Smp));
    assert!(avg_mhz(&boosted, "big") > 1.3 * avg_mhz(&plain, "big"));
    // 120 frames of 16 ms either way
    assert!((boosted.time_s - plain.time_s).abs() < 0.001);
}

#[test]
fn a_capped_task_asleep_leaves_its_cap_on_its_idle_cpu() {
    // a hog capped at 300 runs 14 ms of every 16 ms on CPU 4, and an uncapped light task on
    // CPU 5 of the same policy keeps schedutil deciding. Held to the cap's 800 MHz OPP (1.25 x
    // 300/1024 of 2 GHz), the hog's frequency-invariant utilisation settles near 0.875 x 0.4 x
    // 1024 = 358, above its cap: while it sleeps its CPU's blocked utilisation would ask for
    // 900 MHz, but the idle CPU keeps the cap it left, so the policy stays at 800 MHz
    let doc = r#"{ "global": { "duration": 2 }, "tasks": {
        "hog": { "cpus": [4], "util_max": 300, "runtime": 14000, "timer": { "ref": "hog", "period": 16000 } },
        "light": { "cpus": [5], "runtime": 300, "timer": { "ref": "light", "period": 1000 } } } }"#;
    let r = run(doc, SchedPolicy::Smp);
    let big = r.clusters.iter().find(|c| c.name == "big").unwrap();
    let total: f64 = big.residency.iter().map(|(_, s)| s).sum();
    let above_cap: f64 = big.residency.iter().filter(|(khz, _)| *khz > 800_000).map(|(_, s)| s).sum();
    assert!(above_cap < 0.01 * total, "{:?}", big.residency);
}
