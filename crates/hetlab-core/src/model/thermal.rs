//! Temperature and passive cooling: one RC node per cluster driven by its power, and the
//! step-wise thermal governor's trip points capping each cluster's frequency.

use crate::platform::{Cluster, Platform};

/// Temperature after `dt_s` seconds of constant `power_mw` through one RC node:
/// T → T_ss + (T - T_ss)·exp(-dt/RC), T_ss = ambient + P·R.
pub fn rc_step(temp_c: f64, ambient_c: f64, power_mw: f64, cluster: &Cluster, dt_s: f64) -> f64 {
    rc_step_decayed(temp_c, ambient_c, power_mw, cluster, decay(tau_s(cluster), dt_s))
}

/// The node's time constant RC, s.
#[inline]
pub fn tau_s(cluster: &Cluster) -> f64 {
    cluster.thermal_resistance_c_per_w * cluster.thermal_capacitance_j_per_c
}

/// exp(-dt/RC): how much of the distance to the steady state is left after `dt_s` seconds.
#[inline]
pub fn decay(tau_s: f64, dt_s: f64) -> f64 {
    (-dt_s / tau_s).exp()
}

/// `rc_step` with its `decay` worked out already (clusters with the same time constant share it).
#[inline]
fn rc_step_decayed(temp_c: f64, ambient_c: f64, power_mw: f64, cluster: &Cluster, decay: f64) -> f64 {
    let steady = ambient_c + power_mw / 1000.0 * cluster.thermal_resistance_c_per_w;
    steady + (temp_c - steady) * decay
}

/// One cluster's thermal node.
#[derive(Debug, Clone)]
pub struct ThermalNode {
    pub temp_c: f64,
    pub peak_temp_c: f64,
    /// ∫T dt (°C·s) and the time it covers: the run's mean temperature.
    temp_c_s: f64,
    time_s: f64,
}

impl ThermalNode {
    pub fn at(temp_c: f64) -> ThermalNode {
        ThermalNode { temp_c, peak_temp_c: temp_c, temp_c_s: 0.0, time_s: 0.0 }
    }

    /// Mean temperature over the steps so far (the start temperature before any).
    pub fn mean_temp_c(&self) -> f64 {
        if self.time_s > 0.0 {
            self.temp_c_s / self.time_s
        } else {
            self.temp_c
        }
    }

    /// `dt_s` seconds at `power_mw`.
    pub fn step(&mut self, ambient_c: f64, power_mw: f64, cluster: &Cluster, dt_s: f64) {
        self.step_decayed(ambient_c, power_mw, cluster, dt_s, decay(tau_s(cluster), dt_s));
    }

    /// `step` with `decay(tau_s(cluster), dt_s)` given.
    #[inline]
    pub fn step_decayed(&mut self, ambient_c: f64, power_mw: f64, cluster: &Cluster, dt_s: f64, decay: f64) {
        let before = self.temp_c;
        self.temp_c = rc_step_decayed(self.temp_c, ambient_c, power_mw, cluster, decay);
        // trapezoid: the steps are short next to the node's time constant
        self.temp_c_s += 0.5 * (before + self.temp_c) * dt_s;
        self.time_s += dt_s;
        self.peak_temp_c = self.peak_temp_c.max(self.temp_c);
    }
}

/// Step-wise passive cooling: the frequency cap of cluster `c` when the thermal zone is at
/// `zone_c` — the lowest cap of every trip the zone has reached (the cluster's max if none).
pub fn trip_cap_khz(platform: &Platform, c: usize, zone_c: f64) -> u32 {
    let cluster = &platform.clusters[c];
    let mut cap = cluster.max_khz();
    for trip in &platform.thermal.trips {
        if zone_c >= trip.temp_c {
            if let Some(&k) = trip.caps_khz.get(&cluster.name) {
                cap = cap.min(k);
            }
        }
    }
    cap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rc_node_relaxes_towards_steady_state() {
        let p = Platform::builtin("exynos5422").unwrap();
        let big = &p.clusters[1];
        let t_inf = rc_step(35.0, 35.0, 2000.0, big, 1e6);
        assert!((t_inf - (35.0 + 2.0 * big.thermal_resistance_c_per_w)).abs() < 1e-9);
        let tau = big.thermal_resistance_c_per_w * big.thermal_capacitance_j_per_c;
        let t1 = rc_step(35.0, 35.0, 2000.0, big, tau);
        assert!(((t1 - 35.0) / (t_inf - 35.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-9);
        let mut node = ThermalNode::at(35.0);
        node.step(35.0, 2000.0, big, tau);
        node.step(35.0, 0.0, big, tau);
        assert_eq!(node.peak_temp_c, t1);
        assert!(node.temp_c < t1);
        // the mean lies between the start and the peak, and before any step it is the start
        assert_eq!(ThermalNode::at(35.0).mean_temp_c(), 35.0);
        assert!(node.mean_temp_c() > 35.0 && node.mean_temp_c() < t1);
    }

    #[test]
    fn the_note_4_trips_cap_both_clusters() {
        // exynos5433.dtsi's throttle_table: 90 °C big 1.5 GHz, 95 °C big 900 MHz and LITTLE 1 GHz
        let p = Platform::builtin("exynos5433").unwrap();
        let (little, big) = (p.cluster_index("little").unwrap(), p.cluster_index("big").unwrap());
        assert_eq!(trip_cap_khz(&p, big, 90.0), 1_500_000);
        assert_eq!(trip_cap_khz(&p, big, 95.0), 900_000);
        assert_eq!(trip_cap_khz(&p, little, 95.0), 1_000_000);
        assert_eq!(trip_cap_khz(&p, little, 100.0), 400_000);
    }

    #[test]
    fn trips_cap_by_cluster_name() {
        // exynos5422: 70 °C caps big at 1.8 GHz and LITTLE at 1.2 GHz, 85 °C big at 600 MHz
        let p = Platform::builtin("exynos5422").unwrap();
        let (little, big) = (p.cluster_index("little").unwrap(), p.cluster_index("big").unwrap());
        assert_eq!(trip_cap_khz(&p, big, 69.9), 2_000_000);
        assert_eq!(trip_cap_khz(&p, big, 70.0), 1_800_000);
        assert_eq!(trip_cap_khz(&p, little, 75.0), 1_200_000);
        assert_eq!(trip_cap_khz(&p, big, 90.0), 600_000);
    }
}
