//! The RT and DL classes' sequences that switch CPUs (`scheduler::rt`, `scheduler::deadline`
//! hold the bookkeeping): enqueue, push and pull, throttling and its period timer, SCHED_RR's
//! turns, the DL servers' runtime and timers; and a thread's attributes changing (`sched_setattr`:
//! CPUs, clamps, nice, class; `sched_move_task`: its task group).

use crate::engine::scheduler::{Arrival, DlArrival, DlArrive, DlTimer, RtEnqueue, ThreadState};
use crate::engine::{Engine, EPS_US};
use crate::sched::{rt, ClassKind};
use crate::trace::PrevState;
use crate::workload::SchedAttr;

impl Engine<'_> {
    // ---- RT ------------------------------------------------------------------------------------

    /// RT `t` joins `cpu`'s RT queue: runs at once on an idle CPU, preempts CFS or a lower
    /// priority, or else waits and, if `push`, is pushed to a CPU where it would run
    /// (`task_woken_rt`; a task pushed here is not pushed on from here at once).
    pub(super) fn enqueue_rt(&mut self, cpu: usize, t: usize, push: bool) {
        match self.sched.enqueue_rt(cpu, t, self.now_us) {
            RtEnqueue::RunsNow => self.switch_in(cpu, t, None),
            RtEnqueue::Waits { preempts: true } => self.resched(cpu),
            RtEnqueue::Waits { preempts: false } if push => self.push_rt(cpu),
            RtEnqueue::Waits { .. } => {}
        }
    }

    /// `push_rt_tasks`: while the highest-priority waiting RT task of `cpu` that may move would
    /// run first elsewhere, it moves there.
    pub(super) fn push_rt(&mut self, cpu: usize) {
        while let Some((t, to)) = self.sched.rt_push(cpu, self.now_us) {
            self.move_waiting(t, to, cpu);
            self.enqueue_rt(to, t, false);
        }
    }

    /// `sched_rt_runtime_exceeded`, at a tick of `cpu` running RT `t`: over its runtime its RT
    /// queue is throttled and `t` gives way to CFS or idle.
    pub(super) fn rt_check_runtime(&mut self, cpu: usize, t: usize) -> bool {
        if !self.sched.rt_throttle_if_over(cpu, t, self.now_us) {
            return false;
        }
        self.out.count_rt_throttle();
        let prev = self.sched.prev(t, PrevState::Runnable);
        self.reschedule(cpu, prev, ClassKind::Rt);
        true
    }

    /// `sched_rt_period_timer`: each CPU's RT run time is paid back, a throttled CPU whose debt
    /// is below its runtime runs RT work again, and the timer stops once no CPU has RT time or
    /// tasks left.
    pub(in crate::engine) fn rt_period_timer(&mut self) {
        let mut idle = true;
        for cpu in 0..self.sched.ncpus() {
            let Some((busy, unthrottled)) = self.sched.rt_period_cpu(cpu, self.now_us) else { continue };
            idle &= !busy;
            if unthrottled {
                self.rt_unthrottled(cpu);
            }
        }
        self.sched.rearm_rt_period(idle, self.now_us);
    }

    /// `cpu`'s RT queue may run again: its first RT task runs now, before any CFS task.
    fn rt_unthrottled(&mut self, cpu: usize) {
        let Some(first) = self.sched.rt_first(cpu) else { return };
        match self.sched.curr(cpu) {
            None => {
                self.sched.unqueue(first);
                self.switch_in(cpu, first, None);
            }
            Some(_) => self.preempt(cpu),
        }
    }

    /// `task_tick_rt`: a SCHED_RR task whose slice ran out at this tick goes behind the others
    /// of its priority (its slice refilled); SCHED_FIFO has no slice.
    pub(super) fn rr_tick(&mut self, cpu: usize, t: usize) {
        if self.sched.rr_slice_over(cpu, t, self.now_us) {
            self.rt_requeue_tail(cpu, t);
        }
    }

    /// Running RT `t` goes to the tail of its priority's list (`requeue_task_rt`); the first
    /// other task of its priority, if one waits, runs.
    pub(super) fn rt_requeue_tail(&mut self, cpu: usize, t: usize) {
        if let Some(next) = self.sched.rt_requeue_tail(cpu, t) {
            self.switch_to(cpu, t, next);
        }
    }

    // ---- SCHED_DEADLINE ------------------------------------------------------------------------

    /// DL `t` joins `cpu`'s run queue (`enqueue_task_dl`): a throttled task waits for its timer;
    /// otherwise it runs or waits ([`dl_arrive`](Self::dl_arrive)).
    pub(super) fn enqueue_dl(&mut self, cpu: usize, t: usize, arrival: DlArrival, push: bool) {
        if self.sched.enqueue_dl(cpu, t, arrival, self.now_us) {
            self.dl_arrive(cpu, t, push);
        }
    }

    /// Runnable DL `t` is queued on `cpu` (`Scheduler::dl_arrive`): it runs, preempts, waits
    /// or is pushed.
    fn dl_arrive(&mut self, cpu: usize, t: usize, push: bool) {
        match self.sched.dl_arrive(cpu, t, push, self.now_us) {
            DlArrive::RunsNow => self.switch_in(cpu, t, None),
            DlArrive::Waits { resched, push } => {
                if resched {
                    self.resched(cpu);
                }
                if push {
                    self.push_dl(cpu);
                }
            }
        }
    }

    /// `push_dl_tasks`: while `cpu` has two DL tasks or more, its earliest waiting one that may
    /// move goes to a CPU where it runs first; if it would preempt here a DL task that may move,
    /// this CPU reschedules instead.
    pub(super) fn push_dl(&mut self, cpu: usize) {
        loop {
            match self.sched.dl_push(cpu, self.now_us) {
                Ok((t, to)) => {
                    self.move_waiting(t, to, cpu);
                    self.sched.update_util(to, self.now_us, &mut self.out);
                    self.dl_arrive(to, t, false);
                }
                Err(true) => return self.resched(cpu),
                Err(false) => return,
            }
        }
    }

    /// `pull_dl_task` as `cpu`'s DL task left: the earliest waiting DL tasks of the other CPUs
    /// that would run first here join its queue.
    pub(super) fn pull_dl(&mut self, cpu: usize) {
        for t in self.sched.dl_pull(cpu, self.now_us) {
            self.move_waiting(t, cpu, cpu);
            self.sched.dl_queue(cpu, t);
        }
    }

    /// `update_curr_dl` with its consequence: a running DL task of `cpu` out of runtime is
    /// throttled until its next period and the CPU runs the next task (true); if that period has
    /// already begun it is replenished at once and keeps running unless a DL task waiting here
    /// now has an earlier deadline.
    pub(super) fn dl_update_curr(&mut self, cpu: usize) -> bool {
        if !self.sched.account_dl(cpu, self.now_us) {
            return false;
        }
        let t = self.sched.curr(cpu).expect("a DL task runs");
        match self.sched.dl_out_of_runtime(cpu, t, self.now_us) {
            Some(Some(next)) => {
                self.switch_to(cpu, t, next);
                true
            }
            Some(None) => false,
            None => {
                let prev = self.sched.prev(t, PrevState::Runnable);
                self.reschedule(cpu, prev, ClassKind::Deadline);
                true
            }
        }
    }

    /// The DL timers due now, in time then thread order: a throttled server gets its runtime back
    /// and a runnable task queues again (`dl_task_timer`); a blocked task's bandwidth leaves its
    /// run queue at its 0-lag time (`inactive_task_timer`).
    pub(in crate::engine) fn dl_timers_due(&mut self) {
        while let Some((t, kind)) = self.sched.pop_due_dl_timer(self.now_us + EPS_US) {
            match kind {
                DlTimer::Replenish => {
                    if let Some(cpu) = self.sched.dl_replenish(t, self.now_us) {
                        self.sched.update_util(cpu, self.now_us, &mut self.out);
                        self.dl_arrive(cpu, t, true);
                    }
                }
                DlTimer::Inactive => self.sched.dl_inactive(t),
            }
        }
    }

    /// `yield_task_dl`: the running DL task gives up the rest of its runtime until its next
    /// period.
    pub(super) fn dl_yield(&mut self, cpu: usize, t: usize) {
        self.sched.dl_yield(t);
        self.dl_update_curr(cpu);
    }

    // ---- attributes ------------------------------------------------------------------------------

    /// `t` takes the attributes: its allowed CPUs, and if given its clamps, nice value (its
    /// weight changes on its run queue at once, its vruntime does not: `reweight_entity`, 5.10),
    /// class and task group.
    pub(super) fn set_sched(&mut self, t: usize, attr: &SchedAttr) {
        let now = self.now_us;
        self.sched.set_attributes(t, attr.cpus.as_deref(), (attr.util_min, attr.util_max), attr.nice, now);
        if attr.nice.is_some() {
            let (tid, prio) = self.sched.kernel_prio(t);
            self.out.note_prio(tid, prio);
        }
        if let Some(class) = attr.class {
            self.set_class(t, class);
        }
        if attr.util_min.is_some() || attr.util_max.is_some() {
            self.sched.uclamp_update(t);
        }
        if let Some(path) = &attr.taskgroup {
            let g = self.sched.group_at(path);
            self.set_group(t, g);
        }
    }

    /// `t` moves to task group `g` (`sched_move_task`: rt-app writes its tid to the group's
    /// `tasks`): off its run queues if on them, moved (`Scheduler::change_group`), and back; a
    /// running thread gives way if the pick says so, once its zero-work phases are done
    /// (`resched_curr`). An RT thread only changes group.
    fn set_group(&mut self, t: usize, g: usize) {
        if !self.sched.group_differs(t, g) {
            return;
        }
        let now = self.now_us;
        let cpu = self.sched.cpu_of(t);
        let cfs = self.sched.entity(t).is_fair();
        let running = cfs && self.sched.is_running(t);
        let waiting = cfs && self.sched.state(t) == ThreadState::Runnable && self.sched.is_queued(t);
        if running {
            self.sched.update_curr(cpu, now);
            self.sched.update_util(cpu, now, &mut self.out);
            self.sched.cfs_leave(cpu, t, false, now);
            self.sched.put_prev(cpu, t, now);
        } else if waiting {
            self.sched.dequeue_waiting(t, now);
        }
        self.sched.change_group(t, g, self.work.cpu_time_us(t), now);
        // the new group restricts its clamps (any class: a cgroup holds RT tasks too)
        self.sched.uclamp_update(t);
        if running {
            self.sched.restart_in_group(cpu, t, now);
            self.resched(cpu);
        } else if waiting {
            self.enqueue(cpu, t, Arrival::Migration);
        }
    }

    /// `t` changes class or RT priority (`__sched_setscheduler`): it leaves its class's queue
    /// and joins the other's (its CFS load and utilisation leave or join the run queue's:
    /// `switched_from_fair`, `switched_to_fair`); a running thread that now ranks lower gives
    /// way once its zero-work phases are done.
    fn set_class(&mut self, t: usize, class: rt::SchedClass) {
        let now = self.now_us;
        let old = self.sched.entity(t).class;
        if old == class {
            return;
        }
        debug_assert!(old.dl().is_none() && class.dl().is_none(), "a DL task's policy is its own from start to end");
        if old.is_fair() && class.is_fair() {
            // running, it gives way if the pick says so
            self.sched.change_fair_policy(t, class, now);
            if self.sched.is_running(t) {
                self.resched(self.sched.cpu_of(t));
            }
            let (tid, prio) = self.sched.kernel_prio(t);
            self.out.note_prio(tid, prio);
            return;
        }
        let cpu = self.sched.cpu_of(t);
        let running = self.sched.is_running(t);
        // runnable but on no queue yet: a new thread's first phases
        let waiting = self.sched.state(t) == ThreadState::Runnable && self.sched.is_queued(t);
        if waiting {
            self.sched.dequeue_waiting(t, now);
        }
        if running {
            self.sched.update_curr(cpu, now);
            self.sched.update_util(cpu, now, &mut self.out);
            if old.is_fair() {
                self.sched.cfs_leave(cpu, t, false, now);
            }
            self.sched.stop_running(cpu, t, now);
        }
        self.sched.change_class(t, class, running || waiting, now);
        if running {
            self.sched.resume_in_class(cpu, t, now, &mut self.out);
            let lower = class.rt_priority().unwrap_or(0) < old.rt_priority().unwrap_or(0);
            if !self.sched.defer_if_lower(cpu, lower) && lower {
                self.preempt(cpu);
            }
        } else if waiting {
            self.enqueue(cpu, t, Arrival::Migration);
        }
        let (tid, prio) = self.sched.kernel_prio(t);
        self.out.note_prio(tid, prio);
    }
}
