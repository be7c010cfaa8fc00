//! Governor sampling: the `PolicyView` the engine fills from the model (what /proc/stat,
//! sysfs and perf would give on a board), the sample itself, its PMC-read cost, and the
//! time-series row it records.

use super::state::count;
use super::state::ThreadState;
use super::{Engine, Series};
use crate::counters::{ClusterCounters, ThreadSample};
use crate::governor::CpuSample;
use crate::governor::PolicyView;
use crate::model::cci;
use crate::result::PerCluster;
use crate::result::SampleRow;
use crate::trace::TraceEvent;

impl Engine<'_> {
    /// Fills `view` (reused between samples to avoid allocation) for policy `p`.
    pub(super) fn fill_view(&mut self, p: usize, view: &mut PolicyView) {
        let c = self.policies[p].cluster;
        let cluster = &self.platform.clusters[c];
        let wall_us = count(self.now_us - self.policies[p].last_sample_us);
        let governor = &self.policies[p].governor;
        let (reads_util, reads_pmcs) = (governor.reads_util(), governor.reads_pmcs());
        // The time series records every cluster's counters whatever the governor reads.
        let reads_counters = reads_pmcs || self.out.records_series();
        view.cpus.clear();
        for i in 0..self.policies[p].cpus.len() {
            let cpu = self.policies[p].cpus[i];
            let util_avg = if reads_util { self.cpu_util_for_frequency(cpu) } else { 0 };
            let st = &self.cpus[cpu];
            let idle_us = if self.sched.rqs[cpu].online { count(st.idle_since_sample_us.max(0.0)) } else { wall_us };
            view.cpus.push(CpuSample {
                cpu,
                wall_us,
                idle_us: idle_us.min(wall_us),
                nice_us: 0,
                util_avg,
                was_idle: st.was_idle,
                pmu: if reads_pmcs { st.pmu.to_counts().since(&st.pmu_at_sample) } else { Default::default() },
            });
        }
        // The threads that ran since the previous sample, in thread order, and the CCI ports
        // (read only by PMC governors and for the time series).
        let ran = &mut self.policies[p].ran;
        ran.threads.sort_unstable();
        view.threads.clear();
        view.cci_ports.clear();
        for &t in ran.threads.iter().filter(|_| reads_counters) {
            let th = &self.threads[t];
            let d = th.pmu.to_counts().since(&ran.pmu_at_sample[t]);
            if d.cpu_cycles > 0 {
                let cluster = self.sched.cluster_of[self.sched.entities[t].cpu];
                view.threads.push(ThreadSample { tid: th.tid, cluster, pmu: d });
            }
        }
        for (o, hw) in self.hw.clusters.iter().enumerate().filter(|(_, hw)| hw.online && reads_counters) {
            if let Some(port) = &hw.port {
                view.cci_ports.push(port.sample_since(o, self.policies[p].ports_at_sample[o]));
            }
        }
        let policy = &self.policies[p];
        if view.opps_khz != policy.opps_khz {
            view.opps_khz = policy.opps_khz.clone();
        }
        view.now_us = self.now_us as u64;
        view.policy = p;
        let (min_khz, max_khz) = (policy.opps_khz[0], *policy.opps_khz.last().expect("a policy has OPPs"));
        view.cpuinfo_min_khz = min_khz;
        view.cpuinfo_max_khz = max_khz;
        view.policy_min_khz = min_khz;
        view.policy_max_khz = max_khz;
        view.thermal_cap_khz = self.upper_limit_khz(p);
        view.cur_khz = policy.request_khz;
        view.transition_latency_ns = cluster.transition_latency_ns;
        view.tick_us = self.platform.tick_us();
        view.cpu_capacity = self.platform.cpu_capacity(c);
        view.cci_cycles = cci::cycles_at(self.now_us, self.platform.cci.as_ref()) - policy.cci_cycles_at_sample;
    }

    /// Whether a CPU of policy `p` is running something (its tick is on).
    pub(super) fn policy_busy(&self, p: usize) -> bool {
        self.policies[p].busy_cpus > 0
    }

    /// A CPU of policy `p` runs scheduler code: take a sample that fell due while idle.
    pub(super) fn wake_policy(&mut self, p: usize) {
        if self.policies[p].next_sample_us <= self.now_us {
            self.governor_sample(p);
        }
    }

    pub(super) fn governor_sample(&mut self, p: usize) {
        self.integrate();
        let mut view = std::mem::take(&mut self.views[p]);
        self.fill_view(p, &mut view);
        let decision = self.policies[p].governor.sample(&view);
        self.out.samples += 1;
        let c = self.policies[p].cluster;
        let snoop_ns = self.snoop_served_ns(c);
        if self.out.records_series() {
            let row = self.sample_row(p, &view, decision.target_khz, snoop_ns);
            match &mut self.out.series {
                Series::Keep(rows) => rows.push(row),
                Series::Stream(sink) => sink(&row),
                Series::Off => {}
            }
        }
        if self.out.trace.is_some() {
            let (time_us, cpu) = (self.now_us, self.policies[p].cpus[0]);
            let name = &self.platform.clusters[c].name;
            let power_mw = self.hw.clusters[c].power.total_mw;
            self.out.trace(TraceEvent::Counter { time_us, cpu, name: format!("power_{name}_mw"), value: power_mw });
            self.out.trace(TraceEvent::Counter {
                time_us,
                cpu,
                name: format!("snoop_latency_{name}_ns"),
                value: snoop_ns,
            });
        }
        self.snapshot_for_next_sample(p);
        let policy = &mut self.policies[p];
        policy.next_sample_us = self.now_us + decision.next_sample_us.max(1) as f64;
        // A governor that reads PMCs pays for it on the CPU that runs the sample (a busy CPU
        // of the policy, whose tick triggered it, else the first one, woken for it).
        if policy.governor.reads_pmcs() {
            let cost = &self.platform.governor_cost;
            let cost_us = cost.pmc_sample_base_us
                + cost.pmc_per_thread_us * view.threads.len() as f64
                + cost.cci_read_us * view.cci_ports.len() as f64;
            let cpus = &policy.cpus;
            let cpu = cpus.iter().copied().find(|&cpu| self.sched.rqs[cpu].curr.is_some()).unwrap_or(cpus[0]);
            self.out.governor_overhead_us += cost_us;
            self.charge_kernel_time(cpu, cost_us);
        }
        self.views[p] = view;
        self.request_freq(p, decision.target_khz);
    }

    /// The time-series row of policy `p`'s sample `view`: every cluster's counters over the
    /// period, and this cluster's features as the other cluster's tree would read them.
    fn sample_row(&self, p: usize, view: &PolicyView, target_khz: u32, snoop_ns: f64) -> SampleRow {
        let c = self.policies[p].cluster;
        let counters: PerCluster =
            (0..self.hw.clusters.len()).map(|o| ClusterCounters::of(o, &view.cci_ports, &view.threads)).collect();
        let own = counters[c];
        let load_pct = view
            .cpus
            .iter()
            .map(|s| if s.wall_us == 0 { 0.0 } else { 100.0 * (s.wall_us - s.idle_us) as f64 / s.wall_us as f64 })
            .fold(0.0, f64::max);
        let cluster = &self.hw.clusters[c];
        SampleRow {
            time_s: self.now_us * 1e-6,
            cluster: c,
            freq_khz: cluster.cur_khz,
            target_khz,
            load_pct,
            power_mw: cluster.power.total_mw,
            temp_c: cluster.thermal.temp_c,
            cci_congestion: own.cci_congestion(),
            memory_access: own.memory_access(),
            snoop_latency_ns: snoop_ns,
            period_s: (self.now_us - self.policies[p].last_sample_us) * 1e-6,
            cci_cycles: view.cci_cycles,
            counters,
        }
    }

    /// The counters' values now become the base of policy `p`'s next period.
    fn snapshot_for_next_sample(&mut self, p: usize) {
        let reads_pmcs = self.policies[p].governor.reads_pmcs();
        for &cpu in &self.policies[p].cpus {
            let st = &mut self.cpus[cpu];
            st.idle_since_sample_us = 0.0;
            st.was_idle = false;
            if reads_pmcs {
                st.pmu_at_sample = st.pmu.to_counts();
            }
        }
        // Threads running now stay in the set (they run on after the sample); the others
        // leave it and rejoin, with their counters, when they next run.
        let ran = &mut self.policies[p].ran;
        let mut kept = 0;
        for i in 0..ran.threads.len() {
            let t = ran.threads[i];
            if self.threads[t].state == ThreadState::Running {
                ran.pmu_at_sample[t] = self.threads[t].pmu.to_counts();
                ran.threads[kept] = t;
                kept += 1;
            } else {
                ran.member[t] = false;
            }
        }
        ran.threads.truncate(kept);
        let policy = &mut self.policies[p];
        for (o, hw) in self.hw.clusters.iter().enumerate() {
            policy.ports_at_sample[o] = hw.port.as_ref().map_or((0, 0), |port| port.counts());
        }
        policy.cci_cycles_at_sample = cci::cycles_at(self.now_us, self.platform.cci.as_ref());
        policy.last_sample_us = self.now_us;
    }
}
