//! The governors a host can build by name: one registration each (as `cpufreq_register_governor`
//! calls), in the order users see them. Each governor's file declares its name, summary,
//! tunables and constructor; this module only lists them, validates what users give and builds.

use serde::Serialize;

use super::tunables::{TunableInfo, Values};
use super::{anti_snoop, conservative, fixed, interactive, ondemand, schedutil};
use super::{Governor, GovernorContext, GovernorDescriptor};

/// Every governor, in the order users see them.
pub static GOVERNORS: &[GovernorDescriptor] = &[
    fixed::PERFORMANCE,
    fixed::POWERSAVE,
    fixed::USERSPACE,
    ondemand::DESCRIPTOR,
    conservative::DESCRIPTOR,
    schedutil::DESCRIPTOR,
    interactive::DESCRIPTOR,
    anti_snoop::DESCRIPTOR,
];

/// One governor as listings show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GovernorInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub tunables: Vec<TunableInfo>,
}

/// All governors with their tunables, on a platform whose scheduler tick is `tick_us` (the
/// dbs governors' `sampling_rate` starts at two ticks).
pub fn list(tick_us: u64) -> Vec<GovernorInfo> {
    GOVERNORS
        .iter()
        .map(|d| GovernorInfo { name: d.name, summary: d.summary, tunables: (d.tunables)(tick_us) })
        .collect()
}

fn descriptor(name: &str) -> Result<&'static GovernorDescriptor, String> {
    GOVERNORS.iter().find(|d| d.name == name).ok_or_else(|| {
        let known: Vec<&str> = GOVERNORS.iter().map(|d| d.name).collect();
        format!("unknown governor '{name}'; known: {}", known.join(", "))
    })
}

