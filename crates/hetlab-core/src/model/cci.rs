//! The CCI-400 cache-coherent interconnect: a miss of one cluster snoops the other clusters
//! while the DRAM read starts speculatively, and each snoop is served at the *snooped*
//! cluster's clock; a speculative fetch that returns before the snoop response is either kept
//! or discarded and retried after it (CCI-400 TRM, DDI 0470D §2.3).
//!
//! Each slave port's read transaction tracker holds an entry per read in flight, from the
//! request handshake until the last data beat, snoop and retry included. The port's PMU counts
//! the read requests (si_rrq_hs_any, event 0x00), the cycles a request waits because every entry
//! is taken (si_rrq_stall_tt_full, 0x09: the TRM's only read-request stall event of both
//! revisions; Table 2.2 of DDI 0470D, Linux drivers/perf/arm-cci.c) and the retried fetches
//! (mi_retry_speculative_fetch). The requests come from independent sources: each running
//! thread (one slot for a dependent chain, more for independent misses and prefetch streams)
//! and each CPU's kernel housekeeping, which reads back what the L2 lost of its code and data
//! since its last wake-up. Write-backs and evictions use the write channel and its own tracker
//! (events 0x0C-0x13), not this one.
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

/// Reads per µs one CPU's kernel housekeeping issues on its cluster's port, averaged over time:
/// every `interval_us` a wake-up touches `footprint_lines` of code and data, and reads back those
/// the cluster's L2 (`l2_lines`) lost since the previous one to `refills_per_us` other lines
/// (random replacement: each refill evicts a given line with probability 1 / `l2_lines`).
pub fn kernel_reads_per_us(footprint_lines: f64, interval_us: f64, l2_lines: f64, refills_per_us: f64) -> f64 {
    if footprint_lines <= 0.0 || interval_us <= 0.0 || l2_lines <= 0.0 {
        return 0.0;
    }
    let lost = 1.0 - (-refills_per_us.max(0.0) * interval_us / l2_lines).exp();
    footprint_lines * lost / interval_us
}

/// Read request slots of one source on a port: `slots` that each hold a tracker entry a share
/// `busy` of the time while the source is present, which it is a share `present` of the time (1
/// for a running thread; a CPU's kernel housekeeping comes and goes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestSlots {
    pub slots: u32,
    pub busy: f64,
    pub present: f64,
}

/// Share of time a read request waits for one of `entries` tracker entries, when the reads in
/// flight are the busy slots of independent `sources` (a source's count is binomial while it is
/// present). A request waits while more than `entries` want one. The sources' occupancy is taken
/// as it would be with entries to spare: waits are rare where the counter is read (the seed
/// paper's thresholds are 10^-2 and 2·10^-4 stall cycles per read), so they do not slow the
/// sources. Never above 0 while the slots fit the tracker: a lone dependent chain cannot fill it.
pub fn tracker_wait_probability(entries: u32, sources: &[RequestSlots]) -> f64 {
    if sources.iter().map(|s| s.slots as u64).sum::<u64>() <= entries as u64 {
        return 0.0;
    }
    // dist[k]: probability of k reads in flight, the last bucket "more than `entries`".
    let cap = entries as usize + 1;
    let mut dist = vec![0.0; cap + 1];
    dist[0] = 1.0;
    let mut next = vec![0.0; cap + 1];
    let mut own = vec![0.0; cap + 1];
    for s in sources.iter().filter(|s| s.slots > 0 && s.busy > 0.0 && s.present > 0.0) {
        source_distribution(s, &mut own);
        next.iter_mut().for_each(|x| *x = 0.0);
        for (i, &a) in dist.iter().enumerate().filter(|(_, &a)| a > 0.0) {
            for (j, &b) in own.iter().enumerate() {
                next[(i + j).min(cap)] += a * b;
            }
        }
        std::mem::swap(&mut dist, &mut next);
    }
    dist[cap]
}

