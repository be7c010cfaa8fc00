//! Which entity runs: the running task's entities at every level (`set_next_entity`,
//! `put_prev_entity`, the turns each kernel keeps), the charge of their time, the pick from the
//! root down, wake-up preemption at the common level and the tick's check of every level.

use super::{Entity, Groups, Now, ROOT};
use crate::sched::cfs::{self, RunQueue, Tunables};
use crate::sched::{Kernel, SchedEntity};

impl Groups {
    /// `set_next_entity` at every level: `t`, off the timelines, runs on `cpu`; each group
    /// entity on its way, off its parent's timeline, is its parent's running entity and starts
    /// a turn, unless (5.10) it is also on the way of the task that was put back just before.
    pub fn set_next(&mut self, cpu: usize, t: usize, now: &Now) {
        let prev = self.prev.get_mut(cpu).and_then(Option::take);
        let g = self.of(t);
        if g == ROOT {
            return;
        }
        self.update_level(g, cpu, now);
        self.level_mut(g, cpu).curr = Some(Entity::Task(t));
        let mut child = g;
        loop {
            let p = self.parent(child);
            let keeps_turn = self.kernel != Kernel::V3_10 && prev.is_some_and(|pt| self.contains(child, self.of(pt)));
            let se = &mut self.level_mut(child, cpu).se;
            se.running = true;
            se.exec_start_us = now.us;
            if !keeps_turn {
                se.slice_start_us = now.us;
            }
            let v = se.vruntime;
            self.queue_remove(cpu, p, Entity::Group(child), v);
            if p == ROOT {
                return;
            }
            self.update_level(p, cpu, now);
            self.level_mut(p, cpu).curr = Some(Entity::Group(child));
            child = p;
        }
    }

    /// `put_prev_entity` at every level: running `t` stops on `cpu` (to wait again, by the
    /// caller, or having left); each group entity on its way that is still queued goes back to
    /// its parent's timeline.
    pub fn put_prev(&mut self, cpu: usize, t: usize, now: &Now) {
        if let Some(prev) = self.prev.get_mut(cpu) {
            *prev = Some(t);
        }
        let g = self.of(t);
        if g == ROOT {
            return;
        }
        self.update_level(g, cpu, now);
        self.level_mut(g, cpu).curr = None;
        let mut child = g;
        loop {
            let p = self.parent(child);
            if p != ROOT {
                self.update_level(p, cpu, now);
                self.level_mut(p, cpu).curr = None;
            }
            let se = &mut self.level_mut(child, cpu).se;
            se.running = false;
            let (on_rq, v) = (se.on_rq, se.vruntime);
            if on_rq {
                self.queue_insert(cpu, p, Entity::Group(child), v);
            }
            if p == ROOT {
                return;
            }
            child = p;
        }
    }

    /// `cpu` runs no CFS task next (an RT task, or idle): the next pick starts every level anew.
    pub fn forget_prev(&mut self, cpu: usize) {
        if let Some(p) = self.prev.get_mut(cpu) {
            *p = None;
        }
    }

    /// The running `t` starts a new turn on `cpu` without a switch: 3.10 puts back and sets its
    /// groups' entities too; 5.10 keeps them (`pick_next_task_fair` finds `prev` again).
    pub fn new_turn(&mut self, cpu: usize, t: usize, now_us: f64) {
        if self.kernel != Kernel::V3_10 {
            return;
        }
        let mut g = self.of(t);
        while g != ROOT {
            self.level_mut(g, cpu).se.slice_start_us = now_us;
            g = self.parent(g);
        }
    }

