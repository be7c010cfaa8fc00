//! SCHED_DEADLINE's bookkeeping (`crate::sched::deadline` holds the rules): the runtime each
//! server consumes while it runs (wherever the kernel calls `update_curr_dl`), throttling and
//! the replenishment timer, the CBS wake-up rule, the active bandwidth each run queue counts
//! (kept after a block until the task's 0-lag time by the inactive timer), the push, pull and
//! placement targets; the run time counted against RT throttling's runtime too (`rt`).

use super::{Scheduler, ThreadState};
use crate::sched::deadline::{self, DlParams};

/// A SCHED_DEADLINE timer of a task (`dl_timer`, `inactive_timer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DlTimer {
    /// The server's runtime is refilled at the start of its next period.
    Replenish,
    /// A blocked task's bandwidth leaves its run queue at its 0-lag time.
    Inactive,
}

/// How a DL task joins a run queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DlArrival {
    /// It just became SCHED_DEADLINE (a new thread): a new server.
    New,
    /// It wakes up: the CBS wake-up rule.
    Wakeup,
    /// Pushed or pulled: it keeps its server.
    Migration,
}

/// What a DL task arriving on a busy CPU does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DlArrive {
    /// The CPU is idle: it runs at once.
    RunsNow,
    /// It waits; the running task gives way (`resched`), and what waits is pushed (`push`).
    Waits { resched: bool, push: bool },
}

fn ns(now_us: f64) -> u64 {
    super::pelt::ns(now_us)
}

