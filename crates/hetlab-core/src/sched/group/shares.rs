//! The groups' shares and their run queues' PELT signals: a group's entity weighs the group's
//! `cpu.shares` split by load across CPUs, each run queue's contribution to the group's load is
//! refreshed when due, and a task's signals join and leave its groups' run queues with it.

use super::{Groups, Now, MIN_SHARES, ROOT};
use crate::sched::cfs::{self, RunQueue};
use crate::sched::pelt::State;
use crate::sched::{Kernel, SchedEntity};

/// `calc_cfs_shares` (3.10) / `calc_group_shares` (5.10): a group entity's weight on one CPU,
/// the group's `shares` times this run queue's load over the group's, within `MIN_SHARES` and
/// `shares`. The group's load counts this run queue's own load now (`load_weight`, or 5.10 the
/// larger of it and its average) instead of its last contribution.
pub(super) fn calc_shares(
    kernel: Kernel,
    shares: u64,
    tg_load_avg: u64,
    contrib: u64,
    load_weight: u64,
    load_avg: u64,
) -> u64 {
    let load = match kernel {
        Kernel::V3_10 => load_weight,
        Kernel::V5_10 | Kernel::V6_12 => load_weight.max(load_avg),
    };
    let tg_weight = (tg_load_avg + load).saturating_sub(contrib);
    let share =
        if tg_weight > 0 { shares as u128 * load as u128 / tg_weight as u128 } else { shares as u128 * load as u128 };
    (share.min(u128::from(shares)) as u64).max(MIN_SHARES)
}

/// Whether a run queue's contribution to its group's load is refreshed: it moved by more than
/// an eighth (3.10 `__update_cfs_rq_tg_load_contrib`, or always when forced) or a 64th (5.10
/// `update_tg_load_avg`) of what it was.
pub(super) fn contribution_due(kernel: Kernel, contrib: u64, load_avg: u64, force: bool) -> bool {
    let delta = load_avg.abs_diff(contrib);
    let divisor = match kernel {
        Kernel::V3_10 => 8,
        Kernel::V5_10 | Kernel::V6_12 => 64,
    };
    delta != 0 && (force || delta > contrib / divisor)
}

impl Groups {
    /// Accounts `g`'s run-queue signals on `cpu` up to now, before what they follow changes.
    pub(super) fn update_level(&mut self, g: usize, cpu: usize, now: &Now) {
        let l = self.level_mut(g, cpu);
        let state = State { runnable: l.load_weight > 0, running: l.curr.is_some(), load: l.load_weight, ..now.scale };
        if l.avg.update(now.ns, state) {
            if let Some(c) = &mut self.crossed {
                c.push((cpu, g));
            }
        }
    }

    /// `update_cfs_shares` (3.10) / `update_cfs_group` (5.10): `g`'s run queue on `cpu` refreshes
    /// its contribution to the group's load if due, and the group's entity there takes its share.
    pub(super) fn update_shares(&mut self, cpu: usize, g: usize, force: bool, rq: &mut RunQueue, now: &Now) {
        let kernel = self.kernel;
        let tg = &mut self.groups[g];
        let l = &mut tg.levels[cpu];
        if contribution_due(kernel, l.tg_load_contrib, l.avg.load_avg, force) {
            tg.load_avg = tg.load_avg + l.avg.load_avg - l.tg_load_contrib;
            l.tg_load_contrib = l.avg.load_avg;
        }
        let weight = calc_shares(kernel, tg.shares, tg.load_avg, l.tg_load_contrib, l.load_weight, l.avg.load_avg);
        self.reweight(cpu, g, weight, rq, now);
    }

    /// `reweight_entity`: `g`'s entity on `cpu` weighs `weight` from now (its vruntime stays);
    /// a running one is charged its time so far at the old weight.
    fn reweight(&mut self, cpu: usize, g: usize, weight: u64, rq: &mut RunQueue, now: &Now) {
        let se = &self.level(g, cpu).se;
        let (old, on_rq, running) = (se.weight, se.on_rq, se.running);
        if old == weight {
            return;
        }
        if running {
            self.charge(g, cpu, now.us);
        }
        if on_rq {
            let p = self.parent(g);
            if p == ROOT {
                rq.load_weight = rq.load_weight - old + weight;
            } else {
                self.update_level(p, cpu, now);
                let lp = self.level_mut(p, cpu);
                lp.load_weight = lp.load_weight - old + weight;
            }
        }
        self.level_mut(g, cpu).se.weight = weight;
    }

    /// `g`'s running entity on `cpu` is charged the time since it last was, at its weight.
    pub(super) fn charge(&mut self, g: usize, cpu: usize, now_us: f64) {
        let se = &mut self.level_mut(g, cpu).se;
        let delta_us = now_us - se.exec_start_us;
        if delta_us > 0.0 {
            se.vruntime += cfs::delta_fair(delta_us, se.weight);
            se.exec_start_us = now_us;
        }
    }

    /// `attach_entity_load_avg` on `cpu` above the CPU's own run queue: `t`'s utilisation joins
    /// its groups' run queues' signals, its load its group's; their shares follow.
    pub fn attach(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity], now: &Now) {
        let g = self.of(t);
        if g == ROOT || std::mem::replace(&mut self.attached[t], true) {
            return;
        }
        self.move_signals(cpu, t, rq, tasks, now, true);
    }

    /// `detach_entity_load_avg`: the reverse, if they are there.
    pub fn detach(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity], now: &Now) {
        let g = self.of(t);
        if g == ROOT || !std::mem::replace(&mut self.attached[t], false) {
            return;
        }
        self.move_signals(cpu, t, rq, tasks, now, false);
    }

    fn move_signals(&mut self, cpu: usize, t: usize, rq: &mut RunQueue, tasks: &[SchedEntity], now: &Now, join: bool) {
        let g = self.of(t);
        let se = &tasks[t];
        let load = se.avg.load_avg_contrib(se.weight);
        let mut child = g;
        while child != ROOT {
            self.update_level(child, cpu, now);
            let l = self.level_mut(child, cpu);
            match (join, child == g) {
                (true, own) => {
                    l.avg.attach(&mut se.avg.clone());
                    if own {
                        l.avg.attach_load(load);
                    }
                }
                (false, own) => {
                    l.avg.detach(&se.avg);
                    if own {
                        l.avg.detach_load(load);
                    }
                }
            }
            self.update_shares(cpu, child, false, rq, now);
            child = self.parent(child);
        }
    }
}
