//! The run's result: energy (`model::energy`), residency, counters and the per-thread report.

use super::{Engine, Series};
use crate::kernel::FIRST_USER_TID;
use crate::model::cci;
use crate::result::RunResult;
use crate::result::{CciPortReport, ClusterReport, CpuReport, TaskGroupReport, ThreadReport};
use crate::trace::TraceThreads;

impl Engine<'_> {
    /// Thread `t`'s task group at the end, if not the root.
    fn group_path(&self, t: usize) -> Option<String> {
        let g = self.sched.groups.of(t);
        (g != crate::sched::group::ROOT).then(|| self.sched.groups.group(g).path.clone())
    }

    /// Each task group but the root: its shares and the CPU time of the threads while in it or
    /// in the groups below it (`cpuacct.usage`); none in a run without groups.
    fn taskgroup_reports(&self) -> Vec<TaskGroupReport> {
        let groups = &self.sched.groups;
        let mut own_us = self.out.group_cpu_us.clone();
        own_us.resize(groups.len(), 0.0);
        for (t, th) in self.threads.iter().enumerate() {
            own_us[groups.of(t)] += th.cpu_time_us - th.cpu_time_in_group_from_us;
        }
        // a group's time counts in its parents': children come after their parents
        let mut total_us = own_us;
        for g in (1..groups.len()).rev() {
            total_us[groups.group(g).parent] += total_us[g];
        }
        (1..groups.len())
            .map(|g| TaskGroupReport {
                path: groups.group(g).path.clone(),
                shares: groups.group(g).shares,
                cpu_time_s: total_us[g] * 1e-6,
            })
            .collect()
    }

    /// The name a thread's comm shows: the workload's threads `task-N`, kernel threads their
    /// task's name.
    pub(super) fn thread_name(&self, t: usize) -> String {
        let th = &self.threads[t];
        let task = &self.tasks[th.task].name;
        if th.kernel {
            task.clone()
        } else {
            format!("{task}-{}", th.tid - FIRST_USER_TID)
        }
    }

    pub(super) fn finish(mut self, completed: bool) -> RunResult {
        self.integrate();
        // "the first reading after the benchmark has finished is reported": the next reading
        // sees the now idle system.
        self.recompute();
        self.read_sensors();
        let platform = self.platform;
        let user_finish_us = self.threads.iter().filter(|t| !t.kernel).map(|t| t.finish_us).fold(0.0, f64::max);
        let time_us = if completed { user_finish_us } else { self.now_us };
        let clusters: Vec<ClusterReport> = self
            .hw
            .clusters
            .iter()
            .enumerate()
            .map(|(c, cl)| {
                // under a switcher a cluster may have no policy left on it: all run one governor
                let policy = self.policies.iter().find(|p| p.cluster == c).unwrap_or(&self.policies[0]);
                let energy = &self.hw.energy.clusters[c];
                ClusterReport {
                    name: platform.clusters[c].name.clone(),
                    governor: policy.governor_name.clone(),
                    avg_freq_khz: {
                        let online_us = self.now_us - cl.offline_us;
                        if online_us > 0.0 {
                            cl.khz_us / online_us
                        } else {
                            cl.cur_khz as f64
                        }
                    },
                    residency: platform.clusters[c]
                        .opps
                        .iter()
                        .zip(&cl.residency_us)
                        .map(|(o, &us)| (o[0], us * 1e-6))
                        .collect(),
                    dynamic_j: energy.dynamic_j(),
                    static_j: energy.static_j(),
                    transitions: cl.transitions,
                    peak_temp_c: cl.thermal.peak_temp_c,
                    min_thermal_cap_khz: cl.min_thermal_cap_khz,
                    online: cl.online,
                    power_downs: cl.power_downs,
                    off_s: (cl.off_us
                        + if !cl.powered && !self.config.offline_clusters.contains(&c) {
                            (self.now_us - cl.off_since_us).max(0.0)
                        } else {
                            0.0
                        })
                        * 1e-6,
                }
            })
            .collect();
        let energy = self.hw.energy.report(
            platform.board.rest_power_mw,
            platform.sensors.unmodelled_rails_mw,
            self.now_us,
            self.hw.sensors.readings_mj,
        );
        // Indexed by tid (user tids start at 1000): built only for a trace, which alone reads it.
        let mut trace_threads = TraceThreads::default();
        if self.config.trace {
            let max_tid = self.threads.iter().map(|t| t.tid as usize).max().unwrap_or(0);
            trace_threads = TraceThreads {
                names: vec![String::new(); max_tid + 1],
                prios: vec![120; max_tid + 1],
                prio_changes: std::mem::take(&mut self.out.prio_changes),
                groups: (0..self.sched.groups.len()).map(|g| self.sched.groups.group(g).path.clone()).collect(),
            };
            for (t, th) in self.threads.iter().enumerate() {
                let task = &self.tasks[th.task];
                trace_threads.names[th.tid as usize] = self.thread_name(t);
                trace_threads.prios[th.tid as usize] = task.class.kernel_prio(task.nice);
            }
        }
        RunResult {
            platform: platform.name.clone(),
            workload: self.workload_name.clone(),
            seed: self.config.seed,
            scheduler: self.config.scheduler.name().into(),
            governors: clusters.iter().map(|c| c.governor.clone()).collect(),
            switching: self.config.switching.name().into(),
            cpu_switches: self.out.cpu_switches,
            rt_throttles: self.out.rt_throttles,
            completed,
            deadlock: self.out.deadlock.take(),
            time_s: time_us * 1e-6,
            energy,
            clusters,
            cpus: self
                .cpus
                .iter()
                .enumerate()
                .map(|(i, c)| CpuReport {
                    cpu: i,
                    cluster: platform.clusters[self.sched.cluster_of[i]].name.clone(),
                    busy_s: c.busy_us * 1e-6,
                    wakeups: c.wakeups,
                    pmu: c.pmu.to_counts(),
                })
                .collect(),
            cci_ports: self
                .hw
                .clusters
                .iter()
                .enumerate()
                .filter_map(|(c, cl)| cl.port.as_ref().map(|port| (c, port)))
                .map(|(c, port)| {
                    let (reads, stalls) = port.counts();
                    CciPortReport {
                        port: port.port,
                        cluster: platform.clusters[c].name.clone(),
                        si_rrq_hs_any: reads,
                        si_rrq_stall_tt_full: stalls,
                        cci_congestion: port.congestion(),
                        mi_retry_speculative_fetch: port.retries(),
                    }
                })
                .collect(),
            cci_cycles: cci::cycles_at(self.now_us, platform.cci.as_ref()),
            dram_lines: self.hw.dram.lines,
            threads: (0..self.threads.len())
                .map(|t| {
                    let th = &self.threads[t];
                    ThreadReport {
                        tid: th.tid,
                        name: self.thread_name(t),
                        cpu_time_s: th.cpu_time_us * 1e-6,
                        cpu_time_on_s: th.cpu_time_on_us.iter().map(|us| us * 1e-6).collect(),
                        finish_s: th.finish_us * 1e-6,
                        migrations: th.migrations,
                        pmu: th.pmu.to_counts(),
                        peer_lines_in: super::state::count(th.peer_lines),
                        taskgroup: self.group_path(t),
                    }
                })
                .collect(),
            taskgroups: self.taskgroup_reports(),
            governor_samples: self.out.samples,
            governor_overhead_s: self.out.governor_overhead_us * 1e-6,
            events: self.out.events,
            marks: std::mem::take(&mut self.out.marks),
            rcu: self.rcu.used.then(|| self.rcu.rcu.report.clone()),
            series: match std::mem::replace(&mut self.out.series, Series::Off) {
                Series::Keep(rows) => rows,
                _ => Vec::new(),
            },
            trace: self.out.trace.take().unwrap_or_default(),
            trace_threads,
        }
    }
}
