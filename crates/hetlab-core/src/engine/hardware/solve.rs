//! The model at work: each running thread's speed (`model::cache` against the L2 share it
//! gets), the latency of its misses (`model::cci` over `model::dram`), the shared-line
//! transfers between its task's threads (`model::coherence`), the DRAM utilisation they settle
//! on, and the CCI port rates — re-solved whenever something they depend on changes. On a
//! platform with a DSU (`model::dsu`) an L2 miss looks the shared L3 up first, at the DSU's
//! clock, and a line another cluster holds is forwarded by the snoop filter.

use super::cluster::ClusterHw;
use super::costs::CostMemo;
use super::load::{ClusterCounts, CpuLoad, RunningOn};
use super::solutions::{CpuKey, KeyBuilder, Payoff, Solutions};
use crate::model::cache::{self, InstrTime};
use crate::model::dram::DramState;
use crate::model::{cci, coherence, dram, dsu};
use crate::platform::{Platform, SpeculativeFetch};
use crate::result::MAX_CLUSTERS;
use crate::sched::CpuMask;
use crate::workload::MemProfile;

/// How fast a running thread goes and what it does to the memory system, from the last
/// re-solution of the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct Speed {
    pub instr_per_us: f64,
    pub stall_share: f64,
    pub refills_per_instr: f64,
    pub bus_per_instr: f64,
    pub refs_per_instr: f64,
    /// Lines it takes from other cores' caches per instruction (`model::coherence`).
    pub peer_lines_per_instr: f64,
}

/// What the model's answer depends on besides temperature.
pub(super) struct Inputs<'i> {
    pub cpus: &'i [CpuLoad],
    /// The CPUs whose load may differ from the one the solver last saw (`None`: any of them).
    pub moved: Option<CpuMask>,
    pub clusters: &'i [ClusterHw],
    pub noise: f64,
}

/// The speeds of the threads and the buffers of the solution, kept between calls (the model
/// is re-solved at most once per event).
pub(super) struct Solver {
    speeds: Vec<Speed>,
    /// Threads' costs and miss ratios by (cluster, task, phase, cache bytes, clock).
    costs: CostMemo,
    snoop_ns: Vec<f64>,
    running: Vec<Running>,
    ws_per_cluster: Vec<f64>,
    /// Every running thread's L3 footprint together (DSU platforms), bytes.
    ws_in_l3: f64,
    /// The speed the last solution gave the thread on each CPU.
    speed_on_cpu: Vec<Speed>,
    /// The solution is re-solved incrementally: a cluster whose CPUs' keys and clock (and power
    /// state) are those of the last solution keeps its threads' costs and L2 shares; one whose
    /// misses, stretch and coherence are also the same keeps its threads' speeds and its port's
    /// rates. The keys, clocks and DRAM noise of the last solution, the clusters whose inputs
    /// changed since (`reuse`), the running entry on each CPU then, and the misses and stretch
    /// its rates were set at.
    solved_cpus: Vec<CpuKey>,
    /// The keys of the CPUs now, each cluster's online CPUs and cores powered down now, and
    /// each CPU's load as they count it: written by `reuse` for the CPUs whose load moved (a
    /// debug assertion checks them all).
    keys: Vec<CpuKey>,
    counts: ClusterCounts,
    counted: Vec<CpuLoad>,
    /// The CPUs whose key now differs from the last solution's (a debug assertion checks it).
    differs: CpuMask,
    solved_clocks: Vec<(u32, bool)>,
    solved_noise: u64,
    changed: [bool; MAX_CLUSTERS],
    solved_on_cpu: Vec<Running>,
    /// Per cluster, the miss and the bandwidth stretch its threads' speeds and its port's rates
    /// were last solved at (kept with them: a cluster that keeps its rates keeps these too, so
    /// that the tolerance is measured from the solution, not from the last event).
    solved_miss: [Option<cci::Miss>; MAX_CLUSTERS],
    solved_stretch: [f64; MAX_CLUSTERS],
    /// How far, relative, a cluster's coupled inputs — its L2 miss's latency (which moves with
    /// the DRAM utilisation the other cluster's threads cause) and the bandwidth stretch — may
    /// move from the values its rates were solved at before the cluster is re-solved
    /// (`SimConfig::resolve_tolerance`; 0: bit for bit, the exact solution).
    pub resolve_tolerance: f64,
    /// Whether a phase of the run reads lines other threads wrote (the phases never change:
    /// without one, no solve has to look for one among the running threads).
    pub peer_reads: bool,
    /// Solutions kept by their inputs, the key of the one solved now, whether the incremental
    /// state above is older than the last solution (one was given from `solutions`), and
    /// whether keeping them pays.
    solutions: Solutions<Speed>,
    key: KeyBuilder,
    stale: bool,
    payoff: Payoff,
    /// Tests only: how many solutions were given from `solutions`.
    #[cfg(test)]
    pub solutions_given: u64,
    /// The DSU's clock when the run holds it fixed (`SimConfig::dsu_khz`), kHz.
    pub dsu_fixed_khz: Option<u32>,
    /// Each cluster's dynamic power in the last solution (solved or given), mW, once known (a
    /// solved one's is worked out by `cluster_power` after it and kept here and in `solutions`,
    /// in the slot `put_slot` it was put in); a reuse keeps it.
    dynamic_mw: [f64; MAX_CLUSTERS],
    dynamic_known: bool,
    put_slot: Option<usize>,
}

