//! Governors by name, with their tunables (kernel sysfs names and units), for hosts and CLIs.

use std::collections::BTreeMap;

use serde::Serialize;

use super::anti_snoop::AntiSnoop;
use super::conservative::{self, Conservative, ConservativeTunables};
use super::dbs::DBS_MIN_SAMPLING_INTERVAL_US;
use super::fixed::{Performance, Powersave, Userspace};
use super::interactive::{self, Interactive, InteractiveTunables};
use super::ondemand::{self, Ondemand, OndemandTunables};
use super::schedutil::{Schedutil, SchedutilTunables};
use super::Governor;
use crate::tree::AntiSnoopModel;

/// A tunable's default: a number, or how it is derived from the policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TunableDefault {
    Value(f64),
    Policy(&'static str),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TunableInfo {
    /// sysfs name.
    pub name: &'static str,
    pub default: TunableDefault,
    /// "µs", "kHz", "%", "‰" or "" (count / boolean).
    pub unit: &'static str,
    pub help: &'static str,
    /// Accepted range, inclusive; values are integers.
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GovernorInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub tunables: Vec<TunableInfo>,
}

const U32_MAX: f64 = u32::MAX as f64;

fn t(
    name: &'static str,
    default: TunableDefault,
    unit: &'static str,
    min: f64,
    max: f64,
    help: &'static str,
) -> TunableInfo {
    TunableInfo { name, default, unit, help, min, max }
}

fn v(x: f64) -> TunableDefault {
    TunableDefault::Value(x)
}

fn sampling_rate() -> TunableInfo {
    t(
        "sampling_rate",
        TunableDefault::Policy("max(2 ticks = 10000 µs, transition delay = min(1000 × latency µs, 10000))"),
        "µs",
        DBS_MIN_SAMPLING_INTERVAL_US as f64,
        U32_MAX,
        "Period between load samples; at least two scheduler ticks (HZ=200).",
    )
}

fn ignore_nice_load() -> TunableInfo {
    t("ignore_nice_load", v(0.0), "", 0.0, 1.0, "1: time spent in nice > 0 tasks counts as idle.")
}

fn ondemand_tunables() -> Vec<TunableInfo> {
    vec![
        sampling_rate(),
        t(
            "up_threshold",
            v(f64::from(ondemand::DEFAULT_UP_THRESHOLD)),
            "%",
            1.0,
            100.0,
            "Load above which the policy goes to its max (95 = MICRO_FREQUENCY_UP_THRESHOLD).",
        ),
        t(
            "sampling_down_factor",
            v(1.0),
            "",
            1.0,
            f64::from(ondemand::MAX_SAMPLING_DOWN_FACTOR),
            "Once at max, sample this many times less often before lowering.",
        ),
        t(
            "powersave_bias",
            v(0.0),
            "‰",
            0.0,
            f64::from(ondemand::MAX_POWERSAVE_BIAS),
            "Lower the target by this many per mille, averaging two OPPs within a period.",
        ),
        ignore_nice_load(),
        t(
            "io_is_busy",
            v(0.0),
            "",
            0.0,
            0.0,
            "Fixed at 0 (the ARM default): iowait counts as idle; the view carries no separate iowait time.",
        ),
    ]
}

