//! The scheduler core, as the kernel's `core.c` keeps it: the run queues, each thread's entity
//! and state (runnable, running, sleeping, waiting, done), the CPU map the placement sees, CPU
//! time accounting, and the placement policy behind the `Placement` seam. Its files apply the
//! classes' rules of `crate::sched`: PELT where the kernel updates it (`pelt`), CFS's run-queue
//! operations (`fair`), the RT class's bookkeeping (`rt`), SCHED_DEADLINE's servers and timers
//! (`deadline`), utilisation clamps (`uclamp`), the scheduler's trace events (`trace`) and the
//! building and checks of a run's scheduler (`build`). Sequences that switch a CPU between a
//! thread and idle reach other parts (cpuidle, cpufreq, kernel work) and are the engine's
//! (`flow`).

mod build;
mod deadline;
mod eevdf;
mod fair;
mod pelt;
mod queue;
mod rt;
mod trace;
mod uclamp;
mod util_est;

pub use build::{SchedSetup, Sysctls};
pub use deadline::{DlArrival, DlArrive, DlTimer};
pub use fair::FairEnqueue;
pub use rt::RtEnqueue;

use crate::engine::hardware::{CpuLoad, RunningOn};
use crate::platform::Platform;
use crate::result::TaskGroupReport;
use crate::sched::cfs::{self, RunQueue};
use crate::sched::group::{Groups, ROOT};
use crate::sched::{CpuMask, Kernel, Migration, Placement, SchedEntity, SchedView, WakeKind};

/// Where a thread is as far as the scheduler knows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThreadState {
    Runnable,
    Running,
    Sleeping {
        wake_us: f64,
    },
    /// Waiting on a named object (`work::sync`), or a forked thread not started yet.
    Suspended,
    Done,
}

/// What the scheduler keeps of a thread besides its entity.
#[derive(Debug, Clone)]
struct ThreadSched {
    state: ThreadState,
    tid: u32,
    /// Its task is started by an rt-app `fork` (not at the start of the run).
    forked: bool,
    /// Placed at least once (later placements are wake-ups, the first a fork).
    placed: bool,
    migrations: u64,
    /// Its CPU time when it joined its current task group (the rest is the group's), µs.
    group_time_from_us: f64,
}

/// A logical CPU's time accounting since its policy's last sample, and its wake-ups.
#[derive(Debug, Clone, Default)]
struct CpuTime {
    idle_since_sample_us: f64,
    was_idle: bool,
    busy_us: f64,
    /// Idle exits.
    wakeups: u64,
}

/// EEVDF's settings for a run: the scheduler features, the base slice and the tick (the lag's
/// least bound).
#[derive(Debug, Clone, Copy)]
pub struct Eevdf {
    pub features: crate::sched::eevdf::Features,
    pub base_slice_us: f64,
    pub tick_us: f64,
}

/// How a thread arrives on a run queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    Fork,
    Wakeup,
    /// Moved while runnable (its vruntime was already renormalised).
    Migration,
}

