//! The event-driven engine: it composes the mechanisms and runs the clock. Time jumps from
//! event to event (thread finish/wake, phase change, governor sample, time-slice end, DVFS
//! transition, OS jitter, DRAM noise epoch, thermal poll, sensor reading, scheduler tick);
//! between events every running thread progresses at the rate the model gives for the current
//! frequencies and power states, and counters, energy and temperature are integrated in closed
//! form.
//!
//! Map: the run's state is in parts, each a struct whose fields only its own room touches —
//! `work` (tasks, threads, phases, pools, sync objects, timers, rt-app markers), `scheduler`
//! (run queues, entities, the placement; enqueue, pick, switch, migrate per class), `cpufreq`
//! (policies, samples, requests, the switcher), `hardware` (clocks, power states, the model's
//! re-solution, integration, thermal caps, sensors and all energy), `idle` (cpuidle's
//! prediction and learning), `kernel_work` (jitter, perf overflows, RCU, kernel bursts) and
//! `outputs` (series, trace, counts). This file keeps the platform, the configuration, the
//! clock and the RNG, and runs the loop: it asks each part for its next event and dispatches;
//! the sequences that cross parts (a wake-up, a block, a switch-in, a governor sample, kernel
//! work on an idle CPU) are in `flow`. `config` is what a run is asked and its checks against
//! the platform; `pmu` the counts parts accumulate.

mod config;
mod cpufreq;
mod flow;
mod hardware;
mod idle;
mod kernel_work;
mod outputs;
mod pmu;
mod scheduler;
mod work;

pub use crate::model::idle::CpuIdle;
pub use config::{
    GovernorSetting, RunPlan, SimConfig, MAX_CPU_DMA_LATENCY_US, MAX_EVENTS_WITHOUT_PROGRESS, MAX_RESOLVE_TOLERANCE,
    MAX_TIME_LIMIT_S, STOP_CHECK_EVENTS,
};

use crate::governor::{Decision, PolicyView};
use crate::kernel::perf_sampling::PerfCounters;
use crate::platform::Platform;
use crate::random::{Rng, SeedableRng};
use crate::result::{RunResult, SampleRow};
use crate::sched::Placement;
use crate::workload::Workload;
use cpufreq::Cpufreq;
use hardware::{CpuLoad, Hardware};
use idle::Idle;
use kernel_work::{KernelWork, Lookups, PerfTarget};
use outputs::Outputs;
use scheduler::{SchedSetup, Scheduler, Sysctls, ThreadState};
use work::Work;

/// Completions computed by division land within this of their exact time, µs.
const EPS_US: f64 = 1e-6;

/// The earlier of two event times: `f64::min` for times, which are never NaN (one compare;
/// `min`'s NaN handling costs several instructions, asked about ten times per event).
#[inline]
fn earlier(a_us: f64, b_us: f64) -> f64 {
    debug_assert!(!a_us.is_nan() && !b_us.is_nan());
    if b_us < a_us {
        b_us
    } else {
        a_us
    }
}

/// The error of a run abandoned through `SimConfig::stop`.
pub const STOPPED: &str = "the run was stopped";

/// Runs one simulation.
pub fn simulate(platform: &Platform, workload: &Workload, config: SimConfig) -> Result<RunResult, String> {
    config.check()?;
    let result = Engine::new(platform, workload, config)?.run()?;
    result.check_physical()?;
    Ok(result)
}

pub struct Engine<'a> {
    platform: &'a Platform,
    config: SimConfig,
    rng: Rng,
    now_us: f64,
    work: Work,
    sched: Scheduler<'a>,
    cpufreq: Cpufreq<'a>,
    hw: Hardware<'a>,
    idle: Idle,
    kernel: KernelWork<'a>,
    out: Outputs<'a>,
    /// Buffers of the loop, reused between events.
    due: Vec<(usize, u32)>,
    loads: Vec<CpuLoad>,
    rcuo_wakes: Vec<(usize, Option<usize>)>,
}

