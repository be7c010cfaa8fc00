//! A task joining and leaving a CPU's run queues through its groups (`enqueue_task_fair`,
//! `dequeue_task_fair`): the load of each level on its way, a group's entity joining its
//! parent's run queue with the group's first task there and leaving it with the last.

use super::{Entity, Groups, Now, ROOT};
use crate::sched::cfs::{self, Placing, RunQueue, Tunables};
use crate::sched::SchedEntity;

impl Groups {
    /// Runnable `t` joins `cpu`'s run queues (`account_entity_enqueue`): its weight its group's
    /// run queue's load; a group whose run queue there was empty joins its parent's, placed as
    /// a waking entity (ENQUEUE_WAKEUP above the task); every group entity on the way takes its
    /// share anew. `t`'s own entity is queued by [`insert_task`](Self::insert_task) or runs
    /// ([`set_next`](Self::set_next)).
    pub fn join(
        &mut self,
        cpu: usize,
        t: usize,
        rq: &mut RunQueue,
        tasks: &[SchedEntity],
        now: &Now,
        tunables: &Tunables,
    ) {
        let g = self.of(t);
        if g == ROOT {
            rq.load_weight += tasks[t].weight;
            return;
        }
        self.update_level(g, cpu, now);
        self.level_mut(g, cpu).load_weight += tasks[t].weight;
        let mut child = g;
        loop {
            self.update_shares(cpu, child, false, rq, now);
            let p = self.parent(child);
            if !self.level(child, cpu).se.on_rq {
                let min = if p == ROOT { rq.min_vruntime } else { self.level(p, cpu).min_vruntime };
                if p != ROOT {
                    self.update_level(p, cpu, now);
                }
                let se = &mut self.level_mut(child, cpu).se;
                se.vruntime = cfs::place_vruntime(min, tunables, se.vruntime, Placing::Waking);
                se.on_rq = true;
                let (v, w) = (se.vruntime, se.weight);
                if p == ROOT {
                    rq.load_weight += w;
                } else {
                    self.level_mut(p, cpu).load_weight += w;
                }
                self.queue_insert(cpu, p, Entity::Group(child), v);
            }
            if p == ROOT {
                return;
            }
            child = p;
        }
    }

    /// `t` (waiting and taken off its timeline, or running) leaves `cpu`'s run queues: its
    /// weight leaves its group's run queue's load; a group with nothing left there leaves its
    /// parent's, keeping its vruntime (DEQUEUE_SLEEP); every group entity on the way takes its
    /// share anew.
    pub fn leave(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity], now: &Now) {
        let g = self.of(t);
        if g == ROOT {
            rq.load_weight -= tasks[t].weight;
            return;
        }
        self.update_level(g, cpu, now);
        self.level_mut(g, cpu).load_weight -= tasks[t].weight;
        let mut child = g;
        loop {
            let p = self.parent(child);
            let l = self.level(child, cpu);
            if l.se.on_rq && l.load_weight == 0 {
                let (v, w) = (l.se.vruntime, l.se.weight);
                if p != ROOT {
                    self.update_level(p, cpu, now);
                }
                if p == ROOT {
                    rq.load_weight -= w;
                } else {
                    self.level_mut(p, cpu).load_weight -= w;
                }
                // a running entity is not in its parent's timeline: `put_prev` leaves it out
                self.queue_remove(cpu, p, Entity::Group(child), v);
                self.level_mut(child, cpu).se.on_rq = false;
            }
            self.update_shares(cpu, child, false, rq, now);
            if p == ROOT {
                return;
            }
            child = p;
        }
    }

    /// Queued or running `t`'s weight changes from `old` (`reweight_task`): its run queue's
    /// load follows, and its groups' entities take their shares anew.
    pub fn reweight_task(
        &mut self,
        cpu: usize,
        t: usize,
        old: u64,
        rq: &mut RunQueue,
        tasks: &[SchedEntity],
        now: &Now,
    ) {
        let g = self.of(t);
        let weight = tasks[t].weight;
        if g == ROOT {
            rq.load_weight = rq.load_weight - old + weight;
            return;
        }
        self.update_level(g, cpu, now);
        let l = self.level_mut(g, cpu);
        l.load_weight = l.load_weight - old + weight;
        let mut child = g;
        loop {
            self.update_shares(cpu, child, false, rq, now);
            child = self.parent(child);
            if child == ROOT {
                return;
            }
        }
    }
}
