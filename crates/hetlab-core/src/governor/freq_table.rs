//! The cpufreq core's frequency-table lookups (include/linux/cpufreq.h,
//! `cpufreq_table_find_index_{al,ah,ac}` on an ascending table) and limit handling.
//!
//! Every lookup first clamps the target to the limits, as `cpufreq_frequency_table_target`
//! does. The limits are [policy min, min(policy max, thermal cap)]: in Linux the thermal cap is
//! a frequency QoS request folded into `policy->max`.

use super::PolicyView;

/// `CPUFREQ_RELATION_*`: how a target between two OPPs is rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Lowest frequency at or above the target.
    L,
    /// Highest frequency at or below the target.
    H,
    /// Closest frequency; a tie goes to the lower one.
    C,
}

/// The OPP of ascending `opps_khz` that `relation` picks for `target_khz` within
/// [`min_khz`, `max_khz`].
///
/// Only entries inside the limits are candidates (the kernel's "valid entries" once the limits
/// are OPPs). If no entry lies inside, the lowest entry above `min_khz` is used, as
/// `cpufreq_frequency_table_verify` raises max to the next OPP; failing that, the highest
/// entry. An empty table returns the clamped target.
///
/// The table is ascending (the view's contract): a target at either end is answered at once
/// (a governor resolves at every sample, most often to the top or the bottom), otherwise the
/// entry at or below it is found by bisection, and the one at or above it is that entry or
/// the next.
pub fn resolve(opps_khz: &[u32], target_khz: u32, relation: Relation, min_khz: u32, max_khz: u32) -> u32 {
    debug_assert!(opps_khz.is_sorted(), "an OPP table is ascending: {opps_khz:?}");
    let max_khz = max_khz.max(min_khz);
    let target = target_khz.clamp(min_khz, max_khz);
    let Some(&highest) = opps_khz.last() else { return target };
    // At or above the top entry every relation gives the top one (the limits reach it); at or
    // below the bottom one with the limits reaching down to it, the bottom one: the answers of
    // most samples, without the scans below.
    if target >= highest {
        return highest;
    }
    if target <= opps_khz[0] && min_khz <= opps_khz[0] {
        return opps_khz[0];
    }
    let Some(lo) = opps_khz.iter().position(|&f| f >= min_khz) else { return highest };
    let hi = match opps_khz.iter().rposition(|&f| f <= max_khz) {
        Some(hi) if hi >= lo => hi,
        _ => lo,
    };
    let valid = &opps_khz[lo..=hi];
    // the last valid entry at or below the target: the top valid one when the target reaches
    // it (a limit below the table's top), else by bisection (the table is ascending)
    let at_or_below = if valid[valid.len() - 1] <= target {
        Some(valid.len() - 1)
    } else {
        valid.partition_point(|&f| f <= target).checked_sub(1)
    };
    let (below, above) = match at_or_below {
        Some(i) if valid[i] == target => (Some(target), Some(target)),
        Some(i) => (Some(valid[i]), valid.get(i + 1).copied()),
        None => (None, Some(valid[0])),
    };
    match relation {
        // _al: first entry >= target, else the highest.
        Relation::L => above.unwrap_or(valid[valid.len() - 1]),
        // _ah: last entry <= target, else the lowest.
        Relation::H => below.unwrap_or(valid[0]),
        // _ac: exact, else the nearer neighbour; hi only if strictly nearer.
        Relation::C => match (below, above) {
            (Some(l), Some(h)) => {
                if target - l > h - target {
                    h
                } else {
                    l
                }
            }
            (Some(l), None) => l,
            (None, Some(h)) => h,
            (None, None) => valid[0],
        },
    }
}

/// [`resolve`] within the view's limits.
pub fn resolve_in(view: &PolicyView, target_khz: u32, relation: Relation) -> u32 {
    resolve(&view.opps_khz, target_khz, relation, view.policy_min_khz, view.upper_limit_khz())
}

