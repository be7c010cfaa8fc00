//! Run-to-run variation of a phase's amount: a real board never does the same page twice. A
//! work phase's instructions are scaled by a log-normal factor of mean 1 and a given coefficient
//! of variation, a sleep ends late by a uniform delay (a timer's callback waits for its event
//! loop); both are drawn each time a thread enters the phase, from the run's seeded stream, so
//! the same seed repeats the run byte for byte. The parameters come from the workload file
//! (`instructions_cv`, `sleep_late_max_us`), where each cites its source.

use crate::random::{normal_sample, uniform, Rng};

/// Largest coefficient of variation a work phase may take (a spread of 100 % of the mean).
pub const MAX_INSTRUCTIONS_CV: f64 = 1.0;

/// How much a phase's amount varies from one entry to the next; zero: not at all (and no draw
/// is made, so a workload without spread keeps its random stream).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// Coefficient of variation (std / mean) of a work phase's instructions.
    pub instructions_cv: f64,
    /// A sleep ends late by up to this long, uniformly, µs.
    pub sleep_late_max_us: f64,
}

impl Spread {
    pub const NONE: Spread = Spread { instructions_cv: 0.0, sleep_late_max_us: 0.0 };

    /// The instructions of this entry: `instructions` times a log-normal factor of mean 1 and
    /// coefficient of variation `instructions_cv` (sigma² = ln(1 + cv²), mu = -sigma²/2).
    pub fn instructions(&self, rng: &mut Rng, instructions: f64) -> f64 {
        if self.instructions_cv <= 0.0 {
            return instructions;
        }
        let sigma2 = (1.0 + self.instructions_cv * self.instructions_cv).ln();
        instructions * (-0.5 * sigma2 + sigma2.sqrt() * normal_sample(rng)).exp()
    }

    /// The length of this entry's sleep, µs.
    pub fn sleep_us(&self, rng: &mut Rng, duration_us: f64) -> f64 {
        if self.sleep_late_max_us <= 0.0 {
            return duration_us;
        }
        duration_us + uniform(rng, self.sleep_late_max_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SeedableRng as _;

    fn draws(spread: Spread, seed: u64, n: usize) -> Vec<f64> {
        let mut rng = Rng::seed_from_u64(seed);
        (0..n).map(|_| spread.instructions(&mut rng, 1e6)).collect()
    }

    #[test]
    fn the_factor_has_mean_one_and_the_files_cv() {
        for cv in [0.05, 0.2, 0.5] {
            let x = draws(Spread { instructions_cv: cv, ..Spread::NONE }, 7, 200_000);
            let mean = x.iter().sum::<f64>() / x.len() as f64;
            let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
            assert!((mean / 1e6 - 1.0).abs() < 0.01, "cv {cv}: mean {mean}");
            assert!((sd / mean - cv).abs() < 0.02 * cv.max(0.1), "cv {cv}: sample cv {}", sd / mean);
        }
    }

    #[test]
    fn same_seed_same_draws_other_seed_other_draws() {
        let s = Spread { instructions_cv: 0.1, sleep_late_max_us: 2000.0 };
        assert_eq!(draws(s, 3, 50), draws(s, 3, 50));
        assert_ne!(draws(s, 3, 50), draws(s, 4, 50));
    }

    #[test]
    fn a_sleep_ends_late_within_the_bound_and_none_draws_nothing() {
        let s = Spread { sleep_late_max_us: 2000.0, ..Spread::NONE };
        let mut rng = Rng::seed_from_u64(1);
        for _ in 0..1000 {
            let d = s.sleep_us(&mut rng, 10_000.0);
            assert!((10_000.0..12_000.0).contains(&d), "{d}");
        }
        let (mut a, b) = (Rng::seed_from_u64(1), Rng::seed_from_u64(1));
        assert_eq!(Spread::NONE.instructions(&mut a, 5.0), 5.0);
        assert_eq!(Spread::NONE.sleep_us(&mut a, 5.0), 5.0);
        assert_eq!(a, b, "no spread, no draw");
    }
}