impl Scheduler<'_> {
    fn dl_params(&self, t: usize) -> DlParams {
        self.entities[t].class.dl().expect("a SCHED_DEADLINE task")
    }

    fn arm_dl_timer(&mut self, t: usize, at_ns: u64, kind: DlTimer) {
        self.dl_timers.insert((at_ns, t, kind));
    }

    fn cancel_dl_timers(&mut self, t: usize, kind: DlTimer) {
        self.dl_timers.retain(|&(_, x, k)| x != t || k != kind);
    }

    /// The next DL timer, µs.
    pub fn next_dl_timer_us(&self) -> f64 {
        self.dl_timers.first().map_or(f64::INFINITY, |&(ns, _, _)| ns as f64 / 1000.0)
    }

    /// The first DL timer due by `by_us`, taken off the list: its thread and kind.
    pub fn pop_due_dl_timer(&mut self, by_us: f64) -> Option<(usize, DlTimer)> {
        let &(at_ns, t, kind) = self.dl_timers.first()?;
        if at_ns as f64 / 1000.0 > by_us {
            return None;
        }
        self.dl_timers.pop_first();
        Some((t, kind))
    }

    /// `update_curr_dl`'s charge: the running DL task of `cpu` pays for the time since its last
    /// accounting, scaled by the CPU's frequency and capacity now; true if it is out of runtime
    /// (or yielded).
    pub fn account_dl(&mut self, cpu: usize, now_us: f64) -> bool {
        let rq = &self.rqs[cpu];
        let Some(t) = rq.curr.filter(|_| rq.dl.running.is_some()) else { return false };
        let scale = self.pelt_state(cpu, true, true);
        let now = ns(now_us);
        let dl = &mut self.entities[t].dl;
        let delta_ns = now.saturating_sub(dl.exec_start_ns);
        dl.exec_start_ns = now;
        let exhausted = dl.charge(delta_ns, scale.freq_scale, scale.cpu_scale);
        self.account_dl_as_rt(cpu, delta_ns);
        exhausted
    }

    /// A DL task of `cpu` runs.
    pub fn dl_running(&self, cpu: usize) -> bool {
        self.rqs[cpu].dl.running.is_some()
    }

    /// `update_curr_dl`'s consequence for `t`, running on `cpu` and out of runtime: if its next
    /// period has begun it is replenished at once and keeps running unless a DL task waiting
    /// there now has an earlier deadline (`Some(Some(next))`: switch to it; `Some(None)`: it
    /// runs on); else it is throttled until then (`None`: the caller stops it and reschedules).
    pub fn dl_out_of_runtime(&mut self, cpu: usize, t: usize, now_us: f64) -> Option<Option<usize>> {
        let p = self.dl_params(t);
        let now = ns(now_us);
        let at_ns = self.entities[t].dl.next_period_ns(&p);
        if at_ns <= now {
            self.entities[t].dl.replenish(&p, now);
            let deadline_ns = self.entities[t].dl.deadline_ns;
            let rq = &mut self.rqs[cpu];
            rq.dl.running = Some(deadline_ns);
            return Some(rq.dl.first().filter(|_| rq.dl.first_deadline() < Some(deadline_ns)));
        }
        self.stop_running(cpu, t, now_us);
        self.entities[t].dl.throttled = true;
        self.arm_dl_timer(t, at_ns, DlTimer::Replenish);
        self.threads[t].state = ThreadState::Runnable;
        None
    }

    /// `t`, blocking out of runtime (off its queue), is throttled until the start of its next
    /// period (`start_dl_timer`); if that has begun, it is replenished at once.
    pub fn dl_throttle(&mut self, t: usize, now_us: f64) {
        let p = self.dl_params(t);
        let now = ns(now_us);
        let dl = &mut self.entities[t].dl;
        let at_ns = dl.next_period_ns(&p);
        if at_ns > now {
            dl.throttled = true;
            self.arm_dl_timer(t, at_ns, DlTimer::Replenish);
        } else {
            dl.replenish(&p, now);
        }
    }

    /// `dl_task_timer`: a throttled server gets its runtime back; the CPU of a runnable task that
    /// is to queue again (the caller brings its signals up to date and makes it arrive).
    pub fn dl_replenish(&mut self, t: usize, now_us: f64) -> Option<usize> {
        if !self.entities[t].dl.throttled || self.threads[t].state == ThreadState::Done {
            return None;
        }
        let p = self.dl_params(t);
        self.entities[t].dl.replenish(&p, ns(now_us));
        (self.threads[t].state == ThreadState::Runnable).then_some(self.entities[t].cpu)
    }

    /// `inactive_task_timer`: a blocked task's bandwidth leaves its run queue at its 0-lag time.
    pub fn dl_inactive(&mut self, t: usize) {
        let se = &mut self.entities[t];
        if !se.dl.non_contending {
            return;
        }
        se.dl.non_contending = false;
        se.dl.active = false;
        let bw = self.dl_bw(t);
        let cpu = self.entities[t].cpu;
        self.rqs[cpu].dl.running_bw -= bw;
    }

    fn dl_bw(&self, t: usize) -> u64 {
        let p = self.dl_params(t);
        deadline::to_ratio(p.period_ns, p.runtime_ns)
    }

    /// `task_contending`: a waking DL task's bandwidth counts on `cpu` (still there if it blocked
    /// before its 0-lag time).
    fn dl_contend(&mut self, cpu: usize, t: usize) {
        let bw = self.dl_bw(t);
        let dl = &mut self.entities[t].dl;
        if dl.non_contending {
            dl.non_contending = false;
            self.cancel_dl_timers(t, DlTimer::Inactive);
        } else if !dl.active {
            dl.active = true;
            self.rqs[cpu].dl.running_bw += bw;
        }
    }

    /// `task_non_contending`: DL `t` blocked (or exited) on `cpu`; its bandwidth leaves the run
    /// queue now if its 0-lag time has passed, else at it.
    pub fn dl_non_contending(&mut self, cpu: usize, t: usize, now_us: f64) {
        if !self.entities[t].dl.active {
            return;
        }
        let p = self.dl_params(t);
        match self.entities[t].dl.zero_lag_ns(&p, ns(now_us)) {
            Some(at_ns) => {
                self.entities[t].dl.non_contending = true;
                self.arm_dl_timer(t, at_ns, DlTimer::Inactive);
            }
            None => {
                self.entities[t].dl.active = false;
                let bw = self.dl_bw(t);
                self.rqs[cpu].dl.running_bw -= bw;
            }
        }
    }

    /// `migrate_task_rq_dl` and the push/pull's deactivate/activate: DL `t`'s bandwidth follows it
    /// from `from` to `to` (a blocked one's leaves at once; it contends again where it wakes).
    pub fn dl_move_bw(&mut self, t: usize, from: usize, to: usize) {
        if !self.entities[t].is_dl() {
            return;
        }
        let bw = self.dl_bw(t);
        let dl = &mut self.entities[t].dl;
        if dl.non_contending {
            dl.non_contending = false;
            dl.active = false;
            self.rqs[from].dl.running_bw -= bw;
            self.cancel_dl_timers(t, DlTimer::Inactive);
        } else if dl.active {
            self.rqs[from].dl.running_bw -= bw;
            self.rqs[to].dl.running_bw += bw;
        }
    }

    /// DL `t` joins `cpu`'s run queue (`enqueue_task_dl`): a new server, or the CBS wake-up rule,
    /// or (pushed or pulled) as it is; true if it may run now (a throttled task waits for its
    /// timer).
    pub fn enqueue_dl(&mut self, cpu: usize, t: usize, arrival: DlArrival, now_us: f64) -> bool {
        self.threads[t].state = ThreadState::Runnable;
        self.update_dl_avg(cpu, now_us);
        let p = self.dl_params(t);
        let now = ns(now_us);
        match arrival {
            DlArrival::New => {
                self.entities[t].dl.setup_new(&p, now);
                self.dl_contend(cpu, t);
            }
            DlArrival::Wakeup => {
                self.dl_contend(cpu, t);
                let dl = &mut self.entities[t].dl;
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
        !self.entities[t].dl.throttled
    }

    /// Runnable DL `t` is queued on `cpu`: runs at once on an idle CPU, preempts a non-DL task or
    /// a later deadline, or waits and, if `push`, is pushed to a CPU where it would run
    /// (`check_preempt_curr_dl`, `task_woken_dl`); with the running task's deadline, the CPU is
    /// rescheduled as `check_preempt_equal_dl` decides.
    pub fn dl_arrive(&mut self, cpu: usize, t: usize, push: bool, now_us: f64) -> DlArrive {
        if self.rqs[cpu].curr.is_none() {
            return DlArrive::RunsNow;
        }
        let deadline_ns = self.entities[t].dl.deadline_ns;
        self.rqs[cpu].dl.insert(t, deadline_ns);
        let fitness = self.rt_fitness;
        let running = self.rqs[cpu].dl.running;
        let equal_resched = running == Some(deadline_ns)
            && self.ask(now_us, cpu, |_, view| deadline::equal_deadline_resched(view, cpu, t, fitness));
        match running {
            Some(running) if deadline_ns < running => DlArrive::Waits { resched: true, push: false },
            // the running task is picked again; its `set_next_task_dl` pushes what waits
            Some(_) if equal_resched => DlArrive::Waits { resched: true, push: true },
            // it would not preempt the DL task running here: another CPU may run it
            Some(_) if push && self.entities[t].allowed.count() > 1 => DlArrive::Waits { resched: false, push: true },
            Some(_) => DlArrive::Waits { resched: false, push: false },
            // DL runs before RT and CFS
            None => DlArrive::Waits { resched: true, push: false },
        }
    }

    /// `push_dl_tasks`' next step on `cpu` (with two DL tasks or more): its earliest waiting one
    /// that may move and a CPU where it runs first (`Ok`); `Err(true)` if it would preempt here a
    /// DL task that may move (this CPU reschedules instead); `Err(false)` if nothing moves.
    pub fn dl_push(&mut self, cpu: usize, now_us: f64) -> Result<(usize, usize), bool> {
        let fitness = self.rt_fitness;
        let rq = &self.rqs[cpu];
        if rq.dl.nr_running() < 2 {
            return Err(false);
        }
        let Some(t) = rq.dl.iter().find(|&t| self.entities[t].allowed.count() > 1) else { return Err(false) };
        if let (Some(running), Some(curr)) = (rq.dl.running, rq.curr) {
            if self.entities[t].dl.deadline_ns < running && self.entities[curr].allowed.count() > 1 {
                return Err(true);
            }
        }
        self.ask(now_us, cpu, |_, view| deadline::push_target(view, t, fitness)).map(|to| (t, to)).ok_or(false)
    }

    /// `pull_dl_task` as `cpu`'s DL task left: the earliest waiting DL tasks of the other CPUs
    /// that would run first here.
    pub fn dl_pull(&mut self, cpu: usize, now_us: f64) -> Vec<usize> {
        self.ask(now_us, cpu, |_, view| deadline::pull_candidates(view, cpu))
    }

    /// DL `t`, pulled onto `cpu`, waits in its queue by deadline.
    pub fn dl_queue(&mut self, cpu: usize, t: usize) {
        let deadline_ns = self.entities[t].dl.deadline_ns;
        self.rqs[cpu].dl.insert(t, deadline_ns);
    }

    /// Where a waking DL task goes (`select_task_rq_dl`), asked on `waker_cpu`.
    pub fn dl_select(&mut self, t: usize, waker_cpu: usize, now_us: f64) -> usize {
        let fitness = self.rt_fitness;
        self.ask(now_us, waker_cpu, |_, view| deadline::select_cpu(view, t, fitness))
    }

    /// DL tasks wait on `cpu` besides the one that runs.
    pub fn dl_waiting(&self, cpu: usize) -> bool {
        !self.rqs[cpu].dl.is_empty()
    }

    /// `yield_task_dl`: the running DL task gives up the rest of its runtime until its next
    /// period.
    pub fn dl_yield(&mut self, t: usize) {
        self.entities[t].dl.yielded = true;
    }
}
