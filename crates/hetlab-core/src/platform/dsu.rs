//! The `[dsu]` section: a DynamIQ Shared Unit (Arm DSU / DSU-110) between the cores' private L2s
//! and the memory system — its shared L3, its snoop filter, its own clock and voltage domain
//! with the rule that sets its clock from the CPU clusters' votes, and its power parameters.
//! `model::dsu` holds what these numbers do; the engine applies them in `engine/hardware`.
//!
//! A platform has a `[dsu]` or a `[cci]` (a DynamIQ SoC or a big.LITTLE one), never both.

use serde::Deserialize;

/// How the DSU's clock is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DsuGovernor {
    /// The vendors' rule (ASSUMPTION as to its form, `model::dsu::voted_khz`): each powered
    /// cluster asks `vote_ratios[c]` x its clock, the DSU runs at the lowest OPP that meets the
    /// largest ask.
    Vote,
    /// Held at `fixed_khz` whatever the CPUs do (DSU DVFS off).
    Fixed,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dsu {
    /// Size of the shared L3, bytes.
    pub l3_bytes: u64,
    /// Its associativity (reported; the model's replacement is random, `model::replacement`).
    pub l3_ways: u32,
    /// A load that misses the core's L2 and hits the L3: DSU cycles from the L2's request to the
    /// data back at the L2.
    pub l3_hit_cycles: f64,
    /// A snoop the snoop filter directs to the core that holds the line: DSU cycles of the
    /// filter's lookup and the forwarding (the holder's L2 lookup is added at its own clock).
    pub snoop_filter_cycles: f64,
    pub governor: DsuGovernor,
    /// Per cluster, in cluster order: the DSU kHz asked per kHz of the cluster's clock.
    pub vote_ratios: Vec<f64>,
    /// The clock under `governor = "fixed"`, kHz: one of `opps`.
    pub fixed_khz: u32,
    /// The DSU domain's operating points, [kHz, µV], ascending.
    pub opps: Vec<[u32; 2]>,
    /// The DSU's clocked logic (L3 and snoop-filter arrays' clock tree, the interconnect's
    /// pipeline): C of C·V²·f, µW/MHz/V² as a DT's `dynamic-power-coefficient`.
    pub clock_coefficient: f64,
    /// Leakage of the DSU domain while powered, mW.
    pub static_mw: f64,
    /// Energy of one L3 lookup that hits (tag and data arrays), nJ.
    pub l3_hit_nj: f64,
    /// Energy of one L3 lookup that misses (tag arrays and the request onwards), nJ.
    pub l3_miss_nj: f64,
}

/// Most clock ratio a cluster may vote (ASSUMPTION: a DSU clocked above twice a cluster's clock
/// is not a design anyone ships; the bound catches a ratio typed in % instead).
pub const MAX_VOTE_RATIO: f64 = 2.0;

impl Dsu {
    /// The lowest operating point at or above `khz` (the top one if none is).
    pub fn opp_at_least(&self, khz: f64) -> [u32; 2] {
        *self.opps.iter().find(|o| o[0] as f64 >= khz).unwrap_or(self.opps.last().expect("validated: opps"))
    }

    /// The µV of the operating point at `khz` (the first at or above it).
    pub fn microvolts_at(&self, khz: u32) -> u32 {
        self.opp_at_least(khz as f64)[1]
    }
}

#[cfg(test)]
mod tests {
    use crate::platform::{DsuGovernor, Platform, BUILTIN_PLATFORMS};

    fn text(name: &str) -> &'static str {
        BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == name).unwrap().1
    }

    #[test]
    fn the_dynamiq_platforms_have_a_dsu_and_the_bad_ones_are_named() {
        for name in ["gs101", "rk3588"] {
            let d = Platform::builtin(name).unwrap().dsu.unwrap();
            assert_eq!((d.governor, d.vote_ratios.len()), (DsuGovernor::Vote, 3));
        }
        assert_eq!(Platform::builtin("rk3588").unwrap().dsu.unwrap().l3_bytes, 3 << 20);
        assert!(Platform::builtin("exynos5422").unwrap().dsu.is_none());
        let broken = |from: &str, to: &str| Platform::from_toml("x.toml", &text("gs101").replacen(from, to, 1));
        let e = broken("fixed_khz = 1803000", "fixed_khz = 1800000").unwrap_err();
        assert!(e.contains("dsu.fixed_khz") && e.contains("not one of dsu.opps"), "{e}");
        let e = broken("vote_ratios = [0.6, 0.6, 0.6]", "vote_ratios = [0.6, 0.6]").unwrap_err();
        assert!(e.contains("dsu.vote_ratios") && e.contains("one ratio per cluster"), "{e}");
        let e = broken("vote_ratios = [0.6, 0.6, 0.6]", "vote_ratios = [60, 0.6, 0.6]").unwrap_err();
        assert!(e.contains("dsu.vote_ratios[0]"), "{e}");
        // a value far out of range is named in scientific notation, not in 301 digits
        let e = broken("l3_hit_cycles = 30.0", "l3_hit_cycles = 1e300").unwrap_err();
        assert!(e.contains("dsu.l3_hit_cycles") && e.ends_with("got 1e300"), "{e}");
        let e = broken("l3_hit_cycles = 30.0", "l3_hit_cycles = nan").unwrap_err();
        assert!(e.contains("dsu.l3_hit_cycles") && e.ends_with("got NaN"), "{e}");
        let e = broken("governor = \"vote\"", "governor = \"ondemand\"").unwrap_err();
        assert!(e.contains("governor"), "{e}");
        // a DSU and a CCI together
        let cci = "[cci]\nclock_khz = 533000\nlatency_ns = 10.0\nread_tracker_entries = 8\nsnoop_path_l2_lookups = 1.0\nsnoop_fixed_ns = 0.0\nspeculative_fetch = \"overlap\"\n\n[dsu]";
        let e = broken("\n[dsu]\n", &format!("\n{cci}\n")).unwrap_err();
        assert!(e.contains("[dsu] and [cci]"), "{e}");
    }
}
