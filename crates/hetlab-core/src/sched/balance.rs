//! CFS load balancing within a scheduling domain, as Linux 3.10 does it (kernel/sched/fair.c:
//! `idle_balance`, `rebalance_domains`, `nohz_idle_balance`, `load_balance`,
//! `find_busiest_group`, `calculate_imbalance`, `fix_small_imbalance`, `move_tasks`,
//! `can_migrate_task`; constants in `domains::SD_MC_INIT`).
//!
//! When a CPU balances:
//! - new-idle: about to go idle, it pulls from its domain's busiest CPU, unless its average
//!   idle time is below the migration cost (`rq->avg_idle`, learnt at each wake-up on it);
//!   with `CONFIG_PREEMPT` (the XU3 and Android kernels) it stops after the first task;
//! - periodic: at the tick of a busy CPU, once per balance interval × `busy_factor`;
//! - idle CPUs do not tick (NO_HZ). As the kernel's nohz idle balance does, a busy CPU with
//!   two or more tasks kicks the idle load balancer at its tick (at most once a jiffy, while
//!   its domain has an idle CPU), which balances each idle CPU of the domain whose interval is
//!   due as `CPU_IDLE`, in CPU order.
//!
//! How: the busiest CPU is the most loaded one running more than one task; the imbalance is
//! what brings it towards the domain average without lifting this CPU above it
//! (`calculate_imbalance`, or one task's load when that gains throughput:
//! `fix_small_imbalance`); waiting tasks that may run here and are not cache-hot (ran within
//! `sysctl_sched_migration_cost`, unless the domain failed to balance more than
//! `cache_nice_tries` times) move, each by its hierarchical load (`task_h_load`: its share of
//! its CPU's load through its task groups, `sched::group`) and no heavier than twice what is
//! left of the imbalance,
//! at most 32 looked at (`sysctl_sched_nr_migrate`), the one CFS would run last first (the
//! largest vruntime: the kernel walks `cfs_tasks`, most recently queued first, which a run
//! queue ordered by vruntime does not record). If all of them are pinned elsewhere, the
//! busiest CPU is left out
//! and the search redone. The interval returns to its minimum after an imbalance and doubles
//! while balanced (up to 512 ms when tasks were pinned).
//!
//! Left out: NUMA and SMT levels; group power and capacity beyond one CPU per group at
//! `SCHED_POWER_SCALE` (so no `group_imb`, no `LBF_SOME_PINNED`); the `cpu_load[]` history
//! (`busy_idx`: loads are the run queues' weights now); active balancing of a running task
//! after `cache_nice_tries + 2` failures (with single-CPU groups it only matters when every
//! waiting task of the busiest CPU is pinned and its running one is not); the cache-hot buddy
//! rule.

use super::domains::{DomainParams, Domains};
use super::select::{idle_cpu, weighted_cpuload};
use super::{CpuMask, Migration, SchedView};

/// `sysctl_sched_migration_cost`: a task that ran this recently is cache-hot, and a CPU idle
/// for less than this on average does not balance when going idle, µs.
pub const MIGRATION_COST_US: f64 = 500.0;
/// `sysctl_sched_nr_migrate`: tasks looked at per balance.
const NR_MIGRATE: usize = 32;
/// `MAX_PINNED_INTERVAL`, ms.
const MAX_PINNED_INTERVAL_MS: u32 = 512;

/// `task_h_load`: the load `t` stands for on its CPU (its weight, without task groups).
fn task_h_load(view: &SchedView, t: usize) -> u64 {
    view.groups.task_h_load(t, view.rqs, view.tasks)
}

/// Why a CPU balances (`enum cpu_idle_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleType {
    /// About to go idle (`CPU_NEWLY_IDLE`).
    NewlyIdle,
    /// Idle, balanced by the idle load balancer (`CPU_IDLE`).
    Idle,
    /// Busy, at its tick (`CPU_NOT_IDLE`).
    NotIdle,
}

/// What a new-idle balance did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleBalance {
    /// The CPU's average idle time is below the migration cost: not tried.
    Skipped,
    Pulled(Migration),
    /// Tried; nothing to pull.
    Nothing,
}

