//! The "demand-based switching" core shared by ondemand, conservative and anti-snoop
//! (drivers/cpufreq/cpufreq_governor.c, Linux 4.14 and later): the load of `dbs_update()`, the
//! default and minimum sampling intervals, and the tunables every dbs governor has
//! (`sampling_rate`, `ignore_nice_load`).

use super::tunables::{TunableDefault, TunableInfo, Values, U32_MAX};
use super::CpuSample;

/// `CPUFREQ_DBS_MIN_SAMPLING_INTERVAL` (4.14+): two scheduler ticks of the platform
/// (`2 * TICK_NSEC / NSEC_PER_USEC`). Shorter sampling rates are refused.
pub fn min_sampling_interval_us(tick_us: u64) -> u64 {
    2 * tick_us
}

/// `LATENCY_MULTIPLIER`: transition delay per µs of transition latency.
const LATENCY_MULTIPLIER: u64 = 1_000;

/// `cpufreq_policy_transition_delay_us()` as in 4.14 ... 6.7: 1000 × the transition latency in
/// whole µs, capped at 10 ms because slow-switching platforms would otherwise get absurd delays;
/// 1000 µs when the latency is unknown (0).
pub fn transition_delay_us(transition_latency_ns: u32) -> u64 {
    let latency_us = u64::from(transition_latency_ns) / 1_000;
    if latency_us == 0 {
        LATENCY_MULTIPLIER
    } else {
        (latency_us * LATENCY_MULTIPLIER).min(10_000)
    }
}

/// Default `sampling_rate` of the dbs governors (`cpufreq_dbs_governor_init`, 4.14+): the
/// transition delay, never below two ticks.
pub fn default_sampling_rate_us(tick_us: u64, transition_latency_ns: u32) -> u64 {
    min_sampling_interval_us(tick_us).max(transition_delay_us(transition_latency_ns))
}

const SAMPLING_RATE: &str = "sampling_rate";

/// `sampling_rate` (`sampling_rate_store`): at least two ticks of the platform.
pub fn sampling_rate_tunable(tick_us: u64) -> TunableInfo {
    TunableInfo {
        name: SAMPLING_RATE,
        default: TunableDefault::Policy(
            "max(2 ticks at the platform's HZ, transition delay = min(1000 × latency µs, 10000))",
        ),
        unit: "µs",
        help: "Period between load samples; at least two scheduler ticks of the platform (its CONFIG_HZ).",
        min: min_sampling_interval_us(tick_us) as f64,
        max: U32_MAX,
    }
}

/// `ignore_nice_load` (`od_ignore_nice_load_store`, `cs_ignore_nice_load_store`).
pub const IGNORE_NICE_LOAD: TunableInfo = TunableInfo {
    name: "ignore_nice_load",
    default: TunableDefault::Value(0.0),
    unit: "",
    help: "1: time spent in nice > 0 tasks counts as idle.",
    min: 0.0,
    max: 1.0,
};

/// The given `sampling_rate`, µs; `None`: the default, resolved from the policy at start.
pub fn sampling_rate_of(v: &Values) -> Option<u64> {
    v.get(SAMPLING_RATE)
}

/// Whether `ignore_nice_load` was set to 1.
pub fn ignore_nice_load_of(v: &Values) -> bool {
    v.flag(IGNORE_NICE_LOAD.name)
}

#[derive(Debug, Clone, Copy, Default)]
struct CpuDbs {
    /// Load of the previous window, 0 right after start so the first sample computes it.
    prev_load: u32,
    /// Time of samples not yet accounted (see [`DbsLoad::defer`]), µs.
    pending_wall_us: u64,
    pending_idle_us: u64,
}

/// Per-policy state of `dbs_update`.
#[derive(Debug, Clone)]
pub struct DbsLoad {
    /// Indexed by CPU number (grown on first sight; no allocation per sample).
    cpus: Vec<CpuDbs>,
    /// Fewest whole sampling periods any CPU of the policy slept through in the last window
    /// when that exceeded two periods; `u32::MAX` (the kernel's UINT_MAX) when none did.
    /// Conservative lowers its request one step per such period.
    pub idle_periods: u32,
}

impl Default for DbsLoad {
    fn default() -> Self {
        DbsLoad { cpus: Vec::new(), idle_periods: u32::MAX }
    }
}