/// The count of `s`'s busy slots, its last bucket "at least `own.len() - 1`".
fn source_distribution(s: &RequestSlots, own: &mut [f64]) {
    let cap = own.len() - 1;
    own.iter_mut().for_each(|x| *x = 0.0);
    let (n, p, present) = (s.slots as usize, s.busy.min(1.0), s.present.min(1.0));
    if p >= 1.0 {
        own[n.min(cap)] = present;
    } else {
        // binomial terms by their ratio, the tail lumped into the last bucket
        let mut term = (1.0 - p).powi(n as i32);
        let mut below = 0.0;
        for (k, slot) in own.iter_mut().enumerate().take(n.min(cap)) {
            *slot = present * term;
            below += term;
            term *= (n - k) as f64 / (k + 1) as f64 * p / (1.0 - p);
        }
        own[n.min(cap)] = present * if n < cap { term } else { (1.0 - below).max(0.0) };
    }
    own[0] += 1.0 - present;
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
    /// The request sources, gathered while rates are set.
    sources: Vec<RequestSlots>,
    /// The last solves' inputs and their wait shares (at most `SOLVED_TRACKERS`, the oldest
    /// replaced): the hardware part re-solves its rates many times with readers it had before
    /// (the same few compositions of threads recur), so an identical input reuses the answer
    /// (the key is exact, so the result is bit-for-bit the solve's).
    solved: Vec<SolvedTracker>,
    /// The slot of `solved` the next new solve replaces.
    next_solved: usize,
}

/// How many tracker solves a port keeps.
const SOLVED_TRACKERS: usize = 16;

/// A port's reads, stalls and retries per µs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PortRates {
    pub read_per_us: f64,
    pub stall_per_us: f64,
    pub retry_per_us: f64,
}

/// One tracker solve: its entries, its sources and the wait share they gave.
#[derive(Debug, Clone, Default)]
struct SolvedTracker {
    entries: u32,
    sources: Vec<RequestSlots>,
    wait: f64,
}

impl CciPort {
    pub fn new(port: u8) -> CciPort {
        CciPort { port, ..Default::default() }
    }

    /// Reads the port's cluster issues now, per µs: each snoops every other powered cluster.
    pub fn read_rate_per_us(&self) -> f64 {
        self.read_per_us
    }

    /// Its reads, stalls and retries per µs now (what `set_rates` sets again).
    pub fn rates(&self) -> PortRates {
        PortRates { read_per_us: self.read_per_us, stall_per_us: self.stall_per_us, retry_per_us: self.retry_per_us }
    }

    /// Rates a solution gave before (`rates`), set again where the same solution recurs; the
    /// sources behind them are not kept, so the next rates start with `clear_rates`.
    pub fn set_rates(&mut self, rates: PortRates) {
        self.read_per_us = rates.read_per_us;
        self.stall_per_us = rates.stall_per_us;
        self.retry_per_us = rates.retry_per_us;
    }

    /// Starts a new set of rates (every reader is added again).
    pub fn clear_rates(&mut self) {
        self.read_per_us = 0.0;
        self.retry_per_us = 0.0;
        self.sources.clear();
    }

    /// A thread issuing `reads_per_us` reads that each hold a tracker entry `hold_ns`, with at
    /// most `slots` of them in flight; `retries_per_us` of them are speculative fetches
    /// discarded and retried.
    pub fn add_reader(&mut self, reads_per_us: f64, hold_ns: f64, slots: u32, retries_per_us: f64) {
        if reads_per_us <= 0.0 || slots == 0 {
            return; // a thread that never misses offers no requests
        }
        self.read_per_us += reads_per_us;
        self.retry_per_us += retries_per_us;
        // Little's law: reads in flight = arrival rate x time each one holds a tracker entry.
        let busy = (reads_per_us * 1e-3 * hold_ns / slots as f64).min(1.0);
        self.sources.push(RequestSlots { slots, busy, present: 1.0 });
    }

