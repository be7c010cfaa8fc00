//! SoC descriptions: core types, clusters with OPP tables, the CCI, DRAM, board power, thermal
//! trips and OS noise. Parsed from TOML (data/platforms/*.toml) and validated; every error names
//! the file, the field and the reason.
//!
//! Optional parts, for SoCs that lack them: the `[cci]` section with each cluster's `cci_port`
//! (an SCU-based MPCore such as the Cortex-A9 keeps its one cluster coherent without a CCI:
//! no cross-cluster snoops, no interconnect traversal, no CCI counters), a cluster's
//! power-down state (`cluster_off_*`: a platform whose cpuidle has only WFI), and the
//! `[perf_sample]` cost of one perf counter-overflow sample (`kernel::perf_sampling`).
//!
//! This file holds the description's types and what is derived from them; `validate.rs` checks
//! each section.

mod dsu;
mod kernel;
mod validate;

pub use dsu::{Dsu, DsuGovernor};
pub use kernel::{Device, KernelSetup, KernelTimer};

use serde::Deserialize;
use std::collections::BTreeMap;

pub use crate::builtin::BUILTIN_PLATFORMS;

/// Most clusters a platform may have (tri-cluster DynamIQ SoCs have three); per-cluster
/// results are stored inline up to this many.
pub const MAX_CLUSTERS: usize = 4;
/// Most CPUs a platform may have (a CPU mask is one 64-bit word).
pub const MAX_CPUS: usize = 64;

/// The `[hmp]` section's knobs, `/sys/kernel/hmp/` names with their integer ranges, checked when
/// a platform loads, whatever the scheduler. `sched::hmp::tunables()` declares the same knobs
/// with their defaults and help; its test `the_platforms_hmp_table_is_the_schedulers` keeps the
/// two equal (the platform cannot import the scheduler: it sits below it).
pub const HMP_KNOBS: &[(&str, f64, f64)] = &[
    ("up_threshold", 0.0, 1024.0),
    ("down_threshold", 0.0, 1024.0),
    ("frequency_invariant_load_scale", 0.0, 1.0),
    ("packing_enable", 0.0, 1.0),
    ("packing_limit", 0.0, u32::MAX as f64),
    ("prio_filter", 0.0, 1.0),
    ("prio_filter_val", 0.0, 19.0),
    ("fast_cpu_mask", 0.0, ((1u64 << 53) - 1) as f64),
    ("slow_cpu_mask", 0.0, ((1u64 << 53) - 1) as f64),
];
/// The platform every command runs on unless told otherwise: the seed paper's Odroid-XU3.
pub const DEFAULT_PLATFORM: &str = "exynos5422";
/// Largest power of an energy-model state, mW: the kernel's `EM_MAX_POWER` (0xFFFF, Linux 5.10:
/// "expected to be positive, in milli-watts and to fit into 16 bits").
pub const EM_MAX_POWER_MW: u32 = 0xFFFF;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    pub name: String,
    pub description: String,
    /// Scheduler tick rate (CONFIG_HZ).
    pub hz: u32,
    /// The instruction set the software runs in (`aarch64` unless given): a 32-bit kernel and
    /// userland on an ARMv8 core lose the crypto and NEON FP64 instructions.
    #[serde(default)]
    pub execution_state: ExecutionState,
    /// What scheduling costs on this board (`[sched]`).
    #[serde(default)]
    pub sched: SchedCosts,
    /// The board's kernel's big.LITTLE MP settings (`[hmp]`: `/sys/kernel/hmp/` names and
    /// values, checked by `sched::hmp`); absent ones keep LSK's defaults.
    #[serde(default)]
    pub hmp: BTreeMap<String, f64>,
    pub core_types: Vec<CoreType>,
    pub clusters: Vec<Cluster>,
    /// The cache-coherent interconnect between clusters; `None`: the platform has none.
    #[serde(default)]
    pub cci: Option<Cci>,
    /// The DynamIQ Shared Unit (shared L3, snoop filter, its own clock domain); `None`: the
    /// platform has none (a big.LITTLE SoC behind a CCI, or an abstract model).
    #[serde(default)]
    pub dsu: Option<Dsu>,
    pub dram: Dram,
    pub board: Board,
    pub thermal: Thermal,
    pub noise: Noise,
    pub governor_cost: GovernorCost,
    pub sensors: Sensors,
    /// What the core PMU's events count where the architecture leaves it open (`[pmu]`).
    #[serde(default)]
    pub pmu: PmuSemantics,
    /// What of each data cache a phase's working set cannot have (`model::cache`).
    #[serde(default)]
    pub caches: CacheSharing,
    /// CPU cost of one perf counter-overflow sample on this board's kernel; `None`: not
    /// described (perf sampling cannot be simulated on this platform).
    #[serde(default)]
    pub perf_sample: Option<PerfSampleCost>,
    /// An explicit energy model for some or all clusters, in the shape of
    /// `/sys/kernel/debug/energy_model` (optional; clusters left out get the one the kernel
    /// derives from the OPPs and `dynamic_power_coefficient`, see `sched::energy_model`).
    #[serde(default)]
    pub energy_model: Vec<EmDomainSpec>,
    /// The board's kernel: its interrupt paths, devices, broadcast timer, kthreads' and own
    /// timers' costs (`[kernel]`, `platform::kernel`); `None`: not described (no interrupt is
    /// routed, `[sched] tick_cycles` stands for an idle CPU's tick).
    #[serde(default)]
    pub kernel: Option<KernelSetup>,
    /// Derived once at load: each cluster's index into `core_types`, and its CPU capacity.
    #[serde(skip)]
    derived: Derived,
}

