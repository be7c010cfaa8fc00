//! Threads through their phases, and what the scheduler classes do with them (`sched::cfs` and
//! `sched::rt` hold the rules): wake-ups placed by the placement policy (CFS) or the RT class's
//! own choice, enqueue with the CFS vruntime placement and wake-up preemption (an RT task
//! preempts CFS and lower RT priorities at once), context switches to the highest RT priority
//! or else the smallest vruntime, tick preemption, RT pull and new-idle pulls, migration of
//! waiting and running threads (with the cold cache it leaves), and the PELT signals updated
//! where the kernel updates them (enqueue, dequeue, the tick, migration). The RT class's own
//! machinery (push, RR turns, throttling) is in `engine::rt`.

use super::deadline::DlArrival;
use super::state::{KernelBurst, ThreadState};
use super::sync::{object_of, Object};
use super::Engine;
use crate::model::cci;
use crate::model::idle::{STATE_CORE_OFF, STATE_WFI};
use crate::random::uniform;
use crate::result::Mark;
use crate::sched::cfs::{self, Placing};
use crate::sched::cpu_util::{self, CpuSignals, UtilType};
use crate::sched::group::{Entity, Now};
use crate::sched::pelt::{self, State};
use crate::sched::{deadline, rt, ClassKind, CpuMask, WakeKind};
use crate::trace::{PrevState, TraceEvent, CPU_IDLE_EXIT};
use crate::workload::{PhaseKind, SchedAttr};

/// What a CPU whose thread left does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Runs this thread (waiting here, or pulled from another queue).
    Run(usize),
    /// Goes idle; this thread, running elsewhere, is moved here.
    Pull(usize),
    Idle,
}

/// How a thread arrives on a run queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrival {
    Fork,
    Wakeup,
    /// Moved while runnable (its vruntime was already renormalised).
    Migration,
}

