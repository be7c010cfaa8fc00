//! `ondemand` (drivers/cpufreq/cpufreq_ondemand.c, Linux >= 3.17 `od_update`).
//!
//! Above `up_threshold` the policy goes straight to its max and stays there for
//! `sampling_down_factor` periods; otherwise the frequency is proportional to the load over the
//! whole cpuinfo range, rounded to the closest OPP.

use super::dbs::{self, default_sampling_rate_us, DbsLoad};
use super::freq_table::{hold, resolve_in, Relation};
use super::tunables::{TunableDefault, TunableInfo, Values};
use super::{Decision, Governor, GovernorContext, GovernorDescriptor, PolicyView};

/// `MICRO_FREQUENCY_UP_THRESHOLD`: used whenever NO_HZ idle micro-accounting works.
pub const DEFAULT_UP_THRESHOLD: u32 = 95;
pub const MAX_SAMPLING_DOWN_FACTOR: u32 = 100_000;
/// powersave_bias is in per-mille.
pub const MAX_POWERSAVE_BIAS: u32 = 1_000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OndemandTunables {
    /// µs; `None` means the kernel default, max(2 ticks, transition delay), taken at start.
    pub sampling_rate_us: Option<u64>,
    /// % load above which the policy goes to max (strictly greater), 1..=100.
    pub up_threshold: u32,
    /// Periods to stay at max once there (multiplies the sampling delay), 1..=100000.
    pub sampling_down_factor: u32,
    /// Per-mille frequency reduction, 0..=1000.
    pub powersave_bias: u32,
    /// Count time of nice > 0 tasks as idle.
    pub ignore_nice_load: bool,
}

impl Default for OndemandTunables {
    fn default() -> Self {
        OndemandTunables {
            sampling_rate_us: None,
            up_threshold: DEFAULT_UP_THRESHOLD,
            sampling_down_factor: 1,
            powersave_bias: 0,
            ignore_nice_load: false,
        }
    }
}

/// ondemand's sysfs attributes (`od_attrs[]`) with the ranges their `*_store` functions accept.
pub fn tunables(tick_us: u64) -> Vec<TunableInfo> {
    vec![
        dbs::sampling_rate_tunable(tick_us),
        TunableInfo {
            name: "up_threshold",
            default: TunableDefault::Value(f64::from(DEFAULT_UP_THRESHOLD)),
            unit: "%",
            help: "Load above which the policy goes to its max (95 = MICRO_FREQUENCY_UP_THRESHOLD).",
            min: 1.0,
            max: 100.0,
        },
        TunableInfo {
            name: "sampling_down_factor",
            default: TunableDefault::Value(1.0),
            unit: "",
            help: "Once at max, sample this many times less often before lowering.",
            min: 1.0,
            max: f64::from(MAX_SAMPLING_DOWN_FACTOR),
        },
        TunableInfo {
            name: "powersave_bias",
            default: TunableDefault::Value(0.0),
            unit: "‰",
            help: "Lower the target by this many per mille, averaging two OPPs within a period.",
            min: 0.0,
            max: f64::from(MAX_POWERSAVE_BIAS),
        },
        dbs::IGNORE_NICE_LOAD,
        TunableInfo {
            name: "io_is_busy",
            default: TunableDefault::Value(0.0),
            unit: "",
            help: "Fixed at 0 (the ARM default): iowait counts as idle; the view carries no separate iowait time.",
            min: 0.0,
            max: 0.0,
        },
    ]
}

impl OndemandTunables {
    /// The tunables given (checked against [`tunables`]) over the defaults.
    pub fn from_values(v: &Values) -> Self {
        let d = OndemandTunables::default();
        OndemandTunables {
            sampling_rate_us: dbs::sampling_rate_of(v),
            up_threshold: v.u32_or("up_threshold", d.up_threshold),
            sampling_down_factor: v.u32_or("sampling_down_factor", d.sampling_down_factor),
            powersave_bias: v.u32_or("powersave_bias", d.powersave_bias),
            ignore_nice_load: dbs::ignore_nice_load_of(v),
        }
    }
}

/// ondemand as registered (`od_dbs_gov`).
pub const DESCRIPTOR: GovernorDescriptor = GovernorDescriptor {
    name: "ondemand",
    summary: "Linux ondemand (>= 3.17): max above up_threshold, else cpuinfo min + load × range, closest OPP.",
    tunables,
    build,
};