/// The ARMv8 execution state the board's software runs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionState {
    Aarch32,
    #[default]
    Aarch64,
}

#[derive(Debug, Clone, Default)]
struct Derived {
    core_type: Vec<usize>,
    capacity: Vec<u32>,
}

/// One performance domain of an explicit energy model, as `/sys/kernel/debug/energy_model/cpuN`
/// shows it (Linux 5.10): the domain's CPUs (`cpus`) and one `ps:<kHz>` entry per performance
/// state with its `frequency` (kHz) and `power` (mW). The cost is not given: the kernel computes
/// it from these (`em_create_perf_table`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmDomainSpec {
    pub cpus: Vec<usize>,
    pub ps: Vec<EmStateSpec>,
    /// What the powers are in: mW (the default; Linux 5.10's EM, and a tree in µW read back
    /// as mW), or an abstract scale (`"bogoWatts"`: the kernel's EM_PERF_DOMAIN_MILLIWATTS or
    /// _MICROWATTS flag clear). EAS compares costs within one model only, so both place alike;
    /// nothing reads an abstract scale as energy.
    #[serde(default)]
    pub units: EmUnits,
}

/// The units of an energy model's powers, as the kernel marks them (`units` in debugfs from
/// Linux 5.11, `flags` bit 0 from 6.x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum EmUnits {
    #[default]
    #[serde(rename = "milliWatts")]
    MilliWatts,
    #[serde(rename = "bogoWatts")]
    BogoWatts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmStateSpec {
    pub frequency_khz: u32,
    /// mW, or the abstract scale's units (`EmDomainSpec::units`).
    pub power_mw: u32,
}

/// What scheduling costs on this board.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedCosts {
    /// A running task moved by the CPU stopper (forced or active migration) waits this long
    /// before it runs on its new CPU, if that CPU is awake, µs (0: not described).
    #[serde(default)]
    pub active_migration_latency_us: f64,
    /// CPU cycles of one scheduling-clock tick on an idle CPU (leaving WFI, the tick handler,
    /// RCU's check, the softirq, back to WFI); only idle CPUs that RCU keeps ticking pay it
    /// (0: not described).
    #[serde(default)]
    pub tick_cycles: f64,
    /// A big.LITTLE switch (`sched::switching`): the time a logical CPU stops between its
    /// outbound core saving its context and its inbound core resuming it (GIC migration, CPU
    /// PM notifiers, state save and restore), besides the inbound cluster's power-up and the
    /// cold caches, µs (0: not described).
    #[serde(default)]
    pub switch_transfer_us: f64,
}

/// Where ARMv7's BUS_ACCESS (event 0x19) draws "the boundary of the processor and its
/// closely-coupled caches", which the architecture leaves IMPLEMENTATION DEFINED.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BusAccess {
    /// One per cache line between the cluster's L2 and the interconnect (refills and
    /// write-backs): the L2 as part of the processor.
    #[default]
    L2Line,
    /// One per data beat between a core's L1 and the L2 (line fills and write-backs, line bytes /
    /// `beat_bytes` each), as later ARM cores count it.
    L1Beat,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmuSemantics {
    pub bus_access: BusAccess,
    /// Width of the L1-L2 data path, bytes per beat; needed with `bus_access = "l1-beat"`.
    #[serde(default)]
    pub beat_bytes: Option<u32>,
}

impl PmuSemantics {
    /// BUS_ACCESS counts per instruction from the line traffic: `l2_lines` between the L2 and
    /// the interconnect, `l1_lines` between the L1 and the L2 (write-backs included in both).
    pub fn bus_access_per_instr(&self, l2_lines: f64, l1_lines: f64, line_bytes: u64) -> f64 {
        match self.bus_access {
            BusAccess::L2Line => l2_lines,
            BusAccess::L1Beat => l1_lines * line_bytes as f64 / self.beat_bytes.unwrap_or(line_bytes as u32) as f64,
        }
    }
}

/// The data caches as a program on this board finds them; a key left out keeps its
/// `PROGRAM_ALONE` value.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheSharing {
    /// Share of every data cache (L1D, each L2) held by lines outside a phase's working set —
    /// page tables, code, stack, the kernel's data — 0..1; 0: the whole cache is the phase's.
    pub system_share: f64,
    /// Page walks beyond each core type's TLB reach (`model::tlb`, the core types'
    /// `tlb_entries`) are modelled; false: translation is free.
    pub translation: bool,
    /// The page size programs' memory is mapped with, bytes.
    pub page_bytes: u64,
    /// Bytes of one last-level translation descriptor: 4 for the ARMv7 short-descriptor format,
    /// 8 for LPAE's long descriptors.
    pub descriptor_bytes: u64,
}

