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

/// Whether powering an idle core or cluster down pays off: the governor's residency test (it
/// stays idle from `idle_from_us` at least until `next_wakeup_us`, the next timer it knows of).
pub fn power_down_pays(idle_from_us: f64, next_wakeup_us: f64, target_residency_us: u32) -> bool {
    next_wakeup_us - idle_from_us >= target_residency_us as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_the_residency_test() {
        assert_eq!(CpuIdle::parse("cluster-off"), Ok(CpuIdle::ClusterOff));
        assert!(CpuIdle::parse("c3").unwrap_err().contains("wfi, cluster-off"));
        assert!(power_down_pays(1000.0, 3500.0, 2500));
        assert!(!power_down_pays(1000.0, 3499.0, 2500));
        assert_eq!((cluster_off_state(false), cluster_off_state(true)), (1, 2));
    }
}
