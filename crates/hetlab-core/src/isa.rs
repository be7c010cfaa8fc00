//! The instruction classes a core type's throughput is described in and a phase's mix is
//! written in (the vocabulary shared by platform files, workload files and
//! `model::code_class`, which turns them into cycles per instruction).
//!
//! AArch32 has no NEON FP64 and no ARMv8 AES/SHA instructions on Cortex-A57/A53: a core type
//! describes `neon_fp64` and `crypto` only where its execution state has them.

use serde::Deserialize;

/// The instruction classes, in the order of [`Mix::shares`].
pub const CLASSES: [&str; 10] =
    ["int_alu", "int_mul", "fp32", "fp64", "neon_int", "neon_fp32", "neon_fp64", "crypto", "load", "store"];

/// A phase's instruction mix: each class's share of its instructions (sum 1; branches and
/// other single-cycle integer work count as `int_alu`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Mix {
    pub shares: [f64; CLASSES.len()],
}

/// How one class issues on a core type: the unit it occupies and for how many cycles.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassCost {
    /// Execution unit (pipeline group) name; classes naming the same unit compete for it.
    pub unit: String,
    /// Cycles one instruction of the class occupies the unit (reciprocal throughput per unit
    /// group, e.g. 0.5 for two identical pipelines each taking one per cycle).
    pub cycles: f64,
}

/// A core type's per-class throughput (`[core_types.code_classes]` in a platform file).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassCycles {
    /// Instructions the core can issue per cycle.
    pub issue_width: f64,
    /// Cycles per instruction lost to dependencies and mispredicts beyond the throughput bound.
    pub dependency_cpi: f64,
    pub int_alu: ClassCost,
    pub int_mul: ClassCost,
    pub fp32: ClassCost,
    pub fp64: ClassCost,
    pub neon_int: ClassCost,
    pub neon_fp32: ClassCost,
    /// `None`: the class does not exist on this core in its execution state.
    #[serde(default)]
    pub neon_fp64: Option<ClassCost>,
    #[serde(default)]
    pub crypto: Option<ClassCost>,
    pub load: ClassCost,
    pub store: ClassCost,
}

impl ClassCycles {
    pub fn costs(&self) -> [Option<&ClassCost>; CLASSES.len()] {
        [
            Some(&self.int_alu),
            Some(&self.int_mul),
            Some(&self.fp32),
            Some(&self.fp64),
            Some(&self.neon_int),
            Some(&self.neon_fp32),
            self.neon_fp64.as_ref(),
            self.crypto.as_ref(),
            Some(&self.load),
            Some(&self.store),
        ]
    }

    /// Checks the table; `at` names it in errors.
    pub fn validate(&self, at: &str) -> Result<(), String> {
        if !(self.issue_width.is_finite() && self.issue_width >= 1.0) {
            return Err(format!("{at}.issue_width must be at least 1, got {}", self.issue_width));
        }
        if !(self.dependency_cpi.is_finite() && self.dependency_cpi >= 0.0) {
            return Err(format!("{at}.dependency_cpi must not be negative, got {}", self.dependency_cpi));
        }
        for (name, cost) in CLASSES.iter().zip(self.costs()) {
            if let Some(c) = cost {
                if !(c.cycles.is_finite() && c.cycles > 0.0) {
                    return Err(format!("{at}.{name}.cycles must be positive, got {}", c.cycles));
                }
                if c.unit.is_empty() {
                    return Err(format!("{at}.{name}.unit must not be empty"));
                }
            }
        }
        Ok(())
    }
}

impl Mix {
    /// A mix from `(class, share)` pairs; the shares must sum to 1.
    pub fn from_pairs<'a>(at: &str, pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Result<Mix, String> {
        let mut mix = Mix::default();
        for (name, share) in pairs {
            let i = CLASSES
                .iter()
                .position(|c| *c == name)
                .ok_or_else(|| format!("{at}: unknown instruction class '{name}'; classes: {}", CLASSES.join(", ")))?;
            if !(share.is_finite() && (0.0..=1.0).contains(&share)) {
                return Err(format!("{at}.{name} must be within 0..=1, got {share}"));
            }
            mix.shares[i] = share;
        }
        let total: f64 = mix.shares.iter().sum();
        if (total - 1.0).abs() > 1e-6 {
            return Err(format!("{at}: the instruction shares must sum to 1, they sum to {total}"));
        }
        Ok(mix)
    }

    /// Share of memory instructions (loads + stores): a mix's data references per instruction.
    pub fn refs_per_instr(&self) -> f64 {
        self.shares[8] + self.shares[9]
    }
}
