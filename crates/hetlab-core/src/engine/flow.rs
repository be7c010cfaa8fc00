//! The sequences that cross parts: each asks the parts in the kernel's order and applies what
//! they answer. Here the core ones — a thread woken and enqueued, a CPU switched from idle to a
//! thread and back (cpuidle's exit and entry, cpufreq's busy CPUs and deferred sample, kernel
//! work charged ahead), preemption, migration, a thread blocking, sleeping or exiting — and the
//! run's start. The rest, by family: `flow/classes` (RT and DL sequences, a thread's attributes
//! changing), `flow/phases` (phases, fork-join pools, named objects), `flow/kernel` (kernel
//! work, RCU, cpuidle), `flow/cpufreq` (samples, DVFS, the switcher, thermal caps) and
//! `flow/report` (the result).

mod classes;
mod cpufreq;
mod kernel;
mod phases;
mod report;

use super::scheduler::{Arrival, DlArrival, FairEnqueue, ThreadState};
use super::Engine;
use crate::model::idle::STATE_WFI;
use crate::sched::{ClassKind, WakeKind};
use crate::trace::{PrevState, TraceEvent, CPU_IDLE_EXIT};

/// What a CPU whose thread left does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Runs this thread (waiting here, or pulled from another queue).
    Run(usize),
    /// Goes idle; this thread, running elsewhere, is moved here.
    Pull(usize),
    Idle,
}

