//! Power: per-core dynamic power C·V²·f·activity (the Linux Energy Model's formula, with the
//! activity of a core stalled on memory below 1) and cluster leakage rising with voltage and
//! temperature.

use crate::platform::{Cluster, CoreType};

/// Leakage doubles about every 35 °C (a common rule of thumb for 28 nm bulk CMOS; ASSUMPTION
/// documented in the platform file's leakage comments): exp(ln 2 / 35 · ΔT).
pub const LEAKAGE_TEMP_COEFF_PER_C: f64 = std::f64::consts::LN_2 / 35.0;

/// Dynamic power of one core, mW: dynamic-power-coefficient (µW/MHz/V²) · V² · f(MHz) ·
/// activity (1 = fully busy, the Linux Energy Model's assumption).
pub fn core_dynamic_mw(core: &CoreType, voltage_v: f64, freq_khz: u32, activity: f64) -> f64 {
    core.dynamic_power_coefficient * voltage_v * voltage_v * (freq_khz as f64 / 1000.0) * activity / 1000.0
}

/// Switching activity of a core running a phase that spends `stall_share` of its time waiting
/// on memory.
pub fn activity(core: &CoreType, stall_share: f64) -> f64 {
    (1.0 - stall_share) + stall_share * core.stall_activity
}

/// Leakage of a powered cluster, mW: the platform's value at 1.0 V and 25 °C, scaled by V²
/// (ASSUMPTION: leakage current roughly proportional to V over the DVFS range) and doubling
/// every ~35 °C (`LEAKAGE_TEMP_COEFF_PER_C`).
pub fn cluster_static_mw(cluster: &Cluster, voltage_v: f64, temp_c: f64) -> f64 {
    cluster.leakage_mw * voltage_v * voltage_v * (LEAKAGE_TEMP_COEFF_PER_C * (temp_c - 25.0)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    #[test]
    fn dynamic_power_matches_the_energy_model_table() {
        // ref §2.1: A15 2000 MHz at 1.3125 V -> 1067.2 mW, A7 1400 MHz at 1.275 V -> 204.8 mW
        let p = Platform::builtin("exynos5422").unwrap();
        let a15 = core_dynamic_mw(p.core_type_of(1), 1.3125, 2_000_000, 1.0);
        let a7 = core_dynamic_mw(p.core_type_of(0), 1.275, 1_400_000, 1.0);
        assert!((a15 - 1067.9).abs() < 1.0, "{a15}");
        assert!((a7 - 204.8).abs() < 0.1, "{a7}");
    }

    #[test]
    fn leakage_doubles_every_35_degrees() {
        let p = Platform::builtin("exynos5422").unwrap();
        let c = &p.clusters[1];
        let r = cluster_static_mw(c, 1.0, 60.0) / cluster_static_mw(c, 1.0, 25.0);
        assert!((r - 2.0).abs() < 1e-9);
    }
}
