//! Idle states: what cpuidle may do with an idle CPU and an idle cluster.

/// Idle states the simulated cpuidle may enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuIdle {
    /// WFI only: idle CPUs are clock-gated, clusters stay powered and are snooped. The seed
    /// paper's board behaves this way (its idle cluster is snooped), so this is the default.
    Wfi,
    /// WFI, plus the platform's power-down states: a core's own (the vendor Exynos C2) when
    /// its next known wake-up is further away than the state's target residency, and the
    /// cluster's (the big_little cpuidle driver's C1) when every CPU of it is idle that long.
    /// A powered-down core takes its share of the cluster's leakage with it; a powered-down
    /// cluster leaks nothing and its CCI port is disabled: it is not snooped.
    ClusterOff,
}

impl CpuIdle {
    pub const NAMES: [&'static str; 2] = ["wfi", "cluster-off"];

    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "wfi" => Ok(CpuIdle::Wfi),
            "cluster-off" => Ok(CpuIdle::ClusterOff),
            other => Err(format!("unknown cpuidle policy '{other}'; known: {}", Self::NAMES.join(", "))),
        }
    }
}

/// Index of WFI in the cpu_idle tracepoint's `state`.
pub const STATE_WFI: u32 = 0;
/// Index of core power-down, where the platform has the state.
pub const STATE_CORE_OFF: u32 = 1;

/// Index of cluster power-down: the state after the deepest per-core one, as cpuidle numbers
/// a driver's table.
pub fn cluster_off_state(has_core_off: bool) -> u32 {
    STATE_CORE_OFF + u32::from(has_core_off)
}

/// Idle periods the menu governor remembers per CPU (`INTERVALS`, drivers/cpuidle/governors/
/// menu.c).
const INTERVALS: usize = 8;

/// A CPU's recent idle periods, as the menu governor (Linux 3.10's `get_typical_interval`)
/// keeps them to predict the next one when a wake-up comes from another CPU, which no timer
/// announces. A simulated run starts on a system that has been up, not at boot (where the
/// kernel's zeroed history predicts 0), so nothing is predicted until 8 periods are seen.
#[derive(Debug, Clone, Default)]
pub struct IdleHistory {
    intervals_us: [f64; INTERVALS],
    next: usize,
    seen: usize,
}

impl IdleHistory {
    /// An idle period that lasted `us` ended.
    pub fn record(&mut self, us: f64) {
        self.intervals_us[self.next] = us.max(0.0);
        self.next = (self.next + 1) % INTERVALS;
        self.seen = (self.seen + 1).min(INTERVALS);
    }

    /// The typical recent idle period, µs, when the last ones agree: their mean once the
    /// standard deviation is at most a sixth of it (with at least 6 of the 8 kept) or at most
    /// 20 µs, dropping the largest while more than 6 remain; `None`: no confident prediction.
    pub fn typical_us(&self) -> Option<f64> {
        if self.seen < INTERVALS {
            return None;
        }
        let mut kept: Vec<f64> = self.intervals_us.to_vec();
        loop {
            let n = kept.len() as f64;
            let avg = kept.iter().sum::<f64>() / n;
            let stddev = (kept.iter().map(|v| (v - avg) * (v - avg)).sum::<f64>() / n).sqrt();
            if (avg > 6.0 * stddev && kept.len() * 4 >= INTERVALS * 3) || stddev <= 20.0 {
                return Some(avg);
            }
            if kept.len() * 4 <= INTERVALS * 3 {
                return None;
            }
            // drop the largest (every copy, as Linux's integer `thresh = max - 1` does) and look
            // again; a threshold of `max - 1e-9` kept a period of 2^24 µs (16.8 s) or more, whose
            // spacing is wider than 1e-9, and looped for ever
            let largest = kept.iter().copied().fold(0.0, f64::max);
            kept.retain(|&v| v < largest);
        }
    }
}

/// Whether powering an idle core or cluster down pays off: the governor's residency test (it
/// stays idle from `idle_from_us` at least until `next_wakeup_us`, the next timer it knows of).
pub fn power_down_pays(idle_from_us: f64, next_wakeup_us: f64, target_residency_us: u32) -> bool {
    next_wakeup_us - idle_from_us >= target_residency_us as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_idle_period_is_dropped_not_kept_for_ever() {
        // seven scattered periods and one of 20 s: the largest are dropped until too few remain
        let mut h = IdleHistory::default();
        for us in [3.0e7, 100.0, 5000.0, 2.0e5, 40.0, 9.0e6, 700.0, 1.0e6] {
            h.record(us);
        }
        assert_eq!(h.typical_us(), None);
        // six equal periods beside two long ones: the long ones go, the six agree
        let mut h = IdleHistory::default();
        for us in [3.0e7, 1000.0, 1000.0, 1000.0, 2.0e7, 1000.0, 1000.0, 1000.0] {
            h.record(us);
        }
        assert_eq!(h.typical_us(), Some(1000.0));
    }

    #[test]
    fn names_and_the_residency_test() {
        assert_eq!(CpuIdle::parse("cluster-off"), Ok(CpuIdle::ClusterOff));
        assert!(CpuIdle::parse("c3").unwrap_err().contains("wfi, cluster-off"));
        assert!(power_down_pays(1000.0, 3500.0, 2500));
        assert!(!power_down_pays(1000.0, 3499.0, 2500));
        assert_eq!((cluster_off_state(false), cluster_off_state(true)), (1, 2));
    }

    #[test]
    fn the_typical_interval_is_the_mean_of_agreeing_recent_idles() {
        let mut h = IdleHistory::default();
        for us in [50.0, 52.0, 48.0, 50.0, 51.0, 49.0, 51.0] {
            h.record(us);
        }
        assert_eq!(h.typical_us(), None); // 7 seen: no prediction yet
        h.record(51.0);
        assert_eq!(h.typical_us(), Some(50.25));
        // one long outlier is dropped; two short and six long disagree too much
        h.record(10_000.0);
        assert!((h.typical_us().unwrap() - 352.0 / 7.0).abs() < 1e-9, "{:?}", h.typical_us());
        for us in [10.0, 10.0, 5000.0, 6000.0, 7000.0, 8000.0, 9000.0, 10_000.0] {
            h.record(us);
        }
        assert_eq!(h.typical_us(), None);
    }
}