/// All governors, in the order users see them.
pub fn list() -> Vec<GovernorInfo> {
    vec![
        GovernorInfo { name: "performance", summary: "Runs at the policy max (within the thermal cap).", tunables: vec![] },
        GovernorInfo { name: "powersave", summary: "Runs at the policy min.", tunables: vec![] },
        GovernorInfo {
            name: "userspace",
            summary: "Holds the frequency given in setspeed_khz (scaling_setspeed), rounded up to an OPP.",
            tunables: vec![t(
                "setspeed_khz",
                TunableDefault::Policy("the current frequency at start"),
                "kHz",
                1.0,
                U32_MAX,
                "Frequency to hold (sysfs scaling_setspeed); clamped to the policy limits.",
            )],
        },
        GovernorInfo {
            name: "ondemand",
            summary: "Linux ondemand (>= 3.17): max above up_threshold, else cpuinfo min + load × range, closest OPP.",
            tunables: ondemand_tunables(),
        },
        GovernorInfo {
            name: "conservative",
            summary: "Linux conservative: moves freq_step % of max up on high load, down on low load.",
            tunables: vec![
                sampling_rate(),
                t(
                    "up_threshold",
                    v(f64::from(conservative::DEFAULT_UP_THRESHOLD)),
                    "%",
                    1.0,
                    100.0,
                    "Load above which the frequency steps up; must exceed down_threshold.",
                ),
                t(
                    "down_threshold",
                    v(f64::from(conservative::DEFAULT_DOWN_THRESHOLD)),
                    "%",
                    1.0,
                    99.0,
                    "Load below which the frequency steps down; must be below up_threshold.",
                ),
                t(
                    "freq_step",
                    v(f64::from(conservative::DEFAULT_FREQ_STEP)),
                    "%",
                    0.0,
                    100.0,
                    "Step size in percent of the policy max; 0 freezes the frequency.",
                ),
                t(
                    "sampling_down_factor",
                    v(1.0),
                    "",
                    1.0,
                    f64::from(conservative::MAX_SAMPLING_DOWN_FACTOR),
                    "Low-load samples needed for each step down.",
                ),
                ignore_nice_load(),
            ],
        },
        GovernorInfo {
            name: "schedutil",
            summary: "Linux schedutil (5.x): 1.25 × cpuinfo max × PELT util / capacity, lowest OPP at or above.",
            tunables: vec![t(
                "rate_limit_us",
                TunableDefault::Policy("transition delay = min(1000 × latency µs, 10000)"),
                "µs",
                1.0,
                U32_MAX,
                "Minimum interval between frequency updates; the host samples at this period.",
            )],
        },
        GovernorInfo {
            name: "interactive",
            summary: "Android interactive (3.4): hispeed_freq on a load burst, then the lowest OPP meeting target_loads; min_sample_time before going down.",
            tunables: vec![
                t(
                    "go_hispeed_load",
                    v(f64::from(interactive::DEFAULT_GO_HISPEED_LOAD)),
                    "%",
                    1.0,
                    100.0,
                    "Load at or above which the CPU goes to at least hispeed_freq.",
                ),
                t(
                    "hispeed_freq",
                    TunableDefault::Policy("0 = the policy max at start"),
                    "kHz",
                    0.0,
                    U32_MAX,
                    "Frequency a load burst jumps to.",
                ),
                t(
                    "target_loads",
                    v(f64::from(interactive::DEFAULT_TARGET_LOAD)),
                    "%",
                    1.0,
                    100.0,
                    "Load the chosen frequency should run at (one value for all frequencies).",
                ),
                t(
                    "min_sample_time",
                    v(interactive::DEFAULT_MIN_SAMPLE_TIME_US as f64),
                    "µs",
                    0.0,
                    U32_MAX,
                    "Time a frequency is held before going below it.",
                ),
                t(
                    "timer_rate",
                    v(interactive::DEFAULT_TIMER_RATE_US as f64),
                    "µs",
                    1.0,
                    U32_MAX,
                    "Sampling period.",
                ),
                t(
                    "above_hispeed_delay",
                    v(interactive::DEFAULT_ABOVE_HISPEED_DELAY_US as f64),
                    "µs",
                    0.0,
                    U32_MAX,
                    "Time at or above hispeed_freq before going higher.",
                ),
            ],
        },
        GovernorInfo {
            name: "anti-snoop",
            summary: "LCTES'20 ondemand-anti-snoop: ondemand, plus one OPP up per sample while the decision tree sees the other cluster stalled on snoops (one down otherwise), never below the load-based choice.",
            tunables: ondemand_tunables(),
        },
    ]
}

/// Validated tunables of one governor, as integers.
struct Values {
    governor: &'static str,
    map: BTreeMap<&'static str, u64>,
}

impl Values {
    fn get(&self, name: &str) -> Option<u64> {
        self.map.get(name).copied()
    }
    fn u32_or(&self, name: &str, default: u32) -> u32 {
        self.get(name).map_or(default, |x| x as u32)
    }
    fn flag(&self, name: &str) -> bool {
        self.get(name) == Some(1)
    }
}

