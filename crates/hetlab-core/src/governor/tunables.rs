//! The vocabulary governors declare their tunables in, and the validation of the values a user
//! gives: the counterpart of the kernel's `struct governor_attr` / `gov_attr_rw` and of the
//! range checks in each `*_store` function. Each governor lists its own tunables in its file.

use std::collections::BTreeMap;

use serde::Serialize;

/// Upper bound of a tunable stored in an `unsigned int`, as most cpufreq tunables are.
pub const U32_MAX: f64 = u32::MAX as f64;

/// A tunable's default: a number, or how it is derived from the policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TunableDefault {
    Value(f64),
    Policy(&'static str),
}

/// One tunable as a governor declares it (one sysfs attribute).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TunableInfo {
    /// sysfs name.
    pub name: &'static str,
    pub default: TunableDefault,
    /// "µs", "ms", "kHz", "%", "‰" or "" (count / boolean).
    pub unit: &'static str,
    pub help: &'static str,
    /// Accepted range, inclusive; values are integers.
    pub min: f64,
    pub max: f64,
}

/// Tunables of one governor, validated against its declarations, as integers. Names not given
/// keep the governor's default.
#[derive(Debug, Clone)]
pub struct Values {
    /// The governor's name, for error messages of cross-checks (`conservative: ...`).
    pub governor: &'static str,
    map: BTreeMap<&'static str, u64>,
}

impl Values {
    /// Checks `given` (sysfs name, value) pairs against `governor`'s declared `tunables`: known
    /// names, given once, integers within the declared range. Each error is one line naming the
    /// governor, the tunable and what is accepted.
    pub fn check(governor: &'static str, tunables: &[TunableInfo], given: &[(String, f64)]) -> Result<Values, String> {
        let g = governor;
        let mut map = BTreeMap::new();
        for (name, value) in given {
            let Some(spec) = tunables.iter().find(|t| t.name == name) else {
                let known: Vec<&str> = tunables.iter().map(|t| t.name).collect();
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
                let got = crate::workload::shown(*value);
                return Err(format!("{g}: {name} must be in {}..={}{unit}, got {got}", spec.min, spec.max));
            }
            if map.insert(spec.name, *value as u64).is_some() {
                return Err(format!("{g}: tunable '{name}' is given twice; give it once"));
            }
        }
        Ok(Values { governor, map })
    }

    /// The value given for `name`, if any.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.map.get(name).copied()
    }

    /// The value given for a tunable declared within `u32`, else `default`.
    pub fn u32_or(&self, name: &str, default: u32) -> u32 {
        self.get(name).map_or(default, |x| x as u32)
    }

    /// A 0/1 tunable: whether 1 was given.
    pub fn flag(&self, name: &str) -> bool {
        self.get(name) == Some(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERCENT: TunableInfo = TunableInfo {
        name: "up_threshold",
        default: TunableDefault::Value(80.0),
        unit: "%",
        help: "",
        min: 1.0,
        max: 100.0,
    };

    fn given(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(n, x)| (n.to_string(), *x)).collect()
    }

    #[test]
    fn values_not_given_keep_their_defaults() {
        let v = Values::check("g", &[PERCENT], &given(&[])).unwrap();
        assert_eq!((v.get("up_threshold"), v.u32_or("up_threshold", 80), v.flag("up_threshold")), (None, 80, false));
        let v = Values::check("g", &[PERCENT], &given(&[("up_threshold", 1.0)])).unwrap();
        assert_eq!((v.get("up_threshold"), v.u32_or("up_threshold", 80), v.flag("up_threshold")), (Some(1), 1, true));
    }

    #[test]
    fn range_bounds_are_inclusive() {
        assert!(Values::check("g", &[PERCENT], &given(&[("up_threshold", 100.0)])).is_ok());
        assert_eq!(
            Values::check("g", &[PERCENT], &given(&[("up_threshold", 0.0)])).unwrap_err(),
            "g: up_threshold must be in 1..=100 %, got 0"
        );
        assert_eq!(
            Values::check("g", &[PERCENT], &given(&[("up_threshold", f64::INFINITY)])).unwrap_err(),
            "g: up_threshold must be an integer %, got inf"
        );
    }
}
