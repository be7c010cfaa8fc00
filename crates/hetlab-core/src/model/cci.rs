//! The CCI-400 cache-coherent interconnect: a miss of one cluster snoops the other clusters
//! while the DRAM read starts speculatively, and each snoop is served at the *snooped*
//! cluster's clock; each slave port's read transaction tracker stays full longer when misses
//! take longer, which its PMU counts (si_rrq_hs_any, si_rrq_stall_tt_full).
//!
//! A platform without a `[cci]` (an SCU-based MPCore, an abstract model) has none of this: no
//! cluster is snooped by another, an L2 miss goes to the memory controller without the
//! interconnect's traversal, there are no CCI ports and the CCI cycle counter reads zero.

use crate::counters::CciPortSample;
use crate::platform::{Cci, Platform};

/// Snoop response latency of `cluster` when snooped, in that cluster's cycles: the snoop path
/// expressed as a number of that core type's L2 lookups (data/platforms/*.toml, `cci`); 0 on a
/// platform without a CCI (nothing snoops across clusters).
pub fn snoop_response_cycles(platform: &Platform, cluster: usize) -> f64 {
    platform.cci.as_ref().map_or(0.0, |cci| cci.snoop_path_l2_lookups * platform.core_type_of(cluster).l2_hit_cycles)
}

/// Traversal latency of the interconnect added to every L2 miss, ns; 0 without a CCI.
pub fn traversal_ns(platform: &Platform) -> f64 {
    platform.cci.as_ref().map_or(0.0, |cci| cci.latency_ns)
}

/// Latency of a snoop served by a cluster clocked at `khz`, ns.
pub fn snoop_latency_ns(response_cycles: f64, khz: u32) -> f64 {
    response_cycles / (khz as f64 / 1e6)
}

/// Latency of an L2 miss as the requesting core sees it beyond its L2 lookup, ns.
/// The CCI-400 starts the DRAM read speculatively while it snoops the other cluster, so the
/// slower of the two decides; `snoop_ns` is 0 when no other cluster is powered.
pub fn miss_latency_ns(cci_latency_ns: f64, dram_ns: f64, snoop_ns: f64) -> f64 {
    cci_latency_ns + dram_ns.max(snoop_ns)
}

/// Erlang-B blocking probability for `entries` servers offered `load` Erlangs: the share of
/// time a read tracker with that many entries is full when reads arrive at random.
pub fn tracker_full_probability(entries: u32, load: f64) -> f64 {
    let mut b = 1.0;
    for k in 1..=entries {
        b = load * b / (k as f64 + load * b);
    }
    b
}

/// CCI cycle counter at `now_us` (the CCI clock is fixed); 0 without a CCI. Counts stay below
/// 2^63, so the conversion goes through i64 (one instruction; `as u64` from f64 is a branchy
/// sequence).
pub fn cycles_at(now_us: f64, cci: Option<&Cci>) -> u64 {
    cci.map_or(0, |cci| (now_us * cci.clock_khz as f64 / 1000.0 + 0.5) as i64 as u64)
}

/// One slave port: its counters and their current rates.
#[derive(Debug, Clone, Default)]
pub struct CciPort {
    /// Slave interface number (S3, S4, ...).
    pub port: u8,
    reads: f64,
    stalls: f64,
    read_per_us: f64,
    stall_per_us: f64,
    /// Reads in flight (Little's law), accumulated while rates are being set.
    occupancy: f64,
}

impl CciPort {
    pub fn new(port: u8) -> CciPort {
        CciPort { port, ..Default::default() }
    }

    /// Starts a new set of rates (every reader is added again).
    pub fn clear_rates(&mut self) {
        self.read_per_us = 0.0;
        self.occupancy = 0.0;
    }