/// Per CPU: its domain's balancing state (`sd->balance_interval`, `last_balance`,
/// `nr_balance_failed`) and its run queue's idle statistics (`rq->avg_idle`, `idle_stamp`).
#[derive(Debug, Clone, Copy)]
struct CpuBalance {
    interval_ms: u32,
    last_balance: u64,
    nr_failed: u32,
    avg_idle_us: f64,
    idle_stamp_us: Option<f64>,
}

/// The run queues as this pass of balancing leaves them: the engine applies the moves after
/// the hook returns, and later decisions of the same pass must see the earlier ones.
#[derive(Debug, Default)]
struct Pass {
    dload: Vec<i64>,
    dnr: Vec<i64>,
    moved: Vec<usize>,
}

impl Pass {
    fn reset(&mut self, ncpus: usize) {
        self.dload.clear();
        self.dload.resize(ncpus, 0);
        self.dnr.clear();
        self.dnr.resize(ncpus, 0);
        self.moved.clear();
    }
    fn load(&self, view: &SchedView, cpu: usize) -> i64 {
        weighted_cpuload(view, cpu) as i64 + self.dload[cpu]
    }
    fn nr(&self, view: &SchedView, cpu: usize) -> i64 {
        view.rqs[cpu].nr_running() as i64 + self.dnr[cpu]
    }
    fn idle(&self, view: &SchedView, cpu: usize) -> bool {
        idle_cpu(view, cpu) && self.dnr[cpu] <= 0
    }
    fn apply(&mut self, m: Migration, from: usize, weight: u64) {
        self.dload[from] -= weight as i64;
        self.dnr[from] -= 1;
        self.dload[m.to_cpu] += weight as i64;
        self.dnr[m.to_cpu] += 1;
        self.moved.push(m.thread);
    }
}

/// The busiest CPU of a domain and how much load to take from it.
#[derive(Debug, Clone, Copy)]
struct Busiest {
    cpu: usize,
    imbalance: i64,
}

/// Load balancing over a domain layout: the per-CPU state and the three ways to balance.
#[derive(Debug)]
pub struct Balancer {
    params: DomainParams,
    tick_us: f64,
    cpus: Vec<CpuBalance>,
    /// `nohz.next_balance`, jiffies.
    nohz_next_balance: u64,
    pass: Pass,
    pulled: Vec<Migration>,
    queued: Vec<usize>,
}

impl Balancer {
    /// A balancer with `params` on a kernel whose jiffy is `tick_us`.
    pub fn new(params: DomainParams, tick_us: f64) -> Balancer {
        Balancer {
            params,
            tick_us,
            cpus: Vec::new(),
            nohz_next_balance: 0,
            pass: Pass::default(),
            pulled: Vec::new(),
            queued: Vec::new(),
        }
    }

    fn jiffies(&self, now_us: f64) -> u64 {
        (now_us / self.tick_us + 1e-6).floor() as u64
    }

    /// `msecs_to_jiffies`, at least one jiffy and at most `HZ · online CPUs / 10`
    /// (`max_load_balance_interval`).
    fn interval_jiffies(&self, ms: u32, online: usize) -> u64 {
        let j = (ms as f64 * 1000.0 / self.tick_us).ceil() as u64;
        let max = ((1e6 / self.tick_us) as u64 * online as u64 / 10).max(1);
        j.clamp(1, max)
    }

    fn state(&mut self, ncpus: usize) -> &mut [CpuBalance] {
        if self.cpus.len() != ncpus {
            let init = CpuBalance {
                interval_ms: self.params.min_interval_ms,
                last_balance: 0,
                nr_failed: 0,
                avg_idle_us: 2.0 * MIGRATION_COST_US,
                idle_stamp_us: None,
            };
            self.cpus = vec![init; ncpus];
        }
        &mut self.cpus
    }

    /// A task woke up on `cpu` (`ttwu_do_wakeup`): if the CPU was idle, its average idle time
    /// learns for how long (capped at twice the migration cost).
    pub fn note_wakeup(&mut self, ncpus: usize, cpu: usize, now_us: f64) {
        let st = &mut self.state(ncpus)[cpu];
        if let Some(stamp) = st.idle_stamp_us.take() {
            let delta = now_us - stamp;
            let max = 2.0 * MIGRATION_COST_US;
            st.avg_idle_us = if delta > max { max } else { st.avg_idle_us + (delta - st.avg_idle_us) / 8.0 };
        }
    }

