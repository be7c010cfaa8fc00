//! Address translation: how often a phase's references miss the core's last-level TLB, and
//! where the page walk's descriptor read is served (the L1, the L2 or beyond).
//!
//! A reference whose page is not in the TLB waits for a walk before its own access starts.
//! The walk's upper levels stay in the core's walk caches (the A15's "intermediate table walk
//! caches"); its last-level descriptor is read through the data caches like any line. The
//! descriptors of a working set fill `pages x descriptor_bytes` of memory: a 64-byte line of
//! them maps 16 pages (4-byte short descriptors) or 8 (8-byte LPAE ones), so each descriptor
//! line is read far more often than each data line and mostly stays cached — until the data
//! stream evicts it, which in a random-replacement cache depends only on how fast lines are
//! replaced (`replacement::resident`).

use crate::platform::CoreType;
use crate::workload::{Access, Pattern};

use super::replacement::line_miss_ratio;

/// Pages of `a`'s working set, at least one.
pub fn pages(a: &Access, page_bytes: u64) -> f64 {
    (a.working_set_bytes as f64 / page_bytes as f64).max(1.0)
}

/// Last-level TLB misses (page walks) per reference of `a` on `core` when `entries_left` TLB
/// entries are free for it. A random reference lands on any page; a stream, and a random
/// component that finishes each page before the next (ccbench), changes page once per page's
/// worth of references. The TLB is replaced at random like the caches (`line_miss_ratio`).
pub fn walks_per_ref(a: &Access, page_bytes: u64, entries_left: f64) -> f64 {
    let ratio = if entries_left <= 0.0 { f64::INFINITY } else { pages(a, page_bytes) / entries_left };
    let page_changes_per_ref = match a.pattern {
        Pattern::Random if !a.page_runs => 1.0,
        _ => (a.stride_bytes as f64 / page_bytes as f64).min(1.0),
    };
    page_changes_per_ref * line_miss_ratio(ratio, a.order)
}

/// Lines holding the last-level descriptors of `a`'s pages.
pub fn descriptor_lines(a: &Access, page_bytes: u64, descriptor_bytes: u64, core: &CoreType) -> f64 {
    (pages(a, page_bytes) * descriptor_bytes as f64 / core.line_bytes as f64).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Order, Workload};

    fn access(spec: &str) -> Access {
        Workload::from_spec(spec).unwrap().tasks[0].phases[0].mem.accesses()[0]
    }

    #[test]
    fn a_full_random_chase_walks_on_nearly_every_reference_beyond_the_tlb_reach() {
        let mut chase = access("ccbench:size=1048576,pattern=random"); // 4 MB
        chase.page_runs = false;
        // 1024 pages in a 256-entry TLB: a lap misses m = 1 - exp(-4m)
        let m = line_miss_ratio(4.0, Order::Cyclic);
        assert!((walks_per_ref(&chase, 4096, 256.0) - m).abs() < 1e-12);
        assert!(m > 0.97);
        // within the reach: no walks
        assert_eq!(walks_per_ref(&chase, 4096, 1024.0), 0.0);
    }

    #[test]
    fn ccbench_walks_once_per_page_and_a_stream_once_per_page_of_strides() {
        // ccbench random: 256 B blocks, 16 per page, pages in order
        let chase = access("ccbench:size=1048576,pattern=random");
        assert!(chase.page_runs);
        let m = line_miss_ratio(4.0, Order::Cyclic);
        assert!((walks_per_ref(&chase, 4096, 256.0) - m / 16.0).abs() < 1e-12);
        // word by word: one page change per 1024 references
        let seq = access("ccbench:size=1048576,pattern=sequential");
        assert!((walks_per_ref(&seq, 4096, 256.0) - m / 1024.0).abs() < 1e-12);
    }
}
