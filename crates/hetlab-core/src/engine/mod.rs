//! The event-driven engine: it composes the mechanisms and runs the clock. Time jumps from
//! event to event (thread finish/wake, phase change, governor sample, time-slice end, DVFS
//! transition, OS jitter, DRAM noise epoch, thermal poll, sensor reading, scheduler tick);
//! between events every running thread progresses at the rate the model gives for the current
//! frequencies and power states, and counters, energy and temperature are integrated in closed
//! form.
//!
//! Map: `config` (what a run is asked), `setup` (building it), `state` (threads, CPUs,
//! policies, clusters), this file (the loop), `threads` (phases, wake-ups, context switches,
//! migration), `rt` (the RT class: push, RR turns, throttling and its period timer),
//! `deadline` (SCHED_DEADLINE: servers, throttling and replenishment, push and pull), `sync`
//! (named objects threads wait on: rt-app's conditions, mutexes, semaphores, barriers,
//! timers), `timers` (sleep timers), `idle` (cpuidle), `dvfs` (frequency requests, thermal
//! caps), `cpumap` and `switcher` (logical CPUs on physical cores, big.LITTLE switches),
//! `sampling` (governor samples), `rates` (the model re-solved at each change), `integrate`
//! (energy, temperature and counters between changes), `report` (results), `rtapp_markers`
//! (rt-app's ftrace markers), `uclamp` (utilisation clamps: effective values, run-queue buckets).
//! Who owns what: `crate::model` the mechanisms, `crate::sched` placement and run queues,
//! `crate::kernel` the kernel's own work, `crate::governor` DVFS policies.

mod config;
mod cpumap;
mod deadline;
mod dvfs;
mod idle;
mod integrate;
mod parallel;
mod rates;
mod rcu;
mod report;
mod rt;
mod rtapp_markers;
mod sampling;
mod sched_trace;
mod setup;
mod state;
mod switcher;
mod sync;
mod threads;
mod timers;
mod uclamp;

pub use crate::model::idle::CpuIdle;
pub use config::{GovernorSetting, SimConfig, MAX_CPU_DMA_LATENCY_US, MAX_TIME_LIMIT_S};

use crate::governor::PolicyView;
use crate::kernel::jitter::Jitter;
use crate::kernel::perf_sampling::PerfCounters;
use crate::model::dram::DramState;
use crate::model::energy::{EnergyAccount, Sensors};
use crate::platform::Platform;
use crate::random::{normal_sample, Rng};
use crate::result::{RunResult, SampleRow};
use crate::sched::cfs::RunQueue;
use crate::sched::{CpuMask, Migration, Placement, SchedEntity, SchedView};
use crate::trace::TraceEvent;
use crate::workload::{Task, Workload};
use state::{ClusterHw, Cpu, Policy, Thread, ThreadState};
use timers::Timers;

/// Completions computed by division land within this of their exact time, µs.
const EPS_US: f64 = 1e-6;

/// Runs one simulation.
pub fn simulate(platform: &Platform, workload: &Workload, config: SimConfig) -> Result<RunResult, String> {
    config.check()?;
    Engine::new(platform, workload, config)?.run()
}