fn build(v: &Values, _: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    Ok(Box::new(Ondemand::new(OndemandTunables::from_values(v))))
}

/// What one ondemand sample did (anti-snoop builds on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OdPath {
    /// powersave_bias second half-period: switched to freq_lo, no load computed.
    SubSample,
    /// load > up_threshold: policy max.
    AboveThreshold,
    /// Load-proportional target (before rounding, kHz).
    Proportional { freq_next_khz: u32 },
}

/// The split of one period between two OPPs that averages a biased frequency
/// (`generic_powersave_bias_target`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowersaveBias {
    pub freq_hi_khz: u32,
    pub freq_lo_khz: u32,
    /// Time at freq_hi, then the rest of the period at freq_lo; 0 when freq_hi == freq_lo.
    pub delay_hi_us: u64,
    pub delay_lo_us: u64,
}

/// Lower `freq_next_khz` (first rounded with `relation`) by `powersave_bias` per mille and
/// realise the result as time-weighted freq_hi/freq_lo over `sampling_rate_us`.
pub fn powersave_bias_target(
    view: &PolicyView,
    freq_next_khz: u32,
    relation: Relation,
    powersave_bias: u32,
    sampling_rate_us: u64,
) -> PowersaveBias {
    let freq_req = u64::from(resolve_in(view, freq_next_khz, relation));
    let freq_avg = (freq_req - freq_req * u64::from(powersave_bias) / 1_000) as u32;
    let freq_lo_khz = resolve_in(view, freq_avg, Relation::H);
    let freq_hi_khz = resolve_in(view, freq_avg, Relation::L);
    if freq_hi_khz == freq_lo_khz {
        return PowersaveBias { freq_hi_khz: freq_lo_khz, freq_lo_khz, delay_hi_us: 0, delay_lo_us: 0 };
    }
    let span = u64::from(freq_hi_khz - freq_lo_khz);
    // rounded share of the period at freq_hi so that the average is freq_avg
    let delay_hi_us = (u64::from(freq_avg.saturating_sub(freq_lo_khz)) * sampling_rate_us + span / 2) / span;
    PowersaveBias { freq_hi_khz, freq_lo_khz, delay_hi_us, delay_lo_us: sampling_rate_us.saturating_sub(delay_hi_us) }
}

pub struct Ondemand {
    pub tunables: OndemandTunables,
    sampling_rate_us: u64,
    dbs: DbsLoad,
    /// Sampling-delay multiplier: sampling_down_factor while at max, else 1.
    rate_mult: u32,
    /// Pending powersave_bias sub-sample: (freq_lo, its delay).
    sub_sample: Option<(u32, u64)>,
    last_load: u32,
}

impl Ondemand {
    pub fn new(tunables: OndemandTunables) -> Self {
        Ondemand {
            sampling_rate_us: tunables.sampling_rate_us.unwrap_or(0),
            tunables,
            dbs: DbsLoad::default(),
            rate_mult: 1,
            sub_sample: None,
            last_load: 0,
        }
    }

    /// The sampling rate in use (resolved from the policy at start when not set), µs.
    pub fn sampling_rate_us(&self) -> u64 {
        self.sampling_rate_us
    }

    /// Load (%) computed at the last full sample.
    pub fn last_load(&self) -> u32 {
        self.last_load
    }