/// The DRAM's answer to a solution.
pub(super) struct DramAnswer {
    pub utilisation: f64,
    pub lines_per_us: f64,
    /// The DSU's L3 lookups per µs that hit and that missed (0 without a DSU).
    pub l3_hits_per_us: f64,
    pub l3_misses_per_us: f64,
}

/// A running thread while the model is re-solved.
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    cpu: usize,
    thread: usize,
    task: usize,
    phase: usize,
    cluster: usize,
    ws_bytes: f64,
    /// Its cost per instruction but for the latency of its L2 misses.
    cost: cache::InstrCost,
    refs_per_instr: f64,
    refills_per_instr: f64,
    /// Lines filled into its L1 per instruction (BUS_ACCESS per beat counts these).
    l1_refills_per_instr: f64,
    /// 1 + the share of refills that cost a write-back.
    write_factor: f64,
    /// Reads it can have in flight beyond its L2 (`cache::requests_in_flight`).
    requests_in_flight: u32,
    /// Lines moved into this core per instruction from other cores' caches (shared updates
    /// and handed-over data), those from another cluster, that transfer's latency, and the
    /// stall all such transfers add per instruction.
    peer_lines_per_instr: f64,
    cross_transfers_per_instr: f64,
    cross_transfer_ns: f64,
    coherence_stall_ns: f64,
    /// Behind a DSU: the share of its L2 misses the L3 serves and an L3 lookup's latency, ns.
    l3: Option<(f64, f64)>,
}

/// Where the other threads a thread takes lines from are (`others_by_cluster`).
#[derive(Default)]
struct Others {
    same: usize,
    cross: usize,
    cross_ns: f64,
}

impl Running {
    /// Time per instruction when a miss beyond the L3 (or the L2, without a DSU) is `miss`,
    /// shared-line transfers included.
    fn time_at(&self, miss: cci::Miss) -> InstrTime {
        let mut it = self.cost.at(self.l2_miss_ns(miss));
        it.stall_ns += self.coherence_stall_ns;
        it
    }

    /// An L2 miss's latency, ns: through the L3 when there is a DSU.
    fn l2_miss_ns(&self, miss: cci::Miss) -> f64 {
        match self.l3 {
            Some((hit_share, l3_ns)) => dsu::l2_miss_ns(hit_share, l3_ns, miss.latency_ns),
            None => miss.latency_ns,
        }
    }

    /// The share of its L2 misses that go on to the memory system.
    fn dram_share(&self) -> f64 {
        self.l3.map_or(1.0, |(hit_share, _)| 1.0 - hit_share)
    }
}

/// The DSU's clock and µV now: `fixed_khz` when the run holds it there, else its governor's
/// answer to the clusters' clocks (`None`: the platform has no DSU).
pub(super) fn dsu_clock(platform: &Platform, clusters: &[ClusterHw], fixed_khz: Option<u32>) -> Option<(u32, u32)> {
    let d = platform.dsu.as_ref()?;
    Some(match fixed_khz {
        Some(khz) => (khz, d.microvolts_at(khz)),
        None => dsu::clock(d, clusters.iter().map(|cl| cl.powered.then_some(cl.cur_khz))),
    })
}

/// Latency of a snoop served by cluster `c` now, ns; 0 when it is powered down (its CCI port is
/// disabled and nothing is snooped).
pub(super) fn snoop_served_ns(platform: &Platform, clusters: &[ClusterHw], c: usize) -> f64 {
    let cluster = &clusters[c];
    if !cluster.powered {
        return 0.0;
    }
    cci::platform_snoop_ns(platform, c, cluster.cur_khz)
}

/// Latency of moving a line from a core of cluster `from` into a core of cluster `to` (another
/// core of the same cluster when they are equal), now, ns (`dsu_fixed_khz`: as `dsu_clock`).
pub(super) fn transfer_from_cluster_ns(
    platform: &Platform,
    clusters: &[ClusterHw],
    dsu_fixed_khz: Option<u32>,
    from: usize,
    to: usize,
) -> f64 {
    let core = platform.core_type_of(to);
    let ghz = clusters[to].cur_khz as f64 / 1e6;
    let cross = (from != to).then(|| match (&platform.dsu, dsu_clock(platform, clusters, dsu_fixed_khz)) {
        // the snoop filter forwards the request to the core that holds the line
        (Some(d), Some((dsu_khz, _))) => {
            let holder = platform.core_type_of(from);
            (0.0, dsu::forwarded_snoop_ns(d, dsu_khz, holder.l2_hit_cycles, clusters[from].cur_khz))
        }
        _ => (cci::traversal_ns(platform), snoop_served_ns(platform, clusters, from)),
    });
    coherence::transfer_ns(core.l1_hit_cycles, core.l2_hit_cycles, ghz, cross)
}

