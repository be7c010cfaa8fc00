//! The model at work: each running thread's speed, the CCI and DRAM rates, and the power draw,
//! re-solved whenever something they depend on changes.

use super::*;

impl<'a> Engine<'a> {
    /// Latency of a snoop served by cluster `c`, ns; 0 when it is powered down (its CCI port
    /// is disabled and nothing is snooped).
    pub(super) fn snoop_served_ns(&self, c: usize) -> f64 {
        if !self.clusters[c].powered {
            return 0.0;
        }
        self.platform.snoop_response_cycles(c) / (self.clusters[c].cur_khz as f64 / 1e6)
    }

    /// Refreshes every running thread's rate, the CCI and DRAM rates, and the power draw.
    pub(super) fn recompute(&mut self) {
        self.flush();
        self.dirty = false;
        let platform = self.platform;
        let nclusters = self.clusters.len();
        // Scratch buffers kept between calls: recompute runs at most events.
        let mut scratch = std::mem::take(&mut self.scratch);
        let Scratch { snoop_ns, running, ws_per_cluster, occupancy } = &mut scratch;
        snoop_ns.clear();
        snoop_ns.extend((0..nclusters).map(|c| self.snoop_served_ns(c)));

        // Running threads and their cluster's L2 share.
        running.clear();
        for (cpu_id, cpu) in self.cpus.iter().enumerate() {
            if let Some(t) = cpu.current {
                running.push((cpu_id, t));
            }
        }
        ws_per_cluster.clear();
        ws_per_cluster.resize(nclusters, 0.0);
        for &(cpu, t) in running.iter() {
            ws_per_cluster[self.cpus[cpu].cluster] += self.mem_of(t).working_set_bytes() as f64;
        }
        for &(cpu, t) in running.iter() {
            let c = self.cpus[cpu].cluster;
            let ws = self.mem_of(t).working_set_bytes() as f64;
            let l2_share = platform.clusters[c].l2_bytes as f64 * ws / ws_per_cluster[c];
            let key = (self.threads[t].phase, l2_share);
            let cached = self.threads[t].cached_misses.filter(|(p, s, _)| (*p, *s) == key);
            if cached.is_none() {
                let m = memory::miss_ratios(self.mem_of(t), platform.core_type_of(c), l2_share);
                self.threads[t].cached_misses = Some((key.0, key.1, m));
            }
        }

        // DRAM utilisation fixed point: demand falls as latency rises with utilisation.
        let line_bytes = 64.0;
        let capacity_lines_per_ns =
            platform.dram.peak_bandwidth_mb_s * platform.dram.bandwidth_efficiency * 1e6 / line_bytes / 1e9;
        let service_ns = 1.0 / capacity_lines_per_ns;
        let idle_ns = platform.dram.idle_latency_ns * self.dram_noise;
        let miss_ns_for = |c: usize, rho: f64| {
            let dram = memory::dram_latency_ns(idle_ns, service_ns, rho);
            let snoop = (0..nclusters).filter(|&o| o != c).map(|o| snoop_ns[o]).fold(0.0, f64::max);
            memory::miss_latency_ns(platform.cci.latency_ns, dram, snoop)
        };
        let time_of = |engine: &Self, cpu: usize, t: usize, rho: f64| -> InstrTime {
            let c = engine.cpus[cpu].cluster;
            let m = engine.threads[t].cached_misses.expect("computed above").2;
            let ghz = engine.clusters[c].cur_khz as f64 / 1e6;
            memory::instr_time(engine.mem_of(t), platform.core_type_of(c), ghz, &m, miss_ns_for(c, rho))
        };
        let demand = |engine: &Self, rho: f64| -> f64 {
            running
                .iter()
                .map(|&(cpu, t)| {
                    let m = engine.threads[t].cached_misses.expect("computed above").2;
                    let mem = engine.mem_of(t);
                    mem.refs_per_instr * m.l2_refills * (1.0 + mem.write_fraction)
                        / time_of(engine, cpu, t, rho).total_ns()
                })
                .sum::<f64>()
                / capacity_lines_per_ns
        };
        // Fixed-point iteration from the previous solution (rates change little between events);
        // bisection when it does not settle (heavy traffic, where the map is steep).
        let mut rho = self.dram_utilisation.min(0.995);
        let mut settled = false;
        for _ in 0..8 {
            let next = demand(self, rho).min(0.995);
            let done = (next - rho).abs() <= 1e-9 * rho.max(1e-6);
            rho = next;
            if done {
                settled = true;
                break;
            }
        }
        if !settled {
            let (mut lo, mut hi) = (0.0, demand(self, 0.0).min(0.995));
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                if demand(self, mid) > mid {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            rho = 0.5 * (lo + hi);
        }
        self.dram_utilisation = rho;

        for cl in self.clusters.iter_mut() {
            cl.port_read_per_us = 0.0;
        }
        occupancy.clear();
        occupancy.resize(nclusters, 0.0);
        let mut line_per_us = 0.0;
        for &(cpu, t) in running.iter() {
            let c = self.cpus[cpu].cluster;
            let it = time_of(self, cpu, t, rho);
            let m = self.threads[t].cached_misses.expect("computed above").2;
            let mem = *self.mem_of(t);
            let miss_ns = miss_ns_for(c, rho);
            let th = &mut self.threads[t];
            th.instr_per_us = 1000.0 / it.total_ns();
            th.stall_share = it.stall_ns / it.total_ns();
            th.refs_per_instr = mem.refs_per_instr;
            th.refills_per_instr = mem.refs_per_instr * m.l2_refills;
            th.bus_per_instr = th.refills_per_instr * (1.0 + mem.write_fraction);
            th.miss_latency_ns = miss_ns;
            let reads_per_us = th.instr_per_us * th.refills_per_instr;
            self.clusters[c].port_read_per_us += reads_per_us;
            // Little's law: reads in flight = arrival rate x time each one holds a tracker entry.
            occupancy[c] += reads_per_us * 1e-3 * miss_ns;
            line_per_us += th.instr_per_us * th.bus_per_instr;
        }
        let cci_mhz = platform.cci.clock_khz as f64 / 1000.0;
        for (cl, &load) in self.clusters.iter_mut().zip(occupancy.iter()) {
            let full = if load > 0.0 {
                memory::tracker_full_probability(platform.cci.read_tracker_entries, load)
            } else {
                0.0
            };
            cl.port_stall_per_us = full * cci_mhz;
        }
        self.dram_line_per_us = line_per_us;

        self.scratch = scratch;

        // Power.
        for c in 0..nclusters {
            let cluster = &platform.clusters[c];
            let core = platform.core_type_of(c);
            let khz = self.clusters[c].cur_khz;
            let volts = cluster.voltage_v(khz);
            let mut dynamic = 0.0;
            for &cpu in &cluster.cpus {
                let st = &self.cpus[cpu];
                let a = if !st.online {
                    0.0
                } else if let Some(t) = st.current {
                    power::activity(core, self.threads[t].stall_share)
                } else {
                    0.0 // WFI: clock-gated
                };
                dynamic += power::core_dynamic_mw(core, volts, khz, a);
            }
            let cl = &mut self.clusters[c];
            cl.static_mw = if cl.powered { power::cluster_static_mw(cluster, volts, cl.temp_c) } else { 0.0 };
            cl.power_mw = dynamic + cl.static_mw;
        }
    }
}
