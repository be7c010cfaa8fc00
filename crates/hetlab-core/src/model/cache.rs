//! Caches: miss ratios of a phase's working set and access pattern against the L1 and L2 sizes
//! (random replacement, a stack-distance step curve over access components), and the time per
//! instruction those misses cost given the latency of a miss beyond the L2 (`model::cci`).

use super::replacement::{line_miss_ratio, resident};
use super::tlb;
use crate::platform::{CacheSharing, CoreType};
use crate::workload::{MemProfile, Pattern};

/// Per-reference miss ratios of one phase on one core type.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MissRatios {
    /// Demand misses of L1 per reference (after prefetching).
    pub l1: f64,
    /// Demand misses of L2 per reference (after prefetching): these wait for DRAM/snoops.
    pub l2: f64,
    /// L2 line refills per reference, prefetched ones included (what l2d_cache_refill counts).
    pub l2_refills: f64,
    /// L1 line fills per reference, prefetched ones included (the lines crossing from L2 to L1).
    pub l1_refills: f64,
    /// Page walks per reference (last-level TLB misses, `model::tlb`). Their descriptor reads
    /// are in the fields above where they reach the L2 (`l1`) or miss it (`l2`).
    pub walks: f64,
    /// Walks per reference whose descriptor the L1 served.
    pub walk_l1_hits: f64,
}

/// Miss ratios of `mem` on `core` with `l2_bytes` of L2 available to it, when `system_share` of
/// each cache (L1D and that L2) holds lines outside the phase's working set (page tables, code,
/// stack, the kernel's: `platform.caches`; `PROGRAM_ALONE` for a cache simulator's view), with
/// the page walks of references beyond the core's TLB reach (`model::tlb`).
///
/// Strides of a power of two between a line and a page touch `stride/line` times fewer lines
/// but also map to that many times fewer cache sets, so the capacity ratio is the array size
/// over the cache size for every pattern (ccbench's 256 B random blocks included).
///
/// A phase with several access components is a stack-distance step curve: components are
/// sorted by working set, and each sees the capacity the smaller (hotter) ones leave.
pub fn miss_ratios(mem: &MemProfile, core: &CoreType, l2_bytes: f64, caches: &CacheSharing) -> MissRatios {
    let mut total = MissRatios::default();
    let usable = 1.0 - caches.system_share;
    let (mut l1_used, mut l2_used) = (0.0, 0.0);
    for a in mem.accesses() {
        let ws = a.working_set_bytes as f64;
        let refs_per_line = match a.pattern {
            Pattern::Random => 1.0,
            Pattern::Sequential | Pattern::Strided => (core.line_bytes as f64 / a.stride_bytes as f64).max(1.0),
        };
        let hidden = match a.pattern {
            Pattern::Random => 0.0,
            Pattern::Sequential | Pattern::Strided => core.prefetch_coverage,
        };
        let ratio = |capacity: f64| if capacity <= 0.0 { f64::INFINITY } else { ws / capacity };
        let l1_lines = line_miss_ratio(ratio(core.l1d_bytes as f64 * usable - l1_used), a.order) / refs_per_line;
        // An L2 miss is also an L1 miss: the L2 sees at most the L1's misses.
        let l2_lines = (line_miss_ratio(ratio(l2_bytes * usable - l2_used), a.order) / refs_per_line).min(l1_lines);
        total.l1 += a.fraction * l1_lines * (1.0 - hidden);
        total.l2 += a.fraction * l2_lines * (1.0 - hidden);
        total.l2_refills += a.fraction * l2_lines;
        total.l1_refills += a.fraction * l1_lines;
        l1_used += ws;
        l2_used += ws;
    }
    if caches.translation && core.tlb_entries > 0 {
        add_page_walks(&mut total, mem, core, l2_bytes * usable, caches);
    }
    total
}

