//! The CCI-400 on the Exynos 5422 as the engine runs it: the read tracker's stall counter comes
//! from the reads a cluster's threads can have in flight (a lone pointer chase never waits for
//! an entry; several streams do, more as the idle cluster's slow snoops lengthen each read), and
//! a speculative fetch the snoop outlasts is retried (a step in latency, a second DRAM read).

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::{Platform, SpeculativeFetch};
use hetlab_core::result::RunResult;
use hetlab_core::workload::Workload;

/// `workload` on the LITTLE cluster at its top OPP with the idle big cluster at `big_khz`.
fn on_little(p: &Platform, workload: &Workload, big_khz: u32) -> RunResult {
    let little = p.cluster_index("little").unwrap();
    let big = p.cluster_index("big").unwrap();
    let fixed = [(little, p.clusters[little].max_khz()), (big, big_khz)];
    let plan = SimConfig::governor_plan(p, "userspace", &[], Some(little), &fixed).unwrap();
    let mut config = SimConfig::new(plan);
    config.cluster = Some(little);
    config.time_limit_s = 0.05;
    simulate(p, workload, config).unwrap()
}

fn little_port(r: &RunResult) -> &hetlab_core::result::CciPortReport {
    r.cci_ports.iter().find(|port| port.cluster == "little").unwrap()
}

/// A 4 MB random pointer chase: one dependent read in flight.
fn chase() -> Workload {
    Workload::from_spec("ccbench:size=1048576,pattern=random").unwrap()
}

/// Four independent streams over 64 MB: each LITTLE core has its misses and its prefetcher's
/// line in flight (3 each), 12 in all against 4 tracker entries.
fn streams() -> Workload {
    let text = "name='s'\n[[tasks]]\nname='s'\nthreads=4\naffinity=[0,1,2,3]\n[[tasks.phases]]\n\
                instructions=1e12\ncpi=1.0\nrefs_per_instr=0.4\nworking_set_bytes=67108864\n\
                pattern='sequential'\nstride_bytes=64\n";
    Workload::from_toml("s.toml", text).unwrap()
}

const IDLE_BIG_KHZ: [u32; 4] = [200_000, 500_000, 700_000, 2_000_000];

#[test]
fn a_lone_chase_never_waits_for_a_tracker_entry() {
    let p = Platform::builtin("exynos5422").unwrap();
    for khz in IDLE_BIG_KHZ {
        let port = little_port(&on_little(&p, &chase(), khz)).clone();
        assert!(port.si_rrq_hs_any > 10_000, "{khz}: {port:?}");
        assert_eq!(port.si_rrq_stall_tt_full, 0, "idle big at {khz} kHz: {port:?}");
    }
}

#[test]
fn streams_wait_for_entries_more_as_the_idle_cluster_slows() {
    let p = Platform::builtin("exynos5422").unwrap();
    let congestion: Vec<f64> =
        IDLE_BIG_KHZ.iter().map(|&khz| little_port(&on_little(&p, &streams(), khz)).cci_congestion).collect();
    assert!(congestion[3] > 0.0, "{congestion:?}");
    // Below the crossover (~650 MHz) every read holds its entry for the snoop as well; above it
    // the snoop hides under the DRAM access and the reading stays put.
    assert!(congestion[0] > congestion[1] && congestion[1] > congestion[2], "{congestion:?}");
    assert!((congestion[2] / congestion[3] - 1.0).abs() < 1e-6, "{congestion:?}");
    // with as many entries as reads in flight, nothing waits
    let mut deep = p.clone();
    deep.cci.as_mut().unwrap().read_tracker_entries = 12;
    assert_eq!(little_port(&on_little(&deep, &streams(), 200_000)).si_rrq_stall_tt_full, 0);
}

