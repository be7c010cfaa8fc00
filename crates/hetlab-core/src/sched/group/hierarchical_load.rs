//! What the load balancer and wake_affine read of a task through its groups: its hierarchical
//! load (`task_h_load`), what it would add to a CPU's load (`effective_load`), and the root
//! level's load as 3.x sums it.

use super::{Entity, Groups, MIN_SHARES, ROOT};
use crate::sched::cfs::RunQueue;
use crate::sched::SchedEntity;

impl Groups {
    /// `task_h_load` (3.10): the share of its CPU's load `t` stands for — its weight, scaled at
    /// each group by the group entity's weight over its run queue's load (`tg_load_down`, from
    /// the CPU's load at the root). A task of the root group counts its weight (the kernel's
    /// `w·L/(L+1)` is one less).
    pub fn task_h_load(&self, t: usize, rqs: &[RunQueue], tasks: &[SchedEntity]) -> u64 {
        let se = &tasks[t];
        let g = self.of(t);
        if g == ROOT {
            return se.weight;
        }
        let cpu = se.cpu;
        // h_load of g's run queue: from the root down, so collect the way up first
        let mut way = [ROOT; 64];
        let mut n = 0;
        let mut x = g;
        while x != ROOT && n < way.len() {
            way[n] = x;
            n += 1;
            x = self.parent(x);
        }
        let mut h_load = rqs[cpu].load_weight as u128;
        let mut parent_load = rqs[cpu].load_weight as u128;
        for &x in way[..n].iter().rev() {
            let l = self.level(x, cpu);
            h_load = h_load * l.se.weight as u128 / (parent_load + 1);
            parent_load = l.load_weight as u128;
        }
        (se.weight as u128 * h_load / (parent_load + 1)) as u64
    }

    /// `effective_load` (3.10): how much `cpu`'s load would grow if `t` joined its group's run
    /// queue there — its weight at the root, else the change of its groups' entities' shares
    /// up the way (`wake_affine`'s measure).
    pub fn effective_load(&self, t: usize, cpu: usize, tasks: &[SchedEntity]) -> i64 {
        let weight = tasks[t].weight as i64;
        let mut g = self.of(t);
        if g == ROOT {
            return weight;
        }
        let (mut wl, mut wg) = (weight, weight);
        while g != ROOT {
            let tg = &self.groups[g];
            let l = &tg.levels[cpu];
            // calc_tg_weight: this CPU's weight instead of its last contribution
            let tg_weight = tg.load_avg as i64 - l.tg_load_contrib as i64 + l.load_weight as i64;
            let big_w = wg + tg_weight;
            let w = l.load_weight as i64 + wl;
            wl = if big_w > 0 && w < big_w { w * tg.shares as i64 / big_w } else { tg.shares as i64 };
            wl = wl.max(MIN_SHARES as i64) - l.se.weight as i64;
            wg = 0;
            g = tg.parent;
        }
        wl
    }

    /// The signals of the root level's entities of `cpu` summed as 3.x sums a run queue's load
    /// (`runnable_load_avg`): tasks by their own, groups' entities by their run queue's
    /// runnable share at their weight.
    pub fn root_load(&self, cpu: usize, rq: &RunQueue, tasks: &[SchedEntity]) -> u64 {
        let contrib = |e: Entity| match e {
            Entity::Task(t) => tasks[t].avg.load_avg_contrib(tasks[t].weight),
            Entity::Group(g) => {
                let l = self.level(g, cpu);
                l.avg.load_avg_contrib(l.se.weight)
            }
        };
        let running = rq.curr.map(|t| self.top_entity(t));
        if self.is_active() {
            running.into_iter().chain(self.top[cpu].iter()).map(contrib).sum()
        } else {
            running.into_iter().chain(rq.queue.iter().map(Entity::Task)).map(contrib).sum()
        }
    }
}
