//! Seed 003's workloads: every file parses; the LinSched table is exactly the seed's; the
//! Android render chains run to the end with one start and one done mark per render.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::model::{cache, cci};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::{PhaseKind, ThreadCount, Workload};

const SEED_003: [&str; 3] = ["linsched-test", "bbench-android", "android-ui-render"];

#[test]
fn every_seed_003_workload_parses() {
    for name in SEED_003 {
        let w = Workload::from_spec(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!w.tasks.is_empty(), "{name}");
    }
    // the LCTES'20 bbench is a different workload and stays
    assert_ne!(Workload::from_spec("bbench").unwrap(), Workload::from_spec("bbench-android").unwrap());
}

/// Seed 003's table: (task, nice, busy ms, sleep ms).
const LINSCHED_TABLE: [(usize, i32, f64, u64); 7] = [
    (1, 0, 3.0, 40),
    (2, 0, 3.0, 40),
    (3, 0, 200.0, 100),
    (4, 0, 200.0, 120),
    (5, 10, 200.0, 400),
    (6, 10, 100.0, 300),
    (7, 10, 100.0, 250),
];

#[test]
fn the_linsched_table_is_exactly_the_seeds() {
    let w = Workload::from_spec("linsched-test").unwrap();
    let p = Platform::builtin("linsched-2b2l").unwrap();
    let little = p.cluster_index("little").unwrap();
    let core = p.core_type_of(little);
    let ghz = p.clusters[little].max_khz() as f64 / 1e6;
    assert_eq!(w.tasks.len(), 7);
    for ((task, nice, busy_ms, sleep_ms), t) in LINSCHED_TABLE.iter().zip(&w.tasks) {
        assert!(t.name.starts_with(&format!("task{task}-")), "{}", t.name);
        assert_eq!((t.threads, t.nice), (ThreadCount::Fixed(1), *nice), "{}", t.name);
        // busy first, then sleep
        let [busy, sleep] = &t.phases[..] else { panic!("{}: two phases", t.name) };
        let PhaseKind::Compute { instructions } = busy.kind else { panic!("{}: busy is work", t.name) };
        assert_eq!(sleep.kind, PhaseKind::Sleep { duration_us: sleep_ms * 1000 }, "{}", t.name);
        // the busy time is CPU time on a LITTLE CPU of the model: work / LITTLE speed
        let m = cache::miss_ratios(&busy.mem, core, p.clusters[little].l2_bytes as f64, &p.caches);
        let miss_ns = cci::unloaded_miss_ns(&p);
        let ns = cache::instr_time(&busy.mem, core, ghz, &m, miss_ns).total_ns();
        assert_eq!(instructions * ns, busy_ms * 1e6, "{}", t.name);
        // every script lasts at least 10 s even at big speed without waiting
        assert!(t.repeat as f64 * (busy_ms / 2.0 + *sleep_ms as f64) >= 10_000.0, "{}", t.name);
    }
}

fn run(platform: &str, workload: &str) -> RunResult {
    let p = Platform::builtin(platform).unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
    c.scheduler = SchedPolicy::parse("smp").unwrap();
    simulate(&p, &Workload::from_spec(workload).unwrap(), c).unwrap()
}

fn mark_times(r: &RunResult, name: &str) -> Vec<f64> {
    r.marks.iter().filter(|m| m.name == name).map(|m| m.time_s).collect()
}

#[test]
fn the_ui_render_chain_runs_to_the_end() {
    let r = run("vexpress-a9", "android-ui-render");
    assert!(r.completed);
    let (start, done) = (mark_times(&r, "render-start"), mark_times(&r, "render-done"));
    assert_eq!((start.len(), done.len(), mark_times(&r, "frame-start").len()), (300, 300, 300));
    // each frame's render ends after it starts, before the next one starts
    for i in 0..300 {
        assert!(start[i] < done[i] && (i + 1 == 300 || done[i] <= start[i + 1]), "frame {i}");
    }
}

#[test]
fn the_bbench_render_chain_runs_to_the_end() {
    let r = run("vexpress-a9", "bbench-android");
    assert!(r.completed);
    let (start, done) = (mark_times(&r, "render-start"), mark_times(&r, "render-done"));
    assert_eq!((start.len(), done.len()), (10, 10));
    for i in 0..10 {
        assert!(start[i] < done[i] && (i + 1 == 10 || done[i] < start[i + 1]), "render {}", i + 1);
    }
    // about 50 s per page: render #6 loads page 2
    assert!((40.0..60.0).contains(&(start[5] - start[0])), "{start:?}");
}

#[test]
fn page_walks_slow_a_chase_beyond_the_tlb_reach_only_when_translation_is_on() {
    let time_s = |translation: bool, elements: u64| {
        let mut p = Platform::builtin("exynos5422").unwrap();
        p.caches.translation = translation;
        let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
        c.scheduler = SchedPolicy::parse("smp").unwrap();
        let w = Workload::from_spec(&format!("ccbench:size={elements},iterations=1000000")).unwrap();
        simulate(&p, &w, c).unwrap().time_s
    };
    // 128 MB: 32768 pages, far beyond either core's TLB
    assert!(time_s(true, 1 << 25) > time_s(false, 1 << 25));
    // 256 KB: 64 pages, within both TLBs — not a walk
    assert_eq!(time_s(true, 1 << 16), time_s(false, 1 << 16));
}

#[test]
fn an_idle_cluster_draws_the_energy_of_the_snoops_it_serves() {
    // a 4 MB chase on the LITTLE cluster (every load misses its L2 and snoops the idle big one),
    // with the big cluster held at 200 MHz
    let run = |snoop_nj: f64| {
        let mut p = Platform::builtin("exynos5422").unwrap();
        let big = p.cluster_index("big").unwrap();
        p.clusters[big].snoop_lookup_energy_nj = snoop_nj;
        let plan = SimConfig::governor_plan(&p, "performance", &[], None, &[(big, 200_000)]).unwrap();
        let mut c = SimConfig::new(plan);
        c.scheduler = SchedPolicy::parse("smp").unwrap();
        c.cluster = Some(p.cluster_index("little").unwrap());
        let w = Workload::from_spec("ccbench:size=1048576,iterations=2000000").unwrap();
        let r = simulate(&p, &w, c).unwrap();
        let reads = r.cci_ports.iter().find(|port| port.cluster == "little").unwrap().si_rrq_hs_any;
        (r.energy.clusters_j[big], reads as f64, p.clusters[big].voltage_v(200_000))
    };
    let (without_j, reads, volts) = run(0.0);
    let (with_j, same_reads, _) = run(1.0);
    assert_eq!(reads, same_reads); // the energy does not change the timing
    assert!(reads > 1e5, "{reads}");
    // 1 nJ at 1 V per snoop, scaled by V²
    let expected_j = reads * 1e-9 * volts * volts;
    assert!(((with_j - without_j) / expected_j - 1.0).abs() < 0.01, "{with_j} - {without_j} vs {expected_j}");
}