/// Adds the page walks of `mem` to `total` (the data's misses, which set how fast each cache
/// replaces its lines): a walk reads one descriptor line through the L1 (where the core walks
/// through it) and the L2 (`l2_usable_bytes`), missing each as the line's residency under random
/// replacement says (`replacement::resident`). TLB entries are shared like the caches: each component
/// sees those the smaller ones leave.
fn add_page_walks(
    total: &mut MissRatios,
    mem: &MemProfile,
    core: &CoreType,
    l2_usable_bytes: f64,
    caches: &CacheSharing,
) {
    // each line's evictions per reference: the cache's fills spread over its lines (a cache
    // with no room left for the phase keeps nothing)
    let per_line = |fills: f64, bytes: f64| {
        let lines = bytes / core.line_bytes as f64;
        if lines > 0.0 {
            fills / lines
        } else {
            f64::INFINITY
        }
    };
    let l1_evictions = per_line(total.l1_refills, core.l1d_bytes as f64 * (1.0 - caches.system_share));
    let l2_evictions = per_line(total.l2_refills, l2_usable_bytes);
    let mut entries_used = 0.0;
    for a in mem.accesses() {
        let walks = a.fraction * tlb::walks_per_ref(a, caches.page_bytes, core.tlb_entries as f64 - entries_used);
        entries_used += tlb::pages(a, caches.page_bytes);
        let reads_per_line = walks / tlb::descriptor_lines(a, caches.page_bytes, caches.descriptor_bytes, core);
        let l1_hit = if core.page_walk_via_l1 { resident(reads_per_line, l1_evictions) } else { 0.0 };
        let to_l2 = walks * (1.0 - l1_hit);
        let beyond_l2 = to_l2 * (1.0 - resident(reads_per_line, l2_evictions));
        total.walks += walks;
        total.walk_l1_hits += walks * l1_hit;
        total.l1 += to_l2;
        if core.page_walk_via_l1 {
            total.l1_refills += to_l2;
        }
        total.l2 += beyond_l2;
        total.l2_refills += beyond_l2;
    }
}

/// Time per instruction of a phase, split in compute and memory-stall parts, ns.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InstrTime {
    pub compute_ns: f64,
    pub stall_ns: f64,
}

impl InstrTime {
    pub fn total_ns(&self) -> f64 {
        self.compute_ns + self.stall_ns
    }
}

/// t_instr = CPI/f + refs · (L1-hit latency if loads are dependent + (m_L1 · t_L2hit +
/// walks from L1 · t_L1hit + m_L2 · t_miss) / MLP), with MLP = 1 for a dependent chain
/// (design.md); a walk's descriptor reads count in m_L1 and m_L2 where they reach those levels.
pub fn instr_time(mem: &MemProfile, core: &CoreType, freq_ghz: f64, misses: &MissRatios, miss_ns: f64) -> InstrTime {
    InstrCost::new(mem, core, freq_ghz, misses).at(miss_ns)
}

/// Compute cycles per instruction of `mem` on `core`: from its instruction mix when it has
/// one (`code_class`; the engine checks at set-up that the core can run it), else the phase's
/// CPI scaled by the core type's `cpi_factor`.
pub fn compute_cycles(mem: &MemProfile, core: &CoreType) -> f64 {
    match (&mem.mix, &core.code_classes) {
        (None, _) => mem.cpi * core.cpi_factor,
        (Some(mix), Some(classes)) => {
            super::code_class::cpi(classes, mix).expect("mix checked against the core type at set-up")
        }
        (Some(_), None) => panic!("core type '{}' has no code_classes; checked at set-up", core.name),
    }
}

/// Reads a thread of `mem` on `core` can have in flight beyond its L2 — the request sources it
/// offers the interconnect's read tracker (`model::cci`): one for a dependent chain, else the
/// core's overlap of independent misses rounded up, plus the prefetcher's degree when the phase
/// streams (a sequential or strided component).
pub fn requests_in_flight(mem: &MemProfile, core: &CoreType) -> u32 {
    let demand = if mem.dependent_loads { 1 } else { core.mlp.ceil() as u32 };
    let streams = mem.accesses().iter().any(|a| matches!(a.pattern, Pattern::Sequential | Pattern::Strided));
    demand + if streams { core.prefetch_degree } else { 0 }
}

/// How many of `mem`'s misses on `core` overlap: none for a dependent chain, else the core's
/// memory-level parallelism.
pub fn overlap(mem: &MemProfile, core: &CoreType) -> f64 {
    if mem.dependent_loads {
        1.0
    } else {
        core.mlp
    }
}

/// [`instr_time`] with everything but the miss latency worked out, for solvers that try
/// many miss latencies.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstrCost {
    compute_ns: f64,
    refs_per_instr: f64,
    l1_ns: f64,
    l2_hit_ns: f64,
    l2_misses: f64,
    mlp: f64,
}

