//! The real-time class's bookkeeping (`crate::sched::rt` holds the rules): RT tasks queued by
//! priority, the push target of a waiting one, the RT run time each CPU accounts against its
//! runtime (throttling, borrowing) and the period timer that pays it back, SCHED_RR's turns.

use super::{Scheduler, ThreadState};
use crate::sched::rt;

/// Where an enqueued RT task goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtEnqueue {
    /// The CPU is idle and not throttled: it runs at once.
    RunsNow,
    /// It waits at the tail of its priority; the running task gives way if `preempts`.
    Waits { preempts: bool },
}

impl Scheduler<'_> {
    /// `start_rt_bandwidth`: RT work arrives; the period timer, if stopped, starts at once.
    pub fn start_rt_bandwidth(&mut self, now_us: f64) {
        if self.rt_period_next_us.is_infinite() {
            self.rt_period_next_us = now_us;
        }
    }

    /// RT throttling's period timer, µs (infinite while no RT work is about).
    pub fn rt_period_next_us(&self) -> f64 {
        self.rt_period_next_us
    }

    /// RT `t` joins `cpu`'s RT queue at `now_us`: runs at once on an idle CPU, else waits at the
    /// tail of its priority, preempting CFS or a lower priority (never a DL task).
    pub fn enqueue_rt(&mut self, cpu: usize, t: usize, now_us: f64) -> RtEnqueue {
        self.threads[t].state = ThreadState::Runnable;
        self.start_rt_bandwidth(now_us);
        let throttled = self.rqs[cpu].rt.throttled;
        let curr = self.rqs[cpu].curr;
        if curr.is_none() && !throttled {
            return RtEnqueue::RunsNow;
        }
        self.rt_queue_tail(cpu, t);
        let priority = self.entities[t].class.rt_priority();
        let e = &self.entities;
        let preempts = !throttled && curr.is_some_and(|c| !e[c].is_dl() && e[c].class.rt_priority() < priority);
        RtEnqueue::Waits { preempts }
    }

    /// RT `t` waits on `cpu` behind the tasks of its priority already there.
    fn rt_queue_tail(&mut self, cpu: usize, t: usize) {
        self.rt_arrivals += 1;
        let se = &mut self.entities[t];
        se.rt_arrival = self.rt_arrivals;
        let priority = se.class.rt_priority().expect("an RT task");
        let arrival = se.rt_arrival;
        self.rt_wait(cpu, t, priority, arrival);
    }

    /// `push_rt_tasks`' next move: the highest-priority waiting RT task of `cpu` that may move,
    /// and a CPU where it would run first.
    pub fn rt_push(&mut self, cpu: usize, now_us: f64) -> Option<(usize, usize)> {
        let fitness = self.rt_fitness;
        let t = self.rqs[cpu].rt.iter().find(|&t| self.entities[t].allowed.count() > 1)?;
        let to = self.ask(now_us, cpu, |_, view| rt::push_target(view, t, fitness))?;
        Some((t, to))
    }

    /// `pull_rt_task`: the best RT task waiting elsewhere that would run first on `cpu`.
    pub fn rt_pull(&mut self, cpu: usize, now_us: f64) -> Option<usize> {
        self.ask(now_us, cpu, |_, view| rt::pull_candidate(view, cpu))
    }

    /// Where a waking RT task goes (`select_task_rq_rt`), asked on `waker_cpu`.
    pub fn rt_select(&mut self, t: usize, waker_cpu: usize, now_us: f64) -> usize {
        let fitness = self.rt_fitness;
        self.ask(now_us, waker_cpu, |_, view| rt::select_cpu(view, t, fitness))
    }

    /// `update_curr_rt`'s accounting: the RT run time of `cpu` up to now.
    pub fn account_rt(&mut self, cpu: usize, now_us: f64) {
        let rt = &mut self.rqs[cpu].rt;
        if rt.running.is_some() {
            rt.time_us += now_us - rt.accounted_us;
        }
        rt.accounted_us = now_us;
    }

    /// `sched_rt_runtime_exceeded`, at a tick of `cpu` running RT `t`: over its runtime (after
    /// borrowing, with RT_RUNTIME_SHARE), its RT queue is throttled and `t` gives way to CFS or
    /// idle, keeping its place at the head of its list (true; the caller reschedules).
    pub fn rt_throttle_if_over(&mut self, cpu: usize, t: usize, now_us: f64) -> bool {
        self.account_rt(cpu, now_us);
        let bw = self.sysctls.rt_bandwidth;
        let within = |rt: &rt::RtQueue| rt.runtime_us >= bw.period_us || rt.time_us <= rt.runtime_us;
        if within(&self.rqs[cpu].rt) {
            return false;
        }
        if bw.share {
            rt::borrow_runtime(&mut self.rqs, cpu, bw.period_us);
            if within(&self.rqs[cpu].rt) {
                return false;
            }
        }
        self.rqs[cpu].rt.throttled = true;
        self.stop_running(cpu, t, now_us);
        let se = &self.entities[t];
        let priority = se.class.rt_priority().expect("an RT task");
        let arrival = se.rt_arrival;
        self.rt_wait(cpu, t, priority, arrival);
        self.threads[t].state = ThreadState::Runnable;
        true
    }

    /// `sched_rt_period_timer` on `cpu`: its RT run time is paid back by its runtime (5.10
    /// first returns borrowed runtime: no sharing). `None` if it has no RT time or tasks; else
    /// whether RT work remains, and whether a throttled queue whose debt is below its runtime
    /// runs RT work again.
    pub fn rt_period_cpu(&mut self, cpu: usize, now_us: f64) -> Option<(bool, bool)> {
        if !self.rqs[cpu].online {
            return None;
        }
        self.account_rt(cpu, now_us);
        let bw = self.sysctls.rt_bandwidth;
        let rq = &mut self.rqs[cpu];
        if !bw.share {
            rq.rt.runtime_us = bw.runtime_us;
        }
        if rq.rt.time_us <= 0.0 && rq.rt.running.is_none() && rq.rt.is_empty() {
            return None;
        }
        let busy = rq.rt.pay_back();
        let unthrottled = rq.rt.throttled && rq.rt.time_us < rq.rt.runtime_us;
        if unthrottled {
            rq.rt.throttled = false;
        }
        Some((busy, unthrottled))
    }

    /// The period timer runs again a period after `now_us` unless no CPU has RT work left.
    pub fn rearm_rt_period(&mut self, idle: bool, now_us: f64) {
        self.rt_period_next_us = if idle { f64::INFINITY } else { now_us + self.sysctls.rt_bandwidth.period_us };
    }

    /// `update_curr_dl`'s RT share: `delta_ns` a DL task ran on `cpu` counts as that CPU's RT time
    /// while throttling is enforced and `sched_rt_bandwidth_account` allows, so an RT task there
    /// gets what DL left of the runtime.
    pub(super) fn account_dl_as_rt(&mut self, cpu: usize, delta_ns: u64) {
        let timer_active = self.rt_period_next_us.is_finite();
        let rt = &mut self.rqs[cpu].rt;
        if self.sysctls.rt_bandwidth.enforced() && rt.accounts_dl_time(timer_active) {
            rt.time_us += delta_ns as f64 / 1000.0;
        }
    }

    /// The first RT task waiting on `cpu`.
    pub fn rt_first(&self, cpu: usize) -> Option<usize> {
        self.rqs[cpu].rt.first()
    }

    /// `task_tick_rt`: a SCHED_RR task whose slice ran out at this tick (SCHED_FIFO has none).
    pub fn rr_slice_over(&self, cpu: usize, t: usize, now_us: f64) -> bool {
        let se = &self.entities[t];
        if !matches!(se.class, rt::SchedClass::RoundRobin(_)) {
            return false;
        }
        let ticks_run = self.ticks_since(self.rqs[cpu].slice_start_us, now_us);
        rt::rr_slice_ends(ticks_run, se.rr_slice_left_ticks, self.sysctls.rr_slice_ticks)
    }

    /// Running RT `t` goes to the tail of its priority's list (`requeue_task_rt`): the first
    /// other task of its priority waiting on `cpu`, which runs instead, if one waits.
    pub fn rt_requeue_tail(&mut self, cpu: usize, t: usize) -> Option<usize> {
        let rq = &self.rqs[cpu];
        let same_priority_waits =
            rq.rt.highest_waiting().is_some_and(|p| Some(p) == self.entities[t].class.rt_priority());
        let next = rq.rt.first().filter(|_| same_priority_waits)?;
        self.rt_arrivals += 1;
        self.entities[t].rt_arrival = self.rt_arrivals;
        Some(next)
    }
}