impl CacheSharing {
    /// The caches as a cache simulator sees one program: all of them its own, no translation.
    pub const PROGRAM_ALONE: CacheSharing =
        CacheSharing { system_share: 0.0, translation: false, page_bytes: 4096, descriptor_bytes: 4 };
}

impl Default for CacheSharing {
    fn default() -> Self {
        CacheSharing::PROGRAM_ALONE
    }
}

/// On-board power sensors (the Odroid-XU3's INA231s) as an experiment reads them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sensors {
    pub period_us: u64,
    /// Constant power of sensed rails the model does not simulate (the XU3's GPU rail with the
    /// GPU idle), mW: added to every reading, not to the board's total (the rest of the board's
    /// draw already holds it).
    #[serde(default)]
    pub unmodelled_rails_mw: f64,
}

/// What one perf counter-overflow sample costs the CPU it interrupts (PMU interrupt, the
/// overflow handler and the sample written to the ring buffer), `kernel::perf_sampling`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfSampleCost {
    /// Cycles of one sample with the handler's code and data in L1 (its instructions and its
    /// device reads), on the interrupted core (so the time scales with its clock).
    pub handler_cycles: f64,
    /// The handler's footprint in L1 lines, its data (data, stack, the ring buffer's next
    /// lines) and its code: those the task evicted since the last sample come back from the
    /// L2, and each evicts a line of the task's (`kernel::perf_sampling::sample_cycles`).
    pub handler_data_lines: f64,
    pub handler_code_lines: f64,
    /// The share of the handler's code lines found evicted at a sample; `None`: the data
    /// side's share (the task's instruction fetch is not modelled: its code is assumed to churn
    /// the L1I as its data churns the L1D).
    #[serde(default)]
    pub code_cold_share: Option<f64>,
    /// TLB entries the handler uses (the kernel's section mappings, the ring buffer's page).
    pub handler_tlb_entries: f64,
    /// Instructions of the handler that the counter itself counts towards the next period (a
    /// PMU without privilege filtering counts the kernel's instructions too).
    pub counted_instructions: f64,
}

/// CPU time a PMC-reading governor sample costs on this board.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GovernorCost {
    pub pmc_sample_base_us: f64,
    pub pmc_per_thread_us: f64,
    pub cci_read_us: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreType {
    pub name: String,
    pub capacity_dmips_mhz: u32,
    /// The device tree's `dynamic-power-coefficient`, µW/MHz/V²: what the kernel's Energy
    /// Model is built from.
    pub dynamic_power_coefficient: f64,
    /// The core's switched capacitance measured on a board, µW/MHz/V², where it differs from
    /// the device tree's estimate: the power the model draws. `None`: the DT value.
    #[serde(default)]
    pub measured_power_coefficient: Option<f64>,
    pub l1d_bytes: u64,
    pub line_bytes: u64,
    pub l1_hit_cycles: f64,
    /// L2 hit latency beyond the L1 lookup, core cycles.
    pub l2_hit_cycles: f64,
    /// Average number of independent misses in flight.
    pub mlp: f64,
    /// Share of sequential/strided misses the prefetcher hides, 0..=1.
    pub prefetch_coverage: f64,
    /// Lines the stride prefetcher keeps in flight ahead of a stream: read requests a
    /// streaming thread adds to its own misses at the interconnect (`model::cci`).
    pub prefetch_degree: u32,
    /// CPI of compute-bound code relative to the reference (big) core type.
    pub cpi_factor: f64,
    /// Switching activity of a core stalled on memory, relative to a busy core, 0..=1.
    pub stall_activity: f64,
    /// Per instruction class throughput, for phases that declare their mix
    /// (`model::code_class`); `None`: such phases cannot run on this core type.
    #[serde(default)]
    pub code_classes: Option<crate::isa::ClassCycles>,
    /// Entries of the core's last-level data TLB (the A7's main TLB, the A15's L2 TLB): beyond
    /// their reach a reference waits for a page walk (`model::tlb`). 0: translation is not
    /// modelled.
    #[serde(default)]
    pub tlb_entries: u32,
    /// The page walk reads its descriptor through the L1 data cache (the A7's "page
    /// descriptors held in the L1 data cache"); false: from the L2.
    #[serde(default)]
    pub page_walk_via_l1: bool,
    /// Cache geometry the model itself does not use (instruction side, associativity), for a
    /// cache simulator that profiles real programs (`hetlab profile`); `None`: not described.
    #[serde(default)]
    pub caches: Option<CacheGeometry>,
}

