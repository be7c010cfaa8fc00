//! Building a run: the CPU map and run queues, the threads (the workload's, then kernel
//! threads) with their allowed CPUs, the policies with their governors, the clusters, the
//! reference work of periodic phases; then the governors' start and the threads' first phase.

use super::state::{ClusterHw, Cpu, Pmu, Policy, Progress, RanSince, Speed, Thread, ThreadState};
use super::timers::Timers;
use super::{CpuIdle, Engine, Hardware, Outputs, Sched, Scratch, Series, SimConfig};
use crate::counters::CorePmu;
use crate::governor::registry;
use crate::governor::PolicyView;
use crate::kernel::jitter::Jitter;
use crate::kernel::perf_sampling::PerfCounters;
use crate::kernel::{FIRST_KERNEL_TID, FIRST_USER_TID};
use crate::model::cache;
use crate::model::cci::{self, CciPort};
use crate::model::dram::DramState;
use crate::model::energy::ClusterPower;
use crate::model::energy::{EnergyAccount, Sensors};
use crate::model::thermal::ThermalNode;
use crate::platform::Platform;
use crate::random::Rng;
use crate::random::SeedableRng;
use crate::sched::cfs;
use crate::sched::cfs::RunQueue;
use crate::sched::group::Groups;
use crate::sched::pelt::SchedAvg;
use crate::sched::switching::Switcher;
use crate::sched::{CpuMask, WakeKind};
use crate::sched::{Placement, SchedEntity};
use crate::trace::TraceEvent;
use crate::workload::{PhaseKind, SchedAttr, Task, Workload};

impl<'a> Engine<'a> {
    /// A run of `workload` on `platform` with the placement policy `config.scheduler` names.
    pub fn new(platform: &'a Platform, workload: &Workload, config: SimConfig) -> Result<Self, String> {
        let placement = config.scheduler.build(platform, &config.sched_tunables)?;
        Self::with_placement(platform, workload, config, placement)
    }

