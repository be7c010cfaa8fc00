//! Utilisation clamps (`sched::uclamp`) where Linux 5.10 reads them: schedutil's frequency
//! follows a task's util_min up and its util_max down, within its group's and the system's
//! limits and its run queue's buckets, and EAS places a boosted task where its clamped
//! utilisation fits.
//!
//! Frequencies worked by hand: schedutil asks 1.25 x util/1024 of the big cluster's 2 GHz and
//! takes the next OPP up (100 MHz steps), so a util of 300 asks 732 MHz (800), 307 asks 750
//! (800), 350 asks 854 (900), 512 asks 1250 (1300).

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;

fn simulate_with(w: &Workload, scheduler: SchedPolicy, tunables: &[(&str, f64)]) -> Result<RunResult, String> {
    let p = Platform::builtin("exynos5422").unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "schedutil", &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.sched_tunables = tunables.iter().map(|&(n, v)| (n.to_string(), v)).collect();
    c.series = false;
    c.time_limit_s = 10.0;
    simulate(&p, w, c)
}

fn run(doc: &str, scheduler: SchedPolicy) -> RunResult {
    run_tuned(doc, scheduler, &[])
}

fn run_tuned(doc: &str, scheduler: SchedPolicy, tunables: &[(&str, f64)]) -> RunResult {
    simulate_with(&from_rtapp_json("t.json", doc).unwrap(), scheduler, tunables).unwrap()
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

/// Seconds the big cluster spent above `mhz`.
fn big_above_s(r: &RunResult, mhz: u32) -> f64 {
    let big = r.clusters.iter().find(|c| c.name == "big").unwrap();
    big.residency.iter().filter(|(khz, _)| *khz > mhz * 1000).map(|(_, s)| s).sum()
}

/// A TOML workload: a task on CPU 4 (`phase` its one phase, `keys` its other keys) in task group
/// /g with `group` keys.
fn grouped(phase: &str, keys: &str, group: &str) -> Workload {
    let text = format!(
        "name='g'\n[[tasks]]\nname='t'\naffinity=[4]\ntaskgroup='/g'\n{keys}\nphases=[{{{phase}}}]\n[taskgroups.'/g']\n{group}\n"
    );
    Workload::from_toml("g.toml", &text).unwrap()
}

const HOG_2S: &str = "run_us=14000, period_us=16000, duration_us=2000000";
const LIGHT_2S: &str = "run_us=2000, period_us=16000, duration_us=2000000";

#[test]
fn a_groups_cpu_uclamp_max_caps_the_frequency_of_its_tasks() {
    // a hog asking util_max 1024 in a group with cpu.uclamp.max 30 % (307): 800 MHz, not the top
    let avg = |group: &str| {
        let r = simulate_with(&grouped(HOG_2S, "util_max=1024", group), SchedPolicy::Eas, &[]).unwrap();
        avg_mhz(&r, "big")
    };
    let (free, capped) = (avg("shares=1024"), avg("cpu.uclamp.max = 30"));
    assert!(free > 1600.0, "{free}");
    assert!((capped - 800.0).abs() < 60.0, "{capped}");
}

#[test]
fn a_task_that_asks_no_util_min_gets_its_groups_in_5_10() {
    // light frames (2 ms of 16) in a group with cpu.uclamp.min 50 % (512): the task asked no
    // util_min, so 5.10's uclamp_tg_restrict gives it the group's; while it runs the big
    // cluster asks 1.3 GHz or more instead of the few hundred MHz its utilisation would
    let above_1200 = |group: &str| {
        let r = simulate_with(&grouped(LIGHT_2S, "", group), SchedPolicy::Eas, &[]).unwrap();
        big_above_s(&r, 1200)
    };
    let (plain, protected) = (above_1200("shares=1024"), above_1200("cpu.uclamp.min = 50"));
    assert!(plain < 0.02, "{plain}");
    // 125 frames of at least 2 ms (longer at a lower OPP) at 1.3 GHz or more
    assert!(protected > 0.2, "{protected}");
    // 5.10: a task that asked a util_min of its own above the group's (0 by default) is cut
    // to it, so the same boost asked by the task in a group without cpu.uclamp.min does nothing
    let own = simulate_with(&grouped(LIGHT_2S, "util_min=512", "shares=1024"), SchedPolicy::Eas, &[]).unwrap();
    assert!(big_above_s(&own, 1200) < 0.02, "{}", big_above_s(&own, 1200));
}

#[test]
fn the_system_util_max_lowers_what_a_task_asks() {
    // a hog asking util_max 600 (1.5 GHz at most); sched_util_clamp_max 300 lowers it to 300
    // (800 MHz)
    let doc = r#"{ "global": { "duration": 2 }, "tasks": { "h": { "cpus": [4], "util_max": 600,
        "runtime": 14000, "timer": { "ref": "h", "period": 16000 } } } }"#;
    let asked = avg_mhz(&run(doc, SchedPolicy::Eas), "big");
    let lowered = avg_mhz(
        &run_tuned(doc, SchedPolicy::Eas, &[("sched_util_clamp_min", 0.0), ("sched_util_clamp_max", 300.0)]),
        "big",
    );
    assert!(asked > 1200.0 && asked < 1560.0, "{asked}");
    assert!((lowered - 800.0).abs() < 60.0, "{lowered}");
}

