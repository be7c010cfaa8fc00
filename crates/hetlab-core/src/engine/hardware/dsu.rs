//! The DSU's state in a run: its clock and voltage now (voted by the clusters or fixed,
//! `model::dsu::clock`), the L3 lookups per µs of the last solution, the power they and the
//! clock draw, and what is integrated over the run (clock x time, lookups) for its report. Its
//! energy goes into the one account (`model::energy`) through `Hardware::integrate`.

use crate::model::dsu;
use crate::platform::Dsu;
use crate::result::DsuReport;

#[derive(Debug, Clone, Default)]
pub(super) struct DsuHw {
    khz: u32,
    uv: u32,
    hits_per_us: f64,
    misses_per_us: f64,
    power_mw: f64,
    /// kHz x µs integrated, for the mean clock.
    khz_us: f64,
    elapsed_us: f64,
    hits: f64,
    misses: f64,
}

impl DsuHw {
    /// The clock (`khz`, `uv`) and the L3 lookups per µs of the last solution: the power now.
    pub fn set(&mut self, d: &Dsu, (khz, uv): (u32, u32), hits_per_us: f64, misses_per_us: f64) {
        self.khz = khz;
        self.uv = uv;
        self.hits_per_us = hits_per_us;
        self.misses_per_us = misses_per_us;
        self.power_mw = dsu::power_mw(d, khz, uv, hits_per_us, misses_per_us);
    }

    pub fn power_mw(&self) -> f64 {
        self.power_mw
    }

    /// `dt_us` more at the present rates.
    pub fn integrate(&mut self, dt_us: f64) {
        self.khz_us += self.khz as f64 * dt_us;
        self.elapsed_us += dt_us;
        self.hits += self.hits_per_us * dt_us;
        self.misses += self.misses_per_us * dt_us;
    }

    pub fn report(&self, energy_j: f64) -> DsuReport {
        DsuReport {
            avg_khz: if self.elapsed_us > 0.0 { self.khz_us / self.elapsed_us } else { self.khz as f64 },
            l3_hits: self.hits,
            l3_misses: self.misses,
            energy_j,
        }
    }
}
