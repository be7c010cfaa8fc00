//! Power and temperature: per-core dynamic power C·V²·f·activity, cluster leakage rising with
//! voltage and temperature, and one RC thermal node per cluster.

use crate::platform::{Cluster, CoreType, LEAKAGE_TEMP_COEFF_PER_C};

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

/// Temperature after `dt_s` seconds of constant `power_mw` through one RC node:
/// T → T_ss + (T - T_ss)·exp(-dt/RC), T_ss = ambient + P·R.
pub fn rc_step(temp_c: f64, ambient_c: f64, power_mw: f64, cluster: &Cluster, dt_s: f64) -> f64 {
    let steady = ambient_c + power_mw / 1000.0 * cluster.thermal_resistance_c_per_w;
    let tau_s = cluster.thermal_resistance_c_per_w * cluster.thermal_capacitance_j_per_c;
    steady + (temp_c - steady) * (-dt_s / tau_s).exp()
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
    fn rc_node_relaxes_towards_steady_state() {
        let p = Platform::builtin("exynos5422").unwrap();
        let big = &p.clusters[1];
        let t_inf = rc_step(35.0, 35.0, 2000.0, big, 1e6);
        assert!((t_inf - (35.0 + 2.0 * big.thermal_resistance_c_per_w)).abs() < 1e-9);
        let tau = big.thermal_resistance_c_per_w * big.thermal_capacitance_j_per_c;
        let t1 = rc_step(35.0, 35.0, 2000.0, big, tau);
        assert!(((t1 - 35.0) / (t_inf - 35.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-9);
    }

    #[test]
    fn leakage_doubles_every_35_degrees() {
        let p = Platform::builtin("exynos5422").unwrap();
        let c = &p.clusters[1];
        let r = cluster_static_mw(c, 1.0, 60.0) / cluster_static_mw(c, 1.0, 25.0);
        assert!((r - 2.0).abs() < 1e-9);
    }
}