/// The scheduler's state and topology as placement policies see it.
struct Sched {
    placement: Box<dyn Placement>,
    rqs: Vec<RunQueue>,
    entities: Vec<SchedEntity>,
    /// PELT signals are kept (the placement or a governor reads them).
    track_util: bool,
    /// Per cluster: the 3.x load sums scale with its frequency (the placement wants it and its
    /// governor is not a single-frequency one).
    load_freq_invariant: Vec<bool>,
    /// Per logical CPU: the physical core it runs on (a platform CPU number), that core's
    /// cluster and its capacity. Switching modes change this map at run time.
    core_of: Vec<usize>,
    cluster_of: Vec<usize>,
    capacity: Vec<u32>,
    /// Per cluster: the logical CPUs on it, ascending.
    cpus_of_cluster: Vec<Vec<usize>>,
    /// The last scheduler tick processed, µs (ticks are jiffies-aligned).
    last_tick_us: f64,
    tick_us: f64,
    /// CFS tunables, scaled for the number of CPUs.
    cfs: crate::sched::cfs::Tunables,
    /// Something asks for a utilisation clamp (the kernel's `sched_uclamp_used`): the run
    /// queues' clamp buckets are kept (`uclamp`).
    uclamp_used: bool,
    /// uclamp's sysctls and bucket count.
    uclamp: crate::sched::uclamp::Settings,
    /// A SCHED_RR slice, ticks.
    rr_slice_ticks: u64,
    /// RT tasks queued so far (their arrival numbers order each priority's list).
    rt_arrivals: u64,
    /// RT placement asks whether a CPU's capacity fits the task (5.10 on asymmetric CPUs).
    rt_fitness: bool,
    rt_bandwidth: crate::sched::rt::Bandwidth,
    /// The RT period timer's next expiry, µs (infinite while no RT work is about).
    rt_period_next_us: f64,
    /// SCHED_DEADLINE's timers: (expiry ns, thread, which).
    dl_timers: std::collections::BTreeSet<(u64, usize, deadline::DlTimer)>,
    /// Some thread is SCHED_DEADLINE (schedutil adds DL bandwidth, DL time is tracked).
    dl_used: bool,
    /// The CPUs the workload's threads may be given (online, within `--cluster`).
    user_cpus: CpuMask,
    /// The task groups, their run queues on each CPU, and each thread's group.
    groups: crate::sched::group::Groups,
}

impl Sched {
    /// Asks the placement policy something about the state at `now_us`, on `this_cpu`.
    fn ask<R>(
        &mut self,
        now_us: f64,
        this_cpu: usize,
        question: impl FnOnce(&mut dyn Placement, &SchedView) -> R,
    ) -> R {
        let view = SchedView {
            now_us,
            this_cpu,
            rqs: &self.rqs,
            cluster_of: &self.cluster_of,
            capacity: &self.capacity,
            tasks: &self.entities,
            groups: &self.groups,
        };
        question(self.placement.as_mut(), &view)
    }
}

/// Hardware beyond the cores: clusters, DRAM, the energy account and the sensors.
struct Hardware {
    clusters: Vec<ClusterHw>,
    dram: DramState,
    energy: EnergyAccount,
    sensors: Sensors,
    next_thermal_us: f64,
    /// Time up to which `integrate` has counted the cluster and DRAM quantities, µs.
    integrated_until_us: f64,
}

/// Where the per-sample time series goes.
enum Series<'a> {
    Off,
    /// Kept in the result.
    Keep(Vec<SampleRow>),
    /// Handed to a sink as each sample is taken (memory stays constant on long runs).
    Stream(Box<dyn FnMut(&SampleRow) + 'a>),
}

/// What the run records besides its state.
struct Outputs<'a> {
    events: u64,
    samples: u64,
    /// CPU time spent by governors reading PMCs, µs.
    governor_overhead_us: f64,
    series: Series<'a>,
    trace: Option<Vec<TraceEvent>>,
    /// The placement's over-utilisation state last traced.
    overutilized: Option<bool>,
    marks: Vec<crate::result::Mark>,
    /// A thread went through more than `max_events_without_progress` work-less phases inside one
    /// event (a loop of `resume` phases): the run ends as making no progress.
    stuck: bool,
    /// Every live user thread blocked forever (`sync::blocked_forever`), from when.
    deadlock: Option<crate::result::Deadlock>,
    /// Logical CPUs the switcher moved to their partner core.
    cpu_switches: u64,
    /// Priority changes, for a trace: events traced before, tid, new kernel priority.
    prio_changes: Vec<(usize, u32, i32)>,
    /// Times a CPU's RT queue was throttled (the kernel's "sched: RT throttling activated").
    rt_throttles: u64,
    /// Per task group: CPU time its threads ran while in it and have since left it, µs.
    group_cpu_us: Vec<f64>,
}

