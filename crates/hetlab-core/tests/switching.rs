//! The big.LITTLE switching modes end to end on the Exynos 5433 (4 A53 as cpu0-3, 4 A57 as
//! cpu4-7): the in-kernel switcher moves each logical CPU to its paired core when its governor
//! asks for a frequency outside the current core's range, cluster switching moves all of them,
//! the cluster left is powered down, and a switch costs the moved thread time.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::switching::SwitchingMode;
use hetlab_core::workload::Workload;

fn exynos5433() -> Platform {
    Platform::builtin("exynos5433").unwrap()
}

/// `governor` on every policy under `mode`.
fn config(p: &Platform, governor: &str, mode: SwitchingMode) -> SimConfig {
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    c.switching = mode;
    c.series = false;
    c
}

fn run(p: &Platform, workload: &str, governor: &str, mode: SwitchingMode, cluster: Option<&str>) -> RunResult {
    let mut c = config(p, governor, mode);
    c.cluster = cluster.map(|n| p.cluster_index(n).unwrap());
    simulate(p, &Workload::from_spec(workload).unwrap(), c).unwrap()
}

fn cluster<'r>(r: &'r RunResult, name: &str) -> &'r hetlab_core::result::ClusterReport {
    r.clusters.iter().find(|c| c.name == name).unwrap()
}

#[test]
fn under_iks_a_busy_cpu_at_top_speed_runs_on_its_big_partner() {
    let p = exynos5433();
    let work = "cpu-bound:threads=4,instructions=2e9";
    let iks = run(&p, work, "performance", SwitchingMode::Iks, None);
    // the OS sees 4 logical CPUs: 4 threads, each CPU switched once to its A57
    assert_eq!(iks.cpu_switches, 4);
    assert!(iks.cpus.iter().filter(|c| c.busy_s > 0.0).all(|c| c.cluster == "big"), "{:?}", iks.cpus);
    // the LITTLE cluster is powered down once its last core left, and did no work
    let little = cluster(&iks, "little");
    assert!(!little.online && little.off_s > 0.9 * iks.time_s, "{little:?}");
    // Time in state counts only while a cluster is online: the A53s' until the switch, the
    // A57s' from it; together the run.
    let online_s = |c: &hetlab_core::result::ClusterReport| c.residency.iter().map(|(_, s)| s).sum::<f64>();
    let big = cluster(&iks, "big");
    assert!(online_s(little) < 0.01 * iks.time_s, "{little:?}");
    assert!((online_s(little) + online_s(big) - iks.time_s).abs() < 1e-6, "{little:?} {big:?}");
    // and the A57s' mean clock is over their online time: the top OPP
    assert_eq!(big.avg_freq_khz.round() as u32, p.clusters[p.cluster_index("big").unwrap()].max_khz());
    // the same work on the 4 A57s under GTS: the switcher's run is longer by the switch only
    let gts = run(&p, work, "performance", SwitchingMode::Gts, Some("big"));
    let extra_ms = (iks.time_s - gts.time_s) * 1e3;
    assert!(extra_ms > 0.0 && extra_ms < 5.0, "IKS {} s vs big-4 {} s", iks.time_s, gts.time_s);
}

#[test]
fn under_iks_at_the_lowest_speed_nothing_switches_and_big_stays_off() {
    let p = exynos5433();
    let r = run(&p, "cpu-bound:threads=4,instructions=2e8", "powersave", SwitchingMode::Iks, None);
    assert_eq!(r.cpu_switches, 0);
    let big = cluster(&r, "big");
    assert!(!big.online && big.static_j == 0.0 && big.dynamic_j == 0.0, "{big:?}");
    assert!(big.residency.iter().all(|(_, s)| *s == 0.0), "{big:?}");
    // the virtual table's lowest entry is the A53's lowest OPP halved: the A53s run at it
    let little = cluster(&r, "little");
    let lowest = p.clusters[p.cluster_index("little").unwrap()].min_khz();
    assert_eq!(little.residency[0].0, lowest);
    assert!(little.residency[0].1 > 0.99 * r.time_s, "{little:?}");
}

