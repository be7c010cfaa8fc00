//! `conservative` (drivers/cpufreq/cpufreq_conservative.c, 5.x `cs_dbs_update`).
//!
//! Walks a requested frequency up or down by `freq_step` percent of the policy max per sample,
//! so the clock moves gradually instead of jumping to max.

use super::dbs::{self, default_sampling_rate_us, DbsLoad};
use super::freq_table::{hold, resolve_in, Relation};
use super::tunables::{TunableDefault, TunableInfo, Values};
use super::{Decision, Governor, GovernorContext, GovernorDescriptor, PolicyView};

pub const DEFAULT_UP_THRESHOLD: u32 = 80;
pub const DEFAULT_DOWN_THRESHOLD: u32 = 20;
/// Percent of policy max per step.
pub const DEFAULT_FREQ_STEP: u32 = 5;
pub const MAX_SAMPLING_DOWN_FACTOR: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConservativeTunables {
    /// µs; `None`: max(2 ticks, transition delay), taken at start.
    pub sampling_rate_us: Option<u64>,
    /// Step up when load > up_threshold (%); must exceed down_threshold, <= 100.
    pub up_threshold: u32,
    /// Step down when load < down_threshold (%), 1..up_threshold.
    pub down_threshold: u32,
    /// Step size in percent of policy max, 0..=100 (0 freezes the frequency).
    pub freq_step: u32,
    /// Low-load samples needed per step down, 1..=10.
    pub sampling_down_factor: u32,
    pub ignore_nice_load: bool,
}

impl Default for ConservativeTunables {
    fn default() -> Self {
        ConservativeTunables {
            sampling_rate_us: None,
            up_threshold: DEFAULT_UP_THRESHOLD,
            down_threshold: DEFAULT_DOWN_THRESHOLD,
            freq_step: DEFAULT_FREQ_STEP,
            sampling_down_factor: 1,
            ignore_nice_load: false,
        }
    }
}

/// conservative's sysfs attributes (`cs_attrs[]`) with the ranges their `*_store` functions
/// accept.
pub fn tunables(tick_us: u64) -> Vec<TunableInfo> {
    vec![
        dbs::sampling_rate_tunable(tick_us),
        TunableInfo {
            name: "up_threshold",
            default: TunableDefault::Value(f64::from(DEFAULT_UP_THRESHOLD)),
            unit: "%",
            help: "Load above which the frequency steps up; must exceed down_threshold.",
            min: 1.0,
            max: 100.0,
        },
        TunableInfo {
            name: "down_threshold",
            default: TunableDefault::Value(f64::from(DEFAULT_DOWN_THRESHOLD)),
            unit: "%",
            help: "Load below which the frequency steps down; must be below up_threshold.",
            min: 1.0,
            max: 99.0,
        },
        TunableInfo {
            name: "freq_step",
            default: TunableDefault::Value(f64::from(DEFAULT_FREQ_STEP)),
            unit: "%",
            help: "Step size in percent of the policy max; 0 freezes the frequency.",
            min: 0.0,
            max: 100.0,
        },
        TunableInfo {
            name: "sampling_down_factor",
            default: TunableDefault::Value(1.0),
            unit: "",
            help: "Low-load samples needed for each step down.",
            min: 1.0,
            max: f64::from(MAX_SAMPLING_DOWN_FACTOR),
        },
        dbs::IGNORE_NICE_LOAD,
    ]
}

impl ConservativeTunables {
    /// The tunables given (checked against [`tunables`]) over the defaults. As
    /// `up_threshold_store` and `down_threshold_store` do, refuses down_threshold at or above
    /// up_threshold.
    pub fn from_values(v: &Values) -> Result<Self, String> {
        let d = ConservativeTunables::default();
        let c = ConservativeTunables {
            sampling_rate_us: dbs::sampling_rate_of(v),
            up_threshold: v.u32_or("up_threshold", d.up_threshold),
            down_threshold: v.u32_or("down_threshold", d.down_threshold),
            freq_step: v.u32_or("freq_step", d.freq_step),
            sampling_down_factor: v.u32_or("sampling_down_factor", d.sampling_down_factor),
            ignore_nice_load: dbs::ignore_nice_load_of(v),
        };
        if c.down_threshold >= c.up_threshold {
            return Err(format!(
                "{}: down_threshold ({}) must be below up_threshold ({})",
                v.governor, c.down_threshold, c.up_threshold
            ));
        }
        Ok(c)
    }
}

/// conservative as registered (`cs_governor`).
pub const DESCRIPTOR: GovernorDescriptor = GovernorDescriptor {
    name: "conservative",
    summary: "Linux conservative: moves freq_step % of max up on high load, down on low load.",
    tunables,
    build,
};