/// The frequency a governor keeps when it does not ask for a change: the current one, moved
/// inside the limits if they changed (`cpufreq_policy_apply_limits`: above max -> max with
/// RELATION_H, below min -> min with RELATION_L).
pub fn hold(view: &PolicyView) -> u32 {
    let max = view.upper_limit_khz();
    if view.cur_khz > max {
        resolve_in(view, max, Relation::H)
    } else if view.cur_khz < view.policy_min_khz {
        resolve_in(view, view.policy_min_khz, Relation::L)
    } else {
        resolve_in(view, view.cur_khz, Relation::C)
    }
}

/// The OPP `steps` entries above (positive) or below (negative) `from_khz` within the view's
/// limits. A `from_khz` that is not an OPP counts as its closest OPP.
pub fn step_opp(view: &PolicyView, from_khz: u32, steps: i32) -> u32 {
    let from = resolve_in(view, from_khz, Relation::C);
    let Some(i) = view.opps_khz.iter().position(|&f| f == from) else { return from };
    let j = (i as i64 + steps as i64).clamp(0, view.opps_khz.len() as i64 - 1) as usize;
    // the neighbour may lie outside the limits: clamp it back in
    resolve_in(view, view.opps_khz[j], if steps >= 0 { Relation::H } else { Relation::L })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{little_opps, little_view};

    const MIN: u32 = 200_000;
    const MAX: u32 = 1_400_000;

    /// The lookup as the kernel writes it: a scan of the valid entries each way.
    fn resolve_by_scans(opps_khz: &[u32], target_khz: u32, relation: Relation, min_khz: u32, max_khz: u32) -> u32 {
        let max_khz = max_khz.max(min_khz);
        let target = target_khz.clamp(min_khz, max_khz);
        let Some(&highest) = opps_khz.last() else { return target };
        let Some(lo) = opps_khz.iter().position(|&f| f >= min_khz) else { return highest };
        let hi = match opps_khz.iter().rposition(|&f| f <= max_khz) {
            Some(hi) if hi >= lo => hi,
            _ => lo,
        };
        let valid = &opps_khz[lo..=hi];
        let below = valid.iter().rev().find(|&&f| f <= target).copied();
        let above = valid.iter().find(|&&f| f >= target).copied();
        match relation {
            Relation::L => above.unwrap_or(valid[valid.len() - 1]),
            Relation::H => below.unwrap_or(valid[0]),
            Relation::C => match (below, above) {
                (Some(l), Some(h)) if target - l > h - target => h,
                (Some(l), _) => l,
                (None, Some(h)) => h,
                (None, None) => valid[0],
            },
        }
    }

    #[test]
    fn resolve_picks_what_the_kernels_two_scans_pick() {
        // every target, limit pair and relation on tables with gaps, repeats and one entry
        let little: Vec<u32> = little_opps().iter().map(|f| f / 1000).collect();
        let tables: [&[u32]; 5] = [&little, &[500], &[200, 400, 400, 800], &[100, 300, 600, 1000, 1500], &[]];
        let points: Vec<u32> = (0..=17).map(|i| i * 100).chain([250, 399, 401, 1499, 1501, u32::MAX]).collect();
        for table in tables {
            for &target in &points {
                for &min in &points {
                    for &max in &points {
                        for r in [Relation::L, Relation::H, Relation::C] {
                            assert_eq!(
                                resolve(table, target, r, min, max),
                                resolve_by_scans(table, target, r, min, max),
                                "{table:?} target {target} in [{min}, {max}] {r:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn exact_entries_are_returned_by_every_relation() {
        let t = little_opps();
        for r in [Relation::L, Relation::H, Relation::C] {
            assert_eq!(resolve(&t, 800_000, r, MIN, MAX), 800_000);
        }
    }

    #[test]
    fn between_entries() {
        let t = little_opps();
        // 752000 lies between 700000 and 800000
        assert_eq!(resolve(&t, 752_000, Relation::L, MIN, MAX), 800_000);
        assert_eq!(resolve(&t, 752_000, Relation::H, MIN, MAX), 700_000);
        // 752000-700000 = 52000 > 800000-752000 = 48000 -> upper
        assert_eq!(resolve(&t, 752_000, Relation::C, MIN, MAX), 800_000);
        // 748000-700000 = 48000 < 52000 -> lower
        assert_eq!(resolve(&t, 748_000, Relation::C, MIN, MAX), 700_000);
        // tie: 750000-700000 = 50000 = 800000-750000 -> the lower one
        assert_eq!(resolve(&t, 750_000, Relation::C, MIN, MAX), 700_000);
    }

    #[test]
    fn table_edges_clamp_to_the_limits() {
        let t = little_opps();
        // below the table: clamped up to min 200000, every relation gives 200000
        for r in [Relation::L, Relation::H, Relation::C] {
            assert_eq!(resolve(&t, 0, r, MIN, MAX), 200_000);
            assert_eq!(resolve(&t, 5_000_000, r, MIN, MAX), 1_400_000);
        }
        // 1350000: L -> 1400000 (last entry), H -> 1300000
        assert_eq!(resolve(&t, 1_350_000, Relation::L, MIN, MAX), 1_400_000);
        assert_eq!(resolve(&t, 1_350_000, Relation::H, MIN, MAX), 1_300_000);
        // 250000: H -> 200000 (first entry), L -> 300000
        assert_eq!(resolve(&t, 250_000, Relation::H, MIN, MAX), 200_000);
        assert_eq!(resolve(&t, 250_000, Relation::L, MIN, MAX), 300_000);
    }

    #[test]
    fn limits_between_opps_never_yield_an_opp_outside_them() {
        let t = little_opps();
        // limits [450000, 1050000]: valid entries are 500000..=1000000
        assert_eq!(resolve(&t, 300_000, Relation::H, 450_000, 1_050_000), 500_000);
        assert_eq!(resolve(&t, 460_000, Relation::C, 450_000, 1_050_000), 500_000);
        assert_eq!(resolve(&t, 1_200_000, Relation::L, 450_000, 1_050_000), 1_000_000);
        assert_eq!(resolve(&t, 1_040_000, Relation::C, 450_000, 1_050_000), 1_000_000);
        // no OPP inside [450000, 480000]: the next one above min, 500000
        assert_eq!(resolve(&t, 470_000, Relation::H, 450_000, 480_000), 500_000);
        // min above the table: the highest entry
        assert_eq!(resolve(&t, 470_000, Relation::C, 2_000_000, 2_000_000), 1_400_000);
        assert_eq!(resolve(&[], 470_000, Relation::C, 500_000, 600_000), 500_000);
    }

    #[test]
    fn thermal_cap_lowers_the_upper_limit() {
        let mut v = little_view(1_400_000);
        v.thermal_cap_khz = 1_000_000;
        assert_eq!(resolve_in(&v, 1_400_000, Relation::H), 1_000_000);
        assert_eq!(resolve_in(&v, 1_400_000, Relation::L), 1_000_000);
        // current 1400000 is above the cap: hold moves it down to the cap
        assert_eq!(hold(&v), 1_000_000);
        v.cur_khz = 600_000;
        assert_eq!(hold(&v), 600_000);
        v.policy_min_khz = 700_000;
        assert_eq!(hold(&v), 700_000);
    }

    #[test]
    fn steps_stay_inside_the_table_and_limits() {
        let mut v = little_view(700_000);
        assert_eq!(step_opp(&v, 700_000, 1), 800_000);
        assert_eq!(step_opp(&v, 700_000, -1), 600_000);
        assert_eq!(step_opp(&v, 1_400_000, 1), 1_400_000);
        assert_eq!(step_opp(&v, 200_000, -1), 200_000);
        v.thermal_cap_khz = 700_000;
        assert_eq!(step_opp(&v, 700_000, 1), 700_000);
    }
}
