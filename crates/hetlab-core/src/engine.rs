//! The event-driven engine. Time jumps from event to event (thread finish/wake, phase change,
//! governor sample, time-slice end, DVFS transition, OS jitter, DRAM noise epoch, thermal
//! poll); between events every running thread progresses at the rate the memory model gives
//! for the current frequencies and power states, and energy, temperature, PELT and the PMCs are
//! integrated in closed form.

use crate::governor::{registry, CciPortSample, CorePmu, CpuSample, Governor, PolicyView, ThreadSample};
use crate::memory::{self, InstrTime, MissRatios};
use crate::platform::Platform;
use crate::power;
use crate::result::*;
use crate::sched::{self, SchedPolicy};
use crate::trace::{PrevState, TraceEvent, TraceThreads, CPU_IDLE_EXIT};
use crate::tree::AntiSnoopModel;
use crate::workload::{MemProfile, PhaseKind, Workload};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// PELT: y^32 = 1/2 with 1024 µs periods (gov §5); the continuous equivalent decays with
/// time constant 32 · 1024 µs / ln 2.
const PELT_TAU_US: f64 = 32.0 * 1024.0 / std::f64::consts::LN_2;

/// CFS defaults: sched_latency 6 ms and min_granularity 0.75 ms, scaled by 1 + log2(ncpus)
/// (SCHED_TUNABLESCALING_LOG, at most 8 CPUs counted) — kernel/sched/fair.c.
const SCHED_LATENCY_US: f64 = 6000.0;
const SCHED_MIN_GRANULARITY_US: f64 = 750.0;

/// How a cluster's frequency is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct GovernorSetting {
    pub name: String,
    pub tunables: Vec<(String, f64)>,
}

/// Idle states the simulated cpuidle may enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuIdle {
    /// WFI only: idle CPUs are clock-gated, clusters stay powered and are snooped. The seed
    /// paper's board behaves this way (its idle cluster is snooped), so this is the default.
    Wfi,
    /// WFI, plus cluster power-down (the big_little cpuidle driver's C1) when every CPU of a
    /// cluster is idle and the next known wake-up is further away than the target residency.
    /// A powered-down cluster leaks nothing and its CCI port is disabled: it is not snooped.
    ClusterOff,
}

