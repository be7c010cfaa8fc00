//! The static governors: `performance` (policy max), `powersave` (policy min) and `userspace`
//! (a fixed `scaling_setspeed`). Linux only re-applies them when the limits change; here the
//! host samples them every default dbs sampling period so a new thermal cap takes effect
//! within one period.

use super::dbs::default_sampling_rate_us;
use super::freq_table::{resolve_in, Relation};
use super::{Decision, Governor, PolicyView};

fn recheck_us(view: &PolicyView) -> u64 {
    default_sampling_rate_us(view.transition_latency_ns)
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Performance;

impl Governor for Performance {
    fn name(&self) -> &'static str {
        "performance"
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.sample(view)
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        Decision { target_khz: resolve_in(view, view.upper_limit_khz(), Relation::H), next_sample_us: recheck_us(view) }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Powersave;

impl Governor for Powersave {
    fn name(&self) -> &'static str {
        "powersave"
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.sample(view)
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        Decision { target_khz: resolve_in(view, view.policy_min_khz, Relation::L), next_sample_us: recheck_us(view) }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Userspace {
    /// `scaling_setspeed`, kHz; `None` until start, which takes the current frequency.
    pub setspeed_khz: Option<u32>,
}

impl Userspace {
    pub fn new(setspeed_khz: Option<u32>) -> Self {
        Userspace { setspeed_khz }
    }
}

impl Governor for Userspace {
    fn name(&self) -> &'static str {
        "userspace"
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.setspeed_khz.get_or_insert(view.cur_khz);
        self.sample(view)
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        // cpufreq_set: RELATION_L, so a speed between OPPs rounds up; the limits clamp it.
        let setspeed = self.setspeed_khz.unwrap_or(view.cur_khz);
        Decision { target_khz: resolve_in(view, setspeed, Relation::L), next_sample_us: recheck_us(view) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::little_view;

    #[test]
    fn performance_and_powersave_follow_the_limits() {
        let mut v = little_view(600_000);
        assert_eq!(Performance.start(&v), Decision { target_khz: 1_400_000, next_sample_us: 10_000 });
        assert_eq!(Powersave.start(&v), Decision { target_khz: 200_000, next_sample_us: 10_000 });
        v.thermal_cap_khz = 1_050_000;
        v.policy_min_khz = 350_000;
        // cap 1050000 -> highest OPP <= it: 1000000; min 350000 -> lowest OPP >= it: 400000
        assert_eq!(Performance.sample(&v).target_khz, 1_000_000);
        assert_eq!(Powersave.sample(&v).target_khz, 400_000);
    }

    #[test]
    fn userspace_holds_setspeed_or_the_start_frequency() {
        let v = little_view(600_000);
        let mut g = Userspace::new(None);
        assert_eq!(g.start(&v).target_khz, 600_000);
        assert_eq!(g.sample(&little_view(1_400_000)).target_khz, 600_000);
        // 850000 rounds up to 900000; a cap of 700000 clamps it
        let mut g = Userspace::new(Some(850_000));
        assert_eq!(g.start(&v).target_khz, 900_000);
        let mut capped = little_view(900_000);
        capped.thermal_cap_khz = 700_000;
        assert_eq!(g.sample(&capped).target_khz, 700_000);
        assert_eq!(Userspace::new(Some(1)).start(&v).target_khz, 200_000);
    }
}
