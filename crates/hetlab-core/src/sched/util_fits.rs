//! `util_fits_cpu` as Linux 6.12 has it (kernel/sched/fair.c; since 6.2, "sched/uclamp: Make
//! task_fits_capacity() use util_fits_cpu()" and "sched/uclamp: Fix fits_capacity() check in
//! feec()", Qais Yousef, 2022; the -1 result from "sched/fair: Fixes for capacity inversion
//! detection" / "sched/uclamp: Fix a uninitialized variable warnings", 2023; 6.11's
//! `get_actual_cpu_capacity`).
//!
//! Where 5.10 asks whether the *clamped* utilisation fits (`fits_capacity(uclamp_rq_util_with(..),
//! capacity_of)`), 6.x asks three questions of the unclamped utilisation and the clamps:
//!
//! - the utilisation fits what CFS may use of the CPU (`fits_capacity(util, capacity_of)`, the
//!   1.25 margin and the RT/DL/pressure loss included);
//! - with uclamp in use, a util_max at or below the CPU's original capacity (`arch_scale_cpu_capacity`,
//!   no margin, no pressure) makes it fit anyway, unless the CPU is a 1024 one and util_max
//!   1024 (no cap: the CPU may still be over-utilised);
//! - a util_min above the CPU's actual capacity (original less cpufreq/thermal pressure) that the
//!   utilisation itself does not reach makes a fitting CPU a *lesser* fit ([`Fit::Lesser`], the
//!   kernel's -1): it can run the task, not at the performance the task asked. The util_min is
//!   first capped by the util_max.
//!
//! Without uclamp in use (`uclamp_is_used`) only the first question is asked.

use super::select_asym::fits_capacity;
use super::uclamp::{Clamp, SCALE};

/// `util_fits_cpu`'s answer, in the kernel's order (-1 < 0 < 1: feec compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fit {
    /// -1: the utilisation fits but the CPU's actual capacity is below the util_min.
    Lesser,
    /// 0: the utilisation does not fit.
    No,
    /// 1: the utilisation and the clamps fit.
    Full,
}

impl Fit {
    /// The kernel's integer (feec ranks candidates by it, -1 also standing for "none yet").
    pub fn rank(self) -> i8 {
        match self {
            Fit::Lesser => -1,
            Fit::No => 0,
            Fit::Full => 1,
        }
    }
}

/// A CPU's three capacities as `util_fits_cpu` reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacities {
    /// `capacity_of`: what CFS may use (less RT, DL and pressure).
    pub of: u64,
    /// `arch_scale_cpu_capacity`: the CPU's original capacity.
    pub orig: u64,
    /// `get_actual_cpu_capacity`: the original less its pressure.
    pub actual: u64,
}