    /// A reader issuing `reads_per_us` misses that each hold a tracker entry `miss_ns`.
    pub fn add_reader(&mut self, reads_per_us: f64, miss_ns: f64) {
        self.read_per_us += reads_per_us;
        // Little's law: reads in flight = arrival rate x time each one holds a tracker entry.
        self.occupancy += reads_per_us * 1e-3 * miss_ns;
    }

    /// Stall cycles from the readers added: the tracker is full with the Erlang-B probability
    /// of its occupancy, counted at the CCI clock.
    pub fn finish_rates(&mut self, tracker_entries: u32, cci_clock_khz: u32) {
        let cci_mhz = cci_clock_khz as f64 / 1000.0;
        let full = if self.occupancy > 0.0 { tracker_full_probability(tracker_entries, self.occupancy) } else { 0.0 };
        self.stall_per_us = full * cci_mhz;
    }

    /// Counts `dt_us` at the current rates.
    pub fn integrate(&mut self, dt_us: f64) {
        self.reads += self.read_per_us * dt_us;
        self.stalls += self.stall_per_us * dt_us;
    }

    /// (si_rrq_hs_any, si_rrq_stall_tt_full) so far (truncated; through i64 as in
    /// [`cycles_at`]).
    pub fn counts(&self) -> (u64, u64) {
        (self.reads as i64 as u64, self.stalls as i64 as u64)
    }

    /// The counters since `before` (a previous [`counts`](Self::counts)), as a sample.
    pub fn sample_since(&self, cluster: usize, before: (u64, u64)) -> CciPortSample {
        let (reads, stalls) = self.counts();
        CciPortSample {
            port: self.port,
            cluster,
            si_rrq_hs_any: reads - before.0,
            si_rrq_stall_tt_full: stalls - before.1,
        }
    }

    /// Stall cycles per read over the whole run.
    pub fn congestion(&self) -> f64 {
        if self.reads > 0.0 {
            self.stalls / self.reads
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snoop_overlaps_dram() {
        assert_eq!(miss_latency_ns(10.0, 145.0, 0.0), 155.0);
        assert_eq!(miss_latency_ns(10.0, 145.0, 100.0), 155.0);
        assert_eq!(miss_latency_ns(10.0, 145.0, 300.0), 310.0);
    }

    #[test]
    fn snoops_are_served_at_the_snooped_clusters_clock() {
        let p = Platform::builtin("exynos5422").unwrap();
        let big = p.cluster_index("big").unwrap();
        // 3.49 A15 L2 lookups of 27 cycles = 94.23 cycles: 471 ns at 200 MHz, 47 ns at 2 GHz
        let cycles = snoop_response_cycles(&p, big);
        assert!((cycles - 94.23).abs() < 1e-9);
        assert!((snoop_latency_ns(cycles, 200_000) - 471.15).abs() < 1e-9);
        assert!((snoop_latency_ns(cycles, 2_000_000) - 47.115).abs() < 1e-9);
    }

    #[test]
    fn erlang_b_matches_hand_values() {
        // B(1, a) = a / (1 + a)
        assert!((tracker_full_probability(1, 1.0) - 0.5).abs() < 1e-12);
        // B(2, 1) = (1/2) / (1 + 1 + 1/2) = 0.2
        assert!((tracker_full_probability(2, 1.0) - 0.2).abs() < 1e-12);
        assert!(tracker_full_probability(4, 0.9) < tracker_full_probability(4, 0.99));
    }

    #[test]
    fn port_counts_follow_littles_law() {
        let mut port = CciPort::new(3);
        port.clear_rates();
        // 10 reads/µs of 100 ns each: 1 read in flight; one entry: full half the time
        port.add_reader(10.0, 100.0);
        port.finish_rates(1, 500_000);
        port.integrate(1000.0);
        assert_eq!(port.counts(), (10_000, 250_000));
        assert_eq!(port.congestion(), 25.0);
        let s = port.sample_since(0, (4_000, 50_000));
        assert_eq!((s.port, s.si_rrq_hs_any, s.si_rrq_stall_tt_full), (3, 6_000, 200_000));
    }
}
