//! Power: per-core dynamic power C·V²·f·activity (the Linux Energy Model's formula, with the
//! activity of a core stalled on memory below 1), the cluster's clocked shared logic (C·V²·f
//! while powered) and cluster leakage rising with voltage and temperature.

use crate::platform::{Cluster, CoreType};

/// Leakage doubles about every 35 °C (a common rule of thumb for 28 nm bulk CMOS; ASSUMPTION
/// documented in the platform file's leakage comments): exp(ln 2 / 35 · ΔT).
pub const LEAKAGE_TEMP_COEFF_PER_C: f64 = std::f64::consts::LN_2 / 35.0;

/// C·V²·f·activity in mW, C in µW/MHz/V² (the Linux Energy Model's formula at activity 1).
pub fn dynamic_mw(coefficient: f64, voltage_v: f64, freq_khz: u32, activity: f64) -> f64 {
    coefficient * voltage_v * voltage_v * (freq_khz as f64 / 1000.0) * activity / 1000.0
}

/// Dynamic power one core draws, mW, at `activity` (1 = fully busy): its measured
/// coefficient where the platform gives one, else the device tree's.
pub fn core_dynamic_mw(core: &CoreType, voltage_v: f64, freq_khz: u32, activity: f64) -> f64 {
    let coefficient = core.measured_power_coefficient.unwrap_or(core.dynamic_power_coefficient);
    dynamic_mw(coefficient, voltage_v, freq_khz, activity)
}

/// Dynamic power of a powered cluster's shared logic (clock tree, L2, snoop control), mW: it
/// is clocked whether the cores run or wait in WFI.
pub fn cluster_clock_mw(cluster: &Cluster, voltage_v: f64, freq_khz: u32) -> f64 {
    dynamic_mw(cluster.clock_power_coefficient, voltage_v, freq_khz, 1.0)
}

/// Power of the snoops a powered cluster serves, mW: `lookups_per_us` reads from the other
/// clusters, each `snoop_lookup_energy_nj` at 1.0 V scaled by V² (1 nJ per µs is 1 mW).
pub fn snoop_lookup_mw(cluster: &Cluster, voltage_v: f64, lookups_per_us: f64) -> f64 {
    lookups_per_us * cluster.snoop_lookup_energy_nj * voltage_v * voltage_v
}

/// Switching activity of a core running a phase that spends `stall_share` of its time waiting
/// on memory.
pub fn activity(core: &CoreType, stall_share: f64) -> f64 {
    (1.0 - stall_share) + stall_share * core.stall_activity
}

/// Leakage of a powered cluster with `gated_cores` of its cores power-gated, mW: the
/// platform's value at 1.0 V and 25 °C less the gated cores' part of it
/// (`core_leakage_share`), scaled by V² (ASSUMPTION: leakage current roughly proportional to V
/// over the DVFS range) and doubling every ~35 °C (`LEAKAGE_TEMP_COEFF_PER_C`).
pub fn cluster_static_mw(cluster: &Cluster, voltage_v: f64, temp_c: f64, gated_cores: usize) -> f64 {
    let gated = cluster.core_leakage_share * gated_cores as f64 / cluster.cpus.len() as f64;
    cluster.leakage_mw * (1.0 - gated) * voltage_v * voltage_v * (LEAKAGE_TEMP_COEFF_PER_C * (temp_c - 25.0)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    #[test]
    fn dynamic_power_matches_the_energy_model_table() {
        // ref §2.1: A15 2000 MHz at 1.3125 V -> 1067.2 mW, A7 1400 MHz at 1.275 V -> 204.8 mW
        let p = Platform::builtin("exynos5422").unwrap();
        let a15 = dynamic_mw(p.core_type_of(1).dynamic_power_coefficient, 1.3125, 2_000_000, 1.0);
        let a7 = core_dynamic_mw(p.core_type_of(0), 1.275, 1_400_000, 1.0);
        assert!((a15 - 1067.9).abs() < 1.0, "{a15}");
        assert!((a7 - 204.8).abs() < 0.1, "{a7}");
    }

    #[test]
    fn a_measured_coefficient_is_what_the_core_draws() {
        let p = Platform::builtin("exynos5422").unwrap();
        let a15 = p.core_type_of(1);
        let measured = a15.measured_power_coefficient.unwrap();
        assert_ne!(measured, a15.dynamic_power_coefficient);
        assert_eq!(core_dynamic_mw(a15, 1.0, 1_000_000, 0.5), measured / 2.0);
    }

    #[test]
    fn the_clocked_shared_logic_follows_v_squared_f() {
        let mut p = Platform::builtin("exynos5422").unwrap();
        let c = &mut p.clusters[0];
        c.clock_power_coefficient = 40.0;
        // 40 µW/MHz/V² at 0.9 V and 700 MHz: 40 · 0.81 · 700 µW
        assert!((cluster_clock_mw(c, 0.9, 700_000) - 22.68).abs() < 1e-9);
        c.clock_power_coefficient = 0.0;
        assert_eq!(cluster_clock_mw(c, 1.3, 2_000_000), 0.0);
    }

    #[test]
    fn leakage_doubles_every_35_degrees() {
        let p = Platform::builtin("exynos5422").unwrap();
        let c = &p.clusters[1];
        let r = cluster_static_mw(c, 1.0, 60.0, 0) / cluster_static_mw(c, 1.0, 25.0, 0);
        assert!((r - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_gated_core_takes_its_share_of_the_leakage_away() {
        let mut p = Platform::builtin("exynos5433").unwrap();
        let c = &mut p.clusters[1];
        c.core_leakage_share = 0.5;
        let all = cluster_static_mw(c, 1.0, 25.0, 0);
        assert_eq!(all, c.leakage_mw);
        // 3 of 4 gated: the shared half and one core's eighth
        assert!((cluster_static_mw(c, 1.0, 25.0, 3) / all - 0.625).abs() < 1e-12);
    }
}
