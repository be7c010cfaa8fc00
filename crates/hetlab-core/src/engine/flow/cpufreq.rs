//! cpufreq's sequences: a governor sample (its `PolicyView` filled from what /proc/stat, sysfs
//! and perf would give on a board, its PMC cost charged, the time-series row), frequency
//! requests and transitions (a switcher moving a policy's CPUs to the other cluster, the
//! clusters' clocks following), the thermal governor's caps, and the CPU map changing.

use crate::counters::{ClusterCounters, ThreadSample};
use crate::engine::pmu::count;
use crate::engine::Engine;
use crate::governor::{CpuSample, PolicyView};
use crate::result::{PerCluster, SampleRow};
use crate::trace::TraceEvent;

impl Engine<'_> {
    /// The highest frequency policy `p` may ask for now, in its table's terms.
    fn upper_limit_khz(&self, p: usize) -> u32 {
        self.cpufreq.upper_limit_khz(p, |c| self.hw.thermal_cap_khz(c))
    }

    /// Fills `view` (reused between samples to avoid allocation) for policy `p`: each CPU's
    /// entry is written in place, and the threads, CCI ports and CCI cycles are read only where
    /// someone reads them.
    pub(super) fn fill_view(&mut self, p: usize, view: &mut PolicyView) {
        let now = self.now_us;
        let wall_us = count(now - self.cpufreq.last_sample_us(p));
        let (reads_util, reads_pmcs) = (self.cpufreq.reads_util(p), self.cpufreq.reads_pmcs(p));
        // The time series records every cluster's counters whatever the governor reads.
        let reads_counters = reads_pmcs || self.out.records_series();
        view.util_is_perf = reads_util && self.sched.asks_effective_cpu_perf();
        let cpus = self.cpufreq.cpus(p);
        // a policy's CPUs and what its governor reads are fixed: an entry's `pmu` is only ever
        // written by a governor that reads PMCs, and stays zero otherwise
        view.cpus.resize(cpus.len(), CpuSample::default());
        let (sched, out) = (&mut self.sched, &mut self.out);
        for (sample, &cpu) in view.cpus.iter_mut().zip(cpus) {
            sample.util_avg = if reads_util { sched.cpu_util_for_frequency(cpu, now, out) } else { 0 };
            let (idle_since_sample_us, was_idle) = sched.idle_since_sample(cpu);
            // an idle time at or below 0 counts 0 (kernel work charged ahead can take it there)
            let idle_us = if !sched.online(cpu) {
                wall_us
            } else if idle_since_sample_us > 0.0 {
                count(idle_since_sample_us).min(wall_us)
            } else {
                0
            };
            sample.cpu = cpu;
            sample.wall_us = wall_us;
            sample.idle_us = idle_us;
            sample.nice_us = 0;
            sample.was_idle = was_idle;
            if reads_pmcs {
                sample.pmu = self.hw.cpu_pmu(cpu).to_counts().since(self.cpufreq.pmu_at_sample(cpu));
            }
        }
        // The threads that ran since the previous sample, in thread order, and the CCI ports
        // (read only by PMC governors and for the time series).
        view.threads.clear();
        view.cci_ports.clear();
        if reads_counters {
            let (work, sched) = (&self.work, &self.sched);
            for (t, at_sample) in self.cpufreq.ran_since_sample(p) {
                let d = work.pmu(t).to_counts().since(at_sample);
                if d.cpu_cycles > 0 {
                    let cluster = sched.cluster_of(sched.cpu_of(t));
                    view.threads.push(ThreadSample { tid: work.tid(t), cluster, pmu: d });
                }
            }
            self.hw.port_samples(|o| self.cpufreq.ports_at_sample(p, o), &mut view.cci_ports);
        }
        let cap_khz = self.upper_limit_khz(p);
        let reads_cci_cycles = reads_counters || self.out.watches_governor();
        self.cpufreq.fill_view_policy(p, view, now, cap_khz, reads_cci_cycles);
    }

    /// A CPU of policy `p` runs scheduler code: take a sample that fell due while idle.
    pub(in crate::engine) fn wake_policy(&mut self, p: usize) {
        if self.cpufreq.sample_due(p, self.now_us) {
            self.governor_sample(p);
        }
    }

    /// Policy `p`'s governor samples: its view, its decision, the series row and the trace's
    /// counters, the counters' base for the next period, the cost of reading PMCs (charged to a
    /// CPU of the policy), and the frequency it asks.
    pub(in crate::engine) fn governor_sample(&mut self, p: usize) {
        let now = self.now_us;
        self.hw.integrate(now);
        let mut view = self.cpufreq.take_view(p);
        self.fill_view(p, &mut view);
        let decision = self.cpufreq.sample_governor(p, &view);
        self.out.governor_sampled(&view, decision);
        self.out.count_sample();
        let c = self.cpufreq.cluster(p);
        if self.out.records_series() {
            let snoop_ns = self.hw.snoop_served_ns(c);
            let row = self.sample_row(p, &view, decision.target_khz, snoop_ns);
            self.out.record_row(row);
        }
        if self.out.tracing() {
            let snoop_ns = self.hw.snoop_served_ns(c);
            let cpu = self.cpufreq.cpus(p)[0];
            let name = &self.platform.clusters[c].name;
            let power_mw = self.hw.power_mw(c);
            self.out.trace(TraceEvent::Counter {
                time_us: now,
                cpu,
                name: format!("power_{name}_mw"),
                value: power_mw,
            });
            self.out.trace(TraceEvent::Counter {
                time_us: now,
                cpu,
                name: format!("snoop_latency_{name}_ns"),
                value: snoop_ns,
            });
        }
        self.snapshot_for_next_sample(p);
        // A governor that reads PMCs pays for it on the CPU that runs the sample (a busy CPU
        // of the policy, whose tick triggered it, else the first one, woken for it).
        let cost_us = if self.cpufreq.reads_pmcs(p) { Some(self.pmc_read_cost_us(&view)) } else { None };
        // the limit the view was filled with (only `thermal_poll` moves the caps)
        let cap_khz = view.thermal_cap_khz;
        self.cpufreq.sampled(p, view, now + decision.next_sample_us.max(1) as f64);
        if let Some(cost_us) = cost_us {
            let cpus = self.cpufreq.cpus(p);
            let cpu = cpus.iter().copied().find(|&cpu| self.sched.curr(cpu).is_some()).unwrap_or(cpus[0]);
            self.out.add_governor_overhead(cost_us);
            self.charge_kernel_time(cpu, cost_us);
        }
        self.cpufreq.request(p, decision.target_khz, cap_khz, now);
    }

    /// What reading the PMCs of `view` costs, µs (the platform's `governor_cost`).
    fn pmc_read_cost_us(&self, view: &PolicyView) -> f64 {
        let cost = &self.platform.governor_cost;
        cost.pmc_sample_base_us
            + cost.pmc_per_thread_us * view.threads.len() as f64
            + cost.cci_read_us * view.cci_ports.len() as f64
    }

    /// The time-series row of policy `p`'s sample `view`: every cluster's counters over the
    /// period, and this cluster's features as the other cluster's tree would read them.
    fn sample_row(&self, p: usize, view: &PolicyView, target_khz: u32, snoop_ns: f64) -> SampleRow {
        let c = self.cpufreq.cluster(p);
        let nclusters = self.platform.clusters.len();
        let counters: PerCluster =
            (0..nclusters).map(|o| ClusterCounters::of(o, &view.cci_ports, &view.threads)).collect();
        let own = counters[c];
        let load_pct = view
            .cpus
            .iter()
            .map(|s| if s.wall_us == 0 { 0.0 } else { 100.0 * (s.wall_us - s.idle_us) as f64 / s.wall_us as f64 })
            .fold(0.0, f64::max);
        SampleRow {
            time_s: self.now_us * 1e-6,
            cluster: c,
            freq_khz: self.hw.cur_khz(c),
            target_khz,
            load_pct,
            power_mw: self.hw.power_mw(c),
            temp_c: self.hw.temp_c(c),
            cci_congestion: own.cci_congestion(),
            memory_access: own.memory_access(),
            snoop_latency_ns: snoop_ns,
            period_s: (self.now_us - self.cpufreq.last_sample_us(p)) * 1e-6,
            cci_cycles: view.cci_cycles,
            counters,
        }
    }

    /// The counters' values now become the base of policy `p`'s next period.
    fn snapshot_for_next_sample(&mut self, p: usize) {
        let sched = &mut self.sched;
        for &cpu in self.cpufreq.cpus(p) {
            sched.sampled(cpu);
        }
        let reads_counters = self.cpufreq.reads_pmcs(p) || self.out.records_series();
        let (work, sched, hw) = (&self.work, &self.sched, &self.hw);
        let counters = reads_counters.then_some((|t| work.pmu(t).to_counts(), |o| hw.port_counts(o)));
        self.cpufreq.snapshot(p, self.now_us, |cpu| hw.cpu_pmu(cpu).to_counts(), |t| sched.is_running(t), counters);
    }

    /// Policy `p` asks for `khz`: the cpufreq core resolves it within its limits.
    pub(super) fn request_freq(&mut self, p: usize, khz: u32) {
        let cap_khz = self.upper_limit_khz(p);
        self.cpufreq.request(p, khz, cap_khz, self.now_us);
    }

    /// The transition of policy `p` to `khz` completes: a switcher may move its CPUs to the
    /// other cluster, and the clusters concerned run at the clock their policies ask.
    pub(in crate::engine) fn set_freq(&mut self, p: usize, khz: u32) {
        let now = self.now_us;
        self.hw.integrate(now);
        let (changed, from, to) = self.cpufreq.complete(p, khz);
        if to != from {
            self.switch_policy(p, to);
        }
        let clock_changed = self.set_cluster_clock(to);
        if changed {
            for &cpu in self.cpufreq.cpus(p) {
                self.out.trace(TraceEvent::CpuFrequency { time_us: now, cpu, freq_khz: khz });
            }
        }
        if clock_changed {
            self.sched.trace_cluster_capacity(to, now, &mut self.out);
        }
        // the cluster left keeps the highest request of the CPUs still on it
        if to != from && self.set_cluster_clock(from) {
            self.sched.trace_cluster_capacity(from, now, &mut self.out);
        }
    }

    /// Cluster `c`'s clock becomes what its policies ask; whether it changed. The scheduler's
    /// PELT scale follows (`arch_set_freq_scale`).
    fn set_cluster_clock(&mut self, c: usize) -> bool {
        let cap_khz = self.hw.thermal_cap_khz(c);
        let Some(khz) = self.cpufreq.cluster_clock_khz(c, cap_khz) else { return false };
        let changed = self.hw.set_clock(c, khz);
        if changed {
            self.sched.set_cluster_freq(c, khz, cap_khz);
        }
        changed
    }

    /// Step-wise passive cooling: the highest trip the hottest cluster exceeds sets each
    /// cluster's cap (the scheduler's capped maximum follows); a lowered cap applies at once
    /// (cpufreq_update_policy).
    pub(in crate::engine) fn thermal_poll(&mut self) {
        self.hw.apply_trip_caps(self.now_us);
        for c in 0..self.platform.clusters.len() {
            self.sched.set_cluster_freq(c, self.hw.cur_khz(c), self.hw.thermal_cap_khz(c));
        }
        for p in 0..self.cpufreq.len() {
            let cap = self.upper_limit_khz(p);
            if self.cpufreq.target_khz(p) > cap {
                self.request_freq(p, cap);
            }
        }
    }

    /// Policy `p`'s logical CPUs move onto their partner cores in cluster `to` (`bL_switch_to`):
    /// each running thread stops for the inbound cluster's power-up and the context transfer
    /// and then refills its caches; a cluster no logical CPU uses any more is powered down
    /// (MCPM's last man).
    fn switch_policy(&mut self, p: usize, to: usize) {
        let now = self.now_us;
        let from = self.cpufreq.cluster(p);
        let stop_us = self.hw.bring_online(to, now) + self.platform.sched.switch_transfer_us;
        for i in 0..self.cpufreq.cpus(p).len() {
            let cpu = self.cpufreq.cpus(p)[i];
            let switcher = self.cpufreq.switcher().expect("only a switcher switches");
            let partner = switcher.partner(self.sched.core_of(cpu)).expect("a switched CPU is paired");
            self.move_cpu_to_core(cpu, partner).expect("a platform core");
            // the outbound core is gated by the switch itself; the inbound one is powered
            if self.idle.core_off_since_us(cpu).is_some() {
                self.hw.integrate(now);
                self.idle.core_on(cpu);
            }
            self.out.count_cpu_switch();
            if let Some(t) = self.sched.curr(cpu) {
                let refill_us = self.hw.cold_cache_us(&self.work.phase(t).mem, from, to);
                self.work.steal(t, stop_us + refill_us);
            }
        }
        if self.cpufreq.move_policy(p, to) {
            self.hw.take_offline(from, now);
        }
    }

    /// Moves logical `cpu` onto physical `core`; the logical CPU that ran there takes `cpu`'s
    /// old core (the map stays one-to-one).
    pub fn move_cpu_to_core(&mut self, cpu: usize, core: usize) -> Result<(), String> {
        let ncpus = self.sched.ncpus();
        if cpu >= ncpus || core >= ncpus {
            return Err(format!(
                "cpu{cpu} -> core {core}: the platform has cpu0-{} and cores 0-{}",
                ncpus - 1,
                ncpus - 1
            ));
        }
        if self.sched.core_of(cpu) == core {
            return Ok(());
        }
        let now = self.now_us;
        self.hw.integrate(now);
        let other = (0..ncpus).find(|&l| self.sched.core_of(l) == core).expect("the map is one-to-one");
        self.sched.update_util(cpu, now, &mut self.out);
        self.sched.update_util(other, now, &mut self.out);
        self.sched.swap_cores(cpu, core);
        for logical in [cpu, other] {
            self.sched.trace_capacity(logical, now, &mut self.out);
        }
        self.hw.mark_dirty();
        Ok(())
    }
}