impl DbsLoad {
    /// Governor start: forget the previous loads (`prev_load = 0`).
    pub fn start(&mut self) {
        *self = DbsLoad::default();
    }

    fn cpu(&mut self, cpu: usize) -> &mut CpuDbs {
        if cpu >= self.cpus.len() {
            self.cpus.resize(cpu + 1, CpuDbs::default());
        }
        &mut self.cpus[cpu]
    }

    /// Idle time of one CPU sample, with nice time counted as idle for `ignore_nice_load`.
    fn idle_us(c: &CpuSample, ignore_nice: bool) -> u64 {
        if ignore_nice {
            c.idle_us + c.nice_us
        } else {
            c.idle_us
        }
    }

    /// Carry a sample's time over to the next [`update`](Self::update). Used for samples the
    /// kernel takes without calling `dbs_update` (ondemand's powersave_bias sub-sample): their
    /// time belongs to the next full window.
    pub fn defer(&mut self, cpus: &[CpuSample], ignore_nice: bool) {
        for c in cpus {
            let s = self.cpu(c.cpu);
            s.pending_wall_us += c.wall_us;
            s.pending_idle_us += Self::idle_us(c, ignore_nice);
        }
    }

    /// The policy's load, integer percent: the maximum over its CPUs of
    /// `100 * (wall - idle) / wall` for the window since the previous update.
    /// `sampling_rate_us` is the current period (sampling_rate × rate_mult).
    pub fn update(&mut self, cpus: &[CpuSample], sampling_rate_us: u64, ignore_nice: bool) -> u32 {
        let sampling_rate_us = sampling_rate_us.max(1);
        let long_idle_us = 2 * sampling_rate_us;
        let mut max_load = 0;
        let mut shortest_long_idle_us: Option<u64> = None;
        for c in cpus {
            let s = self.cpu(c.cpu);
            let elapsed_us = c.wall_us + std::mem::take(&mut s.pending_wall_us);
            let idle_us = Self::idle_us(c, ignore_nice) + std::mem::take(&mut s.pending_idle_us);
            // An unusually long idle time means the CPU slept through whole periods and a task
            // has just woken: its near-zero window load would be unfair to a bursty task, so
            // reuse the previous load once (then clear it so a real drop is seen next time).
            let long_idle = idle_us > long_idle_us;
            let load = if elapsed_us == 0 {
                s.prev_load
            } else if long_idle && s.prev_load != 0 {
                std::mem::take(&mut s.prev_load)
            } else {
                // a window all busy or all idle needs no division (the quotient's exact value);
                // idle > wall only happens with nice time added, the CPU was then idle
                let load = if idle_us == 0 {
                    100
                } else if idle_us >= elapsed_us {
                    0
                } else {
                    (100 * (elapsed_us - idle_us) / elapsed_us) as u32
                };
                s.prev_load = load;
                load
            };
            if long_idle {
                shortest_long_idle_us = Some(shortest_long_idle_us.map_or(idle_us, |s| s.min(idle_us)));
            }
            max_load = max_load.max(load);
        }
        // the fewest whole periods slept: the shortest long idle time's (the floor of a
        // division is monotone, so one division gives the minimum over the CPUs)
        self.idle_periods = shortest_long_idle_us
            .map_or(u32::MAX, |idle_us| (idle_us / sampling_rate_us).min(u64::from(u32::MAX)) as u32);
        max_load
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: usize, wall_us: u64, idle_us: u64) -> CpuSample {
        CpuSample { cpu, wall_us, idle_us, ..Default::default() }
    }

    #[test]
    fn default_intervals_follow_the_transition_latency() {
        // Exynos 5422 (HZ=200, 5000 µs ticks): 140000 ns -> 140 µs × 1000 = 140000, capped at
        // 10000 µs
        assert_eq!(transition_delay_us(140_000), 10_000);
        assert_eq!(default_sampling_rate_us(5_000, 140_000), 10_000);
        // 5 µs -> 5000 µs delay, but sampling never below 2 ticks = 10000 µs
        assert_eq!(transition_delay_us(5_000), 5_000);
        assert_eq!(default_sampling_rate_us(5_000, 5_000), 10_000);
        // HZ=1000 (1000 µs ticks): the delay wins; HZ=100 (10000 µs ticks): 2 ticks = 20000 µs
        assert_eq!(default_sampling_rate_us(1_000, 5_000), 5_000);
        assert_eq!(default_sampling_rate_us(10_000, 140_000), 20_000);
        assert_eq!(sampling_rate_tunable(10_000).min, 20_000.0);
        // 999 ns truncates to 0 µs -> LATENCY_MULTIPLIER = 1000 µs
        assert_eq!(transition_delay_us(999), 1_000);
        assert_eq!(transition_delay_us(u32::MAX), 10_000);
    }