pub struct Scheduler<'a> {
    platform: &'a Platform,
    placement: Box<dyn Placement>,
    rqs: Vec<RunQueue>,
    entities: Vec<SchedEntity>,
    threads: Vec<ThreadSched>,
    cputime: Vec<CpuTime>,
    /// PELT signals are kept (the placement or a governor reads them).
    track_util: bool,
    /// The placement acts at ticks (`Placement::uses_tick`, asked once: each placement's
    /// answer is fixed, and the event loop asks at every event).
    placement_ticks: bool,
    /// Per cluster: the 3.x load sums scale with its frequency (the placement wants it and its
    /// governor is not a single-frequency one).
    load_freq_invariant: Vec<bool>,
    /// Per logical CPU: the physical core it runs on (a platform CPU number), that core's
    /// cluster and its capacity. Switching modes change this map at run time.
    core_of: Vec<usize>,
    cluster_of: Vec<usize>,
    capacity: Vec<u32>,
    /// Per logical CPU: the capacity its cluster's capped clock takes (`SchedView::pressure`).
    pressure: Vec<u32>,
    /// Per cluster: the logical CPUs on it, ascending.
    cpus_of_cluster: Vec<Vec<usize>>,
    /// The same as masks (`cluster_busy` tests them against `busy`).
    cluster_mask: Vec<CpuMask>,
    /// Per cluster: its clock and thermal cap, kHz, as cpufreq and the thermal governor last
    /// set them (the kernel's `arch_scale_freq_capacity` and thermal pressure): PELT's scale.
    freq_khz: Vec<(u32, u32)>,
    /// The last scheduler tick processed, µs (ticks are jiffies-aligned).
    last_tick_us: f64,
    tick_us: f64,
    /// CFS tunables, scaled for the number of CPUs.
    cfs: cfs::Tunables,
    /// EEVDF's rules, when the placement's kernel picks by them (Linux 6.6+).
    eevdf: Option<Eevdf>,
    /// Per CPU: EEVDF's `update_curr` asked for a reschedule (the running task's request is
    /// done, or a shorter slice took its turn) that no pick has answered yet.
    resched: Vec<bool>,
    sysctls: Sysctls,
    /// Something asks for a utilisation clamp (the kernel's `sched_uclamp_used`): the run
    /// queues' clamp buckets are kept (`uclamp`).
    uclamp_used: bool,
    /// RT tasks queued so far (their arrival numbers order each priority's list).
    rt_arrivals: u64,
    /// Some RT task has waited on a run queue in this run (else none waits: `tick_needed`
    /// does not look).
    rt_waited: bool,
    /// RT placement asks whether a CPU's capacity fits the task (5.10 on asymmetric CPUs).
    rt_fitness: bool,
    /// The RT period timer's next expiry, µs (infinite while no RT work is about).
    rt_period_next_us: f64,
    /// SCHED_DEADLINE's timers: (expiry ns, thread, which).
    dl_timers: std::collections::BTreeSet<(u64, usize, DlTimer)>,
    /// Some thread is SCHED_DEADLINE (schedutil adds DL bandwidth, DL time is tracked).
    dl_used: bool,
    /// The CPUs the workload's threads may be given (online, within `--cluster`).
    user_cpus: CpuMask,
    /// The task groups, their run queues on each CPU, and each thread's group.
    groups: Groups,
    /// Per task group: CPU time its threads ran while in it and have since left it, µs.
    group_cpu_us: Vec<f64>,
    /// A running thread's CPU while it goes through its zero-work phases (`resume`, then
    /// `suspend` or `sleep`), and whether a thread it woke there preempts it.
    deferred_preempt: Option<(usize, bool)>,
    /// Buffers reused instead of allocated at every tick or trace.
    moves: Vec<Migration>,
    group_levels: Vec<(usize, usize)>,
    /// The online CPUs (fixed at boot).
    online: CpuMask,
    /// The CPUs whose run queue has a current task (kept with `curr`): the event loop asks
    /// for them at every event and walks them instead of every run queue.
    busy: CpuMask,
    /// The CPUs whose current task or cluster changed since `cpu_loads` last wrote them.
    loads_stale: CpuMask,
}

