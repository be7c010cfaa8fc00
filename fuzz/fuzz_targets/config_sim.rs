//! The engine's configuration matrix: the first `HEADER` bytes choose a run's configuration as a
//! user would give it — a built-in platform (every one of `BUILTIN_PLATFORMS`: the Exynos 5422
//! and 5433, TC2, the tri-cluster gs101/sm8650/rk3588, ...), a scheduler (every placement
//! policy), a switching mode (gts, iks, cluster-switching), a governor (every registered one,
//! and the all-max/idle-min configurations), a pinned frequency, cpuidle (wfi, cluster-off), a
//! PM QoS cpu_dma_latency, a resolve tolerance in 0..=MAX_RESOLVE_TOLERANCE, one kernel boot
//! option over a CPU list (rcu_nocbs, rcu_fast_no_hz, rcuo_affinity, irqaffinity, nohz_full,
//! workqueue.unbound_cpus), an offline cluster, a `--cluster` restriction, perf sampling, a
//! held DSU clock, one tunable of the governor and one of the scheduler (at its bounds or within),
//! the RT throttling tunables, a warm start and the seed — and the rest is an rt-app file
//! (at most 64 threads), simulated for 20 ms. Each choice goes through the parser or check a
//! user's would, so an invalid combination is an error line (`Err`), never a panic; the run
//! itself ends or is an error, never a panic or a hang, and an offline cluster's CPUs neither
//! run, wake nor take an interrupt (a wrong result a panic would not show).
#![no_main]
use hetlab_core::engine::{simulate, CpuIdle, SimConfig, MAX_CPU_DMA_LATENCY_US, MAX_RESOLVE_TOLERANCE};
use hetlab_core::governor::registry::GOVERNORS;
use hetlab_core::governor::tunables::TunableInfo;
use hetlab_core::kernel::boot::BootOptions;
use hetlab_core::kernel::perf_sampling::PerfSampling;
use hetlab_core::platform::{Platform, BUILTIN_PLATFORMS};
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::sched::registry::list;
use hetlab_core::sched::switching::SwitchingMode;
use hetlab_core::sched::SchedPolicy;
use libfuzzer_sys::fuzz_target;

/// Configuration bytes before the rt-app JSON.
const HEADER: usize = 17;

const SCHEDULERS: [&str; 6] = ["pinned", "smp", "hmp", "eas", "eevdf", "eas-eevdf"];
/// The named configurations `SimConfig::governor_plan` knows beside the governors.
const PLANS: [&str; 2] = ["all-max", "idle-min"];
/// Boot options, as `--kernel` names them; each with a CPU list but `rcu_fast_no_hz`.
const BOOT_OPTIONS: [&str; 6] =
    ["rcu_nocbs", "rcu_fast_no_hz", "rcuo_affinity", "irqaffinity", "nohz_full", "workqueue.unbound_cpus"];
/// cpu_dma_latency requests, µs: none, WFI only, around the platforms' exit latencies, no limit.
const DMA_LATENCY_US: [Option<u32>; 8] =
    [None, Some(0), Some(1), Some(50), Some(300), Some(1_000), Some(100_000), Some(MAX_CPU_DMA_LATENCY_US)];
/// perf record -c periods, instructions (the smallest is below every platform's handler count).
const PERF_PERIODS: [u64; 4] = [100, 10_000, 1_000_000, 100_000_000];

/// Start temperatures, °C: warm to past the platforms' trip points, and the check's bound.
const START_TEMP_C: [f64; 5] = [45.0, 70.0, 85.0, 105.0, 150.0];

/// The value a selector byte gives a tunable within its declared range: its minimum, maximum,
/// a small step above the minimum, or a fraction of the range.
fn tunable_value(info: &TunableInfo, b: u8) -> f64 {
    let step = f64::from(b >> 2);
    let value = match b & 3 {
        0 => info.min,
        1 => info.max,
        2 => info.min + step,
        _ => info.min + ((info.max - info.min) * step / 63.0).round(),
    };
    value.min(info.max)
}