    #[test]
    fn load_is_truncated_and_the_max_over_cpus() {
        let mut d = DbsLoad::default();
        // cpu0: 100*(30000-20001)/30000 = 999900/30000 = 33.33 -> 33
        // cpu1: 100*(30000-12000)/30000 = 60
        assert_eq!(d.update(&[cpu(0, 30_000, 20_001), cpu(1, 30_000, 12_000)], 10_000, false), 60);
        assert_eq!(d.update(&[cpu(0, 30_000, 20_001)], 10_000, false), 33);
        // 100*(10000-9999)/10000 = 0.01 -> 0
        assert_eq!(d.update(&[cpu(0, 10_000, 9_999)], 10_000, false), 0);
        assert_eq!(d.update(&[], 10_000, false), 0);
    }

    #[test]
    fn ignore_nice_counts_nice_time_as_idle() {
        let mut d = DbsLoad::default();
        let c = CpuSample { cpu: 0, wall_us: 10_000, idle_us: 2_000, nice_us: 5_000, ..Default::default() };
        // without: 100*8000/10000 = 80; with: idle 7000 -> 30
        assert_eq!(d.update(&[c], 10_000, false), 80);
        assert_eq!(d.update(&[c], 10_000, true), 30);
        // idle + nice above wall: load 0
        let c2 = CpuSample { nice_us: 9_000, ..c };
        assert_eq!(d.update(&[c2], 10_000, true), 0);
    }

    #[test]
    fn waking_from_long_idle_reuses_the_previous_load_once() {
        let mut d = DbsLoad::default();
        assert_eq!(d.update(&[cpu(0, 10_000, 1_000)], 10_000, false), 90);
        // 45000 µs idle > 2 × 10000: report the previous 90 once, and 4 idle periods (45000/10000)
        assert_eq!(d.update(&[cpu(0, 50_000, 45_000)], 10_000, false), 90);
        assert_eq!(d.idle_periods, 4);
        // prev_load was cleared, so the same window now gives its real load 100*5000/50000 = 10
        assert_eq!(d.update(&[cpu(0, 50_000, 45_000)], 10_000, false), 10);
        assert_eq!(d.idle_periods, 4);
        // exactly 2 periods idle is not "long": computed normally, no idle periods
        assert_eq!(d.update(&[cpu(0, 30_000, 20_000)], 10_000, false), 33);
        assert_eq!(d.idle_periods, u32::MAX);
        // zero elapsed time repeats the previous load
        assert_eq!(d.update(&[cpu(0, 0, 0)], 10_000, false), 33);
        // several CPUs slept long: the fewest whole periods any of them slept (45000 and 35000
        // µs at 10000: 4 and 3); a CPU that did not sleep long does not count
        d.start();
        let cpus = [cpu(0, 50_000, 45_000), cpu(1, 50_000, 35_000), cpu(2, 50_000, 5_000)];
        assert_eq!(d.update(&cpus, 10_000, false), 90);
        assert_eq!(d.idle_periods, 3);
        // after start the history is gone: the long idle window computes its own load
        d.start();
        assert_eq!(d.update(&[cpu(0, 50_000, 45_000)], 10_000, false), 10);
    }

    #[test]
    fn deferred_time_joins_the_next_window() {
        let mut d = DbsLoad::default();
        d.defer(&[cpu(0, 4_000, 0)], false);
        // (4000 + 6000) wall, 6000 idle -> 100*4000/10000 = 40
        assert_eq!(d.update(&[cpu(0, 6_000, 6_000)], 10_000, false), 40);
        assert_eq!(d.update(&[cpu(0, 6_000, 6_000)], 10_000, false), 0);
    }
}