impl Outputs<'_> {
    fn records_series(&self) -> bool {
        !matches!(self.series, Series::Off)
    }

    fn trace(&mut self, event: TraceEvent) {
        if let Some(t) = &mut self.trace {
            t.push(event);
        }
    }

    /// Thread `tid` has kernel priority `prio` from now on (only a trace prints priorities).
    fn note_prio(&mut self, tid: u32, prio: i32) {
        if let Some(t) = &self.trace {
            self.prio_changes.push((t.len(), tid, prio));
        }
    }

    /// Removes the events `traced_ahead` matches among the latest few thousand: events traced
    /// in advance (a kernel burst's idle entry) that did not happen after all.
    fn drop_recent(&mut self, traced_ahead: impl Fn(&TraceEvent) -> bool) {
        if let Some(t) = &mut self.trace {
            let from = t.len().saturating_sub(4096);
            let mut i = t.len();
            while i > from {
                i -= 1;
                if traced_ahead(&t[i]) {
                    t.remove(i);
                }
            }
        }
    }
}

pub struct Engine<'a> {
    platform: &'a Platform,
    /// The workload's tasks, then the kernel threads' tasks.
    tasks: Vec<Task>,
    workload_name: String,
    /// The workload's own end (rt-app's `duration`), µs.
    duration_us: Option<f64>,
    config: SimConfig,
    rng: Rng,
    now_us: f64,
    threads: Vec<Thread>,
    /// Named objects threads synchronise on (`sync`).
    sync: sync::SyncObjects,
    /// Per thread, when tracing: its rt-app loop under way (`rtapp_markers`).
    rtapp_marks: rtapp_markers::RtappMarks,
    /// Each task's parallel phases: work pool and barrier (`parallel`), by task and phase.
    pools: Vec<Vec<parallel::Pool>>,
    /// A running thread's CPU while it goes through its zero-work phases (`resume`, then
    /// `suspend` or `sleep`), and whether a thread it woke there preempts it (`enter_phase`).
    deferred_preempt: Option<(usize, bool)>,
    /// Threads of the workload not yet done (kernel threads do not keep a run going).
    live_user_threads: usize,
    /// A user thread blocked or ended during the current event: look for a deadlock after it
    /// (not inside it: a thread may block and wake another within one event).
    look_for_deadlock: bool,
    timers: Timers,
    rcu: rcu::RcuState,
    cpus: Vec<Cpu>,
    sched: Sched,
    jitter: Jitter,
    /// Counter-overflow sampling on chosen CPUs, if configured.
    perf: Option<PerfCounters>,
    policies: Vec<Policy>,
    /// The big.LITTLE switcher, under IKS or cluster switching (`switcher`).
    switcher: Option<crate::sched::switching::Switcher>,
    /// Per logical CPU: its cpufreq policy.
    policy_of_cpu: Vec<usize>,
    hw: Hardware,
    /// Reference-work conversion for periodic phases, per task and phase: instructions per µs.
    reference_ips: Vec<Vec<f64>>,
    /// Something changed that affects rates or power since the last `recompute`.
    dirty: bool,
    /// Governor views, reused between samples.
    views: Vec<PolicyView>,
    scratch: Scratch,
    out: Outputs<'a>,
}

/// Buffers reused instead of allocated at every event.
#[derive(Default)]
struct Scratch {
    snoop_ns: Vec<f64>,
    /// Every running thread, while the model is re-solved.
    running: Vec<rates::Running>,
    ws_per_cluster: Vec<f64>,
    due: Vec<(usize, u32)>,
    migrations: Vec<Migration>,
    /// The model's inputs at the last solution (`rates::model_inputs`), a buffer for the
    /// current ones, and the speed it gave the thread on each CPU.
    solved_inputs: Vec<u64>,
    inputs: Vec<u64>,
    speed_on_cpu: Vec<state::Speed>,
    /// Task-group run queues whose signals crossed a period (CPU, group), for the trace.
    group_levels: Vec<(usize, usize)>,
}

/// Events at one simulated instant after which a run counts as making no progress (far above
/// any real burst: 15 for each of the most threads a workload may have, all at once), reported
/// within about a second.
pub const MAX_EVENTS_WITHOUT_PROGRESS: u64 = 1_000_000;

/// Events between two looks at `SimConfig::stop` (a load of an atomic: free at this spacing).
pub const STOP_CHECK_EVENTS: u64 = 4096;

/// The error of a run abandoned through `SimConfig::stop`.
pub const STOPPED: &str = "the run was stopped";