    /// `od_dbs_update`: one sample, and which way it went (inlined into `sample`, which runs
    /// at every period).
    #[inline]
    pub fn step(&mut self, view: &PolicyView) -> (Decision, OdPath) {
        let t = self.tunables;
        if let Some((freq_lo_khz, delay_lo_us)) = self.sub_sample.take() {
            // The sub-sample does not run dbs_update: its time counts in the next window.
            self.dbs.defer(&view.cpus, t.ignore_nice_load);
            let target_khz = resolve_in(view, freq_lo_khz, Relation::H);
            return (Decision { target_khz, next_sample_us: delay_lo_us }, OdPath::SubSample);
        }

        let period_us = self.sampling_rate_us * u64::from(self.rate_mult);
        let load = self.dbs.update(&view.cpus, period_us, t.ignore_nice_load);
        self.last_load = load;
        let max_khz = view.upper_limit_khz();
        let mut bias = None;
        let (target_khz, path) = if load > t.up_threshold {
            // Fully busy: jump to max, and stay for sampling_down_factor periods if not yet there.
            if view.cur_khz < max_khz {
                self.rate_mult = t.sampling_down_factor;
            }
            let target = if t.powersave_bias > 0 {
                let b = powersave_bias_target(view, max_khz, Relation::H, t.powersave_bias, self.sampling_rate_us);
                bias = Some(b);
                resolve_in(view, b.freq_hi_khz, Relation::L)
            } else {
                resolve_in(view, max_khz, Relation::H)
            };
            (target, OdPath::AboveThreshold)
        } else {
            // Proportional over the whole cpuinfo range (not the policy limits), so that every
            // load maps to a distinct frequency ("eliminate the deadband", 3.17).
            let min_f = u64::from(view.cpuinfo_min_khz);
            let max_f = u64::from(view.cpuinfo_max_khz).max(min_f);
            let freq_next_khz = (min_f + u64::from(load) * (max_f - min_f) / 100) as u32;
            self.rate_mult = 1;
            let freq = if t.powersave_bias > 0 {
                let b =
                    powersave_bias_target(view, freq_next_khz, Relation::L, t.powersave_bias, self.sampling_rate_us);
                bias = Some(b);
                b.freq_hi_khz
            } else {
                freq_next_khz
            };
            (resolve_in(view, freq, Relation::C), OdPath::Proportional { freq_next_khz })
        };

        let mut next_sample_us = self.sampling_rate_us * u64::from(self.rate_mult);
        if let Some(b) = bias {
            // Split the period: freq_hi now, freq_lo at the sub-sample. A zero-length half is
            // skipped (the kernel would re-sample immediately), running one OPP for the period.
            if b.delay_hi_us > 0 && b.delay_lo_us > 0 {
                self.sub_sample = Some((b.freq_lo_khz, b.delay_lo_us));
                next_sample_us = b.delay_hi_us;
            } else if b.delay_hi_us == 0 && b.freq_hi_khz != b.freq_lo_khz {
                return (Decision { target_khz: resolve_in(view, b.freq_lo_khz, Relation::H), next_sample_us }, path);
            }
        }
        (Decision { target_khz, next_sample_us }, path)
    }
}

impl Governor for Ondemand {
    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.sampling_rate_us = self
            .tunables
            .sampling_rate_us
            .unwrap_or_else(|| default_sampling_rate_us(view.tick_us, view.transition_latency_ns));
        self.dbs.start();
        self.rate_mult = 1;
        self.sub_sample = None;
        Decision { target_khz: hold(view), next_sample_us: self.sampling_rate_us }
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        self.step(view).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{big_view, little_view, with_cpus, with_load};

    fn started(t: OndemandTunables, view: &PolicyView) -> Ondemand {
        let mut g = Ondemand::new(t);
        g.start(view);
        g
    }

    #[test]
    fn start_uses_the_default_sampling_rate_and_keeps_the_frequency() {
        let v = little_view(600_000);
        let mut g = Ondemand::new(OndemandTunables::default());
        // Exynos 5422 latency 140 µs -> min(140000, 10000) = 10000 -> max(10000, 10000)
        assert_eq!(g.start(&v), Decision { target_khz: 600_000, next_sample_us: 10_000 });
        assert_eq!(g.sampling_rate_us(), 10_000);
    }

    #[test]
    fn proportional_frequency_little() {
        let v = little_view(200_000);
        let mut g = started(OndemandTunables::default(), &v);
        // load 50: 200000 + 50*(1400000-200000)/100 = 200000 + 600000 = 800000, an OPP
        let (d, p) = g.step(&with_load(v.clone(), 50));
        assert_eq!(d, Decision { target_khz: 800_000, next_sample_us: 10_000 });
        assert_eq!(p, OdPath::Proportional { freq_next_khz: 800_000 });
        // load 46: 200000 + 46*12000 = 752000; closest: 752000-700000 = 52000 > 48000 -> 800000
        let (d, p) = g.step(&with_load(v.clone(), 46));
        assert_eq!(p, OdPath::Proportional { freq_next_khz: 752_000 });
        assert_eq!(d.target_khz, 800_000);
        // load 45: 200000 + 540000 = 740000; 40000 < 60000 -> 700000
        assert_eq!(g.sample(&with_load(v.clone(), 45)).target_khz, 700_000);
        // load 0 -> cpuinfo min; load 95 is not above 95: 200000 + 1140000 = 1340000 -> 1300000
        assert_eq!(g.sample(&with_load(v.clone(), 0)).target_khz, 200_000);
        assert_eq!(g.sample(&with_load(v, 95)).target_khz, 1_300_000);
    }

