//! The menu cpuidle governor's correction factors and exit-latency limits
//! (drivers/cpuidle/governors/menu.c, Linux 3.10 and 5.10).
//!
//! The next timer is an optimistic guess of an idle period: interrupts and wake-ups from other
//! CPUs end many idles earlier. Per CPU, menu keeps a running average of measured/predicted
//! idle (`correction_factor`) in 12 buckets (by the next timer's order of magnitude, and
//! whether a task waits on I/O) and scales the next-timer distance by it. A state is chosen
//! only if its exit latency is within the PM QoS `cpu_dma_latency` limit and, times the
//! performance multiplier, within the predicted idle.
//!
//! The two kernels differ in the update (3.10's `menu_update` takes off the chosen state's
//! exit latency whenever the residency exceeds it, scales the old factor by 7/8, lets a factor
//! exceed unity and records the raw residency in the repeating-pattern history; 5.10's halves
//! a residency of at most twice the exit latency, takes 1/8 off, caps the measured time at the
//! next timer and records the measured time) and in units (µs in 3.10, ns in 5.10). Both are
//! kept to their integer arithmetic, so values worked out from the C agree exactly. 3.10 is its
//! own menu.c (`expected_us`, the menu hrtimer), not the later code Linaro's LSK 3.10 backports.

/// Which kernel's menu.c rules apply: the engine takes it from the placement's kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuRules {
    V3_10,
    V5_10,
}

/// `BUCKETS` (menu.c, 3.10 and 5.10): six magnitudes, without and with I/O waiters.
pub const BUCKETS: usize = 12;
/// `RESOLUTION` (menu.c, 3.10 and 5.10): a factor of 1 is `RESOLUTION * DECAY`.
const RESOLUTION: u64 = 1024;
/// `DECAY` (menu.c, 3.10 and 5.10): each update keeps 7/8 of the old factor.
const DECAY: u64 = 8;
/// `MAX_INTERESTING` (menu.c: 50000 µs in 3.10, `50000 * NSEC_PER_USEC` in 5.10): a measured
/// idle this long counts as a perfect prediction.
const MAX_INTERESTING_US: u64 = 50_000;
/// A factor of one: `menu_enable_device` (5.10) starts every bucket there, 3.10's
/// `menu_select` sets a zero (never updated) bucket to it before use.
pub const UNITY: u32 = (RESOLUTION * DECAY) as u32;

/// `which_bucket` (menu.c, 3.10 and 5.10): the order of magnitude of the next-timer distance
/// (<10 µs, <100 µs, ... , >=100 ms), the upper half when a task waits on I/O on the CPU.
pub fn which_bucket(next_timer_us: f64, nr_iowaiters: u32) -> usize {
    let base = if nr_iowaiters > 0 { BUCKETS / 2 } else { 0 };
    let magnitude =
        [10.0, 100.0, 1000.0, 10_000.0, 100_000.0].iter().take_while(|&&edge| next_timer_us >= edge).count();
    base + magnitude
}

/// `performance_multiplier` (menu.c): `1 + 10 * nr_iowaiters` in 5.10; the same in 3.10,
/// whose load-average term (`2 * get_loadavg()`) is commented out there ("almost always 0,
/// but can sometimes ... spike very high").
pub fn performance_multiplier(nr_iowaiters: u32) -> u64 {
    1 + 10 * u64::from(nr_iowaiters)
}

/// Whether a state with exit latency `exit_latency_us` may be chosen for an idle predicted to
/// last `predicted_us`: within the PM QoS limit `latency_limit_us` (`None`: no request, the
/// default 2000 s) and, times the performance multiplier, within the prediction (3.10's
/// `exit_latency * multiplier > predicted_us` test; 5.10's `interactivity_req`, the prediction
/// over the multiplier, lowering `latency_req`).
pub fn exit_latency_allowed(
    rules: MenuRules,
    exit_latency_us: u32,
    predicted_us: f64,
    nr_iowaiters: u32,
    latency_limit_us: Option<u32>,
) -> bool {
    let mult = performance_multiplier(nr_iowaiters);
    if latency_limit_us.is_some_and(|limit| exit_latency_us > limit) {
        return false;
    }
    if predicted_us.is_infinite() {
        return true;
    }
    let exit = u64::from(exit_latency_us);
    match rules {
        MenuRules::V3_10 => exit * mult <= predicted_us as u64,
        MenuRules::V5_10 => exit * 1000 <= (predicted_us * 1000.0) as u64 / mult,
    }
}

/// Whether the PM QoS limit lets cpuidle use anything beyond WFI: a limit of 0 keeps every
/// CPU in state 0 (`latency_req == 0` in both kernels' `menu_select`).
pub fn deep_states_allowed(latency_limit_us: Option<u32>) -> bool {
    latency_limit_us != Some(0)
}