    /// A run with a placement policy of the caller's (`config.scheduler` only names the
    /// run in its result).
    pub fn with_placement(
        platform: &'a Platform,
        workload: &Workload,
        config: SimConfig,
        placement: Box<dyn Placement>,
    ) -> Result<Self, String> {
        let nclusters = platform.clusters.len();
        if config.governors.len() != nclusters {
            return Err(format!("{} governors given for {} policies", config.governors.len(), nclusters));
        }
        if let Some(needed) = placement.required_governor() {
            let online = |c: &usize| !config.offline_clusters.contains(c);
            if let Some(c) = (0..nclusters).filter(online).find(|&c| config.governors[c].name != needed) {
                return Err(format!(
                    "scheduler '{}' needs the {needed} governor on every cpufreq policy (the kernel runs it only \
                     then); cluster '{}' has '{}': choose governor {needed}",
                    placement.name(),
                    platform.clusters[c].name,
                    config.governors[c].name
                ));
            }
        }
        if config.cpuidle == CpuIdle::ClusterOff && platform.clusters.iter().all(|c| c.cluster_off_us().is_none()) {
            return Err(format!(
                "cpuidle cluster-off: platform {} has no cluster power-down state (its cpuidle has WFI only); use wfi",
                platform.name
            ));
        }
        let switcher = Switcher::new(platform, config.switching)?;
        if let Some(sw) = &switcher {
            check_switcher_config(sw, &config, placement.name())?;
        }
        let mut rng = Rng::seed_from_u64(config.seed);
        let ncpus = platform.ncpus();
        let perf = config.perf_sampling.as_ref().map(|s| PerfCounters::new(s, platform, ncpus)).transpose()?;
        // Logical CPU i runs on core i at start (platform CPU numbers).
        let cluster_of: Vec<usize> = (0..ncpus)
            .map(|cpu| platform.clusters.iter().position(|c| c.cpus.contains(&cpu)).expect("validated"))
            .collect();
        let online: Vec<bool> = (0..ncpus)
            .map(|cpu| {
                !config.offline_clusters.contains(&cluster_of[cpu])
                    && switcher.as_ref().is_none_or(|sw| sw.online_at_boot(cpu))
            })
            .collect();
        let jitter = Jitter::new(&platform.noise, &online, &mut rng);
        if !config.start_temp_c.is_empty()
            && (config.start_temp_c.len() != platform.clusters.len()
                || config.start_temp_c.iter().any(|t| !t.is_finite() || *t < -50.0 || *t > 150.0))
        {
            return Err(format!(
                "start temperatures: give one per cluster ({}), each within -50..=150 °C",
                platform.clusters.len()
            ));
        }
        if !online.iter().any(|&o| o) {
            return Err("every cluster is offline; keep at least one cluster online".into());
        }

        // Tasks: the workload's, then kernel threads.
        let user_tasks = workload.tasks.len();
        let rcuo = super::rcu::rcuo_kthreads(platform, &config.rcu);
        let mut tasks: Vec<Task> = workload.tasks.iter().chain(&config.kernel_threads).chain(&rcuo).cloned().collect();
        let mut threads = Vec::new();
        let mut entities = Vec::new();
        let rr_slice_ticks = crate::sched::rt::rr_slice_ticks(platform.hz, &config.sched_tunables);
        let user_cpus =
            CpuMask::of((0..ncpus).filter(|&c| online[c] && config.cluster.is_none_or(|k| cluster_of[c] == k)));
        for ti in 0..tasks.len() {
            let task = &tasks[ti];
            let kernel = ti >= user_tasks;
            check_phase_affinity(task, ncpus, user_cpus)?;
            let mut allowed = match &task.affinity {
                Some(a) => {
                    if let Some(bad) = a.iter().find(|&&c| c >= ncpus) {
                        return Err(format!(
                            "task '{}': affinity names cpu{bad}, the platform has cpu0-{}",
                            task.name,
                            ncpus - 1
                        ));
                    }
                    CpuMask::of(a.iter().copied())
                }
                None => CpuMask::of(0..ncpus),
            };
            if let (Some(c), false) = (config.cluster, kernel) {
                allowed.retain(|cpu| cluster_of[cpu] == c);
            }
            allowed.retain(|cpu| online[cpu]);
            if allowed.is_empty() {
                return Err(format!(
                    "task '{}' has no online CPU it may run on (check affinity, --cluster and --offline)",
                    task.name
                ));
            }
            check_code_classes(platform, task)?;
            // `ThreadCount::PerAllowedCpu`: one thread per CPU the task may use (a program that starts
            // as many workers as it sees CPUs, `Workload::with_parallel`'s `threads=cpus`).
            let nthreads = tasks[ti].resolve_threads(allowed.count());
            let task = &tasks[ti];
            for _ in 0..nthreads {
                let index = threads.len();
                let tid = if kernel {
                    FIRST_KERNEL_TID + (index - user_thread_count(&tasks[..user_tasks])) as u32
                } else {
                    FIRST_USER_TID + index as u32
                };
                threads.push(Thread {
                    tid,
                    task: ti,
                    kernel,
                    state: ThreadState::Runnable,
                    placed: false,
                    progress: Progress {
                        phase: 0,
                        repeats_left: task.repeat,
                        work_left: 0.0,
                        stolen_us: 0.0,
                        jobs_left: 0,
                        next_release_us: 0.0,
                        runtime_end_us: None,
                    },
                    speed: Speed::default(),
                    pmu: Pmu::default(),
                    peer_lines: 0.0,
                    cpu_time_us: 0.0,
                    cpu_time_in_group_from_us: 0.0,
                    cpu_time_on_us: vec![0.0; ncpus],
                    finish_us: 0.0,
                    migrations: 0,
                    timer_seq: 0,
                });
                entities.push(SchedEntity {
                    allowed,
                    cpu: allowed.first().expect("not empty"),
                    nice: task.nice,
                    weight: cfs::weight_for(task.class, task.nice),
                    vruntime: 0.0,
                    exec_start_us: f64::NEG_INFINITY,
                    kernel,
                    // a user task starts fully loaded (LSK-MP 0027), a kernel thread does not
                    // (children of kthreadd, 0079)
                    uclamp_req: task.uclamp,
                    uclamp: Default::default(), // once the groups are known
                    uclamp_counted: None,
                    class: task.class,
                    rt_arrival: 0,
                    rr_slice_left_ticks: rr_slice_ticks,
                    dl: Default::default(),
                    avg: if kernel { SchedAvg::default() } else { SchedAvg::new_task(0) },
                });
            }
        }
        let live_user_threads = threads.iter().filter(|t| !t.kernel).count();
        if live_user_threads == 0 {
            return Err("the workload has no threads".into());
        }
        let kernel_threads = threads.len() - live_user_threads;
        if kernel_threads > (FIRST_USER_TID - FIRST_KERNEL_TID) as usize {
            return Err(format!("{kernel_threads} kernel threads; at most {}", FIRST_USER_TID - FIRST_KERNEL_TID));
        }

        // One cpufreq policy per cluster (cpufreq-dt on big.LITTLE), its CPUs `related_cpus`;
        // under a switcher, its policies over the virtual OPP table.
        let policy = |cluster: usize, setting: &super::GovernorSetting, cpus: Vec<usize>, opps_khz: Vec<u32>| {
            let ctx = crate::governor::GovernorContext {
                cluster_name: &platform.clusters[cluster].name,
                tick_us: platform.tick_us(),
                model: config.model.as_ref(),
            };
            Ok::<_, String>(Policy {
                cluster,
                cpus,
                busy_cpus: 0,
                governor: registry::build(&setting.name, &setting.tunables, &ctx)?,
                governor_name: setting.name.clone(),
                // the cluster boots at its top OPP, as the bootloader leaves it
                request_khz: platform.clusters[cluster].max_khz(),
                opps_khz,
                pending: None,
                next_sample_us: 0.0,
                last_sample_us: 0.0,
                ran: RanSince::new(threads.len()),
                ports_at_sample: vec![(0, 0); nclusters],
                cci_cycles_at_sample: 0,
            })
        };
        let mut policies = Vec::new();
        match &switcher {
            None => {
                for (c, cl) in platform.clusters.iter().enumerate() {
                    policies.push(policy(c, &config.governors[c], cl.cpus.clone(), cl.freqs_khz())?);
                }
            }
            Some(sw) => {
                for cpus in sw.policies() {
                    let mut p = policy(sw.first, &config.governors[sw.first], cpus, sw.virtual_khz.clone())?;
                    p.request_khz = sw.virtual_of(sw.first, p.request_khz);
                    policies.push(p);
                }
            }
        }
        let mut clusters = Vec::new();
        for (c, cl) in platform.clusters.iter().enumerate() {
            // a switcher's other cluster has no core in use: powered down until a switch
            let is_online = !config.offline_clusters.contains(&c) && switcher.as_ref().is_none_or(|sw| sw.first == c);
            clusters.push(ClusterHw {
                online: is_online,
                powered: is_online,
                // Boot at the top OPP, as the bootloader leaves it; the governor takes over at
                // its start.
                cur_khz: cl.max_khz(),
                cur_opp: cl.opps.len() - 1,
                power: ClusterPower::default(),
                thermal: ThermalNode::at(config.start_temp_c.get(c).copied().unwrap_or(platform.thermal.ambient_c)),
                thermal_cap_khz: cl.max_khz(),
                min_thermal_cap_khz: cl.max_khz(),
                port: cl.cci_port.map(CciPort::new),
                residency_us: vec![0.0; cl.opps.len()],
                khz_us: 0.0,
                transitions: 0,
                power_downs: 0,
                off_us: 0.0,
                offline_us: 0.0,
                off_since_us: 0.0,
            });
        }
        // Every logical CPU has a policy: an offline one its partner's (or the first).
        let policy_of_cpu: Vec<usize> = (0..ncpus)
            .map(|cpu| {
                let partner = switcher.as_ref().and_then(|sw| sw.partner(cpu)).unwrap_or(cpu);
                policies.iter().position(|p| p.cpus.contains(&cpu) || p.cpus.contains(&partner)).unwrap_or(0)
            })
            .collect();

        // Reference work for periodic phases: instructions per µs on the biggest core type (or
        // the workload's calibration CPU) at its top OPP, idle memory, no snoop penalty.
        let reference = match workload.reference_cpu {
            Some(cpu) if cpu >= ncpus => {
                return Err(format!(
                    "workload '{}': calibration CPU{cpu} is not on platform {} (cpu0-{})",
                    workload.name,
                    platform.name,
                    ncpus - 1
                ))
            }
            Some(cpu) => cluster_of[cpu],
            None => (0..nclusters).max_by_key(|&c| platform.cpu_capacity(c)).unwrap_or(0),
        };
        let ref_core = platform.core_type_of(reference);
        let ref_ghz = platform.clusters[reference].max_khz() as f64 / 1e6;
        let ref_l2 = platform.clusters[reference].l2_bytes as f64;
        let miss_ns = cci::unloaded_miss_ns(platform);
        let reference_ips = tasks
            .iter()
            .map(|t| {
                t.phases
                    .iter()
                    .map(|p| {
                        let m = cache::miss_ratios(&p.mem, ref_core, ref_l2, &platform.caches);
                        1000.0 / cache::instr_time(&p.mem, ref_core, ref_ghz, &m, miss_ns).total_ns()
                    })
                    .collect()
            })
            .collect();

        let tick_us = platform.tick_us() as f64;
        let track_util = placement.uses_util() || policies.iter().any(|p| p.governor.reads_util());
        // LSK-MP 0019 counts performance and powersave as single-frequency: load scale 1024
        let load_freq_invariant = (0..nclusters)
            .map(|c| {
                placement.frequency_invariant_load()
                    && !matches!(config.governors[c].name.as_str(), "performance" | "powersave")
            })
            .collect();
        let rt_bandwidth =
            crate::sched::rt::Bandwidth::from_sysctls(&config.sched_tunables, placement.rt_runtime_share())?;
        let dl_used = check_deadline(
            &tasks,
            &threads,
            &entities,
            user_cpus,
            &cluster_of.iter().map(|&c| platform.cpu_capacity(c)).collect::<Vec<_>>(),
            rt_bandwidth,
            placement.as_ref(),
        )?;
        let groups = build_groups(workload, &tasks, &threads, ncpus, placement.kernel(), config.trace)?;
        let uclamp = crate::sched::uclamp::Settings::from_tunables(&config.sched_tunables)?;
        for (t, e) in entities.iter_mut().enumerate() {
            e.uclamp = crate::sched::uclamp::effective(e.uclamp_req, e.is_rt(), groups.uclamp_of(t), &uclamp);
        }
        // `sched_uclamp_used`: a task or a phase asks a clamp, a group writes one, a sysctl moved
        let uclamp_used = entities.iter().any(|e: &SchedEntity| e.uclamp_req.is_set())
            || tasks
                .iter()
                .flat_map(|t| &t.phases)
                .any(|p| matches!(&p.kind, PhaseKind::SetSched(a) if a.util_min.is_some() || a.util_max.is_some()))
            || workload.taskgroups.iter().any(|g| g.uclamp.is_set())
            || uclamp.changes_sysctls();
        let sched = Sched {
            groups,
            track_util,
            load_freq_invariant,
            last_tick_us: 0.0, // boot; the first tick comes a jiffy later
            tick_us,
            cfs: cfs::Tunables::for_cpus(ncpus),
            uclamp_used,
            uclamp,
            user_cpus,
            rr_slice_ticks,
            rt_arrivals: 0,
            rt_fitness: placement.rt_capacity_fitness(),
            rt_bandwidth,
            rt_period_next_us: f64::INFINITY,
            dl_timers: Default::default(),
            dl_used,
            placement,
            rqs: online
                .iter()
                .map(|&on| {
                    let mut rq = RunQueue::new(on);
                    rq.rt.runtime_us = rt_bandwidth.runtime_us;
                    rq.uclamp = crate::sched::uclamp::RqClamps::new(uclamp);
                    rq
                })
                .collect(),
            entities,
            core_of: (0..ncpus).collect(),
            capacity: cluster_of.iter().map(|&c| platform.cpu_capacity(c)).collect(),
            cpus_of_cluster: (0..nclusters).map(|c| (0..ncpus).filter(|&cpu| cluster_of[cpu] == c).collect()).collect(),
            cluster_of,
        };
        let cpus = (0..ncpus)
            .map(|_| Cpu {
                idle_since_sample_us: 0.0,
                was_idle: false,
                busy_us: 0.0,
                wakeups: 0,
                pmu: Pmu::default(),
                pmu_at_sample: CorePmu::default(),
                kernel_burst: None,
                core_off_since_us: None,
                idle_since_us: None,
                idle_next_timer_us: f64::INFINITY,
                idle_history: Default::default(),
                menu: Default::default(),
            })
            .collect();
        let thread_task: Vec<usize> = threads.iter().map(|t| t.task).collect();
        let sync = super::sync::SyncObjects::new(&tasks);
        let rcu = super::rcu::RcuState::new(platform, config.rcu.clone(), &tasks, &thread_task, &sync);
        let mut engine = Engine {
            rcu,
            platform,
            workload_name: workload.name.clone(),
            duration_us: workload.duration_us.map(|d| d as f64),
            rng,
            now_us: 0.0,
            timers: Timers::new(ncpus),
            live_user_threads,
            look_for_deadlock: false,
            threads,
            pools: tasks.iter().map(|t| vec![Default::default(); t.phases.len()]).collect(),
            deferred_preempt: None,
            sync,
            rtapp_marks: super::rtapp_markers::RtappMarks::new(&tasks, &thread_task, config.trace),
            cpus,
            sched,
            jitter,
            perf,
            policy_of_cpu,
            views: vec![PolicyView::default(); policies.len()],
            policies,
            switcher,
            hw: Hardware {
                clusters,
                dram: DramState::default(),
                energy: EnergyAccount::new(nclusters),
                sensors: Sensors::new(platform.sensors.period_us),
                next_thermal_us: platform.thermal.polling_interval_ms as f64 * 1000.0,
                integrated_until_us: 0.0,
            },
            reference_ips,
            dirty: true,
            scratch: Scratch::default(),
            out: Outputs {
                events: 0,
                samples: 0,
                governor_overhead_us: 0.0,
                series: if config.series { Series::Keep(Vec::new()) } else { Series::Off },
                trace: config.trace.then(Vec::new),
                overutilized: None,
                marks: Vec::new(),
                stuck: false,
                deadlock: None,
                cpu_switches: 0,
                prio_changes: Vec::new(),
                rt_throttles: 0,
                group_cpu_us: Vec::new(),
            },
            tasks,
            config,
        };
        engine.start();
        Ok(engine)
    }