    /// A CPU's kernel housekeeping: present a share `duty` of the time, issuing `reads_per_us`
    /// reads averaged over all of it (so `reads_per_us / duty` while present), each holding an
    /// entry `hold_ns`, at most `slots` in flight; `retries_per_us` of them retried.
    pub fn add_kernel_reader(&mut self, reads_per_us: f64, hold_ns: f64, slots: u32, duty: f64, retries_per_us: f64) {
        if reads_per_us <= 0.0 || slots == 0 || duty <= 0.0 {
            return;
        }
        self.read_per_us += reads_per_us;
        self.retry_per_us += retries_per_us;
        let busy = (reads_per_us / duty * 1e-3 * hold_ns / slots as f64).min(1.0);
        self.sources.push(RequestSlots { slots, busy, present: duty.min(1.0) });
    }

    /// Stall cycles from the sources added: the share of time a request waits for one of
    /// `tracker_entries` ([`tracker_wait_probability`]), counted at the CCI clock.
    pub fn finish_rates(&mut self, tracker_entries: u32, cci_clock_khz: u32) {
        let cci_mhz = cci_clock_khz as f64 / 1000.0;
        self.stall_per_us = self.wait_probability(tracker_entries) * cci_mhz;
    }

    /// [`tracker_wait_probability`] of the current sources, solved again only when the entries
    /// or a source differ from every kept solve's.
    fn wait_probability(&mut self, tracker_entries: u32) -> f64 {
        let sources = &self.sources;
        if let Some(solved) = self.solved.iter().find(|s| s.entries == tracker_entries && s.sources == *sources) {
            return solved.wait;
        }
        let wait = tracker_wait_probability(tracker_entries, sources);
        if self.solved.len() < SOLVED_TRACKERS {
            self.solved.push(SolvedTracker::default());
        }
        let slot = &mut self.solved[self.next_solved % SOLVED_TRACKERS];
        self.next_solved = (self.next_solved + 1) % SOLVED_TRACKERS;
        (slot.entries, slot.wait) = (tracker_entries, wait);
        slot.sources.clone_from(sources);
        wait
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

    fn slots(slots: u32, busy: f64, present: f64) -> RequestSlots {
        RequestSlots { slots, busy, present }
    }

    #[test]
    fn no_source_waits_while_the_sources_fit_the_tracker() {
        // a lone dependent chain at any occupancy, four slots on four entries
        for busy in [0.1, 0.9, 1.0] {
            assert_eq!(tracker_wait_probability(4, &[slots(1, busy, 1.0)]), 0.0);
            assert_eq!(tracker_wait_probability(4, &[slots(3, busy, 1.0), slots(1, busy, 0.5)]), 0.0);
        }
        assert_eq!(tracker_wait_probability(4, &[slots(12, 0.0, 1.0)]), 0.0);
        assert_eq!(tracker_wait_probability(4, &[slots(12, 1.0, 1.0)]), 1.0);
        assert_eq!(tracker_wait_probability(2, &[]), 0.0);
    }

    #[test]
    fn waiting_is_the_tail_of_the_independent_sources() {
        // two single slots busy half the time, one entry: both busy a quarter of the time
        assert!((tracker_wait_probability(1, &[slots(1, 0.5, 1.0), slots(1, 0.5, 1.0)]) - 0.25).abs() < 1e-12);
        // Binomial(3, 1/2) on two entries: all three busy, 1/8
        assert!((tracker_wait_probability(2, &[slots(3, 0.5, 1.0)]) - 0.125).abs() < 1e-12);
        // Binomial(12, 0.3) on four entries: the tail beyond 4 in closed form
        let tail: f64 = (5..=12u32)
            .map(|k| {
                let c: f64 = (0..k).map(|i| (12 - i) as f64 / (i + 1) as f64).product();
                c * 0.3f64.powi(k as i32) * 0.7f64.powi(12 - k as i32)
            })
            .sum();
        assert!((tracker_wait_probability(4, &[slots(12, 0.3, 1.0)]) - tail).abs() < 1e-12);
        // a chase busy 0.9 of the time beside a CPU whose kernel keeps both its slots busy, a
        // tenth of the time: a third read waits 0.9 x 0.1 of the time
        let chase_and_kernel = [slots(1, 0.9, 1.0), slots(2, 1.0, 0.1)];
        assert!((tracker_wait_probability(2, &chase_and_kernel) - 0.09).abs() < 1e-12);
        // longer holds (busier slots) wait more; so does a kernel present more often
        let busier = [slots(1, 0.95, 1.0), slots(2, 0.6, 0.1)];
        let lighter = [slots(1, 0.95, 1.0), slots(2, 0.3, 0.1)];
        assert!(tracker_wait_probability(2, &busier) > tracker_wait_probability(2, &lighter));
        assert!(tracker_wait_probability(2, &[slots(1, 0.9, 1.0), slots(2, 1.0, 0.2)]) > 0.09);
    }

    #[test]
    fn port_counts_reads_stalls_and_retries() {
        let mut port = CciPort::new(3);
        port.clear_rates();
        // 10 reads/µs of 100 ns over two slots: each busy half the time; one entry: both busy a
        // quarter of the time
        port.add_reader(10.0, 100.0, 2, 2.5);
        port.add_reader(0.0, 500.0, 4, 0.0); // a thread with no misses adds nothing
                                             // a kernel burst a tenth of the time: 0.1 reads/µs on average, 1/µs while present,
                                             // busy 1 x 100 ns / 1 slot = 0.1 of the burst
        port.add_kernel_reader(0.1, 100.0, 1, 0.1, 0.0);
        port.finish_rates(1, 500_000);
        port.integrate(1000.0);
        let (reads, stalls) = port.counts();
        assert_eq!(reads, 10_100);
        // P(more than one busy) with the kernel's slot busy 0.01 of the time:
        // 0.25 + P(exactly one of the two) x 0.01 = 0.25 + 0.5 x 0.01
        assert!((stalls as f64 - 500.0 * 1000.0 * (0.25 + 0.5 * 0.01)).abs() <= 1.0, "{stalls}");
        assert_eq!(port.retries(), 2_500);
        let s = port.sample_since(0, (4_000, 50_000));
        assert_eq!((s.port, s.si_rrq_hs_any), (3, 6_100));
    }

    #[test]
    fn a_reused_tracker_solve_is_the_solve_itself() {
        // the same readers again reuse the last answer, readers of an earlier solve reuse its
        // answer, a changed reader or tracker solves anew; every answer is bit-for-bit the
        // direct solve's
        let mut port = CciPort::new(3);
        // (reads per µs, hold ns, slots) of each reader, and the tracker's entries
        type Readers<'a> = &'a [(f64, f64, u32)];
        let cases: [(Readers, u32); 7] = [
            (&[(10.0, 100.0, 2), (4.0, 150.0, 3)], 2),
            (&[(10.0, 100.0, 2), (4.0, 150.0, 3)], 2),
            (&[(10.0, 100.0, 2), (4.0, 150.000001, 3)], 2),
            (&[(10.0, 100.0, 2), (4.0, 150.000001, 3)], 3),
            (&[(10.0, 100.0, 2)], 1),
            (&[(10.0, 100.0, 2), (4.0, 150.0, 3)], 2),
            (&[(10.0, 100.0, 2), (4.0, 150.000001, 3)], 3),
        ];
        for (readers, entries) in cases {
            port.clear_rates();
            for &(reads_per_us, hold_ns, slots) in readers {
                port.add_reader(reads_per_us, hold_ns, slots, 0.0);
            }
            port.finish_rates(entries, 1000);
            let direct = tracker_wait_probability(entries, &port.sources);
            assert!(direct > 0.0);
            assert_eq!(port.stall_per_us.to_bits(), direct.to_bits());
        }
    }
}