#[test]
fn a_snoop_slower_than_dram_costs_a_retried_fetch() {
    let retry = Platform::builtin("exynos5422").unwrap();
    assert_eq!(retry.cci.as_ref().unwrap().speculative_fetch, SpeculativeFetch::Retry);
    let mut overlap = retry.clone();
    overlap.cci.as_mut().unwrap().speculative_fetch = SpeculativeFetch::Overlap;
    let ns_per_read = |p: &Platform, khz: u32| {
        let r = on_little(p, &chase(), khz);
        let port = little_port(&r).clone();
        (
            r.time_s * 1e9 / port.si_rrq_hs_any as f64,
            port.mi_retry_speculative_fetch,
            r.dram_lines / port.si_rrq_hs_any as f64,
        )
    };
    // Above the crossover (the A15's snoop answers within the 145 ns DRAM access) the two agree:
    // no retry, one DRAM read per miss.
    let (fast_retry, retries, lines) = ns_per_read(&retry, 2_000_000);
    let (fast_overlap, ..) = ns_per_read(&overlap, 2_000_000);
    assert!((fast_retry / fast_overlap - 1.0).abs() < 1e-9 && retries == 0, "{fast_retry} {fast_overlap} {retries}");
    assert!((lines - 1.0).abs() < 0.01, "{lines}");
    // At 200 MHz the snoop (471 ns) outlasts DRAM: overlap pays the snoop, retry the snoop and
    // DRAM again — a step of about one DRAM access per miss — and every miss reads DRAM twice.
    let (slow_retry, retries, lines) = ns_per_read(&retry, 200_000);
    let (slow_overlap, no_retries, _) = ns_per_read(&overlap, 200_000);
    let step_ns = slow_retry - slow_overlap;
    assert!((130.0..200.0).contains(&step_ns), "step {step_ns} ns per miss");
    assert!(no_retries == 0 && (lines - 2.0).abs() < 0.02, "{no_retries} {lines}");
    assert!(retries > 0 && retries <= little_port(&on_little(&retry, &chase(), 200_000)).si_rrq_hs_any);
}

#[test]
fn bus_access_counts_l2_lines_or_l1_beats() {
    use hetlab_core::platform::BusAccess;
    let lines = Platform::builtin("exynos5422").unwrap();
    assert_eq!(lines.pmu.bus_access, BusAccess::L2Line);
    let mut beats = lines.clone();
    beats.pmu.bus_access = BusAccess::L1Beat;
    beats.pmu.beat_bytes = Some(16);
    let bus = |p: &Platform, size: &str| {
        let w = Workload::from_spec(&format!("ccbench:size={size},pattern=random")).unwrap();
        let r = on_little(p, &w, 2_000_000);
        let (bus, reads) = (r.cpus.iter().map(|c| c.pmu.bus_access).sum::<u64>(), little_port(&r).si_rrq_hs_any);
        (bus as f64, reads as f64)
    };
    // A DRAM chase: every load misses L1 and L2 alike; a 64-byte line is 4 beats of 16 bytes.
    let (per_line, reads) = bus(&lines, "1048576");
    assert!((per_line / reads - 1.0).abs() < 0.01, "one count per L2 refill: {per_line} vs {reads}");
    let (per_beat, _) = bus(&beats, "1048576");
    assert!((per_beat / per_line - 4.0).abs() < 0.05, "{per_beat} vs {per_line}");
    // An L2-resident chase: no line leaves the cluster, but its L1 fills are beats.
    let (l2_resident, _) = bus(&lines, "65536");
    let (l2_resident_beats, _) = bus(&beats, "65536");
    assert!(l2_resident < 1.0 && l2_resident_beats > 1e4, "{l2_resident} {l2_resident_beats}");
    // The option needs the data path's width.
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/platforms/exynos5422.toml");
    let text = std::fs::read_to_string(file).unwrap().replace("bus_access = \"l2-line\"", "bus_access = \"l1-beat\"");
    let e = Platform::from_toml("x.toml", &text).unwrap_err();
    assert!(e.contains("pmu.beat_bytes"), "{e}");
}
