//! Per-entity load tracking: the utilisation signal of a task or a CPU, as the kernel's PELT
//! shapes it (a geometric series over 1024 µs periods with y^32 = 1/2, frequency- and
//! capacity-invariant: running time counts as `1024 · f/f_max · capacity/1024`).
//!
//! This is the continuous equivalent (time constant 32 · 1024 µs / ln 2), updated lazily in
//! closed form like the kernel's `___update_load_sum`: an entity is brought up to date only when
//! what it contributes changes (it starts or stops running, its CPU's frequency changes) or
//! when someone reads it, so a sleeping task costs nothing per event.

/// y^32 = 1/2 with 1024 µs periods: the continuous time constant, µs.
pub const PELT_TAU_US: f64 = 32.0 * 1024.0 / std::f64::consts::LN_2;

/// Full scale of the signal (SCHED_CAPACITY_SCALE).
pub const SCALE: f64 = 1024.0;

/// One entity's utilisation signal.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Util {
    value: f64,
    last_update_us: f64,
}

impl Util {
    /// The signal at `now_us` if the entity contributed `contribution` (0 when not running,
    /// else `SCALE · f/f_max · capacity/SCALE`) since its last update.
    pub fn at(&self, now_us: f64, contribution: f64) -> f64 {
        let dt = now_us - self.last_update_us;
        if dt <= 0.0 {
            return self.value;
        }
        let decay = (-dt / PELT_TAU_US).exp();
        self.value * decay + contribution * (1.0 - decay)
    }

    /// Brings the signal up to `now_us` (see [`at`](Self::at)).
    pub fn update(&mut self, now_us: f64, contribution: f64) {
        self.value = self.at(now_us, contribution);
        self.last_update_us = self.last_update_us.max(now_us);
    }

    /// `busy_us` of work at `contribution` charged at once, at `now_us` (a short kernel burst
    /// on an idle CPU, charged as it starts rather than simulated as two events).
    pub fn add_burst(&mut self, now_us: f64, busy_us: f64, contribution: f64) {
        self.update(now_us, 0.0);
        self.value += (contribution - self.value) * (1.0 - (-busy_us / PELT_TAU_US).exp());
    }

    /// The value at the last update.
    pub fn value(&self) -> f64 {
        self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_entity_reaches_half_scale_in_32_periods_and_decays_back() {
        let mut u = Util::default();
        u.update(32.0 * 1024.0, SCALE);
        assert!((u.value() - 512.0).abs() < 1e-9);
        // asleep for another 32 periods: half again
        assert!((u.at(64.0 * 1024.0, 0.0) - 256.0).abs() < 1e-9);
        // lazy updates in pieces give the closed form's value
        let mut pieces = Util::default();
        for k in 1..=32 {
            pieces.update(k as f64 * 1024.0, SCALE);
        }
        assert!((pieces.value() - u.value()).abs() < 1e-9);
    }

    #[test]
    fn invariance_scales_the_contribution() {
        // an A7 at 1.4 GHz (capacity 377) saturates at 377, not 1024
        let mut u = Util::default();
        u.update(1e9, 377.0);
        assert!((u.value() - 377.0).abs() < 1e-6);
        let mut b = Util::default();
        b.add_burst(0.0, PELT_TAU_US, SCALE);
        assert!((b.value() - SCALE * (1.0 - (-1.0f64).exp())).abs() < 1e-9);
    }
}
