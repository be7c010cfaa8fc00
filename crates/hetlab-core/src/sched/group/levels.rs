//! The entities and run queues of each CPU's levels: which run queue an entity is on, its
//! vruntime and weight, each run queue's floor, load, leftmost and running entity, and the
//! waiting tasks' place in the CPU's queue and their own level's timeline.

use super::{Entity, Groups, ROOT};
use crate::sched::cfs::RunQueue;
use crate::sched::SchedEntity;

impl Groups {
    /// The group whose run queue `e` is on: a task's own group, a group entity's parent.
    pub(super) fn queue_of(&self, e: Entity) -> usize {
        match e {
            Entity::Task(t) => self.of(t),
            Entity::Group(g) => self.parent(g),
        }
    }

    /// `parent_entity`: the entity of the group whose run queue `e` is on; none at the root.
    pub(super) fn parent_entity(&self, e: Entity) -> Option<Entity> {
        let g = self.queue_of(e);
        (g != ROOT).then_some(Entity::Group(g))
    }

    /// The entity of `t`'s line on the root level: itself, or its top group's.
    pub(super) fn top_entity(&self, t: usize) -> Entity {
        let mut e = Entity::Task(t);
        while let Some(p) = self.parent_entity(e) {
            e = p;
        }
        e
    }

    pub fn vruntime(&self, cpu: usize, e: Entity, tasks: &[SchedEntity]) -> f64 {
        match e {
            Entity::Task(t) => tasks[t].vruntime,
            Entity::Group(g) => self.level(g, cpu).se.vruntime,
        }
    }

    pub(super) fn weight(&self, cpu: usize, e: Entity, tasks: &[SchedEntity]) -> u64 {
        match e {
            Entity::Task(t) => tasks[t].weight,
            Entity::Group(g) => self.level(g, cpu).se.weight,
        }
    }

    /// The vruntime floor of `g`'s run queue on `cpu` (the root's: the CPU's).
    pub fn min_vruntime(&self, cpu: usize, g: usize, rq: &RunQueue) -> f64 {
        if g == ROOT {
            rq.min_vruntime
        } else {
            self.level(g, cpu).min_vruntime
        }
    }

    pub(super) fn load(&self, cpu: usize, g: usize, rq: &RunQueue) -> u64 {
        if g == ROOT {
            rq.load_weight
        } else {
            self.level(g, cpu).load_weight
        }
    }

    /// The leftmost entity waiting on `g`'s run queue on `cpu`.
    pub(super) fn first(&self, cpu: usize, g: usize, rq: &RunQueue) -> Option<Entity> {
        match g {
            ROOT if self.is_active() => self.top[cpu].first(),
            ROOT => rq.queue.first().map(Entity::Task),
            _ => self.level(g, cpu).queue.first(),
        }
    }

    /// The entity running on `g`'s run queue on `cpu`.
    pub(super) fn running(&self, cpu: usize, g: usize, rq: &RunQueue) -> Option<Entity> {
        match g {
            ROOT => rq.cfs_curr().map(|t| self.top_entity(t)),
            _ => self.level(g, cpu).curr,
        }
    }

    /// Entities queued or running on `g`'s run queue (`cfs_rq->nr_running`).
    pub(super) fn nr_running(&self, cpu: usize, g: usize, rq: &RunQueue) -> usize {
        match g {
            ROOT if self.is_active() => self.top[cpu].len() + rq.cfs_curr().is_some() as usize,
            ROOT => rq.cfs_nr_running(),
            _ => {
                let l = self.level(g, cpu);
                l.queue.len() + l.curr.is_some() as usize
            }
        }
    }

    pub(super) fn queue_insert(&mut self, cpu: usize, g: usize, e: Entity, vruntime: f64) {
        match g {
            ROOT if self.is_active() => self.top[cpu].insert(e, vruntime),
            ROOT => {} // the CPU's queue, by the caller
            _ => self.level_mut(g, cpu).queue.insert(e, vruntime),
        }
    }

    pub(super) fn queue_remove(&mut self, cpu: usize, g: usize, e: Entity, vruntime: f64) -> bool {
        match g {
            ROOT if self.is_active() => self.top[cpu].remove(e, vruntime),
            ROOT => true,
            _ => self.level_mut(g, cpu).queue.remove(e, vruntime),
        }
    }

    /// Waiting `t` goes into the CPU's task queue and its own run queue's timeline.
    pub fn insert_task(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity]) {
        let v = tasks[t].vruntime;
        rq.queue.insert(t, v);
        self.queue_insert(cpu, self.of(t), Entity::Task(t), v);
    }

    /// Waiting `t` leaves both; false if it was not waiting there.
    pub fn remove_task(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity]) -> bool {
        let v = tasks[t].vruntime;
        let waited = rq.queue.remove(t, v);
        let in_level = self.queue_remove(cpu, self.of(t), Entity::Task(t), v);
        debug_assert_eq!(waited, in_level, "the CPU's queue and the levels agree");
        waited
    }

    /// `t`'s vruntime renormalised from its group's run queue on `from` to its group's on `to`
    /// (`migrate_task_rq_fair`, `task_move_group_fair`).
    pub fn renormalise(&self, t: usize, from: usize, to: usize, rqs: &[RunQueue], tasks: &mut [SchedEntity]) {
        let g = self.of(t);
        let se = &mut tasks[t];
        se.vruntime = se.vruntime - self.min_vruntime(from, g, &rqs[from]) + self.min_vruntime(to, g, &rqs[to]);
    }
}