    #[test]
    fn closest_tie_goes_to_the_lower_opp_big() {
        let v = big_view(200_000);
        let mut g = started(OndemandTunables::default(), &v);
        // load 25: 200000 + 25*(2000000-200000)/100 = 650000: 50000 either side -> 600000
        assert_eq!(g.sample(&with_load(v.clone(), 25)).target_khz, 600_000);
        // load 75: 200000 + 1350000 = 1550000 -> tie -> 1500000
        assert_eq!(g.sample(&with_load(v, 75)).target_khz, 1_500_000);
    }

    #[test]
    fn above_threshold_goes_to_max_and_applies_sampling_down_factor() {
        let t = OndemandTunables { sampling_down_factor: 4, ..Default::default() };
        let v = little_view(600_000);
        let mut g = started(t, &v);
        // load 96 > 95 and cur 600000 < max: max, next sample 10000 * 4 = 40000 µs
        let (d, p) = g.step(&with_load(v.clone(), 96));
        assert_eq!(p, OdPath::AboveThreshold);
        assert_eq!(d, Decision { target_khz: 1_400_000, next_sample_us: 40_000 });
        // already at max: rate_mult stays 4
        let at_max = little_view(1_400_000);
        assert_eq!(g.sample(&with_cpus(at_max.clone(), &[(40_000, 0)])).next_sample_us, 40_000);
        // load drops to 50 over the 40000 µs window: proportional 800000, rate_mult back to 1
        let d = g.sample(&with_cpus(at_max, &[(40_000, 20_000)]));
        assert_eq!(d, Decision { target_khz: 800_000, next_sample_us: 10_000 });
    }

    #[test]
    fn sampling_down_factor_is_not_armed_when_already_at_max() {
        let t = OndemandTunables { sampling_down_factor: 4, ..Default::default() };
        let v = little_view(1_400_000);
        let mut g = started(t, &v);
        // cur == max: rate_mult keeps its value 1
        assert_eq!(g.sample(&with_load(v, 100)), Decision { target_khz: 1_400_000, next_sample_us: 10_000 });
    }

    #[test]
    fn max_respects_thermal_cap_and_policy_max() {
        let mut v = little_view(600_000);
        v.thermal_cap_khz = 1_100_000;
        let mut g = started(OndemandTunables::default(), &v);
        assert_eq!(g.sample(&with_load(v.clone(), 100)).target_khz, 1_100_000);
        // the proportional formula still uses cpuinfo max: load 90 -> 200000+1080000 = 1280000,
        // clamped to the 1100000 cap
        assert_eq!(g.sample(&with_load(v.clone(), 90)).target_khz, 1_100_000);
        v.policy_max_khz = 900_000;
        assert_eq!(g.sample(&with_load(v, 100)).target_khz, 900_000);
    }

    #[test]
    fn powersave_bias_splits_the_period() {
        // load 50 -> freq_next 800000; RELATION_L -> freq_req 800000;
        // powersave_bias 100‰: freq_avg = 800000 - 800000*100/1000 = 720000
        // freq_lo = H(720000) = 700000, freq_hi = L(720000) = 800000
        // delay_hi = ((720000-700000)*10000 + 100000/2) / 100000 = (200000000+50000)/100000 = 2000 (trunc of 2000.5)
        // delay_lo = 10000 - 2000 = 8000
        let v = little_view(200_000);
        let b = powersave_bias_target(&v, 800_000, Relation::L, 100, 10_000);
        assert_eq!(
            b,
            PowersaveBias { freq_hi_khz: 800_000, freq_lo_khz: 700_000, delay_hi_us: 2_000, delay_lo_us: 8_000 }
        );

        let t = OndemandTunables { powersave_bias: 100, ..Default::default() };
        let mut g = started(t, &v);
        assert_eq!(g.sample(&with_load(v.clone(), 50)), Decision { target_khz: 800_000, next_sample_us: 2_000 });
        // the sub-sample switches to freq_lo for the rest of the period, without a load
        let (d, p) = g.step(&with_cpus(little_view(800_000), &[(2_000, 0)]));
        assert_eq!(p, OdPath::SubSample);
        assert_eq!(d, Decision { target_khz: 700_000, next_sample_us: 8_000 });
        // the next window covers both parts: busy 2000 + 4000 of 10000 µs -> load 60
        // -> 200000 + 720000 = 920000 -> L 1000000 -> avg 1000000-100000 = 900000 = an OPP: no split
        let d = g.sample(&with_cpus(little_view(700_000), &[(8_000, 4_000)]));
        assert_eq!(d, Decision { target_khz: 900_000, next_sample_us: 10_000 });
        assert_eq!(g.last_load(), 60);
    }