impl Scheduler<'_> {
    /// Asks the placement policy something about the state at `now_us`, on `this_cpu`.
    pub fn ask<R>(
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
            pressure: &self.pressure,
            tasks: &self.entities,
            groups: &self.groups,
        };
        question(self.placement.as_mut(), &view)
    }

    /// The kernel the placement models.
    pub fn kernel(&self) -> Kernel {
        self.placement.kernel()
    }

    /// The placement acts at ticks, or someone reads PELT (the tick updates it), or on some
    /// run queue an RT or DL task runs or waits, or CFS may preempt (a thread runs while others
    /// wait; a running RT or DL task needs the tick anyway, so the test is the cheap one).
    pub fn tick_needed(&self) -> bool {
        self.debug_check_busy();
        // (an RT or DL task runs only on a busy CPU; RT work may wait on an idle one, throttled)
        self.track_util
            || self.placement_ticks
            || (self.rt_waited && self.rqs.iter().any(|rq| !rq.rt.is_empty()))
            || self.busy.iter().any(|cpu| {
                let rq = &self.rqs[cpu];
                rq.rt.running.is_some() || rq.dl.running.is_some() || !rq.queue.is_empty()
            })
    }

    /// RT `t` of `priority` waits on `cpu`'s queue, its place there given by `arrival`.
    fn rt_wait(&mut self, cpu: usize, t: usize, priority: u8, arrival: u64) {
        self.rt_waited = true;
        self.rqs[cpu].rt.insert(t, priority, arrival);
    }

    /// The next tick after `now_us` (jiffies-aligned, after the last one processed), µs.
    pub fn next_tick_after_us(&self, now_us: f64) -> f64 {
        let tick = self.tick_us;
        let next = (now_us / tick).ceil() * tick;
        if next <= self.last_tick_us {
            self.last_tick_us + tick
        } else {
            next
        }
    }

    /// No CPU runs a thread.
    pub fn all_idle(&self) -> bool {
        self.debug_check_busy();
        self.busy.is_empty()
    }

    /// The CPUs running a thread, ascending.
    #[inline]
    pub fn busy_cpus(&self) -> CpuMask {
        self.debug_check_busy();
        self.busy
    }

    /// The online CPUs running no thread.
    #[inline]
    fn idle_online(&self) -> CpuMask {
        CpuMask::from_bits(self.online.bits() & !self.busy.bits())
    }

    /// The CPUs running a thread, ascending, with the thread each runs.
    #[inline]
    pub fn running(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.busy_cpus().iter().map(|c| (c, self.rqs[c].curr.expect("a busy CPU runs a thread")))
    }

    /// The first CPU at or after `cpu` that runs a thread, with the thread.
    #[inline]
    pub fn next_busy_from(&self, cpu: usize) -> Option<(usize, usize)> {
        let from = self.busy.and(CpuMask::from_bits(u64::MAX.checked_shl(cpu as u32).unwrap_or(0)));
        from.first().map(|c| (c, self.rqs[c].curr.expect("a busy CPU runs a thread")))
    }

    fn debug_check_busy(&self) {
        debug_assert!(self.rt_waited || self.rqs.iter().all(|rq| rq.rt.is_empty()));
        debug_assert_eq!(
            self.online,
            CpuMask::of(self.rqs.iter().enumerate().filter(|(_, rq)| rq.online).map(|(c, _)| c))
        );
        debug_assert!(self
            .rqs
            .iter()
            .all(|rq| rq.curr.is_some() || (rq.rt.running.is_none() && rq.dl.running.is_none())));
        debug_assert_eq!(
            self.busy,
            CpuMask::of(self.rqs.iter().enumerate().filter(|(_, rq)| rq.curr.is_some()).map(|(c, _)| c))
        );
    }

    /// The tick at `now_us` begins.
    pub fn tick_at(&mut self, now_us: f64) {
        self.last_tick_us = now_us;
    }

    /// The jiffy of `now_us`.
    pub fn jiffy(&self, now_us: f64) -> u64 {
        (now_us / self.tick_us + 1e-9).floor() as u64
    }

    pub fn tick_us(&self) -> f64 {
        self.tick_us
    }

    /// Scheduler ticks from `since_us` to `now_us` (ticks fall on multiples of the tick
    /// period).
    pub fn ticks_since(&self, since_us: f64, now_us: f64) -> u64 {
        let tick = self.tick_us;
        ((now_us / tick + 1e-9).floor() - (since_us / tick + 1e-9).floor()).max(0.0) as u64
    }

    /// The placement's tick on `cpu`: the threads it moves, into a buffer given back with
    /// [`give_back_moves`](Self::give_back_moves).
    pub fn tick_moves(&mut self, now_us: f64, cpu: usize) -> Vec<Migration> {
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        self.ask(now_us, cpu, |placement, view| placement.tick(view, cpu, &mut moves));
        moves
    }

    pub fn give_back_moves(&mut self, moves: Vec<Migration>) {
        self.moves = moves;
    }

    // ---- threads ---------------------------------------------------------------------------

    pub fn state(&self, t: usize) -> ThreadState {
        self.threads[t].state
    }

    pub fn set_state(&mut self, t: usize, state: ThreadState) {
        self.threads[t].state = state;
    }

    pub fn is_running(&self, t: usize) -> bool {
        self.threads[t].state == ThreadState::Running
    }

    pub fn entity(&self, t: usize) -> &SchedEntity {
        &self.entities[t]
    }

    /// The CPU `t` runs, waits or last ran on.
    pub fn cpu_of(&self, t: usize) -> usize {
        self.entities[t].cpu
    }

    /// `t` was placed at least once and is not done: it may still hold lines others read.
    pub fn live(&self, t: usize) -> bool {
        self.threads[t].placed && self.threads[t].state != ThreadState::Done
    }

    pub fn migrations(&self, t: usize) -> u64 {
        self.threads[t].migrations
    }

    pub fn count_migration(&mut self, t: usize) {
        self.threads[t].migrations += 1;
    }

    /// How a thread being made runnable at `now_us` is placed: as at fork when it is created
    /// runnable, else as a wake-up (a thread whose first phase sleeps was forked at the start,
    /// ran for a negligible time and went to sleep).
    pub fn wake_kind(&mut self, t: usize, now_us: f64) -> WakeKind {
        let th = &mut self.threads[t];
        let placed_before = std::mem::replace(&mut th.placed, true);
        if placed_before || (now_us > 0.0 && !th.forked) {
            WakeKind::Wakeup
        } else {
            WakeKind::Fork
        }
    }

    // ---- deferred preemption ---------------------------------------------------------------

    /// A running thread on `cpu` goes through its zero-work phases: preemption of it waits until
    /// they are done. True if this call started the deferral (its caller ends it).
    pub fn defer_preemption(&mut self, cpu: usize) -> bool {
        let defers = self.deferred_preempt.is_none();
        if defers {
            self.deferred_preempt = Some((cpu, false));
        }
        defers
    }

    /// The deferral ends: whether a thread woken meanwhile preempts.
    pub fn end_deferral(&mut self) -> bool {
        self.deferred_preempt.take().is_some_and(|(_, woken)| woken)
    }

    /// `cpu`'s running thread must give way: true if that is deferred (noted), false if it
    /// must happen now.
    pub fn defer_resched(&mut self, cpu: usize) -> bool {
        match &mut self.deferred_preempt {
            Some((deferred, woken)) if *deferred == cpu => {
                *woken = true;
                true
            }
            _ => false,
        }
    }

    // ---- CPUs ------------------------------------------------------------------------------

    pub fn ncpus(&self) -> usize {
        self.rqs.len()
    }

    pub fn online(&self, cpu: usize) -> bool {
        self.rqs[cpu].online
    }

    /// The thread running on `cpu`.
    #[inline]
    pub fn curr(&self, cpu: usize) -> Option<usize> {
        self.rqs[cpu].curr
    }

    pub fn cluster_of(&self, cpu: usize) -> usize {
        self.cluster_of[cpu]
    }

    pub fn cpus_of_cluster(&self, c: usize) -> &[usize] {
        &self.cpus_of_cluster[c]
    }

    /// A logical CPU of cluster `c` runs something.
    pub fn cluster_busy(&self, c: usize) -> bool {
        self.debug_check_busy();
        self.busy.intersects(self.cluster_mask[c])
    }

    pub fn core_of(&self, cpu: usize) -> usize {
        self.core_of[cpu]
    }

    /// Moves logical `cpu` onto physical `core`; the logical CPU that ran there takes `cpu`'s
    /// old core (the map stays one-to-one); returns that other CPU.
    pub fn swap_cores(&mut self, cpu: usize, core: usize) -> usize {
        let other = self.core_of.iter().position(|&k| k == core).expect("the map is one-to-one");
        if other == cpu {
            return cpu;
        }
        let old_core = self.core_of[cpu];
        self.core_of[cpu] = core;
        self.core_of[other] = old_core;
        let cluster_of_core =
            |k: usize| self.platform.clusters.iter().position(|c| c.cpus.contains(&k)).expect("validated");
        for logical in [cpu, other] {
            let c = cluster_of_core(self.core_of[logical]);
            self.cluster_of[logical] = c;
            self.loads_stale = self.loads_stale.with(logical);
            self.capacity[logical] = self.platform.cpu_capacity(c);
        }
        let ncpus = self.rqs.len();
        for (c, cpus) in self.cpus_of_cluster.iter_mut().enumerate() {
            cpus.clear();
            cpus.extend((0..ncpus).filter(|&l| self.cluster_of[l] == c));
            self.cluster_mask[c] = CpuMask::of(cpus.iter().copied());
        }
        other
    }

    /// Cluster `c` runs at `khz` with thermal cap `cap_khz` from now on (PELT's scale), and on
    /// Linux 6.12 runs with `HW_PRESSURE` its CPUs lose the capacity above the cap
    /// (`cpufreq_update_pressure`, 6.10+: `capacity - capacity · capped / max`, 0 when the cap is
    /// at or above the top).
    pub fn set_cluster_freq(&mut self, c: usize, khz: u32, cap_khz: u32) {
        self.freq_khz[c] = (khz, cap_khz);
        if self.eevdf.is_some_and(|e| e.features.hw_pressure) {
            let max_khz = self.platform.clusters[c].max_khz();
            for &cpu in &self.cpus_of_cluster[c] {
                self.pressure[cpu] = crate::sched::rt::cpufreq_pressure(self.capacity[cpu], cap_khz, max_khz);
            }
        }
    }

    /// Every online CPU ran or idled for `dt` µs: its time is accounted, and each busy one is
    /// handed to `ran(cpu, cluster, thread)` (the engine's integration, in CPU order).
    #[inline]
    pub fn account_interval(&mut self, dt: f64, mut ran: impl FnMut(usize, usize, usize)) {
        self.debug_check_busy();
        // the busy CPUs in order (what `ran` does depends on it), then the idle ones: a CPU's
        // sums are its own, so the two walks give what one walk over the CPUs gives
        for cpu in self.busy.iter() {
            self.cputime[cpu].busy_us += dt;
            ran(cpu, self.cluster_of[cpu], self.rqs[cpu].curr.expect("a busy CPU runs a thread"));
        }
        for cpu in self.idle_online().iter() {
            let time = &mut self.cputime[cpu];
            time.idle_since_sample_us += dt;
            time.was_idle = true;
        }
    }

    /// What each logical CPU holds, for the model's re-solution: online, its cluster, its
    /// running thread with `task_phase(thread)`, and `core_off(cpu)`. `loads` holds what it
    /// wrote last time: only the CPUs whose current task or cluster changed since, and those in
    /// `also` (whose core or running thread's phase may have moved), are written again (a debug
    /// assertion checks every CPU); returns the CPUs written.
    #[inline]
    pub fn cpu_loads(
        &mut self,
        loads: &mut Vec<CpuLoad>,
        also: CpuMask,
        task_phase: impl Fn(usize) -> (usize, usize),
        core_off: impl Fn(usize) -> bool,
    ) -> CpuMask {
        let load_of = |cpu: usize, rq: &RunQueue, cluster: usize| {
            let running = rq.curr.map(|thread| {
                let (task, phase) = task_phase(thread);
                RunningOn { thread, task, phase }
            });
            CpuLoad { online: rq.online, cluster, running, core_off: core_off(cpu) }
        };
        let written = if loads.len() != self.rqs.len() {
            loads.clear();
            loads.extend(self.rqs.iter().zip(&self.cluster_of).enumerate().map(|(cpu, (rq, &c))| load_of(cpu, rq, c)));
            CpuMask::of(0..loads.len())
        } else {
            let stale = CpuMask::from_bits(self.loads_stale.bits() | also.bits());
            for cpu in stale.iter() {
                loads[cpu] = load_of(cpu, &self.rqs[cpu], self.cluster_of[cpu]);
            }
            stale
        };
        self.loads_stale = CpuMask::EMPTY;
        debug_assert!(loads
            .iter()
            .enumerate()
            .all(|(cpu, l)| *l == load_of(cpu, &self.rqs[cpu], self.cluster_of[cpu])));
        written
    }

    /// The online CPUs with the thread each runs.
    #[inline]
    pub fn online_cpus(&self) -> impl Iterator<Item = (usize, Option<usize>)> + '_ {
        self.rqs.iter().enumerate().filter(|(_, rq)| rq.online).map(|(cpu, rq)| (cpu, rq.curr))
    }

    /// Kernel work of `busy_us` on idle `cpu` (charged ahead; a negative time takes it back).
    pub fn account_kernel_work(&mut self, cpu: usize, busy_us: f64) {
        let t = &mut self.cputime[cpu];
        t.busy_us += busy_us;
        t.idle_since_sample_us -= busy_us;
    }

    /// `cpu` left idle.
    pub fn count_wakeup(&mut self, cpu: usize) {
        self.cputime[cpu].wakeups += 1;
    }

    /// `cpu`'s idle time since its policy's last sample, µs, and whether it was idle at all.
    pub fn idle_since_sample(&self, cpu: usize) -> (f64, bool) {
        (self.cputime[cpu].idle_since_sample_us, self.cputime[cpu].was_idle)
    }

    /// `cpu`'s policy sampled: its idle time counts from now.
    pub fn sampled(&mut self, cpu: usize) {
        let t = &mut self.cputime[cpu];
        t.idle_since_sample_us = 0.0;
        t.was_idle = false;
    }

    /// `cpu`'s busy time, s, and its wake-ups.
    pub fn cpu_busy_s(&self, cpu: usize) -> (f64, u64) {
        (self.cputime[cpu].busy_us * 1e-6, self.cputime[cpu].wakeups)
    }

    // ---- task groups -----------------------------------------------------------------------

    /// Thread `t`'s task group at the end, if not the root.
    pub fn group_path(&self, t: usize) -> Option<String> {
        let g = self.groups.of(t);
        (g != ROOT).then(|| self.groups.group(g).path.clone())
    }

    /// Every task group's path (the root's first), for a trace.
    pub fn group_paths(&self) -> Vec<String> {
        (0..self.groups.len()).map(|g| self.groups.group(g).path.clone()).collect()
    }

    /// Each task group but the root: its shares and the CPU time of the threads while in it or
    /// in the groups below it (`cpuacct.usage`), with `cpu_time_us(t)` each thread's CPU time;
    /// none in a run without groups.
    pub fn taskgroup_reports(&self, cpu_time_us: impl Fn(usize) -> f64) -> Vec<TaskGroupReport> {
        let groups = &self.groups;
        let mut own_us = self.group_cpu_us.clone();
        own_us.resize(groups.len(), 0.0);
        for (t, th) in self.threads.iter().enumerate() {
            own_us[groups.of(t)] += cpu_time_us(t) - th.group_time_from_us;
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
}

#[cfg(test)]
mod tests;
