//! The static governors: `performance` (policy max, cpufreq_performance.c), `powersave`
//! (policy min, cpufreq_powersave.c) and `userspace` (a fixed `scaling_setspeed`,
//! cpufreq_userspace.c). Linux only re-applies them when the limits change; here the host
//! samples them every default dbs sampling period so a new thermal cap takes effect within one
//! period.

use super::dbs::default_sampling_rate_us;
use super::freq_table::{resolve_in, Relation};
use super::tunables::{TunableDefault, TunableInfo, Values, U32_MAX};
use super::{Decision, Governor, GovernorContext, GovernorDescriptor, PolicyView};

fn recheck_us(view: &PolicyView) -> u64 {
    default_sampling_rate_us(view.tick_us, view.transition_latency_ns)
}

fn no_tunables(_tick_us: u64) -> Vec<TunableInfo> {
    vec![]
}

/// performance as registered (`cpufreq_gov_performance`).
pub const PERFORMANCE: GovernorDescriptor = GovernorDescriptor {
    name: "performance",
    summary: "Runs at the policy max (within the thermal cap).",
    tunables: no_tunables,
    build: |_, _| Ok(Box::new(Performance)),
};

/// powersave as registered (`cpufreq_gov_powersave`).
pub const POWERSAVE: GovernorDescriptor = GovernorDescriptor {
    name: "powersave",
    summary: "Runs at the policy min.",
    tunables: no_tunables,
    build: |_, _| Ok(Box::new(Powersave)),
};

/// userspace as registered (`cpufreq_gov_userspace`). Its one attribute is the cpufreq core's
/// `scaling_setspeed`, named with its unit here.
pub const USERSPACE: GovernorDescriptor = GovernorDescriptor {
    name: "userspace",
    summary: "Holds the frequency given in setspeed_khz (scaling_setspeed), rounded up to an OPP.",
    tunables: userspace_tunables,
    build: build_userspace,
};

fn userspace_tunables(_tick_us: u64) -> Vec<TunableInfo> {
    vec![TunableInfo {
        name: "setspeed_khz",
        default: TunableDefault::Policy("the current frequency at start"),
        unit: "kHz",
        help: "Frequency to hold (sysfs scaling_setspeed); clamped to the policy limits.",
        min: 1.0,
        max: U32_MAX,
    }]
}

fn build_userspace(v: &Values, _: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    Ok(Box::new(Userspace::new(v.get("setspeed_khz").map(|x| x as u32))))
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Performance;

impl Governor for Performance {
    fn name(&self) -> &'static str {
        PERFORMANCE.name
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
        POWERSAVE.name
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
        USERSPACE.name
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
