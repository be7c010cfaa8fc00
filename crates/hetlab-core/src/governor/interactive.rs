//! Android `interactive` (drivers/cpufreq/cpufreq_interactive.c, the 3.4-era version with
//! `choose_freq` and `target_loads`).
//!
//! Each CPU picks the lowest frequency at which its recent work would load it to
//! `target_loads`; a load at or above `go_hispeed_load` jumps straight to `hispeed_freq`.
//! Going further up waits `above_hispeed_delay`, going down below a frequency waits until it
//! has been held `min_sample_time`. The policy runs at the highest per-CPU choice.
//! Every CPU is evaluated every `timer_rate` (the kernel stops the timer of a CPU idling at
//! min, which would compute the same answer). Boost/boostpulse inputs are not modelled.

use std::collections::BTreeMap;

use super::freq_table::{hold, resolve_in, Relation};
use super::tunables::{TunableDefault, TunableInfo, Values, U32_MAX};
use super::{Decision, Governor, GovernorContext, GovernorDescriptor, PolicyView};

pub const DEFAULT_GO_HISPEED_LOAD: u32 = 99;
pub const DEFAULT_TARGET_LOAD: u32 = 90;
pub const DEFAULT_MIN_SAMPLE_TIME_US: u64 = 80_000;
pub const DEFAULT_TIMER_RATE_US: u64 = 20_000;
/// Defaults to the timer rate.
pub const DEFAULT_ABOVE_HISPEED_DELAY_US: u64 = DEFAULT_TIMER_RATE_US;

#[derive(Debug, Clone, PartialEq)]
pub struct InteractiveTunables {
    /// % load at or above which the CPU goes to at least hispeed_freq.
    pub go_hispeed_load: u32,
    /// kHz; 0 means the policy max at start.
    pub hispeed_freq_khz: u32,
    /// Kernel layout `load [freq load]...`: `load` applies below the first `freq` (kHz), each
    /// later load from its freq upwards. Loads are %, > 0.
    pub target_loads: Vec<u32>,
    pub min_sample_time_us: u64,
    pub timer_rate_us: u64,
    pub above_hispeed_delay_us: u64,
}

impl Default for InteractiveTunables {
    fn default() -> Self {
        InteractiveTunables {
            go_hispeed_load: DEFAULT_GO_HISPEED_LOAD,
            hispeed_freq_khz: 0,
            target_loads: vec![DEFAULT_TARGET_LOAD],
            min_sample_time_us: DEFAULT_MIN_SAMPLE_TIME_US,
            timer_rate_us: DEFAULT_TIMER_RATE_US,
            above_hispeed_delay_us: DEFAULT_ABOVE_HISPEED_DELAY_US,
        }
    }
}

/// interactive's sysfs attributes (`interactive_attributes[]`); `target_loads` takes one load
/// for all frequencies here.
pub fn tunables(_tick_us: u64) -> Vec<TunableInfo> {
    vec![
        TunableInfo {
            name: "go_hispeed_load",
            default: TunableDefault::Value(f64::from(DEFAULT_GO_HISPEED_LOAD)),
            unit: "%",
            help: "Load at or above which the CPU goes to at least hispeed_freq.",
            min: 1.0,
            max: 100.0,
        },
        TunableInfo {
            name: "hispeed_freq",
            default: TunableDefault::Policy("0 = the policy max at start"),
            unit: "kHz",
            help: "Frequency a load burst jumps to.",
            min: 0.0,
            max: U32_MAX,
        },
        TunableInfo {
            name: "target_loads",
            default: TunableDefault::Value(f64::from(DEFAULT_TARGET_LOAD)),
            unit: "%",
            help: "Load the chosen frequency should run at (one value for all frequencies).",
            min: 1.0,
            max: 100.0,
        },
        TunableInfo {
            name: "min_sample_time",
            default: TunableDefault::Value(DEFAULT_MIN_SAMPLE_TIME_US as f64),
            unit: "µs",
            help: "Time a frequency is held before going below it.",
            min: 0.0,
            max: U32_MAX,
        },
        TunableInfo {
            name: "timer_rate",
            default: TunableDefault::Value(DEFAULT_TIMER_RATE_US as f64),
            unit: "µs",
            help: "Sampling period.",
            min: 1.0,
            max: U32_MAX,
        },
        TunableInfo {
            name: "above_hispeed_delay",
            default: TunableDefault::Value(DEFAULT_ABOVE_HISPEED_DELAY_US as f64),
            unit: "µs",
            help: "Time at or above hispeed_freq before going higher.",
            min: 0.0,
            max: U32_MAX,
        },
    ]
}

