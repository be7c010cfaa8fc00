//! Properties of the model's mechanisms over their whole input ranges (proptest): what must hold
//! whatever the numbers — probabilities stay probabilities, more load never waits less, a bigger
//! cache never misses more, a retried fetch never costs less than a kept one, the DRAM fixed point
//! stays in range, and a platform file with changed values parses back to them.

use hetlab_core::model::{cache, cci, dram};
use hetlab_core::platform::{CacheSharing, Platform, SpeculativeFetch};
use hetlab_core::workload::{Access, MemProfile, Order, Pattern};
use proptest::prelude::*;

fn pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![Just(Pattern::Random), Just(Pattern::Sequential), Just(Pattern::Strided)]
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![Just(Order::Cyclic), Just(Order::Uniform)]
}

/// A one-component phase over `ws` bytes.
fn phase(ws: u64, pattern: Pattern, stride: u64, order: Order, dependent: bool) -> MemProfile {
    MemProfile::single(1.0, 0.3, Access::new(ws, pattern, stride, order), dependent, 0.1)
}

proptest! {
    // A fixed seed: the same cases on every run and machine (CI stays deterministic); a failure
    // prints its minimal case.
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: proptest::test_runner::RngSeed::Fixed(2026),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn tracker_waiting_is_a_probability_that_grows_with_load(
        entries in 1u32..16, slots in proptest::collection::vec((1u32..16, 0.0f64..1.0, 0.0f64..1.0), 0..8),
        more in 0.0f64..0.5,
    ) {
        let sources: Vec<cci::RequestSlots> =
            slots.iter().map(|&(slots, busy, present)| cci::RequestSlots { slots, busy, present }).collect();
        let p = cci::tracker_wait_probability(entries, &sources);
        prop_assert!((0.0..=1.0 + 1e-12).contains(&p), "{p}");
        if sources.iter().map(|s| s.slots).sum::<u32>() <= entries {
            prop_assert_eq!(p, 0.0);
        }
        // busier slots, or sources present more often, never wait less
        let busier: Vec<cci::RequestSlots> = sources
            .iter()
            .map(|s| cci::RequestSlots { busy: (s.busy + more).min(1.0), present: (s.present + more).min(1.0), ..*s })
            .collect();
        let q = cci::tracker_wait_probability(entries, &busier);
        prop_assert!(q >= p - 1e-9, "{p} -> {q}");
        // one more entry never waits more
        prop_assert!(cci::tracker_wait_probability(entries + 1, &sources) <= p + 1e-12);
    }

    #[test]
    fn a_retried_fetch_never_costs_less_than_a_kept_one(
        cci_ns in 0.0f64..50.0, dram_ns in 1.0f64..500.0, snoop_ns in 0.0f64..2000.0,
    ) {
        let retry = cci::miss(SpeculativeFetch::Retry, cci_ns, dram_ns, snoop_ns);
        let overlap = cci::miss(SpeculativeFetch::Overlap, cci_ns, dram_ns, snoop_ns);
        prop_assert!(overlap.latency_ns >= cci_ns + dram_ns && !overlap.retried);
        prop_assert!(retry.latency_ns >= overlap.latency_ns);
        // the two differ exactly when the snoop outlasts DRAM, by one DRAM access
        if retry.retried {
            prop_assert!((retry.latency_ns - overlap.latency_ns - dram_ns).abs() < 1e-9);
        } else {
            prop_assert_eq!(retry.latency_ns, overlap.latency_ns);
        }
    }

    #[test]
    fn miss_ratios_are_ordered_and_monotone(
        ws in 64u64..(1 << 30), pattern in pattern(), stride_lines in 1u64..64, order in order(),
        dependent in any::<bool>(), l2_kb in 64u64..4096, share in 0.0f64..0.5, grow in 1u64..8,
    ) {
        let p = Platform::builtin("exynos5422").unwrap();
        let core = p.core_type_of(0);
        let stride = if pattern == Pattern::Sequential { 4 } else { stride_lines * 64 };
        let mem = phase(ws, pattern, stride, order, dependent);
        let l2 = (l2_kb * 1024) as f64;
        let caches = |share: f64| CacheSharing { system_share: share, translation: true, ..CacheSharing::default() };
        let m = cache::miss_ratios(&mem, core, l2, &caches(share));
        // per reference: its own line, and at most one page walk's descriptor line
        prop_assert!((0.0..=1.0).contains(&m.walks), "{m:?}");
        for x in [m.l1, m.l2, m.l1_refills, m.l2_refills] {
            prop_assert!((0.0..=1.0 + m.walks).contains(&x), "{m:?}");
        }
        // demand misses are refills the prefetcher did not hide; an L2 refill is an L1 refill
        prop_assert!(m.l2 <= m.l2_refills + 1e-12 && m.l1 <= m.l1_refills + 1e-12, "{m:?}");
        prop_assert!(m.l2_refills <= m.l1_refills + 1e-12, "{m:?}");
        // a bigger working set never misses less; a bigger L2 or a smaller system share never more
        let bigger = cache::miss_ratios(&phase(ws * grow, pattern, stride, order, dependent), core, l2, &caches(share));
        prop_assert!(bigger.l2_refills >= m.l2_refills - 1e-12, "{m:?} -> {bigger:?}");
        let roomier = cache::miss_ratios(&mem, core, l2 * 2.0, &caches(share));
        prop_assert!(roomier.l2_refills <= m.l2_refills + 1e-12);
        let shared = cache::miss_ratios(&mem, core, l2, &caches((share + 0.2).min(0.9)));
        prop_assert!(shared.l2_refills >= m.l2_refills - 1e-12);
        // reads in flight: one for a dependent chain without streams, at least one always
        let n = cache::requests_in_flight(&mem, core);
        prop_assert!(n >= 1);
        if dependent && pattern == Pattern::Random {
            prop_assert_eq!(n, 1);
        }
    }

    #[test]
    fn dram_utilisation_settles_in_range(scale in 0.0f64..10.0, warm in 0.0f64..1.0) {
        // demand falls as latency rises with utilisation
        let latency = |rho: f64| dram::latency_ns(145.0, 7.0, rho);
        let demand = |rho: f64| scale * 145.0 / latency(rho);
        let rho = dram::solve_utilisation(warm, demand);
        prop_assert!((0.0..1.0).contains(&rho), "{rho}");
        if scale < 0.9 {
            // below saturation it is a fixed point
            prop_assert!((demand(rho) - rho).abs() < 1e-6, "{rho} vs {}", demand(rho));
        }
    }

    #[test]
    fn a_platform_with_a_changed_cci_parses_back_to_its_values(
        entries in 1u32..64, fixed in 0.0f64..500.0, retry in any::<bool>(), share in 0.0f64..0.9,
    ) {
        let text = include_str!("../../../data/platforms/exynos5422.toml");
        let fetch = if retry { "retry" } else { "overlap" };
        let text = text
            .replace("read_tracker_entries = 4", &format!("read_tracker_entries = {entries}"))
            .replace("snoop_fixed_ns = 0.0", &format!("snoop_fixed_ns = {fixed:?}"))
            .replace("speculative_fetch = \"overlap\"", &format!("speculative_fetch = \"{fetch}\""))
            .replace("system_share = 0.117", &format!("system_share = {share:?}"));
        let p = Platform::from_toml("p.toml", &text).unwrap();
        let cci = p.cci.as_ref().unwrap();
        prop_assert_eq!(cci.read_tracker_entries, entries);
        // the A15's port gives its own size: the same line
        prop_assert_eq!(p.clusters[1].read_tracker_entries, Some(entries));
        prop_assert_eq!(cci.snoop_fixed_ns, fixed);
        prop_assert_eq!(cci.speculative_fetch, if retry { SpeculativeFetch::Retry } else { SpeculativeFetch::Overlap });
        prop_assert_eq!(p.caches.system_share, share);
    }
}
