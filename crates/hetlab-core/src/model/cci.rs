//! The CCI-400 cache-coherent interconnect: a miss of one cluster snoops the other clusters
//! while the DRAM read starts speculatively, and each snoop is served at the *snooped*
//! cluster's clock; a speculative fetch that returns before the snoop response is discarded and
//! retried after it (CCI-400 TRM, DDI 0470D §2.3). Each slave port's read transaction tracker
//! holds an entry per read in flight: the threads on the cluster are a finite set of request
//! sources (a dependent chain has one read in flight, a stream several), and the port's PMU counts
//! the cycles a request waits for an entry (si_rrq_stall_tt_full) beside the reads
//! (si_rrq_hs_any) and the retried fetches (mi_retry_speculative_fetch).
//!
//! A platform without a `[cci]` (an SCU-based MPCore, an abstract model) has none of this: no
//! cluster is snooped by another, an L2 miss goes to the memory controller without the
//! interconnect's traversal, there are no CCI ports and the CCI cycle counter reads zero.

use crate::counters::CciPortSample;
use crate::platform::{Cci, Platform, SpeculativeFetch};

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

/// The part of a snoop's latency that does not follow the snooped cluster's clock, ns; 0
/// without a CCI.
pub fn snoop_fixed_ns(platform: &Platform) -> f64 {
    platform.cci.as_ref().map_or(0.0, |cci| cci.snoop_fixed_ns)
}

/// Latency of a snoop served by a cluster clocked at `khz`, ns: the interconnect's fixed part
/// and the response cycles at the snooped cluster's clock.
pub fn snoop_latency_ns(fixed_ns: f64, response_cycles: f64, khz: u32) -> f64 {
    fixed_ns + response_cycles / (khz as f64 / 1e6)
}

/// Latency of a snoop served by `cluster` of `platform` clocked at `khz`, ns.
pub fn platform_snoop_ns(platform: &Platform, cluster: usize, khz: u32) -> f64 {
    snoop_latency_ns(snoop_fixed_ns(platform), snoop_response_cycles(platform, cluster), khz)
}

/// An L2 miss with DRAM idle and no snoop outlasting it, ns: the traversal and DRAM's idle latency.
pub fn unloaded_miss_ns(platform: &Platform) -> f64 {
    traversal_ns(platform) + platform.dram.idle_latency_ns
}

/// An L2 miss as the requesting core sees it beyond its L2 lookup.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Miss {
    pub latency_ns: f64,
    /// The speculative fetch was discarded and the line read from DRAM a second time.
    pub retried: bool,
}

/// The miss when DRAM answers in `dram_ns` and the snoop of the other clusters in `snoop_ns`
/// (0 when no other cluster is powered): while the snoop answers first the speculative fetch
/// wins; once the snoop is slower, `mode` decides.
pub fn miss(mode: SpeculativeFetch, cci_latency_ns: f64, dram_ns: f64, snoop_ns: f64) -> Miss {
    let retried = mode == SpeculativeFetch::Retry && snoop_ns > dram_ns;
    let beyond_ns = if retried { snoop_ns + dram_ns } else { dram_ns.max(snoop_ns) };
    Miss { latency_ns: cci_latency_ns + beyond_ns, retried }
}

/// Sources beyond the tracker's entries that [`tracker_wait_probability`] tells apart.
const MAX_WAITING_SOURCES: u32 = 256;