fn check(info: &GovernorInfo, tunables: &[(String, f64)]) -> Result<Values, String> {
    let g = info.name;
    let mut map = BTreeMap::new();
    for (name, value) in tunables {
        let Some(spec) = info.tunables.iter().find(|t| t.name == name) else {
            let known: Vec<&str> = info.tunables.iter().map(|t| t.name).collect();
            return Err(if known.is_empty() {
                format!("{g}: unknown tunable '{name}'; {g} has no tunables")
            } else {
                format!("{g}: unknown tunable '{name}'; known: {}", known.join(", "))
            });
        };
        let unit = if spec.unit.is_empty() { String::new() } else { format!(" {}", spec.unit) };
        if !value.is_finite() || value.fract() != 0.0 {
            return Err(format!("{g}: {name} must be an integer{unit}, got {value}"));
        }
        if *value < spec.min || *value > spec.max {
            return Err(format!("{g}: {name} must be in {}..={}{unit}, got {value}", spec.min, spec.max));
        }
        if map.insert(spec.name, *value as u64).is_some() {
            return Err(format!("{g}: tunable '{name}' is given twice; give it once"));
        }
    }
    Ok(Values { governor: g, map })
}

fn ondemand_from(v: &Values) -> OndemandTunables {
    let d = OndemandTunables::default();
    OndemandTunables {
        sampling_rate_us: v.get("sampling_rate"),
        up_threshold: v.u32_or("up_threshold", d.up_threshold),
        sampling_down_factor: v.u32_or("sampling_down_factor", d.sampling_down_factor),
        powersave_bias: v.u32_or("powersave_bias", d.powersave_bias),
        ignore_nice_load: v.flag("ignore_nice_load"),
    }
}

fn conservative_from(v: &Values) -> Result<ConservativeTunables, String> {
    let d = ConservativeTunables::default();
    let c = ConservativeTunables {
        sampling_rate_us: v.get("sampling_rate"),
        up_threshold: v.u32_or("up_threshold", d.up_threshold),
        down_threshold: v.u32_or("down_threshold", d.down_threshold),
        freq_step: v.u32_or("freq_step", d.freq_step),
        sampling_down_factor: v.u32_or("sampling_down_factor", d.sampling_down_factor),
        ignore_nice_load: v.flag("ignore_nice_load"),
    };
    if c.down_threshold >= c.up_threshold {
        return Err(format!(
            "{}: down_threshold ({}) must be below up_threshold ({})",
            v.governor, c.down_threshold, c.up_threshold
        ));
    }
    Ok(c)
}

fn info(name: &str) -> Result<GovernorInfo, String> {
    let all = list();
    let names: Vec<&str> = all.iter().map(|g| g.name).collect();
    let known = names.join(", ");
    all.into_iter().find(|g| g.name == name).ok_or_else(|| format!("unknown governor '{name}'; known: {known}"))
}

/// A governor for the cluster `cluster_name`, with `tunables` as (sysfs name, value) pairs
/// applied over the defaults. `model` is used by anti-snoop only (default: the paper's
/// Figure 4 trees).
pub fn build(
    name: &str,
    cluster_name: &str,
    tunables: &[(String, f64)],
    model: Option<&AntiSnoopModel>,
) -> Result<Box<dyn Governor>, String> {
    let info = info(name)?;
    let v = check(&info, tunables)?;
    Ok(match info.name {
        "performance" => Box::new(Performance),
        "powersave" => Box::new(Powersave),
        "userspace" => Box::new(Userspace::new(v.get("setspeed_khz").map(|x| x as u32))),
        "ondemand" => Box::new(Ondemand::new(ondemand_from(&v))),
        "conservative" => Box::new(Conservative::new(conservative_from(&v)?)),
        "schedutil" => Box::new(Schedutil::new(SchedutilTunables { rate_limit_us: v.get("rate_limit_us") })),
        "interactive" => {
            let d = InteractiveTunables::default();
            Box::new(Interactive::new(InteractiveTunables {
                go_hispeed_load: v.u32_or("go_hispeed_load", d.go_hispeed_load),
                hispeed_freq_khz: v.u32_or("hispeed_freq", d.hispeed_freq_khz),
                target_loads: vec![v.u32_or("target_loads", d.target_loads[0])],
                min_sample_time_us: v.get("min_sample_time").unwrap_or(d.min_sample_time_us),
                timer_rate_us: v.get("timer_rate").unwrap_or(d.timer_rate_us),
                above_hispeed_delay_us: v.get("above_hispeed_delay").unwrap_or(d.above_hispeed_delay_us),
            }))
        }
        "anti-snoop" => Box::new(anti_snoop_from(&v, cluster_name, model)?),
        other => unreachable!("governor '{other}' is listed but not built"),
    })
}