impl<'a> Engine<'a> {
    /// Hands each time-series row to `sink` as the sample is taken instead of keeping it
    /// in the result (for long runs: memory stays constant).
    pub fn stream_series(&mut self, sink: impl FnMut(&SampleRow) + 'a) {
        self.out.series = Series::Stream(Box::new(sink));
    }

    /// Runs to the end of the workload (or the time limit) and reports.
    pub fn run(mut self) -> Result<RunResult, String> {
        let limit_us = self.config.time_limit_s * 1e6;
        let mut completed = self.run_until(self.duration_us.map_or(limit_us, |d| d.min(limit_us)));
        if let Some(end_us) = self.duration_us.filter(|&d| !completed && d <= limit_us && self.now_us >= d) {
            // the workload's duration is up: every thread stops there (rt-app's end)
            for th in self.threads.iter_mut().filter(|th| !th.kernel && th.state != ThreadState::Done) {
                th.finish_us = end_us;
            }
            completed = true;
        }
        if !completed && self.stop_asked() {
            return Err(STOPPED.into());
        }
        if self.out.stuck || (!completed && self.now_us < limit_us && self.out.deadlock.is_none()) {
            return Err(format!(
                "no progress in simulated time at {:.6} s after {} events: a task loops through phases without \
                 work or sleep; give its phases instructions or sleep_us",
                self.now_us / 1e6,
                self.config.max_events_without_progress
            ));
        }
        Ok(self.finish(completed))
    }