/// One CPU's correction factors, one per bucket, in units of `1 / (RESOLUTION * DECAY)`.
#[derive(Debug, Clone)]
pub struct CorrectionFactors {
    factors: [u32; BUCKETS],
}

impl Default for CorrectionFactors {
    fn default() -> Self {
        CorrectionFactors { factors: [UNITY; BUCKETS] }
    }
}

impl CorrectionFactors {
    /// The factor of `bucket`, as a ratio (1.0: the next timer is believed).
    pub fn ratio(&self, bucket: usize) -> f64 {
        self.factors[bucket] as f64 / UNITY as f64
    }

    /// The raw factor of `bucket` (`RESOLUTION * DECAY` is one).
    pub fn raw(&self, bucket: usize) -> u32 {
        self.factors[bucket]
    }

    /// The next-timer distance `next_timer_us` scaled by the bucket's factor, rounded to the
    /// closest µs as `menu_select` does (`div_round64` on µs in 3.10, on ns to µs in 5.10).
    pub fn corrected_us(&self, rules: MenuRules, next_timer_us: f64, nr_iowaiters: u32) -> f64 {
        if next_timer_us.is_infinite() {
            return f64::INFINITY;
        }
        let factor = u64::from(self.factors[which_bucket(next_timer_us, nr_iowaiters)]);
        let unity = u64::from(UNITY);
        let us = match rules {
            MenuRules::V3_10 => ((next_timer_us.max(0.0) as u64) * factor + unity / 2) / unity,
            MenuRules::V5_10 => {
                let ns = (next_timer_us.max(0.0) * 1000.0) as u64;
                (ns * factor + unity * 1000 / 2) / (unity * 1000)
            }
        };
        us as f64
    }

