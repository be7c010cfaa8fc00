//! The new platforms through the model: the LinSched model's "2x faster" big cores and the
//! vexpress without an interconnect.

use hetlab_core::model::{cache, cci};
use hetlab_core::platform::Platform;
use hetlab_core::workload::{Access, MemProfile, Order, Pattern};

#[test]
fn linsched_big_runs_compute_twice_as_fast_as_little() {
    let p = Platform::builtin("linsched-2b2l").unwrap();
    // a compute-only instruction (no memory references), as linsched-test.toml's phases are
    let mem = MemProfile::single(1.0, 0.0, Access::new(4096, Pattern::Random, 64, Order::Uniform), false, 0.0);
    let ns = |c: usize| {
        let core = p.core_type_of(c);
        let m = cache::miss_ratios(&mem, core, p.clusters[c].l2_bytes as f64, &p.caches);
        let miss_ns = cci::unloaded_miss_ns(&p);
        cache::instr_time(&mem, core, p.clusters[c].max_khz() as f64 / 1e6, &m, miss_ns).total_ns()
    };
    let (little, big) = (p.cluster_index("little").unwrap(), p.cluster_index("big").unwrap());
    assert_eq!(ns(big), 1.0); // one cycle at 1 GHz
    assert_eq!(ns(little), 2.0 * ns(big));
}

#[test]
fn without_a_cci_nothing_is_snooped_and_misses_pay_no_traversal() {
    let p = Platform::builtin("vexpress-a9").unwrap();
    assert_eq!(cci::snoop_response_cycles(&p, 0), 0.0);
    assert_eq!(cci::traversal_ns(&p), 0.0);
    assert_eq!(cci::cycles_at(1e6, p.cci.as_ref()), 0);
    // on the Exynos the CCI is still there
    let e = Platform::builtin("exynos5422").unwrap();
    assert_eq!(cci::traversal_ns(&e), 10.0);
    assert_eq!(cci::cycles_at(1e6, e.cci.as_ref()), 532_000_000);
}

#[test]
fn sm8650_is_four_frequency_domains_of_one_dynamiq_cluster_with_the_dts_capacities() {
    let p = Platform::builtin("sm8650").unwrap();
    let cpus: Vec<Vec<usize>> = p.clusters.iter().map(|c| c.cpus.clone()).collect();
    assert_eq!(cpus, [vec![0, 1], vec![2, 3, 4], vec![5, 6], vec![7]]);
    // the kernel's normalisation of capacity-dmips-mhz x top MHz (DT: 1024, 1792, 1792, 1894;
    // tops 2.3, 3.2, 3.0, 3.3 GHz): (dmips x kHz << 10) / the largest, truncated
    let want = |dmips: u64, khz: u64| ((dmips * khz) << 10) / (1894 * 3_300_000);
    let caps: Vec<u32> = (0..4).map(|c| p.cpu_capacity(c)).collect();
    assert_eq!(caps, [want(1024, 2_300_000), want(1792, 3_200_000), want(1792, 3_000_000), 1024].map(|v| v as u32));
    assert_eq!(caps, [385, 939, 880, 1024]);
    assert!(p.dsu.is_some() && p.cci.is_none());
}
