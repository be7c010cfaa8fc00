//! Solutions of the model that recur. At a re-solve tolerance of 0 a solution — each running
//! thread's speed, each CCI port's rates, the DRAM's utilisation and line rate, the L3's
//! lookups — is a function of what runs where, each cluster's clock and power state, the DRAM
//! noise epoch and the utilisation the DRAM fixed point starts from. What runs where enters as
//! the running CPUs' (cluster, online, task, phase) in CPU order — the order the solver sums
//! them in — and each cluster's online CPUs (their kernel housekeeping): not which thread of a
//! task runs, nor on which of a cluster's identical cores, when the sequence is the same
//! (unless a phase reads lines other threads wrote: then the live threads are inputs too, and
//! nothing is kept). The same few compositions and clocks recur as periodic threads come and
//! go, so a solution is kept by that key and given again, bit for bit, where the key recurs.

use crate::model::cci::PortRates;
use crate::result::MAX_CLUSTERS;

use super::load::CpuLoad;

/// What a CPU's part of the solution depends on, in two words: the task of the thread it runs,
/// and its phase, the CPU's cluster, whether the CPU is online and whether it runs a thread
/// (`phase << 16 | cluster << 2 | online << 1 | runs`; tasks and phases below 2^48, clusters
/// below 2^14) — not which thread: a thread's costs are its task's phase's on that cluster, and
/// its shared-line transfers (which do depend on the threads running) are worked out at every
/// solve and compared with the solution's. An idle CPU's task and phase are 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CpuKey([u64; 2]);

impl CpuKey {
    #[inline]
    pub fn of(cpu: &CpuLoad) -> CpuKey {
        let (task, phase, runs) = cpu.running.map_or((0, 0, 0), |r| (r.task as u64, r.phase as u64, 1));
        CpuKey([task, phase << 16 | (cpu.cluster as u64) << 2 | (cpu.online as u64) << 1 | runs])
    }

    #[inline]
    pub fn cluster(self) -> usize {
        (self.0[1] >> 2 & 0x3fff) as usize
    }

    #[inline]
    fn online(self) -> bool {
        self.0[1] & 2 != 0
    }

    #[inline]
    fn runs(self) -> bool {
        self.0[1] & 1 != 0
    }

    /// Whether a CPU whose key was `self` and is now `now` holds what it held for the rates:
    /// the same task and phase on the same cluster (online or not), or idle both times and
    /// online both times or neither (an idle CPU and an offline one differ: only the first does
    /// kernel work; an idle CPU's cluster is not an input of the rates).
    #[inline]
    pub fn same_place(self, now: CpuKey) -> bool {
        match (self.runs(), now.runs()) {
            (true, true) => self.0[0] == now.0[0] && self.0[1] | 2 == now.0[1] | 2,
            (false, false) => self.online() == now.online(),
            _ => false,
        }
    }
}

/// The key's words: each CPU that runs a thread, its two words (`CpuKey`) in CPU order; per
/// cluster its online CPUs, then its clock and power state; the noise factor's and the warm
/// start's bits. How many CPUs run a thread is not a word of its own: a run's clusters are
/// fixed, so the key's length says it (and keys of different lengths differ).
pub(super) struct KeyBuilder {
    words: Vec<u64>,
}

impl KeyBuilder {
    pub fn new() -> KeyBuilder {
        KeyBuilder { words: Vec::new() }
    }

    /// The key of a solution of `cpus` (each one's key; `online`: each cluster's online CPUs
    /// among them) on clusters `(khz, powered)` at DRAM `noise`, started from `warm_start`.
    #[inline]
    pub fn build(
        &mut self,
        cpus: &[CpuKey],
        online: &[u32; MAX_CLUSTERS],
        clusters: impl ExactSizeIterator<Item = (u32, bool)>,
        noise: f64,
        warm_start: f64,
    ) -> &[u64] {
        let nclusters = clusters.len();
        // sized for every CPU running, written in place and cut to length
        self.words.resize(2 * cpus.len() + 2 * nclusters + 2, 0);
        let words = &mut self.words[..];
        let mut n = 0;
        for &key in cpus {
            if key.runs() {
                words[n..n + 2].copy_from_slice(&key.0);
                n += 2;
            }
        }
        for (w, &count) in words[n..n + nclusters].iter_mut().zip(online) {
            *w = count as u64;
        }
        n += nclusters;
        for (w, (khz, powered)) in words[n..n + nclusters].iter_mut().zip(clusters) {
            *w = (khz as u64) << 1 | powered as u64;
        }
        n += nclusters;
        self.words.truncate(n);
        self.words.push(noise.to_bits());
        self.words.push(warm_start.to_bits());
        &self.words
    }