impl<'a> Engine<'a> {
    /// A run of `workload` on `platform` with the placement policy `config.scheduler` names.
    pub fn new(platform: &'a Platform, workload: &Workload, config: SimConfig) -> Result<Self, String> {
        let placement = config.scheduler.build(platform, &config.sched_tunables)?;
        Self::with_placement(platform, workload, config, placement)
    }

    /// A run with a placement policy of the caller's (`config.scheduler` only names the
    /// run in its result). Builds each part, then starts the governors and the threads.
    pub fn with_placement(
        platform: &'a Platform,
        workload: &Workload,
        config: SimConfig,
        placement: Box<dyn Placement>,
    ) -> Result<Self, String> {
        let plan = config.check_for(platform, workload, &*placement)?;
        let mut rng = Rng::seed_from_u64(config.seed);
        let perf =
            config.perf_sampling.as_ref().map(|s| PerfCounters::new(s, platform, platform.ncpus())).transpose()?;
        let RunPlan { switcher, online, cluster_of, clusters_online, user_cpus, tasks, user_tasks, .. } = plan;
        let rtapp = crate::engine::work::RtappOutputs { trace: config.trace, logs: config.rtapp_logs };
        let work = Work::new(platform, workload, tasks, plan.threads, user_tasks, plan.reference_cluster, rtapp);
        let threads: Vec<(usize, u32, bool)> =
            (0..work.nthreads()).map(|t| (work.task_of(t), work.tid(t), work.is_kernel(t))).collect();
        let cpufreq = Cpufreq::new(platform, &config, switcher, threads.len())?;
        let sysctls = Sysctls::check(platform, &config.sched_tunables, &*placement)?;
        let governors_read_util = (0..cpufreq.len()).any(|p| cpufreq.reads_util(p));
        let setup = SchedSetup {
            workload,
            tasks: work.tasks(),
            threads: &threads,
            allowed: &plan.allowed,
            online: &online,
            cluster_of: &cluster_of,
            user_cpus,
            sysctls,
            governors_read_util,
        };
        let sched = Scheduler::new(platform, &config, placement, setup)?;
        let lookups = Lookups {
            rcuo: |cpu| work.rcuo_of(cpu),
            kthread: |name: &str, event: &str| work.kthread_named(name, event),
            semaphore: |name: &str| work.semaphore(name),
        };
        let kernel = KernelWork::new(platform, &online, &mut rng, perf, &config.kernel, &workload.irqs, lookups);
        let mut engine = Engine {
            hw: Hardware::new(platform, &clusters_online, &config.start_temp_c, threads.len()),
            idle: Idle::new(platform.ncpus(), config.cpuidle, config.cpu_dma_latency_us, sched.kernel()),
            out: Outputs::new(config.series, config.trace),
            platform,
            rng,
            now_us: 0.0,
            work,
            sched,
            cpufreq,
            kernel,
            config,
            due: Vec::new(),
            loads: Vec::new(),
            rcuo_wakes: Vec::new(),
        };
        if let Some(khz) = engine.config.dsu_khz {
            engine.hw.fix_dsu_clock(khz);
        }
        engine.hw.set_resolve_tolerance(engine.config.resolve_tolerance);
        let phases = || engine.work.tasks().iter().flat_map(|task| &task.phases);
        engine.hw.set_peer_reads(phases().any(|phase| phase.mem.peer_written_fraction > 0.0));
        engine.start();
        Ok(engine)
    }

    /// Hands each time-series row to `sink` as the sample is taken instead of keeping it
    /// in the result (for long runs: memory stays constant).
    pub fn stream_series(&mut self, sink: impl FnMut(&SampleRow) + 'a) {
        self.out.stream_series(sink);
    }

    /// Hands every governor sample's view and decision to `sink` as it is taken (the kernel
    /// module's conformance test records what the simulator's governors saw and decided).
    pub fn watch_governor(&mut self, sink: impl FnMut(&PolicyView, Decision) + 'a) {
        self.out.watch_governor(sink);
    }

    /// The physical core logical `cpu` runs on.
    pub fn core_of(&self, cpu: usize) -> usize {
        self.sched.core_of(cpu)
    }