    /// The governors' start, then every thread's first phase (new threads are placed as at
    /// fork).
    fn start(&mut self) {
        for p in 0..self.policies.len() {
            let khz = self.policies[p].request_khz;
            for i in 0..self.policies[p].cpus.len() {
                let cpu = self.policies[p].cpus[i];
                self.out.trace(TraceEvent::CpuFrequency { time_us: 0.0, cpu, freq_khz: khz });
            }
        }
        self.trace_sched_boot();
        for p in 0..self.policies.len() {
            let mut view = PolicyView::default();
            self.fill_view(p, &mut view);
            let decision = self.policies[p].governor.start(&view);
            self.views[p] = view;
            self.request_freq(p, decision.target_khz);
            self.policies[p].next_sample_us = decision.next_sample_us as f64;
        }
        // forked threads wait for their `fork` first: a thread's first phase may fork one
        let forked = |e: &Self, t: usize| e.tasks[e.threads[t].task].forked;
        for t in 0..self.threads.len() {
            if forked(self, t) {
                self.threads[t].state = ThreadState::Suspended;
            }
        }
        for t in 0..self.threads.len() {
            if !forked(self, t) {
                self.enter_phase(t, None);
            }
        }
    }

    /// How a thread being made runnable is placed: as at fork when it is created runnable,
    /// else as a wake-up (a thread whose first phase sleeps was forked at the start, ran
    /// for a negligible time and went to sleep).
    pub(super) fn wake_kind(&mut self, t: usize) -> WakeKind {
        let placed_before = std::mem::replace(&mut self.threads[t].placed, true);
        if placed_before || (self.now_us > 0.0 && !self.tasks[self.threads[t].task].forked) {
            WakeKind::Wakeup
        } else {
            WakeKind::Fork
        }
    }
}