fn build(v: &Values, _: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    Ok(Box::new(Conservative::new(ConservativeTunables::from_values(v)?)))
}

pub struct Conservative {
    pub tunables: ConservativeTunables,
    sampling_rate_us: u64,
    dbs: DbsLoad,
    /// The frequency asked for last, kHz; not an OPP in general (steps accumulate).
    requested_khz: u32,
    /// Low-load samples seen since the last step down.
    down_skip: u32,
}

impl Conservative {
    pub fn new(tunables: ConservativeTunables) -> Self {
        Conservative {
            sampling_rate_us: tunables.sampling_rate_us.unwrap_or(0),
            tunables,
            dbs: DbsLoad::default(),
            requested_khz: 0,
            down_skip: 0,
        }
    }

    pub fn sampling_rate_us(&self) -> u64 {
        self.sampling_rate_us
    }

    /// The running request, kHz.
    pub fn requested_khz(&self) -> u32 {
        self.requested_khz
    }

    /// `cs_dbs_update`: the frequency to set, or `None` to leave it alone.
    fn update(&mut self, view: &PolicyView) -> Option<u32> {
        let t = self.tunables;
        let load = self.dbs.update(&view.cpus, self.sampling_rate_us, t.ignore_nice_load);
        if t.freq_step == 0 {
            return None;
        }
        let (min, max) = (view.policy_min_khz, view.upper_limit_khz());
        // A request outside the limits means they changed meanwhile: restart from the current.
        if self.requested_khz > max || self.requested_khz < min {
            self.requested_khz = view.cur_khz;
        }
        let mut requested = self.requested_khz;
        let freq_step = match (u64::from(t.freq_step) * u64::from(max) / 100) as u32 {
            0 => DEFAULT_FREQ_STEP, // "max freq cannot be less than 100. But who knows..."
            s => s,
        };

        // The policy slept through idle_periods samples without updating: make up for the
        // steps down it missed. (Like the kernel, this only sticks if a step follows.)
        if self.dbs.idle_periods < u32::MAX {
            let freq_steps = u64::from(self.dbs.idle_periods) * u64::from(freq_step);
            requested =
                if u64::from(requested) > u64::from(min) + freq_steps { requested - freq_steps as u32 } else { min };
            self.dbs.idle_periods = u32::MAX;
        }

        if load > t.up_threshold {
            self.down_skip = 0;
            if requested == max {
                return None;
            }
            requested = requested.saturating_add(freq_step).min(max);
            self.requested_khz = requested;
            return Some(resolve_in(view, requested, Relation::H));
        }

        self.down_skip += 1;
        if self.down_skip < t.sampling_down_factor {
            return None;
        }
        self.down_skip = 0;

        if load < t.down_threshold {
            if requested == min {
                return None;
            }
            requested = if requested > freq_step { requested - freq_step } else { min };
            self.requested_khz = requested;
            return Some(resolve_in(view, requested, Relation::L));
        }
        None
    }
}

impl Governor for Conservative {
    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.sampling_rate_us = self
            .tunables
            .sampling_rate_us
            .unwrap_or_else(|| default_sampling_rate_us(view.tick_us, view.transition_latency_ns));
        self.dbs.start();
        self.down_skip = 0;
        self.requested_khz = view.cur_khz;
        Decision { target_khz: hold(view), next_sample_us: self.sampling_rate_us }
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        let target_khz = self.update(view).unwrap_or_else(|| hold(view));
        // conservative has no rate_mult: always one sampling_rate
        Decision { target_khz, next_sample_us: self.sampling_rate_us }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{little_view, with_cpus, with_load};

    /// Run `loads` (one 10000 µs window each) feeding every decision back as the current
    /// frequency, as a host would; returns the targets.
    fn run(g: &mut Conservative, cur_khz: &mut u32, loads: &[u64]) -> Vec<u32> {
        loads
            .iter()
            .map(|&l| {
                let d = g.sample(&with_load(little_view(*cur_khz), l));
                *cur_khz = d.target_khz;
                d.target_khz
            })
            .collect()
    }

