//! Random replacement, as the caches and the TLB are modelled: how often a line of a working
//! set misses, and how long a line read now and then stays resident while other lines are
//! replaced. Shared by `cache` and `tlb` (the caches ask `tlb` for their page walks; `tlb` needs
//! only this).

use crate::workload::Order;

/// Steady-state miss probability of a line when a working set `x` times the cache's capacity is
/// revisited. Caches are modelled with random replacement (ASSUMPTION: ARM L2s offer
/// pseudo-random replacement; it also smooths the set-associativity effects of real caches).
/// - `Cyclic` (a pointer chase's laps): a line survives a lap if none of the m·x·C misses in
///   between evicts it, so the miss ratio solves m = 1 - exp(-m·x) (zero while x <= 1).
/// - `Uniform` random reuse: a random line is resident with probability 1/x.
pub fn line_miss_ratio(x: f64, order: Order) -> f64 {
    if x <= 1.0 {
        return 0.0;
    }
    if x.is_infinite() {
        return 1.0;
    }
    match order {
        Order::Uniform => 1.0 - 1.0 / x,
        Order::Cyclic => {
            // Newton on g(m) = m - 1 + exp(-m x), from m = 1 (converges from the right).
            let mut m: f64 = 1.0;
            for _ in 0..50 {
                let e = (-m * x).exp();
                let step = (m - 1.0 + e) / (1.0 - x * e);
                m -= step;
                if step.abs() < 1e-12 {
                    break;
                }
            }
            m.clamp(0.0, 1.0)
        }
    }
}

/// Probability that a line read `reads_per_ref` times per reference is resident in a
/// random-replacement cache that evicts each of its lines `evictions_per_ref` times per
/// reference (its fills per reference over its lines): the line alternates between resident
/// until evicted and absent until read, so it is resident r / (r + e) of the time.
pub fn resident(reads_per_ref: f64, evictions_per_ref: f64) -> f64 {
    if evictions_per_ref <= 0.0 {
        1.0
    } else {
        reads_per_ref / (reads_per_ref + evictions_per_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclic_miss_ratio_solves_its_fixed_point() {
        assert_eq!(line_miss_ratio(0.5, Order::Cyclic), 0.0);
        assert_eq!(line_miss_ratio(1.0, Order::Cyclic), 0.0);
        for x in [1.1, 1.5, 2.0, 4.0, 16.0] {
            let m = line_miss_ratio(x, Order::Cyclic);
            assert!((m - (1.0 - (-m * x).exp())).abs() < 1e-9, "x={x} m={m}");
            assert!(m > 0.0 && m <= 1.0);
        }
        // x = 2: m = 0.7968 (solution of m = 1 - e^{-2m})
        assert!((line_miss_ratio(2.0, Order::Cyclic) - 0.796812).abs() < 1e-5);
        assert!((line_miss_ratio(4.0, Order::Uniform) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn a_descriptor_line_read_more_often_than_lines_are_replaced_stays_resident() {
        assert_eq!(resident(0.01, 0.0), 1.0);
        assert!((resident(1.0 / 2048.0, 1.0 / 7234.0) - 7234.0 / 9282.0).abs() < 1e-12);
        assert!(resident(1e-3, 1e-6) > 0.99 && resident(1e-6, 1e-3) < 0.01);
    }
}