/// Share of time a read request waits for one of `entries` tracker entries, when `sources`
/// request sources (misses a thread can have in flight) each alternate between thinking and
/// holding an entry, and together keep `busy_entries` entries busy on average (reads per ns x
/// hold ns). A closed finite-source queue (the machine-repairman model with `entries` servers):
/// the number k of sources requesting has p(k+1)/p(k) = (sources-k)·r / min(k+1, entries) with
/// r = hold / think, and r is found from the busy entries observed. Never above 0 while
/// `sources <= entries`: a lone dependent chain cannot fill a tracker.
pub fn tracker_wait_probability(entries: u32, sources: u32, busy_entries: f64) -> f64 {
    // Many more sources than entries behave as infinitely many (the waiting line's tail is
    // geometric while the entries keep up): the solve's cost stays bounded however many
    // threads a cluster runs.
    let sources = sources.min(entries.saturating_add(MAX_WAITING_SOURCES));
    if sources <= entries || busy_entries <= 0.0 {
        return 0.0;
    }
    if busy_entries >= entries as f64 {
        return 1.0; // every source always requesting
    }
    // ln p(k) - ln p(0) for a given ln r, k = 0..=sources.
    let ln_p = move |ln_r: f64| {
        (0..=sources).scan(0.0, move |ln_p, k| {
            if k > 0 {
                *ln_p += ((sources - k + 1) as f64).ln() + ln_r - (k.min(entries) as f64).ln();
            }
            Some((k, *ln_p))
        })
    };
    // (mean busy entries, P(a request waits)) for a given ln r.
    let state = |ln_r: f64| {
        let top = ln_p(ln_r).map(|(_, l)| l).fold(f64::MIN, f64::max);
        let (mut total, mut busy, mut waiting) = (0.0, 0.0, 0.0);
        for (k, l) in ln_p(ln_r) {
            let p = (l - top).exp();
            total += p;
            busy += p * k.min(entries) as f64;
            if k > entries {
                waiting += p;
            }
        }
        (busy / total, waiting / total)
    };
    // Mean busy entries rise monotonically with r: bisect on ln r.
    let (mut lo, mut hi) = (-60.0, 60.0);
    while hi - lo > 1e-9 {
        let mid = 0.5 * (lo + hi);
        if state(mid).0 < busy_entries {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    state(0.5 * (lo + hi)).1
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
    retries: f64,
    read_per_us: f64,
    stall_per_us: f64,
    retry_per_us: f64,
    /// Reads in flight (Little's law) and request sources, accumulated while rates are set.
    occupancy: f64,
    sources: u32,
}

impl CciPort {
    pub fn new(port: u8) -> CciPort {
        CciPort { port, ..Default::default() }
    }

    /// Reads the port's cluster issues now, per µs: each snoops every other powered cluster.
    pub fn read_rate_per_us(&self) -> f64 {
        self.read_per_us
    }

    /// Starts a new set of rates (every reader is added again).
    pub fn clear_rates(&mut self) {
        self.read_per_us = 0.0;
        self.retry_per_us = 0.0;
        self.occupancy = 0.0;
        self.sources = 0;
    }

    /// A thread issuing `reads_per_us` reads that each hold a tracker entry `hold_ns`, with at
    /// most `sources` of them in flight; `retries_per_us` of them are speculative fetches
    /// discarded and retried.
    pub fn add_reader(&mut self, reads_per_us: f64, hold_ns: f64, sources: u32, retries_per_us: f64) {
        if reads_per_us <= 0.0 {
            return; // a thread that never misses offers no requests
        }
        self.read_per_us += reads_per_us;
        self.retry_per_us += retries_per_us;
        // Little's law: reads in flight = arrival rate x time each one holds a tracker entry.
        self.occupancy += reads_per_us * 1e-3 * hold_ns;
        self.sources += sources;
    }

    /// Stall cycles from the readers added: the share of time a request waits for an entry
    /// ([`tracker_wait_probability`]), counted at the CCI clock.
    pub fn finish_rates(&mut self, tracker_entries: u32, cci_clock_khz: u32) {
        let cci_mhz = cci_clock_khz as f64 / 1000.0;
        self.stall_per_us = tracker_wait_probability(tracker_entries, self.sources, self.occupancy) * cci_mhz;
    }

    /// Counts `dt_us` at the current rates.
    pub fn integrate(&mut self, dt_us: f64) {
        self.reads += self.read_per_us * dt_us;
        self.stalls += self.stall_per_us * dt_us;
        self.retries += self.retry_per_us * dt_us;
    }

    /// (si_rrq_hs_any, si_rrq_stall_tt_full) so far (truncated; through i64 as in
    /// [`cycles_at`]).
    pub fn counts(&self) -> (u64, u64) {
        (self.reads as i64 as u64, self.stalls as i64 as u64)
    }

    /// Speculative fetches of this port's reads discarded and retried so far (the CCI counts
    /// them at its master interface to memory: mi_retry_speculative_fetch).
    pub fn retries(&self) -> u64 {
        self.retries as i64 as u64
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
    fn a_late_snoop_costs_a_retried_fetch_or_only_its_excess() {
        use SpeculativeFetch::{Overlap, Retry};
        // the snoop answers first: the speculative fetch wins either way
        assert_eq!(miss(Retry, 10.0, 145.0, 100.0), Miss { latency_ns: 155.0, retried: false });
        assert_eq!(miss(Overlap, 10.0, 145.0, 100.0), Miss { latency_ns: 155.0, retried: false });
        assert_eq!(miss(Retry, 10.0, 145.0, 0.0), Miss { latency_ns: 155.0, retried: false });
        // the snoop outlasts DRAM: a step (snoop + DRAM) with retry, a kink (the snoop) without
        assert_eq!(miss(Retry, 10.0, 145.0, 146.0), Miss { latency_ns: 301.0, retried: true });
        assert_eq!(miss(Overlap, 10.0, 145.0, 300.0), Miss { latency_ns: 310.0, retried: false });
    }

    #[test]
    fn snoops_are_served_at_the_snooped_clusters_clock() {
        let p = Platform::builtin("exynos5422").unwrap();
        let big = p.cluster_index("big").unwrap();
        // 3.49 A15 L2 lookups of 27 cycles = 94.23 cycles: 471 ns at 200 MHz, 47 ns at 2 GHz
        let cycles = snoop_response_cycles(&p, big);
        assert!((cycles - 94.23).abs() < 1e-9);
        assert!((snoop_latency_ns(0.0, cycles, 200_000) - 471.15).abs() < 1e-9);
        assert!((snoop_latency_ns(0.0, cycles, 2_000_000) - 47.115).abs() < 1e-9);
        // a fixed part adds at every clock
        assert!((snoop_latency_ns(40.0, cycles, 2_000_000) - 87.115).abs() < 1e-9);
    }

    #[test]
    fn no_source_waits_while_the_sources_fit_the_tracker() {
        // a lone dependent chain at any occupancy, four sources on four entries
        for busy in [0.1, 0.9, 0.999] {
            assert_eq!(tracker_wait_probability(4, 1, busy), 0.0);
            assert_eq!(tracker_wait_probability(4, 4, busy), 0.0);
        }
        assert_eq!(tracker_wait_probability(4, 12, 0.0), 0.0);
        assert_eq!(tracker_wait_probability(4, 12, 4.0), 1.0);
    }

    #[test]
    fn finite_source_waiting_matches_the_closed_form() {
        // Two sources, one entry: states 0, 1, 2 with p1/p0 = 2r, p2/p1 = r. Busy = (p1+p2)/sum,
        // waiting = p2/sum. With r = 1: p = (1, 2, 2)/5: busy 0.8, waiting 0.4.
        assert!((tracker_wait_probability(1, 2, 0.8) - 0.4).abs() < 1e-6);
        // more of the same load from more sources, or a longer hold, waits more
        let two = tracker_wait_probability(2, 6, 1.0);
        assert!(two > 0.0 && two < tracker_wait_probability(2, 6, 1.5));
        assert!(tracker_wait_probability(2, 3, 1.0) < two);
        // Very many sources are an open queue: one entry is M/M/1, where a request waits while
        // two or more are present, probability rho^2 (0.25 at rho 0.5), whatever the count.
        let open = tracker_wait_probability(1, 1_000_000, 0.5);
        assert!((open - 0.25).abs() < 2e-3, "{open}");
        assert_eq!(open, tracker_wait_probability(1, u32::MAX, 0.5));
    }

    #[test]
    fn port_counts_reads_stalls_and_retries() {
        let mut port = CciPort::new(3);
        port.clear_rates();
        // 10 reads/µs of 80 ns, two sources, one entry: 0.8 busy, waiting 0.4 of the time
        port.add_reader(10.0, 80.0, 2, 2.5);
        port.add_reader(0.0, 500.0, 4, 0.0); // a thread with no misses adds nothing
        port.finish_rates(1, 500_000);
        port.integrate(1000.0);
        let (reads, stalls) = port.counts();
        assert_eq!(reads, 10_000);
        assert!((stalls as f64 - 200_000.0).abs() <= 1.0, "{stalls}");
        assert_eq!(port.retries(), 2_500);
        let s = port.sample_since(0, (4_000, 50_000));
        assert_eq!((s.port, s.si_rrq_hs_any), (3, 6_000));
    }
}