/// interactive as registered (`cpufreq_gov_interactive`).
pub const DESCRIPTOR: GovernorDescriptor = GovernorDescriptor {
    name: "interactive",
    summary: "Android interactive (3.4): hispeed_freq on a load burst, then the lowest OPP meeting target_loads; min_sample_time before going down.",
    tunables,
    build,
};

fn build(v: &Values, _: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    Ok(Box::new(Interactive::new(InteractiveTunables::from_values(v))))
}

impl InteractiveTunables {
    /// The tunables given (checked against [`tunables`]) over the defaults.
    pub fn from_values(v: &Values) -> Self {
        let d = InteractiveTunables::default();
        InteractiveTunables {
            go_hispeed_load: v.u32_or("go_hispeed_load", d.go_hispeed_load),
            hispeed_freq_khz: v.u32_or("hispeed_freq", d.hispeed_freq_khz),
            target_loads: vec![v.u32_or("target_loads", d.target_loads[0])],
            min_sample_time_us: v.get("min_sample_time").unwrap_or(d.min_sample_time_us),
            timer_rate_us: v.get("timer_rate").unwrap_or(d.timer_rate_us),
            above_hispeed_delay_us: v.get("above_hispeed_delay").unwrap_or(d.above_hispeed_delay_us),
        }
    }

    /// `freq_to_targetload`.
    pub fn target_load(&self, freq_khz: u32) -> u32 {
        let tl = &self.target_loads;
        let mut i = 0;
        while i + 1 < tl.len() && freq_khz >= tl[i + 1] {
            i += 2;
        }
        tl.get(i).copied().unwrap_or(DEFAULT_TARGET_LOAD).max(1)
    }
}

/// Per-CPU timer state.
#[derive(Debug, Clone, Copy)]
struct CpuState {
    target_khz: u32,
    /// Do not go below this before `floor_validate_us + min_sample_time`.
    floor_khz: u32,
    floor_validate_us: u64,
    /// When the CPU last reached/validated a speed at or above hispeed.
    hispeed_validate_us: u64,
}

pub struct Interactive {
    pub tunables: InteractiveTunables,
    hispeed_khz: u32,
    cpus: BTreeMap<usize, CpuState>,
}

/// `choose_freq`: the lowest OPP whose target load is not exceeded by `loadadjfreq`
/// (= load % × kHz), found by iterating from the current frequency. With frequency-dependent
/// target loads the iteration can oscillate, so it brackets the answer between the highest
/// frequency found too slow (freqmin) and the lowest found fast enough (freqmax).
pub fn choose_freq(view: &PolicyView, t: &InteractiveTunables, loadadjfreq: u64) -> u32 {
    let table_l = |f: u64| resolve_in(view, f.min(u64::from(u32::MAX)) as u32, Relation::L);
    let mut freq = view.cur_khz;
    let (mut freqmin, mut freqmax) = (0u32, u32::MAX);
    // the bracket shrinks every round; the cap only guards against a malformed table
    for _ in 0..2 * view.opps_khz.len() + 4 {
        let prevfreq = freq;
        freq = table_l(loadadjfreq / u64::from(t.target_load(freq)));
        if freq > prevfreq {
            // prevfreq is too slow
            freqmin = prevfreq;
            if freq >= freqmax {
                freq = resolve_in(view, freqmax - 1, Relation::H);
                if freq == freqmin {
                    // the OPP below freqmax was already too slow: freqmax is the answer
                    return freqmax;
                }
            }
        } else if freq < prevfreq {
            // prevfreq is fast enough
            freqmax = prevfreq;
            if freq <= freqmin {
                freq = table_l(u64::from(freqmin) + 1);
                if freq == freqmax {
                    // the OPP above freqmin was already found fast enough
                    return freq;
                }
            }
        }
        if freq == prevfreq {
            return freq;
        }
    }
    freq
}

impl Interactive {
    pub fn new(tunables: InteractiveTunables) -> Self {
        Interactive { hispeed_khz: tunables.hispeed_freq_khz, tunables, cpus: BTreeMap::new() }
    }

