//! DRAM: the latency of a line fetch under load (M/D/1 queueing on the sustained bandwidth),
//! the utilisation that the running threads' demand and that latency settle on, the DRAM
//! rail's power, and the slow variation of the idle latency (refresh, bank conflicts).

use crate::platform::Dram;

/// Bytes moved per DRAM transfer: one cache line (64 B on every supported core type).
pub const LINE_BYTES: f64 = 64.0;

/// Most of the bandwidth queueing is allowed to use: the M/D/1 wait grows without bound at 1.
const MAX_UTILISATION: f64 = 0.995;

/// Sustained bandwidth in lines per ns.
pub fn capacity_lines_per_ns(dram: &Dram) -> f64 {
    dram.peak_bandwidth_mb_s * dram.bandwidth_efficiency * 1e6 / LINE_BYTES / 1e9
}

/// How much longer every instruction takes when the threads together ask for more lines per
/// µs than the sustained bandwidth delivers (the controller serves them in turn): 1 when
/// demand fits, demand / capacity otherwise.
pub fn bandwidth_stretch(demand_lines_per_us: f64, capacity_lines_per_us: f64) -> f64 {
    if demand_lines_per_us > capacity_lines_per_us {
        demand_lines_per_us / capacity_lines_per_us
    } else {
        1.0
    }
}

/// DRAM latency with queueing: M/D/1 waiting time on the sustained bandwidth.
/// `utilisation` is demand over sustained bandwidth, kept below 1 by [`solve_utilisation`].
pub fn latency_ns(idle_ns: f64, line_service_ns: f64, utilisation: f64) -> f64 {
    let rho = utilisation.clamp(0.0, MAX_UTILISATION);
    idle_ns + line_service_ns * rho / (2.0 * (1.0 - rho))
}

/// The utilisation at which demand meets latency: `demand(rho)` is the utilisation the
/// running threads cause when DRAM runs at `rho` (it falls as latency rises). Fixed-point
/// iteration from `warm_start` (the previous solution: rates change little between events);
/// bisection when that does not settle (heavy traffic, where the map is steep).
pub fn solve_utilisation(warm_start: f64, demand: impl Fn(f64) -> f64) -> f64 {
    let mut rho = warm_start.min(MAX_UTILISATION);
    for _ in 0..8 {
        let next = demand(rho).min(MAX_UTILISATION);
        let done = (next - rho).abs() <= 1e-9 * rho.max(1e-6);
        rho = next;
        if done {
            return rho;
        }
    }
    let (mut lo, mut hi) = (0.0, demand(0.0).min(MAX_UTILISATION));
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if demand(mid) > mid {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// DRAM rail power: background plus the energy of the lines moved, mW.
pub fn power_mw(dram: &Dram, lines_per_us: f64) -> f64 {
    // lines/µs x 1e6 = lines/s; x nJ x 1e-6 = mW
    dram.background_power_mw + lines_per_us * 1e6 * dram.energy_per_line_nj * 1e-6
}

/// The DRAM's state during a run.
#[derive(Debug, Clone)]
pub struct DramState {
    /// Factor on the idle latency in the current noise epoch.
    pub noise: f64,
    pub next_noise_us: f64,
    /// Utilisation found by the last solution (warm start of the next).
    pub utilisation: f64,
    /// Lines moved so far, and their current rate.
    pub lines: f64,
    pub lines_per_us: f64,
}

impl Default for DramState {
    fn default() -> Self {
        DramState { noise: 1.0, next_noise_us: 0.0, utilisation: 0.0, lines: 0.0, lines_per_us: 0.0 }
    }
}

impl DramState {
    pub fn integrate(&mut self, dt_us: f64) {
        self.lines += self.lines_per_us * dt_us;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    #[test]
    fn demand_past_the_sustained_bandwidth_stretches_every_instruction() {
        assert_eq!(bandwidth_stretch(100.0, 150.0), 1.0);
        assert_eq!(bandwidth_stretch(300.0, 150.0), 2.0);
    }

    #[test]
    fn queueing_grows_latency() {
        assert_eq!(latency_ns(145.0, 7.0, 0.0), 145.0);
        // rho = 0.5: wait = 7 * 0.5 / 1 = 3.5 ns
        assert!((latency_ns(145.0, 7.0, 0.5) - 148.5).abs() < 1e-12);
        assert!(latency_ns(145.0, 7.0, 0.99) > 400.0);
    }

    #[test]
    fn utilisation_settles_where_demand_meets_latency() {
        // demand falls with latency: d(rho) = 0.9 / (1 + rho); fixed point rho^2 + rho - 0.9 = 0
        let rho = solve_utilisation(0.0, |rho| 0.9 / (1.0 + rho));
        assert!((rho - (-1.0 + (1.0f64 + 3.6).sqrt()) / 2.0).abs() < 1e-6, "{rho}");
        // saturating demand never exceeds the cap
        assert!(solve_utilisation(0.5, |_| 5.0) <= MAX_UTILISATION);
    }

    #[test]
    fn bandwidth_and_power_from_the_platform() {
        let p = Platform::builtin("exynos5422").unwrap();
        // 13.2 GB/s x 0.7 / 64 B = 0.144 lines per ns
        assert!((capacity_lines_per_ns(&p.dram) - 0.144375).abs() < 1e-12);
        // 60 mW + 1 line/µs x 15 nJ = 75 mW
        assert!((power_mw(&p.dram, 1.0) - 75.0).abs() < 1e-12);
    }
}
