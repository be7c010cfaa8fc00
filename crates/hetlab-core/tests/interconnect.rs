//! The CCI-400 on the Exynos 5422 as the engine runs it: the read tracker's stall counter comes
//! from the reads in flight on a port — a cluster's threads (a lone pointer chase has one) and
//! its CPUs' kernel wake-ups — so a lone chase waits only beside a wake-up, and every read
//! waits more as the idle cluster's slow snoops lengthen it (the seed paper's Figure 2c); a
//! speculative fetch the snoop outlasts is kept, or retried (a step in latency, a second DRAM
//! read) under the TRM's rule.

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

const IDLE_BIG_KHZ: [u32; 4] = [200_000, 400_000, 700_000, 2_000_000];

/// The LITTLE port's stall cycles per read (the seed paper's Figure 2c) for `workload` at each
/// idle-big OPP of [`IDLE_BIG_KHZ`], over `seconds` simulated.
fn stall_cycles_per_read(p: &Platform, workload: &Workload, seconds: f64) -> Vec<f64> {
    IDLE_BIG_KHZ
        .iter()
        .map(|&khz| {
            let little = p.cluster_index("little").unwrap();
            let big = p.cluster_index("big").unwrap();
            let fixed = [(little, p.clusters[little].max_khz()), (big, khz)];
            let plan = SimConfig::governor_plan(p, "userspace", &[], Some(little), &fixed).unwrap();
            let mut config = SimConfig::new(plan);
            config.cluster = Some(little);
            config.time_limit_s = seconds;
            let port = little_port(&simulate(p, workload, config).unwrap()).clone();
            assert!(port.si_rrq_hs_any > 0, "{} at {khz}: {port:?}", workload.name);
            port.si_rrq_stall_tt_full as f64 / port.si_rrq_hs_any as f64
        })
        .collect()
}

#[test]
fn figure_2c_a_lone_chase_waits_more_as_the_idle_big_cluster_slows() {
    let p = Platform::builtin("exynos5422").unwrap();
    // The paper's patterns at sizes beyond the A7's L2 (4 MB and 256 MB; ccbench's random mode
    // touches one word per 256-byte block, sequential every word): below the crossover (~650 MHz)
    // every read holds its entry for the snoop as well, so a kernel wake-up beside it fills the
    // tracker more often; above it the snoop hides under the DRAM access and the reading stays.
    for spec in [
        "ccbench:size=1048576,pattern=random",
        "ccbench:size=67108864,pattern=random",
        "ccbench:size=1048576,pattern=stride-16",
        "ccbench:size=67108864,pattern=sequential",
    ] {
        let c = stall_cycles_per_read(&p, &Workload::from_spec(spec).unwrap(), 0.5);
        assert!(c[3] > 0.0, "{spec}: {c:?}");
        assert!(c[0] > 2.0 * c[1] && c[1] > 1.5 * c[2], "{spec}: {c:?}");
        assert!((c[2] / c[3] - 1.0).abs() < 1e-9, "{spec}: {c:?}");
    }
    // The chase's own read alone never waits: without the wake-ups' reads nothing does.
    let mut quiet = p.clone();
    quiet.noise.kernel_wakeup_footprint_lines = 0.0;
    let c = stall_cycles_per_read(&quiet, &chase(), 0.05);
    assert_eq!(c, [0.0; 4]);
    // A wake-up whose lines the L2 kept reads nothing either: an L2-resident chase (256 KB)
    // leaves the port silent at every idle-big OPP.
    let resident = Workload::from_spec("ccbench:size=65536,pattern=random").unwrap();
    let little = little_port(&on_little(&p, &resident, 200_000)).clone();
    assert_eq!((little.si_rrq_hs_any, little.si_rrq_stall_tt_full), (0, 0), "{little:?}");
}

#[test]
fn every_little_workload_of_the_reproduction_moves_the_counter() {
    // The counter the tree managing the big cluster reads: what lctes2020 runs on LITTLE (its
    // realistic benchmarks and the ccbench configurations whose reads leave the L2) must not
    // read the same at every idle-big OPP.
    let p = Platform::builtin("exynos5422").unwrap();
    // (the realistic ones over 2 simulated seconds: povray's first phase stays in the L2)
    let mut specs: Vec<(String, f64)> = [
        "spec-gcc-g23",
        "spec-bwaves-test",
        "spec-povray-train",
        "spec-h264ref-train",
        "bbench",
        "speedometer2",
        "mplayer-1080p",
    ]
    .iter()
    .map(|s| (s.to_string(), 2.0))
    .collect();
    for size in [131_072, 160_100, 1_048_576, 33_554_432, 67_108_864] {
        for pattern in ["random", "sequential", "stride-16"] {
            specs.push((format!("ccbench:size={size},pattern={pattern}"), 0.2));
        }
    }
    for (spec, seconds) in specs {
        let w = Workload::from_spec(&spec).unwrap();
        let c = stall_cycles_per_read(&p, &w, seconds);
        assert!(c[0] > c[2] && c[2] > 0.0, "{spec}: {c:?}");
    }
}

#[test]
fn streams_wait_for_entries_on_their_own_beyond_the_trackers_size() {
    let p = Platform::builtin("exynos5422").unwrap();
    let little = p.cluster_index("little").unwrap();
    // four cores' streams, three reads in flight each, against 3 entries: they wait without
    // any help from the wake-ups, and more as the snoops slow
    let mut quiet = p.clone();
    quiet.noise.kernel_wakeup_footprint_lines = 0.0;
    let c = stall_cycles_per_read(&quiet, &streams(), 0.05);
    assert!(c[2] > 0.0 && c[0] > c[1] && c[1] > c[2], "{c:?}");
    // with an entry for every read the threads and wake-ups can have in flight, nothing waits
    let mut deep = p.clone();
    deep.clusters[little].read_tracker_entries = Some(64);
    assert_eq!(little_port(&on_little(&deep, &streams(), 200_000)).si_rrq_stall_tt_full, 0);
    // a cluster without its own size takes [cci]'s
    let mut shared = quiet.clone();
    shared.clusters[little].read_tracker_entries = None;
    shared.cci.as_mut().unwrap().read_tracker_entries = 64;
    assert_eq!(little_port(&on_little(&shared, &streams(), 200_000)).si_rrq_stall_tt_full, 0);
}

#[test]
fn a_snoop_slower_than_dram_costs_a_retried_fetch() {
    let overlap = Platform::builtin("exynos5422").unwrap();
    assert_eq!(overlap.cci.as_ref().unwrap().speculative_fetch, SpeculativeFetch::Overlap);
    let mut retry = overlap.clone();
    retry.cci.as_mut().unwrap().speculative_fetch = SpeculativeFetch::Retry;
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
    // (the port's reads include the kernel wake-ups', about 1 % of them here, which the model
    // does not add to the DRAM's lines)
    assert!(no_retries == 0 && (lines - 2.0).abs() < 0.03, "{no_retries} {lines}");
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
