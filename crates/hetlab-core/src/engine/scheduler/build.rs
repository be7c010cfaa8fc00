//! Building a run's scheduler: the scheduler's sysctls checked once, the entities on the CPUs
//! each task may use (`SimConfig::check_for` plans them), the run queues and task groups, and
//! SCHED_DEADLINE's admission.

use super::Eevdf;
use super::{CpuTime, Scheduler, ThreadSched, ThreadState};
use crate::engine::config::SimConfig;
use crate::platform::Platform;
use crate::sched::cfs::{self, RunQueue};
use crate::sched::group::Groups;
use crate::sched::pelt::SchedAvg;
use crate::sched::{deadline, eevdf, rt, uclamp, CpuMask, Kernel, Placement, SchedEntity};
use crate::workload::{PhaseKind, Task, Workload};

/// The scheduler's sysctls of a run (`SimConfig::sched_tunables` over their defaults), each
/// read and checked once here.
#[derive(Debug, Clone, Copy)]
pub struct Sysctls {
    /// A SCHED_RR slice, ticks (`sched_rr_timeslice_ms`).
    pub rr_slice_ticks: u64,
    /// RT throttling (`sched_rt_period_us`, `sched_rt_runtime_us`; RT_RUNTIME_SHARE by kernel).
    pub rt_bandwidth: rt::Bandwidth,
    /// uclamp's sysctls and bucket count.
    pub uclamp: uclamp::Settings,
}

impl Sysctls {
    pub fn check(
        platform: &Platform,
        tunables: &[(String, f64)],
        placement: &dyn Placement,
    ) -> Result<Sysctls, String> {
        Ok(Sysctls {
            rr_slice_ticks: rt::rr_slice_ticks(platform.hz, tunables),
            rt_bandwidth: rt::Bandwidth::from_sysctls(tunables, placement.rt_runtime_share())?,
            uclamp: uclamp::Settings::from_tunables(tunables)?,
        })
    }
}

/// What the scheduler of a run is built from besides the platform and the configuration.
pub struct SchedSetup<'s> {
    pub workload: &'s Workload,
    /// The run's tasks (the workload's, then kernel threads'), and per thread its task, tid and
    /// whether it is a kernel thread.
    pub tasks: &'s [Task],
    pub threads: &'s [(usize, u32, bool)],
    /// Per task: the CPUs its threads may use.
    pub allowed: &'s [CpuMask],
    /// Per logical CPU: online at boot, and its cluster.
    pub online: &'s [bool],
    pub cluster_of: &'s [usize],
    /// The CPUs the workload's threads may be given.
    pub user_cpus: CpuMask,
    pub sysctls: Sysctls,
    /// A governor reads PELT utilisation (schedutil).
    pub governors_read_util: bool,
}

