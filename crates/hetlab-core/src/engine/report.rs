//! The run's result: energy, residency, counters and the per-thread report.

use super::*;

impl<'a> Engine<'a> {
    pub(super) fn finish(mut self, completed: bool) -> RunResult {
        self.flush();
        // "the first reading after the benchmark has finished is reported": the next reading
        // sees the now idle system.
        self.recompute();
        self.read_sensors();
        let platform = self.platform;
        let time_us =
            if completed { self.threads.iter().map(|t| t.finish_us).fold(0.0, f64::max) } else { self.now_us };
        let clusters: Vec<ClusterReport> = self
            .clusters
            .iter()
            .enumerate()
            .map(|(c, cl)| ClusterReport {
                name: platform.clusters[c].name.clone(),
                governor: cl.governor_name.clone(),
                avg_freq_khz: if self.now_us > 0.0 { cl.khz_us / self.now_us } else { cl.cur_khz as f64 },
                residency: cl.opps_khz.iter().zip(&cl.residency_us).map(|(&f, &us)| (f, us * 1e-6)).collect(),
                dynamic_j: cl.dynamic_mj * 1e-3,
                static_j: cl.static_mj * 1e-3,
                transitions: cl.transitions,
                peak_temp_c: cl.peak_temp_c,
                min_thermal_cap_khz: cl.min_cap_khz,
                online: cl.online,
                power_downs: cl.power_downs,
            })
            .collect();
        let clusters_j: Vec<f64> = clusters.iter().map(|c| c.dynamic_j + c.static_j).collect();
        let dram_j = self.dram_mj * 1e-3;
        let board_j = self.platform.board.rest_power_mw * self.now_us * 1e-9;
        let energy = Energy {
            total_j: clusters_j.iter().sum::<f64>() + dram_j + board_j,
            sensors_j: clusters_j.iter().sum::<f64>() + dram_j,
            sensor_readings_j: self.sensor_readings_mj * 1e-3,
            clusters_j,
            dram_j,
            board_j,
        };
        let trace_threads = TraceThreads {
            names: {
                let mut names = vec![String::new(); 1000 + self.threads.len()];
                for th in &self.threads {
                    names[th.tid as usize] = format!("{}-{}", self.workload.tasks[th.task].name, th.tid - 1000);
                }
                names
            },
            prios: {
                let mut prios = vec![120; 1000 + self.threads.len()];
                for th in &self.threads {
                    prios[th.tid as usize] = 120 + self.workload.tasks[th.task].nice;
                }
                prios
            },
        };
        RunResult {
            platform: platform.name.clone(),
            workload: self.workload.name.clone(),
            seed: self.config.seed,
            scheduler: self.config.scheduler.name().into(),
            governors: self.clusters.iter().map(|c| c.governor_name.clone()).collect(),
            completed,
            time_s: time_us * 1e-6,
            energy,
            clusters,
            cpus: self
                .cpus
                .iter()
                .enumerate()
                .map(|(i, c)| CpuReport {
                    cpu: i,
                    cluster: platform.clusters[c.cluster].name.clone(),
                    busy_s: c.busy_us * 1e-6,
                    pmu: c.pmu.to_counts(),
                })
                .collect(),
            cci_ports: self
                .clusters
                .iter()
                .enumerate()
                .map(|(c, cl)| CciPortReport {
                    port: platform.clusters[c].cci_port,
                    cluster: platform.clusters[c].name.clone(),
                    si_rrq_hs_any: cl.port_reads as u64,
                    si_rrq_stall_tt_full: cl.port_stalls as u64,
                    cci_congestion: if cl.port_reads > 0.0 { cl.port_stalls / cl.port_reads } else { 0.0 },
                })
                .collect(),
            cci_cycles: self.cci_cycles(),
            dram_lines: self.dram_lines,
            threads: self
                .threads
                .iter()
                .map(|th| ThreadReport {
                    tid: th.tid,
                    name: format!("{}-{}", self.workload.tasks[th.task].name, th.tid - 1000),
                    cpu_time_s: th.cpu_time_us * 1e-6,
                    finish_s: th.finish_us * 1e-6,
                    migrations: th.migrations,
                    pmu: th.pmu.to_counts(),
                })
                .collect(),
            governor_samples: self.samples,
            governor_overhead_s: self.governor_overhead_us * 1e-6,
            events: self.events,
            series: self.series,
            trace: self.trace,
            trace_threads,
        }
    }
}