#[test]
fn a_program_that_counts_cpus_sees_one_per_pair() {
    let p = exynos5433();
    let work = "sandra-dhrystone:threads=cpus,allocation=dynamic";
    let iks = run(&p, work, "powersave", SwitchingMode::Iks, None);
    let gts = run(&p, work, "powersave", SwitchingMode::Gts, None);
    let workers = |r: &RunResult| r.threads.iter().filter(|t| t.tid >= 1000).count();
    assert_eq!((workers(&iks), workers(&gts)), (4, 8));
}

#[test]
fn one_busy_cpu_switches_alone_under_iks_and_takes_the_cluster_under_cluster_switching() {
    let p = exynos5433();
    let work = "cpu-bound:threads=1,instructions=3e9";
    let iks = run(&p, work, "ondemand", SwitchingMode::Iks, None);
    // ondemand takes the busy CPU to the top: its pair's A57; the idle ones stay on A53s
    assert_eq!(iks.cpu_switches, 1);
    assert!(cluster(&iks, "big").online && cluster(&iks, "little").online);
    let cs = run(&p, work, "ondemand", SwitchingMode::ClusterSwitching, None);
    // one policy over all four: the whole cluster moves, the A53s go off
    assert_eq!(cs.cpu_switches, 4);
    assert!(cluster(&cs, "big").online && !cluster(&cs, "little").online);
    // the same speed, but cluster switching pays no LITTLE cluster beside the big one
    assert!((cs.time_s / iks.time_s - 1.0).abs() < 0.01, "CS {} s, IKS {} s", cs.time_s, iks.time_s);
    assert!(cluster(&cs, "little").static_j < cluster(&iks, "little").static_j);
    // Under IKS the three A57s no CPU is on are power-gated: the cluster leaks its shared part
    // and one core's share (`core_leakage_share`); with the share at 0 it leaks as a whole.
    let mut whole = p.clone();
    whole.clusters.iter_mut().for_each(|c| c.core_leakage_share = 0.0);
    let lump = run(&whole, work, "ondemand", SwitchingMode::Iks, None);
    let share = p.clusters[p.cluster_index("big").unwrap()].core_leakage_share;
    let ratio = cluster(&iks, "big").static_j / cluster(&lump, "big").static_j;
    assert!((ratio / (1.0 - share * 3.0 / 4.0) - 1.0).abs() < 0.02, "{ratio} with share {share}");
}

#[test]
fn a_switcher_refuses_what_it_cannot_run() {
    let p = exynos5433();
    let w = Workload::from_spec("cpu-bound:threads=1,instructions=1e6").unwrap();
    let mut c = config(&p, "performance", SwitchingMode::Iks);
    c.scheduler = hetlab_core::sched::SchedPolicy::Hmp;
    let err = simulate(&p, &w, c.clone()).unwrap_err();
    assert!(err.contains("use pinned or smp"), "{err}");
    c.scheduler = hetlab_core::sched::SchedPolicy::Pinned;
    c.cluster = Some(0);
    let err = simulate(&p, &w, c).unwrap_err();
    assert!(err.contains("drop --cluster"), "{err}");
}

#[test]
fn a_thermal_cap_below_the_big_opps_switches_the_cpus_back_to_little() {
    // A trip already passed at ambient temperature caps the A57s below their lowest OPP: the
    // cooling device caps the switcher's policies in the LITTLE part of the virtual table, so
    // at the first thermal poll every CPU goes back to its A53, which runs at the A53s' own cap
    // (the A57s' cap, in LITTLE virtual kHz, would be 1 GHz).
    let mut p = exynos5433();
    p.thermal.trips.truncate(1);
    p.thermal.trips[0].temp_c = 0.0;
    p.thermal.trips[0].caps_khz.insert("big".into(), 500_000);
    p.thermal.trips[0].caps_khz.insert("little".into(), 1_300_000);
    let r = run(&p, "cpu-bound:threads=4,instructions=2e9", "performance", SwitchingMode::Iks, None);
    // up to the A57s for the performance governor, then down at the poll, once each
    assert_eq!(r.cpu_switches, 8, "{:?}", r.clusters);
    let little = cluster(&r, "little");
    assert!(little.online && !cluster(&r, "big").online, "{:?}", r.clusters);
    assert_eq!(little.residency.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0, 1_300_000);
}