impl Solver {
    pub fn new(nthreads: usize) -> Solver {
        Solver {
            speeds: vec![Speed::default(); nthreads],
            costs: CostMemo::default(),
            snoop_ns: Vec::new(),
            running: Vec::new(),
            ws_per_cluster: Vec::new(),
            ws_in_l3: 0.0,
            speed_on_cpu: Vec::new(),
            solved_cpus: Vec::new(),
            keys: Vec::new(),
            counts: ClusterCounts::default(),
            counted: Vec::new(),
            differs: CpuMask::EMPTY,
            solved_clocks: Vec::new(),
            solved_noise: 0,
            changed: [true; MAX_CLUSTERS],
            solved_on_cpu: Vec::new(),
            solved_miss: [None; MAX_CLUSTERS],
            solved_stretch: [f64::NAN; MAX_CLUSTERS],
            resolve_tolerance: 0.0,
            peer_reads: true,
            solutions: Solutions::default(),
            key: KeyBuilder::new(),
            stale: false,
            payoff: Payoff::default(),
            #[cfg(test)]
            solutions_given: 0,
            dsu_fixed_khz: None,
            dynamic_mw: [0.0; MAX_CLUSTERS],
            dynamic_known: false,
            put_slot: None,
        }
    }

    /// How many threads it keeps speeds for.
    #[cfg(test)]
    pub fn threads(&self) -> usize {
        self.speeds.len()
    }

    #[inline]
    pub fn speed(&self, t: usize) -> &Speed {
        &self.speeds[t]
    }

    /// Each cluster's online CPUs and cores powered down, as `reuse` counted them last.
    pub fn counts(&self) -> &ClusterCounts {
        &self.counts
    }

    /// Each cluster's dynamic power in the last solution, mW, where `dynamic_known`.
    pub fn dynamic_mw(&self) -> &[f64; MAX_CLUSTERS] {
        &self.dynamic_mw
    }

    /// Whether the last solution's dynamic power is known (it was given again or reused; a
    /// solution solved needs `keep_dynamic`).
    pub fn dynamic_known(&self) -> bool {
        self.dynamic_known
    }

    /// The dynamic power of the solution just solved, kept with it.
    pub fn keep_dynamic(&mut self, dynamic_mw: [f64; MAX_CLUSTERS]) {
        self.dynamic_mw = dynamic_mw;
        self.dynamic_known = true;
        if let Some(slot) = self.put_slot.take() {
            self.solutions.at_mut(slot).dynamic_mw = dynamic_mw;
        }
    }

    /// If nothing the rates depend on changed since the last solution — threads took the
    /// places of identical ones (same task and phase on the same CPU) — the newcomers get their
    /// predecessors' speeds and this is true; else the inputs are kept for the solution to come,
    /// with the clusters whose inputs changed (all of them on a DSU platform, where the L3 and
    /// the DSU's clock are every cluster's): a CPU's key, or the cluster's clock or power state.
    pub fn reuse(&mut self, platform: &Platform, inputs: &Inputs) -> bool {
        let (cpus, clusters) = (inputs.cpus, inputs.clusters);
        let n = cpus.len();
        let first = self.solved_cpus.len() != n || self.solved_clocks.len() != clusters.len();
        let mut same = !first && self.solved_noise == inputs.noise.to_bits();
        self.changed = [first || platform.dsu.is_some(); MAX_CLUSTERS];
        let seen = self.see_loads(cpus, inputs.moved);
        // the keys are kept only if the model is re-solved: a reuse compares with the solution's
        if first {
            self.solved_clocks.clear();
            self.solved_clocks.extend(clusters.iter().map(|cl| (cl.cur_khz, cl.powered)));
        } else {
            // written in place: a clock that differs makes the inputs differ (kept below)
            for (c, (solved, cl)) in self.solved_clocks.iter_mut().zip(clusters).enumerate() {
                if *solved != (cl.cur_khz, cl.powered) {
                    *solved = (cl.cur_khz, cl.powered);
                    self.changed[c] = true;
                    same = false;
                }
            }
            for cpu in seen.iter() {
                let differs = self.keys[cpu] != self.solved_cpus[cpu];
                self.differs = if differs { self.differs.with(cpu) } else { self.differs.without(cpu) };
            }
            self.debug_check_differs();
            for cpu in self.differs.iter() {
                let (key, solved) = (self.keys[cpu], self.solved_cpus[cpu]);
                self.changed[solved.cluster()] = true;
                self.changed[key.cluster()] = true;
                same &= solved.same_place(key);
            }
        }
        if same {
            for (load, speed) in cpus.iter().zip(&self.speed_on_cpu) {
                if let Some(r) = load.running {
                    self.speeds[r.thread] = *speed;
                }
            }
            return true;
        }
        if first {
            self.solved_cpus.clone_from(&self.keys);
        } else {
            for cpu in self.differs.iter() {
                self.solved_cpus[cpu] = self.keys[cpu];
            }
        }
        self.differs = CpuMask::EMPTY;
        self.solved_noise = inputs.noise.to_bits();
        false
    }