/// The run's task groups: every group the workload declares or names and their parents, each
/// thread in its task's (kernel threads in the root group).
fn build_groups(
    workload: &Workload,
    tasks: &[Task],
    threads: &[Thread],
    ncpus: usize,
    kernel: crate::sched::Kernel,
    trace: bool,
) -> Result<Groups, String> {
    let mut shares = std::collections::BTreeMap::new();
    for path in workload.taskgroup_paths() {
        // rt-app and the cgroup tree create every level of a path
        for (i, _) in path.match_indices('/').skip(1).chain([(path.len(), "")]) {
            shares.entry(path[..i].to_string()).or_insert(crate::workload::TASKGROUP_DEFAULT_SHARES);
        }
    }
    for g in &workload.taskgroups {
        shares.insert(g.path.clone(), g.shares);
    }
    let specs: Vec<(String, u64)> = shares.into_iter().collect();
    let mut groups = Groups::new(ncpus, kernel, &specs, threads.len());
    for (t, th) in threads.iter().enumerate() {
        if let Some(path) = &tasks[th.task].taskgroup {
            groups.assign(t, groups.find(path).expect("every named group is built"));
        }
    }
    for spec in workload.taskgroups.iter().filter(|g| g.uclamp.is_set()) {
        if kernel == crate::sched::Kernel::V3_10 {
            return Err(format!(
                "workload '{}': task group {} sets cpu.uclamp.*, which Linux 3.10 lacks (the scheduler's kernel); use \
                 scheduler eas (Linux 5.10) or remove them",
                workload.name, spec.path
            ));
        }
        groups.set_uclamp(groups.find(&spec.path).expect("every declared group is built"), spec.uclamp);
    }
    if trace && groups.is_active() {
        groups.trace_signals();
    }
    Ok(groups)
}