    /// `idle_balance`: `cpu`, its queue empty, is about to go idle.
    pub fn idle_balance(&mut self, view: &SchedView, domains: &Domains, cpu: usize) -> IdleBalance {
        let st = &mut self.state(view.ncpus())[cpu];
        st.idle_stamp_us = Some(view.now_us);
        if st.avg_idle_us < MIGRATION_COST_US {
            return IdleBalance::Skipped;
        }
        self.pass.reset(view.ncpus());
        let mut pulled = std::mem::take(&mut self.pulled);
        pulled.clear();
        self.load_balance(view, domains, cpu, IdleType::NewlyIdle, &mut pulled);
        let result = match pulled.first() {
            Some(&m) => {
                self.cpus[cpu].idle_stamp_us = None;
                IdleBalance::Pulled(m)
            }
            None => IdleBalance::Nothing,
        };
        self.pulled = pulled;
        result
    }

    /// Whether busy `cpu`'s periodic balance is due (`time_after_eq(jiffies,
    /// rq->next_balance)`: the tick raises the rebalance softirq).
    pub fn due(&mut self, view: &SchedView, domains: &Domains, cpu: usize) -> bool {
        let st = self.state(view.ncpus())[cpu];
        let ms = st.interval_ms * self.params.busy_factor;
        self.jiffies(view.now_us) >= st.last_balance + self.interval_jiffies(ms, domains.online().count())
    }

    /// What a busy CPU's tick triggers (`trigger_load_balance`): its periodic balance when due
    /// (`rebalance_domains`, `CPU_NOT_IDLE`), and, if `kick_idle`, the idle load balancer on
    /// behalf of its domain's idle CPUs. The moves already in `out` (decided earlier in the
    /// same softirq) are taken into account. Returns whether the periodic balance was due.
    pub fn tick(
        &mut self,
        view: &SchedView,
        domains: &Domains,
        cpu: usize,
        kick_idle: bool,
        out: &mut Vec<Migration>,
    ) -> bool {
        self.state(view.ncpus());
        self.pass.reset(view.ncpus());
        for &m in out.iter() {
            self.pass.apply(m, view.tasks[m.thread].cpu, task_h_load(view, m.thread));
        }
        let due = self.rebalance(view, domains, cpu, IdleType::NotIdle, out);
        // nohz_kick_needed: this CPU runs two or more tasks and its domain has a tickless CPU
        let now = self.jiffies(view.now_us);
        if kick_idle && now >= self.nohz_next_balance && self.pass.nr(view, cpu) >= 2 {
            let span = domains.span(cpu);
            let idle = CpuMask::of(span.iter().filter(|&c| self.pass.idle(view, c)));
            if !idle.is_empty() {
                // nohz_idle_balance, then nohz.next_balance = the earliest next balance
                let mut next = u64::MAX;
                for b in idle.iter() {
                    self.rebalance(view, domains, b, IdleType::Idle, out);
                    let st = self.cpus[b];
                    next = next.min(st.last_balance + self.interval_jiffies(st.interval_ms, domains.online().count()));
                }
                self.nohz_next_balance = next.max(now + 1);
            }
        }
        due
    }

    /// `rebalance_domains` of `cpu` for its one domain: balances if the interval has passed.
    fn rebalance(
        &mut self,
        view: &SchedView,
        domains: &Domains,
        cpu: usize,
        idle: IdleType,
        out: &mut Vec<Migration>,
    ) -> bool {
        let st = self.cpus[cpu];
        let ms = st.interval_ms * if idle == IdleType::Idle { 1 } else { self.params.busy_factor };
        let now = self.jiffies(view.now_us);
        if now < st.last_balance + self.interval_jiffies(ms, domains.online().count()) {
            return false;
        }
        self.load_balance(view, domains, cpu, idle, out);
        self.cpus[cpu].last_balance = now;
        true
    }

