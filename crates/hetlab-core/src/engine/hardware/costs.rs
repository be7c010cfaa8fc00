//! What a running thread costs per instruction but for the latency of its L2 misses, and the
//! miss ratios behind it: pure functions of its cluster, task, phase, the cache bytes it gets
//! and the cluster's clock, looked up by that key (the same few shares and clocks recur as
//! threads come and go, so the solver works each out once). A looked-up value is the one the
//! functions give, bit for bit.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key(usize, usize, usize, u64, u32);

/// A multiplicative hash of the key's words (the keys are few small integers and one float's
/// bits; no adversary): what `HashMap`'s default SipHash costs several times over.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_u32(&mut self, word: u32) {
        self.write_u64(word as u64);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}

type Map<V> = HashMap<Key, V, BuildHasherDefault<WordHasher>>;

/// The memo of both (emptied when it holds `ENTRIES`: a run whose shares never repeat does not
/// grow it without bound).
#[derive(Default)]
pub(super) struct CostMemo {
    ratios: Map<MissRatios>,
    costs: Map<ThreadCost>,
}

impl CostMemo {
    const ENTRIES: usize = 4096;

    /// `cache::miss_ratios` of `mem` (task and phase in `at`) on cluster `at.0` with `bytes`
    /// of cache.
    pub fn ratios(&mut self, platform: &Platform, at: (usize, usize, usize), mem: &MemProfile, bytes: f64) -> MissRatios {
        let key = Key(at.0, at.1, at.2, bytes.to_bits(), 0);
        if let Some(m) = self.ratios.get(&key) {
            return *m;
        }
        let m = cache::miss_ratios(mem, platform.core_type_of(at.0), bytes, &platform.caches);
        if self.ratios.len() >= Self::ENTRIES {
            self.ratios.clear();
        }
        self.ratios.insert(key, m);
        m
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
        if let Some(c) = self.costs.get(&key) {
            return *c;
        }
        let m = self.ratios(platform, at, mem, l2_bytes);
        let core = platform.core_type_of(at.0);
        let ghz = khz as f64 / 1e6;
        let c = ThreadCost {
            cost: cache::InstrCost::new(mem, core, ghz, &m),
            refs_per_instr: mem.refs_per_instr,
            refills_per_instr: mem.refs_per_instr * m.l2_refills,
            l1_refills_per_instr: mem.refs_per_instr * m.l1_refills,
            write_factor: 1.0 + mem.write_fraction,
            l2_refills: m.l2_refills,
            requests_in_flight: cache::requests_in_flight(mem, core),
        };
        if self.costs.len() >= Self::ENTRIES {
            self.costs.clear();
        }
        self.costs.insert(key, c);
        c
    }
}