/// A phase's allowed CPUs (`PhaseKind::SetSched`) must exist and leave one the run may use.
/// SCHED_DEADLINE's checks at each DL thread's `sched_setattr` (its start): the placement's
/// kernel has the class (3.14+), the thread's affinity spans the root domain (the workload's
/// CPUs; `__sched_setscheduler`: EPERM otherwise) and its bandwidth is admitted
/// (`sched::deadline::admit`). True if any thread is SCHED_DEADLINE.
fn check_deadline(
    tasks: &[Task],
    threads: &[Thread],
    entities: &[SchedEntity],
    root_domain: CpuMask,
    capacity: &[u32],
    rt: crate::sched::rt::Bandwidth,
    placement: &dyn Placement,
) -> Result<bool, String> {
    use crate::sched::deadline;
    let dl: Vec<usize> = (0..threads.len()).filter(|&t| entities[t].is_dl()).collect();
    let Some(&first) = dl.first() else { return Ok(false) };
    let name = |t: usize| &tasks[threads[t].task].name;
    if placement.kernel() == crate::sched::Kernel::V3_10 {
        return Err(format!(
            "task '{}': SCHED_DEADLINE needs Linux 3.14+ and the '{}' scheduler models Linux 3.10; use --scheduler eas \
             (Linux 5.10)",
            name(first),
            placement.name()
        ));
    }
    if let Some(&t) = dl.iter().find(|&&t| entities[t].allowed != root_domain) {
        return Err(format!(
            "task '{}': a SCHED_DEADLINE task's affinity must span its root domain (cpus {:?}; sched_setattr fails with \
             EPERM otherwise); remove its affinity",
            name(t),
            root_domain.iter().collect::<Vec<_>>()
        ));
    }
    // `dl_bw_capacity` (5.10): the CPUs' capacities when they differ, else 1024 each
    let caps: Vec<u64> = root_domain.iter().map(|c| u64::from(capacity[c])).collect();
    let asym = caps.iter().any(|&c| c != caps[0]);
    let total_capacity = if asym { caps.iter().sum() } else { 1024 * caps.len() as u64 };
    let to_ns = |us: f64| (us * 1000.0).round() as u64;
    let bw_max = rt.enforced().then(|| deadline::to_ratio(to_ns(rt.period_us), to_ns(rt.runtime_us)));
    let bws: Vec<u64> = dl
        .iter()
        .map(|&t| {
            let p = entities[t].class.dl().expect("DL");
            deadline::to_ratio(p.period_ns, p.runtime_ns)
        })
        .collect();
    if let Err((i, total)) = deadline::admit(&bws, bw_max, total_capacity) {
        let scale = (1u64 << deadline::BW_SHIFT) as f64;
        let limit = bw_max.map_or(0.0, |b| b as f64 / scale) * total_capacity as f64 / 1024.0;
        return Err(format!(
            "task '{}': SCHED_DEADLINE admission refused (sched_setattr: EBUSY): its threads' bandwidths would sum to \
             {:.3} CPUs, over {limit:.3} (sched_rt_runtime_us/sched_rt_period_us of the root domain's capacity \
             {total_capacity}); lower a runtime or lengthen a period",
            name(dl[i]),
            total as f64 / scale,
        ));
    }
    Ok(true)
}