    /// `menu_update`: the idle that was predicted from `next_timer_us` lasted `residency_us`
    /// from entry to the end of the exit (so the exit latency `exit_latency_us` of the state
    /// entered is in it). Updates the bucket's factor and returns the idle time the kernel
    /// records in its repeating-pattern history, µs.
    pub fn update(
        &mut self,
        rules: MenuRules,
        next_timer_us: f64,
        nr_iowaiters: u32,
        residency_us: f64,
        exit_latency_us: u32,
    ) -> f64 {
        let bucket = which_bucket(next_timer_us, nr_iowaiters);
        let old = u64::from(self.factors[bucket]);
        let (new, recorded_us) = match rules {
            MenuRules::V3_10 => {
                // µs throughout; an idle with no timer ahead has its expected_us saturated
                let expected = next_timer_us.clamp(0.0, f64::from(u32::MAX)) as u64;
                let last_idle = residency_us.max(0.0) as u64;
                let exit = u64::from(exit_latency_us);
                let measured = if last_idle > exit { last_idle - exit } else { last_idle };
                let add = if expected > 0 && measured < MAX_INTERESTING_US {
                    RESOLUTION * measured / expected
                } else {
                    RESOLUTION
                };
                ((old * (DECAY - 1) / DECAY + add).max(1), last_idle as f64)
            }
            MenuRules::V5_10 => {
                let next_ns =
                    if next_timer_us.is_finite() { (next_timer_us.max(0.0) * 1000.0) as u64 } else { u64::MAX };
                let exit_ns = u64::from(exit_latency_us) * 1000;
                let residency_ns = (residency_us.max(0.0) * 1000.0) as u64;
                let measured = if residency_ns > 2 * exit_ns { residency_ns - exit_ns } else { residency_ns / 2 };
                let measured = measured.min(next_ns); // "do not exceed unity"
                let add = if next_ns > 0 && measured < MAX_INTERESTING_US * 1000 {
                    (u128::from(RESOLUTION) * u128::from(measured) / u128::from(next_ns)) as u64
                } else {
                    RESOLUTION
                };
                (old - old / DECAY + add, (measured / 1000) as f64)
            }
        };
        self.factors[bucket] = new.min(u64::from(u32::MAX)) as u32;
        recorded_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_by_magnitude_and_io_wait() {
        let b = |us| which_bucket(us, 0);
        assert_eq!([b(0.0), b(9.99), b(10.0), b(99.9), b(100.0), b(999.0)], [0, 0, 1, 1, 2, 2]);
        assert_eq!(
            [b(1000.0), b(9999.0), b(10_000.0), b(99_999.0), b(100_000.0), b(f64::INFINITY)],
            [3, 3, 4, 4, 5, 5]
        );
        assert_eq!([which_bucket(50.0, 1), which_bucket(2e6, 3)], [7, 11]);
    }

    #[test]
    fn the_update_follows_each_kernels_integer_rule() {
        // next timer 2000 µs, factor at unity (8192), core state left in 20 µs.
        let updated = |rules, residency_us| {
            let mut f = CorrectionFactors::default();
            let recorded = f.update(rules, 2000.0, 0, residency_us, 20);
            (f.raw(3), recorded)
        };
        // 520 µs incl. the exit: measured 500; 8192·7/8 = 7168 (3.10) = 8192 − 8192/8 (5.10),
        // plus 1024·500/2000 = 256
        assert_eq!(updated(MenuRules::V3_10, 520.0), (7424, 520.0));
        assert_eq!(updated(MenuRules::V5_10, 520.0), (7424, 500.0));
        // 30 µs, under twice the exit: 3.10 takes the exit off (10 µs, 1024·10/2000 = 5),
        // 5.10 halves it (15000 ns, 1024·15000/2000000 = 7.68 → 7)
        assert_eq!(updated(MenuRules::V3_10, 30.0), (7173, 30.0));
        assert_eq!(updated(MenuRules::V5_10, 30.0), (7175, 15.0));
        // longer than the timer (woken later than it said): 3.10 lets the factor pass unity
        // (2980 µs: 1024·2980/2000 = 1525), 5.10 caps the measured time at the timer
        assert_eq!(updated(MenuRules::V3_10, 3000.0), (8693, 3000.0));
        assert_eq!(updated(MenuRules::V5_10, 3000.0), (8192, 2000.0));
        // 60 ms: past MAX_INTERESTING, a perfect prediction in both
        let mut f = CorrectionFactors::default();
        f.update(MenuRules::V3_10, 80_000.0, 0, 60_000.0, 0);
        assert_eq!(f.raw(4), 8192);
        // the two decays round differently: 8191·7/8 = 7167 against 8191 − 1023 = 7168
        let mut f = CorrectionFactors { factors: [8191; BUCKETS] };
        let mut g = f.clone();
        f.update(MenuRules::V3_10, 5.0, 0, 0.0, 0);
        g.update(MenuRules::V5_10, 5.0, 0, 0.0, 0);
        assert_eq!((f.raw(0), g.raw(0)), (7167, 7168));
    }

    #[test]
    fn the_prediction_is_the_timer_scaled_and_rounded() {
        let mut f = CorrectionFactors::default();
        f.update(MenuRules::V3_10, 2000.0, 0, 520.0, 20); // bucket 3 at 7424
                                                          // 2000·7424/8192 = 1812.5, rounded up; other buckets still believe the timer
        assert_eq!(f.corrected_us(MenuRules::V3_10, 2000.0, 0), 1813.0);
        assert_eq!(f.corrected_us(MenuRules::V5_10, 2000.0, 0), 1813.0);
        // 1000.5 µs: 3.10 truncates to 1000 µs first (906.25 → 906), 5.10 keeps the ns
        // (1000500·7424/8192000 = 906.7 → 907)
        assert_eq!(f.corrected_us(MenuRules::V3_10, 1000.5, 0), 906.0);
        assert_eq!(f.corrected_us(MenuRules::V5_10, 1000.5, 0), 907.0);
        assert_eq!(f.corrected_us(MenuRules::V3_10, 20_000.0, 0), 20_000.0);
        assert!((f.ratio(3) - 7424.0 / 8192.0).abs() < 1e-12);
        // an idle with I/O waiters reads the other half
        assert_eq!(f.corrected_us(MenuRules::V3_10, 2000.0, 1), 2000.0);
        // learning from idles cut to a tenth of the timer: the factor falls towards 0.1
        let mut f = CorrectionFactors::default();
        for _ in 0..60 {
            f.update(MenuRules::V5_10, 5000.0, 0, 520.0, 20);
        }
        assert!((0.09..0.11).contains(&f.ratio(3)), "{}", f.ratio(3));
    }

    #[test]
    fn exit_latency_limits() {
        use MenuRules::*;
        // no QoS request: the exit must fit in the prediction (multiplier 1 without I/O waiters)
        assert!(exit_latency_allowed(V3_10, 300, 300.0, 0, None));
        assert!(!exit_latency_allowed(V3_10, 300, 299.0, 0, None));
        assert!(!exit_latency_allowed(V5_10, 300, 299.9, 0, None));
        // each I/O waiter multiplies the exit by 10 more
        assert_eq!(performance_multiplier(2), 21);
        assert!(!exit_latency_allowed(V3_10, 300, 3000.0, 1, None));
        assert!(exit_latency_allowed(V5_10, 300, 3300.0, 1, None));
        // the QoS limit forbids longer exits whatever the prediction
        assert!(!exit_latency_allowed(V5_10, 300, f64::INFINITY, 0, Some(299)));
        assert!(exit_latency_allowed(V3_10, 300, f64::INFINITY, 0, Some(300)));
        assert!(!deep_states_allowed(Some(0)) && deep_states_allowed(Some(1)) && deep_states_allowed(None));
    }
}
