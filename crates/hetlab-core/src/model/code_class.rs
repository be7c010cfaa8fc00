//! Code classes: a core type's speed depends on the code it runs, not on one CPI.
//!
//! A phase may declare its instruction mix (shares of integer ALU, integer multiply, scalar
//! VFP FP32/FP64, NEON integer/float, loads, stores, branches). Each core type describes,
//! per class, the execution unit the class issues to and the cycles one instruction of the
//! class occupies that unit (its reciprocal throughput), plus the core's issue width. The
//! compute cycles per instruction are the bottleneck of a throughput (port-pressure) model:
//!
//!   CPI = max(1 / issue_width, max over units u of Σ_{class c on u} share_c · cycles_c)
//!         + dependency_cpi
//!
//! `dependency_cpi` is what the core loses to dependency chains and branch mispredicts beyond
//! the throughput bound (large for an in-order core, small for an out-of-order one). A phase
//! without a mix keeps the single-CPI path (`cpi` x the core type's `cpi_factor`).
//!
//! AArch32 (the seed's 32-bit Android) has no NEON FP64 and no AES/SHA instructions on
//! Cortex-A57/A53: a platform whose `execution_state` is "aarch32" rejects a mix that uses
//! the `neon_fp64` or `crypto` classes, so FP64 vector code and crypto must be written as the
//! scalar/VFP code a 32-bit build really runs.

use crate::isa::{ClassCycles, Mix, CLASSES};

/// Compute cycles per instruction of `mix` on a core type with per-class throughput
/// `classes`; an error names a class the mix uses that this core cannot execute.
pub fn cpi(classes: &ClassCycles, mix: &Mix) -> Result<f64, String> {
    let mut units: Vec<(&str, f64)> = Vec::new();
    for ((name, share), cost) in CLASSES.iter().zip(mix.shares).zip(classes.costs()) {
        if share == 0.0 {
            continue;
        }
        let cost = cost.ok_or_else(|| format!("instruction class '{name}' does not exist on this core"))?;
        match units.iter_mut().find(|(u, _)| *u == cost.unit) {
            Some((_, busy)) => *busy += share * cost.cycles,
            None => units.push((&cost.unit, share * cost.cycles)),
        }
    }
    let bound = units.iter().map(|(_, busy)| *busy).fold(1.0 / classes.issue_width, f64::max);
    Ok(bound + classes.dependency_cpi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Mix;
    use crate::platform::Platform;

    fn core(platform: &str, ty: &str) -> ClassCycles {
        let p = Platform::builtin(platform).unwrap();
        p.core_types.iter().find(|t| t.name == ty).unwrap().code_classes.clone().unwrap()
    }

    #[test]
    fn bottleneck_unit_sets_the_cpi() {
        let a57 = core("exynos5433", "cortex-a57");
        // Pure integer ALU: two ALU pipes (0.5 cycles each) against 3-wide issue.
        let int = Mix::from_pairs("t", [("int_alu", 1.0)]).unwrap();
        let got = cpi(&a57, &int).unwrap();
        assert!((got - (0.5 + a57.dependency_cpi)).abs() < 1e-12, "{got}");
        // Half loads: the single load pipe is busy 0.5 cycles per instruction; ALU 0.25.
        let ld = Mix::from_pairs("t", [("int_alu", 0.5), ("load", 0.5)]).unwrap();
        assert!((cpi(&a57, &ld).unwrap() - (0.5 + a57.dependency_cpi)).abs() < 1e-12);
        // Q-form NEON float on the A53 takes twice a scalar FP op's slot on its one FP unit
        // (measured, docs/validation-core-classes.md): a NEON-heavy mix is bound by that unit,
        // not by the core's issue width.
        let a53 = core("exynos5433", "cortex-a53");
        let neon = Mix::from_pairs("t", [("neon_fp32", 0.6), ("load", 0.2), ("int_alu", 0.2)]).unwrap();
        let fpu = 0.6 * a53.neon_fp32.cycles;
        assert!(fpu > 0.5, "the FP unit, not issue, binds: {fpu}");
        assert!((cpi(&a53, &neon).unwrap() - (fpu + a53.dependency_cpi)).abs() < 1e-12);
        assert!(a53.neon_fp32.cycles > 1.8 * a53.fp32.cycles);
    }

    #[test]
    fn aarch32_has_no_crypto_or_neon_fp64() {
        let a57 = core("exynos5433", "cortex-a57");
        let aes = Mix::from_pairs("t", [("crypto", 0.5), ("int_alu", 0.5)]).unwrap();
        let e = cpi(&a57, &aes).unwrap_err();
        assert!(e.contains("'crypto'"), "{e}");
        let d = Mix::from_pairs("t", [("neon_fp64", 1.0)]).unwrap();
        assert!(cpi(&a57, &d).unwrap_err().contains("neon_fp64"));
    }

    #[test]
    fn bad_mixes_are_errors() {
        let e = Mix::from_pairs("p", [("int_alu", 0.5)]).unwrap_err();
        assert!(e.contains("sum to 1"), "{e}");
        let e = Mix::from_pairs("p", [("simd", 1.0)]).unwrap_err();
        assert!(e.contains("unknown instruction class 'simd'") && e.contains("neon_fp32"), "{e}");
    }
}
