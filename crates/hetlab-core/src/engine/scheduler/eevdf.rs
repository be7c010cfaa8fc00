//! EEVDF applied (Linux 6.6+; `crate::sched::eevdf` holds the rules): the CPU's run queue's
//! average vruntime over its waiting CFS tasks and its running one, the pick, a task's
//! placement when it arrives and its lag when it leaves, the end of a request in
//! `update_curr`, wake-up preemption, the RUN_TO_PARITY stash at `set_next_entity`, yield and
//! a weight change. Task groups are refused under EEVDF (`build`): every entity here is a task
//! on a CPU's own run queue.

use super::{Arrival, Scheduler};
use crate::sched::eevdf::{self, Arriving, Average, Candidate};

impl Scheduler<'_> {
    /// The average of `cpu`'s run queue: its waiting CFS tasks and its running one, but
    /// `except` (an entity not on the queue yet, or leaving it).
    fn eevdf_average(&self, cpu: usize, except: Option<usize>) -> Average {
        let rq = &self.rqs[cpu];
        let e = &self.entities;
        let curr = rq.cfs_curr().filter(|&t| Some(t) != except);
        let queued = rq.queue.iter().filter(|&t| Some(t) != except);
        Average::of(rq.min_vruntime, queued.chain(curr).map(|t| (e[t].vruntime, e[t].weight)))
    }

    fn candidate(&self, t: usize) -> Candidate<usize> {
        let se = &self.entities[t];
        Candidate { id: t, vruntime: se.vruntime, deadline: se.eevdf.deadline, slice_us: se.eevdf.slice_us }
    }

    /// `pick_eevdf` on `cpu`: among its waiting CFS tasks and `curr` (running and still queued).
    pub(super) fn eevdf_pick(&self, cpu: usize, curr: Option<usize>) -> Option<usize> {
        let rules = self.eevdf.expect("EEVDF");
        let avg = self.eevdf_average(cpu, None);
        let curr = curr.map(|t| (self.candidate(t), self.entities[t].eevdf.protected()));
        eevdf::pick(&avg, curr, self.rqs[cpu].queue.iter().map(|t| self.candidate(t)), &rules.features)
    }

    /// `update_curr`'s EEVDF part, the running CFS `t`'s vruntime accounted: a request done
    /// starts the next, and the CPU reschedules if other tasks wait, or if a shorter slice
    /// cancelled `t`'s protection and it is no longer eligible (`did_preempt_short`).
    pub(super) fn eevdf_update_curr(&mut self, cpu: usize, t: usize) {
        let rules = self.eevdf.expect("EEVDF");
        let se = &mut self.entities[t];
        let renewed = eevdf::update_deadline(se.vruntime, se.weight, &mut se.eevdf, rules.base_slice_us);
        if self.rqs[cpu].cfs_nr_running() == 1 {
            return;
        }
        let avg = self.eevdf_average(cpu, None);
        let se = &self.entities[t];
        if renewed || eevdf::did_preempt_short(&avg, se.vruntime, &se.eevdf, &rules.features) {
            self.resched[cpu] = true;
        }
    }

    /// A reschedule `update_curr` asked for on `cpu` and no pick answered yet (taken).
    pub(super) fn take_resched(&mut self, cpu: usize) -> bool {
        std::mem::take(&mut self.resched[cpu])
    }

    /// `place_entity`: CFS `t` arrives on `cpu`'s run queue (not counted there yet), its
    /// vruntime and deadline from the lag it keeps.
    pub(super) fn eevdf_place(&mut self, cpu: usize, t: usize, arrival: Arrival) {
        let rules = self.eevdf.expect("EEVDF");
        let avg = self.eevdf_average(cpu, Some(t));
        let rq = &self.rqs[cpu];
        let nr_running = rq.queue.len() + rq.cfs_curr().is_some_and(|c| c != t) as usize;
        let arriving = if arrival == Arrival::Fork { Arriving::New } else { Arriving::Other };
        let se = &mut self.entities[t];
        se.vruntime = eevdf::place(&avg, nr_running, se.weight, &mut se.eevdf, arriving, &rules.features);
    }

    /// `dequeue_entity`'s EEVDF part: CFS `t` (still counted on `cpu`'s run queue) leaves it,
    /// to sleep or (not `sleeping`) to go on elsewhere: the lag it keeps.
    pub(super) fn eevdf_dequeue(&mut self, cpu: usize, t: usize, sleeping: bool) {
        let rules = self.eevdf.expect("EEVDF");
        let avg = self.eevdf_average(cpu, None);
        let se = &mut self.entities[t];
        eevdf::dequeue(&avg, se.vruntime, se.weight, &mut se.eevdf, sleeping, rules.tick_us, &rules.features);
    }

    /// `check_preempt_wakeup_fair`'s EEVDF part (after the policy rules, the running task's
    /// time accounted): a reschedule already asked for stands; a shorter slice may cancel the
    /// running task's protection; the woken `t` preempts `curr` if it is now the pick.
    pub(super) fn eevdf_wakeup_preempts(&mut self, cpu: usize, curr: usize, t: usize) -> bool {
        if self.take_resched(cpu) {
            return true;
        }
        let rules = self.eevdf.expect("EEVDF");
        let avg = self.eevdf_average(cpu, None);
        let (p, c) = (self.candidate(t), self.candidate(curr));
        let se = &mut self.entities[curr].eevdf;
        if eevdf::do_preempt_short(&avg, &p, &c, &rules.features) && se.protected() {
            se.picked_deadline = f64::NAN;
        }
        self.eevdf_pick(cpu, Some(curr)) == Some(t)
    }

    /// `set_next_entity`: `t`, taken off the queue to run, stashes the deadline it was picked
    /// with (RUN_TO_PARITY); a reschedule asked for on its CPU is answered.
    pub(super) fn eevdf_set_next(&mut self, cpu: usize, t: usize) {
        let r = &mut self.entities[t].eevdf;
        r.picked_deadline = r.deadline;
        self.resched[cpu] = false;
    }

    /// `yield_task_fair`: running CFS `t` of `cpu`, its time accounted, pushes its deadline one
    /// request on (with another task there).
    pub fn yield_fair(&mut self, cpu: usize, t: usize) {
        if self.eevdf.is_some() && self.rqs[cpu].nr_running() > 1 {
            let se = &mut self.entities[t];
            eevdf::yield_deadline(se.weight, &mut se.eevdf);
        }
    }

    /// `reweight_entity`'s EEVDF part: CFS `t` of `cpu` (queued, running, or off the run
    /// queue: `on_rq`) changes weight from `old` to its current one.
    pub(super) fn eevdf_reweight(&mut self, cpu: usize, t: usize, old: u64, on_rq: bool) {
        let rules = self.eevdf.expect("EEVDF");
        let new = self.entities[t].weight;
        if !on_rq {
            eevdf::reweight_off_queue(old, new, &mut self.entities[t].eevdf);
            return;
        }
        // the average with its old weight
        self.entities[t].weight = old;
        let v = self.eevdf_average(cpu, None).v();
        self.entities[t].weight = new;
        let waiting = self.rqs[cpu].cfs_curr() != Some(t);
        if waiting {
            self.rqs[cpu].queue.remove(t, self.entities[t].vruntime);
        }
        let se = &mut self.entities[t];
        se.vruntime = eevdf::reweight(v, se.vruntime, old, new, &mut se.eevdf, rules.tick_us);
        if waiting {
            self.rqs[cpu].queue.insert(t, se.vruntime);
        }
        let rq = &mut self.rqs[cpu];
        let curr = rq.cfs_curr().map(|c| self.entities[c].vruntime);
        let left = rq.queue.first().map(|l| self.entities[l].vruntime);
        rq.update_min_vruntime(curr, left);
    }
}
