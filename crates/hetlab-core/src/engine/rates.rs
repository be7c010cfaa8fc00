//! The model at work: each running thread's speed (`model::cache` against the L2 share it
//! gets), the latency of its misses (`model::cci` over `model::dram`), the DRAM utilisation
//! they settle on, the CCI port rates, and each cluster's power (`model::power`) — re-solved
//! whenever something they depend on changes.

use super::state::ThreadState;
use super::{Engine, Scratch};
use crate::model::cache::{self, InstrTime};
use crate::model::{cci, coherence, dram, power};
use crate::platform::SpeculativeFetch;
use crate::result::MAX_CLUSTERS;

/// A running thread while the model is re-solved.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Running {
    thread: usize,
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
}

/// Where the other threads a thread takes lines from are (`Engine::others_by_cluster`).
#[derive(Default)]
struct Others {
    same: usize,
    cross: usize,
    cross_ns: f64,
}

impl Running {
    /// Time per instruction when an L2 miss takes `miss_ns`, shared-line transfers included.
    fn time_at(&self, miss_ns: f64) -> InstrTime {
        let mut it = self.cost.at(miss_ns);
        it.stall_ns += self.coherence_stall_ns;
        it
    }
}

impl Engine<'_> {
    /// Latency of a snoop served by cluster `c` now, ns; 0 when it is powered down (its CCI
    /// port is disabled and nothing is snooped).
    pub(super) fn snoop_served_ns(&self, c: usize) -> f64 {
        let cluster = &self.hw.clusters[c];
        if !cluster.powered {
            return 0.0;
        }
        cci::platform_snoop_ns(self.platform, c, cluster.cur_khz)
    }

    /// Latency of moving a line from a core of cluster `from` into a core of cluster `to`
    /// (another core of the same cluster when they are equal), now, ns.
    pub(super) fn transfer_from_cluster_ns(&self, from: usize, to: usize) -> f64 {
        let core = self.platform.core_type_of(to);
        let ghz = self.hw.clusters[to].cur_khz as f64 / 1e6;
        let cross = (from != to).then(|| (cci::traversal_ns(self.platform), self.snoop_served_ns(from)));
        coherence::transfer_ns(core.l1_hit_cycles, core.l2_hit_cycles, ghz, cross)
    }

    fn mem_of(&self, t: usize) -> &crate::workload::MemProfile {
        let th = &self.threads[t];
        &self.tasks[th.task].phases[th.progress.phase].mem
    }

    /// What the model's answer depends on besides temperature: on each CPU the cluster, task
    /// and phase running, each cluster's clock and power state, and the DRAM noise.
    fn model_inputs(&self, key: &mut Vec<u64>) {
        key.clear();
        for (cpu, rq) in self.sched.rqs.iter().enumerate() {
            match rq.curr {
                Some(t) => {
                    let th = &self.threads[t];
                    key.extend([self.sched.cluster_of[cpu] as u64, th.task as u64, th.progress.phase as u64]);
                }
                None => key.extend([u64::MAX; 3]),
            }
        }
        for cl in &self.hw.clusters {
            key.extend([cl.cur_khz as u64, cl.powered as u64]);
        }
        key.push(self.hw.dram.noise.to_bits());
    }

    /// Refreshes every running thread's rate, the CCI and DRAM rates, and the power draw.
    pub(super) fn recompute(&mut self) {
        self.dirty = false;
        self.integrate();
        let mut key = std::mem::take(&mut self.scratch.inputs);
        self.model_inputs(&mut key);
        if key == self.scratch.solved_inputs {
            // Threads took the places of identical ones (same task and phase on the same CPU)
            // and nothing else the rates depend on changed: the model's answer is the one it
            // gave. The newcomers get their predecessors' speeds; only power is refreshed.
            for (cpu, rq) in self.sched.rqs.iter().enumerate() {
                if let Some(t) = rq.curr {
                    self.threads[t].speed = self.scratch.speed_on_cpu[cpu];
                }
            }
            self.scratch.inputs = key;
        } else {
            self.scratch.inputs = std::mem::replace(&mut self.scratch.solved_inputs, key);
            self.solve_rates();
        }
        self.solve_power();
    }

    /// Each running thread's speed, the DRAM utilisation, the CCI port rates.
    fn solve_rates(&mut self) {
        let platform = self.platform;
        let nclusters = self.hw.clusters.len();
        // Scratch buffers kept between calls: recompute runs at most once per event.
        let mut scratch = std::mem::take(&mut self.scratch);
        let Scratch { snoop_ns, running, ws_per_cluster, .. } = &mut scratch;

        // The slowest snoop a miss of each cluster waits for: the other clusters' (0 if off).
        snoop_ns.clear();
        snoop_ns.extend((0..nclusters).map(|c| self.snoop_served_ns(c)));
        let mut snoop_for = [0.0; MAX_CLUSTERS];
        for (c, slot) in snoop_for.iter_mut().enumerate().take(nclusters) {
            *slot = (0..nclusters).filter(|&o| o != c).map(|o| snoop_ns[o]).fold(0.0, f64::max);
        }

        // Running threads and their cluster's L2 share.
        running.clear();
        ws_per_cluster.clear();
        ws_per_cluster.resize(nclusters, 0.0);
        for (cpu, rq) in self.sched.rqs.iter().enumerate() {
            if let Some(t) = rq.curr {
                let cluster = self.sched.cluster_of[cpu];
                let ws_bytes = self.mem_of(t).working_set_bytes() as f64;
                running.push(Running { thread: t, cluster, ws_bytes, ..Default::default() });
            }
        }
        // A working set the task's threads share is one copy per cluster, however many of
        // them run there: each of the k sharers adds 1/k of it to the cluster's demand.
        for r in running.iter() {
            let th = &self.threads[r.thread];
            let footprint = if self.mem_of(r.thread).shared_working_set {
                let k = running
                    .iter()
                    .filter(|o| {
                        let ot = &self.threads[o.thread];
                        o.cluster == r.cluster && ot.task == th.task && ot.progress.phase == th.progress.phase
                    })
                    .count();
                r.ws_bytes / k as f64
            } else {
                r.ws_bytes
            };
            ws_per_cluster[r.cluster] += footprint;
        }
        // Each thread's cost per instruction but for the miss latency, and what it asks of
        // the memory system per instruction.
        for r in running.iter_mut() {
            let c = r.cluster;
            let l2_share = platform.clusters[c].l2_bytes as f64 * r.ws_bytes / ws_per_cluster[c];
            let th = &self.threads[r.thread];
            let key = (th.progress.phase, l2_share);
            let mem = &self.tasks[th.task].phases[th.progress.phase].mem;
            let m = match th.speed.cached_misses.filter(|(p, s, _)| (*p, *s) == key) {
                Some((_, _, m)) => m,
                None => {
                    let m = cache::miss_ratios(mem, platform.core_type_of(c), l2_share, &platform.caches);
                    self.threads[r.thread].speed.cached_misses = Some((key.0, key.1, m));
                    m
                }
            };
            let ghz = self.hw.clusters[c].cur_khz as f64 / 1e6;
            r.cost = cache::InstrCost::new(mem, platform.core_type_of(c), ghz, &m);
            r.refs_per_instr = mem.refs_per_instr;
            r.refills_per_instr = mem.refs_per_instr * m.l2_refills;
            r.l1_refills_per_instr = mem.refs_per_instr * m.l1_refills;
            r.write_factor = 1.0 + mem.write_fraction;
            r.requests_in_flight = cache::requests_in_flight(mem, platform.core_type_of(c));
        }

        self.solve_coherence(running);

        // DRAM utilisation fixed point: demand falls as latency rises with utilisation.
        let capacity_lines_per_ns = dram::capacity_lines_per_ns(&platform.dram);
        let service_ns = 1.0 / capacity_lines_per_ns;
        let idle_ns = platform.dram.idle_latency_ns * self.hw.dram.noise;
        let fetch = platform.cci.as_ref().map_or(SpeculativeFetch::Overlap, |cci| cci.speculative_fetch);
        // Per cluster: an L2 miss at DRAM utilisation `rho`.
        let miss_at = |rho: f64| {
            let dram_ns = dram::latency_ns(idle_ns, service_ns, rho);
            snoop_for.map(|snoop| cci::miss(fetch, cci::traversal_ns(platform), dram_ns, snoop))
        };
        // DRAM lines per instruction: refills and their write-backs; a retried fetch reads its
        // line a second time.
        let lines_per_instr = |r: &Running, miss: cci::Miss| {
            r.refills_per_instr * r.write_factor + if miss.retried { r.refills_per_instr } else { 0.0 }
        };
        let demand = |rho: f64| -> f64 {
            let miss = miss_at(rho);
            running
                .iter()
                .map(|r| lines_per_instr(r, miss[r.cluster]) / r.time_at(miss[r.cluster].latency_ns).total_ns())
                .sum::<f64>()
                / capacity_lines_per_ns
        };
        let rho = dram::solve_utilisation(self.hw.dram.utilisation, demand);
        self.hw.dram.utilisation = rho;
        let miss = miss_at(rho);

        // Each running thread's rates, and what they put on the CCI ports and the DRAM.
        for port in self.hw.clusters.iter_mut().filter_map(|cl| cl.port.as_mut()) {
            port.clear_rates();
        }
        // The queue's latency alone does not cap demand when prefetching and overlap hide it:
        // past the sustained bandwidth every thread waits its turn at the controller.
        let demand_lines_per_us: f64 = running
            .iter()
            .map(|r| lines_per_instr(r, miss[r.cluster]) * 1000.0 / r.time_at(miss[r.cluster].latency_ns).total_ns())
            .sum();
        let stretch = dram::bandwidth_stretch(demand_lines_per_us, capacity_lines_per_ns * 1000.0);
        let mut lines_per_us = 0.0;
        for r in running.iter() {
            let miss = miss[r.cluster];
            let mut it = r.time_at(miss.latency_ns);
            if stretch > 1.0 {
                it.stall_ns += it.total_ns() * (stretch - 1.0);
            }
            let speed = &mut self.threads[r.thread].speed;
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
            if let Some(port) = &mut self.hw.clusters[r.cluster].port {
                let refills_per_us = speed.instr_per_us * r.refills_per_instr;
                let cross_per_us = speed.instr_per_us * r.cross_transfers_per_instr;
                let reads_per_us = refills_per_us + cross_per_us;
                if reads_per_us > 0.0 {
                    let hold_ns =
                        (refills_per_us * miss.latency_ns + cross_per_us * r.cross_transfer_ns) / reads_per_us;
                    let retries_per_us = if miss.retried { refills_per_us } else { 0.0 };
                    port.add_reader(reads_per_us, hold_ns, r.requests_in_flight, retries_per_us);
                }
            }
            lines_per_us += speed.instr_per_us * lines_per_instr(r, miss);
        }
        if let Some(cci) = &platform.cci {
            for port in self.hw.clusters.iter_mut().filter_map(|cl| cl.port.as_mut()) {
                port.finish_rates(cci.read_tracker_entries, cci.clock_khz);
            }
        }
        self.hw.dram.lines_per_us = lines_per_us;
        scratch.speed_on_cpu.resize(self.cpus.len(), Default::default());
        for (cpu, rq) in self.sched.rqs.iter().enumerate() {
            if let Some(t) = rq.curr {
                scratch.speed_on_cpu[cpu] = self.threads[t].speed;
            }
        }
        self.scratch = scratch;
    }

    /// Lines other cores wrote: each running thread's transfers from its task's other
    /// threads (`model::coherence`) — shared updates, from the threads running beside it,
    /// each waited for; handed-over data, from the caches of the live threads that wrote it
    /// (running or waiting), overlapped as misses are — at the latencies the cache and CCI
    /// parameters give now.
    fn solve_coherence(&self, running: &mut [Running]) {
        for i in 0..running.len() {
            let r = running[i];
            let task = self.threads[r.thread].task;
            let mem = self.mem_of(r.thread);
            if mem.shared_rmw_fraction == 0.0 && mem.peer_written_fraction == 0.0 {
                continue;
            }
            let same_ns = self.transfer_from_cluster_ns(r.cluster, r.cluster);
            let updaters = self.others_by_cluster(
                r.cluster,
                running
                    .iter()
                    .filter(|o| o.thread != r.thread && self.threads[o.thread].task == task)
                    .map(|o| o.cluster),
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
                let writers = self.others_by_cluster(
                    r.cluster,
                    self.threads.iter().enumerate().filter_map(|(t, th)| {
                        let live = th.placed && !matches!(th.state, ThreadState::Done);
                        (t != r.thread && th.task == task && live)
                            .then(|| self.sched.cluster_of[self.sched.entities[t].cpu])
                    }),
                );
                let (same, cross) = coherence::peer_transfers_per_instr(
                    r.refs_per_instr * mem.peer_written_fraction,
                    writers.same,
                    writers.cross,
                );
                let overlap = cache::overlap(mem, self.platform.core_type_of(r.cluster));
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

    /// Other threads' clusters seen from `cluster`: how many share it, how many do not, and
    /// the mean latency of a line from the latter.
    fn others_by_cluster(&self, cluster: usize, others: impl Iterator<Item = usize>) -> Others {
        let mut o = Others::default();
        for c in others {
            if c == cluster {
                o.same += 1;
            } else {
                o.cross += 1;
                o.cross_ns += self.transfer_from_cluster_ns(c, cluster);
            }
        }
        if o.cross > 0 {
            o.cross_ns /= o.cross as f64;
        }
        o
    }

    /// Each cluster's power: every core by its activity, the powered cluster's clocked shared
    /// logic and the snoops it serves, and its leakage at its temperature now.
    fn solve_power(&mut self) {
        let platform = self.platform;
        let nclusters = self.hw.clusters.len();
        let mut reads_per_us = [0.0; MAX_CLUSTERS];
        for (c, cl) in self.hw.clusters.iter().enumerate() {
            reads_per_us[c] = cl.port.as_ref().map_or(0.0, |p| p.read_rate_per_us());
        }
        let all_reads_per_us: f64 = reads_per_us.iter().sum();
        for (c, own_reads_per_us) in reads_per_us.iter().enumerate().take(nclusters) {
            let cluster = &platform.clusters[c];
            let core = platform.core_type_of(c);
            let khz = self.hw.clusters[c].cur_khz;
            let volts = self.volts(c);
            let mut dynamic = 0.0;
            let mut busy = false;
            let (mut online_cpus, mut core_off_cpus) = (0, 0);
            for &cpu in &self.sched.cpus_of_cluster[c] {
                let rq = &self.sched.rqs[cpu];
                online_cpus += rq.online as usize;
                core_off_cpus += (rq.online && self.cpus[cpu].core_off_since_us.is_some()) as usize;
                let activity = match rq.curr {
                    Some(t) if rq.online => power::activity(core, self.threads[t].speed.stall_share),
                    _ => 0.0, // offline, or idle in WFI: clock-gated
                };
                busy |= rq.curr.is_some() && rq.online;
                dynamic += power::core_dynamic_mw(core, volts, khz, activity);
            }
            if busy {
                dynamic += cluster.active_mw_at(self.hw.clusters[c].cur_opp);
            }
            let hw = &mut self.hw.clusters[c];
            if hw.powered {
                dynamic += power::cluster_clock_mw(cluster, volts, khz);
                dynamic += power::snoop_lookup_mw(cluster, volts, all_reads_per_us - own_reads_per_us);
            }
            // A core no online logical CPU is on is power-gated (the switcher's outbound core), and
            // so is one cpuidle powered down.
            let gated_cores = cluster.cpus.len().saturating_sub(online_cpus) + core_off_cpus;
            hw.power.static_mw =
                if hw.powered { power::cluster_static_mw(cluster, volts, hw.thermal.temp_c, gated_cores) } else { 0.0 };
            hw.power.total_mw = dynamic + hw.power.static_mw;
        }
    }
}
