//! The Sandra-class workloads (seed 004): each parses, takes its thread count and allocator as
//! parameters, and runs on the Exynos 5433 with hard affinity.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::workload::{Allocation, PhaseKind, Workload, BUILTIN_WORKLOADS};

fn sandra() -> Vec<&'static str> {
    BUILTIN_WORKLOADS.iter().map(|(n, _)| *n).filter(|n| n.starts_with("sandra-")).collect()
}

#[test]
fn every_sandra_workload_is_one_parallel_phase_that_takes_threads_and_allocation() {
    let names = sandra();
    // Every row of seed 004's benchmark list: 26 single-core-class benchmarks and its inter-core
    // bandwidth and latency tests.
    assert_eq!(names.len(), 28, "{names:?}");
    for name in names {
        let w = Workload::from_spec(&format!("{name}:threads=4,allocation=static")).unwrap();
        assert_eq!(w.nthreads(), 4, "{name}");
        let kind = &w.tasks[0].phases[0].kind;
        assert!(matches!(kind, PhaseKind::Parallel { allocation: Allocation::Static, .. }), "{name}: {kind:?}");
        let w = Workload::from_spec(name).unwrap();
        assert_eq!(w.nthreads(), 8, "{name}");
        assert!(w.tasks[0].phases[0].mem.mix.is_some(), "{name}: a mix");
    }
}

#[test]
fn parameters_are_checked() {
    let e = Workload::from_spec("sandra-dhrystone:threads=0").unwrap_err();
    assert!(e.contains("threads must be 1 to 64"), "{e}");
    let e = Workload::from_spec("sandra-dhrystone:allocation=guided").unwrap_err();
    assert!(e.contains("allocation must be static or dynamic"), "{e}");
    let e = Workload::from_spec("sandra-dhrystone:chunk=5").unwrap_err();
    assert!(e.contains("unknown workload key 'chunk'"), "{e}");
    let e = Workload::from_spec("bbench:threads=4").unwrap_err();
    assert!(e.contains("takes no parameters"), "{e}");
}

#[test]
fn threads_cpus_starts_one_thread_per_cpu_the_task_may_use() {
    let p = Platform::builtin("exynos5433").unwrap();
    let w = Workload::from_spec("sandra-dhrystone:threads=cpus").unwrap();
    for (cluster, expect) in [(None, 8), (Some(1), 4)] {
        let plan = SimConfig::governor_plan(&p, "performance", &[], cluster, &[]).unwrap();
        let mut config = SimConfig::new(plan);
        config.cluster = cluster;
        config.time_limit_s = 0.01;
        let r = simulate(&p, &w, config).unwrap();
        assert_eq!(r.threads.len(), expect, "{cluster:?}");
    }
}

#[test]
fn every_sandra_workload_runs_on_the_5433_on_every_cluster() {
    let p = Platform::builtin("exynos5433").unwrap();
    for name in sandra() {
        for cluster in [None, Some(0), Some(1)] {
            let threads = if cluster.is_some() { 4 } else { 8 };
            let w = Workload::from_spec(&format!("{name}:threads={threads}")).unwrap();
            let plan = SimConfig::governor_plan(&p, "performance", &[], cluster, &[]).unwrap();
            let mut config = SimConfig::new(plan);
            config.cluster = cluster;
            config.time_limit_s = 0.02;
            let r = simulate(&p, &w, config).unwrap();
            assert!(r.threads.iter().all(|t| t.cpu_time_s > 0.0), "{name} {cluster:?}");
        }
    }
}
