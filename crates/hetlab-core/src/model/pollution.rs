//! Cache and TLB pollution between an interrupt handler and the thread it interrupts (the
//! perf counter-overflow handler of `kernel::perf_sampling`): between two interrupts the thread
//! fills `M` lines into its L1 of `L` lines (its misses, `model::cache`); a random replacement
//! leaves each of the handler's `F` lines there with probability `exp(-M/L)`, so the handler
//! refetches `F (1 - exp(-M/L))` lines from the L2, each evicting a line of the thread's, which
//! the thread refetches in turn when that line was one it reuses (its share of the L1 that it
//! re-references). Likewise the handler's TLB entries against the thread's page walks, on a
//! core whose TLB is modelled. A thread whose working set stays in L1 leaves the handler warm
//! and loses nothing to it; one that streams pays twice per line.

use super::cache::miss_ratios;
use crate::platform::{CacheSharing, CoreType, PerfSampleCost};
use crate::workload::{MemProfile, Pattern};

/// Cycles of one perf sample that interrupts a thread of memory profile `mem` on `core` (with
/// `l2_bytes` of L2 and the platform's cache sharing) after `work` instructions of it: the
/// handler's warm run plus the lines and TLB entries the two evict from each other (module
/// docs).
pub fn sample_cycles(
    cost: &PerfSampleCost,
    mem: &MemProfile,
    core: &CoreType,
    l2_bytes: f64,
    caches: &CacheSharing,
    work: f64,
) -> f64 {
    let misses = miss_ratios(mem, core, l2_bytes, caches);
    let refs = work * mem.refs_per_instr;
    let l1_lines = core.l1d_bytes as f64 * (1.0 - caches.system_share) / core.line_bytes as f64;
    let gone = 1.0 - (-refs * misses.l1_refills / l1_lines).exp();
    let data_refills = cost.handler_data_lines * gone;
    // code: refetched and evicting as much of the task's code, which it reuses
    let code_refills = cost.handler_code_lines * cost.code_cold_share.unwrap_or(gone);
    let thread_refills = data_refills * reused_l1_share(mem, core, caches) + code_refills;
    let mut cycles = cost.handler_cycles + (data_refills + code_refills + thread_refills) * core.l2_hit_cycles;
    if core.tlb_entries > 0 && caches.translation {
        // a walk reads its descriptor from the L2 (a short-descriptor walk's last level)
        let tlb_gone = 1.0 - (-refs * misses.walks / f64::from(core.tlb_entries)).exp();
        let handler_walks = cost.handler_tlb_entries * tlb_gone;
        cycles += 2.0 * handler_walks * core.l2_hit_cycles;
    }
    cycles
}

/// Share of the L1 holding lines the thread reuses: its components that fit there (smallest
/// first), random or cyclic; a stream bigger than the L1 leaves nothing it comes back to.
fn reused_l1_share(mem: &MemProfile, core: &CoreType, caches: &CacheSharing) -> f64 {
    let capacity = core.l1d_bytes as f64 * (1.0 - caches.system_share);
    let mut used = 0.0;
    for a in mem.accesses() {
        let ws = a.working_set_bytes as f64;
        let streams = !matches!(a.pattern, Pattern::Random) && ws > capacity;
        if !streams {
            used += ws.min(capacity - used);
        }
    }
    (used / capacity).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::workload::{Access, Order};

    fn mem(components: &[(u64, Pattern)]) -> MemProfile {
        let mut m = MemProfile::single(1.0, 0.4, Access::new(16384, Pattern::Random, 64, Order::Uniform), false, 0.0);
        m.n_accesses = components.len();
        for (slot, &(ws, pattern)) in m.accesses.iter_mut().zip(components) {
            *slot = Access { fraction: 1.0 / components.len() as f64, ..Access::new(ws, pattern, 4, Order::Uniform) };
        }
        m
    }

    #[test]
    fn a_thread_that_streams_pays_for_the_handlers_lines_and_its_own_one_in_l1_does_not() {
        let p = Platform::builtin("vexpress-a9").unwrap();
        let (cost, core) = (p.perf_sample.clone().unwrap(), p.core_type_of(0).clone());
        let cycles = |m: &MemProfile| sample_cycles(&cost, m, &core, 524288.0, &p.caches, 9_000.0);
        // a 4 KB working set in L1: the handler stays warm, no line is refetched
        let in_l1 = cycles(&mem(&[(4096, Pattern::Random)]));
        assert!((in_l1 - cost.handler_cycles).abs() < 1.0, "{in_l1}");
        let lines = cost.handler_data_lines + cost.handler_code_lines;
        // a 4.5 MB stream churns the L1: the handler's lines come back from the L2, and evict
        // nothing the stream reuses
        let stream = cycles(&mem(&[(4718592, Pattern::Sequential)]));
        assert!(stream > cost.handler_cycles + 0.1 * lines * core.l2_hit_cycles, "{stream}");
        // code always cold: every code line refetched and one of the task's evicted
        let cold = PerfSampleCost { code_cold_share: Some(1.0), ..cost.clone() };
        let always = sample_cycles(&cold, &mem(&[(4096, Pattern::Random)]), &core, 524288.0, &p.caches, 9_000.0);
        assert!((always - cost.handler_cycles - 2.0 * cost.handler_code_lines * core.l2_hit_cycles).abs() < 1.0);
        // the stream beside a 16 KB hot set it reuses: the handler's refetches also cost the
        // hot set's lines
        let both = cycles(&mem(&[(16384, Pattern::Random), (4718592, Pattern::Sequential)]));
        assert!(both > cost.handler_cycles && both < 2.0 * stream, "{both} vs {stream}");
        assert!(
            reused_l1_share(&mem(&[(16384, Pattern::Random), (4718592, Pattern::Sequential)]), &core, &p.caches) > 0.5
        );
    }
}