    /// hispeed_freq in use, kHz.
    pub fn hispeed_khz(&self) -> u32 {
        self.hispeed_khz
    }

    fn fresh(view: &PolicyView) -> CpuState {
        CpuState {
            target_khz: view.cur_khz,
            floor_khz: view.cur_khz,
            floor_validate_us: view.now_us,
            hispeed_validate_us: view.now_us,
        }
    }

    /// `cpufreq_interactive_timer` for one CPU: update its target frequency.
    fn cpu_timer(&mut self, view: &PolicyView, cpu: usize, wall_us: u64, idle_us: u64) {
        let t = &self.tunables;
        let hispeed = self.hispeed_khz;
        let now = view.now_us;
        let s = self.cpus.entry(cpu).or_insert_with(|| Self::fresh(view));
        if wall_us == 0 {
            return;
        }
        // cputime_speedadj: busy time weighted by the frequency it ran at, so the load is
        // expressed in "kHz needed" (loadadjfreq = load % × kHz).
        let speedadj = wall_us.saturating_sub(idle_us) * u64::from(view.cur_khz);
        let loadadjfreq = speedadj / wall_us * 100;
        let cpu_load = loadadjfreq / u64::from(s.target_khz.max(1));

        let mut new_khz = if cpu_load >= u64::from(t.go_hispeed_load) {
            if s.target_khz < hispeed {
                hispeed
            } else {
                choose_freq(view, t, loadadjfreq).max(hispeed)
            }
        } else {
            choose_freq(view, t, loadadjfreq)
        };

        // Above hispeed, ramp further only after the load has stayed high for the delay.
        if s.target_khz >= hispeed
            && new_khz > s.target_khz
            && now.saturating_sub(s.hispeed_validate_us) < t.above_hispeed_delay_us
        {
            return;
        }
        s.hispeed_validate_us = now;

        new_khz = resolve_in(view, new_khz, Relation::L);
        // Do not drop below the floor before it has been held for min_sample_time.
        if new_khz < s.floor_khz && now.saturating_sub(s.floor_validate_us) < t.min_sample_time_us {
            return;
        }
        s.floor_khz = new_khz;
        s.floor_validate_us = now;
        s.target_khz = new_khz;
    }
}

impl Governor for Interactive {
    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.hispeed_khz =
            if self.tunables.hispeed_freq_khz == 0 { view.upper_limit_khz() } else { self.tunables.hispeed_freq_khz };
        self.cpus = view.cpus.iter().map(|c| (c.cpu, Self::fresh(view))).collect();
        Decision { target_khz: hold(view), next_sample_us: self.tunables.timer_rate_us }
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        for c in &view.cpus {
            self.cpu_timer(view, c.cpu, c.wall_us, c.idle_us);
        }
        // The speed-change thread sets the highest target of the policy's CPUs.
        let max_target = view.cpus.iter().filter_map(|c| self.cpus.get(&c.cpu)).map(|s| s.target_khz).max();
        let target_khz = match max_target {
            Some(f) => resolve_in(view, f, Relation::H),
            None => hold(view),
        };
        Decision { target_khz, next_sample_us: self.tunables.timer_rate_us }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{little_view, with_cpus};

    /// One sample at `now_us` with per-CPU (wall, idle) over the last timer period.
    fn at(now_us: u64, cur_khz: u32, times: &[(u64, u64)]) -> PolicyView {
        let mut v = with_cpus(little_view(cur_khz), times);
        v.now_us = now_us;
        v
    }

    #[test]
    fn choose_freq_with_one_target_load() {
        let v = little_view(1_000_000);
        let t = InteractiveTunables::default();
        // 50% at 1000000: loadadjfreq 5e7; 5e7/90 = 555555 -> L 600000, then 600000 again: done
        assert_eq!(choose_freq(&v, &t, 50_000_000), 600_000);
        // 1e8/90 = 1111111 -> 1200000
        assert_eq!(choose_freq(&v, &t, 100_000_000), 1_200_000);
    }