impl<'a> Scheduler<'a> {
    /// The scheduler of a run: every thread's entity on the first CPU it may use, the run
    /// queues of the online CPUs, the task groups, the clamps' use.
    pub fn new(
        platform: &'a Platform,
        config: &SimConfig,
        placement: Box<dyn Placement>,
        setup: SchedSetup,
    ) -> Result<Scheduler<'a>, String> {
        let SchedSetup {
            workload,
            tasks,
            threads,
            allowed,
            online,
            cluster_of,
            user_cpus,
            sysctls,
            governors_read_util,
        } = setup;
        let (ncpus, nclusters) = (platform.ncpus(), platform.clusters.len());
        let eevdf = placement.eevdf_features().map(|features| Eevdf {
            features,
            base_slice_us: features.base_slice_us(ncpus),
            tick_us: platform.tick_us() as f64,
        });
        check_slices(tasks, placement.kernel(), placement.name())?;
        let base_slice_us = eevdf.as_ref().map_or_else(|| eevdf::base_slice_us(ncpus), |e| e.base_slice_us);
        let mut entities: Vec<SchedEntity> = threads
            .iter()
            .map(|&(ti, _, kernel)| entity(&tasks[ti], allowed[ti], kernel, sysctls.rr_slice_ticks, base_slice_us))
            .collect();
        let capacity: Vec<u32> = cluster_of.iter().map(|&c| platform.cpu_capacity(c)).collect();
        let dl_used =
            check_deadline(tasks, threads, &entities, user_cpus, &capacity, sysctls.rt_bandwidth, &*placement)?;
        let groups = build_groups(workload, tasks, threads, ncpus, placement.kernel(), config.trace)?;
        for (t, e) in entities.iter_mut().enumerate() {
            e.uclamp = uclamp::effective(e.uclamp_req, e.is_rt(), groups.uclamp_of(t), &sysctls.uclamp);
        }
        // `sched_uclamp_used`: a task or a phase asks a clamp, a group writes one, a sysctl moved
        let uclamp_used = entities.iter().any(|e: &SchedEntity| e.uclamp_req.is_set())
            || tasks
                .iter()
                .flat_map(|t| &t.phases)
                .any(|p| matches!(&p.kind, PhaseKind::SetSched(a) if a.util_min.is_some() || a.util_max.is_some()))
            || workload.taskgroups.iter().any(|g| g.uclamp.is_set())
            || sysctls.uclamp.changes_sysctls();
        // LSK-MP 0019 counts performance and powersave as single-frequency: load scale 1024
        let load_freq_invariant = (0..nclusters)
            .map(|c| {
                placement.frequency_invariant_load()
                    && !matches!(config.governors[c].name.as_str(), "performance" | "powersave")
            })
            .collect();
        Ok(Scheduler {
            platform,
            track_util: placement.uses_util() || governors_read_util,
            placement_ticks: placement.uses_tick(),
            load_freq_invariant,
            rt_fitness: placement.rt_capacity_fitness(),
            placement,
            rqs: online
                .iter()
                .map(|&on| {
                    let mut rq = RunQueue::new(on);
                    rq.rt.runtime_us = sysctls.rt_bandwidth.runtime_us;
                    rq.uclamp = uclamp::RqClamps::new(sysctls.uclamp);
                    rq
                })
                .collect(),
            threads: threads
                .iter()
                .map(|&(ti, tid, _)| ThreadSched {
                    state: ThreadState::Runnable,
                    tid,
                    forked: tasks[ti].forked,
                    placed: false,
                    migrations: 0,
                    group_time_from_us: 0.0,
                })
                .collect(),
            entities,
            cputime: vec![CpuTime::default(); ncpus],
            core_of: (0..ncpus).collect(),
            cluster_of: cluster_of.to_vec(),
            capacity,
            pressure: vec![0; ncpus],
            cpus_of_cluster: (0..nclusters).map(|c| (0..ncpus).filter(|&cpu| cluster_of[cpu] == c).collect()).collect(),
            cluster_mask: (0..nclusters).map(|c| CpuMask::of((0..ncpus).filter(|&cpu| cluster_of[cpu] == c))).collect(),
            // every cluster boots at its top OPP
            freq_khz: platform.clusters.iter().map(|c| (c.max_khz(), c.max_khz())).collect(),
            last_tick_us: 0.0, // boot; the first tick comes a jiffy later
            tick_us: platform.tick_us() as f64,
            cfs: cfs::Tunables::for_cpus(ncpus),
            eevdf,
            resched: vec![false; ncpus],
            sysctls,
            uclamp_used,
            rt_arrivals: 0,
            rt_waited: false,
            rt_period_next_us: f64::INFINITY,
            dl_timers: Default::default(),
            dl_used,
            user_cpus,
            groups,
            group_cpu_us: Vec::new(),
            deferred_preempt: None,
            moves: Vec::new(),
            group_levels: Vec::new(),
            busy: CpuMask::EMPTY,
            loads_stale: CpuMask::EMPTY,
            online: CpuMask::of((0..ncpus).filter(|&cpu| online[cpu])),
        })
    }
}

