//! `SimConfig::resolve_tolerance`: at every re-solution of a real workload, what the kept
//! solution gives against the model solved again from nothing on the same inputs
//! (`hardware::exact_check`): equal to the bit at 0, within `t·(2+t)` at `t` (docs/performance.md
//! derives the bound: a thread's time per instruction is affine in its miss latency and
//! proportional to the bandwidth stretch, each kept within `t` of the value it was solved at).

use super::*;

/// 8 periodic threads that miss the L2 (a 4 MB random working set, 2 ms every 5 ms, `smp`,
/// ondemand) for 2 s at `tolerance`: as they start and stop on either cluster the DRAM
/// utilisation, and with it every cluster's miss latency, moves at each event. The largest
/// relative difference from the exact solution where the solver re-solved and where it reused
/// the last solution, and how many re-solutions were compared.
fn memory_bound_against_exact(tolerance: f64) -> (f64, f64, u64) {
    let p = exynos();
    let mut c = config(&p, "ondemand", None, &[]);
    c.scheduler = SchedPolicy::Smp;
    c.time_limit_s = 2.0;
    c.resolve_tolerance = tolerance;
    let spec = "periodic:threads=8,run_us=2000,period_us=5000,duration_us=2000000,working_set_bytes=4194304";
    let w = Workload::from_spec(spec).unwrap();
    let mut engine = Engine::new(&p, &w, c).unwrap();
    let check = engine.hw.check_against_exact();
    engine.run().unwrap();
    (check.worst.get(), check.worst_reused.get(), check.compared.get())
}

#[test]
fn at_tolerance_zero_every_re_solution_is_the_exact_one_to_the_bit() {
    let (worst, worst_reused, compared) = memory_bound_against_exact(0.0);
    assert!(compared > 1000, "{compared} re-solutions compared");
    assert_eq!(worst, 0.0);
    // a reused solution is the last one, whose fixed point stopped within 1e-9 of the utilisation
    assert!(worst_reused < 1e-9, "{worst_reused}");
}

#[test]
fn at_a_tolerance_speeds_rates_and_power_stay_within_its_bound_of_the_exact_solution() {
    for tolerance in [1e-3, 1e-2] {
        let (solved, reused, compared) = memory_bound_against_exact(tolerance);
        let worst = solved.max(reused);
        let bound = tolerance * (2.0 + tolerance);
        assert!(compared > 1000, "{compared} re-solutions compared");
        // the tolerance kept some cluster's solution while its miss latency moved
        assert!(worst > 0.0, "tolerance {tolerance}: nothing kept");
        assert!(worst <= bound * (1.0 + 1e-9), "tolerance {tolerance}: {worst} > {bound}");
    }
}

#[test]
fn a_resolve_tolerance_out_of_range_is_refused_naming_it() {
    let p = exynos();
    for bad in [-1e-3, 0.5, f64::NAN] {
        let mut c = config(&p, "ondemand", None, &[]);
        c.resolve_tolerance = bad;
        let e = simulate(&p, &Workload::from_spec("mixed8").unwrap(), c).unwrap_err();
        assert!(e.contains("resolve tolerance"), "{e}");
    }
}
