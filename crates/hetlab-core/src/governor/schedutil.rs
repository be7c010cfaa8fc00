//! `schedutil` (kernel/sched/cpufreq_schedutil.c, Linux 5.x; 6.8+ where the host says so).
//!
//! Frequency from the scheduler's PELT utilisation instead of idle time: 1.25 × cpuinfo max ×
//! util / capacity, so a CPU runs at 80 % of the chosen capacity. Linux 6.8+ moved the 1.25
//! into the scheduler's request (`sugov_effective_cpu_perf`, `sched::cpu_perf`): a host that
//! hands over that request (`PolicyView::util_is_perf`) gets cpuinfo max × perf / capacity. The host samples it every
//! `rate_limit_us`, the minimum interval between two frequency updates in Linux. RT and DL
//! utilisation and uclamp reach it through the host's `util_avg` (`sched::cpu_util`,
//! `sched::cpu_perf`). Not modelled: the iowait boost (the simulated workloads never wait on
//! I/O).

use super::dbs::transition_delay_us;
use super::freq_table::{hold, resolve_in, Relation};
use super::tunables::{TunableDefault, TunableInfo, Values, U32_MAX};
use super::{Decision, Governor, GovernorContext, GovernorDescriptor, PolicyView};

/// SCHED_CAPACITY_SCALE: used when the host leaves `cpu_capacity` at 0.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SchedutilTunables {
    /// µs; `None`: the policy's transition delay (4.14+), taken at start.
    pub rate_limit_us: Option<u64>,
}

/// schedutil's sysfs attributes (`sugov_attrs[]`).
pub fn tunables(_tick_us: u64) -> Vec<TunableInfo> {
    vec![TunableInfo {
        name: "rate_limit_us",
        default: TunableDefault::Policy("transition delay = min(1000 × latency µs, 10000)"),
        unit: "µs",
        help: "Minimum interval between frequency updates; the host samples at this period.",
        min: 1.0,
        max: U32_MAX,
    }]
}

impl SchedutilTunables {
    /// The tunables given (checked against [`tunables`]) over the defaults.
    pub fn from_values(v: &Values) -> Self {
        SchedutilTunables { rate_limit_us: v.get("rate_limit_us") }
    }
}

/// schedutil as registered (`schedutil_gov`).
pub const DESCRIPTOR: GovernorDescriptor = GovernorDescriptor {
    name: "schedutil",
    summary: "Linux schedutil (5.x): 1.25 × cpuinfo max × PELT util / capacity, lowest OPP at or above.",
    tunables,
    build,
};

fn build(v: &Values, _: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    Ok(Box::new(Schedutil::new(SchedutilTunables::from_values(v))))
}

/// `get_next_freq` before rounding: `(max + max/4) * util / capacity` with frequency-invariant
/// util, so the reference is cpuinfo max, not the current frequency.
pub fn raw_next_khz(cpuinfo_max_khz: u32, util: u32, capacity: u32) -> u32 {
    let f = u64::from(cpuinfo_max_khz);
    ((f + (f >> 2)) * u64::from(util) / u64::from(capacity.max(1))) as u32
}

/// `get_next_freq` of Linux 6.8+ before rounding: `map_util_freq(perf, cpuinfo max, capacity)`,
/// the request `perf` already carrying the headroom (`sugov_effective_cpu_perf`).
pub fn raw_next_khz_for_perf(cpuinfo_max_khz: u32, perf: u32, capacity: u32) -> u32 {
    (u64::from(cpuinfo_max_khz) * u64::from(perf) / u64::from(capacity.max(1))) as u32
}

pub struct Schedutil {
    pub tunables: SchedutilTunables,
    rate_limit_us: u64,
    /// Last frequency chosen (`sg_policy->next_freq`), 0 after start.
    next_khz: u32,
    /// (min, upper) limits seen at the last update, to notice limit changes.
    limits_khz: (u32, u32),
}