    /// `update_curr` above the task: the running CFS task `t`'s group entities on `cpu` are
    /// charged their time, each at its weight; then each of its run queues' floors moves, the
    /// CPU's last (`update_min_vruntime`).
    pub fn update_curr(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity], now_us: f64) {
        let mut g = self.of(t);
        while g != ROOT {
            self.charge(g, cpu, now_us);
            let l = self.level(g, cpu);
            let curr = l.curr.map(|e| self.vruntime(cpu, e, tasks));
            let left = l.queue.first().map(|e| self.vruntime(cpu, e, tasks));
            let min = cfs::min_vruntime(l.min_vruntime, curr, left);
            self.level_mut(g, cpu).min_vruntime = min;
            g = self.parent(g);
        }
        let curr = self.vruntime(cpu, self.top_entity(t), tasks);
        let left = self.first(cpu, ROOT, rq).map(|e| self.vruntime(cpu, e, tasks));
        rq.update_min_vruntime(Some(curr), left);
    }

    /// The task CFS runs next on `cpu` (`pick_next_task_fair`): from the root down, the
    /// smallest vruntime at each level. With `curr` (running and still queued) its entities
    /// compete at their levels, keeping the CPU against an equal vruntime; `yielding`, they give
    /// way wherever another entity waits (`yield_task_fair`'s skip buddy).
    pub fn pick(
        &self,
        cpu: usize,
        rq: &RunQueue,
        tasks: &[SchedEntity],
        curr: Option<usize>,
        yielding: bool,
    ) -> Option<usize> {
        let mut g = ROOT;
        let mut on_curr = curr.is_some();
        loop {
            let left = self.first(cpu, g, rq);
            let running = if on_curr { self.running(cpu, g, rq) } else { None };
            let v = |e| self.vruntime(cpu, e, tasks);
            let e = match (left, running) {
                (Some(l), Some(c)) if yielding || v(l) < v(c) => l,
                (_, Some(c)) => c,
                (Some(l), None) => l,
                (None, None) => return None,
            };
            on_curr &= Some(e) == running;
            match e {
                Entity::Task(t) => return Some(t),
                Entity::Group(child) => g = child,
            }
        }
    }

    /// `find_matching_se`: the entities of `a` and `b` on their common run queue.
    pub(super) fn matching(&self, a: Entity, b: Entity) -> (Entity, Entity) {
        let depth = |e: Entity| self.groups[self.queue_of(e)].depth;
        let up = |e: Entity| self.parent_entity(e).expect("below the root");
        let (mut a, mut b) = (a, b);
        while depth(a) > depth(b) {
            a = up(a);
        }
        while depth(b) > depth(a) {
            b = up(b);
        }
        while self.queue_of(a) != self.queue_of(b) {
            (a, b) = (up(a), up(b));
        }
        (a, b)
    }

    /// `check_preempt_wakeup`: whether waking `t` preempts running `curr` on `cpu`, their
    /// entities compared on their common run queue (the granularity at the waking one's
    /// weight), after the SCHED_IDLE and SCHED_BATCH rules (`cfs::policy_preempts`).
    pub fn wakeup_preempts(
        &self,
        cpu: usize,
        curr: usize,
        t: usize,
        tasks: &[SchedEntity],
        tunables: &Tunables,
    ) -> bool {
        if let Some(preempts) = cfs::policy_preempts(tasks[curr].class, tasks[t].class) {
            return preempts;
        }
        let (se, pse) = self.matching(Entity::Task(curr), Entity::Task(t));
        let v = |e| self.vruntime(cpu, e, tasks);
        cfs::wakeup_preempts(tunables, v(se), v(pse), self.weight(cpu, pse, tasks))
    }

    /// `sched_slice` of `e` on `cpu`: the period for its run queue's entities, shared by weight
    /// at each level up to the CPU's.
    pub fn slice_us(&self, cpu: usize, e: Entity, rq: &RunQueue, tasks: &[SchedEntity], tunables: &Tunables) -> f64 {
        let nr = self.nr_running(cpu, self.queue_of(e), rq);
        let levels = std::iter::successors(Some(e), |&x| self.parent_entity(x))
            .map(|x| (self.weight(cpu, x, tasks), self.load(cpu, self.queue_of(x), rq)));
        cfs::sched_slice(tunables, nr, levels)
    }

    /// `entity_tick` at every level of running `t` on `cpu`: each of its group run queues'
    /// signals and its entity's share are brought up to date (3.10 forcing the contribution),
    /// then whether the turn of its entity at any level is over (`check_preempt_tick`).
    pub fn tick(
        &mut self,
        cpu: usize,
        t: usize,
        rq: &mut RunQueue,
        tasks: &[SchedEntity],
        now: &Now,
        tunables: &Tunables,
    ) -> bool {
        let mut g = self.of(t);
        while g != ROOT {
            self.update_level(g, cpu, now);
            self.update_shares(cpu, g, self.kernel == Kernel::V3_10, rq, now);
            g = self.parent(g);
        }
        let mut e = Entity::Task(t);
        loop {
            let g = self.queue_of(e);
            if self.nr_running(cpu, g, rq) > 1 {
                let ideal_us = self.slice_us(cpu, e, rq, tasks, tunables);
                let started_us = match e {
                    Entity::Task(_) => rq.slice_start_us,
                    Entity::Group(child) => self.level(child, cpu).se.slice_start_us,
                };
                let left = self.first(cpu, g, rq).map(|l| self.vruntime(cpu, l, tasks));
                let v = self.vruntime(cpu, e, tasks);
                if cfs::tick_preempts(tunables, ideal_us, v, now.us - started_us, left) {
                    return true;
                }
            }
            match self.parent_entity(e) {
                Some(p) => e = p,
                None => return false,
            }
        }
    }
}
