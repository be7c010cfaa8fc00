//! PMU counts as the model accumulates them, per CPU (`hardware`) and per thread (`work`):
//! fractional until read, then rounded to the counters a board's perf would give.

use crate::counters::CorePmu;

/// Core PMU counts as the model accumulates them (fractional until read).
#[derive(Debug, Clone, Copy, Default)]
pub struct Pmu {
    pub cycles: f64,
    pub inst: f64,
    pub l2_refill: f64,
    pub bus_access: f64,
    pub mem_access: f64,
}

/// Nearest integer of a non-negative counter value (inlined; `f64::round` is a libm call;
/// through i64 because counts stay below 2^63 and the signed conversion is one instruction).
#[inline]
pub fn count(x: f64) -> u64 {
    (x + 0.5) as i64 as u64
}

impl Pmu {
    pub fn to_counts(self) -> CorePmu {
        CorePmu {
            cpu_cycles: count(self.cycles),
            inst_retired: count(self.inst),
            l2d_cache_refill: count(self.l2_refill),
            bus_access: count(self.bus_access),
            mem_access: count(self.mem_access),
        }
    }

    /// Adds `instr` instructions with their refills, bus accesses and memory references.
    #[inline]
    pub fn add_instructions(&mut self, instr: f64, refills: f64, bus: f64, refs: f64) {
        self.inst += instr;
        self.l2_refill += refills;
        self.bus_access += bus;
        self.mem_access += refs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_to_the_nearest_integer() {
        let mut p = Pmu { cycles: 2.5, ..Default::default() };
        p.add_instructions(1.49, 0.5, 0.0, 3.0);
        let c = p.to_counts();
        assert_eq!((c.cpu_cycles, c.inst_retired, c.l2d_cache_refill, c.mem_access), (3, 1, 1, 3));
    }
}
