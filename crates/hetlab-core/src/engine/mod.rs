//! The event-driven engine. Time jumps from event to event (thread finish/wake, phase change,
//! governor sample, time-slice end, DVFS transition, OS jitter, DRAM noise epoch, thermal
//! poll); between events every running thread progresses at the rate the memory model gives
//! for the current frequencies and power states, and energy, temperature, PELT and the PMCs are
//! integrated in closed form.
//!
//! Map: `config` (what a run is asked), `setup` (building it), this file (the state and the
//! event loop), `threads` (scheduling, jitter, cpuidle), `dvfs` (frequency changes, thermal),
//! `sampling` (governor samples), `rates` (the model solved at each change), `report` (results).

mod config;
mod dvfs;
mod rates;
mod report;
mod sampling;
mod setup;
mod threads;

pub use config::{CpuIdle, GovernorSetting, SimConfig};

use crate::counters::{CciPortSample, ClusterCounters, CorePmu, ThreadSample};
use crate::governor::{registry, CpuSample, Governor, PolicyView};
use crate::memory::{self, InstrTime, MissRatios};
use crate::platform::Platform;
use crate::power;
use crate::result::*;
use crate::sched::{self, SchedPolicy};
use crate::trace::{PrevState, TraceEvent, TraceThreads, CPU_IDLE_EXIT};
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
                    let (refills, bus, refs) =
                        (instr * th.refills_per_instr, instr * th.bus_per_instr, instr * th.refs_per_instr);
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
        self.dram_lines += self.dram_line_per_us * dt;
        self.dram_mj += self.dram_power_mw() * dt_s;
        self.integrated_until_us = self.now_us;
    }

    /// DRAM power now: background plus the energy of the lines moved per second, mW.
    fn dram_power_mw(&self) -> f64 {
        let dram = &self.platform.dram;
        // lines/µs x 1e6 = lines/s; x nJ x 1e-6 = mW
        dram.background_power_mw + self.dram_line_per_us * 1e6 * dram.energy_per_line_nj * 1e-6
    }

    /// Power the on-board sensors see now (CPU clusters and DRAM rails), mW.
    fn sensor_power_mw(&self) -> f64 {
        self.clusters.iter().map(|c| c.power_mw).sum::<f64>() + self.dram_power_mw()
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
            if self.cpus[cpu].current.is_some()
                && !self.cpus[cpu].queue.is_empty()
                && self.cpus[cpu].slice_end_us <= now + eps
            {
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
}