/// `util_fits_cpu(util, uclamp_min, uclamp_max, cpu)` (6.12): whether `util` (unclamped) fits a
/// CPU of `cap` under `clamp` (the task's, max-aggregated with the run queue's where feec reads
/// them); `uclamp_used`: the kernel's `sched_uclamp_used` key.
pub fn util_fits_cpu(util: u64, clamp: Clamp, cap: Capacities, uclamp_used: bool) -> Fit {
    let fits = fits_capacity(util, cap.of);
    if !uclamp_used {
        return if fits { Fit::Full } else { Fit::No };
    }
    let (min, max) = (u64::from(clamp.min), u64::from(clamp.max));
    let scale = u64::from(SCALE);
    // a cap at or below the CPU's original capacity forces a fit, but no cap on a 1024 CPU
    // must not hide its over-utilisation
    let uncapped_on_the_biggest = cap.orig == scale && max == scale;
    let max_fits = !uncapped_on_the_biggest && max <= cap.orig;
    let fits = fits || max_fits;
    // a boost (util below util_min) must reach the actual capacity, without the margin
    let min = min.min(max);
    if fits && util < min && min > cap.actual {
        return Fit::Lesser;
    }
    if fits {
        Fit::Full
    } else {
        Fit::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CPU of capacity `orig` without pressure (gs101: A55 160, A76 498, X1 1024).
    fn cpu(orig: u64) -> Capacities {
        Capacities { of: orig, orig, actual: orig }
    }

    fn clamp(min: u32, max: u32) -> Clamp {
        Clamp { min, max }
    }

    #[test]
    fn without_uclamp_only_the_utilisation_counts() {
        // 6.12 util_fits_cpu: `if (!uclamp_is_used()) return fits;` with fits_capacity's
        // util·1280 < capacity·1024. On an A55 of 160: 127·1280 = 162560 < 163840 fits, 128·1280
        // = 163840 does not; the clamps are not read
        assert_eq!(util_fits_cpu(127, clamp(308, 1024), cpu(160), false), Fit::Full);
        assert_eq!(util_fits_cpu(128, clamp(0, 100), cpu(160), false), Fit::No);
    }

    #[test]
    fn a_util_min_above_the_actual_capacity_is_a_lesser_fit() {
        // the top-app floor at 120 Hz (308) on an A55 (160): util 50 fits (64000 < 163840),
        // 50 < 308 and 308 > 160: -1. On an A76 (498) 308 <= 498: 1. At 60 Hz (103) the A55
        // fits fully: 103 <= 160
        assert_eq!(util_fits_cpu(50, clamp(308, 1024), cpu(160), true), Fit::Lesser);
        assert_eq!(util_fits_cpu(50, clamp(308, 1024), cpu(498), true), Fit::Full);
        assert_eq!(util_fits_cpu(50, clamp(103, 1024), cpu(160), true), Fit::Full);
        // the utilisation itself at or above the util_min: no boost to honour (region b)
        assert_eq!(util_fits_cpu(100, clamp(100, 1024), cpu(90), true), Fit::No);
        assert_eq!(util_fits_cpu(60, clamp(60, 1024), cpu(90), true), Fit::Full);
        // a utilisation that does not fit stays 0 whatever the util_min
        assert_eq!(util_fits_cpu(140, clamp(308, 1024), cpu(160), true), Fit::No);
    }

    #[test]
    fn the_util_min_is_compared_without_the_margin_and_against_the_actual_capacity() {
        // util_min 160 on a CPU of 160: 160 > 160 is false, a full fit (no 1.25 margin on the
        // boost, unlike 5.10's fits_capacity(clamped 160, 160): 204800 < 163840 false)
        assert_eq!(util_fits_cpu(50, clamp(160, 1024), cpu(160), true), Fit::Full);
        // cpufreq pressure of 20 leaves an actual capacity of 140: 160 > 140, a lesser fit;
        // capacity_of (140) still fits util 50 (64000 < 143360)
        let pressed = Capacities { of: 140, orig: 160, actual: 140 };
        assert_eq!(util_fits_cpu(50, clamp(160, 1024), pressed, true), Fit::Lesser);
        // RT utilisation takes from capacity_of, not from the actual capacity: no -1
        let rt_busy = Capacities { of: 100, orig: 160, actual: 160 };
        assert_eq!(util_fits_cpu(50, clamp(160, 1024), rt_busy, true), Fit::Full);
    }

    #[test]
    fn a_util_max_at_or_below_the_original_capacity_forces_a_fit() {
        // util 300 does not fit an A55 (384000 >= 163840), but capped at 150 <= 160 it fits;
        // capped at 200 > 160 it does not (the normal up-migration rule)
        assert_eq!(util_fits_cpu(300, clamp(0, 150), cpu(160), true), Fit::Full);
        assert_eq!(util_fits_cpu(300, clamp(0, 200), cpu(160), true), Fit::No);
        // the pressure does not undo the cap: capacity_of 50 of 160
        let pressed = Capacities { of: 50, orig: 160, actual: 50 };
        assert_eq!(util_fits_cpu(300, clamp(0, 150), pressed, true), Fit::Full);
        // on a 1024 CPU an uncapped task (util_max 1024) is not forced: 900·1280 >= 1024·1024
        assert_eq!(util_fits_cpu(900, clamp(0, 1024), cpu(1024), true), Fit::No);
        // but a cap below 1024 forces it there too
        assert_eq!(util_fits_cpu(900, clamp(0, 1000), cpu(1024), true), Fit::Full);
    }

    #[test]
    fn the_util_min_is_capped_by_the_util_max() {
        // min 308, max 150 on an A55: forced to fit by the cap, and the boost is min(308, 150)
        // = 150 <= 160: a full fit
        assert_eq!(util_fits_cpu(50, clamp(308, 150), cpu(160), true), Fit::Full);
        // the kernel's order, which feec compares
        assert!(Fit::Lesser < Fit::No && Fit::No < Fit::Full);
        assert_eq!((Fit::Lesser.rank(), Fit::No.rank(), Fit::Full.rank()), (-1, 0, 1));
    }
}
