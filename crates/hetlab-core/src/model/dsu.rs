//! The DynamIQ Shared Unit: the shared L3 behind the cores' private L2s, its snoop filter and
//! its own clock domain (Arm DSU TRM, 100453: the L3, the snoop filter and the SCU are clocked
//! by the DSU's SCLK, separate from each core's clock).
//!
//! - An L2 miss looks the L3 up: a hit costs `l3_hit_cycles` at the DSU's clock; a miss adds
//!   the memory system's latency after the lookup (the request leaves the DSU once the tags say
//!   miss: serial, no speculative DRAM read — ASSUMPTION, the CCI-400's speculative fetch is not
//!   carried over).
//! - The snoop filter tracks which core holds which line, so a miss no other core holds is not
//!   snooped at all: a cluster's clock no longer enters another cluster's private misses (the
//!   CCI-400's broadcast made it, `model::cci`). A line another core holds is forwarded to it:
//!   the filter's cycles at the DSU clock plus the holder's L2 lookup at the holder's clock.
//! - The L3 is treated as exclusive of the L2s (ASSUMPTION: the DSU's L3 fills from L2
//!   evictions): a thread reaches its L2 plus its share of the L3, the share split among all
//!   running threads' working sets as a cluster's L2 is (`engine/hardware/solve.rs`).
//! - The clock: fixed, or voted by the clusters (`voted_khz`).
//! - Power: C·V²·f of the DSU's clocked logic, its leakage, and energy per L3 hit and miss.

use crate::platform::{Dsu, DsuGovernor};

/// The DSU's clock under its governor when the clusters run at `cluster_khz` (`None`: the
/// cluster is powered down and votes nothing), kHz and µV of the chosen operating point.
pub fn clock(dsu: &Dsu, cluster_khz: impl Iterator<Item = Option<u32>>) -> (u32, u32) {
    let [khz, uv] = match dsu.governor {
        DsuGovernor::Fixed => dsu.opp_at_least(dsu.fixed_khz as f64),
        DsuGovernor::Vote => dsu.opp_at_least(voted_khz(&dsu.vote_ratios, cluster_khz)),
    };
    (khz, uv)
}

/// The largest vote: each powered cluster asks `ratios[c]` x its clock (ASSUMPTION as to the
/// form: vendor kernels raise the DSU's minimum from a table keyed by each CPU domain's
/// frequency — a monotone map, taken here as proportional — and the firmware takes the largest
/// request).
pub fn voted_khz(ratios: &[f64], cluster_khz: impl Iterator<Item = Option<u32>>) -> f64 {
    cluster_khz.zip(ratios).filter_map(|(khz, r)| khz.map(|k| k as f64 * r)).fold(0.0, f64::max)
}

/// An L3 hit at a DSU clock of `dsu_khz`, ns.
pub fn l3_hit_ns(dsu: &Dsu, dsu_khz: u32) -> f64 {
    dsu.l3_hit_cycles / (dsu_khz as f64 / 1e6)
}

/// The mean latency of an L2 miss beyond the L2, ns: every miss looks the L3 up (`l3_ns`), a
/// share `1 - l3_hit_share` goes on to the memory system (`beyond_ns`, the DRAM's latency now).
pub fn l2_miss_ns(l3_hit_share: f64, l3_ns: f64, beyond_ns: f64) -> f64 {
    l3_ns + (1.0 - l3_hit_share) * beyond_ns
}

/// A snoop the filter forwards to a core clocked at `holder_khz` whose L2 lookup takes
/// `holder_l2_cycles`, ns: the filter at the DSU's clock, the holder at its own.
pub fn forwarded_snoop_ns(dsu: &Dsu, dsu_khz: u32, holder_l2_cycles: f64, holder_khz: u32) -> f64 {
    dsu.snoop_filter_cycles / (dsu_khz as f64 / 1e6) + holder_l2_cycles / (holder_khz as f64 / 1e6)
}