/// The governor `name` for the policy described by `ctx`, with `tunables` as (sysfs name,
/// value) pairs applied over the defaults. Every refusal is one line naming the fix.
pub fn build(name: &str, tunables: &[(String, f64)], ctx: &GovernorContext) -> Result<Box<dyn Governor>, String> {
    let d = descriptor(name)?;
    let values = Values::check(d.name, &(d.tunables)(ctx.tick_us), tunables)?;
    (d.build)(&values, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{big_view, little_view, port, thread, with_load, EXYNOS5422_TICK_US};
    use crate::governor::tunables::TunableDefault;
    use crate::tree::AntiSnoopModel;

    fn tun(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(n, x)| (n.to_string(), *x)).collect()
    }

    /// A policy of cluster `cluster_name` on the Exynos 5422 (HZ=200), Figure 4's trees.
    fn ctx(cluster_name: &str) -> GovernorContext<'_> {
        GovernorContext { cluster_name, tick_us: EXYNOS5422_TICK_US, model: None }
    }

    fn err(name: &str, pairs: &[(&str, f64)]) -> String {
        build(name, &tun(pairs), &ctx("little")).err().expect("should be rejected")
    }

    #[test]
    fn lists_every_governor_and_builds_it_by_name() {
        let names: Vec<&str> = list(EXYNOS5422_TICK_US).iter().map(|g| g.name).collect();
        assert_eq!(
            names,
            [
                "performance",
                "powersave",
                "userspace",
                "ondemand",
                "conservative",
                "schedutil",
                "interactive",
                "anti-snoop"
            ]
        );
        for n in names {
            assert_eq!(build(n, &[], &ctx("little")).unwrap().name(), n);
        }
    }

    #[test]
    fn listed_defaults_match_the_governors() {
        let all = list(EXYNOS5422_TICK_US);
        let od = &all.iter().find(|g| g.name == "ondemand").unwrap().tunables;
        assert_eq!(od[1].name, "up_threshold");
        assert_eq!(od[1].default, TunableDefault::Value(95.0));
        assert_eq!(od[0].min, 10_000.0);
        let json = serde_json::to_string(&od[..2]).unwrap();
        assert!(json.contains("\"default\":95.0"), "{json}");
        assert!(json.contains("\"default\":\"max(2 ticks"), "{json}");
    }

    #[test]
    fn rejects_unknown_names_and_bad_values_with_the_fix() {
        assert_eq!(
            err("foo", &[]),
            "unknown governor 'foo'; known: performance, powersave, userspace, ondemand, conservative, \
             schedutil, interactive, anti-snoop"
        );
        assert_eq!(
            err("ondemand", &[("up_treshold", 90.0)]),
            "ondemand: unknown tunable 'up_treshold'; known: sampling_rate, up_threshold, \
             sampling_down_factor, powersave_bias, ignore_nice_load, io_is_busy"
        );
        assert_eq!(err("ondemand", &[("up_threshold", 120.0)]), "ondemand: up_threshold must be in 1..=100 %, got 120");
        assert_eq!(err("ondemand", &[("up_threshold", 95.5)]), "ondemand: up_threshold must be an integer %, got 95.5");
        assert_eq!(
            err("ondemand", &[("sampling_rate", 5_000.0)]),
            "ondemand: sampling_rate must be in 10000..=4294967295 µs, got 5000"
        );
        assert_eq!(err("ondemand", &[("io_is_busy", 1.0)]), "ondemand: io_is_busy must be in 0..=0, got 1");
        assert_eq!(
            err("anti-snoop", &[("powersave_bias", 1001.0)]),
            "anti-snoop: powersave_bias must be in 0..=1000 ‰, got 1001"
        );
        assert_eq!(err("performance", &[("x", 1.0)]), "performance: unknown tunable 'x'; performance has no tunables");
        assert_eq!(
            err("ondemand", &[("up_threshold", 90.0), ("up_threshold", 80.0)]),
            "ondemand: tunable 'up_threshold' is given twice; give it once"
        );
        assert_eq!(
            err("conservative", &[("sampling_down_factor", 11.0)]),
            "conservative: sampling_down_factor must be in 1..=10, got 11"
        );
        assert_eq!(
            err("conservative", &[("down_threshold", 30.0), ("up_threshold", 30.0)]),
            "conservative: down_threshold (30) must be below up_threshold (30)"
        );
        assert_eq!(
            err("schedutil", &[("rate_limit_us", f64::NAN)]),
            "schedutil: rate_limit_us must be an integer µs, got NaN"
        );
    }

    #[test]
    fn tunables_reach_the_governor() {
        // up_threshold 50: load 60 goes to max instead of 200000 + 60*12000 = 920000 -> 900000
        let mut g = build("ondemand", &tun(&[("up_threshold", 50.0)]), &ctx("little")).unwrap();
        let v = little_view(200_000);
        g.start(&v);
        assert_eq!(g.sample(&with_load(v.clone(), 60)).target_khz, 1_400_000);
        let mut g = build("ondemand", &[], &ctx("little")).unwrap();
        g.start(&v);
        assert_eq!(g.sample(&with_load(v.clone(), 60)).target_khz, 900_000);
        // sampling_rate 20000 sets the period
        let mut g = build("conservative", &tun(&[("sampling_rate", 20_000.0)]), &ctx("little")).unwrap();
        assert_eq!(g.start(&v).next_sample_us, 20_000);
        let mut g = build("userspace", &tun(&[("setspeed_khz", 1_000_000.0)]), &ctx("little")).unwrap();
        assert_eq!(g.start(&v).target_khz, 1_000_000);
        let mut g = build("interactive", &tun(&[("timer_rate", 30_000.0)]), &ctx("little")).unwrap();
        assert_eq!(g.start(&v).next_sample_us, 30_000);
        let mut g = build("schedutil", &tun(&[("rate_limit_us", 2_000.0)]), &ctx("little")).unwrap();
        assert_eq!(g.start(&v).next_sample_us, 2_000);
    }

    #[test]
    fn anti_snoop_needs_a_tree_for_the_cluster() {
        assert!(build("anti-snoop", &[], &ctx("big")).is_ok());
        assert_eq!(
            build("anti-snoop", &[], &ctx("gpu")).err().unwrap(),
            "anti-snoop: model 'lctes2020-fig4' has no tree for cluster 'gpu'; it has trees for: big, little"
        );
        let mut m = AntiSnoopModel::lctes2020_fig4();
        m.trees.retain(|(c, _)| c == "big");
        assert!(build("anti-snoop", &[], &GovernorContext { model: Some(&m), ..ctx("little") }).is_err());
        // other governors ignore the cluster name
        assert!(build("ondemand", &[], &ctx("gpu")).is_ok());
    }

    #[test]
    fn anti_snoop_gets_its_tunables_and_its_cluster_tree_and_explains_its_samples() {
        // LITTLE at 200 MHz, the big cluster's port congested 10/1000 and its thread at
        // 10000/1000000 bus accesses per cycle: LITTLE's tree (Fig. 4b) says increase
        let mut v = with_load(little_view(200_000), 90);
        v.cci_ports = vec![port(0, 1_000, 999), port(1, 1_000, 10)];
        v.threads = vec![thread(1, 1_000_000, 10_000)];
        let mut explained = String::new();

        // up_threshold 80: load 90 goes to max without asking the tree
        let mut g = build("anti-snoop", &tun(&[("up_threshold", 80.0)]), &ctx("little")).unwrap();
        g.start(&v);
        assert_eq!(g.sample(&v).target_khz, 1_400_000);
        g.explain(&mut explained).unwrap();
        assert_eq!(explained, " tree=-");

        // the default 95: load 90 is proportional (1280000 -> 1300000) and the tree is asked
        let mut g = build("anti-snoop", &[], &ctx("little")).unwrap();
        g.start(&v);
        assert_eq!(g.sample(&v).target_khz, 1_300_000);
        explained.clear();
        g.explain(&mut explained).unwrap();
        assert_eq!(explained, " cci_congestion=0.010000 memory_access=0.010000 tree=increase");

        // big's tree (Fig. 4a) needs congestion above 0.01074: the same counters of the LITTLE
        // cluster say decrease
        let mut big = with_load(big_view(200_000), 90);
        big.cci_ports = vec![port(0, 1_000, 10), port(1, 1_000, 999)];
        big.threads = vec![thread(0, 1_000_000, 10_000)];
        let mut g = build("anti-snoop", &[], &ctx("big")).unwrap();
        g.start(&big);
        g.sample(&big);
        explained.clear();
        g.explain(&mut explained).unwrap();
        assert_eq!(explained, " cci_congestion=0.010000 memory_access=0.010000 tree=decrease");

        // governors without a tree explain nothing
        let mut g = build("ondemand", &[], &ctx("little")).unwrap();
        g.start(&v);
        g.sample(&v);
        explained.clear();
        g.explain(&mut explained).unwrap();
        assert_eq!(explained, "");
    }

    #[test]
    fn the_sampling_rate_floor_is_two_ticks_of_the_platform() {
        // HZ=100: ticks of 10000 µs, so at least 20000 µs, and 20000 µs by default
        let hz100 = GovernorContext { tick_us: 10_000, ..ctx("little") };
        for name in ["ondemand", "conservative", "anti-snoop"] {
            assert_eq!(
                build(name, &tun(&[("sampling_rate", 15_000.0)]), &hz100).err().unwrap(),
                format!("{name}: sampling_rate must be in 20000..=4294967295 µs, got 15000")
            );
            let mut g = build(name, &[], &hz100).unwrap();
            let mut v = little_view(200_000);
            v.tick_us = 10_000;
            assert_eq!(g.start(&v).next_sample_us, 20_000);
        }
        let od = list(10_000).into_iter().find(|g| g.name == "ondemand").unwrap();
        assert_eq!((od.tunables[0].name, od.tunables[0].min), ("sampling_rate", 20_000.0));
        // HZ=1000: 2000 µs is allowed
        let hz1000 = GovernorContext { tick_us: 1_000, ..ctx("little") };
        assert!(build("ondemand", &tun(&[("sampling_rate", 2_000.0)]), &hz1000).is_ok());
    }
}