#[test]
fn a_bucket_keeps_the_largest_util_max_until_it_empties() {
    // a hog capped at 300 and, on its CPU, light frames capped at 350. With 5 buckets both
    // are in bucket 1 (205..=409), which keeps 350 while the hog stays runnable: the policy
    // asks 900 MHz throughout. With 20 buckets (51 wide) 300 and 350 are in buckets 5 and 6:
    // while the light task sleeps the run queue reads 300, 800 MHz
    let doc = r#"{ "global": { "duration": 2 }, "tasks": {
        "hog": { "cpus": [4], "util_max": 300, "run": 2000000 },
        "light": { "cpus": [4], "util_max": 350, "runtime": 500, "timer": { "ref": "l", "period": 16000 } } } }"#;
    let at_800 = |buckets: f64| {
        let r = run_tuned(doc, SchedPolicy::Eas, &[("uclamp_buckets_count", buckets)]);
        let big = r.clusters.iter().find(|c| c.name == "big").unwrap();
        let total: f64 = big.residency.iter().map(|(_, s)| s).sum();
        big.residency.iter().filter(|(khz, _)| *khz == 800_000).map(|(_, s)| s).sum::<f64>() / total
    };
    let (five, twenty) = (at_800(5.0), at_800(20.0));
    assert!(five < 0.05, "{five}");
    assert!(twenty > 0.8, "{twenty}");
}

#[test]
fn an_rt_task_asks_the_top_unless_it_sets_its_own_util_min() {
    // clamps in use (a LITTLE task asks util_max 1024, which changes nothing): an RT task's
    // default util_min of 1024 asks the top frequency while it is runnable; with its own
    // util_min of 0 (told apart from none) its RT utilisation decides, a few hundred MHz
    let doc = |own: &str| {
        format!(
            r#"{{ "global": {{ "duration": 2 }}, "tasks": {{
                "rt": {{ "cpus": [4], "policy": "SCHED_FIFO", "priority": 10 {own},
                    "runtime": 2000, "timer": {{ "ref": "r", "period": 16000 }} }},
                "other": {{ "cpus": [0], "util_max": 1024, "runtime": 100, "timer": {{ "ref": "o", "period": 16000 }} }} }} }}"#
        )
    };
    let (default, own) = (run(&doc(""), SchedPolicy::Eas), run(&doc(r#", "util_min": 0"#), SchedPolicy::Eas));
    assert!(big_above_s(&default, 1800) > 0.2, "{}", big_above_s(&default, 1800));
    assert!(big_above_s(&own, 1800) < 0.02, "{}", big_above_s(&own, 1800));
}

#[test]
fn a_phase_that_makes_a_capped_task_rt_gives_it_the_rt_default_util_min() {
    // a hog capped at util_max 300 runs 1 s under CFS (800 MHz), then 1 s as SCHED_FIFO: its
    // util_min becomes the RT default 1024 (it asked none; __setscheduler_uclamp), above its
    // kept util_max, and the min wins (uclamp_rq_util_with): the top frequency
    let doc = r#"{ "tasks": { "t": { "cpus": [4], "util_max": 300, "loop": 1, "phases": {
        "cfs": { "loop": 62, "runtime": 14000, "timer": { "ref": "t", "period": 16000 } },
        "rt": { "loop": 62, "policy": "SCHED_FIFO", "runtime": 14000, "timer": { "ref": "t", "period": 16000 } } } } } }"#;
    let r = run(doc, SchedPolicy::Smp);
    let (top, at_800) = (big_above_s(&r, 1800), big_above_s(&r, 700) - big_above_s(&r, 800));
    assert!(top > 0.8 && at_800 > 0.8, "top {top} s, 800 MHz {at_800} s");
}

#[test]
fn uclamps_5_10_knobs_are_refused_where_the_kernel_is_3_10() {
    let doc = r#"{ "tasks": { "t": { "run": 1000 } } }"#;
    let w = from_rtapp_json("t.json", doc).unwrap();
    let e = simulate_with(&w, SchedPolicy::Smp, &[("sched_util_clamp_max", 512.0)]).unwrap_err();
    assert!(
        e.contains("sched_util_clamp_max is a uclamp knob of Linux 5.10") && e.contains("use scheduler eas"),
        "{e}"
    );
    let e = simulate_with(&grouped(LIGHT_2S, "", "cpu.uclamp.max = 30"), SchedPolicy::Pinned, &[]).unwrap_err();
    assert!(e.contains("task group /g sets cpu.uclamp.*, which Linux 3.10 lacks") && !e.contains('\n'), "{e}");
    // the sysctls as the kernel checks them
    let e = simulate_with(&w, SchedPolicy::Eas, &[("sched_util_clamp_max", 512.0)]).unwrap_err();
    assert!(e.contains("sched_util_clamp_min 1024 exceeds sched_util_clamp_max 512"), "{e}");
    let e = simulate_with(&w, SchedPolicy::Eas, &[("uclamp_buckets_count", 4.0)]).unwrap_err();
    assert!(e.contains("uclamp_buckets_count must be in 5..=20"), "{e}");
}
