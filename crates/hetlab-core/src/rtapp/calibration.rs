//! What rt-app's calibration (`calibrate_cpu_cycles`, src/rt-app.c) would measure on each CPU
//! of a platform: the ns one loop of its busy loop (`waste_cpu_cycles`) takes on the CPU's core
//! at its top OPP, the loop's instructions timed by the model's unloaded cost of a `run` phase
//! (`model::cache`). rt-app keeps it as a whole number (`p_load`); LISA reads it per CPU as
//! `rtapp: calib` in its platform info and scales `run` durations by it.

use crate::model::{cache, cci};
use crate::platform::Platform;
use crate::workload::file::PhaseFile;

/// Instructions of one loop of rt-app's `waste_cpu_cycles`: 12 calls of `ldexp` (four lines of
/// three nested calls) and the loop's own increment, compare and branch. ASSUMPTION: glibc's
/// `ldexp` on ARM (a call into `__scalbn`, which splits the double's exponent, adds, checks
/// the range and puts it back) counted at 25 instructions with its call and return, read from
/// glibc's sysdeps/ieee754/dbl-64/s_scalbn.c, not from a disassembly or a counter: 12 x 25 + 3.
pub const LOOP_INSTRUCTIONS: f64 = 303.0;

/// The ns per loop rt-app's calibration would find on cluster `cluster`'s cores at their top
/// OPP, as rt-app keeps it (a whole number, at least 1).
pub fn ns_per_loop(platform: &Platform, cluster: usize) -> u32 {
    // a `run` phase's profile: the busy loop works in registers and its own stack
    let phase = PhaseFile { run_us: Some(1.0), ..Default::default() }
        .into_phase("rt-app calibration")
        .expect("a run phase of 1 µs is valid");
    let core = platform.core_type_of(cluster);
    let ghz = platform.clusters[cluster].max_khz() as f64 / 1e6;
    let l2 = platform.clusters[cluster].l2_bytes as f64;
    let misses = cache::miss_ratios(&phase.mem, core, l2, &platform.caches);
    let ns = cache::instr_time(&phase.mem, core, ghz, &misses, cci::unloaded_miss_ns(platform)).total_ns();
    (LOOP_INSTRUCTIONS * ns).round().max(1.0) as u32
}

/// [`ns_per_loop`] for every CPU, in CPU order (the logical CPUs at boot).
pub fn per_cpu(platform: &Platform) -> Vec<u32> {
    (0..platform.ncpus())
        .map(|cpu| {
            let cluster =
                platform.clusters.iter().position(|c| c.cpus.contains(&cpu)).expect("every CPU is in a cluster");
            ns_per_loop(platform, cluster)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_faster_core_loops_in_fewer_ns_and_every_cpu_of_a_cluster_alike() {
        let p = Platform::builtin("exynos5422").unwrap();
        let ns = per_cpu(&p);
        let (little, big) = (p.cluster_index("little").unwrap(), p.cluster_index("big").unwrap());
        assert_eq!(ns.len(), 8);
        assert!(ns[4] < ns[0], "{ns:?}");
        assert_eq!(ns[0], ns_per_loop(&p, little));
        assert_eq!(ns[7], ns_per_loop(&p, big));
    }
}