/// A thread of `task`: allowed on `allowed`, at its first CPU, its class, clamps and (EEVDF)
/// slice as asked.
fn entity(task: &Task, allowed: CpuMask, kernel: bool, rr_slice_ticks: u64, base_slice_us: f64) -> SchedEntity {
    SchedEntity {
        allowed,
        cpu: allowed.first().expect("not empty"),
        nice: task.nice,
        weight: cfs::weight_for(task.class, task.nice),
        vruntime: 0.0,
        exec_start_us: f64::NEG_INFINITY,
        kernel,
        uclamp_req: task.uclamp,
        uclamp: Default::default(), // once the groups are known
        uclamp_counted: None,
        util_est: Default::default(),
        util_est_counted: None,
        class: task.class,
        rt_arrival: 0,
        rr_slice_left_ticks: rr_slice_ticks,
        dl: Default::default(),
        eevdf: eevdf::Request::new(task.slice_us.map(f64::from), base_slice_us),
        // a user task starts fully loaded (LSK-MP 0027), a kernel thread does not (children
        // of kthreadd, 0079)
        avg: if kernel { SchedAvg::default() } else { SchedAvg::new_task(0) },
    }
}

/// A CFS task's own slice (`sched_attr.sched_runtime`) is EEVDF's (Linux 6.12): a placement
/// of an older kernel, which ignores it, refuses a workload file's `slice_us` (asked for by
/// name, it would silently mean nothing) but runs an rt-app file's `dl-runtime` as rt-app on
/// that kernel would, without it (the reader noted it).
fn check_slices(tasks: &[Task], kernel: Kernel, placement: &str) -> Result<(), String> {
    match tasks.iter().find(|t| t.slice_us.is_some() && t.rtapp.is_none()) {
        Some(t) if !kernel.eevdf() => Err(format!(
            "task '{}': slice_us (sched_attr.sched_runtime of a CFS task) is an EEVDF slice of Linux 6.12, and the \
             '{placement}' scheduler models Linux {}, which ignores it; use --scheduler eevdf or eas-eevdf, or remove it",
            t.name,
            if kernel == Kernel::V3_10 { "3.10" } else { "5.10" }
        )),
        _ => Ok(()),
    }
}

/// The run's task groups: every group the workload declares or names and their parents, each
/// thread in its task's (kernel threads in the root group).
fn build_groups(
    workload: &Workload,
    tasks: &[Task],
    threads: &[(usize, u32, bool)],
    ncpus: usize,
    kernel: Kernel,
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
    for (t, &(ti, _, _)) in threads.iter().enumerate() {
        if let Some(path) = &tasks[ti].taskgroup {
            groups.assign(t, groups.find(path).expect("every named group is built"));
        }
    }
    for spec in workload.taskgroups.iter().filter(|g| g.uclamp.is_set()) {
        if kernel == Kernel::V3_10 {
            return Err(format!(
                "workload '{}': task group {} sets cpu.uclamp.*, which Linux 3.10 lacks (the scheduler's kernel); use \
                 scheduler eas (Linux 5.10) or remove them",
                workload.name, spec.path
            ));
        }
        groups.set_uclamp(groups.find(&spec.path).expect("every declared group is built"), spec.uclamp);
    }
    if kernel.eevdf() && groups.is_active() {
        return Err(format!(
            "workload '{}': task groups under the EEVDF schedulers (Linux 6.12) are not modelled yet (the group \
             entities' lag and deadlines); use scheduler eas or smp, or remove the task groups",
            workload.name
        ));
    }
    if trace && groups.is_active() {
        groups.trace_signals();
    }
    Ok(groups)
}

/// SCHED_DEADLINE's checks at each DL thread's `sched_setattr` (its start): the placement's
/// kernel has the class (3.14+), the thread's affinity spans the root domain (the workload's
/// CPUs; `__sched_setscheduler`: EPERM otherwise) and its bandwidth is admitted
/// (`sched::deadline::admit`). True if any thread is SCHED_DEADLINE.
fn check_deadline(
    tasks: &[Task],
    threads: &[(usize, u32, bool)],
    entities: &[SchedEntity],
    root_domain: CpuMask,
    capacity: &[u32],
    rt: rt::Bandwidth,
    placement: &dyn Placement,
) -> Result<bool, String> {
    let dl: Vec<usize> = (0..threads.len()).filter(|&t| entities[t].is_dl()).collect();
    let Some(&first) = dl.first() else { return Ok(false) };
    let name = |t: usize| &tasks[threads[t].0].name;
    if placement.kernel() == Kernel::V3_10 {
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