/// One of `tunables` (byte `which`: 0 none, else 1 + an index) at the value byte `value` gives.
fn tunable(tunables: &[TunableInfo], which: u8, value: u8) -> Option<(String, f64)> {
    let info = (which != 0 && !tunables.is_empty()).then(|| &tunables[(which as usize - 1) % tunables.len()])?;
    Some((info.name.to_string(), tunable_value(info, value)))
}

/// A CPU list in the kernel's syntax (`0,2,5`) from a bit mask; "" for none.
fn cpulist(mask: u8) -> String {
    (0..8).filter(|b| mask & (1 << b) != 0).map(|b| b.to_string()).collect::<Vec<_>>().join(",")
}

/// The configuration the header chooses, or the error a user would get for it. Bytes: 0
/// platform; 1 scheduler; 2 switching (bits 0-1), cpuidle (2-3), seed (4-7); 3 governor; 4
/// resolve tolerance (bits 0-6, tenths of the maximum), RT tunables (7); 5 boot option; 6 its CPU
/// mask; 7 cpu_dma_latency; 8 the offline clusters (bits 0-3, one per cluster index), `--cluster`
/// (4-7: 0 for none, or 1 + a cluster index); 9 `--freq`: OPP index (bits 0-3) of a cluster
/// (4-7, as `--cluster`'s);
/// 10 perf sampling's CPU mask (0: off); 11 its period (bits 0-1), a held DSU clock (bit 2: on,
/// 3-7: which OPP); 12 a tunable of the governor (0: none, else 1 + its index) and 13 its value
/// (`tunable_value`); 14 and 15 the same for the scheduler's; 16 every cluster's start
/// temperature (0: ambient).
fn config(platform: &Platform, h: &[u8; HEADER]) -> Result<SimConfig, String> {
    let n = platform.clusters.len();
    // a cluster byte: 0 none, else one of the platform's clusters
    let cluster_from = |b: u8| (b != 0).then(|| (b as usize - 1) % n);
    let cluster = cluster_from(h[8] >> 4);
    let governor = {
        let i = h[3] as usize % (GOVERNORS.len() + PLANS.len());
        GOVERNORS.get(i).map_or_else(|| PLANS[i - GOVERNORS.len()], |d| d.name)
    };
    // --freq: a cluster at one of its OPPs
    let fixed: Vec<(usize, u32)> = cluster_from(h[9] >> 4)
        .map(|c| {
            let opps = &platform.clusters[c].opps;
            (c, opps[(h[9] & 0xf) as usize % opps.len()][0])
        })
        .into_iter()
        .collect();
    let governor_tunables: Vec<(String, f64)> = GOVERNORS
        .iter()
        .find(|d| d.name == governor)
        .and_then(|d| tunable(&(d.tunables)(platform.tick_us()), h[12], h[13]))
        .into_iter()
        .collect();
    let mut config = SimConfig::new(SimConfig::governor_plan(platform, governor, &governor_tunables, cluster, &fixed)?);
    let scheduler = SCHEDULERS[h[1] as usize % SCHEDULERS.len()];
    config.scheduler = SchedPolicy::parse(scheduler)?;
    config.switching = SwitchingMode::ALL[(h[2] & 3) as usize % SwitchingMode::ALL.len()];
    config.cpuidle = CpuIdle::parse(CpuIdle::NAMES[(h[2] >> 2) as usize % CpuIdle::NAMES.len()])?;
    config.seed = u64::from(h[2] >> 4);
    config.resolve_tolerance = f64::from((h[4] & 0x7f) % 11) / 10.0 * MAX_RESOLVE_TOLERANCE;
    if h[4] & 0x80 != 0 {
        // the RT throttling of rtapp_sim: RT tasks run 5 ms of each 10 ms, RR turns of 5 ms
        config.sched_tunables =
            [("sched_rt_period_us", 10_000.0), ("sched_rt_runtime_us", 5_000.0), ("sched_rr_timeslice_ms", 5.0)]
                .map(|(name, value)| (name.to_string(), value))
                .to_vec();
    }
    let sched_tunables = list().into_iter().find(|p| p.name == scheduler).map(|p| p.tunables).unwrap_or_default();
    config.sched_tunables.extend(tunable(&sched_tunables, h[14], h[15]));
    if h[16] != 0 {
        config.start_temp_c = vec![START_TEMP_C[(h[16] as usize - 1) % START_TEMP_C.len()]; n];
    }
    let boot = match h[5] as usize % (BOOT_OPTIONS.len() + 1) {
        0 => String::new(),
        i if BOOT_OPTIONS[i - 1] == "rcu_fast_no_hz" => "rcu_fast_no_hz".to_string(),
        i => format!("{}={}", BOOT_OPTIONS[i - 1], cpulist(h[6])),
    };
    config.kernel = BootOptions::parse(&boot, platform.ncpus())?;
    config.cpu_dma_latency_us = DMA_LATENCY_US[h[7] as usize % DMA_LATENCY_US.len()];
    config.offline_clusters = (0..n.min(4)).filter(|c| h[8] & (1 << c) != 0).collect();
    config.cluster = cluster;
    if h[10] != 0 {
        config.perf_sampling =
            Some(PerfSampling { cpus: (0..8).filter(|b| h[10] & (1 << b) != 0).collect(), period_instructions: 0 });
    }
    if let Some(perf) = &mut config.perf_sampling {
        perf.period_instructions = PERF_PERIODS[(h[11] & 3) as usize];
    }
    // a held DSU clock: one of the OPPs where there is a DSU, else a value the check refuses
    if h[11] & 4 != 0 {
        config.dsu_khz =
            Some(platform.dsu.as_ref().map_or(1_000_000, |d| d.opps[(h[11] >> 3) as usize % d.opps.len()][0]));
    }
    config.series = false;
    // no trace: a work-less forever loop would record millions of events first (as rtapp_sim)
    config.trace = false;
    config.time_limit_s = 0.02;
    // as rtapp_sim: a work-less loop ends after 10^4 events at one instant, not 10^6
    config.max_events_without_progress = 10_000;
    Ok(config)
}