    /// `load_balance` of `this` over its domain; the moves go to `out`. Returns how many.
    fn load_balance(
        &mut self,
        view: &SchedView,
        domains: &Domains,
        this: usize,
        idle: IdleType,
        out: &mut Vec<Migration>,
    ) -> usize {
        let mut cpus = domains.span(this);
        let mut all_pinned = false;
        let moved = loop {
            let Some(busiest) = self.find_busiest(view, this, cpus, idle) else {
                return self.out_balanced(this, all_pinned);
            };
            let (moved, pinned) = self.move_tasks(view, this, busiest, idle, out);
            all_pinned = pinned;
            if moved == 0 && pinned {
                // every task there is pinned elsewhere: look again without it
                cpus = cpus.without(busiest.cpu);
                continue;
            }
            break moved;
        };
        let st = &mut self.cpus[this];
        if moved == 0 {
            // only periodic balancing counts failures (new-idle would pollute them)
            if idle != IdleType::NewlyIdle {
                st.nr_failed += 1;
            }
        } else {
            st.nr_failed = 0;
        }
        // we were unbalanced: back to the shortest interval
        st.interval_ms = self.params.min_interval_ms;
        moved
    }

    fn out_balanced(&mut self, this: usize, all_pinned: bool) -> usize {
        let max = self.params.max_interval_ms;
        let st = &mut self.cpus[this];
        st.nr_failed = 0;
        if (all_pinned && st.interval_ms < MAX_PINNED_INTERVAL_MS) || st.interval_ms < max {
            st.interval_ms *= 2;
        }
        0
    }

    /// `find_busiest_group` (groups of one CPU, every CPU at `SCHED_POWER_SCALE`) with
    /// `calculate_imbalance`: the CPU to pull from and how much, or none if balanced.
    fn find_busiest(&self, view: &SchedView, this: usize, cpus: CpuMask, idle: IdleType) -> Option<Busiest> {
        let pass = &self.pass;
        let (this_load, this_nr) = (pass.load(view, this), pass.nr(view, this));
        let (mut total, mut n) = (0i64, 0i64);
        let mut busiest: Option<(usize, i64, i64)> = None;
        for cpu in cpus.iter_from(this) {
            let load = pass.load(view, cpu);
            total += load;
            n += 1;
            if cpu == this {
                continue;
            }
            // update_sd_pick_busiest: busier than the busiest so far and over its capacity
            let nr = pass.nr(view, cpu);
            if load > busiest.map_or(0, |b| b.1) && nr > 1 {
                busiest = Some((cpu, load, nr));
            }
        }
        let (cpu, max_load, busiest_nr) = busiest?;
        let avg_load = total / n;
        // SD_BALANCE_NEWIDLE trumps SMP nice when underutilized
        let force = idle == IdleType::NewlyIdle && this_nr == 0;
        if !force {
            if this_load >= max_load || this_load >= avg_load {
                return None;
            }
            // CPU_IDLE: balanced only if the busiest ran no more tasks than it has CPUs (one),
            // which a busiest CPU never does; otherwise use imbalance_pct to be conservative
            if idle != IdleType::Idle && 100 * max_load <= self.params.imbalance_pct as i64 * this_load {
                return None;
            }
        }
        let imbalance = self.calculate_imbalance(this_load, this_nr, max_load, busiest_nr, avg_load);
        Some(Busiest { cpu, imbalance })
    }

    /// `calculate_imbalance` and `fix_small_imbalance` for single-CPU groups of capacity 1.
    fn calculate_imbalance(&self, this_load: i64, this_nr: i64, max_load: i64, busiest_nr: i64, avg_load: i64) -> i64 {
        let busiest_load_per_task = max_load / busiest_nr;
        if max_load >= avg_load {
            // don't pull so much that the busiest group would go idle
            let load_above_capacity = (busiest_nr - 1) * 1024;
            let max_pull = (max_load - avg_load).min(load_above_capacity);
            let imbalance = max_pull.min(avg_load - this_load);
            if imbalance >= busiest_load_per_task {
                return imbalance;
            }
        }
        // fix_small_imbalance: one task's load if moving it gains throughput
        let mut imbn = 2;
        let this_load_per_task = if this_nr > 0 {
            let per_task = this_load / this_nr;
            if busiest_load_per_task > per_task {
                imbn = 1;
            }
            per_task
        } else {
            0
        };
        if max_load - this_load + busiest_load_per_task >= busiest_load_per_task * imbn {
            return busiest_load_per_task;
        }
        let pwr_now = busiest_load_per_task.min(max_load) + this_load_per_task.min(this_load);
        let mut pwr_move = 0;
        if max_load > busiest_load_per_task {
            pwr_move += busiest_load_per_task.min(max_load - busiest_load_per_task);
        }
        let added = max_load.min(busiest_load_per_task);
        pwr_move += this_load_per_task.min(this_load + added);
        if pwr_move > pwr_now {
            busiest_load_per_task
        } else {
            0
        }
    }