fn anti_snoop_from(v: &Values, cluster_name: &str, model: Option<&AntiSnoopModel>) -> Result<AntiSnoop, String> {
    let fig4;
    let model = match model {
        Some(m) => m,
        None => {
            fig4 = AntiSnoopModel::lctes2020_fig4();
            &fig4
        }
    };
    AntiSnoop::new(cluster_name, ondemand_from(v), model)
}

/// [`build`] for anti-snoop, keeping the concrete type so the host can log
/// [`AntiSnoop::last`] (features and tree decision) after each sample.
pub fn build_anti_snoop(
    cluster_name: &str,
    tunables: &[(String, f64)],
    model: Option<&AntiSnoopModel>,
) -> Result<AntiSnoop, String> {
    let v = check(&info("anti-snoop")?, tunables)?;
    anti_snoop_from(&v, cluster_name, model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governor::testutil::{little_view, with_load};

    fn tun(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(n, x)| (n.to_string(), *x)).collect()
    }

    fn err(name: &str, pairs: &[(&str, f64)]) -> String {
        build(name, "little", &tun(pairs), None).err().expect("should be rejected")
    }

    #[test]
    fn lists_every_governor_and_builds_it_by_name() {
        let names: Vec<&str> = list().iter().map(|g| g.name).collect();
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
            assert_eq!(build(n, "little", &[], None).unwrap().name(), n);
        }
    }

    #[test]
    fn listed_defaults_match_the_governors() {
        let all = list();
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
        let mut g = build("ondemand", "little", &tun(&[("up_threshold", 50.0)]), None).unwrap();
        let v = little_view(200_000);
        g.start(&v);
        assert_eq!(g.sample(&with_load(v.clone(), 60)).target_khz, 1_400_000);
        let mut g = build("ondemand", "little", &[], None).unwrap();
        g.start(&v);
        assert_eq!(g.sample(&with_load(v.clone(), 60)).target_khz, 900_000);
        // sampling_rate 20000 sets the period
        let mut g = build("conservative", "little", &tun(&[("sampling_rate", 20_000.0)]), None).unwrap();
        assert_eq!(g.start(&v).next_sample_us, 20_000);
        let mut g = build("userspace", "little", &tun(&[("setspeed_khz", 1_000_000.0)]), None).unwrap();
        assert_eq!(g.start(&v).target_khz, 1_000_000);
        let mut g = build("interactive", "little", &tun(&[("timer_rate", 30_000.0)]), None).unwrap();
        assert_eq!(g.start(&v).next_sample_us, 30_000);
        let mut g = build("schedutil", "little", &tun(&[("rate_limit_us", 2_000.0)]), None).unwrap();
        assert_eq!(g.start(&v).next_sample_us, 2_000);
    }

    #[test]
    fn anti_snoop_needs_a_tree_for_the_cluster() {
        assert!(build("anti-snoop", "big", &[], None).is_ok());
        assert_eq!(
            build("anti-snoop", "gpu", &[], None).err().unwrap(),
            "anti-snoop: model 'lctes2020-fig4' has no tree for cluster 'gpu'; it has trees for: big, little"
        );
        let mut m = AntiSnoopModel::lctes2020_fig4();
        m.trees.retain(|(c, _)| c == "big");
        assert!(build("anti-snoop", "little", &[], Some(&m)).is_err());
        // other governors ignore the cluster name
        assert!(build("ondemand", "gpu", &[], None).is_ok());
        let g = build_anti_snoop("little", &tun(&[("up_threshold", 80.0)]), None).unwrap();
        assert_eq!(g.tunables().up_threshold, 80);
        assert_eq!(g.cluster_name(), "little");
    }
}
