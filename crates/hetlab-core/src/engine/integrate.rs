//! Between changes: the per-cluster and DRAM quantities (energy, temperature, OPP residency,
//! CCI port counters, DRAM lines) only change rate when the model is re-solved or a frequency
//! is set, so they are integrated lazily, right before a change or a read, instead of at every
//! event. Every joule goes through `model::energy`.

use super::Engine;
use crate::model::dram;

impl Engine<'_> {
    /// Integrates the cluster and DRAM quantities up to now.
    pub(super) fn integrate(&mut self) {
        let dt = self.now_us - self.hw.integrated_until_us;
        if dt <= 0.0 {
            return;
        }
        let dt_s = dt * 1e-6;
        let ambient_c = self.platform.thermal.ambient_c;
        for (c, cl) in self.hw.clusters.iter_mut().enumerate() {
            self.hw.energy.add_cluster(c, cl.power, dt_s);
            // A cluster no CPU is online on (hotplugged off, or left by the switcher) has no
            // cpufreq policy clocking it: no time in any state.
            if cl.online {
                cl.residency_us[cl.cur_opp] += dt;
                cl.khz_us += cl.cur_khz as f64 * dt;
            } else {
                cl.offline_us += dt;
            }
            cl.thermal.step(ambient_c, cl.power.total_mw, &self.platform.clusters[c], dt_s);
            if let Some(port) = &mut cl.port {
                port.integrate(dt);
            }
        }
        self.hw.dram.integrate(dt);
        self.hw.energy.add_dram(self.dram_power_mw(), dt_s);
        self.hw.integrated_until_us = self.now_us;
    }

    fn dram_power_mw(&self) -> f64 {
        dram::power_mw(&self.platform.dram, self.hw.dram.lines_per_us)
    }

    /// One reading of the on-board sensors: the CPU-cluster and DRAM rails' power now, and the
    /// rails sensed but not simulated.
    pub(super) fn read_sensors(&mut self) {
        let rails_mw = self.hw.clusters.iter().map(|c| c.power.total_mw).sum::<f64>()
            + self.dram_power_mw()
            + self.platform.sensors.unmodelled_rails_mw;
        self.hw.sensors.read(rails_mw);
    }
}