    /// Simulated time now, µs.
    pub fn now_us(&self) -> f64 {
        self.now_us
    }

    /// Runs to the end of the workload (or the time limit) and reports.
    pub fn run(mut self) -> Result<RunResult, String> {
        let limit_us = self.config.time_limit_s * 1e6;
        let duration_us = self.work.duration_us();
        let mut completed = self.run_until(duration_us.map_or(limit_us, |d| d.min(limit_us)));
        if completed && self.work.live_user_threads() > 0 {
            // the tasks that end the run are done: the harness stops the others now
            let now = self.now_us;
            for t in 0..self.work.nthreads() {
                if !self.work.is_kernel(t) && self.sched.state(t) != ThreadState::Done {
                    self.work.stop_at(t, now);
                }
            }
        }
        if let Some(end_us) = duration_us.filter(|&d| !completed && d <= limit_us && self.now_us >= d) {
            // the workload's duration is up: every thread stops there (rt-app's end)
            for t in 0..self.work.nthreads() {
                if !self.work.is_kernel(t) && self.sched.state(t) != ThreadState::Done {
                    self.work.stop_at(t, end_us);
                }
            }
            completed = true;
        }
        if !completed && self.stop_asked() {
            return Err(STOPPED.into());
        }
        if self.out.stuck() || (!completed && self.now_us < limit_us && self.out.deadlock().is_none()) {
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
        if self.hw.dirty() {
            self.recompute();
        }
        // A run whose events stop moving simulated time (a loop of zero-work phases) would
        // never reach the limit: it stops here, with `now` short of `limit_us`.
        let (mut last_us, mut same_time) = (self.now_us, 0u64);
        while !self.work.run_over() {
            if self.out.stuck() {
                return false;
            }
            let next = self.next_event_us();
            let tick = self.skip_idle_ticks(self.next_tick_before_us(next), next, limit_us);
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
            if self.hw.dirty() {
                self.recompute();
            }
            #[cfg(debug_assertions)]
            self.sched.check_uclamp_counts();
            if self.out.tracing() {
                self.sched.trace_group_signals(self.now_us, &mut self.out);
            }
            if self.work.take_look_for_deadlock() {
                self.note_deadlock();
                // nothing can happen any more; a workload with a duration (rt-app's) runs to it
                if self.out.deadlock().is_some() && self.work.duration_us().is_none() {
                    return false;
                }
            }
            let events = self.out.count_event();
            if events.is_multiple_of(STOP_CHECK_EVENTS) && self.checkpoint() {
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

    /// The earliest pending event other than the scheduler tick: each part's next.
    fn next_event_us(&self) -> f64 {
        let mut next = earlier(self.work.next_any_timer_us(), self.hw.next_event_us());
        next = earlier(next, self.sched.rt_period_next_us());
        next = earlier(next, self.sched.next_dl_timer_us());
        next = earlier(next, self.cpufreq.next_event_us());
        if let Some(k) = self.kernel.interrupts() {
            next = earlier(next, k.next_irq_us());
            for (cpu, curr) in self.sched.online_cpus() {
                next = earlier(next, k.next_timer_us(cpu, curr.is_none() && !self.kernel.in_burst(cpu, self.now_us)));
            }
        }
        next = earlier(next, self.kernel.earliest_burst_us());
        for (_, t) in self.sched.running() {
            let instr_per_us = self.hw.speed(t).instr_per_us;
            if instr_per_us > 0.0 {
                let p = self.work.progress(t);
                next = earlier(next, self.now_us + p.stolen_us + p.work_left / instr_per_us);
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
        let (hw, work, kernel) = (&mut self.hw, &mut self.work, &mut self.kernel);
        self.sched.account_interval(dt, |cpu, cluster, t| {
            let khz = hw.cur_khz(cluster) as f64;
            let cycles = dt * khz / 1000.0;
            let speed = hw.speed(t);
            let retired = work.run(t, cpu, dt, speed, khz);
            let instr = retired.instructions;
            let (refills, bus, refs) =
                (instr * speed.refills_per_instr, instr * speed.bus_per_instr, instr * speed.refs_per_instr);
            if let Some((calls, reference_s)) = retired.rcu {
                kernel.call_rcu(cpu, calls, reference_s);
            }
            hw.count_core(cpu, cycles, instr, refills, bus, refs);
            // The overflows these instructions caused: their handlers' time is stolen from the
            // thread (`kernel::perf_sampling`).
            if !kernel.perf_sampling() {
                return;
            }
            let phase = work.phase_index(t);
            let task = work.task_of(t);
            let on = PerfTarget { cluster, task_phase: (task, phase), mem: &work.task(t).phases[phase].mem };
            let perf_us = kernel.perf_overflows_us(cpu, instr, khz, on);
            if perf_us > 0.0 {
                work.steal(t, perf_us);
            }
        });
        self.now_us = to_us;
    }

    /// The events due now, each dispatched to its owner.
    fn handle_events(&mut self) {
        self.rcu_wake_pending();
        self.kthread_wakes_pending();
        let now = self.now_us;
        let by = now + EPS_US;
        // (cpufreq's next event is its earliest transition end or busy sample: later, none due)
        if self.cpufreq.next_event_us() <= by {
            for p in 0..self.cpufreq.len() {
                if let Some(khz) = self.cpufreq.transition_due(p, by) {
                    self.set_freq(p, khz);
                }
            }
        }
        if self.hw.thermal_poll_due(by) {
            self.thermal_poll();
            self.hw.thermal_polled(now);
        }
        self.hw.read_sensors_if_due(by);
        if self.sched.rt_period_next_us() <= by {
            self.rt_period_timer();
        }
        self.dl_timers_due();
        self.hw.dram_noise_if_due(now, by, &mut self.rng);
        // OS jitter, in CPU order (usually one CPU's: once it is taken, the earliest is later)
        let mut from_cpu = 0;
        while self.kernel.earliest_burst_us() <= by {
            let Some(cpu) = self.kernel.burst_due_from(from_cpu, by) else { break };
            from_cpu = cpu + 1;
            if self.sched.online(cpu) {
                self.kernel_jitter(cpu);
            }
        }
        self.device_irqs_due(by);
        self.kernel_timers_due(by);
        // Thread completions (running threads whose job is done).
        // (a job's end may start a thread on a later CPU: the busy set is read at each step)
        from_cpu = 0;
        while let Some((cpu, t)) = self.sched.next_busy_from(from_cpu) {
            from_cpu = cpu + 1;
            let p = self.work.progress(t);
            let left = p.work_left;
            if p.stolen_us <= EPS_US && (left <= self.hw.speed(t).instr_per_us * EPS_US || left <= 1e-9) {
                self.work.progress_mut(t).work_left = 0.0;
                self.job_done(t);
            }
        }
        self.timers_due(by);
        // Governor samples. Since Linux 4.6 a governor samples from the scheduler's
        // update_util hook, so a policy whose CPUs stayed idle (no tick, no enqueue) is not
        // sampled until one of them wakes up (`wake_policy`); none is due before cpufreq's next.
        if self.cpufreq.next_event_us() <= by {
            for p in 0..self.cpufreq.len() {
                if self.cpufreq.sample_due(p, by) && self.cpufreq.busy(p) {
                    self.governor_sample(p);
                }
            }
        }
    }

    /// Wake-ups of the timers due by `by_us`, in thread order.
    fn timers_due(&mut self, by_us: f64) {
        if self.work.next_any_timer_us() > by_us {
            return; // none due (the usual case)
        }
        let mut due = std::mem::take(&mut self.due);
        self.work.pop_due_timers(by_us, &mut due);
        for &(t, seq) in &due {
            if !self.work.timer_current(t, seq) {
                continue; // a timer the thread no longer waits for
            }
            // the timer's CPU takes its interrupt (the board's kernel) and wakes the thread
            let timer_cpu = self.work.timer_cpu(t);
            self.local_timer_irq(timer_cpu);
            if matches!(self.sched.state(t), ThreadState::Sleeping { .. }) {
                self.wake(t, Some(timer_cpu));
            } else if self.work.progress(t).runtime_end_us.is_some() {
                self.end_runtime(t);
            }
        }
        self.due = due;
    }

    /// The next scheduler tick where it comes before `next_us` and is needed, else infinity. A
    /// tick is needed where CFS preempts waiting threads, PELT is read, the placement may act or
    /// RCU works; otherwise none is simulated (it would change nothing): as with NO_HZ, idle CPUs
    /// have none anyway. A tick at or after the next event is not taken before it either way, so
    /// the need (a scan of the busy run queues and RCU's lists) is asked only of an earlier one.
    fn next_tick_before_us(&self, next_us: f64) -> f64 {
        let tick_us = self.sched.next_tick_after_us(self.now_us);
        if tick_us >= next_us || !(self.sched.tick_needed() || self.kernel.rcu_needs_tick()) {
            return f64::INFINITY;
        }
        tick_us
    }

    /// Takes the ticks before the next event `next_us` (and by `limit_us`) that fall while every
    /// CPU is idle and RCU needs no tick, without making them events; returns the first tick
    /// that must be one. Such a tick would only record itself and end an interval of the CPUs'
    /// idle-time sums: nothing runs, the placement's hook runs on busy CPUs only, no governor
    /// samples and nothing is traced. It still ends the interval (`advance`), so that the sums
    /// round as with every tick an event and runs stay byte-identical. A tick at `next_us` comes
    /// after that event, which may wake a CPU; a tick with a CPU busy stays an event (CFS
    /// accounts and may preempt, the placement may move threads, PELT is updated).
    fn skip_idle_ticks(&mut self, mut tick_us: f64, next_us: f64, limit_us: f64) -> f64 {
        while tick_us < next_us && tick_us <= limit_us && self.sched.all_idle() && !self.kernel.rcu_needs_tick() {
            self.advance(tick_us);
            self.sched.tick_at(tick_us);
            tick_us = self.next_tick_before_us(next_us);
        }
        tick_us
    }

    /// The scheduler tick on every busy CPU (idle CPUs have stopped theirs: NO_HZ): CFS
    /// accounts the running thread and preempts it if it ran its slice, PELT is updated, and
    /// the placement's tick hook may move threads (its softirq, before the next CPU's tick).
    fn tick(&mut self) {
        let now = self.now_us;
        self.sched.tick_at(now);
        // CPUs busy at the tick (one given a thread by an earlier CPU's softirq has not ticked)
        let busy = self.sched.busy_cpus();
        for cpu in busy.iter() {
            if self.sched.curr(cpu).is_none() {
                continue;
            }
            if self.tick_cpu(cpu) {
                self.preempt(cpu);
            }
            let moves = self.sched.tick_moves(now, cpu);
            self.sched.note_overutilized(cpu, now, &mut self.out);
            for m in &moves {
                self.migrate(m.thread, m.to_cpu);
            }
            self.sched.give_back_moves(moves);
        }
        self.rcu_tick();
    }

    /// Refreshes every running thread's rate, the CCI and DRAM rates, and the power draw.
    fn recompute(&mut self) {
        let mut loads = std::mem::take(&mut self.loads);
        // besides the CPUs whose thread or cluster changed (the scheduler's): those whose core
        // powered down or up, and those of threads whose phase may have moved
        let mut also = self.idle.take_core_moves();
        let sched = &self.sched;
        self.work.take_touched(|t| also = also.with(sched.cpu_of(t)));
        let (work, idle) = (&self.work, &self.idle);
        let task_phase = |t| (work.task_of(t), work.phase_index(t));
        let moved = self.sched.cpu_loads(&mut loads, also, task_phase, |cpu| idle.core_off_since_us(cpu).is_some());
        let (work, sched) = (&self.work, &self.sched);
        let mem_of = |task, phase| work.mem_of(task, phase);
        let live = |t| sched.live(t).then(|| (work.task_of(t), sched.cluster_of(sched.cpu_of(t))));
        self.hw.recompute(self.now_us, &loads, moved, mem_of, live);
        self.loads = loads;
    }
}

#[cfg(test)]
mod tests;