    #[test]
    fn steps_up_by_five_percent_of_max_with_relation_h() {
        // freq_step = 5 * 1400000 / 100 = 70000 kHz; requests 270000, 340000, 410000, 480000,
        // 550000, rounded down (RELATION_H) to 200000, 300000, 400000, 400000, 500000
        let mut cur = 200_000;
        let mut g = Conservative::new(ConservativeTunables::default());
        assert_eq!(g.start(&little_view(cur)), Decision { target_khz: 200_000, next_sample_us: 10_000 });
        assert_eq!(run(&mut g, &mut cur, &[90, 90, 90, 90, 90]), [200_000, 300_000, 400_000, 400_000, 500_000]);
        assert_eq!(g.requested_khz(), 550_000);
        // load 50 is between 20 and 80: nothing changes
        assert_eq!(run(&mut g, &mut cur, &[50]), [500_000]);
        // load 10 < 20: 550000 - 70000 = 480000, rounded up (RELATION_L) to 500000; then
        // 410000 -> 500000, 340000 -> 400000, 270000 -> 300000, 200000, then at min: stays
        assert_eq!(
            run(&mut g, &mut cur, &[10, 10, 10, 10, 10, 10]),
            [500_000, 500_000, 400_000, 300_000, 200_000, 200_000]
        );
        assert_eq!(g.requested_khz(), 200_000);
    }

    #[test]
    fn up_stops_at_policy_max_including_the_thermal_cap() {
        let mut g = Conservative::new(ConservativeTunables { freq_step: 50, ..Default::default() });
        let mut v = little_view(1_000_000);
        v.thermal_cap_khz = 1_100_000;
        g.start(&v);
        // step = 50% of 1100000 = 550000: 1000000 + 550000 -> capped at 1100000
        assert_eq!(g.sample(&with_load(v.clone(), 100)).target_khz, 1_100_000);
        assert_eq!(g.requested_khz(), 1_100_000);
        let mut v2 = v.clone();
        v2.cur_khz = 1_100_000;
        assert_eq!(g.sample(&with_load(v2, 100)).target_khz, 1_100_000);
    }

    #[test]
    fn sampling_down_factor_delays_steps_down() {
        let mut g = Conservative::new(ConservativeTunables { sampling_down_factor: 3, ..Default::default() });
        let mut cur = 800_000;
        g.start(&little_view(cur));
        // down only on every third low-load sample: 800000 - 70000 = 730000 -> L 800000,
        // then 660000 -> 700000
        assert_eq!(
            run(&mut g, &mut cur, &[10, 10, 10, 10, 10, 10]),
            [800_000, 800_000, 800_000, 800_000, 800_000, 700_000]
        );
        // a high load resets the count: 660000 + 70000 = 730000 -> H 700000; two lows wait and
        // the third steps 730000 - 70000 = 660000 -> L 700000
        assert_eq!(run(&mut g, &mut cur, &[90, 10, 10, 10]), [700_000, 700_000, 700_000, 700_000]);
        assert_eq!(g.requested_khz(), 660_000);
    }

    #[test]
    fn idle_periods_decay_the_request() {
        let mut g = Conservative::new(ConservativeTunables::default());
        let mut cur = 200_000;
        g.start(&little_view(cur));
        run(&mut g, &mut cur, &[90, 90, 90, 90, 90]);
        assert_eq!((g.requested_khz(), cur), (550_000, 500_000));
        // 40000 µs window, 35000 idle > 2 × 10000: idle_periods = 35000/10000 = 3 and the load
        // repeats the previous 90 once. Request: 550000 - 3*70000 = 340000, then up one step
        // 410000 -> H 400000.
        let long_idle = with_cpus(little_view(cur), &[(40_000, 35_000)]);
        assert_eq!(g.sample(&long_idle).target_khz, 400_000);
        assert_eq!(g.requested_khz(), 410_000);
        // Same window again: real load 100*5000/40000 = 12 < 20. The decay 410000 - 210000 is
        // not above min + 210000, so the request becomes min, and being at min there is no
        // step: the frequency stays and the stored request is unchanged, as in the kernel.
        let long_idle = with_cpus(little_view(400_000), &[(40_000, 35_000)]);
        assert_eq!(g.sample(&long_idle).target_khz, 400_000);
        assert_eq!(g.requested_khz(), 410_000);
    }

    #[test]
    fn zero_freq_step_freezes_and_changed_limits_restart_from_cur() {
        let mut g = Conservative::new(ConservativeTunables { freq_step: 0, ..Default::default() });
        g.start(&little_view(600_000));
        assert_eq!(g.sample(&with_load(little_view(600_000), 100)).target_khz, 600_000);

        let mut g = Conservative::new(ConservativeTunables::default());
        g.start(&little_view(1_400_000));
        let mut v = little_view(1_400_000);
        v.policy_max_khz = 1_000_000;
        // request 1400000 > new max: restart from cur 1400000, low load: 1400000 - 50000
        // (5% of 1000000) = 1350000 -> L within [200000, 1000000] -> 1000000
        assert_eq!(g.sample(&with_load(v, 0)).target_khz, 1_000_000);
        assert_eq!(g.requested_khz(), 1_350_000);
    }
}