impl CpuIdle {
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "wfi" => Ok(CpuIdle::Wfi),
            "cluster-off" => Ok(CpuIdle::ClusterOff),
            other => Err(format!("unknown cpuidle policy '{other}'; known: wfi, cluster-off")),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SimConfig {
    pub seed: u64,
    pub scheduler: SchedPolicy,
    /// One per cluster, in platform order.
    pub governors: Vec<GovernorSetting>,
    pub model: Option<AntiSnoopModel>,
    /// Clusters whose CPUs are hotplugged off (cluster powered down, CCI port disabled).
    pub offline_clusters: Vec<usize>,
    /// Restrict every task to this cluster's CPUs (like `taskset`).
    pub cluster: Option<usize>,
    /// Which idle states cpuidle may use.
    pub cpuidle: CpuIdle,
    pub trace: bool,
    /// Stop after this much simulated time even if tasks remain.
    pub time_limit_s: f64,
}

impl SimConfig {
    /// Resolves a governor name for every cluster. Besides the governors, two of the seed
    /// paper's comparison points are named configurations: `all-max` (performance everywhere)
    /// and `idle-min` (the active cluster at max, the others at min). `fixed_khz` pins a
    /// cluster's frequency as the userspace governor would (`--freq`).
    pub fn governor_plan(
        platform: &Platform,
        governor: &str,
        tunables: &[(String, f64)],
        active_cluster: Option<usize>,
        fixed_khz: &[(usize, u32)],
    ) -> Result<Vec<GovernorSetting>, String> {
        let n = platform.clusters.len();
        let mut plan: Vec<GovernorSetting> = match governor {
            "all-max" => (0..n).map(|_| GovernorSetting { name: "performance".into(), tunables: vec![] }).collect(),
            "idle-min" => {
                let active = active_cluster.ok_or("governor idle-min needs --cluster to know which cluster is active")?;
                (0..n)
                    .map(|c| GovernorSetting {
                        name: if c == active { "performance" } else { "powersave" }.into(),
                        tunables: vec![],
                    })
                    .collect()
            }
            name => (0..n).map(|_| GovernorSetting { name: name.into(), tunables: tunables.to_vec() }).collect(),
        };
        for &(c, khz) in fixed_khz {
            let cluster = &platform.clusters[c];
            if !cluster.opps.iter().any(|o| o[0] == khz) {
                return Err(format!(
                    "--freq {}={khz}: not an OPP of cluster {}; available kHz: {}",
                    cluster.name,
                    cluster.name,
                    cluster.freqs_khz().iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            plan[c] = GovernorSetting { name: "userspace".into(), tunables: vec![("setspeed_khz".into(), khz as f64)] };
        }
        Ok(plan)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ThreadState {
    Runnable,
    Running,
    Sleeping { wake_us: f64 },
    Done,
}

#[derive(Debug, Clone, Copy, Default)]
struct Pmu {
    cycles: f64,
    inst: f64,
    l2_refill: f64,
    bus_access: f64,
    mem_access: f64,
}

/// Nearest integer of a non-negative counter value (inlined; `f64::round` is a libm call).
#[inline]
fn count(x: f64) -> u64 {
    (x + 0.5) as u64
}

impl Pmu {
    fn to_counts(self) -> CorePmu {
        CorePmu {
            cpu_cycles: count(self.cycles),
            inst_retired: count(self.inst),
            l2d_cache_refill: count(self.l2_refill),
            bus_access: count(self.bus_access),
            mem_access: count(self.mem_access),
        }
    }
    fn delta(now: CorePmu, before: CorePmu) -> CorePmu {
        CorePmu {
            cpu_cycles: now.cpu_cycles - before.cpu_cycles,
            inst_retired: now.inst_retired - before.inst_retired,
            l2d_cache_refill: now.l2d_cache_refill - before.l2d_cache_refill,
            bus_access: now.bus_access - before.bus_access,
            mem_access: now.mem_access - before.mem_access,
        }
    }
}

struct Thread {
    tid: u32,
    task: usize,
    allowed: Vec<usize>,
    /// For `pinned`: the one CPU it runs on.
    home_cpu: usize,
    cpu: usize,
    state: ThreadState,
    phase: usize,
    repeats_left: u32,
    /// Instructions left in the current job.
    work_left: f64,
    /// Time the kernel took from this thread (OS jitter) that it has not yet paid back, µs.
    stolen_us: f64,
    /// Periodic phases: jobs left and the next release time.
    jobs_left: u64,
    next_release_us: f64,
    // Rates while running, refreshed by `recompute`.
    instr_per_us: f64,
    stall_share: f64,
    refills_per_instr: f64,
    bus_per_instr: f64,
    refs_per_instr: f64,
    miss_latency_ns: f64,
    cached_misses: Option<(usize, f64, MissRatios)>,
    pmu: Pmu,
    cpu_time_us: f64,
    finish_us: f64,
    migrations: u64,
    util_avg: f64,
}

struct Cpu {
    cluster: usize,
    online: bool,
    current: Option<usize>,
    queue: VecDeque<usize>,
    slice_end_us: f64,
    next_kernel_wakeup_us: f64,
    idle_since_sample_us: f64,
    was_idle: bool,
    util_avg: f64,
    busy_us: f64,
    pmu: Pmu,
    pmu_at_sample: CorePmu,
}

struct ClusterRt {
    governor: Box<dyn Governor>,
    governor_name: String,
    opps_khz: Vec<u32>,
    cur_khz: u32,
    /// Index of `cur_khz` in `opps_khz`.
    cur_opp: usize,
    pending: Option<(f64, u32)>,
    next_sample_us: f64,
    last_sample_us: f64,
    thermal_cap_khz: u32,
    min_cap_khz: u32,
    temp_c: f64,
    peak_temp_c: f64,
    online: bool,
    /// Online and not in cluster power-down.
    powered: bool,
    power_mw: f64,
    dynamic_mj: f64,
    static_mj: f64,
    static_mw: f64,
    residency_us: Vec<f64>,
    khz_us: f64,
    transitions: u64,
    /// Cluster power-down/up cycles (cpuidle C1).
    power_downs: u64,
    // CCI port of this cluster.
    port_reads: f64,
    port_stalls: f64,
    port_read_per_us: f64,
    port_stall_per_us: f64,
    // Snapshots at this cluster's previous sample.
    thread_pmu_at_sample: Vec<CorePmu>,
    ports_at_sample: Vec<(u64, u64)>,
    cci_cycles_at_sample: u64,
}

pub struct Engine<'a> {
    platform: &'a Platform,
    workload: &'a Workload,
    config: SimConfig,
    rng: ChaCha8Rng,
    now_us: f64,
    threads: Vec<Thread>,
    cpus: Vec<Cpu>,
    clusters: Vec<ClusterRt>,
    dram_noise: f64,
    next_dram_noise_us: f64,
    next_thermal_us: f64,
    /// Next reading of the on-board power sensors, µs.
    next_sensor_us: f64,
    /// The seed paper's energy: sensor power read every period, times the period, mJ.
    sensor_readings_mj: f64,
    dram_lines: f64,
    dram_line_per_us: f64,
    dram_mj: f64,
    /// Time up to which `flush` has integrated the cluster and DRAM quantities, µs.
    integrated_until_us: f64,
    events: u64,
    samples: u64,
    /// CPU time spent by governors reading PMCs, µs.
    governor_overhead_us: f64,
    series: Vec<SampleRow>,
    trace: Vec<TraceEvent>,
    /// Reference-work conversion for periodic phases: instructions per µs of reference work.
    reference_ips: Vec<Vec<f64>>,
    /// CPU capacity per cluster (0..=1024).
    capacity: Vec<u32>,
    /// Governor views, reused between samples.
    views: Vec<PolicyView>,
    /// Something changed that affects rates or power since the last `recompute`.
    dirty: bool,
    /// DRAM utilisation found by the last `recompute` (warm start of its fixed point).
    dram_utilisation: f64,
    scratch: Scratch,
}

/// Buffers `recompute` reuses instead of allocating at every event.
#[derive(Default)]
struct Scratch {
    snoop_ns: Vec<f64>,
    /// (cpu, thread) of every running thread.
    running: Vec<(usize, usize)>,
    ws_per_cluster: Vec<f64>,
    occupancy: Vec<f64>,
}

/// Runs one simulation.
pub fn simulate(platform: &Platform, workload: &Workload, config: SimConfig) -> Result<RunResult, String> {
    Engine::new(platform, workload, config)?.run()
}

fn exp_sample(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    -mean * u.ln()
}

fn normal_sample(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

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
                        return Err(format!("task '{}': affinity names cpu{bad}, the platform has cpu0-{}", task.name, ncpus - 1));
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
                return Err(format!("task '{}' has no online CPU it may run on (check affinity, --cluster and --offline)", task.name));
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
            let governor = registry::build(&setting.name, &cl.name, &setting.tunables, config.model.as_ref())?;
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

    fn mem_of(&self, t: usize) -> &MemProfile {
        let th = &self.threads[t];
        &self.workload.tasks[th.task].phases[th.phase].mem
    }

    // ---- start-up -------------------------------------------------------------------------

    fn start(&mut self) -> Result<(), String> {
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

    // ---- the loop ---------------------------------------------------------------------------

    pub fn run(mut self) -> Result<RunResult, String> {
        let limit_us = self.config.time_limit_s * 1e6;
        self.recompute();
        let mut completed = true;
        while self.threads.iter().any(|t| t.state != ThreadState::Done) {
            let next = self.next_event_us();
            if next > limit_us {
                self.advance(limit_us);
                completed = false;
                break;
            }
            self.advance(next);
            self.handle_events();
            if self.dirty {
                self.recompute();
            }
            self.events += 1;
        }
        Ok(self.finish(completed))
    }

    fn next_event_us(&self) -> f64 {
        let mut next = f64::INFINITY;
        for (c, cl) in self.clusters.iter().enumerate() {
            // An idle policy samples at its next wake-up instead (see `handle_events`).
            if self.policy_busy(c) {
                next = next.min(cl.next_sample_us);
            }
            if let Some((t, _)) = cl.pending {
                next = next.min(t);
            }
        }
        for cpu in &self.cpus {
            if !cpu.online {
                continue;
            }
            next = next.min(cpu.next_kernel_wakeup_us);
            if let Some(t) = cpu.current {
                let th = &self.threads[t];
                if th.instr_per_us > 0.0 {
                    next = next.min(self.now_us + th.stolen_us + th.work_left / th.instr_per_us);
                }
                if !cpu.queue.is_empty() {
                    next = next.min(cpu.slice_end_us);
                }
            }
        }
        for th in &self.threads {
            if let ThreadState::Sleeping { wake_us } = th.state {
                next = next.min(wake_us);
            }
        }
        next = next.min(self.next_dram_noise_us).min(self.next_thermal_us).min(self.next_sensor_us);
        next.max(self.now_us)
    }

    /// Integrates everything from `now` to `to` with the rates of the last `recompute`.
    fn advance(&mut self, to_us: f64) {
        let dt = to_us - self.now_us;
        if dt <= 0.0 {
            return;
        }
        let decay = (-dt / PELT_TAU_US).exp();
        for cpu_id in 0..self.cpus.len() {
            let cpu = &mut self.cpus[cpu_id];
            if !cpu.online {
                continue;
            }
            let cl = &self.clusters[cpu.cluster];
            let cluster = &self.platform.clusters[cpu.cluster];
            let freq_scale = cl.cur_khz as f64 / cluster.max_khz() as f64;
            let cap_scale = self.capacity[cpu.cluster] as f64 / 1024.0;
            let busy = cpu.current.is_some();
            if busy {
                cpu.busy_us += dt;
                cpu.pmu.cycles += dt * cl.cur_khz as f64 / 1000.0;
            } else {
                cpu.idle_since_sample_us += dt;
                cpu.was_idle = true;
            }
            // PELT, frequency- and capacity-invariant (running time scaled by f/fmax, cap/1024).
            let running = if busy { 1024.0 * freq_scale * cap_scale } else { 0.0 };
            cpu.util_avg = cpu.util_avg * decay + running * (1.0 - decay);
            if let Some(t) = cpu.current {
                let th = &mut self.threads[t];
                {
                    let stolen = th.stolen_us.min(dt);
                    th.stolen_us -= stolen;
                    let run_us = dt - stolen;
                    let instr = (th.instr_per_us * run_us).min(th.work_left);
                    th.work_left -= instr;
                    th.cpu_time_us += run_us;
                    let cycles = run_us * cl.cur_khz as f64 / 1000.0;
                    let (refills, bus, refs) = (instr * th.refills_per_instr, instr * th.bus_per_instr, instr * th.refs_per_instr);
                    th.pmu.cycles += cycles;
                    for p in [&mut th.pmu, &mut cpu.pmu] {
                        p.inst += instr;
                        p.l2_refill += refills;
                        p.bus_access += bus;
                        p.mem_access += refs;
                    }
                    th.util_avg = th.util_avg * decay + 1024.0 * freq_scale * cap_scale * (1.0 - decay);
                }
            }
        }
        for th in self.threads.iter_mut().filter(|t| t.state != ThreadState::Running) {
            th.util_avg *= decay;
        }
        self.now_us = to_us;
    }

    /// Integrates the per-cluster and DRAM quantities (energy, temperature, residency, CCI
    /// counters) up to `now`. Their rates only change in `recompute` and `set_freq`, so they
    /// are integrated lazily, right before a change or a read, instead of at every event.
    fn flush(&mut self) {
        let dt = self.now_us - self.integrated_until_us;
        if dt <= 0.0 {
            return;
        }
        let dt_s = dt * 1e-6;
        for (c, cl) in self.clusters.iter_mut().enumerate() {
            let cluster = &self.platform.clusters[c];
            cl.dynamic_mj += (cl.power_mw - cl.static_mw) * dt_s;
            cl.static_mj += cl.static_mw * dt_s;
            cl.residency_us[cl.cur_opp] += dt;
            cl.khz_us += cl.cur_khz as f64 * dt;
            cl.temp_c = power::rc_step(cl.temp_c, self.platform.thermal.ambient_c, cl.power_mw, cluster, dt_s);
            cl.peak_temp_c = cl.peak_temp_c.max(cl.temp_c);
            cl.port_reads += cl.port_read_per_us * dt;
            cl.port_stalls += cl.port_stall_per_us * dt;
        }
        let dram = &self.platform.dram;
        self.dram_lines += self.dram_line_per_us * dt;
        self.dram_mj += (dram.background_power_mw + self.dram_line_per_us * 1e6 * dram.energy_per_line_nj * 1e-6) * dt_s;
        self.integrated_until_us = self.now_us;
    }

    /// Power the on-board sensors see now (CPU clusters and DRAM rails), mW.
    fn sensor_power_mw(&self) -> f64 {
        let dram = &self.platform.dram;
        self.clusters.iter().map(|c| c.power_mw).sum::<f64>()
            + dram.background_power_mw
            + self.dram_line_per_us * 1e6 * dram.energy_per_line_nj * 1e-6
    }

    /// One reading of the seed paper's method (§5.2): the sensors' power times the reading
    /// period is added to the energy accumulator.
    fn read_sensors(&mut self) {
        self.sensor_readings_mj += self.sensor_power_mw() * self.platform.sensors.period_us as f64 * 1e-6;
    }

    /// CCI cycle counter at `now` (the CCI clock is fixed).
    fn cci_cycles(&self) -> u64 {
        count(self.now_us * self.platform.cci.clock_khz as f64 / 1000.0)
    }

    fn handle_events(&mut self) {
        let now = self.now_us;
        // Tolerance for completions computed by division.
        let eps = 1e-6;
        for c in 0..self.clusters.len() {
            if let Some((t, khz)) = self.clusters[c].pending {
                if t <= now + eps {
                    self.set_freq(c, khz);
                }
            }
        }
        if self.next_thermal_us <= now + eps {
            self.thermal_poll();
            self.dirty = true; // leakage follows the new temperature
            self.next_thermal_us = now + self.platform.thermal.polling_interval_ms as f64 * 1000.0;
        }
        if self.next_sensor_us <= now + eps {
            self.read_sensors();
            self.next_sensor_us += self.platform.sensors.period_us as f64;
        }
        if self.next_dram_noise_us <= now + eps {
            self.dram_noise = (self.platform.noise.dram_latency_sigma * normal_sample(&mut self.rng)).exp();
            self.dirty = true;
            self.next_dram_noise_us = now + self.platform.noise.dram_noise_period_us as f64;
        }
        for cpu in 0..self.cpus.len() {
            if !self.cpus[cpu].online {
                continue;
            }
            if self.cpus[cpu].next_kernel_wakeup_us <= now + eps {
                self.kernel_jitter(cpu);
            }
        }
        // Thread completions (running threads whose job is done).
        for cpu in 0..self.cpus.len() {
            if let Some(t) = self.cpus[cpu].current {
                let th = &self.threads[t];
                if th.stolen_us <= eps && (th.work_left <= th.instr_per_us * eps || th.work_left <= 1e-9) {
                    self.threads[t].work_left = 0.0;
                    self.job_done(t);
                }
            }
        }
        // Wake-ups.
        for t in 0..self.threads.len() {
            if let ThreadState::Sleeping { wake_us } = self.threads[t].state {
                if wake_us <= now + eps {
                    self.wake(t, None);
                }
            }
        }
        // Time-slice ends.
        for cpu in 0..self.cpus.len() {
            if self.cpus[cpu].current.is_some() && !self.cpus[cpu].queue.is_empty() && self.cpus[cpu].slice_end_us <= now + eps {
                self.preempt(cpu);
            }
        }
        // Governor samples. Since Linux 4.6 a governor samples from the scheduler's
        // update_util hook, so a policy whose CPUs stayed idle (no tick, no enqueue) is not
        // sampled until one of them wakes up (`wake_policy`).
        for c in 0..self.clusters.len() {
            if self.clusters[c].next_sample_us <= now + eps && self.policy_busy(c) {
                self.governor_sample(c);
            }
        }
    }

    // ---- threads and scheduling -------------------------------------------------------------

    /// Sets the thread up for its current phase (or finishes it).
    fn enter_phase(&mut self, t: usize) {
        loop {
            let th = &self.threads[t];
            let task = &self.workload.tasks[th.task];
            if th.phase >= task.phases.len() {
                let th = &mut self.threads[t];
                th.repeats_left = th.repeats_left.saturating_sub(1);
                if th.repeats_left == 0 {
                    self.exit_thread(t);
                    return;
                }
                th.phase = 0;
                continue;
            }
            let kind = task.phases[th.phase].kind.clone();
            let ips = self.reference_ips[th.task][th.phase];
            match kind {
                PhaseKind::Compute { instructions } => {
                    self.threads[t].work_left = instructions;
                    self.make_runnable(t);
                }
                PhaseKind::Sleep { duration_us } => {
                    self.sleep_until(t, self.now_us + duration_us as f64);
                }
                PhaseKind::Periodic { run_us, count, period_us } => {
                    // Periodic threads start at a random phase within their period, as
                    // independent tasks on a real system do.
                    let offset_us = if period_us > 0 { self.rng.gen_range(0.0..period_us as f64) } else { 0.0 };
                    let th = &mut self.threads[t];
                    th.jobs_left = count;
                    th.next_release_us = self.now_us + offset_us;
                    th.work_left = run_us * ips;
                    if offset_us > 0.0 {
                        self.sleep_until(t, self.now_us + offset_us);
                    } else {
                        self.make_runnable(t);
                    }
                }
            }
            return;
        }
    }

    fn job_done(&mut self, t: usize) {
        let th = &self.threads[t];
        let phase = &self.workload.tasks[th.task].phases[th.phase];
        if let PhaseKind::Periodic { run_us, period_us, .. } = phase.kind {
            let ips = self.reference_ips[th.task][th.phase];
            let th = &mut self.threads[t];
            th.jobs_left -= 1;
            if th.jobs_left > 0 {
                th.next_release_us += period_us as f64;
                th.work_left = run_us * ips;
                if th.next_release_us > self.now_us {
                    let wake = th.next_release_us;
                    self.sleep_until(t, wake);
                }
                // else: overrun, the next job starts at once on this CPU
                return;
            }
        }
        self.threads[t].phase += 1;
        self.enter_phase(t);
    }

    fn make_runnable(&mut self, t: usize) {
        match self.threads[t].state {
            ThreadState::Running => {} // continues on its CPU
            _ => self.wake(t, None),
        }
    }

    fn sleep_until(&mut self, t: usize, wake_us: f64) {
        if self.threads[t].state == ThreadState::Running {
            let cpu = self.threads[t].cpu;
            self.threads[t].state = ThreadState::Sleeping { wake_us };
            self.switch_out(cpu, PrevState::Sleeping);
        } else {
            self.threads[t].state = ThreadState::Sleeping { wake_us };
        }
    }

    fn exit_thread(&mut self, t: usize) {
        self.threads[t].finish_us = self.now_us;
        if self.threads[t].state == ThreadState::Running {
            let cpu = self.threads[t].cpu;
            self.threads[t].state = ThreadState::Done;
            self.switch_out(cpu, PrevState::Dead);
        } else {
            self.threads[t].state = ThreadState::Done;
        }
    }

    fn wake(&mut self, t: usize, waker_cpu: Option<usize>) {
        let target = match self.config.scheduler {
            SchedPolicy::Pinned => self.threads[t].home_cpu,
            SchedPolicy::Smp => {
                let loads: Vec<(usize, usize)> = self.threads[t]
                    .allowed
                    .iter()
                    .map(|&c| (c, self.cpus[c].queue.len() + self.cpus[c].current.is_some() as usize))
                    .collect();
                sched::select_cpu_smp(self.threads[t].cpu, &loads)
            }
        };
        if target != self.threads[t].cpu && self.threads[t].cpu_time_us > 0.0 {
            self.threads[t].migrations += 1;
        }
        self.threads[t].cpu = target;
        self.threads[t].state = ThreadState::Runnable;
        if self.config.trace {
            let tid = self.threads[t].tid;
            self.trace.push(TraceEvent::SchedWaking { time_us: self.now_us, waker_cpu: waker_cpu.unwrap_or(target), tid, target_cpu: target });
        }
        if self.cpus[target].current.is_none() {
            self.switch_in(target, t, None);
        } else {
            self.cpus[target].queue.push_back(t);
        }
    }

    fn slice_us(&self, cpu: usize) -> f64 {
        let nr = 1 + self.cpus[cpu].queue.len();
        let factor = 1.0 + (self.cpus.len().min(8) as f64).log2().floor();
        (SCHED_LATENCY_US * factor / nr as f64).max(SCHED_MIN_GRANULARITY_US * factor)
    }

    /// Puts `t` on `cpu`, which must have nothing running; `prev` says who left.
    fn switch_in(&mut self, cpu: usize, t: usize, prev: Option<(u32, PrevState)>) {
        if prev.is_none() {
            let exit_us = self.power_up(self.cpus[cpu].cluster);
            self.threads[t].stolen_us += exit_us;
            self.wake_policy(self.cpus[cpu].cluster);
        }
        if self.config.trace {
            if prev.is_none() {
                self.trace_idle(cpu, CPU_IDLE_EXIT);
            }
            let (prev_tid, prev_state) = prev.unwrap_or((0, PrevState::Runnable));
            self.trace.push(TraceEvent::SchedSwitch { time_us: self.now_us, cpu, prev_tid, prev_state, next_tid: self.threads[t].tid });
        }
        self.dirty = true;
        self.cpus[cpu].current = Some(t);
        self.threads[t].state = ThreadState::Running;
        self.threads[t].cpu = cpu;
        self.cpus[cpu].slice_end_us = self.now_us + self.slice_us(cpu);
    }

    /// The current thread of `cpu` leaves it (already marked sleeping/done); run the next one.
    fn switch_out(&mut self, cpu: usize, state: PrevState) {
        self.dirty = true;
        let t = self.cpus[cpu].current.take().expect("a thread was running");
        let prev = (self.threads[t].tid, state);
        if let Some(next) = self.next_for(cpu) {
            self.switch_in(cpu, next, Some(prev));
        } else {
            if self.config.trace {
                self.trace.push(TraceEvent::SchedSwitch { time_us: self.now_us, cpu, prev_tid: prev.0, prev_state: prev.1, next_tid: 0 });
                self.trace_idle(cpu, 0);
            }
            self.maybe_power_down(self.cpus[cpu].cluster, self.now_us);
        }
    }

    /// Next thread for a CPU: its own queue, else (smp) pull from the busiest CPU.
    fn next_for(&mut self, cpu: usize) -> Option<usize> {
        if let Some(t) = self.cpus[cpu].queue.pop_front() {
            return Some(t);
        }
        if self.config.scheduler != SchedPolicy::Smp {
            return None;
        }
        // New-idle balance: pull a waiting thread allowed here from the CPU with the most waiting.
        let allowed_here = |engine: &Self, t: usize| engine.threads[t].allowed.contains(&cpu);
        let mut best: Option<(usize, usize)> = None; // (cpu, position in its queue)
        for (other, o) in self.cpus.iter().enumerate() {
            if other == cpu || best.is_some_and(|(b, _)| self.cpus[b].queue.len() >= o.queue.len()) {
                continue;
            }
            if let Some(pos) = o.queue.iter().position(|&t| allowed_here(self, t)) {
                best = Some((other, pos));
            }
        }
        let (from, pos) = best?;
        let t = self.cpus[from].queue.remove(pos)?;
        self.threads[t].migrations += 1;
        Some(t)
    }

    fn preempt(&mut self, cpu: usize) {
        let t = self.cpus[cpu].current.take().expect("running");
        self.threads[t].state = ThreadState::Runnable;
        self.cpus[cpu].queue.push_back(t);
        let next = self.cpus[cpu].queue.pop_front().expect("queue not empty");
        let prev = (self.threads[t].tid, PrevState::Runnable);
        self.switch_in(cpu, next, Some(prev));
    }

    /// OS jitter: a short burst of kernel work (timers, RCU, vmstat) on `cpu`. Bursts are tens
    /// of µs against 10 ms samples, so they are charged as stolen time at once rather than
    /// simulated as two events: the running thread needs that much longer; an idle CPU is
    /// busy for the burst (load, PELT, cycles, energy).
    fn kernel_jitter(&mut self, cpu: usize) {
        let exit_us = self.power_up(self.cpus[cpu].cluster);
        self.wake_policy(self.cpus[cpu].cluster);
        let noise = &self.platform.noise;
        let busy_us = exp_sample(&mut self.rng, noise.kernel_wakeup_mean_busy_us as f64) + exit_us;
        let gap_us = exp_sample(&mut self.rng, noise.kernel_wakeup_mean_interval_us as f64);
        self.cpus[cpu].next_kernel_wakeup_us = self.now_us + busy_us + gap_us;
        self.charge_kernel_time(cpu, busy_us);
    }

    /// `busy_us` of kernel work on `cpu` starting now, charged at once as stolen time (see
    /// `kernel_jitter`): the running thread needs that much longer; an idle CPU is busy for it
    /// (load, PELT, cycles, energy).
    fn charge_kernel_time(&mut self, cpu: usize, busy_us: f64) {
        let now = self.now_us;
        let c = self.cpus[cpu].cluster;
        let khz = self.clusters[c].cur_khz;
        let st = &mut self.cpus[cpu];
        st.pmu.cycles += busy_us * khz as f64 / 1000.0;
        match st.current {
            Some(t) => {
                self.threads[t].stolen_us += busy_us;
                st.slice_end_us += busy_us;
            }
            None => {
                st.busy_us += busy_us;
                st.idle_since_sample_us -= busy_us;
                let cluster = &self.platform.clusters[c];
                let scale = khz as f64 / cluster.max_khz() as f64 * self.capacity[c] as f64 / 1024.0;
                st.util_avg += (1024.0 * scale - st.util_avg) * (1.0 - (-busy_us / PELT_TAU_US).exp());
                let mw = power::core_dynamic_mw(self.platform.core_type_of(c), cluster.voltage_v(khz), khz, 1.0);
                self.clusters[c].dynamic_mj += mw * busy_us * 1e-6;
                if self.config.trace {
                    self.trace.push(TraceEvent::CpuIdle { time_us: now, cpu, state: CPU_IDLE_EXIT });
                    self.trace.push(TraceEvent::CpuIdle { time_us: now + busy_us, cpu, state: 0 });
                }
                self.maybe_power_down(c, now + busy_us);
            }
        }
    }

    /// Cluster power-down (`CpuIdle::ClusterOff`): when every CPU of `c` is idle from
    /// `idle_from_us` on and the next known wake-up (kernel timers, sleeping threads' timers)
    /// is further than the target residency, cpuidle powers the cluster down.
    fn maybe_power_down(&mut self, c: usize, idle_from_us: f64) {
        if self.config.cpuidle != CpuIdle::ClusterOff || !self.clusters[c].powered {
            return;
        }
        let cluster = &self.platform.clusters[c];
        if cluster.cpus.iter().any(|&cpu| self.cpus[cpu].current.is_some()) {
            return;
        }
        let mut next_wake = cluster.cpus.iter().map(|&cpu| self.cpus[cpu].next_kernel_wakeup_us).fold(f64::INFINITY, f64::min);
        for th in &self.threads {
            if let ThreadState::Sleeping { wake_us } = th.state {
                if cluster.cpus.contains(&th.cpu) {
                    next_wake = next_wake.min(wake_us);
                }
            }
        }
        if next_wake - idle_from_us >= cluster.cluster_off_target_residency_us as f64 {
            self.flush();
            self.clusters[c].powered = false;
            self.dirty = true;
            if self.config.trace {
                for &cpu in &cluster.cpus {
                    self.trace.push(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state: 1 });
                }
            }
        }
    }

    /// Powers cluster `c` up if cpuidle had powered it down; returns the exit latency the
    /// waking CPU pays, µs.
    fn power_up(&mut self, c: usize) -> f64 {
        if self.clusters[c].powered || !self.clusters[c].online {
            return 0.0;
        }
        self.flush();
        self.clusters[c].powered = true;
        self.clusters[c].power_downs += 1;
        self.dirty = true;
        self.platform.clusters[c].cluster_off_exit_latency_us as f64
    }

    fn trace_idle(&mut self, cpu: usize, state: u32) {
        if self.config.trace {
            self.trace.push(TraceEvent::CpuIdle { time_us: self.now_us, cpu, state });
        }
    }

    // ---- DVFS, thermal -----------------------------------------------------------------------

    fn upper_limit_khz(&self, c: usize) -> u32 {
        self.clusters[c].thermal_cap_khz
    }

    fn request_freq(&mut self, c: usize, khz: u32) {
        let cap = self.upper_limit_khz(c);
        let cl = &mut self.clusters[c];
        // The cpufreq core resolves to an OPP within the limits (RELATION_H below the cap).
        let khz = cl.opps_khz.iter().rev().copied().find(|&f| f <= khz.min(cap)).unwrap_or(cl.opps_khz[0]);
        let latency_us = self.platform.clusters[c].transition_latency_ns as f64 / 1000.0;
        match cl.pending {
            Some((_, p)) if p == khz => {}
            _ if cl.cur_khz == khz => cl.pending = None,
            _ => cl.pending = Some((self.now_us + latency_us, khz)),
        }
    }

    fn set_freq(&mut self, c: usize, khz: u32) {
        self.flush();
        let cl = &mut self.clusters[c];
        cl.pending = None;
        if cl.cur_khz == khz {
            return;
        }
        cl.cur_khz = khz;
        cl.cur_opp = cl.opps_khz.iter().position(|&f| f == khz).expect("resolved to an OPP");
        cl.transitions += 1;
        self.dirty = true;
        if self.config.trace {
            for &cpu in &self.platform.clusters[c].cpus {
                self.trace.push(TraceEvent::CpuFrequency { time_us: self.now_us, cpu, freq_khz: khz });
            }
        }
    }

    /// Step-wise passive cooling: the highest trip the hottest cluster exceeds sets each
    /// cluster's cap; a lowered cap applies at once (cpufreq_update_policy).
    fn thermal_poll(&mut self) {
        self.flush();
        let zone_c = self.clusters.iter().map(|c| c.temp_c).fold(f64::MIN, f64::max);
        for c in 0..self.clusters.len() {
            let cluster = &self.platform.clusters[c];
            let mut cap = cluster.max_khz();
            for trip in &self.platform.thermal.trips {
                if zone_c >= trip.temp_c {
                    if let Some(&k) = trip.caps_khz.get(&cluster.name) {
                        cap = cap.min(k);
                    }
                }
            }
            self.clusters[c].thermal_cap_khz = cap;
            self.clusters[c].min_cap_khz = self.clusters[c].min_cap_khz.min(cap);
            let effective = self.clusters[c].pending.map_or(self.clusters[c].cur_khz, |p| p.1);
            if effective > cap {
                self.request_freq(c, cap);
            }
        }
    }

    // ---- governor sampling ----------------------------------------------------------------

    fn port_counts(&self, c: usize) -> (u64, u64) {
        (self.clusters[c].port_reads as u64, self.clusters[c].port_stalls as u64)
    }

    /// Fills `view` (reused between samples to avoid allocation) for cluster `c`.
    fn fill_view(&self, c: usize, view: &mut PolicyView) {
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
                pmu: Pmu::delta(st.pmu.to_counts(), st.pmu_at_sample),
            });
        }
        view.threads.clear();
        for (i, th) in self.threads.iter().enumerate() {
            let d = Pmu::delta(th.pmu.to_counts(), cl.thread_pmu_at_sample[i]);
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
        view.cpu_capacity = self.capacity[c];
        view.cci_cycles = self.cci_cycles() - cl.cci_cycles_at_sample;
    }

    /// Whether a CPU of cluster `c` is running something (its tick is on).
    fn policy_busy(&self, c: usize) -> bool {
        self.platform.clusters[c].cpus.iter().any(|&cpu| self.cpus[cpu].current.is_some())
    }

    /// A CPU of cluster `c` runs scheduler code: take a sample that fell due while idle.
    fn wake_policy(&mut self, c: usize) {
        if self.clusters[c].next_sample_us <= self.now_us {
            self.governor_sample(c);
        }
    }

    fn governor_sample(&mut self, c: usize) {
        self.flush();
        let mut view = std::mem::take(&mut self.views[c]);
        self.fill_view(c, &mut view);
        let decision = self.clusters[c].governor.sample(&view);
        self.samples += 1;
        // Raw counters per cluster, and this cluster's features as the other cluster's tree
        // would read them.
        let mut counters = vec![ClusterCounters::default(); self.clusters.len()];
        for p in &view.cci_ports {
            counters[p.cluster].si_rrq_hs_any += p.si_rrq_hs_any;
            counters[p.cluster].si_rrq_stall_tt_full += p.si_rrq_stall_tt_full;
        }
        for t in &view.threads {
            let k = &mut counters[t.cluster];
            k.cpu_cycles += t.pmu.cpu_cycles;
            k.inst_retired += t.pmu.inst_retired;
            k.bus_access += t.pmu.bus_access;
            k.l2d_cache_refill += t.pmu.l2d_cache_refill;
        }
        let own = counters[c];
        let ratio = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
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
            cci_congestion: ratio(own.si_rrq_stall_tt_full, own.si_rrq_hs_any),
            memory_access: ratio(own.bus_access, own.cpu_cycles),
            snoop_latency_ns: snoop_ns,
            period_s: (self.now_us - self.clusters[c].last_sample_us) * 1e-6,
            cci_cycles: view.cci_cycles,
            counters,
        });
        if self.config.trace {
            let cpu = self.platform.clusters[c].cpus[0];
            let name = &self.platform.clusters[c].name;
            let time_us = self.now_us;
            self.trace.push(TraceEvent::Counter { time_us, cpu, name: format!("power_{name}_mw"), value: self.clusters[c].power_mw });
            self.trace.push(TraceEvent::Counter { time_us, cpu, name: format!("snoop_latency_{name}_ns"), value: snoop_ns });
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

    // ---- the model -----------------------------------------------------------------------------

    /// Latency of a snoop served by cluster `c`, ns; 0 when it is powered down (its CCI port
    /// is disabled and nothing is snooped).
    fn snoop_served_ns(&self, c: usize) -> f64 {
        if !self.clusters[c].powered {
            return 0.0;
        }
        self.platform.snoop_response_cycles(c) / (self.clusters[c].cur_khz as f64 / 1e6)
    }

    /// Refreshes every running thread's rate, the CCI and DRAM rates, and the power draw.
    fn recompute(&mut self) {
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
        let capacity_lines_per_ns = platform.dram.peak_bandwidth_mb_s * platform.dram.bandwidth_efficiency * 1e6 / line_bytes / 1e9;
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
                    mem.refs_per_instr * m.l2_refills * (1.0 + mem.write_fraction) / time_of(engine, cpu, t, rho).total_ns()
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
        for c in 0..nclusters {
            let full = if occupancy[c] > 0.0 {
                memory::tracker_full_probability(platform.cci.read_tracker_entries, occupancy[c])
            } else {
                0.0
            };
            self.clusters[c].port_stall_per_us = full * cci_mhz;
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

    // ---- results ---------------------------------------------------------------------------------

    fn finish(mut self, completed: bool) -> RunResult {
        self.flush();
        // "the first reading after the benchmark has finished is reported": the next reading
        // sees the now idle system.
        self.recompute();
        self.read_sensors();
        let platform = self.platform;
        let time_us = if completed { self.threads.iter().map(|t| t.finish_us).fold(0.0, f64::max) } else { self.now_us };
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
