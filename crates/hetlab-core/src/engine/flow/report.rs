//! The run's result: each part reports its share — the hardware its energy, clusters and
//! counters, the scheduler its CPUs' time and task groups, the work its threads, the outputs
//! what they recorded.

use crate::engine::Engine;
use crate::model::cci;
use crate::result::{CpuReport, RunResult};
use crate::trace::TraceThreads;

impl Engine<'_> {
    pub(in crate::engine) fn finish(mut self, completed: bool) -> RunResult {
        let now = self.now_us;
        self.hw.integrate(now);
        // "the first reading after the benchmark has finished is reported": the next reading
        // sees the now idle system.
        self.recompute();
        self.hw.final_reading();
        let platform = self.platform;
        let time_us = if completed { self.work.user_finish_us() } else { now };
        let (cpufreq, config) = (&self.cpufreq, &self.config);
        let clusters =
            self.hw.cluster_reports(now, |c| cpufreq.governor_of_cluster(c), |c| config.offline_clusters.contains(&c));
        let threads = (0..self.work.nthreads())
            .map(|t| self.work.thread_report(t, self.sched.migrations(t), self.sched.group_path(t)));
        let threads = threads.collect();
        let trace_threads = self.trace_threads();
        let taskgroups = self.sched.taskgroup_reports(|t| self.work.cpu_time_us(t));
        let cpus = (0..self.sched.ncpus())
            .map(|cpu| {
                let (busy_s, wakeups) = self.sched.cpu_busy_s(cpu);
                let cluster = platform.clusters[self.sched.cluster_of(cpu)].name.clone();
                CpuReport { cpu, cluster, busy_s, wakeups, pmu: self.hw.cpu_pmu(cpu).to_counts() }
            })
            .collect();
        let rcu = self.kernel.rcu_report();
        let interrupts = self.kernel.interrupt_report();
        let rtapp_logs = match self.config.rtapp_logs {
            true => (0..self.work.nthreads()).filter_map(|t| self.work.rtapp_log(t)).collect(),
            false => Vec::new(),
        };
        let recorded = self.out.into_recorded();
        let trace_threads = TraceThreads { prio_changes: recorded.prio_changes, ..trace_threads };
        RunResult {
            platform: platform.name.clone(),
            workload: self.work.workload_name().to_string(),
            seed: self.config.seed,
            scheduler: self.config.scheduler.name().into(),
            governors: clusters.iter().map(|c| c.governor.clone()).collect(),
            switching: self.config.switching.name().into(),
            cpu_switches: recorded.cpu_switches,
            rt_throttles: recorded.rt_throttles,
            completed,
            deadlock: recorded.deadlock,
            time_s: time_us * 1e-6,
            energy: self.hw.energy_report(now),
            clusters,
            cpus,
            cci_ports: self.hw.cci_port_reports(),
            cci_cycles: cci::cycles_at(now, platform.cci.as_ref()),
            dsu: self.hw.dsu_report(),
            dram_lines: self.hw.dram_lines(),
            threads,
            taskgroups,
            governor_samples: recorded.samples,
            governor_overhead_s: recorded.governor_overhead_us * 1e-6,
            events: recorded.events,
            marks: recorded.marks,
            rcu,
            interrupts,
            series: recorded.series,
            trace: recorded.trace,
            trace_threads,
            rtapp_logs,
        }
    }

    /// The threads as a trace names them (indexed by tid; user tids start at 1000): built only
    /// for a trace, which alone reads it.
    fn trace_threads(&self) -> TraceThreads {
        if !self.config.trace {
            return TraceThreads::default();
        }
        let max_tid = (0..self.work.nthreads()).map(|t| self.work.tid(t) as usize).max().unwrap_or(0);
        let mut threads = TraceThreads {
            names: vec![String::new(); max_tid + 1],
            prios: vec![120; max_tid + 1],
            prio_changes: Vec::new(),
            groups: self.sched.group_paths(),
        };
        for t in 0..self.work.nthreads() {
            let (tid, task) = (self.work.tid(t) as usize, self.work.task(t));
            threads.names[tid] = self.work.thread_name(t);
            threads.prios[tid] = task.class.kernel_prio(task.nice);
        }
        threads
    }
}
