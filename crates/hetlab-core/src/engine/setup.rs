//! Building a run: CPUs, threads with their allowed CPUs, clusters with their governors, the
//! reference work of periodic phases; then the governors' start and the threads' first phase.

use super::*;

impl<'a> Engine<'a> {
    pub fn new(platform: &'a Platform, workload: &'a Workload, config: SimConfig) -> Result<Self, String> {
        if config.governors.len() != platform.clusters.len() {
            return Err(format!("{} governors given for {} clusters", config.governors.len(), platform.clusters.len()));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let ncpus = platform.ncpus();
        let mut cpus: Vec<Cpu> = (0..ncpus)
            .map(|cpu| {
                let cluster = platform.clusters.iter().position(|c| c.cpus.contains(&cpu)).expect("validated");
                Cpu {
                    cluster,
                    online: !config.offline_clusters.contains(&cluster),
                    current: None,
                    queue: VecDeque::new(),
                    slice_end_us: f64::INFINITY,
                    next_kernel_wakeup_us: f64::INFINITY,
                    idle_since_sample_us: 0.0,
                    was_idle: false,
                    util_avg: 0.0,
                    busy_us: 0.0,
                    pmu: Pmu::default(),
                    pmu_at_sample: CorePmu::default(),
                }
            })
            .collect();
        for cpu in cpus.iter_mut().filter(|c| c.online) {
            cpu.next_kernel_wakeup_us = exp_sample(&mut rng, platform.noise.kernel_wakeup_mean_interval_us as f64);
        }
        let online: Vec<usize> = (0..ncpus).filter(|&c| cpus[c].online).collect();
        if online.is_empty() {
            return Err("every cluster is offline; keep at least one cluster online".into());
        }

        // Threads, with their allowed CPUs.
        let mut threads = Vec::new();
        for (ti, task) in workload.tasks.iter().enumerate() {
            let mut allowed: Vec<usize> = match &task.affinity {
                Some(a) => {
                    if let Some(bad) = a.iter().find(|&&c| c >= ncpus) {
                        return Err(format!(
                            "task '{}': affinity names cpu{bad}, the platform has cpu0-{}",
                            task.name,
                            ncpus - 1
                        ));
                    }
                    a.clone()
                }
                None => (0..ncpus).collect(),
            };
            if let Some(c) = config.cluster {
                allowed.retain(|cpu| platform.clusters[c].cpus.contains(cpu));
            }
            allowed.retain(|&cpu| cpus[cpu].online);
            if allowed.is_empty() {
                return Err(format!(
                    "task '{}' has no online CPU it may run on (check affinity, --cluster and --offline)",
                    task.name
                ));
            }
            for _ in 0..task.threads {
                let tid = 1000 + threads.len() as u32;
                threads.push(Thread {
                    tid,
                    task: ti,
                    home_cpu: allowed[threads.len() % allowed.len()],
                    cpu: allowed[0],
                    allowed: allowed.clone(),
                    state: ThreadState::Runnable,
                    phase: 0,
                    repeats_left: task.repeat,
                    work_left: 0.0,
                    stolen_us: 0.0,
                    jobs_left: 0,
                    next_release_us: 0.0,
                    instr_per_us: 0.0,
                    stall_share: 0.0,
                    refills_per_instr: 0.0,
                    bus_per_instr: 0.0,
                    refs_per_instr: 0.0,
                    miss_latency_ns: 0.0,
                    cached_misses: None,
                    pmu: Pmu::default(),
                    cpu_time_us: 0.0,
                    finish_us: 0.0,
                    migrations: 0,
                    util_avg: 0.0,
                });
            }
        }
        if threads.is_empty() {
            return Err("the workload has no threads".into());
        }

        let mut clusters = Vec::new();
        for (c, cl) in platform.clusters.iter().enumerate() {
            let setting = &config.governors[c];
            let ctx = crate::governor::GovernorContext {
                cluster_name: &cl.name,
                tick_us: platform.tick_us(),
                model: config.model.as_ref(),
            };
            let governor = registry::build(&setting.name, &setting.tunables, &ctx)?;
            let is_online = !config.offline_clusters.contains(&c);
            clusters.push(ClusterRt {
                governor,
                governor_name: setting.name.clone(),
                opps_khz: cl.freqs_khz(),
                // Boot at the top OPP, as the bootloader leaves it; the governor takes over at
                // its start.
                cur_khz: cl.max_khz(),
                cur_opp: cl.opps.len() - 1,
                pending: None,
                next_sample_us: 0.0,
                last_sample_us: 0.0,
                thermal_cap_khz: cl.max_khz(),
                min_cap_khz: cl.max_khz(),
                temp_c: platform.thermal.ambient_c,
                peak_temp_c: platform.thermal.ambient_c,
                online: is_online,
                powered: is_online,
                power_mw: 0.0,
                dynamic_mj: 0.0,
                static_mj: 0.0,
                static_mw: 0.0,
                residency_us: vec![0.0; cl.opps.len()],
                khz_us: 0.0,
                transitions: 0,
                power_downs: 0,
                port_reads: 0.0,
                port_stalls: 0.0,
                port_read_per_us: 0.0,
                port_stall_per_us: 0.0,
                thread_pmu_at_sample: vec![CorePmu::default(); threads.len()],
                ports_at_sample: vec![(0, 0); platform.clusters.len()],
                cci_cycles_at_sample: 0,
            });
        }

        // Reference work for periodic phases: instructions per µs on the biggest core type at
        // its top OPP, idle memory, no snoop penalty.
        let reference = (0..platform.clusters.len()).max_by_key(|&c| platform.cpu_capacity(c)).unwrap_or(0);
        let ref_core = platform.core_type_of(reference);
        let ref_ghz = platform.clusters[reference].max_khz() as f64 / 1e6;
        let ref_l2 = platform.clusters[reference].l2_bytes as f64;
        let miss_ns = memory::miss_latency_ns(platform.cci.latency_ns, platform.dram.idle_latency_ns, 0.0);
        let reference_ips = workload
            .tasks
            .iter()
            .map(|t| {
                t.phases
                    .iter()
                    .map(|p| {
                        let m = memory::miss_ratios(&p.mem, ref_core, ref_l2);
                        1000.0 / memory::instr_time(&p.mem, ref_core, ref_ghz, &m, miss_ns).total_ns()
                    })
                    .collect()
            })
            .collect();

        let mut engine = Engine {
            platform,
            workload,
            rng,
            now_us: 0.0,
            threads,
            cpus,
            clusters,
            dram_noise: 1.0,
            next_dram_noise_us: 0.0,
            next_thermal_us: platform.thermal.polling_interval_ms as f64 * 1000.0,
            next_sensor_us: platform.sensors.period_us as f64,
            sensor_readings_mj: 0.0,
            dram_lines: 0.0,
            dram_line_per_us: 0.0,
            dram_mj: 0.0,
            integrated_until_us: 0.0,
            events: 0,
            samples: 0,
            governor_overhead_us: 0.0,
            series: Vec::new(),
            trace: Vec::new(),
            reference_ips,
            capacity: (0..platform.clusters.len()).map(|c| platform.cpu_capacity(c)).collect(),
            views: vec![PolicyView::default(); platform.clusters.len()],
            dirty: true,
            dram_utilisation: 0.0,
            scratch: Scratch::default(),
            config,
        };
        engine.start()?;
        Ok(engine)
    }

    pub(super) fn mem_of(&self, t: usize) -> &MemProfile {
        let th = &self.threads[t];
        &self.workload.tasks[th.task].phases[th.phase].mem
    }

    pub(super) fn start(&mut self) -> Result<(), String> {
        if self.config.trace {
            for c in 0..self.clusters.len() {
                let khz = self.clusters[c].cur_khz;
                for &cpu in &self.platform.clusters[c].cpus {
                    self.trace.push(TraceEvent::CpuFrequency { time_us: 0.0, cpu, freq_khz: khz });
                }
            }
        }
        for c in 0..self.clusters.len() {
            let mut view = PolicyView::default();
            self.fill_view(c, &mut view);
            let decision = self.clusters[c].governor.start(&view);
            self.views[c] = view;
            self.request_freq(c, decision.target_khz);
            self.clusters[c].next_sample_us = decision.next_sample_us as f64;
        }
        for t in 0..self.threads.len() {
            self.enter_phase(t);
        }
        Ok(())
    }
}
