//! SCHED_DEADLINE in the engine (`sched::deadline` holds the rules): DL tasks queued by deadline
//! and pushed to or pulled by CPUs where they run first, the runtime each server consumes while
//! it runs (at the tick and wherever the kernel calls `update_curr_dl`), throttling and the
//! replenishment timer, the active bandwidth each run queue counts (kept after a block until the
//! task's 0-lag time by the inactive timer), the run time counted against RT throttling's
//! runtime too (`engine::rt`), and the DL utilisation signal.

use super::state::ThreadState;
use super::Engine;
use crate::sched::deadline::{self, DlParams};
use crate::sched::ClassKind;
use crate::trace::PrevState;

/// A SCHED_DEADLINE timer of a task (`dl_timer`, `inactive_timer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum DlTimer {
    /// The server's runtime is refilled at the start of its next period.
    Replenish,
    /// A blocked task's bandwidth leaves its run queue at its 0-lag time.
    Inactive,
}

/// How a DL task joins a run queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DlArrival {
    /// It just became SCHED_DEADLINE (a new thread): a new server.
    New,
    /// It wakes up: the CBS wake-up rule.
    Wakeup,
    /// Pushed or pulled: it keeps its server.
    Migration,
}

impl Engine<'_> {
    fn dl_params(&self, t: usize) -> DlParams {
        self.sched.entities[t].class.dl().expect("a SCHED_DEADLINE task")
    }

    fn arm_dl_timer(&mut self, t: usize, at_ns: u64, kind: DlTimer) {
        self.sched.dl_timers.insert((at_ns, t, kind));
    }

    fn cancel_dl_timers(&mut self, t: usize, kind: DlTimer) {
        self.sched.dl_timers.retain(|&(_, x, k)| x != t || k != kind);
    }

    /// The next DL timer, µs.
    pub(super) fn next_dl_timer_us(&self) -> f64 {
        self.sched.dl_timers.first().map_or(f64::INFINITY, |&(ns, _, _)| ns as f64 / 1000.0)
    }

    /// Accounts `cpu`'s DL utilisation up to now (`update_dl_rq_load_avg`: running while a DL
    /// task runs there).
    pub(super) fn update_dl_avg(&mut self, cpu: usize) {
        if !self.sched.track_util || !self.sched.dl_used {
            return;
        }
        let running = self.sched.rqs[cpu].dl.running.is_some();
        let state = self.pelt_state(cpu, running, running);
        let now = self.now_ns();
        self.sched.rqs[cpu].avg_dl.update(now, state);
    }

    /// `update_curr_dl`'s charge: the running DL task of `cpu` pays for the time since its last
    /// accounting, scaled by the CPU's frequency and capacity now; true if it is out of runtime
    /// (or yielded).
    pub(super) fn account_dl(&mut self, cpu: usize) -> bool {
        let rq = &self.sched.rqs[cpu];
        let Some(t) = rq.curr.filter(|_| rq.dl.running.is_some()) else { return false };
        let scale = self.pelt_state(cpu, true, true);
        let now = self.now_ns();
        let dl = &mut self.sched.entities[t].dl;
        let delta_ns = now.saturating_sub(dl.exec_start_ns);
        dl.exec_start_ns = now;
        let exhausted = dl.charge(delta_ns, scale.freq_scale, scale.cpu_scale);
        self.account_dl_as_rt(cpu, delta_ns);
        exhausted
    }

    /// `update_curr_dl` with its consequence: a running DL task of `cpu` out of runtime is
    /// throttled until its next period and the CPU runs the next task (true); if that period has
    /// already begun it is replenished at once and keeps running unless a DL task waiting here
    /// now has an earlier deadline.
    pub(super) fn dl_update_curr(&mut self, cpu: usize) -> bool {
        if !self.account_dl(cpu) {
            return false;
        }
        let t = self.sched.rqs[cpu].curr.expect("a DL task runs");
        let p = self.dl_params(t);
        let now = self.now_ns();
        let at_ns = self.sched.entities[t].dl.next_period_ns(&p);
        if at_ns <= now {
            self.sched.entities[t].dl.replenish(&p, now);
            let deadline_ns = self.sched.entities[t].dl.deadline_ns;
            let rq = &mut self.sched.rqs[cpu];
            rq.dl.running = Some(deadline_ns);
            return match rq.dl.first().filter(|_| rq.dl.first_deadline() < Some(deadline_ns)) {
                Some(next) => {
                    self.switch_to(cpu, t, next);
                    true
                }
                None => false,
            };
        }
        self.stop_running(cpu, t);
        self.sched.entities[t].dl.throttled = true;
        self.arm_dl_timer(t, at_ns, DlTimer::Replenish);
        self.threads[t].state = ThreadState::Runnable;
        self.reschedule(cpu, (self.threads[t].tid, PrevState::Runnable), ClassKind::Deadline);
        true
    }

    /// `t`, blocking out of runtime (off its queue), is throttled until the start of its next
    /// period (`start_dl_timer`); if that has begun, it is replenished at once.
    pub(super) fn dl_throttle(&mut self, t: usize) {
        let p = self.dl_params(t);
        let now = self.now_ns();
        let dl = &mut self.sched.entities[t].dl;
        let at_ns = dl.next_period_ns(&p);
        if at_ns > now {
            dl.throttled = true;
            self.arm_dl_timer(t, at_ns, DlTimer::Replenish);
        } else {
            dl.replenish(&p, now);
        }
    }

    /// The DL timers due now, in time then thread order.
    pub(super) fn dl_timers_due(&mut self) {
        while let Some(&(at_ns, t, kind)) = self.sched.dl_timers.first() {
            if at_ns as f64 / 1000.0 > self.now_us + super::EPS_US {
                return;
            }
            self.sched.dl_timers.pop_first();
            match kind {
                DlTimer::Replenish => self.dl_replenish_timer(t),
                DlTimer::Inactive => self.dl_inactive_timer(t),
            }
        }
    }

    /// `dl_task_timer`: a throttled server gets its runtime back; a runnable task queues again
    /// (and may preempt or be pushed), a blocked one waits for its wake-up.
    fn dl_replenish_timer(&mut self, t: usize) {
        if !self.sched.entities[t].dl.throttled || self.threads[t].state == ThreadState::Done {
            return;
        }
        let p = self.dl_params(t);
        let now = self.now_ns();
        self.sched.entities[t].dl.replenish(&p, now);
        if self.threads[t].state == ThreadState::Runnable {
            let cpu = self.sched.entities[t].cpu;
            self.update_util(cpu);
            self.dl_arrive(cpu, t, true);
        }
    }

    /// `inactive_task_timer`: a blocked task's bandwidth leaves its run queue at its 0-lag time.
    fn dl_inactive_timer(&mut self, t: usize) {
        let se = &mut self.sched.entities[t];
        if !se.dl.non_contending {
            return;
        }
        se.dl.non_contending = false;
        se.dl.active = false;
        let bw = self.dl_bw(t);
        let cpu = self.sched.entities[t].cpu;
        self.sched.rqs[cpu].dl.running_bw -= bw;
    }

    fn dl_bw(&self, t: usize) -> u64 {
        let p = self.dl_params(t);
        deadline::to_ratio(p.period_ns, p.runtime_ns)
    }

    /// `task_contending`: a waking DL task's bandwidth counts on `cpu` (still there if it blocked
    /// before its 0-lag time).
    fn dl_contend(&mut self, cpu: usize, t: usize) {
        let bw = self.dl_bw(t);
        let dl = &mut self.sched.entities[t].dl;
        if dl.non_contending {
            dl.non_contending = false;
            self.cancel_dl_timers(t, DlTimer::Inactive);
        } else if !dl.active {
            dl.active = true;
            self.sched.rqs[cpu].dl.running_bw += bw;
        }
    }

    /// `task_non_contending`: DL `t` blocked (or exited) on `cpu`; its bandwidth leaves the run
    /// queue now if its 0-lag time has passed, else at it.
    pub(super) fn dl_non_contending(&mut self, cpu: usize, t: usize) {
        if !self.sched.entities[t].dl.active {
            return;
        }
        let p = self.dl_params(t);
        let now = self.now_ns();
        match self.sched.entities[t].dl.zero_lag_ns(&p, now) {
            Some(at_ns) => {
                self.sched.entities[t].dl.non_contending = true;
                self.arm_dl_timer(t, at_ns, DlTimer::Inactive);
            }
            None => {
                self.sched.entities[t].dl.active = false;
                let bw = self.dl_bw(t);
                self.sched.rqs[cpu].dl.running_bw -= bw;
            }
        }
    }

    /// `migrate_task_rq_dl` and the push/pull's deactivate/activate: DL `t`'s bandwidth follows it
    /// from `from` to `to` (a blocked one's leaves at once; it contends again where it wakes).
    pub(super) fn dl_move_bw(&mut self, t: usize, from: usize, to: usize) {
        if !self.sched.entities[t].is_dl() {
            return;
        }
        let bw = self.dl_bw(t);
        let dl = &mut self.sched.entities[t].dl;
        if dl.non_contending {
            dl.non_contending = false;
            dl.active = false;
            self.sched.rqs[from].dl.running_bw -= bw;
            self.cancel_dl_timers(t, DlTimer::Inactive);
        } else if dl.active {
            self.sched.rqs[from].dl.running_bw -= bw;
            self.sched.rqs[to].dl.running_bw += bw;
        }
    }

    /// DL `t` joins `cpu`'s run queue (`enqueue_task_dl`): a new server, or the CBS wake-up rule,
    /// or (pushed or pulled) as it is; a throttled task waits for its timer; otherwise it runs or
    /// waits ([`dl_arrive`](Self::dl_arrive)).
    pub(super) fn enqueue_dl(&mut self, cpu: usize, t: usize, arrival: DlArrival, push: bool) {
        self.threads[t].state = ThreadState::Runnable;
        self.update_dl_avg(cpu);
        let p = self.dl_params(t);
        let now = self.now_ns();
        match arrival {
            DlArrival::New => {
                self.sched.entities[t].dl.setup_new(&p, now);
                self.dl_contend(cpu, t);
            }
            DlArrival::Wakeup => {
                self.dl_contend(cpu, t);
                let dl = &mut self.sched.entities[t].dl;
                if !dl.throttled {
                    // `dl_check_constrained_dl`: woken after its deadline but before its next
                    // period, a constrained task waits for that period
                    let next_ns = dl.next_period_ns(&p);
                    if p.deadline_ns != p.period_ns && dl.deadline_ns < now && now < next_ns {
                        dl.throttled = true;
                        dl.runtime_ns = dl.runtime_ns.min(0);
                        self.arm_dl_timer(t, next_ns, DlTimer::Replenish);
                    } else {
                        dl.wake_up(&p, now);
                    }
                }
            }
            DlArrival::Migration => {}
        }
        if self.sched.entities[t].dl.throttled {
            return; // its replenishment timer queues it
        }
        self.dl_arrive(cpu, t, push);
    }

    /// Runnable DL `t` is queued on `cpu`: runs at once on an idle CPU, preempts a non-DL task or a
    /// later deadline, or waits and, if `push`, is pushed to a CPU where it would run
    /// (`check_preempt_curr_dl`, `task_woken_dl`); with the running task's deadline, the CPU is
    /// rescheduled as `check_preempt_equal_dl` decides.
    pub(super) fn dl_arrive(&mut self, cpu: usize, t: usize, push: bool) {
        if self.sched.rqs[cpu].curr.is_none() {
            self.switch_in(cpu, t, None);
            return;
        }
        let deadline_ns = self.sched.entities[t].dl.deadline_ns;
        self.sched.rqs[cpu].dl.insert(t, deadline_ns);
        let fitness = self.sched.rt_fitness;
        let running = self.sched.rqs[cpu].dl.running;
        let equal_resched = running == Some(deadline_ns)
            && self.sched.ask(self.now_us, cpu, |_, view| deadline::equal_deadline_resched(view, cpu, t, fitness));
        match running {
            Some(running) if deadline_ns < running => self.resched(cpu),
            Some(_) if equal_resched => {
                // the running task is picked again; its `set_next_task_dl` pushes what waits
                self.resched(cpu);
                self.push_dl(cpu);
            }
            // it would not preempt the DL task running here: another CPU may run it
            Some(_) if push && self.sched.entities[t].allowed.count() > 1 => self.push_dl(cpu),
            Some(_) => {}
            // DL runs before RT and CFS
            None => self.resched(cpu),
        }
    }

    /// `push_dl_tasks`: while `cpu` has two DL tasks or more, its earliest waiting one that may
    /// move goes to a CPU where it runs first; if it would preempt here a DL task that may move,
    /// this CPU reschedules instead.
    pub(super) fn push_dl(&mut self, cpu: usize) {
        let fitness = self.sched.rt_fitness;
        loop {
            let rq = &self.sched.rqs[cpu];
            if rq.dl.nr_running() < 2 {
                return;
            }
            let Some(t) = rq.dl.iter().find(|&t| self.sched.entities[t].allowed.count() > 1) else { return };
            if let (Some(running), Some(curr)) = (rq.dl.running, rq.curr) {
                if self.sched.entities[t].dl.deadline_ns < running && self.sched.entities[curr].allowed.count() > 1 {
                    self.resched(cpu);
                    return;
                }
            }
            let Some(to) = self.sched.ask(self.now_us, cpu, |_, view| deadline::push_target(view, t, fitness)) else {
                return;
            };
            self.move_waiting(t, to, cpu);
            self.update_util(to);
            self.dl_arrive(to, t, false);
        }
    }

    /// `pull_dl_task` as `cpu`'s DL task left: the earliest waiting DL tasks of the other CPUs
    /// that would run first here join its queue.
    pub(super) fn pull_dl(&mut self, cpu: usize) {
        let pulled = self.sched.ask(self.now_us, cpu, |_, view| deadline::pull_candidates(view, cpu));
        for t in pulled {
            self.move_waiting(t, cpu, cpu);
            let deadline_ns = self.sched.entities[t].dl.deadline_ns;
            self.sched.rqs[cpu].dl.insert(t, deadline_ns);
        }
    }

    /// `yield_task_dl`: the running DL task gives up the rest of its runtime until its next
    /// period.
    pub(super) fn dl_yield(&mut self, cpu: usize, t: usize) {
        self.sched.entities[t].dl.yielded = true;
        self.dl_update_curr(cpu);
    }
}
