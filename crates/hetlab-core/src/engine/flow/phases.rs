//! Threads through their phases (`work` holds them), and what each phase asks of the kernel:
//! to run, sleep, wait on a named object or wake those waiting on it, fork, yield, change its
//! scheduling attributes; the fork-join pools' shares, chunks and barrier; the run's deadlock.

use crate::engine::scheduler::ThreadState;
use crate::engine::work::{object_of, Arrival, Object, SyncOutcome};
use crate::engine::Engine;
use crate::random::uniform;
use crate::result::{Deadlock, Mark};
use crate::workload::{Allocation, PhaseKind, SyncOp};

impl Engine<'_> {
    /// Sets the thread up for its current phase (or finishes it). `waker` is the CPU whose
    /// thread made it runnable (for the trace), if another thread did.
    ///
    /// A running thread goes through its zero-work phases at once, and a thread it wakes on
    /// its own CPU preempts it only after them: `resume` then `suspend` is one step, as an
    /// Android binder call that wakes its target and waits for the reply in one system call
    /// (the kernel preempts at the return to user, which does not come in between).
    pub(in crate::engine) fn enter_phase(&mut self, t: usize, waker: Option<usize>) {
        let cpu = self.sched.cpu_of(t);
        let defers = self.sched.is_running(t) && self.sched.defer_preemption(cpu);
        let yielded = self.enter_phases(t, waker);
        // a running thread whose CPU a `SetSched` phase disallowed moves (the stopper's
        // migration, to the first allowed CPU: `__set_cpus_allowed_ptr`'s cpumask_any_and)
        let (allowed, on) = (self.sched.entity(t).allowed, self.sched.cpu_of(t));
        if self.sched.is_running(t) && !allowed.contains(on) {
            self.migrate(t, allowed.first().expect("checked at set-up: not empty"));
        }
        if defers {
            let preempts = self.sched.end_deferral();
            if self.sched.curr(cpu) == Some(t) {
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
                self.out.set_stuck();
                break;
            }
            if self.work.progress(t).phase >= self.work.task(t).phases.len() {
                let prologue = self.work.task(t).prologue_phases;
                let p = self.work.progress_mut(t);
                p.repeats_left = p.repeats_left.saturating_sub(1);
                if p.repeats_left == 0 {
                    self.exit_thread(t);
                    break;
                }
                p.phase = prologue;
                continue;
            }
            let phase = self.work.progress(t).phase;
            let (now, cpu, running) = (self.now_us, self.sched.cpu_of(t), self.sched.is_running(t));
            if self.work.rtapp_active() {
                self.work.rtapp_enter(&mut self.out, t, phase, now, cpu, running);
            }
            if let Some(name) = &self.work.task(t).phases[phase].mark {
                self.out.mark(Mark { time_s: now * 1e-6, tid: self.work.tid(t), name: name.clone() });
            }
            let goes_on = match self.work.task(t).phases[phase].kind {
                PhaseKind::Yield => {
                    yielded = true;
                    true
                }
                _ => self.take_phase(t, phase, waker),
            };
            if !goes_on {
                break;
            }
            self.work.next_phase(t);
        }
        yielded
    }

    /// `t` takes its phase `phase` (not a `yield`): true if it goes on to its next at once.
    fn take_phase(&mut self, t: usize, phase: usize, waker: Option<usize>) -> bool {
        let now = self.now_us;
        let ips = self.work.reference_ips(t);
        let spread = self.work.task(t).phases[phase].spread;
        match &self.work.task(t).phases[phase].kind {
            &PhaseKind::Compute { instructions } => {
                let instructions = match self.kernel.kthread_pass_us(t) {
                    Some(us) => us * ips,
                    None => spread.instructions(&mut self.rng, instructions),
                };
                self.work.progress_mut(t).work_left = instructions;
                self.make_runnable(t, waker);
                false
            }
            &PhaseKind::Frames { instructions, frames, vsync_us } => {
                let p = self.work.progress_mut(t);
                p.jobs_left = frames;
                p.work_left = spread.instructions(&mut self.rng, instructions);
                let wake_us = next_vsync_us(now, vsync_us) + spread.sleep_us(&mut self.rng, 0.0);
                self.sleep_until(t, wake_us);
                false
            }
            // nanosleep of nothing returns at once: its expired hrtimer wakes the sleeper
            // before it would schedule (do_nanosleep)
            PhaseKind::Sleep { duration_us: 0 } => true,
            &PhaseKind::Sleep { duration_us } => {
                let duration_us = spread.sleep_us(&mut self.rng, duration_us as f64);
                self.sleep_until(t, now + duration_us);
                false
            }
            &PhaseKind::Periodic { run_us, count, period_us } => {
                // Periodic threads start at a random phase within their period, as
                // independent tasks on a real system do.
                let offset_us = if period_us > 0 { uniform(&mut self.rng, period_us as f64) } else { 0.0 };
                let p = self.work.progress_mut(t);
                p.jobs_left = count;
                p.next_release_us = now + offset_us;
                p.work_left = run_us * ips;
                if offset_us > 0.0 {
                    self.sleep_until(t, now + offset_us);
                } else {
                    self.make_runnable(t, waker);
                }
                false
            }
            // a kernel thread with work waiting (an rcuo kthread's callbacks) does not sleep
            PhaseKind::Suspend { .. } if self.kernel.kthread_has_work(t) => true,
            PhaseKind::Suspend { event } => {
                let id = self.work.sync().id(Object::Condition, event);
                self.kernel.kthread_sleeps(t);
                self.wait_on(t, id);
                false
            }
            PhaseKind::Parallel { .. } => {
                self.enter_parallel(t, waker);
                false
            }
            PhaseKind::Resume { event } => {
                let id = self.work.sync().id(Object::Condition, event);
                self.wake_all(id, self.sched.cpu_of(t));
                true
            }
            PhaseKind::Sync { op, object } => {
                let (op, id) = (*op, self.work.sync().id(object_of(*op), object));
                self.sync_op(t, op, id)
            }
            &PhaseKind::Runtime { duration_us } if duration_us > 0 => {
                self.start_runtime(t, duration_us, waker);
                false
            }
            PhaseKind::Runtime { .. } => true,
            &PhaseKind::Timer { ref timer, period_us, relative, per_thread, origin_us } => {
                let id = self.work.sync().id(Object::Timer, timer);
                self.timer_wait(t, id, (period_us, relative, per_thread, origin_us))
            }
            PhaseKind::SetSched(attr) => {
                let attr = attr.clone();
                self.set_sched(t, &attr);
                true
            }
            PhaseKind::Fork { task } => {
                let forked = self.work.sync().fork_target(task);
                let child = self.work.sync_mut().next_forked(forked);
                if let Some(child) = child {
                    self.enter_phase(child, Some(self.sched.cpu_of(t)));
                }
                true
            }
            PhaseKind::Yield => unreachable!("a yield is taken by enter_phases"),
        }
    }

    /// `t` finished its job: the next job of a periodic phase or a parallel phase's next chunk,
    /// else its next phase.
    pub(in crate::engine) fn job_done(&mut self, t: usize) {
        let phase = self.work.progress(t).phase;
        let kind = &self.work.task(t).phases[phase].kind;
        if let PhaseKind::Parallel { .. } = kind {
            return self.parallel_job_done(t);
        }
        if let &PhaseKind::Frames { instructions, vsync_us, .. } = kind {
            return self.frame_done(t, phase, instructions, vsync_us);
        }
        if let &PhaseKind::Periodic { run_us, period_us, .. } = kind {
            let ips = self.work.reference_ips(t);
            let now = self.now_us;
            let p = self.work.progress_mut(t);
            p.jobs_left -= 1;
            if p.jobs_left > 0 {
                p.next_release_us += period_us as f64;
                p.work_left = run_us * ips;
                if p.next_release_us > now {
                    let wake = p.next_release_us;
                    self.sleep_until(t, wake);
                }
                // else: overrun, the next job starts at once on this CPU
                return;
            }
        }
        self.work.next_phase(t);
        self.enter_phase(t, None);
    }

    /// `t` composed a frame of its `frames` phase `phase`: the next frame at the next vsync, or
    /// its next phase after the last.
    fn frame_done(&mut self, t: usize, phase: usize, instructions: f64, vsync_us: f64) {
        let spread = self.work.task(t).phases[phase].spread;
        let now = self.now_us;
        let p = self.work.progress_mut(t);
        p.jobs_left -= 1;
        if p.jobs_left == 0 {
            self.work.next_phase(t);
            return self.enter_phase(t, None);
        }
        p.work_left = spread.instructions(&mut self.rng, instructions);
        let wake_us = next_vsync_us(now, vsync_us) + spread.sleep_us(&mut self.rng, 0.0);
        self.sleep_until(t, wake_us);
    }

    // ---- fork-join pools ---------------------------------------------------------------------

    /// `t` enters a parallel phase: it takes its share or its first chunk, or goes straight to
    /// the barrier when the pool is already empty.
    fn enter_parallel(&mut self, t: usize, waker: Option<usize>) {
        let (task, phase) = (self.work.task_of(t), self.work.progress(t).phase);
        let PhaseKind::Parallel { total_instructions, allocation } = self.work.task(t).phases[phase].kind else {
            unreachable!("enter_parallel on a parallel phase")
        };
        let nthreads = self.work.task_threads(task);
        self.work.pools_mut().enter(task, phase, total_instructions);
        match allocation {
            Allocation::Static => {
                self.work.progress_mut(t).work_left = total_instructions / nthreads as f64;
                self.make_runnable(t, waker);
            }
            Allocation::Dynamic { .. } => {
                if self.grab_chunk(t) {
                    self.make_runnable(t, waker);
                } else {
                    self.arrive(t);
                }
            }
        }
    }

    /// `t` finished its share or its chunk.
    fn parallel_job_done(&mut self, t: usize) {
        let phase = self.work.progress(t).phase;
        let dynamic = matches!(
            self.work.task(t).phases[phase].kind,
            PhaseKind::Parallel { allocation: Allocation::Dynamic { .. }, .. }
        );
        if !(dynamic && self.grab_chunk(t)) {
            self.arrive(t);
        }
    }

    /// Takes the next chunk of the pool for `t` (false: the pool is empty) and charges the
    /// counter line's transfer from the last grabber's cache.
    fn grab_chunk(&mut self, t: usize) -> bool {
        let (task, phase) = (self.work.task_of(t), self.work.progress(t).phase);
        let PhaseKind::Parallel { allocation: Allocation::Dynamic { chunk_instructions }, .. } =
            self.work.task(t).phases[phase].kind
        else {
            unreachable!("grab_chunk on a dynamic parallel phase")
        };
        let cpu = self.sched.cpu_of(t);
        let Some(chunk) = self.work.pools_mut().grab(task, phase, chunk_instructions, cpu) else {
            return false;
        };
        let transfer_ns = match chunk.counter_from_cpu {
            Some(from) if from != cpu => {
                self.hw.transfer_from_cluster_ns(self.sched.cluster_of(from), self.sched.cluster_of(cpu))
            }
            _ => 0.0,
        };
        self.work.progress_mut(t).work_left = chunk.instructions;
        self.work.steal(t, transfer_ns * 1e-3);
        true
    }

    /// `t` reaches the barrier: it waits, or, the last one, releases everyone.
    fn arrive(&mut self, t: usize) {
        let (task, phase) = (self.work.task_of(t), self.work.progress(t).phase);
        let nthreads = self.work.task_threads(task);
        let Arrival::Releases(waiting) = self.work.pools_mut().arrive(task, phase, t, nthreads) else {
            return self.block(t);
        };
        let cpu = self.sched.cpu_of(t);
        for &w in &waiting {
            self.work.next_phase(w);
            self.enter_phase(w, Some(cpu));
        }
        self.work.next_phase(t);
        self.enter_phase(t, None);
    }

    // ---- named objects -----------------------------------------------------------------------

    /// `t` does `op` on object `id`; true if it goes on to its next phase now, false if it waits.
    fn sync_op(&mut self, t: usize, op: SyncOp, id: usize) -> bool {
        let cpu = self.sched.cpu_of(t);
        match self.work.sync_mut().op(t, op, id) {
            SyncOutcome::GoOn(woken) => {
                if let Some(w) = woken {
                    self.go_on(w, cpu);
                }
                true
            }
            SyncOutcome::ReleaseAll => {
                self.wake_all(id, cpu);
                true
            }
            SyncOutcome::Wait => {
                self.wait_on(t, id);
                false
            }
        }
    }

    /// `t` waits on object `id` until another thread lets it go on.
    fn wait_on(&mut self, t: usize, id: usize) {
        self.block(t);
        self.work.sync_mut().wait(t, id);
    }

    /// Every thread waiting on object `id` goes on, in arrival order; `cpu` woke them.
    fn wake_all(&mut self, id: usize, cpu: usize) {
        let waiting = self.work.sync_mut().take_waiters(id);
        for &w in &waiting {
            self.go_on(w, cpu);
        }
        self.work.sync_mut().give_back(id, waiting);
    }

    /// A waiting thread goes on to its next phase; the thread on `waker_cpu` woke it.
    pub(in crate::engine) fn go_on(&mut self, w: usize, waker_cpu: usize) {
        debug_assert_eq!(self.sched.state(w), ThreadState::Suspended);
        self.work.next_phase(w);
        self.enter_phase(w, Some(waker_cpu));
    }

    /// `t` sleeps to its timer's next expiry; true if that has passed already (an overrun: no
    /// sleep, and a relative timer restarts from now).
    fn timer_wait(&mut self, t: usize, id: usize, timer: (u64, bool, bool, u64)) -> bool {
        let now = self.now_us;
        let (expiry_us, sleeps) = self.work.sync_mut().timer_expiry(t, id, timer, now);
        self.work.rtapp_timer(t, now, expiry_us, timer.0, sleeps);
        if sleeps {
            self.sleep_until(t, expiry_us);
        }
        !sleeps
    }

    /// `t` busies its CPU until `duration_us` of wall-clock time has passed (rt-app
    /// `runtime`): endless work, ended by its own timer (`end_runtime`).
    fn start_runtime(&mut self, t: usize, duration_us: u64, waker: Option<usize>) {
        let end_us = self.now_us + duration_us as f64;
        let p = self.work.progress_mut(t);
        p.work_left = f64::INFINITY;
        p.runtime_end_us = Some(end_us);
        self.work.arm_timer(t, self.sched.cpu_of(t), end_us);
        self.make_runnable(t, waker);
    }

    /// `t`'s runtime is over: a running thread goes on at once, a waiting one when it next
    /// runs (rt-app looks at the clock only while it runs).
    pub(in crate::engine) fn end_runtime(&mut self, t: usize) {
        let p = self.work.progress_mut(t);
        p.runtime_end_us = None;
        p.work_left = 0.0;
        if self.sched.is_running(t) {
            self.job_done(t);
        }
    }

    /// Records a deadlock if every user thread not done waits (`Suspended`): on an object,
    /// at a barrier or to be forked. Only user threads resume, signal, unlock, post or fork,
    /// so none of them will ever go on.
    pub(in crate::engine) fn note_deadlock(&mut self) {
        if self.out.deadlock().is_some() || self.work.live_user_threads() == 0 {
            return;
        }
        // a device interrupt still to come may post what a thread waits on
        if self.kernel.interrupts().is_some_and(|k| k.next_irq_us().is_finite()) {
            return;
        }
        // a user thread on a CPU is no deadlock: the usual answer, found without a scan of
        // every thread (a barrier of thousands of threads checks at each arrival)
        if (0..self.sched.ncpus()).any(|cpu| self.sched.curr(cpu).is_some_and(|t| !self.work.is_kernel(t))) {
            return;
        }
        let user = |t: &usize| !self.work.is_kernel(*t) && self.sched.state(*t) != ThreadState::Done;
        let nthreads = self.work.nthreads();
        if (0..nthreads).filter(user).any(|t| self.sched.state(t) != ThreadState::Suspended) {
            return;
        }
        let waits = (0..nthreads)
            .filter(user)
            .map(|t| {
                let on = match self.work.sync().waited_on(t) {
                    Some((kind, name)) => format!("{} '{name}'{}", kind.label(), self.wakers_of(kind, name)),
                    None => "a barrier or a fork".into(),
                };
                format!("{} waits on {on}", self.work.thread_name(t))
            })
            .collect();
        self.out.note_deadlock(Deadlock { time_s: self.now_us * 1e-6, waits });
    }

    /// Who could end a wait on object `name` of `kind`, when that tells a source that ran out
    /// (every task that wakes it has finished: e.g. a vsync source with fewer periods than the
    /// frames waiting on it) from threads waiting on each other: a mutex's holder (", held by
    /// T"), ", which no task wakes", ", which only NAMES wake, and they have finished", or
    /// nothing (a waker is itself waiting).
    fn wakers_of(&self, kind: Object, name: &str) -> String {
        let sync = self.work.sync();
        if let Some(holder) = (kind == Object::Mutex).then(|| sync.owner(sync.id(kind, name))).flatten() {
            return format!(", held by {}", self.work.thread_name(holder));
        }
        let tasks = self.work.tasks();
        let wakers: Vec<usize> =
            (0..tasks.len()).filter(|&i| tasks[i].phases.iter().any(|p| kind.woken_by(name, &p.kind))).collect();
        let waker_live = (0..self.work.nthreads())
            .any(|t| wakers.contains(&self.work.task_of(t)) && self.sched.state(t) != ThreadState::Done);
        match wakers.len() {
            0 => ", which no task wakes".into(),
            _ if waker_live => String::new(),
            1 => format!(", which only task {} wakes, and it has finished", tasks[wakers[0]].name),
            _ => {
                let names: Vec<&str> = wakers.iter().map(|&i| tasks[i].name.as_str()).collect();
                format!(", which only tasks {} wake, and they have finished", names.join(", "))
            }
        }
    }
}

/// The first vsync after `now_us`: the next multiple of `vsync_us` on the run's clock (one
/// exactly now has been missed, as a frame that ends on it has).
fn next_vsync_us(now_us: f64, vsync_us: f64) -> f64 {
    ((now_us / vsync_us).floor() + 1.0) * vsync_us
}