    /// Debug builds: `differs` is the CPUs whose key differs from the last solution's.
    fn debug_check_differs(&self) {
        debug_assert_eq!(
            self.differs,
            CpuMask::of((0..self.keys.len()).filter(|&cpu| self.keys[cpu] != self.solved_cpus[cpu]))
        );
    }

    /// The keys and counts of `cpus` brought up to date: those of the CPUs in `moved` (all of
    /// them if `None`, or on the first call); returns the CPUs brought up to date.
    fn see_loads(&mut self, cpus: &[CpuLoad], moved: Option<CpuMask>) -> CpuMask {
        let seen = match moved.filter(|_| self.counted.len() == cpus.len()) {
            Some(moved) => {
                for cpu in moved.iter() {
                    let load = &cpus[cpu];
                    self.keys[cpu] = CpuKey::of(load);
                    self.counts.remove(&self.counted[cpu]);
                    self.counts.add(load);
                    self.counted[cpu] = *load;
                }
                moved
            }
            None => {
                self.keys.clear();
                self.keys.extend(cpus.iter().map(CpuKey::of));
                self.counts = ClusterCounts::of(cpus);
                self.counted.clear();
                self.counted.extend_from_slice(cpus);
                CpuMask::of(0..cpus.len())
            }
        };
        debug_assert!(self.keys.iter().zip(cpus).all(|(&key, cpu)| key == CpuKey::of(cpu)));
        debug_assert_eq!(self.counts, ClusterCounts::of(cpus));
        seen
    }