/// L1 geometry of a core type beyond `l1d_bytes` and `line_bytes`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheGeometry {
    pub l1i_bytes: u64,
    pub l1i_ways: u32,
    pub l1i_line_bytes: u64,
    pub l1d_ways: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    pub name: String,
    pub core_type: String,
    pub cpus: Vec<usize>,
    /// The CCI slave interface the cluster is wired to (S3, S4, ...); only with a `[cci]`.
    #[serde(default)]
    pub cci_port: Option<u8>,
    /// Entries of that slave interface's read transaction tracker (SIx_R_MAX, a build option of
    /// each interface); `None`: `[cci] read_tracker_entries`.
    #[serde(default)]
    pub read_tracker_entries: Option<u32>,
    pub l2_bytes: u64,
    /// L2 associativity; only for a cache simulator (`CoreType::caches`), the model does not use it.
    #[serde(default)]
    pub l2_ways: Option<u32>,
    pub transition_latency_ns: u32,
    /// `[kHz, µV]` pairs, ascending.
    pub opps: Vec<[u32; 2]>,
    /// Leakage of the powered cluster at 1.0 V and 25 °C, mW.
    pub leakage_mw: f64,
    /// Share of that leakage in the cores, split evenly among them: a core no logical CPU is
    /// on (the switcher's outbound core, power-gated) does not leak; the rest (L2, snoop
    /// control) leaks while the cluster is powered. 0: all of it shared.
    #[serde(default)]
    pub core_leakage_share: f64,
    /// Power of the cluster's shared logic (L2, snoop control, bus interface) while at least
    /// one of its CPUs is busy, per OPP in `opps` order, mW: the legacy EAS model's "cluster"
    /// busy power. Empty: not described (the cluster costs only its cores and leakage).
    #[serde(default)]
    pub active_mw: Vec<f64>,
    /// Switched capacitance of the cluster's clocked shared logic (clock tree, L2, snoop
    /// control), µW/MHz/V²: C·V²·f drawn while the cluster is powered, its cores busy or in WFI
    /// alike (WFI gates a core's clock, not the L2's). 0: not described.
    #[serde(default)]
    pub clock_power_coefficient: f64,
    /// Energy of one snoop the cluster's L2 serves (the tag lookup; the line's read when it
    /// hits), nJ at 1.0 V, scaling with V²: drawn beyond the clocked logic for every read
    /// another cluster issues through the CCI while this one is powered. 0: not described.
    #[serde(default)]
    pub snoop_lookup_energy_nj: f64,
    /// A core's own power-down (cpuidle's per-core state, e.g. the vendor Exynos C2), both or
    /// neither; `None`: an idle core stays in WFI until its cluster powers down.
    #[serde(default)]
    pub core_off_exit_latency_us: Option<u32>,
    #[serde(default)]
    pub core_off_target_residency_us: Option<u32>,
    /// Cluster power-down (cpuidle's cluster state), both or neither; `None`: WFI only.
    #[serde(default)]
    pub cluster_off_exit_latency_us: Option<u32>,
    #[serde(default)]
    pub cluster_off_target_residency_us: Option<u32>,
    /// Energy of one cluster wake-up from power-down (cache and state restore beyond the exit
    /// latency's busy time), µJ; 0: not described.
    #[serde(default)]
    pub cluster_off_wakeup_energy_uj: f64,
    /// The cluster's power-down state stops its CPUs' local timers (the DT's
    /// `local-timer-stop`): a timer due on a CPU there fires through the broadcast timer
    /// (`[kernel] broadcast_timer`).
    #[serde(default)]
    pub cluster_off_stops_local_timer: bool,
    pub thermal_resistance_c_per_w: f64,
    pub thermal_capacitance_j_per_c: f64,
}

/// What happens to the DRAM data of a speculative fetch that returns before the snoop response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpeculativeFetch {
    /// Discarded, and the read retried when the snoop response arrives (CCI-400 TRM DDI 0470D
    /// §2.3): a miss the snoop outlasts costs snoop + DRAM and reads DRAM twice.
    Retry,
    /// Kept: the slower of snoop and DRAM decides (an interconnect that buffers early data).
    Overlap,
}