impl Engine<'_> {
    /// The governors' start, then every thread's first phase (new threads are placed as at
    /// fork).
    pub(super) fn start(&mut self) {
        for p in 0..self.cpufreq.len() {
            let khz = self.cpufreq.request_khz(p);
            for &cpu in self.cpufreq.cpus(p) {
                self.out.trace(TraceEvent::CpuFrequency { time_us: 0.0, cpu, freq_khz: khz });
            }
        }
        self.sched.trace_boot(&mut self.out);
        for p in 0..self.cpufreq.len() {
            let mut view = self.cpufreq.take_view(p);
            self.fill_view(p, &mut view);
            let decision = self.cpufreq.start_governor(p, view);
            self.request_freq(p, decision.target_khz);
            self.cpufreq.set_next_sample_us(p, decision.next_sample_us as f64);
        }
        // forked threads wait for their `fork` first: a thread's first phase may fork one
        let forked = |e: &Self, t: usize| e.work.task(t).forked;
        for t in 0..self.work.nthreads() {
            if forked(self, t) {
                self.sched.set_state(t, ThreadState::Suspended);
            }
        }
        for t in 0..self.work.nthreads() {
            if !forked(self, t) {
                self.enter_phase(t, None);
            }
        }
    }

    // ---- a thread made runnable ------------------------------------------------------------------

    /// Makes `t` runnable on the CPU the placement policy picks; `waker_cpu` is the CPU that
    /// woke it (for the trace), if any.
    pub(super) fn wake(&mut self, t: usize, waker_cpu: Option<usize>) {
        let now = self.now_us;
        let kind = self.sched.wake_kind(t, now);
        let from = self.sched.cpu_of(t);
        let waker_cpu = waker_cpu.unwrap_or(from); // a sleep timer fires where it was armed
        if kind == WakeKind::Wakeup {
            self.sched.trace_waking(t, waker_cpu, now, &mut self.out); // a new task has no sched_waking
        }
        let mut target = match self.sched.entity(t).class_kind() {
            ClassKind::Rt => self.sched.rt_select(t, waker_cpu, now),
            ClassKind::Deadline if kind == WakeKind::Wakeup => self.sched.dl_select(t, waker_cpu, now),
            // a new DL thread is placed as the SCHED_OTHER thread rt-app starts it as
            _ => self.sched.ask(now, waker_cpu, |placement, view| placement.select_cpu(view, t, kind)),
        };
        let allowed = self.sched.entity(t).allowed;
        if !allowed.contains(target) {
            // a placement may keep the previous CPU, which a `SetSched` may have taken from
            // the thread while it slept: the core's `select_fallback_rq` (one node: the
            // lowest-numbered allowed CPU)
            debug_assert!(!allowed.contains(from), "placement chose a CPU not allowed");
            target = allowed.first().expect("checked at set-up: not empty");
        }
        self.sched.note_overutilized(target, now, &mut self.out);
        self.sched.update_entity_avg(t, now, &mut self.out); // the time it slept
        if target != from {
            if self.work.cpu_time_us(t) > 0.0 {
                self.sched.count_migration(t);
            }
            if kind == WakeKind::Wakeup {
                self.sched.trace_migrate(t, (from, target, waker_cpu), now, &mut self.out);
                // a fork sets the CPU untraced
            }
            self.move_entity(t, from, target);
        }
        self.sched.trace_wakeup(t, kind == WakeKind::Fork, now, &mut self.out);
        self.resched_ipi(target, waker_cpu);
        let arrival = if kind == WakeKind::Fork { Arrival::Fork } else { Arrival::Wakeup };
        self.enqueue(target, t, arrival);
    }

    /// `t` (runnable, its entity on `cpu`) joins `cpu`'s run queue in its class: runs at once if
    /// the CPU is idle, else waits, preempting the running thread if its class says so.
    pub(super) fn enqueue(&mut self, cpu: usize, t: usize, arrival: Arrival) {
        let now = self.now_us;
        // `enqueue_task` counts its clamps before the class sees it (and asks for a frequency)
        self.sched.uclamp_enqueue(t, cpu);
        self.sched.util_est_enqueue(t, cpu);
        self.sched.update_rq_avg(cpu, now, &mut self.out);
        self.sched.update_curr(cpu, now);
        match self.sched.entity(t).class_kind() {
            ClassKind::Rt => self.enqueue_rt(cpu, t, true),
            ClassKind::Deadline => {
                let arrival = match arrival {
                    Arrival::Fork => DlArrival::New,
                    Arrival::Wakeup => DlArrival::Wakeup,
                    Arrival::Migration => DlArrival::Migration,
                };
                self.enqueue_dl(cpu, t, arrival, true);
            }
            ClassKind::Fair => match self.sched.enqueue_fair(cpu, t, arrival, now) {
                FairEnqueue::RunsNow => self.switch_in(cpu, t, None),
                FairEnqueue::Waits { preempts: true } => self.resched(cpu),
                FairEnqueue::Waits { preempts: false } => {}
            },
        }
    }

    /// Makes `t` runnable where it is, if it is not running already (it continues on its CPU).
    pub(super) fn make_runnable(&mut self, t: usize, waker: Option<usize>) {
        if !self.sched.is_running(t) {
            self.wake(t, waker);
        }
    }

    // ---- a CPU between a thread and idle --------------------------------------------------------

    /// Puts `t` on `cpu`, which must have nothing running; `prev` says who left (`None`: the
    /// CPU was idle: it leaves idle, or takes over kernel work charged ahead).
    pub(super) fn switch_in(&mut self, cpu: usize, t: usize, prev: Option<(u32, PrevState)>) {
        let now = self.now_us;
        let p = self.cpufreq.policy_of(cpu);
        if prev.is_none() && self.kernel.in_burst(cpu, now) {
            // the CPU has not gone back to idle: the thread runs after the rest of the burst
            self.join_kernel_burst(cpu, t);
        } else if prev.is_none() {
            let exit_us = self.wake_cpu(cpu);
            self.work.steal(t, exit_us);
            self.wake_policy(p);
            self.sched.count_wakeup(cpu);
            self.out.trace(TraceEvent::CpuIdle { time_us: now, cpu, state: CPU_IDLE_EXIT });
        }
        let (prev_tid, prev_state) = prev.unwrap_or((0, PrevState::Runnable));
        let next_tid = self.work.tid(t);
        self.out.trace(TraceEvent::SchedSwitch { time_us: now, cpu, prev_tid, prev_state, next_tid });
        self.hw.mark_dirty();
        self.sched.start_running(cpu, t, now, &mut self.out);
        let work = &self.work;
        self.cpufreq.note_ran(t, || work.pmu(t).to_counts());
        if prev.is_none() {
            self.cpufreq.cpu_busy(p);
        }
        if self.work.rtapp_active() {
            self.work.rtapp_switched_in(&mut self.out, t, now, cpu);
        }
    }

    /// The running thread of `cpu` stops (to `state`: asleep, suspended or done) and leaves the
    /// run queue; the CPU runs the next thread or goes idle.
    fn switch_out(&mut self, cpu: usize, state: ThreadState, prev_state: PrevState) {
        let (t, prev_class) = self.sched.switch_out(cpu, state, self.now_us, &mut self.out);
        let prev = self.sched.prev(t, prev_state);
        self.reschedule(cpu, prev, prev_class);
    }

    /// `cpu` has nothing running (`prev`, of class `prev_class`, just left): run the next
    /// thread, or go idle.
    pub(super) fn reschedule(&mut self, cpu: usize, prev: (u32, PrevState), prev_class: ClassKind) {
        self.hw.mark_dirty();
        match self.pick_next(cpu, prev_class) {
            Next::Run(next) => {
                self.switch_in(cpu, next, Some(prev));
                // `set_next_task_dl`: DL tasks left waiting here may run elsewhere
                if self.sched.entity(next).is_dl() && self.sched.dl_waiting(cpu) {
                    self.push_dl(cpu);
                }
            }
            next => {
                let now = self.now_us;
                self.cpufreq.cpu_idle(self.cpufreq.policy_of(cpu));
                self.sched.cpu_goes_idle(cpu);
                let (prev_tid, prev_state) = prev;
                self.out.trace(TraceEvent::SchedSwitch { time_us: now, cpu, prev_tid, prev_state, next_tid: 0 });
                self.out.trace(TraceEvent::CpuIdle { time_us: now, cpu, state: STATE_WFI });
                // a thread running elsewhere is moved here by the stopper on its CPU while this
                // one idles
                if let Next::Pull(t) = next {
                    self.migrate(t, cpu);
                }
                if self.sched.curr(cpu).is_none() {
                    self.rcu_enter_idle(cpu);
                    self.enter_deep_idle(cpu, self.now_us);
                }
            }
        }
    }

    /// The next thread for a CPU: the earliest deadline waiting there (after a DL task left,
    /// with the earlier ones `pull_dl_task` takes from the others), else the highest RT priority
    /// waiting there, else (after an RT or DL task left) the best RT task waiting elsewhere
    /// that may run here (`pull_rt_task`), else the smallest vruntime waiting there, else what
    /// the placement's new-idle balance pulls: a waiting thread runs at once, a running one
    /// (HMP's idle pull) comes through the stopper.
    fn pick_next(&mut self, cpu: usize, prev_class: ClassKind) -> Next {
        let now = self.now_us;
        if prev_class == ClassKind::Deadline {
            self.pull_dl(cpu);
        }
        if let Some(t) = self.sched.take_first_dl_or_rt(cpu) {
            return Next::Run(t);
        }
        if self.sched.may_pull_rt(cpu, prev_class) {
            if let Some(t) = self.sched.rt_pull(cpu, now) {
                self.move_waiting(t, cpu, cpu);
                return Next::Run(t);
            }
        }
        if let Some(t) = self.sched.take_first_cfs(cpu) {
            return Next::Run(t);
        }
        let pull = self.sched.ask(now, cpu, |placement, view| placement.balance_newidle(view, cpu));
        self.sched.note_overutilized(cpu, now, &mut self.out);
        let Some(pull) = pull else {
            return Next::Idle;
        };
        let t = pull.thread;
        debug_assert!(!self.sched.entity(t).is_rt(), "CFS balancing moves CFS tasks only");
        if self.sched.is_running(t) {
            return Next::Pull(t);
        }
        debug_assert!(pull.to_cpu == cpu && self.sched.state(t) == ThreadState::Runnable);
        self.move_waiting(t, cpu, cpu);
        self.sched.join_to_run(cpu, t, now, &mut self.out);
        Next::Run(t)
    }

    /// The running thread of `cpu` must give way (`resched_curr`): now, or once the zero-work
    /// phases of the thread that caused it are done when that thread runs here.
    pub(super) fn resched(&mut self, cpu: usize) {
        if !self.sched.defer_resched(cpu) {
            self.preempt(cpu);
        }
    }

    /// The running thread of `cpu` goes back to its queue if a waiting one ranks before it
    /// (`Scheduler::preempt_choice`), a DL server out of runtime first giving way.
    pub(super) fn preempt(&mut self, cpu: usize) {
        let now = self.now_us;
        self.sched.update_curr(cpu, now);
        self.sched.update_util(cpu, now, &mut self.out);
        if self.dl_update_curr(cpu) {
            return; // throttled: the next task runs
        }
        if let Some((t, next)) = self.sched.preempt_choice(cpu, now) {
            self.switch_to(cpu, t, next);
        }
    }

    /// The running thread of `cpu` lets the next waiting thread run, if there is one
    /// (`sched_yield`: CFS marks it the skip buddy, so the next pick passes over it once; an RT
    /// task goes to the tail of its priority, behind the others of its priority).
    pub(super) fn yield_cpu(&mut self, cpu: usize) {
        let now = self.now_us;
        self.sched.update_curr(cpu, now);
        self.sched.update_util(cpu, now, &mut self.out);
        let t = self.sched.curr(cpu).expect("running");
        if self.sched.entity(t).is_rt() {
            return self.rt_requeue_tail(cpu, t);
        }
        if self.sched.entity(t).is_dl() {
            return self.dl_yield(cpu, t);
        }
        self.sched.yield_fair(cpu, t);
        if let Some(next) = self.sched.pick_cfs(cpu, Some(t), true).filter(|&next| next != t) {
            self.switch_to(cpu, t, next);
        }
    }

    /// `t`, running on `cpu`, goes back to its class's queue and the waiting `next` runs; a
    /// preempted RT or DL task that may run elsewhere goes there (`task_woken_rt`/post-schedule
    /// push).
    pub(super) fn switch_to(&mut self, cpu: usize, t: usize, next: usize) {
        self.sched.put_back(cpu, t, next, self.now_us);
        let prev = self.sched.prev(t, PrevState::Runnable);
        self.switch_in(cpu, next, Some(prev));
        if self.sched.entity(t).is_rt() {
            self.push_rt(cpu);
        }
        if self.sched.entity(t).is_dl() {
            self.push_dl(cpu);
        }
    }

    /// CFS's tick on busy `cpu` at `now`, or its class's: the running thread's vruntime and PELT
    /// signals are accounted; true if it ran its slice while others wait (`check_preempt_tick`).
    pub(super) fn tick_cpu(&mut self, cpu: usize) -> bool {
        let now = self.now_us;
        self.sched.update_curr(cpu, now);
        self.sched.update_util(cpu, now, &mut self.out);
        if self.sched.dl_running(cpu) {
            self.dl_update_curr(cpu); // `task_tick_dl`
            return false;
        }
        if let Some(t) = self.sched.curr(cpu).filter(|&t| self.sched.entity(t).is_rt()) {
            if !self.rt_check_runtime(cpu, t) {
                self.rr_tick(cpu, t);
            }
            return false;
        }
        let Some(t) = self.sched.curr(cpu) else { return false };
        self.sched.cfs_tick(cpu, t, now)
    }

    // ---- moving threads --------------------------------------------------------------------------

    /// Moves `t` to `to_cpu`: a waiting thread leaves its queue; a running one is stopped
    /// (its CPU runs the next thread) and starts over there after the platform's stopper
    /// latency — the kernel's active migration.
    pub(super) fn migrate(&mut self, t: usize, to_cpu: usize) {
        let now = self.now_us;
        let from = self.sched.cpu_of(t);
        if from == to_cpu || !self.sched.entity(t).allowed.contains(to_cpu) {
            return;
        }
        // active migration runs on the source CPU (its stopper); a waiting thread is pulled
        let on_cpu = if self.sched.is_running(t) { from } else { to_cpu };
        match self.sched.state(t) {
            ThreadState::Running => {
                let class = self.sched.stop_for_migration(t, from, now, &mut self.out);
                // migration -> schedule on the target (seed 003's forced-migration latency)
                self.work.steal(t, self.platform.sched.active_migration_latency_us);
                let prev = self.sched.prev(t, PrevState::Runnable);
                self.reschedule(from, prev, class);
            }
            ThreadState::Runnable => self.sched.dequeue_for_migration(t, from, now, &mut self.out),
            ThreadState::Sleeping { .. } | ThreadState::Suspended | ThreadState::Done => return,
        }
        self.sched.count_migration(t);
        self.sched.trace_migrate(t, (from, to_cpu, on_cpu), self.now_us, &mut self.out);
        self.move_entity(t, from, to_cpu);
        self.enqueue(to_cpu, t, Arrival::Migration);
    }

    /// Waiting `t` leaves its queue and its entity moves to `to`'s run queue, the move done on
    /// CPU `on` (traced there).
    pub(super) fn move_waiting(&mut self, t: usize, to: usize, on: usize) {
        let now = self.now_us;
        let from = self.sched.cpu_of(t);
        self.sched.dequeue_for_migration(t, from, now, &mut self.out);
        self.sched.count_migration(t);
        self.sched.trace_migrate(t, (from, to, on), now, &mut self.out);
        self.move_entity(t, from, to);
        // `activate_task` on the new CPU: every caller queues or runs it there
        self.sched.uclamp_enqueue(t, to);
        self.sched.util_est_enqueue(t, to);
    }

    /// `t`'s entity moves from `from`'s run queue to `to`'s (`Scheduler::move_entity`), and on
    /// another cluster it finds a cold cache.
    fn move_entity(&mut self, t: usize, from: usize, to: usize) {
        self.sched.move_entity(t, from, to, self.now_us, &mut self.out);
        let (from_cluster, to_cluster) = (self.sched.cluster_of(from), self.sched.cluster_of(to));
        let refill_us = self.hw.cold_cache_us(&self.work.phase(t).mem, from_cluster, to_cluster);
        self.work.steal(t, refill_us);
    }

    // ---- a thread stops running ------------------------------------------------------------------

    pub(super) fn sleep_until(&mut self, t: usize, wake_us: f64) {
        let cpu = self.sched.cpu_of(t);
        let timer_cpu = self.timer_cpu_for(cpu);
        if self.sched.is_running(t) {
            self.switch_out(cpu, ThreadState::Sleeping { wake_us }, PrevState::Sleeping);
        } else {
            self.sched.set_state(t, ThreadState::Sleeping { wake_us });
        }
        self.work.arm_timer(t, timer_cpu, wake_us);
    }

    /// `t` sleeps until someone wakes it (a condition or barrier wait).
    pub(super) fn block(&mut self, t: usize) {
        self.work.note_block(t);
        if self.sched.is_running(t) {
            let cpu = self.sched.cpu_of(t);
            self.switch_out(cpu, ThreadState::Suspended, PrevState::Sleeping);
        } else {
            self.sched.set_state(t, ThreadState::Suspended);
        }
    }

    /// `t` went through its last phase.
    pub(super) fn exit_thread(&mut self, t: usize) {
        let now = self.now_us;
        self.work.exit(t, now);
        let cpu = self.sched.cpu_of(t);
        self.work.rtapp_exit(&mut self.out, t, now, cpu);
        if self.sched.is_running(t) {
            self.switch_out(cpu, ThreadState::Done, PrevState::Dead);
        } else {
            self.sched.set_state(t, ThreadState::Done);
        }
        self.sched.exit(t, self.now_us, &mut self.out);
    }
}