fn check_phase_affinity(task: &Task, ncpus: usize, user_cpus: CpuMask) -> Result<(), String> {
    for phase in &task.phases {
        let PhaseKind::SetSched(SchedAttr { cpus: Some(cpus), .. }) = &phase.kind else { continue };
        if let Some(bad) = cpus.iter().find(|&&c| c >= ncpus) {
            return Err(format!(
                "task '{}': a phase's cpus name cpu{bad}, the platform has cpu0-{}",
                task.name,
                ncpus - 1
            ));
        }
        if !CpuMask::of(cpus.iter().copied()).intersects(user_cpus) {
            return Err(format!(
                "task '{}': a phase's cpus {cpus:?} has no online CPU it may run on (check --cluster and --offline)",
                task.name
            ));
        }
    }
    Ok(())
}

/// What a switcher cannot run with: hard affinity to a cluster or hotplugged clusters (the
/// switcher owns which cores are online) and a placement that reads the CPUs' asymmetry (the
/// OS sees one kind of logical CPU).
fn check_switcher_config(sw: &Switcher, config: &SimConfig, placement: &str) -> Result<(), String> {
    let mode = sw.mode.name();
    if config.cluster.is_some() || !config.offline_clusters.is_empty() {
        return Err(format!(
            "switching mode {mode}: the switcher decides which cluster runs; drop --cluster and --offline (limit the \
             frequency instead: the virtual OPPs above the LITTLE range run on big cores)"
        ));
    }
    if !matches!(placement, "pinned" | "smp") {
        return Err(format!(
            "switching mode {mode} with scheduler {placement}: under a switcher the OS sees identical logical CPUs; \
             use pinned or smp"
        ));
    }
    Ok(())
}

/// Threads the tasks run.
fn user_thread_count(tasks: &[Task]) -> usize {
    tasks.iter().map(|t| t.resolved_threads() as usize).sum()
}

/// A phase that declares its instruction mix needs every core type it may meet (a switcher or
/// a migration may move it to any cluster) to describe those classes (`model::code_class`).
fn check_code_classes(platform: &Platform, task: &Task) -> Result<(), String> {
    for (pi, phase) in task.phases.iter().enumerate() {
        let Some(mix) = &phase.mem.mix else { continue };
        for cluster in 0..platform.clusters.len() {
            let core = platform.core_type_of(cluster);
            let classes = core.code_classes.as_ref().ok_or_else(|| {
                format!(
                    "task '{}' phase {pi} declares an instruction mix, but core type '{}' of platform {} has no code_classes; give it one or use cpi",
                    task.name, core.name, platform.name
                )
            })?;
            crate::model::code_class::cpi(classes, mix).map_err(|e| {
                format!(
                    "task '{}' phase {pi} on core type '{}' of platform {}: {e}",
                    task.name, core.name, platform.name
                )
            })?;
        }
    }
    Ok(())
}
