//! OS jitter: kernel housekeeping wakes each online CPU at random (a Poisson process) for a
//! short burst (timers, RCU, vmstat). Bursts are tens of µs against 10 ms governor samples, so
//! the engine charges each at once as stolen time rather than simulating it as two events: a
//! running thread needs that much longer; an idle CPU is busy for the burst.
//! Rates: the platform's `noise` section; a mean burst of 0 µs means no jitter at all (an
//! abstract platform such as LinSched's has none).

use crate::platform::Noise;
use crate::random::{exp_sample, Rng};

/// When each CPU's next burst is due.
#[derive(Debug, Clone)]
pub struct Jitter {
    next_burst_us: Vec<f64>,
    /// The earliest of them (the engine asks at every event).
    earliest_us: f64,
}

impl Jitter {
    /// First bursts of the `online` CPUs (offline ones have none), drawn in CPU order.
    pub fn new(noise: &Noise, online: &[bool], rng: &mut Rng) -> Jitter {
        let jitter = noise.kernel_wakeup_mean_busy_us > 0;
        let next_burst_us = online
            .iter()
            .map(|&on| {
                if on && jitter {
                    exp_sample(rng, noise.kernel_wakeup_mean_interval_us as f64)
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let mut jitter = Jitter { next_burst_us, earliest_us: f64::INFINITY };
        jitter.earliest_us = jitter.earliest();
        jitter
    }

    fn earliest(&self) -> f64 {
        // (never NaN: a plain comparison)
        self.next_burst_us.iter().copied().fold(f64::INFINITY, |a, b| if b < a { b } else { a })
    }

    /// The earliest next burst of any CPU, µs.
    pub fn earliest_burst_us(&self) -> f64 {
        self.earliest_us
    }

    pub fn next_burst_us(&self, cpu: usize) -> f64 {
        self.next_burst_us[cpu]
    }

    /// The first CPU at or after `cpu` whose burst is due by `by_us`.
    #[inline]
    pub fn first_due_from(&self, cpu: usize, by_us: f64) -> Option<usize> {
        let later = self.next_burst_us.get(cpu..)?;
        later.iter().position(|&at| at <= by_us).map(|i| cpu + i)
    }

    /// Every CPU's next burst, µs, in CPU order.
    pub fn next_bursts_us(&self) -> &[f64] {
        &self.next_burst_us
    }

    /// The burst due on `cpu` at `now_us`: its length (plus `exit_us`, the idle-state exit
    /// latency the CPU pays first), and the next burst scheduled after it.
    pub fn burst(&mut self, cpu: usize, now_us: f64, exit_us: f64, noise: &Noise, rng: &mut Rng) -> f64 {
        let busy_us = exp_sample(rng, noise.kernel_wakeup_mean_busy_us as f64) + exit_us;
        let gap_us = exp_sample(rng, noise.kernel_wakeup_mean_interval_us as f64);
        self.next_burst_us[cpu] = now_us + busy_us + gap_us;
        self.earliest_us = self.earliest();
        busy_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::random::SeedableRng;

    #[test]
    fn bursts_arrive_at_the_platforms_mean_rate() {
        let noise = Platform::builtin("exynos5422").unwrap().noise;
        let mut rng = Rng::seed_from_u64(7);
        let mut j = Jitter::new(&noise, &[true, false], &mut rng);
        assert_eq!(j.next_burst_us(1), f64::INFINITY);
        let (mut now, mut busy, n) = (j.next_burst_us(0), 0.0, 20_000);
        for _ in 0..n {
            busy += j.burst(0, now, 0.0, &noise, &mut rng);
            now = j.next_burst_us(0);
            assert_eq!(j.earliest_burst_us(), now);
        }
        // mean gap 50 ms + mean burst 30 µs, mean burst 30 µs (within 3 %)
        let mean_cycle = now / (n + 1) as f64;
        assert!((mean_cycle / 50_030.0 - 1.0).abs() < 0.03, "{mean_cycle}");
        assert!((busy / n as f64 / 30.0 - 1.0).abs() < 0.03);
    }

    #[test]
    fn no_bursts_when_the_mean_burst_is_zero() {
        let mut noise = Platform::builtin("exynos5422").unwrap().noise;
        noise.kernel_wakeup_mean_busy_us = 0;
        let mut rng = Rng::seed_from_u64(7);
        let j = Jitter::new(&noise, &[true, true], &mut rng);
        assert_eq!(j.next_bursts_us(), &[f64::INFINITY, f64::INFINITY]);
        assert_eq!(j.earliest_burst_us(), f64::INFINITY);
    }
}
