//! The run's random numbers: one seeded ChaCha8 stream per run, drawn in event order, so the
//! same seed gives the same run whatever executes it.

use rand::Rng as _;
pub use rand::SeedableRng;
pub type Rng = rand_chacha::ChaCha8Rng;

/// An exponential variate with mean `mean`.
pub fn exp_sample(rng: &mut Rng, mean: f64) -> f64 {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    -mean * u.ln()
}

/// A standard normal variate (Box-Muller).
pub fn normal_sample(rng: &mut Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A uniform variate in `[0, hi)`.
pub fn uniform(rng: &mut Rng, hi: f64) -> f64 {
    rng.gen_range(0.0..hi)
}