    /// Each running thread's speed, the DRAM utilisation (from `warm_start`) and the CCI port
    /// rates on `clusters`: a solution kept for the same inputs (`solutions`) where there is one.
    pub fn solve_rates<'t>(
        &mut self,
        platform: &Platform,
        cpus: &[CpuLoad],
        clusters: &mut [ClusterHw],
        dram_state: &DramState,
        mem_of: &impl Fn(usize, usize) -> &'t MemProfile,
        live: &impl Fn(usize) -> Option<(usize, usize)>,
    ) -> DramAnswer {
        // At a tolerance the kept clusters' rates depend on when they were solved; a phase
        // that reads what others wrote depends on the live threads: neither is kept.
        let keyed = self.resolve_tolerance == 0.0
            && self.payoff.key_now()
            && !(self.peer_reads
                && cpus
                    .iter()
                    .any(|cpu| cpu.running.is_some_and(|r| mem_of(r.task, r.phase).peer_written_fraction > 0.0)));
        if keyed {
            let at = clusters.iter().map(|cl| (cl.cur_khz, cl.powered));
            // `reuse` left the CPUs' keys now in `solved_cpus`
            let key =
                self.key.build(&self.solved_cpus, &self.counts.online, at, dram_state.noise, dram_state.utilisation);
            if let Some(kept) = self.solutions.get(key) {
                let running = cpus.iter().enumerate().filter_map(|(cpu, load)| Some((cpu, load.running?)));
                for ((cpu, r), speed) in running.zip(&kept.speeds) {
                    self.speeds[r.thread] = *speed;
                    self.speed_on_cpu[cpu] = *speed;
                }
                for (c, cl) in clusters.iter_mut().enumerate() {
                    if let (Some(port), Some(rates)) = (cl.port.as_mut(), kept.ports[c]) {
                        port.set_rates(rates);
                    }
                }
                (self.dynamic_mw, self.dynamic_known) = (kept.dynamic_mw, true);
                // the incremental state is the last solve's, not this one's: solve all next time
                self.stale = true;
                self.payoff.record(true);
                #[cfg(test)]
                {
                    self.solutions_given += 1;
                }
                return DramAnswer {
                    utilisation: kept.utilisation,
                    lines_per_us: kept.lines_per_us,
                    l3_hits_per_us: kept.l3_hits_per_us,
                    l3_misses_per_us: kept.l3_misses_per_us,
                };
            }
        }
        if self.stale {
            self.changed = [true; MAX_CLUSTERS];
            self.solved_miss = [None; MAX_CLUSTERS];
            self.stale = false;
        }
        let answer = self.solve_all(platform, cpus, clusters, dram_state, mem_of, live);
        self.dynamic_known = false;
        if keyed {
            self.payoff.record(false);
            let (speed_on_cpu, words) = (&self.speed_on_cpu, self.key.words());
            self.put_slot = Some(self.solutions.put(words, |s| {
                s.speeds.clear();
                s.speeds.extend(
                    cpus.iter().enumerate().filter(|(_, l)| l.running.is_some()).map(|(cpu, _)| speed_on_cpu[cpu]),
                );
                for (c, cl) in clusters.iter().enumerate() {
                    s.ports[c] = cl.port.as_ref().map(|p| p.rates());
                }
                (s.utilisation, s.lines_per_us) = (answer.utilisation, answer.lines_per_us);
                (s.l3_hits_per_us, s.l3_misses_per_us) = (answer.l3_hits_per_us, answer.l3_misses_per_us);
            }));
        }
        answer
    }

    /// `solve_rates` worked out: the clusters whose inputs changed (`reuse`) solved, the
    /// others' costs kept, and their rates too where their misses did not move.
    fn solve_all<'t>(
        &mut self,
        platform: &Platform,
        cpus: &[CpuLoad],
        clusters: &mut [ClusterHw],
        dram_state: &DramState,
        mem_of: &impl Fn(usize, usize) -> &'t MemProfile,
        live: &impl Fn(usize) -> Option<(usize, usize)>,
    ) -> DramAnswer {
        let nclusters = clusters.len();
        // The slowest snoop a miss of each cluster waits for: the other clusters' (0 if off).
        self.snoop_ns.clear();
        self.snoop_ns.extend((0..nclusters).map(|c| snoop_served_ns(platform, clusters, c)));
        let mut snoop_for = [0.0; MAX_CLUSTERS];
        for (c, slot) in snoop_for.iter_mut().enumerate().take(nclusters) {
            *slot = (0..nclusters).filter(|&o| o != c).map(|o| self.snoop_ns[o]).fold(0.0, f64::max);
        }
        self.running_costs(platform, cpus, clusters, mem_of);
        self.solve_coherence(platform, clusters, mem_of, live);

        // DRAM utilisation fixed point: demand falls as latency rises with utilisation.
        let capacity_lines_per_ns = dram::capacity_lines_per_ns(&platform.dram);
        let service_ns = 1.0 / capacity_lines_per_ns;
        let idle_ns = platform.dram.idle_latency_ns * dram_state.noise;
        let fetch = platform.cci.as_ref().map_or(SpeculativeFetch::Overlap, |cci| cci.speculative_fetch);
        // Per cluster: an L2 miss at DRAM utilisation `rho`.
        let miss_at = |rho: f64| {
            let dram_ns = dram::latency_ns(idle_ns, service_ns, rho);
            snoop_for.map(|snoop| cci::miss(fetch, cci::traversal_ns(platform), dram_ns, snoop))
        };
        let running = &self.running;
        let demand = |rho: f64| -> f64 {
            let miss = miss_at(rho);
            running
                .iter()
                .map(|r| lines_per_instr(r, miss[r.cluster]) / r.time_at(miss[r.cluster]).total_ns())
                .sum::<f64>()
                / capacity_lines_per_ns
        };
        let utilisation = dram::solve_utilisation(dram_state.utilisation, demand);
        let miss = miss_at(utilisation);
        // Each cluster's online CPUs: each one's kernel housekeeping reads through the port.
        let kernel_cpus = self.counts.online;
        let rates = self.thread_rates(platform, clusters, &miss, &kernel_cpus, capacity_lines_per_ns);
        self.speed_on_cpu.resize(cpus.len(), Default::default());
        self.solved_on_cpu.resize(cpus.len(), Default::default());
        for r in &self.running {
            self.speed_on_cpu[r.cpu] = self.speeds[r.thread];
            self.solved_on_cpu[r.cpu] = *r;
        }
        DramAnswer {
            utilisation,
            lines_per_us: rates.dram_lines_per_us,
            l3_hits_per_us: rates.l3_hits_per_us,
            l3_misses_per_us: rates.l3_misses_per_us,
        }
    }

    /// The running threads, their cluster's L2 share, and each one's cost per instruction but
    /// for the miss latency and what it asks of the memory system per instruction: solved for
    /// the clusters whose inputs changed, the last solution's for the others.
    fn running_costs<'t>(
        &mut self,
        platform: &Platform,
        cpus: &[CpuLoad],
        clusters: &[ClusterHw],
        mem_of: &impl Fn(usize, usize) -> &'t MemProfile,
    ) {
        let changed = self.changed;
        let running = &mut self.running;
        running.clear();
        self.ws_per_cluster.resize(clusters.len(), 0.0);
        for (c, ws) in self.ws_per_cluster.iter_mut().enumerate() {
            if changed[c] {
                *ws = 0.0;
            }
        }
        for (i, cpu) in cpus.iter().enumerate() {
            if let Some(RunningOn { thread, task, phase }) = cpu.running {
                running.push(if changed[cpu.cluster] {
                    let ws_bytes = mem_of(task, phase).working_set_bytes() as f64;
                    Running { cpu: i, thread, task, phase, cluster: cpu.cluster, ws_bytes, ..Default::default() }
                } else {
                    Running { thread, ..self.solved_on_cpu[i] }
                });
            }
        }
        // A working set the task's threads share is one copy per cluster, however many of
        // them run there: each of the k sharers adds 1/k of it to the cluster's demand.
        for r in running.iter().filter(|r| changed[r.cluster]) {
            let footprint = if mem_of(r.task, r.phase).shared_working_set {
                let k =
                    running.iter().filter(|o| o.cluster == r.cluster && o.task == r.task && o.phase == r.phase).count();
                r.ws_bytes / k as f64
            } else {
                r.ws_bytes
            };
            self.ws_per_cluster[r.cluster] += footprint;
        }
        // The L3 is every cluster's: a shared working set is one copy there however many run it.
        if platform.dsu.is_some() {
            self.ws_in_l3 = running
                .iter()
                .map(|r| {
                    let k = if mem_of(r.task, r.phase).shared_working_set {
                        running.iter().filter(|o| o.task == r.task && o.phase == r.phase).count()
                    } else {
                        1
                    };
                    r.ws_bytes / k as f64
                })
                .sum();
        }
        let dsu_now = platform.dsu.as_ref().zip(dsu_clock(platform, clusters, self.dsu_fixed_khz));
        for r in running.iter_mut().filter(|r| changed[r.cluster]) {
            let c = r.cluster;
            let l2_share = platform.clusters[c].l2_bytes as f64 * r.ws_bytes / self.ws_per_cluster[c];
            let mem = mem_of(r.task, r.phase);
            let tc = self.costs.cost(platform, (c, r.task, r.phase), mem, l2_share, clusters[c].cur_khz);
            r.cost = tc.cost;
            r.refs_per_instr = tc.refs_per_instr;
            r.refills_per_instr = tc.refills_per_instr;
            r.l1_refills_per_instr = tc.l1_refills_per_instr;
            r.write_factor = tc.write_factor;
            r.requests_in_flight = tc.requests_in_flight;
            if let Some((d, (dsu_khz, _))) = dsu_now {
                let reach = l2_share + d.l3_bytes as f64 * r.ws_bytes / self.ws_in_l3;
                let refills_l3 = self.costs.ratios(platform, (c, r.task, r.phase), mem, reach).l2_refills;
                r.l3 = Some((dsu::l3_hit_share(tc.l2_refills, refills_l3), dsu::l3_hit_ns(d, dsu_khz)));
            }
        }
    }

    /// Lines other cores wrote: each running thread's transfers from its task's other
    /// threads (`model::coherence`) — shared updates, from the threads running beside it,
    /// each waited for; handed-over data, from the caches of the live threads that wrote it
    /// (running or waiting), overlapped as misses are — at the latencies the cache and CCI
    /// parameters give now.
    fn solve_coherence<'t>(
        &mut self,
        platform: &Platform,
        clusters: &[ClusterHw],
        mem_of: &impl Fn(usize, usize) -> &'t MemProfile,
        live: &impl Fn(usize) -> Option<(usize, usize)>,
    ) {
        let fixed = self.dsu_fixed_khz;
        let transfer_ns = |from: usize, to: usize| transfer_from_cluster_ns(platform, clusters, fixed, from, to);
        let running = &mut self.running;
        for i in 0..running.len() {
            let r = running[i];
            let mem = mem_of(r.task, r.phase);
            if mem.shared_rmw_fraction == 0.0 && mem.peer_written_fraction == 0.0 {
                continue;
            }
            let same_ns = transfer_ns(r.cluster, r.cluster);
            let updaters = others_by_cluster(
                r.cluster,
                running.iter().filter(|o| o.thread != r.thread && o.task == r.task).map(|o| o.cluster),
                transfer_ns,
            );
            let (rmw_same, rmw_cross) = coherence::transfers_per_instr(
                r.refs_per_instr * mem.shared_rmw_fraction,
                updaters.same,
                updaters.cross,
            );
            let mut stall_ns = rmw_same * same_ns + rmw_cross * updaters.cross_ns;
            let (mut cross_lines, mut cross_ns) = (rmw_cross, rmw_cross * updaters.cross_ns);
            let mut lines = rmw_same + rmw_cross;
            if mem.peer_written_fraction > 0.0 {
                // A scan of the threads, made only for phases that read what others wrote.
                let writers = others_by_cluster(
                    r.cluster,
                    (0..self.speeds.len()).filter_map(|t| {
                        live(t).and_then(|(task, cluster)| (t != r.thread && task == r.task).then_some(cluster))
                    }),
                    transfer_ns,
                );
                let (same, cross) = coherence::peer_transfers_per_instr(
                    r.refs_per_instr * mem.peer_written_fraction,
                    writers.same,
                    writers.cross,
                );
                let overlap = cache::overlap(mem, platform.core_type_of(r.cluster));
                stall_ns += (same * same_ns + cross * writers.cross_ns) / overlap;
                cross_lines += cross;
                cross_ns += cross * writers.cross_ns;
                lines += same + cross;
            }
            let r = &mut running[i];
            r.peer_lines_per_instr = lines;
            r.cross_transfers_per_instr = cross_lines;
            r.cross_transfer_ns = if cross_lines > 0.0 { cross_ns / cross_lines } else { 0.0 };
            r.coherence_stall_ns = stall_ns;
        }
    }

    /// The clusters whose threads' speeds and port rates are the last solution's: their inputs
    /// did not change (`reuse`), nor their threads' shared-line transfers, and their misses and
    /// the bandwidth `stretch` are within the tolerance of those the rates were solved at (bit
    /// for bit at 0). The others are solved at `miss` and `stretch`, which they keep.
    fn unchanged_rates(
        &mut self,
        nclusters: usize,
        miss: &[cci::Miss; MAX_CLUSTERS],
        stretch: f64,
    ) -> [bool; MAX_CLUSTERS] {
        let tolerance = self.resolve_tolerance;
        let mut same = [false; MAX_CLUSTERS];
        for (c, slot) in same.iter_mut().enumerate().take(nclusters) {
            let solved = self.solved_stretch[c];
            let same_stretch = within(stretch, solved, tolerance) || (stretch <= 1.0 && solved <= 1.0);
            *slot = same_stretch
                && !self.changed[c]
                && self.solved_miss[c].is_some_and(|m| {
                    m.retried == miss[c].retried && within(miss[c].latency_ns, m.latency_ns, tolerance)
                });
        }
        let coherence = |r: &Running| {
            [r.peer_lines_per_instr, r.cross_transfers_per_instr, r.cross_transfer_ns, r.coherence_stall_ns]
                .map(f64::to_bits)
        };
        for r in &self.running {
            if same[r.cluster] && coherence(r) != coherence(&self.solved_on_cpu[r.cpu]) {
                same[r.cluster] = false;
            }
        }
        for c in (0..nclusters).filter(|&c| !same[c]) {
            self.solved_miss[c] = Some(miss[c]);
            self.solved_stretch[c] = stretch;
        }
        same
    }

    /// Each running thread's rates at the misses `miss` of each cluster, and what they and the
    /// kernel housekeeping of each cluster's `kernel_cpus` put on the CCI ports; the DRAM lines
    /// and the L3 lookups per µs the threads make. A cluster whose rates are unchanged
    /// (`unchanged_rates`) keeps its threads' speeds and its port's rates.
    fn thread_rates(
        &mut self,
        platform: &Platform,
        clusters: &mut [ClusterHw],
        miss: &[cci::Miss; MAX_CLUSTERS],
        kernel_cpus: &[u32; MAX_CLUSTERS],
        capacity_lines_per_ns: f64,
    ) -> Rates {
        // The queue's latency alone does not cap demand when prefetching and overlap hide it:
        // past the sustained bandwidth every thread waits its turn at the controller.
        let demand_lines_per_us: f64 = self
            .running
            .iter()
            .map(|r| lines_per_instr(r, miss[r.cluster]) * 1000.0 / r.time_at(miss[r.cluster]).total_ns())
            .sum();
        let stretch = dram::bandwidth_stretch(demand_lines_per_us, capacity_lines_per_ns * 1000.0);
        let same = self.unchanged_rates(clusters.len(), miss, stretch);
        for (c, cl) in clusters.iter_mut().enumerate() {
            if let Some(port) = cl.port.as_mut().filter(|_| !same[c]) {
                port.clear_rates();
            }
        }
        let mut rates = Rates::default();
        for r in self.running.iter() {
            let miss = miss[r.cluster];
            if same[r.cluster] {
                let speed = self.speed_on_cpu[r.cpu];
                self.speeds[r.thread] = speed;
                rates.add(r, &speed, miss);
                continue;
            }
            let mut it = r.time_at(miss);
            if stretch > 1.0 {
                it.stall_ns += it.total_ns() * (stretch - 1.0);
            }
            let speed = &mut self.speeds[r.thread];
            speed.instr_per_us = 1000.0 / it.total_ns();
            speed.stall_share = it.stall_ns / it.total_ns();
            speed.refs_per_instr = r.refs_per_instr;
            speed.peer_lines_per_instr = r.peer_lines_per_instr;
            // A line from the other cluster refills the L2 as one from DRAM does (the PMU
            // cannot tell them apart); one from a core of its own cluster refills the L1 only.
            speed.refills_per_instr = r.refills_per_instr + r.cross_transfers_per_instr;
            speed.bus_per_instr = platform.pmu.bus_access_per_instr(
                speed.refills_per_instr * r.write_factor,
                (r.l1_refills_per_instr + r.peer_lines_per_instr) * r.write_factor,
                platform.core_type_of(r.cluster).line_bytes,
            );
            if let Some(port) = &mut clusters[r.cluster].port {
                let refills_per_us = speed.instr_per_us * r.refills_per_instr;
                let cross_per_us = speed.instr_per_us * r.cross_transfers_per_instr;
                let reads_per_us = refills_per_us + cross_per_us;
                if reads_per_us > 0.0 {
                    let hold_ns =
                        (refills_per_us * r.l2_miss_ns(miss) + cross_per_us * r.cross_transfer_ns) / reads_per_us;
                    let retries_per_us = if miss.retried { refills_per_us } else { 0.0 };
                    port.add_reader(reads_per_us, hold_ns, r.requests_in_flight, retries_per_us);
                }
            }
            let speed = *speed;
            rates.add(r, &speed, miss);
        }
        if let Some(cci) = &platform.cci {
            for (c, cl) in clusters.iter_mut().enumerate().filter(|(c, _)| !same[*c]) {
                let powered = cl.powered;
                if let Some(port) = cl.port.as_mut() {
                    if powered {
                        add_kernel_readers(platform, c, port, kernel_cpus[c], miss[c]);
                    }
                    let entries = platform.clusters[c].read_tracker_entries.unwrap_or(cci.read_tracker_entries);
                    port.finish_rates(entries, cci.clock_khz);
                }
            }
        }
        rates
    }
}