impl Schedutil {
    pub fn new(tunables: SchedutilTunables) -> Self {
        Schedutil { rate_limit_us: tunables.rate_limit_us.unwrap_or(0), tunables, next_khz: 0, limits_khz: (0, 0) }
    }

    pub fn rate_limit_us(&self) -> u64 {
        self.rate_limit_us
    }
}

impl Governor for Schedutil {
    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn reads_util(&self) -> bool {
        true
    }

    fn start(&mut self, view: &PolicyView) -> Decision {
        self.rate_limit_us =
            self.tunables.rate_limit_us.unwrap_or_else(|| transition_delay_us(view.transition_latency_ns));
        self.next_khz = 0;
        self.limits_khz = (view.policy_min_khz, view.upper_limit_khz());
        Decision { target_khz: hold(view), next_sample_us: self.rate_limit_us }
    }

    fn sample(&mut self, view: &PolicyView) -> Decision {
        let limits = (view.policy_min_khz, view.upper_limit_khz());
        let limits_changed = limits != self.limits_khz;
        self.limits_khz = limits;

        // All CPUs of a policy share one capacity, so the largest util/capacity is the largest
        // util; util above capacity counts as capacity (effective_cpu_util).
        let capacity = if view.cpu_capacity == 0 { SCHED_CAPACITY_SCALE } else { view.cpu_capacity };
        let util = view.cpus.iter().map(|c| c.util_avg.min(capacity)).max().unwrap_or(0);
        let raw_khz = if view.util_is_perf {
            raw_next_khz_for_perf(view.cpuinfo_max_khz, util, capacity)
        } else {
            raw_next_khz(view.cpuinfo_max_khz, util, capacity)
        };
        let mut next_khz = resolve_in(view, raw_khz, Relation::L);

        // sugov_cpu_is_busy (single-CPU policies): a CPU that has not idled since the last
        // update has a util that may not yet show its demand, so lowering now is premature.
        let busy = !limits_changed && view.cpus.len() == 1 && !view.cpus[0].was_idle;
        if busy && next_khz < self.next_khz {
            next_khz = self.next_khz;
        }
        self.next_khz = next_khz;
        Decision { target_khz: next_khz, next_sample_us: self.rate_limit_us }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{little_view, with_cpus};
    use crate::governor::CpuSample;

    fn util_view(cur_khz: u32, utils: &[(u32, bool)]) -> PolicyView {
        let mut v = with_cpus(little_view(cur_khz), &vec![(10_000, 5_000); utils.len()]);
        for (c, &(u, idle)) in v.cpus.iter_mut().zip(utils) {
            c.util_avg = u;
            c.was_idle = idle;
        }
        v
    }

    fn started(v: &PolicyView) -> Schedutil {
        let mut g = Schedutil::new(SchedutilTunables::default());
        g.start(v);
        g
    }

    #[test]
    fn rate_limit_defaults_to_the_transition_delay() {
        let mut g = Schedutil::new(SchedutilTunables::default());
        assert_eq!(g.start(&little_view(500_000)), Decision { target_khz: 500_000, next_sample_us: 10_000 });
        let mut v = little_view(500_000);
        v.transition_latency_ns = 5_000; // 5 µs × 1000 = 5000 µs
        g.start(&v);
        assert_eq!(g.rate_limit_us(), 5_000);
    }

    #[test]
    fn util_maps_to_frequency_with_25_percent_headroom() {
        // (1400000 + 1400000/4) * 512 / 1024 = 1750000 / 2 = 875000 -> RELATION_L 900000
        assert_eq!(raw_next_khz(1_400_000, 512, 1024), 875_000);
        let v = util_view(200_000, &[(512, true)]);
        let mut g = started(&v);
        assert_eq!(g.sample(&v), Decision { target_khz: 900_000, next_sample_us: 10_000 });
        // capacity 446 (a LITTLE): util 223 is the same half -> 900000
        let mut v = util_view(200_000, &[(223, true)]);
        v.cpu_capacity = 446;
        assert_eq!(g.sample(&v).target_khz, 900_000);
        // util 820: 1750000*820/1024 = 1401367 -> above the table -> 1400000
        assert_eq!(g.sample(&util_view(200_000, &[(820, true)])).target_khz, 1_400_000);
        // util 1: 1750000/1024 = 1708 -> clamped to min 200000
        assert_eq!(g.sample(&util_view(200_000, &[(1, true)])).target_khz, 200_000);
        // util above capacity counts as capacity: 1750000 -> 1400000
        assert_eq!(g.sample(&util_view(200_000, &[(5_000, true)])).target_khz, 1_400_000);
    }

    #[test]
    fn a_6_8_performance_request_is_mapped_without_headroom() {
        // 6.8+: 1400000 x 512 / 1024 = 700000 -> RELATION_L 700000 (5.x: 875000 -> 900000)
        assert_eq!(raw_next_khz_for_perf(1_400_000, 512, 1024), 700_000);
        let mut v = util_view(200_000, &[(512, true)]);
        v.util_is_perf = true;
        let mut g = started(&v);
        assert_eq!(g.sample(&v).target_khz, 700_000);
        // a request of the whole capacity (or above it) is the top: 1400000
        v.cpus[0].util_avg = 1_100;
        assert_eq!(g.sample(&v).target_khz, 1_400_000);
        // capacity 160: 1400000 x 100 / 160 = 875000 -> 900000
        v.cpu_capacity = 160;
        v.cpus[0].util_avg = 100;
        assert_eq!(g.sample(&v).target_khz, 900_000);
    }

    #[test]
    fn shared_policy_follows_the_busiest_cpu() {
        // max util 300: 1750000*300/1024 = 512695 -> L 600000
        let v = util_view(200_000, &[(100, true), (300, true), (0, true), (50, true)]);
        assert_eq!(started(&v).sample(&v).target_khz, 600_000);
    }

    #[test]
    fn thermal_cap_clamps_the_target() {
        let mut v = util_view(200_000, &[(512, true)]);
        v.thermal_cap_khz = 800_000;
        // 875000 -> clamped to 800000
        assert_eq!(started(&v).sample(&v).target_khz, 800_000);
    }

    #[test]
    fn busy_single_cpu_does_not_lower_the_frequency() {
        let v = util_view(200_000, &[(512, true)]);
        let mut g = started(&v);
        assert_eq!(g.sample(&v).target_khz, 900_000);
        // not idle since: util 100 would give 1750000*100/1024 = 170898 -> 200000; held at 900000
        assert_eq!(g.sample(&util_view(900_000, &[(100, false)])).target_khz, 900_000);
        // raising is always allowed: util 700 -> 1196289 -> 1200000
        assert_eq!(g.sample(&util_view(900_000, &[(700, false)])).target_khz, 1_200_000);
        // once it has idled, it drops
        assert_eq!(g.sample(&util_view(1_200_000, &[(100, true)])).target_khz, 200_000);
    }

    #[test]
    fn busy_hold_is_skipped_for_shared_policies_and_limit_changes() {
        let v = util_view(200_000, &[(512, true), (512, true)]);
        let mut g = started(&v);
        assert_eq!(g.sample(&v).target_khz, 900_000);
        assert_eq!(g.sample(&util_view(900_000, &[(100, false), (100, false)])).target_khz, 200_000);

        let v = util_view(200_000, &[(512, true)]);
        let mut g = started(&v);
        assert_eq!(g.sample(&v).target_khz, 900_000);
        let mut capped = util_view(900_000, &[(100, false)]);
        capped.policy_max_khz = 1_000_000;
        assert_eq!(g.sample(&capped).target_khz, 200_000);
        let no_cpus = PolicyView { cpus: Vec::<CpuSample>::new(), ..little_view(900_000) };
        assert_eq!(g.sample(&no_cpus).target_khz, 200_000);
    }
}
