//! Cache-line transfers between cores: what a write to a line another core holds costs.
//!
//! Within a cluster the line comes from the other core's L1 through the shared L2 (the L2's
//! duplicate tags find it): the requester pays its own L1 and L2 lookups. Across clusters the
//! request misses the requester's L2, crosses the CCI and snoops the other cluster, which
//! answers at *its* clock (`cci::snoop_latency_ns`): the line moves cluster to cluster without
//! DRAM. Both latencies come from the platform's cache and CCI parameters, so their ratio is
//! the model's answer, not an input.
//!
//! Shared read-modify-write data (`MemProfile::shared_rmw_fraction`): with `n` threads of a
//! task running and updating the same lines in an interleaved way, the line an access finds
//! was last written by another thread with probability (n-1)/n; by a thread of the requester's
//! own cluster with probability same/n, of another cluster cross/n. Each such access is a
//! dependent transfer (the update waits for the line).
//!
//! Data handed between threads (`MemProfile::peer_written_fraction`: a producer writes a
//! block, a consumer reads it — Sandra's inter-core bandwidth test): every such read finds a
//! line another thread wrote, that thread being in the reader's cluster with probability
//! same/(n-1). The reads are independent of each other, so they overlap as the core's misses
//! do (`cache::overlap`); the bandwidth between two cores is then the line size over the
//! transfer latency, times that overlap, until the compute between reads dominates.

use super::cci;
use crate::platform::Platform;

/// Latency of one line transfer into a core, ns: `l1_cycles` and `l2_cycles` are the
/// requester's lookups at `ghz`; `cross` adds the CCI traversal and the snoop of the other
/// cluster (`snoop_ns`, at that cluster's clock).
pub fn transfer_ns(l1_cycles: f64, l2_cycles: f64, ghz: f64, cross: Option<(f64, f64)>) -> f64 {
    let local_ns = (l1_cycles + l2_cycles) / ghz;
    match cross {
        None => local_ns,
        Some((traversal_ns, snoop_ns)) => local_ns + traversal_ns + snoop_ns,
    }
}

/// [`transfer_ns`] on `platform` with both clusters at their top OPPs: a line moved from a core
/// of cluster `from` into another core of cluster `to` (the same cluster: through its L2).
pub fn platform_transfer_ns(platform: &Platform, from: usize, to: usize) -> f64 {
    let core = platform.core_type_of(to);
    let ghz = platform.clusters[to].max_khz() as f64 / 1e6;
    let cross = (from != to).then(|| {
        let snoop_ns = cci::platform_snoop_ns(platform, from, platform.clusters[from].max_khz());
        (cci::traversal_ns(platform), snoop_ns)
    });
    transfer_ns(core.l1_hit_cycles, core.l2_hit_cycles, ghz, cross)
}

/// Transfers per instruction of a thread whose `rmw_refs_per_instr` references update shared
/// lines, while `same` other threads of its task run in its cluster and `cross` in others:
/// (same-cluster, cross-cluster).
pub fn transfers_per_instr(rmw_refs_per_instr: f64, same: usize, cross: usize) -> (f64, f64) {
    let n = (same + cross + 1) as f64;
    (rmw_refs_per_instr * same as f64 / n, rmw_refs_per_instr * cross as f64 / n)
}

/// Transfers per instruction of a thread whose `peer_refs_per_instr` references read lines
/// written by the task's other threads, while `same` of them run in its cluster and `cross` in
/// others: (same-cluster, cross-cluster). With no other thread running the data is its own.
pub fn peer_transfers_per_instr(peer_refs_per_instr: f64, same: usize, cross: usize) -> (f64, f64) {
    let others = (same + cross) as f64;
    if others == 0.0 {
        return (0.0, 0.0);
    }
    (peer_refs_per_instr * same as f64 / others, peer_refs_per_instr * cross as f64 / others)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_a_thread_moves_no_lines() {
        assert_eq!(transfers_per_instr(0.1, 0, 0), (0.0, 0.0));
        // 3 others in the cluster, 4 in the other: 3/8 and 4/8 of the updates move a line.
        let (same, cross) = transfers_per_instr(0.1, 3, 4);
        assert!((same - 0.0375).abs() < 1e-12 && (cross - 0.05).abs() < 1e-12);
    }

    #[test]
    fn handed_over_data_always_comes_from_another_thread() {
        assert_eq!(peer_transfers_per_instr(0.1, 0, 0), (0.0, 0.0));
        // One consumer, its producer in the other cluster: every read crosses.
        assert_eq!(peer_transfers_per_instr(0.1, 0, 1), (0.0, 0.1));
        let (same, cross) = peer_transfers_per_instr(0.1, 3, 4);
        assert!((same - 0.3 / 7.0).abs() < 1e-12 && (cross - 0.4 / 7.0).abs() < 1e-12);
    }

    #[test]
    fn a_cross_cluster_transfer_costs_the_crossing_and_the_remote_snoop() {
        let local = transfer_ns(4.0, 27.0, 2.0, None);
        assert!((local - 15.5).abs() < 1e-12);
        assert!((transfer_ns(4.0, 27.0, 2.0, Some((10.0, 40.0))) - 65.5).abs() < 1e-12);
    }
}