    /// `move_tasks` from `busiest` to `this`: returns how many moved and whether every task
    /// looked at was pinned elsewhere (`LBF_ALL_PINNED`).
    fn move_tasks(
        &mut self,
        view: &SchedView,
        this: usize,
        busiest: Busiest,
        idle: IdleType,
        out: &mut Vec<Migration>,
    ) -> (usize, bool) {
        let src = busiest.cpu;
        let rq = &view.rqs[src];
        let mut all_pinned = true;
        if let Some(curr) = rq.cfs_curr() {
            if view.tasks[curr].allowed.contains(this) && !self.pass.moved.contains(&curr) {
                all_pinned = false; // may run here, but runs
            }
        }
        let mut imbalance = busiest.imbalance;
        if imbalance <= 0 {
            return (0, all_pinned);
        }
        let loop_max = NR_MIGRATE.min(self.pass.nr(view, src).max(0) as usize);
        let nr_failed = self.cpus[this].nr_failed;
        let mut moved = 0;
        let mut queued = std::mem::take(&mut self.queued);
        queued.clear();
        queued.extend(rq.queue.iter().rev().filter(|t| !self.pass.moved.contains(t)).take(loop_max));
        for &t in &queued {
            let task = &view.tasks[t];
            if !task.allowed.contains(this) {
                continue;
            }
            all_pinned = false;
            // cache-hot tasks stay unless balancing keeps failing
            let hot = view.now_us - task.exec_start_us < MIGRATION_COST_US;
            if hot && nr_failed <= self.params.cache_nice_tries {
                continue;
            }
            let load = task_h_load(view, t);
            if load as i64 / 2 > imbalance {
                continue;
            }
            let m = Migration { thread: t, to_cpu: this };
            out.push(m);
            self.pass.apply(m, src, load);
            moved += 1;
            imbalance -= load as i64;
            // CONFIG_PREEMPT: new-idle balancing stops after the first task (latency)
            if idle == IdleType::NewlyIdle || imbalance <= 0 {
                break;
            }
        }
        self.queued = queued;
        (moved, all_pinned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::domains::{Layout, SD_MC_INIT};
    use crate::sched::testutil::Fixture;

    /// 5 ms jiffies (HZ=200).
    const TICK_US: f64 = 5000.0;

    fn balancer() -> Balancer {
        Balancer::new(SD_MC_INIT, TICK_US)
    }

    /// `n` tasks allowed everywhere on `ncpus` CPUs, long cold (last ran long ago).
    fn fixture(ncpus: usize, n: usize) -> Fixture {
        let all: Vec<usize> = (0..ncpus).collect();
        let allowed: Vec<&[usize]> = vec![&all; n];
        let mut f = Fixture::new(ncpus, &allowed);
        f.now_us = 1e6;
        f
    }

    #[test]
    fn a_cpu_going_idle_pulls_one_cold_waiting_task_from_the_busiest() {
        let mut f = fixture(3, 5);
        for (t, cpu) in [(0, 0), (1, 0), (2, 1), (3, 1), (4, 1)] {
            f.put(t, cpu);
        }
        let d = Domains::build(Layout::Vanilla, &f.view());
        let mut b = balancer();
        // CPU 1 is the busiest (3 tasks); the most recently queued waiting task comes first
        assert_eq!(b.idle_balance(&f.view(), &d, 2), IdleBalance::Pulled(Migration { thread: 4, to_cpu: 2 }));
        // a task that ran 0.1 ms ago is cache-hot: the next one goes
        f.tasks[4].exec_start_us = f.now_us - 100.0;
        assert_eq!(b.idle_balance(&f.view(), &d, 2), IdleBalance::Pulled(Migration { thread: 3, to_cpu: 2 }));
        // a waiting task pinned elsewhere stays; if the running one may come, nothing moves
        // (it runs); if every task there is pinned, CPU 0 is the next busiest
        for t in [3, 4] {
            f.tasks[t].allowed = CpuMask::of([1]);
        }
        assert_eq!(b.idle_balance(&f.view(), &d, 2), IdleBalance::Nothing);
        f.tasks[2].allowed = CpuMask::of([1]);
        assert_eq!(b.idle_balance(&f.view(), &d, 2), IdleBalance::Pulled(Migration { thread: 1, to_cpu: 2 }));
        // per cluster: CPU 2 alone in its domain has nobody to pull from
        f.cluster_of = vec![0, 0, 1];
        let d = Domains::build(Layout::PerCluster, &f.view());
        assert_eq!(b.idle_balance(&f.view(), &d, 2), IdleBalance::Nothing);
    }

    #[test]
    fn a_cpu_idle_only_briefly_on_average_does_not_balance() {
        let mut f = fixture(2, 2);
        f.put(0, 0);
        let d = Domains::build(Layout::Vanilla, &f.view());
        let mut b = balancer();
        // idle for 100 µs between wake-ups, again and again: avg_idle falls below 500 µs
        for _ in 0..7 {
            assert_eq!(b.idle_balance(&f.view(), &d, 1), IdleBalance::Nothing);
            f.now_us += 100.0;
            b.note_wakeup(2, 1, f.now_us);
        }
        f.put(1, 0);
        assert_eq!(b.idle_balance(&f.view(), &d, 1), IdleBalance::Skipped);
        // one long idle spell resets it to the cap
        f.now_us += 10_000.0;
        b.note_wakeup(2, 1, f.now_us);
        assert!(matches!(b.idle_balance(&f.view(), &d, 1), IdleBalance::Pulled(_)));
    }

    #[test]
    fn periodic_balance_moves_load_towards_the_average_every_interval() {
        // CPU 0 runs 3 tasks, CPU 1 one: the imbalance is one task (1024), moved at CPU 1's
        // tick once its busy interval (1 ms · 64 = 13 jiffies) has passed
        let mut f = fixture(2, 4);
        for (t, cpu) in [(0, 0), (1, 0), (2, 0), (3, 1)] {
            f.put(t, cpu);
        }
        let d = Domains::build(Layout::Vanilla, &f.view());
        let mut b = balancer();
        let mut out = Vec::new();
        f.now_us = 13.0 * TICK_US;
        assert!(b.tick(&f.view(), &d, 1, true, &mut out));
        assert_eq!(out, [Migration { thread: 2, to_cpu: 1 }]);
        // not due again for another 13 jiffies
        out.clear();
        f.now_us += 12.0 * TICK_US;
        assert!(!b.tick(&f.view(), &d, 1, true, &mut out) && out.is_empty());
        // 2 against 2 is balanced: the interval doubles, to 2 ms · 64 = 26 jiffies
        let mut f = fixture(2, 4);
        for (t, cpu) in [(0, 0), (1, 0), (2, 1), (3, 1)] {
            f.put(t, cpu);
        }
        f.now_us = 13.0 * TICK_US;
        let mut b = balancer();
        assert!(b.tick(&f.view(), &d, 1, false, &mut out) && out.is_empty());
        assert_eq!(b.cpus[1].interval_ms, 2);
        f.now_us = 38.0 * TICK_US;
        assert!(!b.tick(&f.view(), &d, 1, false, &mut out));
        f.now_us = 39.0 * TICK_US;
        assert!(b.tick(&f.view(), &d, 1, false, &mut out));
    }

    #[test]
    fn a_busy_cpu_kicks_the_idle_balancer_for_the_idle_cpus_of_its_domain() {
        // CPU 0 runs 4 tasks, CPUs 1-3 idle: at CPU 0's tick the idle balancer lets each idle
        // CPU pull one, in CPU order, each seeing the earlier moves
        let mut f = fixture(4, 4);
        for t in 0..4 {
            f.put(t, 0);
        }
        let d = Domains::build(Layout::Vanilla, &f.view());
        let mut b = balancer();
        let mut out = Vec::new();
        f.now_us = TICK_US;
        b.tick(&f.view(), &d, 0, true, &mut out);
        let to: Vec<(usize, usize)> = out.iter().map(|m| (m.thread, m.to_cpu)).collect();
        assert_eq!(to, [(3, 1), (2, 2), (1, 3)]);
        // per cluster {0, 1} and {2, 3}: only CPU 1 is in CPU 0's domain, and being idle it
        // pulls up to the imbalance, two tasks (only new-idle stops after one)
        f.cluster_of = vec![0, 0, 1, 1];
        let d = Domains::build(Layout::PerCluster, &f.view());
        let mut b = balancer();
        out.clear();
        b.tick(&f.view(), &d, 0, true, &mut out);
        assert_eq!(out, [Migration { thread: 3, to_cpu: 1 }, Migration { thread: 2, to_cpu: 1 }]);
        // without the kick (HMP packing on LITTLE), nobody balances the idle CPUs
        let mut b = balancer();
        out.clear();
        b.tick(&f.view(), &d, 0, false, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn grouped_tasks_move_by_their_hierarchical_load() {
        // CPU 0 runs a root task with another waiting and four tasks of /bg waiting, CPU 1 one
        // root task. /bg's entity weighs its whole 1024 on CPU 0: loads 3072 against 1024, an
        // imbalance of 1024 (towards the average, 2048). Each task of /bg stands for
        // 1024 · (3072·1024/3073)/4097 = 255 of CPU 0's load: four of them move where one
        // root task (1024) would have
        let mut f = fixture(2, 7);
        f.groups(crate::sched::Kernel::V3_10, &[("/bg", 1024)], &[(3, "/bg"), (4, "/bg"), (5, "/bg"), (6, "/bg")]);
        for (t, cpu) in [(0, 0), (1, 0), (2, 1), (3, 0), (4, 0), (5, 0), (6, 0)] {
            f.put(t, cpu);
        }
        assert_eq!((f.rqs[0].load_weight, f.rqs[1].load_weight), (3072, 1024));
        assert_eq!(task_h_load(&f.view(), 3), 255);
        let d = Domains::build(Layout::Vanilla, &f.view());
        let mut b = balancer();
        let mut out = Vec::new();
        f.now_us = 13.0 * TICK_US;
        assert!(b.tick(&f.view(), &d, 1, false, &mut out));
        let moved: Vec<usize> = out.iter().map(|m| m.thread).collect();
        assert_eq!(moved, [6, 5, 4, 3]);
        // without the group they are tasks of 1024 like the others: CPU 0 carries 6144, and
        // three move towards the average
        let mut f = fixture(2, 7);
        for (t, cpu) in [(0, 0), (1, 0), (2, 1), (3, 0), (4, 0), (5, 0), (6, 0)] {
            f.put(t, cpu);
        }
        f.now_us = 13.0 * TICK_US;
        out.clear();
        balancer().tick(&f.view(), &d, 1, false, &mut out);
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn small_imbalances_follow_the_kernels_arithmetic() {
        let b = balancer();
        // 3 nice-0 tasks against 1: avg 2048, pull min(1024, 1024) = one task
        assert_eq!(b.calculate_imbalance(1024, 1, 3072, 3, 2048), 1024);
        // 2 against 1 on two CPUs: avg 1536, max_pull 512 < one task: fix_small_imbalance,
        // 2048 - 1024 + 1024 >= 1024·2: move one task
        assert_eq!(b.calculate_imbalance(1024, 1, 2048, 2, 1536), 1024);
        // a nice-0 and a nice-19 task (1039) against one nice-0 (1024): per task 519, and
        // 1039 - 1024 + 519 < 519·2: moving gains nothing
        assert_eq!(b.calculate_imbalance(1024, 1, 1039, 2, 1031), 0);
    }
}