/// The share of a thread's L2 misses the L3 serves: its L2 refills per reference with its L2
/// alone (`refills_l2`) and with the L2 and its L3 share together (`refills_l3`).
pub fn l3_hit_share(refills_l2: f64, refills_l3: f64) -> f64 {
    if refills_l2 > 0.0 {
        (1.0 - refills_l3 / refills_l2).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The DSU domain's power, mW: its clocked logic at (`khz`, `uv`), its leakage, and the L3's
/// lookups (`hits_per_us`, `misses_per_us`; nJ per µs is mW).
pub fn power_mw(dsu: &Dsu, khz: u32, uv: u32, hits_per_us: f64, misses_per_us: f64) -> f64 {
    let volts = uv as f64 / 1e6;
    let clock_mw = dsu.clock_coefficient * volts * volts * (khz as f64 / 1e3) / 1e3;
    clock_mw + dsu.static_mw + hits_per_us * dsu.l3_hit_nj + misses_per_us * dsu.l3_miss_nj
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dsu(governor: DsuGovernor) -> Dsu {
        Dsu {
            l3_bytes: 3 << 20,
            l3_ways: 12,
            l3_hit_cycles: 30.0,
            snoop_filter_cycles: 10.0,
            governor,
            vote_ratios: vec![0.5, 0.6, 0.6],
            fixed_khz: 1_000_000,
            opps: vec![[500_000, 600_000], [1_000_000, 800_000], [1_500_000, 950_000]],
            clock_coefficient: 100.0,
            static_mw: 5.0,
            l3_hit_nj: 0.2,
            l3_miss_nj: 0.05,
        }
    }

    #[test]
    fn an_l2_miss_worked_by_hand_at_two_dsu_clocks() {
        let d = dsu(DsuGovernor::Fixed);
        // 30 DSU cycles: 60 ns at 500 MHz, 30 ns at 1 GHz
        assert_eq!(l3_hit_ns(&d, 500_000), 60.0);
        assert_eq!(l3_hit_ns(&d, 1_000_000), 30.0);
        // 75 % of misses hit the L3, the rest pay DRAM's 145 ns after the lookup:
        // 60 + 0.25 x 145 = 96.25 ns at 500 MHz; 30 + 36.25 = 66.25 ns at 1 GHz
        assert_eq!(l2_miss_ns(0.75, l3_hit_ns(&d, 500_000), 145.0), 96.25);
        assert_eq!(l2_miss_ns(0.75, l3_hit_ns(&d, 1_000_000), 145.0), 66.25);
        // a forwarded snoop: 10 filter cycles at 500 MHz (20 ns) + 21 L2 cycles at 2.1 GHz (10 ns)
        assert!((forwarded_snoop_ns(&d, 500_000, 21.0, 2_100_000) - 30.0).abs() < 1e-12);
    }

    #[test]
    fn the_clock_is_the_lowest_opp_meeting_the_largest_vote_or_the_fixed_one() {
        let d = dsu(DsuGovernor::Vote);
        // votes 0.5 x 1.8 GHz = 900 MHz and 0.6 x 1 GHz = 600 MHz: the 1 GHz point
        let (khz, uv) = clock(&d, [Some(1_800_000), Some(1_000_000), None].into_iter());
        assert_eq!((khz, uv), (1_000_000, 800_000));
        // the third cluster at 2.4 GHz votes 1.44 GHz: the top point
        assert_eq!(clock(&d, [Some(300_000), None, Some(2_400_000)].into_iter()).0, 1_500_000);
        // everything powered down: the lowest point
        assert_eq!(clock(&d, [None, None, None].into_iter()).0, 500_000);
        // fixed: the clusters do not matter
        let f = dsu(DsuGovernor::Fixed);
        assert_eq!(clock(&f, [Some(300_000), None, Some(2_400_000)].into_iter()), (1_000_000, 800_000));
    }

    #[test]
    fn power_is_the_clock_the_leakage_and_the_lookups() {
        let d = dsu(DsuGovernor::Fixed);
        // 100 µW/MHz/V² x 0.8² V² x 1000 MHz = 64 mW; + 5 mW; + 100 hits/µs x 0.2 nJ + 40 x 0.05
        assert!((power_mw(&d, 1_000_000, 800_000, 100.0, 40.0) - (64.0 + 5.0 + 20.0 + 2.0)).abs() < 1e-9);
        assert_eq!(l3_hit_share(0.2, 0.05), 0.75);
        assert_eq!(l3_hit_share(0.0, 0.0), 0.0);
    }
}
