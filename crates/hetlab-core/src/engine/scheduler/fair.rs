//! CFS applied (`crate::sched::cfs` and `crate::sched::group` hold the rules): virtual runtime
//! accounted at each level, the pick, entities joining and leaving their run queues' loads,
//! weights, the enqueue of a woken, new or moved task with its vruntime placement and wake-up
//! preemption, the tick's preemption, and a task moving between task groups.

use super::{Arrival, Scheduler, ThreadState};
use crate::sched::cfs::{self, Placing};
use crate::sched::group::Entity;

/// Where an enqueued CFS task goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairEnqueue {
    /// The CPU is idle: it runs at once.
    RunsNow,
    /// It waits; the running task is to give way if `preempts`.
    Waits { preempts: bool },
}

impl Scheduler<'_> {
    /// Accounts the running CFS thread's virtual runtime up to now, and its groups' entities'
    /// (`update_curr` at each level).
    pub fn update_curr(&mut self, cpu: usize, now_us: f64) {
        let rq = &mut self.rqs[cpu];
        let Some(t) = rq.cfs_curr() else { return };
        let delta_us = now_us - rq.exec_start_us;
        if delta_us > 0.0 {
            let se = &mut self.entities[t];
            se.vruntime += cfs::delta_fair(delta_us, se.weight);
            se.exec_start_us = now_us;
            rq.exec_start_us = now_us;
            if self.eevdf.is_some() {
                self.eevdf_update_curr(cpu, t);
            }
        }
        let rq = &mut self.rqs[cpu];
        self.groups.update_curr(cpu, t, rq, &self.entities, now_us);
    }

    /// The CFS thread to run next on `cpu` (`pick_next_task_fair`, `sched::group`): with
    /// `curr`, the running one competes; `yielding`, it gives way to any other.
    /// Under EEVDF the pick is `pick_eevdf` (a yield has moved the deadline: `yield_fair`).
    pub fn pick_cfs(&self, cpu: usize, curr: Option<usize>, yielding: bool) -> Option<usize> {
        if self.eevdf.is_some() {
            return self.eevdf_pick(cpu, curr);
        }
        self.groups.pick(cpu, &self.rqs[cpu], &self.entities, curr, yielding)
    }

    /// CFS `t` (running, or waiting and off its timeline) leaves `cpu`'s run queues' loads; a
    /// running one under EEVDF keeps its lag (`sleeping`: it blocks, else it goes on elsewhere).
    pub fn cfs_leave(&mut self, cpu: usize, t: usize, sleeping: bool, now_us: f64) {
        if self.eevdf.is_some() && self.rqs[cpu].cfs_curr() == Some(t) {
            self.eevdf_dequeue(cpu, t, sleeping);
        }
        let now = self.group_now(cpu, now_us);
        self.groups.leave(cpu, t, &mut self.rqs[cpu], &self.entities, &now);
    }

    /// CFS `t` joins `cpu`'s run queues' loads (its signals its groups' first, if not there).
    pub fn cfs_join(&mut self, cpu: usize, t: usize, now_us: f64) {
        let now = self.group_now(cpu, now_us);
        self.groups.attach(cpu, t, &mut self.rqs[cpu], &self.entities, &now);
        self.groups.join(cpu, t, &mut self.rqs[cpu], &self.entities, &now, &self.cfs);
    }

    /// `t`'s weight follows its policy and nice value (`set_load_weight`); on a CFS run queue
    /// (running or waiting) the queue's load changes at once, its vruntime does not.
    pub fn set_weight(&mut self, t: usize, now_us: f64) {
        let se = &mut self.entities[t];
        let (cpu, old, vruntime) = (se.cpu, se.weight, se.vruntime);
        se.weight = cfs::weight_for(se.class, se.nice);
        if se.weight == old {
            return;
        }
        let now = self.group_now(cpu, now_us);
        let rq = &mut self.rqs[cpu];
        let on_rq = rq.cfs_curr() == Some(t) || rq.queue.contains(t, vruntime);
        if on_rq {
            self.groups.reweight_task(cpu, t, old, rq, &self.entities, &now);
        }
        if self.eevdf.is_some() && self.entities[t].is_fair() {
            self.eevdf_reweight(cpu, t, old, on_rq);
        }
    }

    /// CFS `t`, runnable with its entity on `cpu`, joins `cpu`'s run queue (after its clamps,
    /// the queue's signal and the running task's runtime were brought up to date): its load
    /// joins, a new or woken task's vruntime is placed (under EEVDF every arrival's, from the
    /// lag it kept), and it runs at once on an idle CPU or waits, preempting the running thread
    /// if CFS's wake-up rule says so.
    pub fn enqueue_fair(&mut self, cpu: usize, t: usize, arrival: Arrival, now_us: f64) -> FairEnqueue {
        if self.eevdf.is_some() {
            return self.enqueue_eevdf(cpu, t, arrival, now_us);
        }
        self.cfs_join(cpu, t, now_us);
        let tunables = self.cfs;
        let (rq, g) = (&mut self.rqs[cpu], self.groups.of(t));
        let placing = match arrival {
            Arrival::Fork => {
                let slice_us = self.groups.slice_us(cpu, Entity::Task(t), rq, &self.entities, &tunables);
                Some(Placing::New { slice_us, weight: self.entities[t].weight })
            }
            Arrival::Wakeup => Some(Placing::Waking),
            Arrival::Migration => None,
        };
        if let Some(placing) = placing {
            let min = self.groups.min_vruntime(cpu, g, rq);
            let se = &mut self.entities[t];
            se.vruntime = cfs::place_vruntime(min, &tunables, se.vruntime, placing);
        }
        self.threads[t].state = ThreadState::Runnable;
        let Some(curr) = rq.curr else {
            return FairEnqueue::RunsNow;
        };
        self.groups.insert_task(cpu, t, rq, &self.entities);
        let e = &self.entities;
        // CFS never preempts an RT or DL task
        let preempts = arrival != Arrival::Migration
            && e[curr].is_fair()
            && self.groups.wakeup_preempts(cpu, curr, t, e, &tunables);
        FairEnqueue::Waits { preempts }
    }

    /// [`enqueue_fair`](Self::enqueue_fair) under EEVDF (no task groups): placed, then
    /// preempting if `check_preempt_wakeup_fair` says so (a move does not check, as under CFS).
    fn enqueue_eevdf(&mut self, cpu: usize, t: usize, arrival: Arrival, now_us: f64) -> FairEnqueue {
        self.cfs_join(cpu, t, now_us);
        self.eevdf_place(cpu, t, arrival);
        self.threads[t].state = ThreadState::Runnable;
        let Some(curr) = self.rqs[cpu].curr else {
            return FairEnqueue::RunsNow;
        };
        self.groups.insert_task(cpu, t, &mut self.rqs[cpu], &self.entities);
        let e = &self.entities;
        if arrival == Arrival::Migration || !e[curr].is_fair() {
            return FairEnqueue::Waits { preempts: false };
        }
        let preempts = match cfs::policy_preempts(e[curr].class, e[t].class) {
            Some(p) => p,
            None => self.eevdf_wakeup_preempts(cpu, curr, t),
        };
        FairEnqueue::Waits { preempts }
    }

    /// CFS's tick on busy `cpu` running `t`: true if it ran its slice while others wait
    /// (`check_preempt_tick`; under EEVDF, its request ended in the tick's `update_curr`).
    pub fn cfs_tick(&mut self, cpu: usize, t: usize, now_us: f64) -> bool {
        if self.eevdf.is_some() {
            return self.take_resched(cpu);
        }
        let now = self.group_now(cpu, now_us);
        self.groups.tick(cpu, t, &mut self.rqs[cpu], &self.entities, &now, &self.cfs)
    }

    /// The running thread of `cpu`, which stays the one to run, starts a new turn.
    pub fn new_turn(&mut self, cpu: usize, t: usize, now_us: f64) {
        self.rqs[cpu].slice_start_us = now_us;
        self.groups.new_turn(cpu, t, now_us);
    }

    /// `t` moves to task group `g` (`sched_move_task`), its CPU time so far `cpu_time_us`:
    /// off its run queues if on them (the caller took it off), its utilisation and load out of
    /// its old groups' signals and into the new ones', its vruntime renormalised to its new
    /// group's run queue (`task_move_group_fair`).
    pub fn change_group(&mut self, t: usize, g: usize, cpu_time_us: f64, now_us: f64) {
        let cpu = self.entities[t].cpu;
        let old = self.groups.of(t);
        self.group_cpu_us.resize(self.groups.len(), 0.0);
        let th = &mut self.threads[t];
        self.group_cpu_us[old] += cpu_time_us - th.group_time_from_us;
        th.group_time_from_us = cpu_time_us;
        let now = self.group_now(cpu, now_us);
        self.groups.detach(cpu, t, &mut self.rqs[cpu], &self.entities, &now);
        let old_min = self.groups.min_vruntime(cpu, old, &self.rqs[cpu]);
        self.groups.assign(t, g);
        let se = &mut self.entities[t];
        se.vruntime = se.vruntime - old_min + self.groups.min_vruntime(cpu, g, &self.rqs[cpu]);
    }

    /// `t`, running on `cpu`, takes up its new group (`set_next_task` sets every level anew).
    pub fn restart_in_group(&mut self, cpu: usize, t: usize, now_us: f64) {
        self.cfs_join(cpu, t, now_us);
        let now = self.group_now(cpu, now_us);
        self.groups.forget_prev(cpu);
        self.groups.set_next(cpu, t, &now);
        self.rqs[cpu].slice_start_us = now_us;
    }

    /// `t` is in a task group other than `g`.
    pub fn group_differs(&self, t: usize, g: usize) -> bool {
        self.groups.of(t) != g
    }

    /// The task group at `path` (every group a phase names exists).
    pub fn group_at(&self, path: &str) -> usize {
        self.groups.find(path).expect("the run's groups hold every group its phases name")
    }

    /// Running CFS `t` of `cpu` stops being the group levels' current (`put_prev_task`).
    pub fn put_prev(&mut self, cpu: usize, t: usize, now_us: f64) {
        let now = self.group_now(cpu, now_us);
        self.groups.put_prev(cpu, t, &now);
    }

    /// The task-group run queues whose signals crossed a period since the last call, into
    /// `crossed` (given back with [`give_back_crossed`](Self::give_back_crossed)).
    pub fn take_crossed_levels(&mut self) -> Vec<(usize, usize)> {
        let mut crossed = std::mem::take(&mut self.group_levels);
        self.groups.take_crossed(&mut crossed);
        crossed
    }

    pub fn give_back_crossed(&mut self, mut crossed: Vec<(usize, usize)>) {
        crossed.clear();
        self.group_levels = crossed;
    }
}