/// Most misses (or prefetches) one core may have in flight: far above any real core's miss
/// handling registers, low enough to keep the interconnect's request-source model small.
pub const MAX_REQUESTS_IN_FLIGHT: u32 = 64;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cci {
    pub clock_khz: u32,
    pub latency_ns: f64,
    pub read_tracker_entries: u32,
    pub snoop_path_l2_lookups: f64,
    /// Part of a snoop's latency that does not scale with the snooped cluster's clock (the
    /// interconnect's own cycles, asynchronous bridge crossings), ns.
    pub snoop_fixed_ns: f64,
    /// What the interconnect does when a speculative DRAM fetch returns before the snoop
    /// response.
    pub speculative_fetch: SpeculativeFetch,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dram {
    pub idle_latency_ns: f64,
    pub peak_bandwidth_mb_s: f64,
    pub bandwidth_efficiency: f64,
    pub background_power_mw: f64,
    pub energy_per_line_nj: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub rest_power_mw: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thermal {
    pub ambient_c: f64,
    pub polling_interval_ms: u32,
    pub trips: Vec<Trip>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trip {
    pub temp_c: f64,
    /// Frequency cap per cluster name while above this trip.
    pub caps_khz: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Noise {
    pub kernel_wakeup_mean_interval_us: u64,
    /// Mean OS-jitter burst; 0: no jitter at all (`kernel::jitter`).
    pub kernel_wakeup_mean_busy_us: u64,
    /// Cache lines of kernel code and data one OS-jitter wake-up touches: those its cluster's L2
    /// lost since the CPU's last wake-up are read through the cluster's CCI port during the
    /// burst (`model::cci`, the port's request sources). 0: the wake-ups read nothing there.
    #[serde(default)]
    pub kernel_wakeup_footprint_lines: f64,
    pub dram_latency_sigma: f64,
    pub dram_noise_period_us: u64,
}

impl Platform {
    /// Parses and validates a platform; `origin` (a file name) prefixes every error.
    pub fn from_toml(origin: &str, text: &str) -> Result<Platform, String> {
        let mut platform: Platform = crate::input::parse_toml(origin, text)?;
        platform.validate().map_err(|e| format!("{origin}: {e}"))?;
        platform.derive();
        Ok(platform)
    }

    /// The scheduler tick, µs: one jiffy at CONFIG_HZ (`jiffies_to_usecs(1)`, truncated).
    pub fn tick_us(&self) -> u64 {
        1_000_000 / u64::from(self.hz)
    }

    /// A built-in platform by name, each parsed once per process when first asked for
    /// (simulations start often; a process that runs one platform parses only that one, a fifth
    /// of the built-in files' text).
    pub fn builtin(name: &str) -> Result<Platform, String> {
        type Parsed = std::sync::OnceLock<Result<Platform, String>>;
        static PARSED: [Parsed; BUILTIN_PLATFORMS.len()] = [const { Parsed::new() }; BUILTIN_PLATFORMS.len()];
        match BUILTIN_PLATFORMS.iter().position(|(n, _)| *n == name) {
            Some(i) => PARSED[i]
                .get_or_init(|| {
                    let (n, text) = BUILTIN_PLATFORMS[i];
                    Platform::from_toml(&format!("{n}.toml (built-in)"), text)
                })
                .clone(),
            None => Err(format!(
                "unknown platform '{name}'; built-in: {} (or give a path to a .toml file)",
                BUILTIN_PLATFORMS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    pub fn ncpus(&self) -> usize {
        self.clusters.iter().map(|c| c.cpus.len()).sum()
    }

    pub fn core_type_of(&self, cluster: usize) -> &CoreType {
        &self.core_types[self.derived.core_type[cluster]]
    }

    /// The explicit energy-model table of `cluster`, if the platform file gives one.
    pub fn energy_model_table(&self, cluster: usize) -> Option<&EmDomainSpec> {
        let cpus = &self.clusters[cluster].cpus;
        self.energy_model.iter().find(|d| d.cpus.iter().all(|c| cpus.contains(c)))
    }

    pub fn cluster_index(&self, name: &str) -> Option<usize> {
        self.clusters.iter().position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// CPU capacity at max frequency, 0..=1024 (arch_topology's normalisation, gov §5).
    pub fn cpu_capacity(&self, cluster: usize) -> u32 {
        self.derived.capacity[cluster]
    }

    /// Fills `derived` (after validation: every core type exists).
    fn derive(&mut self) {
        let core_type: Vec<usize> = self
            .clusters
            .iter()
            .map(|c| self.core_types.iter().position(|t| t.name == c.core_type).expect("validated"))
            .collect();
        let raw: Vec<u64> = (0..self.clusters.len())
            .map(|c| self.core_types[core_type[c]].capacity_dmips_mhz as u64 * self.clusters[c].max_khz() as u64)
            .collect();
        let max = raw.iter().copied().max().unwrap_or(1).max(1);
        self.derived = Derived { capacity: raw.iter().map(|r| ((r << 10) / max) as u32).collect(), core_type };
    }
}

impl Cluster {
    pub fn min_khz(&self) -> u32 {
        self.opps[0][0]
    }
    pub fn max_khz(&self) -> u32 {
        self.opps[self.opps.len() - 1][0]
    }
    pub fn freqs_khz(&self) -> Vec<u32> {
        self.opps.iter().map(|o| o[0]).collect()
    }
    /// The shared logic's power at OPP `opp` while a CPU of the cluster is busy, mW (0: not
    /// described).
    pub fn active_mw_at(&self, opp: usize) -> f64 {
        self.active_mw.get(opp).copied().unwrap_or(0.0)
    }

    /// The cluster power-down state as (exit latency, target residency), µs; `None`: the
    /// cluster's cpuidle has WFI only.
    pub fn cluster_off_us(&self) -> Option<(u32, u32)> {
        self.cluster_off_exit_latency_us.zip(self.cluster_off_target_residency_us)
    }
    /// The core power-down state's (exit latency, target residency), µs.
    pub fn core_off_us(&self) -> Option<(u32, u32)> {
        self.core_off_exit_latency_us.zip(self.core_off_target_residency_us)
    }
    /// Voltage of the OPP at `khz` (the lowest OPP at or above it), volts.
    pub fn voltage_v(&self, khz: u32) -> f64 {
        let opp = self.opps.iter().find(|o| o[0] >= khz).unwrap_or(&self.opps[self.opps.len() - 1]);
        opp[1] as f64 * 1e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exynos_text() -> &'static str {
        BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5422").expect("built in").1
    }

    #[test]
    fn exynos5422_loads_with_the_mainline_tables() {
        let p = Platform::builtin("exynos5422").unwrap();
        assert_eq!(p.ncpus(), 8);
        let little = &p.clusters[p.cluster_index("little").unwrap()];
        let big = &p.clusters[p.cluster_index("big").unwrap()];
        assert_eq!(little.opps.len(), 13);
        assert_eq!(big.opps.len(), 19);
        assert_eq!((little.min_khz(), little.max_khz()), (200000, 1400000));
        assert_eq!((big.min_khz(), big.max_khz()), (200000, 2000000));
        assert_eq!(big.voltage_v(1700000), 1.25);
        assert_eq!((little.cci_port, big.cci_port), (Some(3), Some(4)));
        assert!(p.cci.is_some() && p.perf_sample.is_none());
        assert_eq!((little.cluster_off_exit_latency_us, big.cluster_off_target_residency_us), (Some(700), Some(2000)));
        // arch_topology normalisation: 539 * 1400 / (1024 * 2000) * 1024 = 377
        assert_eq!(p.cpu_capacity(0), 377);
        assert_eq!(p.cpu_capacity(1), 1024);
    }

    fn broken(find: &str, replace: &str) -> String {
        let text = exynos_text();
        assert!(text.contains(find), "fixture text '{find}' not in the platform file");
        let err = Platform::from_toml("broken.toml", &text.replacen(find, replace, 1)).unwrap_err();
        assert!(err.starts_with("broken.toml"), "{err}");
        err
    }

    #[test]
    fn rejects_unsorted_and_duplicate_opps() {
        let e = broken("[200000, 900000], [300000, 900000]", "[300000, 900000], [200000, 900000]");
        assert!(e.contains("sorted") && e.contains("opps"), "{e}");
        let e = broken("[200000, 900000], [300000, 900000]", "[200000, 900000], [200000, 900000]");
        assert!(e.contains("duplicate OPP"), "{e}");
    }

    #[test]
    fn rejects_zero_cores_unknown_keys_missing_fields_and_negatives() {
        let e = broken("cpus = [0, 1, 2, 3]", "cpus = []");
        assert!(e.contains("zero cores"), "{e}");
        let e = broken("hz = 200", "hz = 200\nturbo = true");
        assert!(e.contains("unknown field `turbo`"), "{e}");
        let e = broken("leakage_mw = 0.0", "");
        assert!(e.contains("missing field `leakage_mw`"), "{e}");
        let e = broken("leakage_mw = 0.0", "leakage_mw = -4.0");
        assert!(e.contains("leakage_mw must be within 0 mW to 100000 mW, got -4"), "{e}");
        let e = broken("clock_power_coefficient = 39.7", "clock_power_coefficient = -1.0");
        assert!(e.contains("clock_power_coefficient must not be negative"), "{e}");
        let e = broken("measured_power_coefficient = 414.0", "measured_power_coefficient = 0.0");
        assert!(e.contains("measured_power_coefficient"), "{e}");
        let e = broken("l2_bytes = 524288", "l2_bytes = -1");
        assert!(e.contains("broken.toml:"), "{e}");
        let e = broken("page_bytes = 4096", "page_bytes = 5000");
        assert!(e.contains("caches.page_bytes must be a power of two"), "{e}");
        let e = broken("descriptor_bytes = 4", "descriptor_bytes = 16");
        assert!(e.contains("caches.descriptor_bytes must be 4 (short descriptors) or 8 (LPAE)"), "{e}");
    }

    #[test]
    fn each_built_in_platform_is_its_file_parsed_when_first_asked_for() {
        // each file is parsed on its own first request (not every file at the first): the same
        // values as parsing it directly, and the same again from the second request on
        for (name, text) in BUILTIN_PLATFORMS {
            let direct = format!("{:?}", Platform::from_toml(&format!("{name}.toml (built-in)"), text).unwrap());
            assert_eq!(format!("{:?}", Platform::builtin(name).unwrap()), direct, "{name}");
            assert_eq!(format!("{:?}", Platform::builtin(name).unwrap()), direct, "{name}, asked again");
        }
        let unknown = Platform::builtin("no-such-board").unwrap_err();
        assert!(unknown.contains("unknown platform 'no-such-board'; built-in: exynos5422, "), "{unknown}");
    }

    #[test]
    fn the_tick_follows_hz() {
        // the Odroid-XU3 kernels: CONFIG_HZ=200
        assert_eq!(Platform::builtin("exynos5422").unwrap().tick_us(), 5_000);
        let hz = |v: &str| Platform::from_toml("x.toml", &exynos_text().replacen("hz = 200", v, 1));
        assert_eq!(hz("hz = 1000").unwrap().tick_us(), 1_000);
        // jiffies_to_usecs(1) at HZ=300: 3333 µs
        assert_eq!(hz("hz = 300").unwrap().tick_us(), 3_333);
        assert!(hz("hz = 0").unwrap_err().contains("hz must be positive"));
        assert!(hz("hz = 2000000").unwrap_err().contains("hz must be at most 1000000"));
    }

    #[test]
    fn vexpress_a9_is_one_scu_cluster_at_400_mhz_without_cci_dvfs_or_cluster_off() {
        let p = Platform::builtin("vexpress-a9").unwrap();
        assert_eq!((p.ncpus(), p.clusters.len(), p.hz), (4, 1, 100));
        let a9 = &p.clusters[0];
        assert_eq!(a9.opps, vec![[400_000, 1_000_000]]);
        assert_eq!((a9.cci_port, a9.cluster_off_us(), p.cci.is_none()), (None, None, true));
        assert_eq!((p.core_type_of(0).line_bytes, a9.l2_bytes), (32, 512 * 1024));
        assert_eq!(p.cpu_capacity(0), 1024);
        let cost = p.perf_sample.as_ref().expect("seed 003's perf sampling is described");
        assert!(cost.handler_cycles > 0.0 && cost.counted_instructions < 10_000.0);
        assert_eq!(p.tick_us(), 10_000);
    }

    #[test]
    fn tc2_is_two_a15s_and_three_a7s_at_hz_100_with_both_power_down_states() {
        let p = Platform::builtin("tc2").unwrap();
        let (a15, a7) = (p.cluster_index("a15").unwrap(), p.cluster_index("a7").unwrap());
        assert_eq!((p.clusters[a15].cpus.clone(), p.clusters[a7].cpus.clone()), (vec![0, 1], vec![2, 3, 4]));
        assert_eq!((p.hz, p.tick_us()), (100, 10_000));
        // capacity-dmips-mhz 516 x 1000 MHz against 1024 x 1200 MHz: the legacy EAS table's 430
        assert_eq!((p.cpu_capacity(a15), p.cpu_capacity(a7)), (1024, 430));
        assert_eq!(
            (p.clusters[a15].cluster_off_us(), p.clusters[a7].cluster_off_us()),
            (Some((700, 2000)), Some((500, 2500)))
        );
        assert!(p.clusters.iter().all(|c| c.cluster_off_wakeup_energy_uj > 0.0));
        assert_eq!((p.clusters[a15].cci_port, p.clusters[a7].cci_port), (Some(3), Some(4)));
        assert_eq!((p.clusters[a15].max_khz(), p.clusters[a7].max_khz()), (1_200_000, 1_000_000));
        assert!(p.energy_model_table(a15).is_some() && p.energy_model_table(a7).is_some());
        // the legacy EAS cluster busy power, one value per OPP
        assert_eq!((p.clusters[a15].active_mw_at(7), p.clusters[a7].active_mw_at(0)), (2845.0, 425.0));
        let text = crate::builtin::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "tc2").unwrap().1;
        let e = Platform::from_toml("x.toml", &text.replacen("2139.0, 2845.0]", "2139.0]", 1)).unwrap_err();
        assert!(e.contains("'a15'.active_mw: give one value per OPP (8 OPPs, 7 values) or none"), "{e}");
        // a negative wake-up energy is refused
        let e = Platform::from_toml("x.toml", &text.replacen("= 39.0", "= -1.0", 1)).unwrap_err();
        assert!(e.contains("'a15'.cluster_off_wakeup_energy_uj must not be negative"), "{e}");
    }

    #[test]
    fn linsched_2b2l_differs_between_clusters_only_in_the_core_type() {
        let p = Platform::builtin("linsched-2b2l").unwrap();
        let (little, big) = (p.cluster_index("little").unwrap(), p.cluster_index("big").unwrap());
        assert_eq!((p.clusters[little].cpus.clone(), p.clusters[big].cpus.clone()), (vec![0, 1], vec![2, 3]));
        // arch_topology: 512 x 1 GHz and 1024 x 1 GHz, normalised to the largest
        assert_eq!((p.cpu_capacity(little), p.cpu_capacity(big)), (512, 1024));
        let (cl, cb) = (&p.clusters[little], &p.clusters[big]);
        assert_eq!((cl.opps.clone(), cl.l2_bytes), (cb.opps.clone(), cb.l2_bytes));
        let (tl, tb) = (p.core_type_of(little), p.core_type_of(big));
        assert_eq!((tl.cpi_factor, tb.cpi_factor), (2.0, 1.0));
        assert_eq!(
            (tl.l1d_bytes, tl.l1_hit_cycles, tl.l2_hit_cycles),
            (tb.l1d_bytes, tb.l1_hit_cycles, tb.l2_hit_cycles)
        );
        assert!(p.cci.is_none() && p.noise.kernel_wakeup_mean_busy_us == 0 && p.tick_us() == 1000);
    }

    #[test]
    fn the_interconnect_and_cluster_off_are_optional_but_consistent() {
        // a [cci] needs every cluster's port
        let e = broken("cci_port = 3\n", "");
        assert!(e.contains("'little'.cci_port") && e.contains("[cci] section") && e.contains("cci_port = 3"), "{e}");
        // a port without a [cci]
        let text = exynos_text();
        let start = text.find("[cci]").unwrap();
        let end = start + text[start..].find("[dram]").unwrap();
        let no_cci = format!("{}{}", &text[..start], &text[end..]);
        let e = Platform::from_toml("x.toml", &no_cci).unwrap_err();
        assert!(e.contains("S3 given but the platform has no [cci] section"), "{e}");
        // ... a port's tracker size without it
        let no_ports = no_cci.replace("cci_port = 3\n", "").replace("cci_port = 4\n", "");
        let e = Platform::from_toml("x.toml", &no_ports).unwrap_err();
        assert!(e.contains("'little'.read_tracker_entries") && e.contains("no [cci] section"), "{e}");
        // ... and with the ports and their trackers gone too, the platform loads without a CCI
        let no_trackers = no_ports.replace("read_tracker_entries = 3\n", "").replace("read_tracker_entries = 4\n", "");
        let p = Platform::from_toml("x.toml", &no_trackers).unwrap();
        assert!(p.cci.is_none() && p.clusters.iter().all(|c| c.cci_port.is_none()));
        let e = broken("cci_port = 4", "cci_port = 3");
        assert!(e.contains("port S3 is used twice"), "{e}");
        let e = broken("read_tracker_entries = 3", "read_tracker_entries = 0");
        assert!(e.contains("'little'.read_tracker_entries: must be at least 1"), "{e}");
        // a power-down state needs both numbers
        let e = broken("cluster_off_exit_latency_us = 700\n", "");
        assert!(e.contains("'little'") && e.contains("both cluster_off_exit_latency_us"), "{e}");
        // the perf sample cost is checked when given
        let with_cost =
            |cost: &str| Platform::from_toml("x.toml", &format!("{}\n[perf_sample]\n{cost}", exynos_text()));
        let lines = "handler_data_lines = 34.0\nhandler_code_lines = 192.0\nhandler_tlb_entries = 6.0\n";
        let cost =
            |cycles: &str| with_cost(&format!("handler_cycles = {cycles}\n{lines}counted_instructions = 1000.0"));
        assert!(cost("1400.0").unwrap().perf_sample.is_some());
        let e = cost("0.0").unwrap_err();
        assert!(e.contains("perf_sample.handler_cycles must be a positive number"), "{e}");
        let e =
            with_cost(&format!("handler_cycles = 1400.0\n{lines}code_cold_share = 1.5\ncounted_instructions = 1.0"))
                .unwrap_err();
        assert!(e.contains("code_cold_share must be within 0..=1"), "{e}");
    }

    #[test]
    fn unknown_builtin_names_the_known_ones() {
        let e = Platform::builtin("tc3").unwrap_err();
        assert!(e.contains("exynos5422"), "{e}");
    }

    #[test]
    fn a_core_power_down_state_needs_both_figures() {
        let p = Platform::builtin("exynos5433").unwrap();
        let (a53, a57) = (&p.clusters[0], &p.clusters[1]);
        assert_eq!((a53.core_off_us(), a57.core_off_us()), (Some((20, 750)), Some((30, 2000))));
        assert_eq!((a53.cluster_off_us(), a57.cluster_off_us()), (None, Some((300, 3000))));
        let text = BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5433").unwrap().1;
        let e = Platform::from_toml("x.toml", &text.replacen("core_off_target_residency_us = 750", "", 1)).unwrap_err();
        assert!(e.contains("'little': give both core_off_exit_latency_us and core_off_target_residency_us"), "{e}");
    }

    /// Issue 34, class 2: every float of a platform file finite and within a physical range,
    /// named with its unit.
    #[test]
    fn temperatures_caps_and_powers_have_physical_ranges_with_units() {
        for v in ["nan", "1e308", "-300.0", "inf"] {
            let e = broken("ambient_c = 35.0", &format!("ambient_c = {v}"));
            assert!(e.contains("thermal.ambient_c must be within -55 °C to 125 °C"), "{e}");
        }
        let e = broken("temp_c = 70.0", "temp_c = nan");
        assert!(e.contains("thermal.trips[0].temp_c must be within"), "{e}");
        let e = broken("big = 1800000", "big = 0");
        assert!(e.contains("caps_khz.big: 0 kHz is no cap; give a positive frequency in kHz"), "{e}");
        let e = broken("leakage_mw = 75.0", "leakage_mw = 1e12");
        assert!(e.contains("leakage_mw must be within 0 mW to 100000 mW, got 1000000000000"), "{e}");
    }

    /// Issue 34, class 9: a typo in [hmp] is refused when the platform loads, whatever the
    /// scheduler.
    #[test]
    fn hmp_typos_are_refused_when_the_platform_loads() {
        let text = exynos_text().replacen("[hmp]\n", "[hmp]\nup_treshold = 700\n", 1);
        let e = Platform::from_toml("p.toml", &text).unwrap_err();
        assert!(e.starts_with("p.toml: [hmp]: hmp: unknown tunable 'up_treshold'"), "{e}");
    }
}