    fn stop_asked(&self) -> bool {
        self.config.stop.as_ref().is_some_and(|stop| stop.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Every [`STOP_CHECK_EVENTS`] events: publishes the simulated time reached (if asked) and
    /// says whether the caller asked the run to stop.
    fn checkpoint(&self) -> bool {
        if let Some(progress) = &self.config.progress_us {
            progress.store(self.now_us.to_bits(), std::sync::atomic::Ordering::Relaxed);
        }
        self.stop_asked()
    }

    /// Processes events up to `limit_us`; true if the workload finished first. Then `now` is
    /// the last event's time, or `limit_us` if the workload has not finished.
    pub fn run_until(&mut self, limit_us: f64) -> bool {
        if self.dirty {
            self.recompute();
        }
        // A run whose events stop moving simulated time (a loop of zero-work phases) would
        // never reach the limit: it stops here, with `now` short of `limit_us`.
        let (mut last_us, mut same_time) = (self.now_us, 0u64);
        while self.live_user_threads > 0 {
            if self.out.stuck {
                return false;
            }
            let next = self.next_event_us();
            let tick = self.next_tick_us();
            if next.min(tick) > limit_us {
                self.advance(limit_us);
                return false;
            }
            if tick < next {
                self.advance(tick);
                self.tick();
            } else {
                self.advance(next);
                self.handle_events();
            }
            if self.dirty {
                self.recompute();
            }
            #[cfg(debug_assertions)]
            self.check_uclamp_counts();
            self.trace_group_signals();
            if std::mem::take(&mut self.look_for_deadlock) {
                self.note_deadlock();
                // nothing can happen any more; a workload with a duration (rt-app's) runs to it
                if self.out.deadlock.is_some() && self.duration_us.is_none() {
                    return false;
                }
            }
            self.out.events += 1;
            if self.out.events.is_multiple_of(STOP_CHECK_EVENTS) && self.checkpoint() {
                return false;
            }
            if self.now_us > last_us {
                (last_us, same_time) = (self.now_us, 0);
            } else {
                same_time += 1;
                if same_time >= self.config.max_events_without_progress {
                    return false;
                }
            }
        }
        true
    }

    /// The earliest pending event other than the scheduler tick.
    fn next_event_us(&self) -> f64 {
        let hw = &self.hw;
        let mut next = self
            .timers
            .next_any_us()
            .min(hw.dram.next_noise_us)
            .min(hw.next_thermal_us)
            .min(hw.sensors.next_reading_us)
            .min(self.sched.rt_period_next_us)
            .min(self.next_dl_timer_us());
        for policy in &self.policies {
            // An idle policy samples at its next wake-up instead (see `handle_events`).
            if policy.busy_cpus > 0 {
                next = next.min(policy.next_sample_us);
            }
            if let Some((t, _)) = policy.pending {
                next = next.min(t);
            }
        }
        for (rq, &burst_us) in self.sched.rqs.iter().zip(self.jitter.next_bursts_us()) {
            if !rq.online {
                continue;
            }
            next = next.min(burst_us);
            if let Some(t) = rq.curr {
                let th = &self.threads[t];
                if th.speed.instr_per_us > 0.0 {
                    next =
                        next.min(self.now_us + th.progress.stolen_us + th.progress.work_left / th.speed.instr_per_us);
                }
            }
        }
        next.max(self.now_us)
    }

    /// Integrates every CPU and running thread from `now` to `to_us` at the rates of the last
    /// `recompute`.
    fn advance(&mut self, to_us: f64) {
        let dt = to_us - self.now_us;
        if dt <= 0.0 {
            return;
        }
        for (cpu_id, cpu) in self.cpus.iter_mut().enumerate() {
            let rq = &self.sched.rqs[cpu_id];
            if !rq.online {
                continue;
            }
            let khz = self.hw.clusters[self.sched.cluster_of[cpu_id]].cur_khz as f64;
            let Some(t) = rq.curr else {
                cpu.idle_since_sample_us += dt;
                cpu.was_idle = true;
                continue;
            };
            cpu.busy_us += dt;
            cpu.pmu.cycles += dt * khz / 1000.0;
            let th = &mut self.threads[t];
            let stolen = th.progress.stolen_us.min(dt);
            th.progress.stolen_us -= stolen;
            let run_us = dt - stolen;
            let instr = (th.speed.instr_per_us * run_us).min(th.progress.work_left);
            if let Some(phase) = self.tasks[th.task].phases.get(th.progress.phase) {
                // call_rcu() at the phase's rate per second of reference work (`kernel::rcu`)
                if phase.rcu.per_s > 0.0 {
                    let reference_s = instr / (self.reference_ips[th.task][th.progress.phase] * 1e6);
                    let calls = phase.rcu;
                    self.rcu.used = true;
                    if let Some(w) =
                        self.rcu.rcu.call_rcu(cpu_id, reference_s * calls.per_s, calls.callback_us, calls.lazy)
                    {
                        self.rcu.pending_wakes.push(w);
                    }
                }
            }
            th.progress.work_left -= instr;
            th.cpu_time_us += run_us;
            th.cpu_time_on_us[cpu_id] += run_us;
            let cycles = run_us * khz / 1000.0;
            let (refills, bus, refs) =
                (instr * th.speed.refills_per_instr, instr * th.speed.bus_per_instr, instr * th.speed.refs_per_instr);
            th.pmu.cycles += cycles;
            th.peer_lines += instr * th.speed.peer_lines_per_instr;
            for p in [&mut th.pmu, &mut cpu.pmu] {
                p.inst += instr;
                p.l2_refill += refills;
                p.bus_access += bus;
                p.mem_access += refs;
            }
            if let Some(perf) = &mut self.perf {
                // The overflows these instructions caused: their handlers' time is stolen from
                // the thread (`kernel::perf_sampling`).
                let samples = perf.count(cpu_id, instr);
                if samples > 0 {
                    th.progress.stolen_us += perf.cost_us(samples, khz);
                }
            }
        }
        self.now_us = to_us;
    }

    fn handle_events(&mut self) {
        self.rcu_wake_pending();
        let now = self.now_us;
        for p in 0..self.policies.len() {
            if let Some((t, khz)) = self.policies[p].pending {
                if t <= now + EPS_US {
                    self.set_freq(p, khz);
                }
            }
        }
        if self.hw.next_thermal_us <= now + EPS_US {
            self.thermal_poll();
            self.dirty = true; // leakage follows the new temperature
            self.hw.next_thermal_us = now + self.platform.thermal.polling_interval_ms as f64 * 1000.0;
        }
        if self.hw.sensors.next_reading_us <= now + EPS_US {
            self.read_sensors();
            self.hw.sensors.next_reading_us += self.hw.sensors.period_us;
        }
        if self.sched.rt_period_next_us <= now + EPS_US {
            self.rt_period_timer();
        }
        self.dl_timers_due();
        if self.hw.dram.next_noise_us <= now + EPS_US {
            self.hw.dram.noise = (self.platform.noise.dram_latency_sigma * normal_sample(&mut self.rng)).exp();
            self.dirty = true;
            self.hw.dram.next_noise_us = now + self.platform.noise.dram_noise_period_us as f64;
        }
        for cpu in 0..self.cpus.len() {
            if self.sched.rqs[cpu].online && self.jitter.next_burst_us(cpu) <= now + EPS_US {
                self.kernel_jitter(cpu);
            }
        }
        // Thread completions (running threads whose job is done).
        for cpu in 0..self.cpus.len() {
            if let Some(t) = self.sched.rqs[cpu].curr {
                let th = &self.threads[t];
                let left = th.progress.work_left;
                if th.progress.stolen_us <= EPS_US && (left <= th.speed.instr_per_us * EPS_US || left <= 1e-9) {
                    self.threads[t].progress.work_left = 0.0;
                    self.job_done(t);
                }
            }
        }
        // Wake-ups, in thread order.
        let mut due = std::mem::take(&mut self.scratch.due);
        due.clear();
        self.timers.pop_due(now + EPS_US, &mut due);
        due.sort_unstable();
        for &(t, seq) in &due {
            if self.threads[t].timer_seq != seq {
                continue; // a timer the thread no longer waits for
            }
            if matches!(self.threads[t].state, ThreadState::Sleeping { .. }) {
                self.wake(t, None);
            } else if self.threads[t].progress.runtime_end_us.is_some() {
                self.end_runtime(t);
            }
        }
        self.scratch.due = due;
        // Governor samples. Since Linux 4.6 a governor samples from the scheduler's
        // update_util hook, so a policy whose CPUs stayed idle (no tick, no enqueue) is not
        // sampled until one of them wakes up (`wake_policy`).
        for p in 0..self.policies.len() {
            if self.policies[p].next_sample_us <= now + EPS_US && self.policy_busy(p) {
                self.governor_sample(p);
            }
        }
    }

    /// The next scheduler tick, µs, when one is needed: CFS preempts at ticks where threads
    /// wait, PELT is updated at ticks where someone reads it, and the placement may act at
    /// ticks. Otherwise no tick is simulated (it would change nothing): as with NO_HZ, idle
    /// CPUs have none anyway.
    fn next_tick_us(&self) -> f64 {
        let needed = self.sched.placement.uses_tick()
            || self.sched.track_util
            || self.rcu.rcu.active()
            || !self.rcu.pending_wakes.is_empty()
            || self.sched.rqs.iter().any(|rq| {
                (rq.cfs_curr().is_some() && !rq.queue.is_empty())
                    || !rq.rt.is_empty()
                    || rq.rt.running.is_some()
                    || rq.dl.running.is_some()
            });
        if !needed {
            return f64::INFINITY;
        }
        let tick = self.sched.tick_us;
        let next = (self.now_us / tick).ceil() * tick;
        if next <= self.sched.last_tick_us {
            self.sched.last_tick_us + tick
        } else {
            next
        }
    }

    /// The scheduler tick on every busy CPU (idle CPUs have stopped theirs: NO_HZ): CFS
    /// accounts the running thread and preempts it if it ran its slice, PELT is updated, and
    /// the placement's tick hook may move threads (its softirq, before the next CPU's tick).
    fn tick(&mut self) {
        self.sched.last_tick_us = self.now_us;
        let mut moves = std::mem::take(&mut self.scratch.migrations);
        // CPUs busy at the tick (one given a thread by an earlier CPU's softirq has not ticked)
        let busy = CpuMask::of((0..self.cpus.len()).filter(|&c| self.sched.rqs[c].curr.is_some()));
        for cpu in busy.iter() {
            if self.sched.rqs[cpu].curr.is_none() {
                continue;
            }
            if self.tick_cpu(cpu) {
                self.preempt(cpu);
            }
            let now = self.now_us;
            moves.clear();
            self.sched.ask(now, cpu, |placement, view| placement.tick(view, cpu, &mut moves));
            self.note_overutilized(cpu);
            for m in &moves {
                self.migrate(m.thread, m.to_cpu);
            }
        }
        self.scratch.migrations = moves;
        self.rcu_tick();
    }
}

#[cfg(test)]
mod tests;