fuzz_target!(|data: &[u8]| {
    let Some((header, json)) = data.split_first_chunk::<HEADER>() else { return };
    let Ok(text) = std::str::from_utf8(json) else { return };
    let Ok(workload) = from_rtapp_json("fuzz.json", text) else { return };
    // bounded work per input: the engine's cost follows events, and threads make events
    if workload.nthreads() > 64 {
        return;
    }
    let (name, _) = BUILTIN_PLATFORMS[header[0] as usize % BUILTIN_PLATFORMS.len()];
    let platform = Platform::builtin(name).expect("a built-in platform parses");
    let Ok(config) = config(&platform, header) else { return };
    // an offline cluster's CPUs (where no switcher moves CPUs between clusters)
    let offline: Vec<&str> = match config.switching {
        SwitchingMode::Gts => config.offline_clusters.iter().map(|&c| platform.clusters[c].name.as_str()).collect(),
        _ => Vec::new(),
    };
    let Ok(r) = simulate(&platform, &workload, config) else { return };
    // a wrong result no panic shows: work, a wake-up or an interrupt on a CPU that is offline
    for cpu in r.cpus.iter().filter(|c| offline.contains(&c.cluster.as_str())) {
        assert!(
            cpu.busy_s == 0.0 && cpu.wakeups == 0 && cpu.pmu.cpu_cycles == 0,
            "offline cpu{} ran: busy {} s, {} wake-ups, {} cycles",
            cpu.cpu,
            cpu.busy_s,
            cpu.wakeups,
            cpu.pmu.cpu_cycles
        );
        for source in r.interrupts.iter().flat_map(|i| &i.sources) {
            assert_eq!(
                source.count.get(cpu.cpu).copied().unwrap_or(0),
                0,
                "{} ran on offline cpu{}",
                source.name,
                cpu.cpu
            );
        }
    }
});