/// What the running threads ask of the memory system per µs.
#[derive(Default)]
struct Rates {
    dram_lines_per_us: f64,
    l3_hits_per_us: f64,
    l3_misses_per_us: f64,
}

impl Rates {
    /// Adds what `r` asks at `speed` with its cluster's misses `miss`.
    fn add(&mut self, r: &Running, speed: &Speed, miss: cci::Miss) {
        self.dram_lines_per_us += speed.instr_per_us * lines_per_instr(r, miss);
        if r.l3.is_some() {
            let lookups_per_us = speed.instr_per_us * r.refills_per_instr;
            self.l3_misses_per_us += lookups_per_us * r.dram_share();
            self.l3_hits_per_us += lookups_per_us * (1.0 - r.dram_share());
        }
    }
}

/// `now` is `solved` to the bit (`tolerance` 0), or within `tolerance` of it, relative.
fn within(now: f64, solved: f64, tolerance: f64) -> bool {
    now.to_bits() == solved.to_bits() || (tolerance > 0.0 && (now - solved).abs() <= tolerance * solved.abs())
}

/// The kernel housekeeping of `cpus` online CPUs of cluster `c` on its port: each CPU busy with
/// OS-jitter bursts a share of the time (`[noise]`), reading back what the L2 lost of its
/// footprint since its last wake-up, as independent misses (the core's overlap, `⌈mlp⌉`, in
/// flight at most), each holding an entry for the cluster's miss latency `miss`. Their DRAM
/// traffic (a hundredth of a chase's or less) is not added to the DRAM's demand.
fn add_kernel_readers(platform: &Platform, c: usize, port: &mut cci::CciPort, cpus: u32, miss: cci::Miss) {
    let noise = &platform.noise;
    if noise.kernel_wakeup_mean_busy_us == 0 || noise.kernel_wakeup_footprint_lines <= 0.0 {
        return;
    }
    let core = platform.core_type_of(c);
    let interval_us = noise.kernel_wakeup_mean_interval_us as f64;
    let duty = (noise.kernel_wakeup_mean_busy_us as f64 / interval_us).min(1.0);
    let l2_lines = platform.clusters[c].l2_bytes as f64 / core.line_bytes as f64;
    // the lines the cluster's threads refill (read before any kernel reader is added)
    let refills_per_us = port.read_rate_per_us();
    let reads_per_us =
        cci::kernel_reads_per_us(noise.kernel_wakeup_footprint_lines, interval_us, l2_lines, refills_per_us);
    let slots = core.mlp.ceil().max(1.0) as u32;
    let retries_per_us = if miss.retried { reads_per_us } else { 0.0 };
    for _ in 0..cpus {
        port.add_kernel_reader(reads_per_us, miss.latency_ns, slots, duty, retries_per_us);
    }
}

/// DRAM lines per instruction: refills and their write-backs (behind a DSU, those the L3 does
/// not serve); a retried fetch reads its line a second time.
fn lines_per_instr(r: &Running, miss: cci::Miss) -> f64 {
    let refills = r.refills_per_instr * r.dram_share();
    refills * r.write_factor + if miss.retried { refills } else { 0.0 }
}

/// Other threads' clusters seen from `cluster`: how many share it, how many do not, and the
/// mean latency of a line from the latter (`transfer_ns(from, to)`).
fn others_by_cluster(
    cluster: usize,
    others: impl Iterator<Item = usize>,
    transfer_ns: impl Fn(usize, usize) -> f64,
) -> Others {
    let mut o = Others::default();
    for c in others {
        if c == cluster {
            o.same += 1;
        } else {
            o.cross += 1;
            o.cross_ns += transfer_ns(c, cluster);
        }
    }
    if o.cross > 0 {
        o.cross_ns /= o.cross as f64;
    }
    o
}