    /// The key built last.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// What a solution gave: the speed of each running thread in CPU order, each cluster's port
/// rates, the DRAM's answer.
pub(super) struct Solution<S> {
    key: Vec<u64>,
    pub speeds: Vec<S>,
    pub ports: [Option<PortRates>; MAX_CLUSTERS],
    pub utilisation: f64,
    pub lines_per_us: f64,
    pub l3_hits_per_us: f64,
    pub l3_misses_per_us: f64,
    /// Each cluster's dynamic power, mW (`cluster_power`: set after the solution is put).
    pub dynamic_mw: [f64; MAX_CLUSTERS],
}

/// A direct-mapped table of solutions: a key has one slot, and a new solution there replaces
/// the old one (solved again if its key comes back).
pub(super) struct Solutions<S> {
    slots: Vec<Option<Box<Solution<S>>>>,
}

impl<S> Default for Solutions<S> {
    fn default() -> Self {
        Solutions { slots: Vec::new() }
    }
}

impl<S> Solutions<S> {
    const SLOTS: usize = 1024;

    fn slot(key: &[u64]) -> usize {
        let mut h: u64 = 0;
        for &word in key {
            h = (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        (h >> 32) as usize & (Self::SLOTS - 1)
    }

    /// The solution kept for `key`.
    pub fn get(&self, key: &[u64]) -> Option<&Solution<S>> {
        self.slots.get(Self::slot(key))?.as_deref().filter(|s| s.key == key)
    }

    /// Keeps a solution for `key`, its fields set by `fill` (the slot's buffers reused); its slot.
    #[inline]
    pub fn put(&mut self, key: &[u64], fill: impl FnOnce(&mut Solution<S>)) -> usize {
        if self.slots.is_empty() {
            self.slots.resize_with(Self::SLOTS, || None);
        }
        let at = Self::slot(key);
        let slot = self.slots[at].get_or_insert_with(|| {
            Box::new(Solution {
                key: Vec::new(),
                speeds: Vec::new(),
                ports: [None; MAX_CLUSTERS],
                utilisation: 0.0,
                lines_per_us: 0.0,
                l3_hits_per_us: 0.0,
                l3_misses_per_us: 0.0,
                dynamic_mw: [0.0; MAX_CLUSTERS],
            })
        });
        slot.key.clear();
        slot.key.extend_from_slice(key);
        fill(slot);
        at
    }

    /// The solution in slot `at` (one `put` returned).
    pub fn at_mut(&mut self, at: usize) -> &mut Solution<S> {
        self.slots[at].as_mut().expect("a solution was put there")
    }
}

/// Whether keeping solutions pays in this run: where solutions do not recur (a lone thread whose
/// DRAM warm start moves at every solve) building keys and keeping solutions is work for
/// nothing, and a solve given again costs a solve of every cluster at the next one (the
/// incremental state is the last solve's): below about a third given again it does not pay
/// (8 periodic threads, 32 %: as many instructions and 5 % more time with it). Solutions are
/// kept over a window of `TRIAL` solves; if fewer than `PAYS_PERCENT` % of them were given
/// again, not for the next `REST` solves, then tried again (the table kept meanwhile). Which solves are
/// keyed changes nothing in the results: a solution given again is the one solved.
#[derive(Default)]
pub(super) struct Payoff {
    solves: u32,
    given: u32,
    resting: u32,
}

impl Payoff {
    const TRIAL: u32 = 64;
    const PAYS_PERCENT: u32 = 35;
    const REST: u32 = 512;

    /// Whether to key the solve to come.
    pub fn key_now(&mut self) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return false;
        }
        true
    }

    /// A keyed solve was given again (`given`) or solved.
    pub fn record(&mut self, given: bool) {
        self.solves += 1;
        self.given += given as u32;
        if self.solves == Self::TRIAL {
            if self.given * 100 < self.solves * Self::PAYS_PERCENT {
                self.resting = Self::REST;
            }
            (self.solves, self.given) = (0, 0);
        }
    }
}
