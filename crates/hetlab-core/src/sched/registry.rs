//! The placement policies a run can name: one entry each, in the order users see them (as
//! `governor::registry` lists the governors). Each policy's file declares its name, summary,
//! tunables and constructor ([`PlacementDescriptor`]); this module only lists them, validates
//! what users give and builds.

use serde::Serialize;

use super::{eas, hmp, pinned, rt, smp, uclamp};
use super::{Placement, PlacementDescriptor, SchedPolicy};
use crate::governor::tunables::{TunableInfo, Values};
use crate::platform::Platform;

/// Every placement policy, in the order users see them.
pub static POLICIES: &[PlacementDescriptor] = &[
    pinned::DESCRIPTOR,
    smp::DESCRIPTOR,
    hmp::DESCRIPTOR,
    eas::DESCRIPTOR,
    smp::EEVDF_DESCRIPTOR,
    eas::EEVDF_DESCRIPTOR,
];

/// One placement policy as listings show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacementInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub tunables: Vec<TunableInfo>,
}

/// All placement policies with their tunables.
pub fn list() -> Vec<PlacementInfo> {
    POLICIES.iter().map(|d| PlacementInfo { name: d.name, summary: d.summary, tunables: all_tunables(d) }).collect()
}

/// A policy's tunables: its own, then the RT class's sysctls, which every policy takes.
fn all_tunables(d: &PlacementDescriptor) -> Vec<TunableInfo> {
    let mut all = (d.tunables)();
    all.extend(rt::tunables());
    all
}

impl SchedPolicy {
    pub fn parse(name: &str) -> Result<Self, String> {
        POLICIES.iter().find(|d| d.name == name).map(|d| d.policy).ok_or_else(|| {
            let known: Vec<&str> = POLICIES.iter().map(|d| d.name).collect();
            format!("unknown scheduler '{name}'; known: {}", known.join(", "))
        })
    }

    fn descriptor(self) -> &'static PlacementDescriptor {
        POLICIES.iter().find(|d| d.policy == self).expect("every policy is registered")
    }

    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// The policy for a run on `platform`, with `tunables` (sysfs name, value) over its
    /// defaults; every refusal is one line naming the fix. uclamp's knobs are Linux 5.10's: a
    /// policy that does not declare them models a 3.10 kernel, which has no uclamp.
    pub fn build(self, platform: &Platform, tunables: &[(String, f64)]) -> Result<Box<dyn Placement>, String> {
        let d = self.descriptor();
        let own = (d.tunables)();
        let is_uclamp_knob = |n: &str| uclamp::tunables().iter().any(|k| k.name == n);
        if !own.iter().any(|k| is_uclamp_knob(k.name)) {
            if let Some((name, _)) = tunables.iter().find(|(n, _)| is_uclamp_knob(n)) {
                return Err(format!(
                    "{}: {name} is a uclamp knob of Linux 5.10, and the {} kernel (3.10) has no uclamp; use scheduler eas",
                    d.name, d.name
                ));
            }
        }
        let values = Values::check(d.name, &all_tunables(d), tunables)?;
        (d.build)(platform, &values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_policy_and_builds_it_by_name() {
        let names: Vec<&str> = list().iter().map(|p| p.name).collect();
        assert_eq!(names, ["pinned", "smp", "hmp", "eas", "eevdf", "eas-eevdf"]);
        assert!(SchedPolicy::parse("eas-v2").unwrap_err().contains("pinned, smp, hmp, eas, eevdf, eas-eevdf"));
        let exynos = Platform::builtin("exynos5422").unwrap();
        for d in POLICIES {
            let policy = SchedPolicy::parse(d.name).unwrap();
            assert_eq!((policy, policy.name()), (d.policy, d.name));
            assert_eq!(policy.build(&exynos, &[]).unwrap().name(), d.name);
        }
    }

    #[test]
    fn every_policy_takes_the_rt_sysctls_and_only_eas_the_uclamp_knobs() {
        let exynos = Platform::builtin("exynos5422").unwrap();
        let e = SchedPolicy::Smp.build(&exynos, &[("up_threshold".into(), 700.0)]).err().unwrap();
        assert_eq!(
            e,
            "smp: unknown tunable 'up_threshold'; known: sched_rt_period_us, sched_rt_runtime_us, sched_rr_timeslice_ms"
        );
        // the RT sysctls go with every policy; a runtime above a given period is refused
        let rt = [("sched_rt_period_us".to_string(), 500_000.0)];
        assert!(SchedPolicy::Smp.build(&exynos, &rt).is_ok());
        let e = rt::Bandwidth::from_sysctls(&rt, true).unwrap_err();
        assert!(e.starts_with("sched_rt_runtime_us 950000 exceeds sched_rt_period_us 500000"), "{e}");
        let clamp = [("sched_util_clamp_max".to_string(), 512.0)];
        assert_eq!(
            SchedPolicy::Hmp.build(&exynos, &clamp).err().unwrap(),
            "hmp: sched_util_clamp_max is a uclamp knob of Linux 5.10, and the hmp kernel (3.10) has no uclamp; use \
             scheduler eas"
        );
        let eas = list().into_iter().find(|p| p.name == "eas").unwrap();
        let names: Vec<&str> = eas.tunables.iter().map(|t| t.name).collect();
        assert!(names.contains(&"sched_util_clamp_max") && names.ends_with(&["sched_rr_timeslice_ms"]), "{names:?}");
    }
}