impl InstrCost {
    pub fn new(mem: &MemProfile, core: &CoreType, freq_ghz: f64, misses: &MissRatios) -> InstrCost {
        let cycle_ns = 1.0 / freq_ghz;
        let l1_ns = if mem.dependent_loads { core.l1_hit_cycles * cycle_ns } else { 0.0 };
        InstrCost {
            compute_ns: compute_cycles(mem, core) * cycle_ns,
            refs_per_instr: mem.refs_per_instr,
            l1_ns,
            // a walk's descriptor read from the L1 waits like a dependent load
            l2_hit_ns: (misses.l1 * core.l2_hit_cycles + misses.walk_l1_hits * core.l1_hit_cycles) * cycle_ns,
            l2_misses: misses.l2,
            mlp: overlap(mem, core),
        }
    }

    /// The time per instruction when an L2 miss takes `miss_ns`.
    pub fn at(&self, miss_ns: f64) -> InstrTime {
        let per_ref_ns = self.l1_ns + (self.l2_hit_ns + self.l2_misses * miss_ns) / self.mlp;
        InstrTime { compute_ns: self.compute_ns, stall_ns: self.refs_per_instr * per_ref_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::workload::{Order, Workload};

    fn chase(size: u64, pattern: &str) -> MemProfile {
        Workload::from_spec(&format!("ccbench:size={size},pattern={pattern}")).unwrap().tasks[0].phases[0].mem
    }

    #[test]
    fn ccbench_l2_steps_sit_at_the_l2_sizes() {
        let p = Platform::builtin("exynos5422").unwrap();
        let a7 = p.core_type_of(0);
        let a15 = p.core_type_of(1);
        let l2 = |size, core, l2| miss_ratios(&chase(size, "random"), core, l2, &CacheSharing::PROGRAM_ALONE).l2;
        assert_eq!(l2(131072, a7, 524288.0), 0.0);
        assert!(l2(262144, a7, 524288.0) > 0.7);
        assert_eq!(l2(524288, a15, 2097152.0), 0.0);
        assert!(l2(1048576, a15, 2097152.0) > 0.7);
        // 8192 elements = 32 KB fits L1 entirely
        assert_eq!(miss_ratios(&chase(8192, "random"), a7, 524288.0, &CacheSharing::PROGRAM_ALONE).l1, 0.0);
        // sequential word-by-word: one line refill per 16 accesses, half hidden on the A7
        let seq = miss_ratios(&chase(4194304, "sequential"), a7, 524288.0, &CacheSharing::PROGRAM_ALONE);
        assert!((seq.l2_refills - line_miss_ratio(32.0, Order::Cyclic) / 16.0).abs() < 1e-12);
        assert!((seq.l2 - seq.l2_refills * 0.5).abs() < 1e-12);
    }

    #[test]
    fn the_systems_share_of_a_cache_makes_a_cache_sized_working_set_miss() {
        let p = Platform::builtin("exynos5422").unwrap();
        let a7 = p.core_type_of(0);
        // 512 KB on the A7's 512 KB L2: no misses when the program has the whole cache
        assert_eq!(miss_ratios(&chase(131072, "random"), a7, 524288.0, &CacheSharing::PROGRAM_ALONE).l2, 0.0);
        // with 11.7 % held by the system, the lap no longer fits: m solves m = 1 - exp(-m x)
        let x = 1.0 / (1.0 - 0.117);
        let m = miss_ratios(
            &chase(131072, "random"),
            a7,
            524288.0,
            &CacheSharing { system_share: 0.117, ..CacheSharing::PROGRAM_ALONE },
        )
        .l2;
        assert!((m - line_miss_ratio(x, Order::Cyclic)).abs() < 1e-12 && m > 0.2, "{m}");
    }

    #[test]
    fn page_walks_beyond_the_tlb_reach_read_descriptors_through_the_caches() {
        let p = Platform::builtin("exynos5422").unwrap();
        let (a7, a15) = (p.core_type_of(0), p.core_type_of(1));
        let on = CacheSharing { translation: true, ..CacheSharing::PROGRAM_ALONE };
        // ramlat over 128 MB: every reference on a random page of 32768
        let mut ramlat = chase(1 << 25, "random");
        ramlat.accesses[0].page_runs = false;
        let off = miss_ratios(&ramlat, a7, 524288.0, &CacheSharing::PROGRAM_ALONE);
        let m = miss_ratios(&ramlat, a7, 524288.0, &on);
        assert_eq!(off.walks, 0.0);
        let walks = line_miss_ratio(32768.0 / 256.0, Order::Cyclic);
        assert!((m.walks - walks).abs() < 1e-12 && walks > 0.99);
        // 2048 descriptor lines, each read walks/2048 times per reference; the A7's L1 (512
        // lines) and L2 (8192) replace each of theirs refills/lines times per reference
        let read = walks / 2048.0;
        let in_l1 = read / (read + off.l1_refills / 512.0);
        let in_l2 = read / (read + off.l2_refills / 8192.0);
        assert!((m.walk_l1_hits - walks * in_l1).abs() < 1e-12, "{m:?}");
        assert!((m.l1 - off.l1 - walks * (1.0 - in_l1)).abs() < 1e-12, "{m:?}");
        assert!((m.l2 - off.l2 - walks * (1.0 - in_l1) * (1.0 - in_l2)).abs() < 1e-12, "{m:?}");
        // the A15 walks from its L2: no descriptor in its L1, none refilled there
        let big = miss_ratios(&ramlat, a15, 2097152.0, &on);
        let big_off = miss_ratios(&ramlat, a15, 2097152.0, &CacheSharing::PROGRAM_ALONE);
        assert_eq!((big.walk_l1_hits, big.l1_refills), (0.0, big_off.l1_refills));
        // a thread left no L2 (its cluster's other working sets take it all): every descriptor
        // read misses it, nothing is undefined
        let none = miss_ratios(&ramlat, a7, 0.0, &on);
        assert!((none.l2 - none.l2_refills).abs() < 1e-12 && none.l2 > 1.0, "{none:?}");
        // within the TLB reach (512 KB = 128 pages on the A7's 256 entries) nothing changes
        let small = chase(1 << 17, "random");
        assert_eq!(
            miss_ratios(&small, a7, 524288.0, &on),
            miss_ratios(&small, a7, 524288.0, &CacheSharing::PROGRAM_ALONE)
        );
    }

    #[test]
    fn a_chain_has_one_read_in_flight_a_stream_adds_its_prefetches() {
        let p = Platform::builtin("exynos5422").unwrap();
        let (a7, a15) = (p.core_type_of(0), p.core_type_of(1));
        assert_eq!(requests_in_flight(&chase(1 << 20, "random"), a7), 1);
        assert_eq!(requests_in_flight(&chase(1 << 20, "random"), a15), 1);
        // a sequential chase: its one demand miss and the prefetcher's lines (A7 1, A15 8)
        assert_eq!(requests_in_flight(&chase(1 << 20, "sequential"), a7), 2);
        assert_eq!(requests_in_flight(&chase(1 << 20, "sequential"), a15), 9);
        // independent misses: the overlap rounded up (A7 mlp 1.2, A15 4)
        let mut independent = chase(1 << 20, "random");
        independent.dependent_loads = false;
        assert_eq!((requests_in_flight(&independent, a7), requests_in_flight(&independent, a15)), (2, 4));
    }

    #[test]
    fn components_form_a_stack_distance_step_curve() {
        let p = Platform::builtin("exynos5422").unwrap();
        let a7 = p.core_type_of(0);
        let text = "name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\ninstructions=10\ncomponents=[{fraction=0.9, working_set_bytes=16384}, {fraction=0.1, working_set_bytes=67108864}]\n";
        let mem = Workload::from_toml("t.toml", text).unwrap().tasks[0].phases[0].mem;
        // the 16 KB component fits L1 and L2; the 64 MB one misses (uniform: 1 - C/W) in both
        let m = miss_ratios(&mem, a7, 524288.0, &CacheSharing::PROGRAM_ALONE);
        let l2_big = 1.0 - (524288.0 - 16384.0) / 67108864.0;
        assert!((m.l2 - 0.1 * l2_big).abs() < 1e-12, "{m:?}");
        // an L1 (32 KB) smaller than the hot component (64 KB) leaves nothing to the cold one
        let hot = Workload::from_toml("t.toml", &text.replace("16384", "65536")).unwrap().tasks[0].phases[0].mem;
        let m = miss_ratios(&hot, a7, 524288.0, &CacheSharing::PROGRAM_ALONE);
        assert!((m.l1 - (0.9 * 0.5 + 0.1)).abs() < 1e-12, "{m:?}");
    }
}
