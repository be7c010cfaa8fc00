//! The energy account: every joule of a run is added here, by rail — each cluster (dynamic and
//! static), the DSU (a DynamIQ SoC's shared-unit domain), the DRAM, and the rest of the board (a constant draw charged by elapsed time) — and
//! the on-board sensors are read from the same rails.
//!
//! Power levels change only when the model is re-solved, so rails are integrated piecewise at
//! constant power; short kernel bursts on idle CPUs are added as energy directly
//! ([`EnergyAccount::add_dynamic_mj`]), because they last tens of µs.

use crate::result::Energy;

/// A cluster's power draw at the current operating point, mW.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterPower {
    /// Dynamic + static.
    pub total_mw: f64,
    pub static_mw: f64,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterEnergy {
    pub dynamic_mj: f64,
    pub static_mj: f64,
}

impl ClusterEnergy {
    pub fn dynamic_j(&self) -> f64 {
        self.dynamic_mj * 1e-3
    }
    pub fn static_j(&self) -> f64 {
        self.static_mj * 1e-3
    }
}

#[derive(Debug, Clone, Default)]
pub struct EnergyAccount {
    pub clusters: Vec<ClusterEnergy>,
    pub dram_mj: f64,
    pub dsu_mj: f64,
}

impl EnergyAccount {
    pub fn new(nclusters: usize) -> EnergyAccount {
        EnergyAccount { clusters: vec![ClusterEnergy::default(); nclusters], dram_mj: 0.0, dsu_mj: 0.0 }
    }

    /// Cluster `c` drew `power` for `dt_s` seconds.
    pub fn add_cluster(&mut self, c: usize, power: ClusterPower, dt_s: f64) {
        let e = &mut self.clusters[c];
        e.dynamic_mj += (power.total_mw - power.static_mw) * dt_s;
        e.static_mj += power.static_mw * dt_s;
    }

    /// A burst of switching on cluster `c` (kernel work on an otherwise idle CPU), mJ.
    pub fn add_dynamic_mj(&mut self, c: usize, mj: f64) {
        self.clusters[c].dynamic_mj += mj;
    }

    /// The DRAM drew `power_mw` for `dt_s` seconds.
    pub fn add_dram(&mut self, power_mw: f64, dt_s: f64) {
        self.dram_mj += power_mw * dt_s;
    }

    /// The DSU domain drew `power_mw` for `dt_s` seconds.
    pub fn add_dsu(&mut self, power_mw: f64, dt_s: f64) {
        self.dsu_mj += power_mw * dt_s;
    }

    /// The run's energy after `elapsed_us`, with the rest of the board drawing
    /// `board_power_mw` throughout, sensed rails the model does not simulate drawing
    /// `unmodelled_sensed_mw` (part of the board's draw), and `sensor_readings_mj` from the
    /// [`Sensors`].
    pub fn report(
        &self,
        board_power_mw: f64,
        unmodelled_sensed_mw: f64,
        elapsed_us: f64,
        sensor_readings_mj: f64,
    ) -> Energy {
        let clusters_j: Vec<f64> = self.clusters.iter().map(|c| c.dynamic_j() + c.static_j()).collect();
        let dram_j = self.dram_mj * 1e-3;
        let dsu_j = self.dsu_mj * 1e-3;
        let board_j = board_power_mw * elapsed_us * 1e-9;
        Energy {
            total_j: clusters_j.iter().sum::<f64>() + dsu_j + dram_j + board_j,
            sensors_j: clusters_j.iter().sum::<f64>() + dsu_j + dram_j + unmodelled_sensed_mw * elapsed_us * 1e-9,
            sensor_readings_j: sensor_readings_mj * 1e-3,
            clusters_j,
            dram_j,
            dsu_j,
            board_j,
        }
    }
}

/// The on-board power sensors (the Odroid-XU3's INA231s on the CPU-cluster and DRAM rails) as
/// the seed paper reads them (§5.2): every `period_us` the rails' power times the period is
/// added up, and the first reading after the benchmark ends is the last one counted.
#[derive(Debug, Clone)]
pub struct Sensors {
    pub period_us: f64,
    pub next_reading_us: f64,
    pub readings_mj: f64,
}

impl Sensors {
    pub fn new(period_us: u64) -> Sensors {
        Sensors { period_us: period_us as f64, next_reading_us: period_us as f64, readings_mj: 0.0 }
    }

    /// One reading of the rails, whose power is `rails_mw` now.
    pub fn read(&mut self, rails_mw: f64) {
        self.readings_mj += rails_mw * self.period_us * 1e-6;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rail_adds_up_to_the_total() {
        let mut a = EnergyAccount::new(2);
        a.add_cluster(0, ClusterPower { total_mw: 300.0, static_mw: 100.0 }, 2.0);
        a.add_dynamic_mj(1, 50.0);
        a.add_dram(60.0, 2.0);
        let e = a.report(1000.0, 0.0, 2e6, 700.0);
        assert!((e.clusters_j[0] - 0.6).abs() < 1e-12);
        assert!((a.clusters[0].static_j() - 0.2).abs() < 1e-12);
        assert!((e.clusters_j[1] - 0.05).abs() < 1e-12);
        assert!((e.dram_j - 0.12).abs() < 1e-12);
        assert!((e.board_j - 2.0).abs() < 1e-12);
        assert!((e.total_j - (0.6 + 0.05 + 0.12 + 2.0)).abs() < 1e-12);
        assert!((e.sensors_j - (0.6 + 0.05 + 0.12)).abs() < 1e-12);
        assert!((e.sensor_readings_j - 0.7).abs() < 1e-12);
    }

    #[test]
    fn a_reading_counts_the_power_for_a_whole_period() {
        let mut s = Sensors::new(263_808);
        s.read(1000.0);
        assert!((s.readings_mj - 263.808).abs() < 1e-9);
        assert_eq!(s.next_reading_us, 263_808.0);
    }
}