    #[test]
    fn choose_freq_brackets_oscillating_target_loads() {
        // target load 50 below 1000000, 99 from 1000000 up; loadadjfreq 6e7, cur 900000:
        // 900000: 6e7/50 = 1200000 > 900000 -> freqmin 900000
        // 1200000: 6e7/99 = 606060 -> L 700000 < 1200000 -> freqmax 1200000; 700000 <= freqmin
        //   -> L(900001) = 1000000
        // 1000000: 606060 -> 700000 < 1000000 -> freqmax 1000000; L(900001) = 1000000 = freqmax
        let v = little_view(900_000);
        let t = InteractiveTunables { target_loads: vec![50, 1_000_000, 99], ..Default::default() };
        assert_eq!(t.target_load(999_999), 50);
        assert_eq!(t.target_load(1_000_000), 99);
        assert_eq!(choose_freq(&v, &t, 60_000_000), 1_000_000);
    }

    #[test]
    fn min_sample_time_holds_the_floor() {
        let mut g = Interactive::new(InteractiveTunables::default());
        let v0 = at(0, 1_000_000, &[(20_000, 20_000)]);
        assert_eq!(g.start(&v0), Decision { target_khz: 1_000_000, next_sample_us: 20_000 });
        assert_eq!(g.hispeed_khz(), 1_400_000);
        // 50% busy at 1000000 -> choose_freq 600000, below the floor 1000000 set at t=0:
        // held while now - 0 < 80000
        for now in [20_000, 40_000, 60_000] {
            assert_eq!(g.sample(&at(now, 1_000_000, &[(20_000, 10_000)])).target_khz, 1_000_000);
        }
        // at 80000 the floor has been held 80000 µs: drop to 600000
        let d = g.sample(&at(80_000, 1_000_000, &[(20_000, 10_000)]));
        assert_eq!(d, Decision { target_khz: 600_000, next_sample_us: 20_000 });
    }

    #[test]
    fn high_load_jumps_to_hispeed_then_waits_above_hispeed_delay() {
        let t =
            InteractiveTunables { hispeed_freq_khz: 1_000_000, above_hispeed_delay_us: 40_000, ..Default::default() };
        let mut g = Interactive::new(t);
        g.start(&at(0, 600_000, &[(20_000, 20_000)]));
        // 100% at 600000: loadadjfreq 6e7, cpu_load 6e7/600000 = 100 >= 99, below hispeed
        // -> hispeed 1000000
        assert_eq!(g.sample(&at(20_000, 600_000, &[(20_000, 0)])).target_khz, 1_000_000);
        // 100% at 1000000: 1e8/90 = 1111111 -> 1200000 > target, but only 20000 µs of the
        // 40000 µs delay since hispeed was validated: stay
        assert_eq!(g.sample(&at(40_000, 1_000_000, &[(20_000, 0)])).target_khz, 1_000_000);
        // 40000 µs later: go on to 1200000
        assert_eq!(g.sample(&at(60_000, 1_000_000, &[(20_000, 0)])).target_khz, 1_200_000);
    }

    #[test]
    fn default_hispeed_is_policy_max() {
        let mut g = Interactive::new(InteractiveTunables::default());
        let mut v = at(0, 600_000, &[(20_000, 20_000)]);
        v.thermal_cap_khz = 1_300_000;
        g.start(&v);
        assert_eq!(g.hispeed_khz(), 1_300_000);
        let mut v = at(20_000, 600_000, &[(20_000, 0)]);
        v.thermal_cap_khz = 1_300_000;
        assert_eq!(g.sample(&v).target_khz, 1_300_000);
    }

    #[test]
    fn policy_runs_at_the_highest_cpu_target() {
        let mut g = Interactive::new(InteractiveTunables::default());
        g.start(&at(0, 400_000, &[(20_000, 20_000), (20_000, 20_000)]));
        // cpu0 25% at 400000: 1e7/90 = 111111 -> 200000 (held by floor 400000 until 80 ms);
        // cpu1 90%: 400000*0.9*100 = 3.6e7 -> cpu_load 90 < 99; 3.6e7/90 = 400000 -> 400000
        // cpu1 95% later: 3.8e7/90 = 422222 -> 500000
        assert_eq!(g.sample(&at(20_000, 400_000, &[(20_000, 15_000), (20_000, 2_000)])).target_khz, 400_000);
        assert_eq!(g.sample(&at(40_000, 400_000, &[(20_000, 15_000), (20_000, 1_000)])).target_khz, 500_000);
    }
}