impl Engine<'_> {
    // ---- PELT ------------------------------------------------------------------------------

    /// Now in ns, PELT's clock.
    pub(super) fn now_ns(&self) -> u64 {
        (self.now_us * 1000.0).round() as u64
    }

    /// The PELT scale of `cpu` now: its cluster's `cur/max` frequency and its capacity; for the
    /// 3.x load sums LSK-MP 0019's `cur / (max >> 10)` against the thermally capped maximum.
    pub(super) fn pelt_state(&self, cpu: usize, runnable: bool, running: bool) -> State {
        let c = self.sched.cluster_of[cpu];
        let hw = &self.hw.clusters[c];
        let max_khz = self.platform.clusters[c].max_khz();
        let freq_scale = (hw.cur_khz as u64 * pelt::SCALE) / max_khz as u64;
        let load_freq_scale = if self.sched.load_freq_invariant[c] {
            hw.cur_khz as u64 / (max_khz.min(hw.thermal_cap_khz) as u64 >> 10)
        } else {
            pelt::SCALE
        };
        State { runnable, running, freq_scale, cpu_scale: self.sched.capacity[cpu] as u64, load_freq_scale, load: 0 }
    }

    /// Now for `cpu`'s task-group run queues (their PELT scales, when the run has groups).
    pub(super) fn group_now(&self, cpu: usize) -> Now {
        let scale = if self.sched.groups.is_active() { self.pelt_state(cpu, false, false) } else { State::IDLE };
        Now { us: self.now_us, ns: self.now_ns(), scale }
    }

    /// Accounts `t`'s PELT signals up to now in the state it has been in since the last update.
    pub(super) fn update_entity_avg(&mut self, t: usize) {
        // an RT or DL task has no CFS signal to update (5.10 tracks their time per run queue)
        if !self.sched.track_util || !self.sched.entities[t].is_fair() {
            return;
        }
        let cpu = self.sched.entities[t].cpu;
        let state = match self.threads[t].state {
            ThreadState::Running => self.pelt_state(cpu, true, true),
            ThreadState::Runnable => self.pelt_state(cpu, true, false),
            _ => State::IDLE,
        };
        let now = self.now_ns();
        if self.sched.entities[t].avg.update(now, state) {
            self.trace_pelt_se(t);
        }
    }

    /// Accounts `cpu`'s CFS run-queue signals up to now (runnable while a CFS task is queued
    /// there, running while one runs).
    pub(super) fn update_rq_avg(&mut self, cpu: usize) {
        if !self.sched.track_util {
            return;
        }
        let rq = &self.sched.rqs[cpu];
        let state = self.pelt_state(cpu, rq.cfs_nr_running() > 0, rq.cfs_curr().is_some());
        let now = self.now_ns();
        if self.sched.rqs[cpu].avg.update(now, state) {
            self.trace_pelt_cfs(cpu);
        }
    }

    /// The run queue's and its running thread's signals up to now (before either changes).
    pub(super) fn update_util(&mut self, cpu: usize) {
        self.update_rt_avg(cpu);
        self.update_dl_avg(cpu);
        self.update_rq_avg(cpu);
        if let Some(t) = self.sched.rqs[cpu].curr {
            self.update_entity_avg(t);
        }
    }

    /// The CPU's PELT utilisation now (`cfs_rq->avg.util_avg`).
    pub(super) fn cpu_util(&mut self, cpu: usize) -> u32 {
        self.update_rq_avg(cpu);
        self.sched.rqs[cpu].avg.util_avg as u32
    }

    /// What schedutil reads: `schedutil_cpu_util`'s FREQUENCY_UTIL (`sched::cpu_util`) of the
    /// CPU's CFS utilisation (`sugov_get_util`).
    pub(super) fn cpu_util_for_frequency(&mut self, cpu: usize) -> u32 {
        // the CFS signal is brought up to date (and traced) only where it is read
        let util_cfs = if cpu_util::rt_asks_for_the_top(&self.cpu_signals(cpu), UtilType::Frequency) {
            0
        } else {
            u64::from(self.cpu_util(cpu))
        };
        let max = u64::from(self.sched.capacity[cpu]);
        cpu_util::schedutil_cpu_util(&self.cpu_signals(cpu), util_cfs, max, UtilType::Frequency, None) as u32
    }

    /// What `schedutil_cpu_util` reads of `cpu` now.
    fn cpu_signals(&self, cpu: usize) -> CpuSignals<'_> {
        CpuSignals { rq: &self.sched.rqs[cpu], now_ns: self.now_ns(), uclamp_used: self.sched.uclamp_used }
    }

    // ---- phases ----------------------------------------------------------------------------

    /// Sets the thread up for its current phase (or finishes it). `waker` is the CPU whose
    /// thread made it runnable (for the trace), if another thread did.
    ///
    /// A running thread goes through its zero-work phases at once, and a thread it wakes on
    /// its own CPU preempts it only after them: `resume` then `suspend` is one step, as an
    /// Android binder call that wakes its target and waits for the reply in one system call
    /// (the kernel preempts at the return to user, which does not come in between).
    pub(super) fn enter_phase(&mut self, t: usize, waker: Option<usize>) {
        let cpu = self.sched.entities[t].cpu;
        let defers = self.threads[t].state == ThreadState::Running && self.deferred_preempt.is_none();
        if defers {
            self.deferred_preempt = Some((cpu, false));
        }
        let yielded = self.enter_phases(t, waker);
        // a running thread whose CPU a `SetSched` phase disallowed moves (the stopper's
        // migration, to the first allowed CPU: `__set_cpus_allowed_ptr`'s cpumask_any_and)
        let (allowed, on) = (self.sched.entities[t].allowed, self.sched.entities[t].cpu);
        if self.threads[t].state == ThreadState::Running && !allowed.contains(on) {
            self.migrate(t, allowed.first().expect("checked at set-up: not empty"));
        }
        if defers {
            let preempts = self.deferred_preempt.take().is_some_and(|(_, woken)| woken);
            if self.sched.rqs[cpu].curr == Some(t) {
                if yielded {
                    self.yield_cpu(cpu);
                } else if preempts {
                    self.preempt(cpu);
                }
            }
        }
    }

    /// Goes through `t`'s phases until one takes time; true if it went through a `yield`.
    fn enter_phases(&mut self, t: usize, waker: Option<usize>) -> bool {
        let mut yielded = false;
        for step in 0u64.. {
            if step == self.config.max_events_without_progress {
                // work-less phases looping inside this one event: the run ends as stuck
                self.out.stuck = true;
                break;
            }
            let th = &self.threads[t];
            let task = &self.tasks[th.task];
            if th.progress.phase >= task.phases.len() {
                let prologue = task.prologue_phases;
                let p = &mut self.threads[t].progress;
                p.repeats_left = p.repeats_left.saturating_sub(1);
                if p.repeats_left == 0 {
                    self.exit_thread(t);
                    break;
                }
                p.phase = prologue;
                continue;
            }
            let phase = th.progress.phase;
            self.rtapp_enter(t, phase);
            let th = &self.threads[t];
            let task = &self.tasks[th.task];
            let ips = self.reference_ips[th.task][phase];
            if let Some(name) = &task.phases[phase].mark {
                self.out.marks.push(Mark { time_s: self.now_us * 1e-6, tid: th.tid, name: name.clone() });
            }
            let task = &self.tasks[self.threads[t].task];
            let goes_on = match &task.phases[phase].kind {
                &PhaseKind::Compute { instructions } => {
                    let instructions = self.rcuo_pass_instructions(t).unwrap_or(instructions);
                    self.threads[t].progress.work_left = instructions;
                    self.make_runnable(t, waker);
                    false
                }
                // nanosleep of nothing returns at once: its expired hrtimer wakes the sleeper
                // before it would schedule (do_nanosleep)
                PhaseKind::Sleep { duration_us: 0 } => true,
                &PhaseKind::Sleep { duration_us } => {
                    self.sleep_until(t, self.now_us + duration_us as f64);
                    false
                }
                &PhaseKind::Periodic { run_us, count, period_us } => {
                    // Periodic threads start at a random phase within their period, as
                    // independent tasks on a real system do.
                    let offset_us = if period_us > 0 { uniform(&mut self.rng, period_us as f64) } else { 0.0 };
                    let p = &mut self.threads[t].progress;
                    p.jobs_left = count;
                    p.next_release_us = self.now_us + offset_us;
                    p.work_left = run_us * ips;
                    if offset_us > 0.0 {
                        self.sleep_until(t, self.now_us + offset_us);
                    } else {
                        self.make_runnable(t, waker);
                    }
                    false
                }
                // an rcuo kthread with callbacks waiting does not sleep
                PhaseKind::Suspend { .. } if self.rcuo_with_work(t).is_some() => true,
                PhaseKind::Suspend { event } => {
                    let id = self.sync.id(Object::Condition, event);
                    self.wait_on(t, id);
                    false
                }
                PhaseKind::Parallel { .. } => {
                    self.enter_parallel(t, waker);
                    false
                }
                PhaseKind::Resume { event } => {
                    let id = self.sync.id(Object::Condition, event);
                    let cpu = self.sched.entities[t].cpu;
                    self.wake_all(id, cpu);
                    true
                }
                PhaseKind::Sync { op, object } => {
                    let (op, id) = (*op, self.sync.id(object_of(*op), object));
                    self.sync_op(t, op, id)
                }
                &PhaseKind::Runtime { duration_us } if duration_us > 0 => {
                    self.start_runtime(t, duration_us, waker);
                    false
                }
                PhaseKind::Runtime { .. } => true,
                &PhaseKind::Timer { ref timer, period_us, relative, per_thread, origin_us } => {
                    let id = self.sync.id(Object::Timer, timer);
                    self.timer_wait(t, id, period_us, relative, per_thread, origin_us)
                }
                PhaseKind::Yield => {
                    yielded = true;
                    true
                }
                PhaseKind::SetSched(attr) => {
                    let attr = attr.clone();
                    self.set_sched(t, &attr);
                    true
                }
                PhaseKind::Fork { task } => {
                    let forked = self.sync.fork_target(task);
                    self.fork(forked, self.sched.entities[t].cpu);
                    true
                }
            };
            if !goes_on {
                break;
            }
            self.threads[t].progress.phase += 1;
        }
        yielded
    }

    pub(super) fn job_done(&mut self, t: usize) {
        let th = &self.threads[t];
        let phase = th.progress.phase;
        if let PhaseKind::Parallel { .. } = self.tasks[th.task].phases[phase].kind {
            return self.parallel_job_done(t);
        }
        if let PhaseKind::Periodic { run_us, period_us, .. } = self.tasks[th.task].phases[phase].kind {
            let ips = self.reference_ips[th.task][phase];
            let p = &mut self.threads[t].progress;
            p.jobs_left -= 1;
            if p.jobs_left > 0 {
                p.next_release_us += period_us as f64;
                p.work_left = run_us * ips;
                if p.next_release_us > self.now_us {
                    let wake = p.next_release_us;
                    self.sleep_until(t, wake);
                }
                // else: overrun, the next job starts at once on this CPU
                return;
            }
        }
        self.threads[t].progress.phase += 1;
        self.enter_phase(t, None);
    }

    pub(super) fn make_runnable(&mut self, t: usize, waker: Option<usize>) {
        if self.threads[t].state != ThreadState::Running {
            self.wake(t, waker);
        } // else it continues on its CPU
    }

    pub(super) fn sleep_until(&mut self, t: usize, wake_us: f64) {
        let was_running = self.threads[t].state == ThreadState::Running;
        let cpu = self.sched.entities[t].cpu;
        if was_running {
            self.switch_out(cpu, ThreadState::Sleeping { wake_us }, PrevState::Sleeping);
        } else {
            self.threads[t].state = ThreadState::Sleeping { wake_us };
        }
        let th = &mut self.threads[t];
        th.timer_seq = th.timer_seq.wrapping_add(1);
        self.timers.arm(cpu, wake_us, t, th.timer_seq);
    }

    /// `t` sleeps until someone wakes it (a condition or barrier wait).
    pub(super) fn block(&mut self, t: usize) {
        self.look_for_deadlock |= !self.threads[t].kernel;
        if self.threads[t].state == ThreadState::Running {
            let cpu = self.sched.entities[t].cpu;
            self.switch_out(cpu, ThreadState::Suspended, PrevState::Sleeping);
        } else {
            self.threads[t].state = ThreadState::Suspended;
        }
    }

    /// `t` takes the attributes: its allowed CPUs, and if given its clamps, nice value (its
    /// weight changes on its run queue at once, its vruntime does not: `reweight_entity`, 5.10)
    /// and class.
    fn set_sched(&mut self, t: usize, attr: &SchedAttr) {
        let se = &mut self.sched.entities[t];
        se.allowed = match &attr.cpus {
            Some(cpus) => CpuMask::of(cpus.iter().copied()).and(self.sched.user_cpus),
            None => self.sched.user_cpus,
        };
        se.uclamp_req = se.uclamp_req.then(attr.util_min, attr.util_max);
        if let Some(nice) = attr.nice {
            self.sched.entities[t].nice = nice;
            self.set_weight(t);
            self.out.note_prio(self.threads[t].tid, self.sched.entities[t].kernel_prio());
        }
        if let Some(class) = attr.class {
            self.set_class(t, class);
        }
        if attr.util_min.is_some() || attr.util_max.is_some() {
            self.uclamp_update(t);
        }
        if let Some(path) = &attr.taskgroup {
            let g = self.sched.groups.find(path).expect("the run's groups hold every group its phases name");
            self.set_group(t, g);
        }
    }

    /// `t`'s weight follows its policy and nice value (`set_load_weight`); on a CFS run queue
    /// (running or waiting) the queue's load changes at once, its vruntime does not.
    fn set_weight(&mut self, t: usize) {
        let se = &mut self.sched.entities[t];
        let (cpu, old, vruntime) = (se.cpu, se.weight, se.vruntime);
        se.weight = cfs::weight_for(se.class, se.nice);
        if se.weight == old {
            return;
        }
        let now = self.group_now(cpu);
        let s = &mut self.sched;
        let rq = &mut s.rqs[cpu];
        if rq.cfs_curr() == Some(t) || rq.queue.contains(t, vruntime) {
            s.groups.reweight_task(cpu, t, old, rq, &s.entities, &now);
        }
    }

    /// `t` moves to task group `g` (`sched_move_task`: rt-app writes its tid to the group's
    /// `tasks`): off its run queues if on them, its utilisation and load out of its old groups'
    /// signals and into the new ones', its vruntime renormalised to its new group's run queue
    /// (`task_move_group_fair`), and back; a running thread gives way if the pick says so, once
    /// its zero-work phases are done (`resched_curr`). An RT thread only changes group.
    fn set_group(&mut self, t: usize, g: usize) {
        if self.sched.groups.of(t) == g {
            return;
        }
        let cpu = self.sched.entities[t].cpu;
        let cfs = self.sched.entities[t].is_fair();
        let running = cfs && self.threads[t].state == ThreadState::Running;
        let waiting = cfs && self.threads[t].state == ThreadState::Runnable && self.is_queued(t);
        if running {
            self.update_curr(cpu);
            self.update_util(cpu);
            self.cfs_leave(cpu, t);
            let now = self.group_now(cpu);
            self.sched.groups.put_prev(cpu, t, &now);
        } else if waiting {
            self.dequeue_waiting(t);
        }
        let old = self.sched.groups.of(t);
        let th = &mut self.threads[t];
        self.out.group_cpu_us.resize(self.sched.groups.len(), 0.0);
        self.out.group_cpu_us[old] += th.cpu_time_us - th.cpu_time_in_group_from_us;
        th.cpu_time_in_group_from_us = th.cpu_time_us;
        let now = self.group_now(cpu);
        let s = &mut self.sched;
        s.groups.detach(cpu, t, &mut s.rqs[cpu], &s.entities, &now);
        let old_min = s.groups.min_vruntime(cpu, old, &s.rqs[cpu]);
        s.groups.assign(t, g);
        let se = &mut s.entities[t];
        se.vruntime = se.vruntime - old_min + s.groups.min_vruntime(cpu, g, &s.rqs[cpu]);
        // the new group restricts its clamps (any class: a cgroup holds RT tasks too)
        self.uclamp_update(t);
        if running {
            self.cfs_join(cpu, t);
            let now = self.group_now(cpu);
            // `set_next_task` sets every level anew
            self.sched.groups.forget_prev(cpu);
            self.sched.groups.set_next(cpu, t, &now);
            self.sched.rqs[cpu].slice_start_us = self.now_us;
            self.resched(cpu);
        } else if waiting {
            self.enqueue(cpu, t, Arrival::Migration);
        }
    }

    /// CFS `t` (running, or waiting and off its timeline) leaves `cpu`'s run queues' loads.
    fn cfs_leave(&mut self, cpu: usize, t: usize) {
        let now = self.group_now(cpu);
        let s = &mut self.sched;
        s.groups.leave(cpu, t, &mut s.rqs[cpu], &s.entities, &now);
    }

    /// CFS `t` joins `cpu`'s run queues' loads (its signals its groups' first, if not there).
    fn cfs_join(&mut self, cpu: usize, t: usize) {
        let now = self.group_now(cpu);
        let tunables = self.sched.cfs;
        let s = &mut self.sched;
        s.groups.attach(cpu, t, &mut s.rqs[cpu], &s.entities, &now);
        s.groups.join(cpu, t, &mut s.rqs[cpu], &s.entities, &now, &tunables);
    }

    /// `t` changes class or RT priority (`__sched_setscheduler`): it leaves its class's queue
    /// and joins the other's (its CFS load and utilisation leave or join the run queue's:
    /// `switched_from_fair`, `switched_to_fair`); a running thread that now ranks lower gives
    /// way once its zero-work phases are done.
    fn set_class(&mut self, t: usize, class: rt::SchedClass) {
        let old = self.sched.entities[t].class;
        if old == class {
            return;
        }
        debug_assert!(old.dl().is_none() && class.dl().is_none(), "a DL task's policy is its own from start to end");
        if old.is_fair() && class.is_fair() {
            // SCHED_OTHER <-> SCHED_IDLE: the same class, a new weight (`set_load_weight`);
            // running, it gives way if the pick says so
            self.update_curr(self.sched.entities[t].cpu);
            self.sched.entities[t].class = class;
            self.set_weight(t);
            if self.threads[t].state == ThreadState::Running {
                self.resched(self.sched.entities[t].cpu);
            }
            self.out.note_prio(self.threads[t].tid, self.sched.entities[t].kernel_prio());
            return;
        }
        let cpu = self.sched.entities[t].cpu;
        let running = self.threads[t].state == ThreadState::Running;
        // runnable but on no queue yet: a new thread's first phases
        let waiting = self.threads[t].state == ThreadState::Runnable && self.is_queued(t);
        if waiting {
            self.dequeue_waiting(t);
        }
        let was_cfs = old.is_fair();
        if running {
            self.update_curr(cpu);
            self.update_util(cpu);
            if was_cfs {
                self.cfs_leave(cpu, t);
            }
            self.stop_running(cpu, t);
        }
        if was_cfs && (running || waiting) {
            if self.sched.track_util {
                let avg = self.sched.entities[t].avg;
                self.sched.rqs[cpu].avg.detach(&avg);
            }
            let now = self.group_now(cpu);
            let s = &mut self.sched;
            s.groups.detach(cpu, t, &mut s.rqs[cpu], &s.entities, &now);
        }
        let se = &mut self.sched.entities[t];
        se.class = class;
        se.weight = cfs::weight_for(class, se.nice); // off every CFS queue here
        se.rr_slice_left_ticks = self.sched.rr_slice_ticks;
        if class.rt_priority().is_none() {
            // joins CFS at its run queue's minimum (`attach_task_cfs_rq`)
            let s = &self.sched;
            self.sched.entities[t].vruntime = s.groups.min_vruntime(cpu, s.groups.of(t), &s.rqs[cpu]);
        }
        // `__setscheduler_uclamp`: the new class's default util_min where it asked none
        self.uclamp_update(t);
        if running {
            let rq = &mut self.sched.rqs[cpu];
            rq.curr = Some(t);
            rq.rt.running = class.rt_priority();
            rq.slice_start_us = self.now_us;
            rq.exec_start_us = self.now_us;
            if class.rt_priority().is_none() {
                self.cfs_join(cpu, t);
                self.attach_avg(cpu, t);
                let now = self.group_now(cpu);
                self.sched.groups.set_next(cpu, t, &now);
            } else {
                self.sched.groups.forget_prev(cpu);
                self.start_rt_bandwidth();
            }
            let lower = class.rt_priority().unwrap_or(0) < old.rt_priority().unwrap_or(0);
            match &mut self.deferred_preempt {
                Some((deferred, woken)) if *deferred == cpu => *woken |= lower,
                _ if lower => self.preempt(cpu),
                _ => {}
            }
        } else if waiting {
            self.enqueue(cpu, t, Arrival::Migration);
        }
        self.out.note_prio(self.threads[t].tid, self.sched.entities[t].kernel_prio());
    }

    /// A CFS task's utilisation joins `cpu`'s run queue's signal.
    fn attach_avg(&mut self, cpu: usize, t: usize) {
        if self.sched.track_util {
            self.update_rq_avg(cpu);
            let mut avg = self.sched.entities[t].avg;
            self.sched.rqs[cpu].avg.attach(&mut avg);
            self.sched.entities[t].avg = avg;
        }
    }

    fn exit_thread(&mut self, t: usize) {
        self.threads[t].finish_us = self.now_us;
        if !self.threads[t].kernel {
            self.live_user_threads -= 1;
            self.look_for_deadlock = true; // the others may wait on what it never gave
        }
        self.rtapp_exit(t);
        let cpu = self.sched.entities[t].cpu;
        if self.threads[t].state == ThreadState::Running {
            self.switch_out(cpu, ThreadState::Done, PrevState::Dead);
        } else {
            self.threads[t].state = ThreadState::Done;
        }
        self.uclamp_dequeue(t);
        // an exiting task takes its utilisation with it (`detach_entity_load_avg`)
        if self.sched.track_util && self.sched.entities[t].is_fair() {
            let se = self.sched.entities[t].avg;
            self.sched.rqs[cpu].avg.detach(&se);
            self.trace_pelt_cfs(cpu);
        }
        let now = self.group_now(cpu);
        let s = &mut self.sched;
        s.groups.detach(cpu, t, &mut s.rqs[cpu], &s.entities, &now);
    }

    // ---- CFS -------------------------------------------------------------------------------

    /// Accounts the running CFS thread's virtual runtime up to now, and its groups' entities'
    /// (`update_curr` at each level).
    fn update_curr(&mut self, cpu: usize) {
        let s = &mut self.sched;
        let rq = &mut s.rqs[cpu];
        let Some(t) = rq.cfs_curr() else { return };
        let delta_us = self.now_us - rq.exec_start_us;
        if delta_us > 0.0 {
            let se = &mut s.entities[t];
            se.vruntime += cfs::delta_fair(delta_us, se.weight);
            se.exec_start_us = self.now_us;
            rq.exec_start_us = self.now_us;
        }
        s.groups.update_curr(cpu, t, rq, &s.entities, self.now_us);
    }

    /// The CFS thread to run next on `cpu` (`pick_next_task_fair`, `sched::group`): with
    /// `curr`, the running one competes; `yielding`, it gives way to any other.
    fn pick_cfs(&self, cpu: usize, curr: Option<usize>, yielding: bool) -> Option<usize> {
        let s = &self.sched;
        s.groups.pick(cpu, &s.rqs[cpu], &s.entities, curr, yielding)
    }

    /// Makes `t` runnable on the CPU the placement policy picks; `waker_cpu` is the CPU that
    /// woke it (for the trace), if any.
    pub(super) fn wake(&mut self, t: usize, waker_cpu: Option<usize>) {
        let kind = self.wake_kind(t);
        let from = self.sched.entities[t].cpu;
        let waker_cpu = waker_cpu.unwrap_or(from); // a sleep timer fires where it was armed
        if kind == WakeKind::Wakeup {
            self.trace_waking(t, waker_cpu); // a new task has no sched_waking
        }
        let fitness = self.sched.rt_fitness;
        let mut target = match self.sched.entities[t].class_kind() {
            ClassKind::Rt => self.sched.ask(self.now_us, waker_cpu, |_, view| rt::select_cpu(view, t, fitness)),
            ClassKind::Deadline if kind == WakeKind::Wakeup => {
                self.sched.ask(self.now_us, waker_cpu, |_, view| deadline::select_cpu(view, t, fitness))
            }
            // a new DL thread is placed as the SCHED_OTHER thread rt-app starts it as
            _ => self.sched.ask(self.now_us, waker_cpu, |placement, view| placement.select_cpu(view, t, kind)),
        };
        let allowed = self.sched.entities[t].allowed;
        if !allowed.contains(target) {
            // a placement may keep the previous CPU, which a `SetSched` may have taken from
            // the thread while it slept: the core's `select_fallback_rq` (one node: the
            // lowest-numbered allowed CPU)
            debug_assert!(!allowed.contains(from), "placement chose a CPU not allowed");
            target = allowed.first().expect("checked at set-up: not empty");
        }
        self.note_overutilized(target);
        self.update_entity_avg(t); // the time it slept
        if target != from {
            if self.threads[t].cpu_time_us > 0.0 {
                self.threads[t].migrations += 1;
            }
            if kind == WakeKind::Wakeup {
                self.trace_migrate(t, from, target, waker_cpu); // a fork sets the CPU untraced
            }
            self.move_entity(t, from, target);
        }
        self.trace_wakeup(t, kind == WakeKind::Fork);
        let arrival = if kind == WakeKind::Fork { Arrival::Fork } else { Arrival::Wakeup };
        self.enqueue(target, t, arrival);
    }

    /// `t` (runnable, its entity on `cpu`) joins `cpu`'s run queue: runs at once if the CPU is
    /// idle, else waits, preempting the running thread if CFS's wake-up rule says so.
    fn enqueue(&mut self, cpu: usize, t: usize, arrival: Arrival) {
        // `enqueue_task` counts its clamps before the class sees it (and asks for a frequency)
        self.uclamp_enqueue(t, cpu);
        self.update_rq_avg(cpu);
        self.update_curr(cpu);
        if self.sched.entities[t].is_rt() {
            return self.enqueue_rt(cpu, t, true);
        }
        if self.sched.entities[t].is_dl() {
            let arrival = match arrival {
                Arrival::Fork => DlArrival::New,
                Arrival::Wakeup => DlArrival::Wakeup,
                Arrival::Migration => DlArrival::Migration,
            };
            return self.enqueue_dl(cpu, t, arrival, true);
        }
        let tunables = self.sched.cfs;
        self.cfs_join(cpu, t);
        let s = &mut self.sched;
        let (rq, g) = (&mut s.rqs[cpu], s.groups.of(t));
        let placing = match arrival {
            Arrival::Fork => {
                let slice_us = s.groups.slice_us(cpu, Entity::Task(t), rq, &s.entities, &tunables);
                Some(Placing::New { slice_us, weight: s.entities[t].weight })
            }
            Arrival::Wakeup => Some(Placing::Waking),
            Arrival::Migration => None,
        };
        if let Some(placing) = placing {
            let min = s.groups.min_vruntime(cpu, g, rq);
            let se = &mut s.entities[t];
            se.vruntime = cfs::place_vruntime(min, &tunables, se.vruntime, placing);
        }
        self.threads[t].state = ThreadState::Runnable;
        let Some(curr) = rq.curr else {
            self.switch_in(cpu, t, None);
            return;
        };
        s.groups.insert_task(cpu, t, rq, &s.entities);
        let e = &s.entities;
        // CFS never preempts an RT or DL task
        if arrival != Arrival::Migration && e[curr].is_fair() && s.groups.wakeup_preempts(cpu, curr, t, e, &tunables) {
            self.resched(cpu);
        }
    }

    /// The running thread of `cpu` must give way (`resched_curr`): now, or once the zero-work
    /// phases of the thread that caused it are done when that thread runs here.
    pub(super) fn resched(&mut self, cpu: usize) {
        match &mut self.deferred_preempt {
            Some((deferred, woken)) if *deferred == cpu => *woken = true,
            _ => self.preempt(cpu),
        }
    }

    /// Waiting `t` leaves its queue and its entity moves to `to`'s run queue, the move done on
    /// CPU `on` (traced there).
    pub(super) fn move_waiting(&mut self, t: usize, to: usize, on: usize) {
        let from = self.sched.entities[t].cpu;
        self.update_rq_avg(from);
        self.update_entity_avg(t);
        self.dequeue_waiting(t);
        self.threads[t].migrations += 1;
        self.trace_migrate(t, from, to, on);
        self.move_entity(t, from, to);
        // `activate_task` on the new CPU: every caller queues or runs it there
        self.uclamp_enqueue(t, to);
    }

    /// `t` waits on its CPU's run queue.
    pub(super) fn is_queued(&self, t: usize) -> bool {
        let se = &self.sched.entities[t];
        let rq = &self.sched.rqs[se.cpu];
        match se.class.rt_priority() {
            Some(priority) => rq.rt.contains(t, priority, se.rt_arrival),
            None if se.is_dl() => rq.dl.contains(t, se.dl.deadline_ns),
            None => rq.queue.contains(t, se.vruntime),
        }
    }

    /// Waiting `t` leaves its CPU's run queue (and, CFS, its weight the queue's load).
    pub(super) fn dequeue_waiting(&mut self, t: usize) {
        self.unqueue(t);
        self.uclamp_dequeue(t);
        let se = &self.sched.entities[t];
        if se.is_fair() {
            self.cfs_leave(se.cpu, t);
        }
    }

    /// Waiting `t` leaves its class's queue on its CPU, to run there or to leave the CPU.
    pub(super) fn unqueue(&mut self, t: usize) {
        let s = &mut self.sched;
        let se = &s.entities[t];
        let rq = &mut s.rqs[se.cpu];
        let was_waiting = match se.class.rt_priority() {
            Some(priority) => rq.rt.remove(t, priority, se.rt_arrival),
            None if se.is_dl() => rq.dl.remove(t, se.dl.deadline_ns),
            None => s.groups.remove_task(se.cpu, t, rq, &s.entities),
        };
        debug_assert!(was_waiting, "thread {t} was not waiting on CPU {}", se.cpu);
    }

    /// Running `t` stops running on `cpu` (it stays runnable or leaves; the caller says): an
    /// RT task's class state is brought up to date (what is left of a SCHED_RR slice).
    pub(super) fn stop_running(&mut self, cpu: usize, t: usize) {
        self.account_rt(cpu);
        if self.sched.entities[t].is_fair() {
            let now = self.group_now(cpu);
            self.sched.groups.put_prev(cpu, t, &now);
        }
        if self.sched.rqs[cpu].dl.running.is_some() {
            // the callers have throttled a server found out of runtime
            self.account_dl(cpu);
            self.update_dl_avg(cpu);
            self.sched.rqs[cpu].dl.running = None;
        }
        let rq = &mut self.sched.rqs[cpu];
        rq.curr = None;
        if rq.rt.running.take().is_some() {
            let started_us = rq.slice_start_us;
            let ticks_run = self.ticks_since(started_us);
            let se = &mut self.sched.entities[t];
            se.rr_slice_left_ticks = rt::rr_slice_left(ticks_run, se.rr_slice_left_ticks, self.sched.rr_slice_ticks);
        }
    }

    /// Puts `t` on `cpu`, which must have nothing running; `prev` says who left (`None`: the
    /// CPU was idle).
    pub(super) fn switch_in(&mut self, cpu: usize, t: usize, prev: Option<(u32, PrevState)>) {
        let p = self.policy_of(cpu);
        if prev.is_none() && self.in_kernel_burst(cpu) {
            // the CPU has not gone back to idle: the thread runs after the rest of the burst
            self.join_kernel_burst(cpu, t);
        } else if prev.is_none() {
            let exit_us = self.wake_cpu(cpu);
            self.threads[t].progress.stolen_us += exit_us;
            self.wake_policy(p);
            self.cpus[cpu].wakeups += 1;
            self.trace_idle(cpu, CPU_IDLE_EXIT);
        }
        let (prev_tid, prev_state) = prev.unwrap_or((0, PrevState::Runnable));
        let (time_us, next_tid) = (self.now_us, self.threads[t].tid);
        self.out.trace(TraceEvent::SchedSwitch { time_us, cpu, prev_tid, prev_state, next_tid });
        self.dirty = true;
        self.update_rt_avg(cpu);
        self.update_dl_avg(cpu);
        self.update_rq_avg(cpu);
        self.update_entity_avg(t); // the time it waited
        let pmu = self.threads[t].pmu;
        for policy in &mut self.policies {
            policy.ran.note(t, || pmu.to_counts());
        }
        if prev.is_none() {
            self.policies[p].busy_cpus += 1;
        }
        let rq = &mut self.sched.rqs[cpu];
        rq.curr = Some(t);
        rq.rt.running = self.sched.entities[t].class.rt_priority();
        rq.rt.accounted_us = self.now_us;
        rq.slice_start_us = self.now_us;
        rq.exec_start_us = self.now_us;
        let se = &mut self.sched.entities[t];
        if se.is_dl() {
            rq.dl.running = Some(se.dl.deadline_ns);
            se.dl.exec_start_ns = (self.now_us * 1000.0).round() as u64;
        }
        self.threads[t].state = ThreadState::Running;
        self.sched.entities[t].cpu = cpu;
        self.sched.entities[t].exec_start_us = self.now_us;
        if !self.sched.entities[t].is_fair() {
            self.sched.groups.forget_prev(cpu);
        } else {
            let now = self.group_now(cpu);
            self.sched.groups.set_next(cpu, t, &now);
        }
        self.rtapp_switched_in(t);
    }

    /// The running thread of `cpu` stops (to `state`: asleep, suspended or done) and leaves the
    /// run queue; the CPU runs the next thread or goes idle.
    fn switch_out(&mut self, cpu: usize, state: ThreadState, prev_state: PrevState) {
        self.update_curr(cpu);
        self.update_util(cpu);
        let t = self.sched.rqs[cpu].curr.expect("a thread was running");
        self.uclamp_dequeue(t);
        let prev_class = self.sched.entities[t].class_kind();
        if prev_class == ClassKind::Fair {
            self.cfs_leave(cpu, t);
        }
        // `dequeue_task_dl`: a server out of runtime as it blocks is throttled, off its queue
        let exhausted = self.account_dl(cpu);
        self.stop_running(cpu, t);
        self.threads[t].state = state;
        if prev_class == ClassKind::Deadline {
            if exhausted {
                self.dl_throttle(t);
            }
            self.dl_non_contending(cpu, t);
        }
        self.reschedule(cpu, (self.threads[t].tid, prev_state), prev_class);
    }

    /// `cpu` has nothing running (`prev`, of class `prev_class`, just left): run the next
    /// thread, or go idle.
    pub(super) fn reschedule(&mut self, cpu: usize, prev: (u32, PrevState), prev_class: ClassKind) {
        self.dirty = true;
        match self.pick_next(cpu, prev_class) {
            Next::Run(next) => {
                self.switch_in(cpu, next, Some(prev));
                // `set_next_task_dl`: DL tasks left waiting here may run elsewhere
                if self.sched.entities[next].is_dl() && !self.sched.rqs[cpu].dl.is_empty() {
                    self.push_dl(cpu);
                }
            }
            next => {
                let p = self.policy_of(cpu);
                self.policies[p].busy_cpus -= 1;
                self.sched.groups.forget_prev(cpu);
                let time_us = self.now_us;
                self.out.trace(TraceEvent::SchedSwitch {
                    time_us,
                    cpu,
                    prev_tid: prev.0,
                    prev_state: prev.1,
                    next_tid: 0,
                });
                self.trace_idle(cpu, STATE_WFI);
                // a thread running elsewhere is moved here by the stopper on its CPU while this
                // one idles
                if let Next::Pull(t) = next {
                    self.migrate(t, cpu);
                }
                if self.sched.rqs[cpu].curr.is_none() {
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
        if prev_class == ClassKind::Deadline {
            self.pull_dl(cpu);
        }
        if let Some(t) = self.sched.rqs[cpu].dl.first() {
            self.unqueue(t);
            return Next::Run(t);
        }
        let prev_rt = prev_class != ClassKind::Fair;
        let throttled = self.sched.rqs[cpu].rt.throttled;
        if let Some(t) = self.sched.rqs[cpu].rt.first().filter(|_| !throttled) {
            self.unqueue(t);
            return Next::Run(t);
        }
        if prev_rt && !throttled {
            if let Some(t) = self.sched.ask(self.now_us, cpu, |_, view| rt::pull_candidate(view, cpu)) {
                self.move_waiting(t, cpu, cpu);
                return Next::Run(t);
            }
        }
        if let Some(t) = self.pick_cfs(cpu, None, false) {
            self.unqueue(t);
            return Next::Run(t);
        }
        let pull = self.sched.ask(self.now_us, cpu, |placement, view| placement.balance_newidle(view, cpu));
        self.note_overutilized(cpu);
        let Some(pull) = pull else {
            return Next::Idle;
        };
        let t = pull.thread;
        debug_assert!(!self.sched.entities[t].is_rt(), "CFS balancing moves CFS tasks only");
        if self.threads[t].state == ThreadState::Running {
            return Next::Pull(t);
        }
        debug_assert!(pull.to_cpu == cpu && self.threads[t].state == ThreadState::Runnable);
        self.move_waiting(t, cpu, cpu);
        self.update_rq_avg(cpu);
        self.cfs_join(cpu, t);
        Next::Run(t)
    }

    /// The running thread of `cpu` goes back to its queue if a waiting one ranks before it: an
    /// earlier deadline, any DL task before an RT or CFS one, a higher RT priority, any RT task
    /// before a CFS one, or the smallest vruntime among CFS
    /// tasks (it may be the same thread: then nothing switches, a CFS task starts a new turn).
    pub(super) fn preempt(&mut self, cpu: usize) {
        self.update_curr(cpu);
        self.update_util(cpu);
        if self.dl_update_curr(cpu) {
            return; // throttled: the next task runs
        }
        let rq = &self.sched.rqs[cpu];
        let t = rq.curr.expect("running");
        let e = &self.sched.entities;
        // an earlier deadline, or any DL task before an RT or CFS one
        if let Some(d) = rq.dl.first_deadline() {
            if rq.dl.running.is_none_or(|running| d < running) {
                let next = rq.dl.first().expect("a DL task waits");
                return self.switch_to(cpu, t, next);
            }
        }
        if e[t].is_dl() {
            return;
        }
        if !rq.rt.throttled && rq.rt.highest_waiting() > e[t].class.rt_priority() {
            let next = rq.rt.first().expect("an RT task waits");
            return self.switch_to(cpu, t, next);
        }
        if e[t].is_rt() {
            return;
        }
        match self.pick_cfs(cpu, Some(t), false) {
            Some(next) if next != t => self.switch_to(cpu, t, next),
            // still the one to run: a new turn, no switch
            _ => {
                self.sched.rqs[cpu].slice_start_us = self.now_us;
                self.sched.groups.new_turn(cpu, t, self.now_us);
            }
        }
    }

    /// The running thread of `cpu` lets the next waiting thread run, if there is one
    /// (`sched_yield`: CFS marks it the skip buddy, so the next pick passes over it once; an RT
    /// task goes to the tail of its priority, behind the others of its priority).
    fn yield_cpu(&mut self, cpu: usize) {
        self.update_curr(cpu);
        self.update_util(cpu);
        let t = self.sched.rqs[cpu].curr.expect("running");
        if self.sched.entities[t].is_rt() {
            return self.rt_requeue_tail(cpu, t);
        }
        if self.sched.entities[t].is_dl() {
            return self.dl_yield(cpu, t);
        }
        if let Some(next) = self.pick_cfs(cpu, Some(t), true).filter(|&next| next != t) {
            self.switch_to(cpu, t, next);
        }
    }

    /// `t`, running on `cpu`, goes back to its class's queue (an RT task keeps its place in its
    /// list) and the waiting `next` runs.
    pub(super) fn switch_to(&mut self, cpu: usize, t: usize, next: usize) {
        // both stay on the run queue: its load does not change
        self.unqueue(next);
        let s = &mut self.sched;
        let se = &s.entities[t];
        match se.class.rt_priority() {
            Some(priority) => s.rqs[cpu].rt.insert(t, priority, se.rt_arrival),
            None if se.is_dl() => s.rqs[cpu].dl.insert(t, se.dl.deadline_ns),
            None => s.groups.insert_task(cpu, t, &mut s.rqs[cpu], &s.entities),
        }
        self.stop_running(cpu, t);
        self.threads[t].state = ThreadState::Runnable;
        let prev = (self.threads[t].tid, PrevState::Runnable);
        self.switch_in(cpu, next, Some(prev));
        // a preempted RT task that may run elsewhere goes there (`task_woken_rt`/post-schedule
        // push)
        if self.sched.entities[t].is_rt() {
            self.push_rt(cpu);
        }
        if self.sched.entities[t].is_dl() {
            self.push_dl(cpu);
        }
    }

    /// CFS's tick on busy `cpu` at `now`: the running thread's vruntime and PELT signals are
    /// accounted; true if it ran its slice while others wait (`check_preempt_tick`).
    pub(super) fn tick_cpu(&mut self, cpu: usize) -> bool {
        self.update_curr(cpu);
        self.update_util(cpu);
        if self.sched.rqs[cpu].dl.running.is_some() {
            self.dl_update_curr(cpu); // `task_tick_dl`
            return false;
        }
        let rq = &self.sched.rqs[cpu];
        if let Some(t) = rq.curr.filter(|&t| self.sched.entities[t].is_rt()) {
            if !self.rt_check_runtime(cpu, t) {
                self.rr_tick(cpu, t);
            }
            return false;
        }
        let Some(t) = rq.curr else { return false };
        let now = self.group_now(cpu);
        let s = &mut self.sched;
        s.groups.tick(cpu, t, &mut s.rqs[cpu], &s.entities, &now, &s.cfs)
    }

    /// Moves `t` to `to_cpu`: a waiting thread leaves its queue; a running one is stopped
    /// (its CPU runs the next thread) and starts over there after the platform's stopper
    /// latency — the kernel's active migration.
    pub(super) fn migrate(&mut self, t: usize, to_cpu: usize) {
        let from = self.sched.entities[t].cpu;
        if from == to_cpu || !self.sched.entities[t].allowed.contains(to_cpu) {
            return;
        }
        // active migration runs on the source CPU (its stopper); a waiting thread is pulled
        let on_cpu = if self.threads[t].state == ThreadState::Running { from } else { to_cpu };
        match self.threads[t].state {
            ThreadState::Running => {
                self.update_curr(from);
                self.update_util(from);
                let class = self.sched.entities[t].class_kind();
                debug_assert!(class != ClassKind::Deadline, "a DL task spans its root domain: never moved by affinity");
                if class == ClassKind::Fair {
                    self.cfs_leave(from, t);
                }
                self.stop_running(from, t);
                self.uclamp_dequeue(t);
                self.threads[t].state = ThreadState::Runnable;
                // migration -> schedule on the target (seed 003's forced-migration latency)
                self.threads[t].progress.stolen_us += self.platform.sched.active_migration_latency_us;
                self.reschedule(from, (self.threads[t].tid, PrevState::Runnable), class);
            }
            ThreadState::Runnable => {
                self.update_rq_avg(from);
                self.update_entity_avg(t);
                self.dequeue_waiting(t);
            }
            ThreadState::Sleeping { .. } | ThreadState::Suspended | ThreadState::Done => return,
        }
        self.threads[t].migrations += 1;
        self.trace_migrate(t, from, to_cpu, on_cpu);
        self.move_entity(t, from, to_cpu);
        self.enqueue(to_cpu, t, Arrival::Migration);
    }

    /// `t`'s entity moves from `from`'s run queue to `to`'s: its vruntime is renormalised to
    /// the new queue's minimum, its utilisation leaves one queue's signal and joins the other's
    /// (`migrate_task_rq_fair`), and on another cluster it finds a cold cache.
    fn move_entity(&mut self, t: usize, from: usize, to: usize) {
        self.dl_move_bw(t, from, to);
        let now = self.group_now(from);
        let s = &mut self.sched;
        s.groups.renormalise(t, from, to, &s.rqs, &mut s.entities);
        s.groups.detach(from, t, &mut s.rqs[from], &s.entities, &now);
        s.entities[t].cpu = to;
        if self.sched.track_util {
            let mut avg = self.sched.entities[t].avg;
            self.sched.rqs[from].avg.detach(&avg);
            self.update_rq_avg(to);
            self.sched.rqs[to].avg.attach(&mut avg);
            self.sched.entities[t].avg = avg;
            self.trace_pelt_cfs(from);
            self.trace_pelt_cfs(to);
        }
        let refill_us = self.cold_cache_us(t, self.sched.cluster_of[from], self.sched.cluster_of[to]);
        self.threads[t].progress.stolen_us += refill_us;
    }

    /// The time a thread moved from cluster `from` to `to` spends refilling its caches: the
    /// part of its working set that fitted the caches it left is missed again — in L1 only
    /// within a cluster (the L2 is shared), in L1 and L2 across clusters — at the latencies the
    /// model gives for an idle memory system, overlapped by the core's memory-level
    /// parallelism unless its loads are dependent.
    pub(super) fn cold_cache_us(&self, t: usize, from: usize, to: usize) -> f64 {
        let th = &self.threads[t];
        let mem = &self.tasks[th.task].phases[th.progress.phase.min(self.tasks[th.task].phases.len() - 1)].mem;
        let core = self.platform.core_type_of(to);
        let ghz = self.hw.clusters[to].cur_khz as f64 / 1e6;
        let ws = mem.working_set_bytes() as f64;
        let line = core.line_bytes as f64;
        let mlp = if mem.dependent_loads { 1.0 } else { core.mlp };
        let l1_lines = ws.min(core.l1d_bytes as f64) / line;
        let mut ns = l1_lines * core.l2_hit_cycles / ghz / mlp;
        if from != to {
            let l2_lines = ws.min(self.platform.clusters[from].l2_bytes as f64) / line;
            ns += l2_lines * cci::unloaded_miss_ns(self.platform) / mlp;
        }
        ns * 1e-3
    }

    // ---- kernel work -----------------------------------------------------------------------

    /// `busy_us` of kernel work on `cpu` starting now, charged at once as stolen time (see
    /// `kernel::jitter`): the running thread needs that much longer; an idle CPU is busy for
    /// it (load, cycles, energy; not CFS utilisation: it is interrupt and softirq work).
    pub(super) fn charge_kernel_time(&mut self, cpu: usize, busy_us: f64) {
        let now = self.now_us;
        let c = self.sched.cluster_of[cpu];
        let khz = self.hw.clusters[c].cur_khz;
        match self.sched.rqs[cpu].curr {
            // a busy CPU's cycles are counted with its busy time already (`advance`)
            Some(t) => {
                self.threads[t].progress.stolen_us += busy_us;
            }
            None => {
                let st = &mut self.cpus[cpu];
                st.pmu.cycles += busy_us * khz as f64 / 1000.0;
                st.busy_us += busy_us;
                st.idle_since_sample_us -= busy_us;
                st.wakeups += 1;
                let mut mw =
                    crate::model::power::core_dynamic_mw(self.platform.core_type_of(c), self.volts(c), khz, 1.0);
                // the cluster's shared logic wakes with it unless another CPU keeps it busy
                if !self.sched.cpus_of_cluster[c].iter().any(|&o| self.sched.rqs[o].curr.is_some()) {
                    mw += self.platform.clusters[c].active_mw_at(self.hw.clusters[c].cur_opp);
                }
                self.hw.energy.add_dynamic_mj(c, mw * busy_us * 1e-6);
                self.cpus[cpu].kernel_burst = Some(KernelBurst { until_us: now + busy_us, khz, mw });
                self.out.trace(TraceEvent::CpuIdle { time_us: now, cpu, state: CPU_IDLE_EXIT });
                self.out.trace(TraceEvent::CpuIdle { time_us: now + busy_us, cpu, state: STATE_WFI });
                self.enter_deep_idle(cpu, now + busy_us);
            }
        }
    }

    fn in_kernel_burst(&self, cpu: usize) -> bool {
        self.cpus[cpu].kernel_burst.is_some_and(|b| b.until_us > self.now_us)
    }

    /// A thread switched in on `cpu` while kernel work charged in advance is still under way
    /// (softirqs run before the scheduler returns to a task): the thread waits for the rest as
    /// stolen time, which its own busy time then covers, so the CPU's busy time, cycles and
    /// energy charged for that rest are taken back, and the idle entry traced at the burst's
    /// end is dropped (the CPU never went idle).
    fn join_kernel_burst(&mut self, cpu: usize, t: usize) {
        let Some(burst) = self.cpus[cpu].kernel_burst.take() else { return };
        let rest_us = burst.until_us - self.now_us;
        self.threads[t].progress.stolen_us += rest_us;
        let st = &mut self.cpus[cpu];
        st.busy_us -= rest_us;
        st.idle_since_sample_us += rest_us;
        st.pmu.cycles -= rest_us * burst.khz as f64 / 1000.0;
        self.hw.energy.add_dynamic_mj(self.sched.cluster_of[cpu], -burst.mw * rest_us * 1e-6);
        let until_us = burst.until_us;
        let c = self.sched.cluster_of[cpu];
        // power-downs decided for the burst's end never happen
        if !self.hw.clusters[c].powered && self.hw.clusters[c].off_since_us > self.now_us {
            self.integrate();
            self.hw.clusters[c].powered = true;
            self.dirty = true;
            let state = self.cluster_off_state_of(c);
            let (off_since_us, cluster_cpus) = (self.hw.clusters[c].off_since_us, &self.sched.cpus_of_cluster[c]);
            self.out.drop_recent(|e| {
                matches!(*e, TraceEvent::CpuIdle { time_us, cpu: other, state: s }
                    if s == state && time_us == off_since_us && cluster_cpus.contains(&other))
            });
        }
        // nor does the idle period that was to follow it
        self.cpus[cpu].idle_since_us = None;
        if let Some(off_since_us) = self.cpus[cpu].core_off_since_us.filter(|&since| since > self.now_us) {
            self.integrate();
            self.cpus[cpu].core_off_since_us = None;
            self.dirty = true;
            self.out.drop_recent(|e| {
                matches!(*e, TraceEvent::CpuIdle { time_us, cpu: c, state: STATE_CORE_OFF }
                    if c == cpu && time_us == off_since_us)
            });
        }
        self.out.drop_recent(|e| {
            matches!(*e, TraceEvent::CpuIdle { time_us, cpu: c, state: STATE_WFI } if c == cpu && time_us == until_us)
        });
    }

    /// OS jitter: the burst due on `cpu` now (`kernel::jitter`).
    pub(super) fn kernel_jitter(&mut self, cpu: usize) {
        let exit_us = self.wake_cpu(cpu);
        self.wake_policy(self.policy_of(cpu));
        let busy_us = self.jitter.burst(cpu, self.now_us, exit_us, &self.platform.noise, &mut self.rng);
        self.charge_kernel_time(cpu, busy_us);
    }

    pub(super) fn trace_idle(&mut self, cpu: usize, state: u32) {
        let time_us = self.now_us;
        self.out.trace(TraceEvent::CpuIdle { time_us, cpu, state });
    }
}