    #[test]
    fn powersave_bias_above_threshold() {
        // max 1400000 with 50‰: avg = 1400000 - 70000 = 1330000 -> lo 1300000, hi 1400000
        // delay_hi = (30000*10000 + 50000)/100000 = 3000 (3000.5 truncated), delay_lo = 7000
        let v = little_view(600_000);
        let mut g = started(OndemandTunables { powersave_bias: 50, ..Default::default() }, &v);
        assert_eq!(g.sample(&with_load(v.clone(), 100)), Decision { target_khz: 1_400_000, next_sample_us: 3_000 });
        assert_eq!(g.sample(&with_load(v, 100)), Decision { target_khz: 1_300_000, next_sample_us: 7_000 });
    }

    #[test]
    fn powersave_bias_single_opp_and_zero_length_halves() {
        let v = little_view(200_000);
        // load 50 -> 800000, bias 1‰: avg = 800000 - 800 = 799200 -> lo 700000, hi 800000
        // delay_hi = (99200*10000 + 50000)/100000 = 9920 (9920.5), delay_lo = 80
        let b = powersave_bias_target(&v, 800_000, Relation::L, 1, 10_000);
        assert_eq!((b.delay_hi_us, b.delay_lo_us), (9_920, 80));
        // bias 125‰ at 800000: avg = 800000 - 100000 = 700000, an OPP: no split
        let b = powersave_bias_target(&v, 800_000, Relation::L, 125, 10_000);
        assert_eq!(b, PowersaveBias { freq_hi_khz: 700_000, freq_lo_khz: 700_000, delay_hi_us: 0, delay_lo_us: 0 });
        let mut g = started(OndemandTunables { powersave_bias: 125, ..Default::default() }, &v);
        // load 48 -> 200000 + 576000 = 776000 -> L 800000 -> avg 700000
        assert_eq!(g.sample(&with_load(v.clone(), 48)), Decision { target_khz: 700_000, next_sample_us: 10_000 });

        // A 10 µs period with bias 299‰: load 59 -> 200000 + 708000 = 908000 -> L 1000000
        // -> avg = 1000000 - 299000 = 701000 -> lo 700000, hi 800000,
        // delay_hi = (1000*10 + 50000)/100000 = 0: freq_lo for the whole period
        let t = OndemandTunables { powersave_bias: 299, sampling_rate_us: Some(10), ..Default::default() };
        let mut g = started(t, &v);
        // (load 50: 800000 -> avg 800000 - 239200 = 560800 -> hi 600000 for
        //  (60800*10 + 50000)/100000 = 6 µs, then lo 500000 for 4 µs)
        assert_eq!(g.sample(&with_cpus(v.clone(), &[(10, 5)])), Decision { target_khz: 600_000, next_sample_us: 6 });
        let mut g = started(t, &v);
        let d = g.sample(&with_cpus(v, &[(100, 41)]));
        assert_eq!(d, Decision { target_khz: 700_000, next_sample_us: 10 });
    }

    #[test]
    fn long_idle_wakeup_keeps_the_previous_load() {
        let v = little_view(200_000);
        let mut g = started(OndemandTunables::default(), &v);
        assert_eq!(g.sample(&with_load(v.clone(), 50)).target_khz, 800_000);
        // 100 ms window, 95 ms idle (> 2 × 10000): previous load 50 reused once -> 800000
        assert_eq!(g.sample(&with_cpus(v.clone(), &[(100_000, 95_000)])).target_khz, 800_000);
        // same window again: real load 5 -> 200000 + 60000 = 260000 -> C 300000
        assert_eq!(g.sample(&with_cpus(v, &[(100_000, 95_000)])).target_khz, 300_000);
    }
}
