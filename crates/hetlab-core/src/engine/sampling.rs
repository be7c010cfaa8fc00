//! Governor sampling: the `PolicyView` the engine fills, the sample itself, its PMC-read
//! cost, and the time-series row it records.

use super::*;

impl<'a> Engine<'a> {
    pub(super) fn port_counts(&self, c: usize) -> (u64, u64) {
        (self.clusters[c].port_reads as u64, self.clusters[c].port_stalls as u64)
    }

    /// Fills `view` (reused between samples to avoid allocation) for cluster `c`.
    pub(super) fn fill_view(&self, c: usize, view: &mut PolicyView) {
        let cluster = &self.platform.clusters[c];
        let cl = &self.clusters[c];
        let wall_us = count(self.now_us - cl.last_sample_us);
        view.cpus.clear();
        for &cpu in &cluster.cpus {
            let st = &self.cpus[cpu];
            let idle_us = if st.online { count(st.idle_since_sample_us.max(0.0)) } else { wall_us };
            view.cpus.push(CpuSample {
                cpu,
                wall_us,
                idle_us: idle_us.min(wall_us),
                nice_us: 0,
                util_avg: count(st.util_avg) as u32,
                was_idle: st.was_idle,
                pmu: st.pmu.to_counts().since(&st.pmu_at_sample),
            });
        }
        view.threads.clear();
        for (i, th) in self.threads.iter().enumerate() {
            let d = th.pmu.to_counts().since(&cl.thread_pmu_at_sample[i]);
            if d.cpu_cycles > 0 {
                view.threads.push(ThreadSample { tid: th.tid, cluster: self.cpus[th.cpu].cluster, pmu: d });
            }
        }
        view.cci_ports.clear();
        for o in (0..self.clusters.len()).filter(|&o| self.clusters[o].online) {
            let (reads, stalls) = self.port_counts(o);
            let (r0, s0) = cl.ports_at_sample[o];
            view.cci_ports.push(CciPortSample {
                port: self.platform.clusters[o].cci_port,
                cluster: o,
                si_rrq_hs_any: reads - r0,
                si_rrq_stall_tt_full: stalls - s0,
            });
        }
        if view.opps_khz != cl.opps_khz {
            view.opps_khz = cl.opps_khz.clone();
        }
        view.now_us = self.now_us as u64;
        view.policy = c;
        view.cpuinfo_min_khz = cluster.min_khz();
        view.cpuinfo_max_khz = cluster.max_khz();
        view.policy_min_khz = cluster.min_khz();
        view.policy_max_khz = cluster.max_khz();
        view.thermal_cap_khz = cl.thermal_cap_khz;
        view.cur_khz = cl.cur_khz;
        view.transition_latency_ns = cluster.transition_latency_ns;
        view.tick_us = self.platform.tick_us();
        view.cpu_capacity = self.capacity[c];
        view.cci_cycles = self.cci_cycles() - cl.cci_cycles_at_sample;
    }

    /// Whether a CPU of cluster `c` is running something (its tick is on).
    pub(super) fn policy_busy(&self, c: usize) -> bool {
        self.platform.clusters[c].cpus.iter().any(|&cpu| self.cpus[cpu].current.is_some())
    }

    /// A CPU of cluster `c` runs scheduler code: take a sample that fell due while idle.
    pub(super) fn wake_policy(&mut self, c: usize) {
        if self.clusters[c].next_sample_us <= self.now_us {
            self.governor_sample(c);
        }
    }

    pub(super) fn governor_sample(&mut self, c: usize) {
        self.flush();
        let mut view = std::mem::take(&mut self.views[c]);
        self.fill_view(c, &mut view);
        let decision = self.clusters[c].governor.sample(&view);
        self.samples += 1;
        // Raw counters per cluster, and this cluster's features as the other cluster's tree
        // would read them.
        let counters: Vec<ClusterCounters> =
            (0..self.clusters.len()).map(|o| ClusterCounters::of(o, &view.cci_ports, &view.threads)).collect();
        let own = counters[c];
        let load_pct = view
            .cpus
            .iter()
            .map(|s| if s.wall_us == 0 { 0.0 } else { 100.0 * (s.wall_us - s.idle_us) as f64 / s.wall_us as f64 })
            .fold(0.0, f64::max);
        let snoop_ns = self.snoop_served_ns(c);
        self.series.push(SampleRow {
            time_s: self.now_us * 1e-6,
            cluster: c,
            freq_khz: self.clusters[c].cur_khz,
            target_khz: decision.target_khz,
            load_pct,
            power_mw: self.clusters[c].power_mw,
            temp_c: self.clusters[c].temp_c,
            cci_congestion: own.cci_congestion(),
            memory_access: own.memory_access(),
            snoop_latency_ns: snoop_ns,
            period_s: (self.now_us - self.clusters[c].last_sample_us) * 1e-6,
            cci_cycles: view.cci_cycles,
            counters,
        });
        if self.config.trace {
            let cpu = self.platform.clusters[c].cpus[0];
            let name = &self.platform.clusters[c].name;
            let time_us = self.now_us;
            self.trace.push(TraceEvent::Counter {
                time_us,
                cpu,
                name: format!("power_{name}_mw"),
                value: self.clusters[c].power_mw,
            });
            self.trace.push(TraceEvent::Counter {
                time_us,
                cpu,
                name: format!("snoop_latency_{name}_ns"),
                value: snoop_ns,
            });
        }
        // New snapshots.
        for &cpu in &self.platform.clusters[c].cpus {
            let st = &mut self.cpus[cpu];
            st.idle_since_sample_us = 0.0;
            st.was_idle = false;
            st.pmu_at_sample = st.pmu.to_counts();
        }
        for i in 0..self.threads.len() {
            self.clusters[c].thread_pmu_at_sample[i] = self.threads[i].pmu.to_counts();
        }
        for o in 0..self.clusters.len() {
            let counts = self.port_counts(o);
            self.clusters[c].ports_at_sample[o] = counts;
        }
        self.clusters[c].cci_cycles_at_sample = self.cci_cycles();
        self.clusters[c].last_sample_us = self.now_us;
        self.clusters[c].next_sample_us = self.now_us + decision.next_sample_us.max(1) as f64;
        // A governor that reads PMCs pays for it on the CPU that runs the sample (a busy CPU
        // of the policy, whose tick triggered it, else the first one, woken for it).
        if self.clusters[c].governor.reads_pmcs() {
            let cost = &self.platform.governor_cost;
            let cost_us = cost.pmc_sample_base_us
                + cost.pmc_per_thread_us * view.threads.len() as f64
                + cost.cci_read_us * view.cci_ports.len() as f64;
            let cpus = &self.platform.clusters[c].cpus;
            let cpu = cpus.iter().copied().find(|&cpu| self.cpus[cpu].current.is_some()).unwrap_or(cpus[0]);
            self.governor_overhead_us += cost_us;
            self.charge_kernel_time(cpu, cost_us);
        }
        self.views[c] = view;
        self.request_freq(c, decision.target_khz);
    }
}
