//! What a running thread costs per instruction but for the latency of its L2 misses, and the
//! miss ratios behind it: pure functions of its cluster, task, phase, the cache bytes it gets
//! and the cluster's clock, looked up by that key (the same few shares and clocks recur as
//! threads come and go, so the solver works each out once). A looked-up value is the one the
//! functions give, bit for bit.

use crate::model::cache::{self, InstrCost, MissRatios};
use crate::platform::Platform;
use crate::workload::MemProfile;

/// A running thread's terms that do not depend on the miss latency (`cache::InstrCost`) and
/// what it asks of the memory system per instruction.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ThreadCost {
    pub cost: InstrCost,
    pub refs_per_instr: f64,
    pub refills_per_instr: f64,
    /// Lines filled into its L1 per instruction.
    pub l1_refills_per_instr: f64,
    /// 1 + the share of refills that cost a write-back.
    pub write_factor: f64,
    /// L2 line refills per reference (the DSU's L3 hit share starts from it).
    pub l2_refills: f64,
    /// Reads it can have in flight beyond its L2 (`cache::requests_in_flight`).
    pub requests_in_flight: u32,
}

/// (cluster, task, phase, cache bytes' bits, clock kHz; 0 where the clock is no input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key(usize, usize, usize, u64, u32);

impl Key {
    /// A multiplicative hash of the key's words (few small integers and one float's bits).
    fn slot(&self, slots: usize) -> usize {
        let mut h: u64 = 0;
        for word in [self.0 as u64, self.1 as u64, self.2 as u64, self.3, self.4 as u64] {
            h = (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        (h >> 32) as usize & (slots - 1)
    }
}

/// A direct-mapped table: a key has one slot, and a new key there replaces the old one (it is
/// worked out again if it comes back).
struct Table<V> {
    slots: Vec<Option<(Key, V)>>,
}

impl<V: Copy> Table<V> {
    const SLOTS: usize = 256;

    fn get_or(&mut self, key: Key, make: impl FnOnce() -> V) -> V {
        if self.slots.is_empty() {
            self.slots = vec![None; Self::SLOTS];
        }
        let slot = &mut self.slots[key.slot(Self::SLOTS)];
        match slot {
            Some((k, v)) if *k == key => *v,
            _ => {
                let v = make();
                *slot = Some((key, v));
                v
            }
        }
    }
}

impl<V> Default for Table<V> {
    fn default() -> Self {
        Table { slots: Vec::new() }
    }
}

/// The memo of both.
#[derive(Default)]
pub(super) struct CostMemo {
    ratios: Table<MissRatios>,
    costs: Table<ThreadCost>,
}

impl CostMemo {
    /// `cache::miss_ratios` of `mem` (task and phase in `at`) on cluster `at.0` with `bytes`
    /// of cache.
    pub fn ratios(
        &mut self,
        platform: &Platform,
        at: (usize, usize, usize),
        mem: &MemProfile,
        bytes: f64,
    ) -> MissRatios {
        let key = Key(at.0, at.1, at.2, bytes.to_bits(), 0);
        self.ratios.get_or(key, || cache::miss_ratios(mem, platform.core_type_of(at.0), bytes, &platform.caches))
    }

    /// The cost of `mem` (task and phase in `at`) on cluster `at.0` at `khz` with `l2_bytes`
    /// of its L2.
    pub fn cost(
        &mut self,
        platform: &Platform,
        at: (usize, usize, usize),
        mem: &MemProfile,
        l2_bytes: f64,
        khz: u32,
    ) -> ThreadCost {
        let key = Key(at.0, at.1, at.2, l2_bytes.to_bits(), khz);
        let ratios = &mut self.ratios;
        self.costs.get_or(key, || {
            let core = platform.core_type_of(at.0);
            let m = ratios.get_or(Key(at.0, at.1, at.2, l2_bytes.to_bits(), 0), || {
                cache::miss_ratios(mem, core, l2_bytes, &platform.caches)
            });
            ThreadCost {
                cost: cache::InstrCost::new(mem, core, khz as f64 / 1e6, &m),
                refs_per_instr: mem.refs_per_instr,
                refills_per_instr: mem.refs_per_instr * m.l2_refills,
                l1_refills_per_instr: mem.refs_per_instr * m.l1_refills,
                write_factor: 1.0 + mem.write_fraction,
                l2_refills: m.l2_refills,
                requests_in_flight: cache::requests_in_flight(mem, core),
            }
        })
    }
}
