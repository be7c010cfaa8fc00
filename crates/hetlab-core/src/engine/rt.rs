//! The real-time class in the engine (`sched::rt` holds the rules): RT tasks queued by
//! priority and pushed to CPUs where they run first, SCHED_RR's turns at the tick, the RT run
//! time each CPU accounts against its runtime (throttling, borrowing) and the period timer that
//! pays it back, and the RT utilisation signal.

use super::state::ThreadState;
use super::Engine;
use crate::sched::{rt, ClassKind};
use crate::trace::PrevState;

impl Engine<'_> {
    /// `start_rt_bandwidth`: RT work arrives; the period timer, if stopped, starts at once.
    pub(super) fn start_rt_bandwidth(&mut self) {
        if self.sched.rt_period_next_us.is_infinite() {
            self.sched.rt_period_next_us = self.now_us;
        }
    }

    /// Accounts `cpu`'s RT utilisation up to now (`update_rt_rq_load_avg`: running while an
    /// RT task runs there).
    pub(super) fn update_rt_avg(&mut self, cpu: usize) {
        if !self.sched.track_util {
            return;
        }
        let running = self.sched.rqs[cpu].rt.running.is_some();
        let state = self.pelt_state(cpu, running, running);
        let now = self.now_ns();
        self.sched.rqs[cpu].avg_rt.update(now, state);
    }

    /// RT `t` joins `cpu`'s RT queue at the tail of its priority: runs at once on an idle CPU,
    /// preempts CFS or a lower priority, or else waits and, if `push`, is pushed to a CPU where
    /// it would run (`task_woken_rt`; a task pushed here is not pushed on from here at once).
    pub(super) fn enqueue_rt(&mut self, cpu: usize, t: usize, push: bool) {
        self.threads[t].state = ThreadState::Runnable;
        self.start_rt_bandwidth();
        let throttled = self.sched.rqs[cpu].rt.throttled;
        let curr = self.sched.rqs[cpu].curr;
        if curr.is_none() && !throttled {
            self.switch_in(cpu, t, None);
            return;
        }
        self.rt_queue_tail(cpu, t);
        let priority = self.sched.entities[t].class.rt_priority();
        let e = &self.sched.entities;
        // never a DL task
        if !throttled && curr.is_some_and(|c| !e[c].is_dl() && e[c].class.rt_priority() < priority) {
            self.resched(cpu);
        } else if push {
            self.push_rt(cpu);
        }
    }

    /// RT `t` waits on `cpu` behind the tasks of its priority already there.
    pub(super) fn rt_queue_tail(&mut self, cpu: usize, t: usize) {
        self.sched.rt_arrivals += 1;
        let se = &mut self.sched.entities[t];
        se.rt_arrival = self.sched.rt_arrivals;
        let priority = se.class.rt_priority().expect("an RT task");
        self.sched.rqs[cpu].rt.insert(t, priority, se.rt_arrival);
    }

    /// `push_rt_tasks`: while the highest-priority waiting RT task of `cpu` that may move would
    /// run first elsewhere, it moves there.
    pub(super) fn push_rt(&mut self, cpu: usize) {
        let fitness = self.sched.rt_fitness;
        loop {
            let rq = &self.sched.rqs[cpu];
            let Some(t) = rq.rt.iter().find(|&t| self.sched.entities[t].allowed.count() > 1) else { return };
            let Some(to) = self.sched.ask(self.now_us, cpu, |_, view| rt::push_target(view, t, fitness)) else {
                return;
            };
            self.move_waiting(t, to, cpu);
            self.enqueue_rt(to, t, false);
        }
    }

    /// `update_curr_rt`'s accounting: the RT run time of `cpu` up to now.
    pub(super) fn account_rt(&mut self, cpu: usize) {
        let rt = &mut self.sched.rqs[cpu].rt;
        if rt.running.is_some() {
            rt.time_us += self.now_us - rt.accounted_us;
        }
        rt.accounted_us = self.now_us;
    }

    /// `sched_rt_runtime_exceeded`, at a tick of `cpu` running RT work: over its runtime (after
    /// borrowing, with RT_RUNTIME_SHARE), its RT queue is throttled and the running RT task
    /// gives way to CFS or idle, keeping its place at the head of its list.
    pub(super) fn rt_check_runtime(&mut self, cpu: usize, t: usize) -> bool {
        self.account_rt(cpu);
        let bw = self.sched.rt_bandwidth;
        let within = |rt: &rt::RtQueue| rt.runtime_us >= bw.period_us || rt.time_us <= rt.runtime_us;
        if within(&self.sched.rqs[cpu].rt) {
            return false;
        }
        if bw.share {
            rt::borrow_runtime(&mut self.sched.rqs, cpu, bw.period_us);
            if within(&self.sched.rqs[cpu].rt) {
                return false;
            }
        }
        self.sched.rqs[cpu].rt.throttled = true;
        self.out.rt_throttles += 1;
        self.stop_running(cpu, t);
        let se = &self.sched.entities[t];
        let priority = se.class.rt_priority().expect("an RT task");
        self.sched.rqs[cpu].rt.insert(t, priority, se.rt_arrival);
        self.threads[t].state = ThreadState::Runnable;
        self.reschedule(cpu, (self.threads[t].tid, PrevState::Runnable), ClassKind::Rt);
        true
    }

    /// `sched_rt_period_timer`: each CPU's RT run time is paid back by its runtime (5.10 first
    /// returns borrowed runtime: no sharing), a throttled CPU whose debt is below its runtime
    /// runs RT work again, and the timer stops once no CPU has RT time or tasks left.
    pub(super) fn rt_period_timer(&mut self) {
        let bw = self.sched.rt_bandwidth;
        let mut idle = true;
        for cpu in 0..self.sched.rqs.len() {
            if !self.sched.rqs[cpu].online {
                continue;
            }
            self.account_rt(cpu);
            let rq = &mut self.sched.rqs[cpu];
            if !bw.share {
                rq.rt.runtime_us = bw.runtime_us;
            }
            if rq.rt.time_us <= 0.0 && rq.rt.running.is_none() && rq.rt.is_empty() {
                continue;
            }
            idle &= !rq.rt.pay_back();
            if rq.rt.throttled && rq.rt.time_us < rq.rt.runtime_us {
                rq.rt.throttled = false;
                self.rt_unthrottled(cpu);
            }
        }
        self.sched.rt_period_next_us = if idle { f64::INFINITY } else { self.now_us + bw.period_us };
    }

    /// `update_curr_dl`'s RT share: `delta_ns` a DL task ran on `cpu` counts as that CPU's RT time
    /// while throttling is enforced and `sched_rt_bandwidth_account` allows, so an RT task there
    /// gets what DL left of the runtime.
    pub(super) fn account_dl_as_rt(&mut self, cpu: usize, delta_ns: u64) {
        let timer_active = self.sched.rt_period_next_us.is_finite();
        let rt = &mut self.sched.rqs[cpu].rt;
        if self.sched.rt_bandwidth.enforced() && rt.accounts_dl_time(timer_active) {
            rt.time_us += delta_ns as f64 / 1000.0;
        }
    }

    /// `cpu`'s RT queue may run again: its first RT task runs now, before any CFS task.
    pub(super) fn rt_unthrottled(&mut self, cpu: usize) {
        let Some(first) = self.sched.rqs[cpu].rt.first() else { return };
        match self.sched.rqs[cpu].curr {
            None => {
                self.unqueue(first);
                self.switch_in(cpu, first, None);
            }
            Some(_) => self.preempt(cpu),
        }
    }

    /// `task_tick_rt`: a SCHED_RR task whose slice ran out at this tick goes behind the others
    /// of its priority (its slice refilled); SCHED_FIFO has no slice.
    pub(super) fn rr_tick(&mut self, cpu: usize, t: usize) {
        let se = &self.sched.entities[t];
        if !matches!(se.class, rt::SchedClass::RoundRobin(_)) {
            return;
        }
        let ticks_run = self.ticks_since(self.sched.rqs[cpu].slice_start_us);
        if rt::rr_slice_ends(ticks_run, se.rr_slice_left_ticks, self.sched.rr_slice_ticks) {
            self.rt_requeue_tail(cpu, t);
        }
    }

    /// Running RT `t` goes to the tail of its priority's list (`requeue_task_rt`); the first
    /// other task of its priority, if one waits, runs.
    pub(super) fn rt_requeue_tail(&mut self, cpu: usize, t: usize) {
        let rq = &self.sched.rqs[cpu];
        if rq.rt.highest_waiting().is_some_and(|p| Some(p) == self.sched.entities[t].class.rt_priority()) {
            let next = rq.rt.first().expect("waiting");
            self.sched.rt_arrivals += 1;
            self.sched.entities[t].rt_arrival = self.sched.rt_arrivals;
            self.switch_to(cpu, t, next);
        }
    }

    /// Scheduler ticks from `since_us` to now (ticks fall on multiples of the tick period).
    pub(super) fn ticks_since(&self, since_us: f64) -> u64 {
        let tick = self.sched.tick_us;
        ((self.now_us / tick + 1e-9).floor() - (since_us / tick + 1e-9).floor()).max(0.0) as u64
    }
}
