//! Task groups: CFS group scheduling as the cgroup cpu controller gives it
//! (`CONFIG_FAIR_GROUP_SCHED`, kernel/sched/fair.c of Linux 3.10 and 5.10).
//!
//! A group (`/`, `/a`, `/a/b`, ...) has on every CPU its own CFS run queue — its own timeline
//! of entities by vruntime, `min_vruntime` and load — and an entity that stands for it in its
//! parent's run queue there (`tg->cfs_rq[cpu]`, `tg->se[cpu]`). The root group's run queue is
//! the CPU's own ([`RunQueue`]); a CPU's `queue` keeps every waiting CFS task whatever its
//! group (`rq->cfs_tasks`, what the load balancer walks), and here the root level holds the
//! tasks of the root group and the entities of the top groups (a run without groups has one
//! level: the CPU's queue).
//!
//! - CFS picks from the root down, the smallest vruntime at each level
//!   (`pick_next_task_fair`); run time is charged to the running entity at every level, each
//!   at its own weight (`update_curr` per level), so groups share a CPU by their entities'
//!   weights and a group's tasks share what their group gets.
//! - A group's entity joins its parent's run queue with the group's first task there and leaves
//!   it with the last (`enqueue_task_fair`, `dequeue_task_fair`), placed as a waking entity.
//! - Wake-up preemption compares the waking and the running task's entities at their common
//!   level (`find_matching_se`); the tick checks each level of the running task
//!   (`entity_tick`), each entity against its own slice (`sched_slice` over the levels).
//! - A group's entity weighs the group's `cpu.shares` split across CPUs by the group's load on
//!   each (`calc_cfs_shares`, 3.10; `calc_group_shares`, 5.10), recomputed where the kernel
//!   calls `update_cfs_shares`/`update_cfs_group`: enqueue, dequeue and the tick of its tasks.
//! - Each group run queue keeps PELT signals: runnable, running, and its load (time × its load
//!   weight, 5.10's `cfs_rq->avg.load_avg`); its contribution to the group's load
//!   (`tg->load_avg`) is refreshed when it moved by more than an eighth (3.10, always at the
//!   tick) or a 64th (5.10) of it. A task's utilisation leaves and joins its groups' run queues
//!   with it, its load its own group's (`attach`/`detach_entity_load_avg`). The CPU's own signal,
//!   what EAS and schedutil read, runs whenever a CFS task runs: it includes grouped tasks, as
//!   the kernel's propagation makes it.
//! - The load balancer moves a task by its hierarchical load (`task_h_load`), and wake_affine
//!   counts what a task adds to a CPU's load through its groups (`effective_load`).
//!
//! Where 3.10 and 5.10 differ, the placement's kernel ([`Kernel`]) decides:
//! - shares: 3.10 weighs this CPU's instantaneous load (`cfs_rq->load.weight`) against the
//!   other CPUs' tracked loads; 5.10 the larger of this CPU's weight and its load average;
//! - the contribution threshold (above);
//! - turns of group entities: 3.10 puts back and sets every level at each switch
//!   (`put_prev_task`, `pick_next_task_fair`), so a group's entity starts a new slice each time
//!   one of its tasks does; 5.10 puts and sets only the levels where the previous and the next
//!   task differ, so a group's entity keeps its slice while its tasks take turns.
//!
//! Simplified: the hierarchical load is 3.10's (weights; hetlab's balancer is 3.10's for every
//! placement, 5.10 would use load averages); a group run queue's load is 5.10's accumulated
//! signal for both kernels (3.10 sums its entities' contributions), and a task's load moves
//! only with its own group's run queue (5.10 estimates what to propagate to the parents, which
//! here follow their own weights); blocked load decays when its run queue is next touched (the
//! kernel also at each periodic balance, `update_blocked_averages`); no bandwidth control
//! (`cpu.cfs_quota_us`), no `CONFIG_RT_GROUP_SCHED` (an RT task's group has no effect on it),
//! no autogroup.

use super::cfs::{self, Placing, RunQueue, Timeline, Tunables};
use super::pelt::{SchedAvg, State};
use super::{Kernel, SchedEntity};

/// The root group, `/`: the CPUs' own run queues.
pub const ROOT: usize = 0;
/// `MIN_SHARES` (kernel/sched/sched.h): the least a group's entity weighs, and the least
/// `cpu.shares` may be.
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES` (kernel/sched/sched.h): 1 << 18.
pub const MAX_SHARES: u64 = 1 << 18;
/// A new group's `cpu.shares`: `NICE_0_LOAD` (`alloc_fair_sched_group`).
pub const DEFAULT_SHARES: u64 = cfs::NICE_0_WEIGHT;

/// What waits or runs on a run queue: a task (a thread index) or a group's entity on that CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Entity {
    Task(usize),
    Group(usize),
}

/// A group's entity on one CPU (`tg->se[cpu]`), in its parent's run queue there.
#[derive(Debug, Clone, Default)]
pub struct GroupEntity {
    /// µs of nice-0 time, on the parent's run queue's clock.
    pub vruntime: f64,
    /// Its share of the group's `cpu.shares` (`se->load.weight`).
    pub weight: u64,
    /// Queued on the parent's run queue (the group has a runnable task here).
    pub on_rq: bool,
    /// The parent's running entity (`cfs_rq->curr == se`).
    pub running: bool,
    /// Up to when its vruntime is accounted, µs (`se->exec_start`).
    pub exec_start_us: f64,
    /// When its turn began, µs (`prev_sum_exec_runtime`'s reference).
    pub slice_start_us: f64,
}

/// A group's run queue on one CPU (`tg->cfs_rq[cpu]`) and the group's entity there.
#[derive(Debug, Clone)]
pub struct Level {
    /// Entities waiting here, by vruntime.
    pub queue: Timeline<Entity>,
    /// The entity running here (`cfs_rq->curr`).
    pub curr: Option<Entity>,
    /// Weights of the entities queued or running here (`cfs_rq->load.weight`).
    pub load_weight: u64,
    pub min_vruntime: f64,
    /// PELT: runnable while it has load, running while one of its entities runs, and its load.
    pub avg: SchedAvg,
    /// What this run queue last added to the group's load (`tg_load_contrib`,
    /// `tg_load_avg_contrib`).
    pub tg_load_contrib: u64,
    pub se: GroupEntity,
}

impl Default for Level {
    fn default() -> Self {
        Level {
            queue: Timeline::default(),
            curr: None,
            load_weight: 0,
            min_vruntime: 0.0,
            avg: SchedAvg::default(),
            tg_load_contrib: 0,
            // `init_tg_cfs_entry`: a group's entity starts at NICE_0_LOAD
            se: GroupEntity { weight: cfs::NICE_0_WEIGHT, ..Default::default() },
        }
    }
}

/// One task group (`struct task_group`).
#[derive(Debug, Clone)]
pub struct TaskGroup {
    /// Its cgroup path, `/` for the root.
    pub path: String,
    pub parent: usize,
    /// Levels below the root (the root 0, `/a` 1).
    pub depth: usize,
    /// `cpu.shares`.
    pub shares: u64,
    /// The sum of its run queues' contributions (`tg->load_avg`).
    pub load_avg: u64,
    /// `cpu.uclamp.min` / `cpu.uclamp.max` as written (`tg->uclamp_req`), and in effect: capped
    /// by its parent's (`tg->uclamp`, `sched::uclamp::group_effective`).
    pub uclamp_req: super::uclamp::Request,
    pub uclamp: super::uclamp::Clamp,
    /// Per CPU (none for the root: the CPUs' own run queues).
    pub levels: Vec<Level>,
}

/// Now, for the signals of a CPU's group run queues.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub us: f64,
    /// PELT's clock, ns.
    pub ns: u64,
    /// The CPU's PELT scales (runnable, running and load are set per run queue).
    pub scale: State,
}

/// Every task group of a run and each thread's.
#[derive(Debug, Clone)]
pub struct Groups {
    groups: Vec<TaskGroup>,
    kernel: Kernel,
    /// Per CPU, when the run has groups: the root level's waiting entities (tasks of the root
    /// group, entities of the top groups).
    top: Vec<Timeline<Entity>>,
    /// Per thread: its group.
    of_task: Vec<usize>,
    /// Per thread: its load and utilisation are in its groups' run queues' signals (on its CPU).
    attached: Vec<bool>,
    /// Per CPU: the CFS task put back last, while the CPU picks the next (5.10 keeps the turns
    /// of the groups both share).
    prev: Vec<Option<usize>>,
    /// Group run queues whose signals crossed a PELT period (CPU, group), when tracing.
    crossed: Option<Vec<(usize, usize)>>,
}

impl Default for Groups {
    /// The root group only, for any number of CPUs and threads.
    fn default() -> Self {
        Groups::new(0, Kernel::V3_10, &[], 0)
    }
}

/// `calc_cfs_shares` (3.10) / `calc_group_shares` (5.10): a group entity's weight on one CPU,
/// the group's `shares` times this run queue's load over the group's, within `MIN_SHARES` and
/// `shares`. The group's load counts this run queue's own load now (`load_weight`, or 5.10 the
/// larger of it and its average) instead of its last contribution.
pub fn calc_shares(
    kernel: Kernel,
    shares: u64,
    tg_load_avg: u64,
    contrib: u64,
    load_weight: u64,
    load_avg: u64,
) -> u64 {
    let load = match kernel {
        Kernel::V3_10 => load_weight,
        Kernel::V5_10 => load_weight.max(load_avg),
    };
    let tg_weight = (tg_load_avg + load).saturating_sub(contrib);
    let share =
        if tg_weight > 0 { shares as u128 * load as u128 / tg_weight as u128 } else { shares as u128 * load as u128 };
    (share.min(u128::from(shares)) as u64).max(MIN_SHARES)
}

/// Whether a run queue's contribution to its group's load is refreshed: it moved by more than
/// an eighth (3.10 `__update_cfs_rq_tg_load_contrib`, or always when forced) or a 64th (5.10
/// `update_tg_load_avg`) of what it was.
fn contribution_due(kernel: Kernel, contrib: u64, load_avg: u64, force: bool) -> bool {
    let delta = load_avg.abs_diff(contrib);
    let divisor = match kernel {
        Kernel::V3_10 => 8,
        Kernel::V5_10 => 64,
    };
    delta != 0 && (force || delta > contrib / divisor)
}

impl Groups {
    /// The groups of a run on `ncpus` CPUs with `nthreads` threads, all in the root group until
    /// [`assign`](Self::assign)ed: `groups` are (path, `cpu.shares`), each path normalised
    /// (`/a/b`), parents before children, the root (`/`) first or implied.
    pub fn new(ncpus: usize, kernel: Kernel, groups: &[(String, u64)], nthreads: usize) -> Groups {
        let mut all = vec![TaskGroup {
            path: "/".into(),
            parent: ROOT,
            depth: 0,
            shares: DEFAULT_SHARES,
            load_avg: 0,
            uclamp_req: Default::default(),
            uclamp: super::uclamp::ROOT_GROUP,
            levels: Vec::new(),
        }];
        for (path, shares) in groups.iter().filter(|(p, _)| p != "/") {
            let (parent_path, _) = path.rsplit_once('/').expect("a group path starts with /");
            let parent = match parent_path {
                "" => ROOT,
                p => all.iter().position(|g| g.path == p).expect("parents come first"),
            };
            all.push(TaskGroup {
                path: path.clone(),
                parent,
                depth: all[parent].depth + 1,
                shares: *shares,
                load_avg: 0,
                uclamp_req: Default::default(),
                uclamp: super::uclamp::group_effective(Default::default(), all[parent].uclamp),
                levels: vec![Level::default(); ncpus],
            });
        }
        let active = all.len() > 1;
        Groups {
            groups: all,
            kernel,
            top: if active { vec![Timeline::default(); ncpus] } else { Vec::new() },
            of_task: vec![ROOT; nthreads],
            attached: vec![false; nthreads],
            prev: vec![None; ncpus],
            crossed: None,
        }
    }

    /// The run has task groups besides the root.
    pub fn is_active(&self) -> bool {
        self.groups.len() > 1
    }

    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    pub fn group(&self, g: usize) -> &TaskGroup {
        &self.groups[g]
    }

    /// The group at `path` (normalised), if the run has it.
    pub fn find(&self, path: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.path == path)
    }

    /// Thread `t`'s group.
    pub fn of(&self, t: usize) -> usize {
        self.of_task.get(t).copied().unwrap_or(ROOT)
    }

    /// Group `g`'s `cpu.uclamp.*` are written `req`: its effective clamps and its descendants'
    /// follow (`cpu_util_update_eff`; parents come before their children here).
    pub fn set_uclamp(&mut self, g: usize, req: super::uclamp::Request) {
        self.groups[g].uclamp_req = req;
        for child in (g..self.groups.len()).filter(|&c| c != ROOT) {
            let parent = self.groups[self.groups[child].parent].uclamp;
            self.groups[child].uclamp = super::uclamp::group_effective(self.groups[child].uclamp_req, parent);
        }
    }

    /// The effective clamps of thread `t`'s group, which restrict its own (`uclamp_tg_restrict`);
    /// `None` in the root group, which restricts nothing.
    pub fn uclamp_of(&self, t: usize) -> Option<super::uclamp::Clamp> {
        let g = self.of(t);
        (g != ROOT).then(|| self.groups[g].uclamp)
    }

    /// Thread `t` is in group `g` from now on (the caller has taken it off its run queues).
    pub fn assign(&mut self, t: usize, g: usize) {
        self.of_task[t] = g;
    }

    /// Records which group run queues' signals cross a PELT period (for a trace).
    pub fn trace_signals(&mut self) {
        self.crossed = Some(Vec::new());
    }

    /// The group run queues whose signals crossed a period since the last call (CPU, group).
    pub fn take_crossed(&mut self, out: &mut Vec<(usize, usize)>) {
        if let Some(c) = &mut self.crossed {
            out.append(c);
        }
    }

    fn parent(&self, g: usize) -> usize {
        self.groups[g].parent
    }

    fn level(&self, g: usize, cpu: usize) -> &Level {
        &self.groups[g].levels[cpu]
    }

    fn level_mut(&mut self, g: usize, cpu: usize) -> &mut Level {
        &mut self.groups[g].levels[cpu]
    }

    /// Group `g`'s run queue on `cpu` and its entity (not the root's).
    pub fn level_of(&self, g: usize, cpu: usize) -> &Level {
        self.level(g, cpu)
    }

    /// `g` is `of` or one of its ancestors.
    fn contains(&self, g: usize, mut of: usize) -> bool {
        loop {
            if of == g {
                return true;
            }
            if of == ROOT {
                return false;
            }
            of = self.parent(of);
        }
    }

    // ---- entities ------------------------------------------------------------------------

    /// The group whose run queue `e` is on: a task's own group, a group entity's parent.
    fn queue_of(&self, e: Entity) -> usize {
        match e {
            Entity::Task(t) => self.of(t),
            Entity::Group(g) => self.parent(g),
        }
    }

    /// `parent_entity`: the entity of the group whose run queue `e` is on; none at the root.
    fn parent_entity(&self, e: Entity) -> Option<Entity> {
        let g = self.queue_of(e);
        (g != ROOT).then_some(Entity::Group(g))
    }

    /// The entity of `t`'s line on the root level: itself, or its top group's.
    fn top_entity(&self, t: usize) -> Entity {
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

    fn weight(&self, cpu: usize, e: Entity, tasks: &[SchedEntity]) -> u64 {
        match e {
            Entity::Task(t) => tasks[t].weight,
            Entity::Group(g) => self.level(g, cpu).se.weight,
        }
    }

    // ---- run queues ----------------------------------------------------------------------

    /// The vruntime floor of `g`'s run queue on `cpu` (the root's: the CPU's).
    pub fn min_vruntime(&self, cpu: usize, g: usize, rq: &RunQueue) -> f64 {
        if g == ROOT {
            rq.min_vruntime
        } else {
            self.level(g, cpu).min_vruntime
        }
    }

    fn load(&self, cpu: usize, g: usize, rq: &RunQueue) -> u64 {
        if g == ROOT {
            rq.load_weight
        } else {
            self.level(g, cpu).load_weight
        }
    }

    /// The leftmost entity waiting on `g`'s run queue on `cpu`.
    fn first(&self, cpu: usize, g: usize, rq: &RunQueue) -> Option<Entity> {
        match g {
            ROOT if self.is_active() => self.top[cpu].first(),
            ROOT => rq.queue.first().map(Entity::Task),
            _ => self.level(g, cpu).queue.first(),
        }
    }

    /// The entity running on `g`'s run queue on `cpu`.
    fn running(&self, cpu: usize, g: usize, rq: &RunQueue) -> Option<Entity> {
        match g {
            ROOT => rq.cfs_curr().map(|t| self.top_entity(t)),
            _ => self.level(g, cpu).curr,
        }
    }

    /// Entities queued or running on `g`'s run queue (`cfs_rq->nr_running`).
    fn nr_running(&self, cpu: usize, g: usize, rq: &RunQueue) -> usize {
        match g {
            ROOT if self.is_active() => self.top[cpu].len() + rq.cfs_curr().is_some() as usize,
            ROOT => rq.cfs_nr_running(),
            _ => {
                let l = self.level(g, cpu);
                l.queue.len() + l.curr.is_some() as usize
            }
        }
    }

    fn queue_insert(&mut self, cpu: usize, g: usize, e: Entity, vruntime: f64) {
        match g {
            ROOT if self.is_active() => self.top[cpu].insert(e, vruntime),
            ROOT => {} // the CPU's queue, by the caller
            _ => self.level_mut(g, cpu).queue.insert(e, vruntime),
        }
    }

    fn queue_remove(&mut self, cpu: usize, g: usize, e: Entity, vruntime: f64) -> bool {
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

    // ---- signals and shares ---------------------------------------------------------------

    /// Accounts `g`'s run-queue signals on `cpu` up to now, before what they follow changes.
    fn update_level(&mut self, g: usize, cpu: usize, now: &Now) {
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
    fn update_shares(&mut self, cpu: usize, g: usize, force: bool, rq: &mut RunQueue, now: &Now) {
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
    fn charge(&mut self, g: usize, cpu: usize, now_us: f64) {
        let se = &mut self.level_mut(g, cpu).se;
        let delta_us = now_us - se.exec_start_us;
        if delta_us > 0.0 {
            se.vruntime += cfs::delta_fair(delta_us, se.weight);
            se.exec_start_us = now_us;
        }
    }

    // ---- enqueue, dequeue ----------------------------------------------------------------

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

    // ---- running -------------------------------------------------------------------------

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
            let keeps_turn = self.kernel == Kernel::V5_10 && prev.is_some_and(|pt| self.contains(child, self.of(pt)));
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
        if self.kernel == Kernel::V5_10 {
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
    fn matching(&self, a: Entity, b: Entity) -> (Entity, Entity) {
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

    // ---- moving between CPUs and groups ---------------------------------------------------

    /// `t`'s vruntime renormalised from its group's run queue on `from` to its group's on `to`
    /// (`migrate_task_rq_fair`, `task_move_group_fair`).
    pub fn renormalise(&self, t: usize, from: usize, to: usize, rqs: &[RunQueue], tasks: &mut [SchedEntity]) {
        let g = self.of(t);
        let se = &mut tasks[t];
        se.vruntime = se.vruntime - self.min_vruntime(from, g, &rqs[from]) + self.min_vruntime(to, g, &rqs[to]);
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

    // ---- load balancing ------------------------------------------------------------------

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

    // ---- reporting -----------------------------------------------------------------------

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::Fixture;

    #[test]
    fn sched_idle_rules_come_before_vruntimes_at_wakeup() {
        use crate::workload::SchedClass;
        let mut f = Fixture::new(1, &[&[0], &[0]]);
        f.put(0, 0);
        let t = Tunables::for_cpus(1);
        // the waking task is 10 ms ahead in vruntime: CFS alone keeps the running one
        (f.tasks[0].vruntime, f.tasks[1].vruntime) = (0.0, 10_000.0);
        assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
        // a running SCHED_IDLE task is preempted by any normal one
        f.tasks[0].class = SchedClass::Idle;
        assert!(f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
        // a waking SCHED_IDLE task 1 s behind never preempts, not even an idle one
        f.tasks[1].class = SchedClass::Idle;
        f.tasks[1].vruntime = -1e6;
        assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
        f.tasks[0].class = SchedClass::Normal;
        assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
        // a waking SCHED_BATCH task 1 s behind the running normal one would preempt it as
        // SCHED_OTHER (1 s past the 1 ms wake-up granularity), but does not
        f.tasks[1].class = SchedClass::Normal;
        assert!(f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
        f.tasks[1].class = SchedClass::Batch;
        assert!(!f.groups.wakeup_preempts(0, 0, 1, &f.tasks, &t));
    }

    #[test]
    fn shares_split_by_load_as_each_kernel_computes_them() {
        // one CPU with the whole group: the group's shares, whatever its load
        assert_eq!(calc_shares(Kernel::V3_10, 1024, 0, 0, 4096, 0), 1024);
        assert_eq!(calc_shares(Kernel::V5_10, 1024, 0, 0, 4096, 0), 1024);
        // 3.10: this CPU's 1024 of weight against 3072 tracked elsewhere (its own old
        // contribution, 500, taken out): 1024·1024/(3572 - 500 + 1024) = 256
        assert_eq!(calc_shares(Kernel::V3_10, 1024, 3572, 500, 1024, 9000), 256);
        // 5.10 takes the larger of the weight and the average: 1024·9000/(3572 - 500 + 9000),
        // within the group's shares
        assert_eq!(calc_shares(Kernel::V5_10, 1024, 3572, 500, 1024, 9000), 763);
        // never below MIN_SHARES: an empty run queue (3.10) or a tiny share
        assert_eq!(calc_shares(Kernel::V3_10, 1024, 100_000, 0, 0, 0), MIN_SHARES);
        assert_eq!(calc_shares(Kernel::V3_10, 52, 100_000, 0, 15, 0), MIN_SHARES);
        // contributions: an eighth (3.10) or a 64th (5.10) of the last, or forced
        assert!(!contribution_due(Kernel::V3_10, 800, 900, false));
        assert!(contribution_due(Kernel::V3_10, 800, 901, false));
        assert!(contribution_due(Kernel::V3_10, 800, 810, true));
        assert!(contribution_due(Kernel::V5_10, 6400, 6501, false));
        assert!(!contribution_due(Kernel::V5_10, 6400, 6400, true));
    }

    /// Groups `/a` (shares 1024), `/a/b` and `/c` on 2 CPUs; threads: 0 root, 1 in /a, 2 in
    /// /a/b, 3 in /c.
    fn groups(kernel: Kernel) -> Groups {
        let specs = [("/a".to_string(), 1024), ("/a/b".to_string(), 1024), ("/c".to_string(), 512)];
        let mut g = Groups::new(2, kernel, &specs, 4);
        for (t, path) in [(1, "/a"), (2, "/a/b"), (3, "/c")] {
            let i = g.find(path).unwrap();
            g.assign(t, i);
        }
        g
    }

    #[test]
    fn paths_make_a_tree() {
        let g = groups(Kernel::V3_10);
        let (a, b, c) = (g.find("/a").unwrap(), g.find("/a/b").unwrap(), g.find("/c").unwrap());
        assert_eq!((g.group(a).parent, g.group(b).parent, g.group(c).parent), (ROOT, a, ROOT));
        assert_eq!((g.group(b).depth, g.group(c).shares), (2, 512));
        assert!(g.contains(a, b) && !g.contains(b, a) && g.contains(ROOT, c));
        // entities at their common level: a task of /a/b against one of /c meet as /a and /c;
        // against one of /a as /a/b's entity and the task; against the root's as /a and itself
        assert_eq!(g.matching(Entity::Task(2), Entity::Task(3)), (Entity::Group(a), Entity::Group(c)));
        assert_eq!(g.matching(Entity::Task(2), Entity::Task(1)), (Entity::Group(b), Entity::Task(1)));
        assert_eq!(g.matching(Entity::Task(0), Entity::Task(2)), (Entity::Task(0), Entity::Group(a)));
        assert_eq!(g.top_entity(2), Entity::Group(a));
        assert!(Groups::default().find("/a").is_none() && !Groups::default().is_active());
    }

    /// A fixture of 2 CPUs and `groups()`'s 4 threads, every group's run queue signals at 0.
    fn fixture(kernel: Kernel) -> (Fixture, Now, Tunables) {
        let mut f = Fixture::new(2, &[&[0, 1], &[0, 1], &[0, 1], &[0, 1]]);
        f.groups = groups(kernel);
        let now = Now { us: 0.0, ns: 0, scale: State::IDLE };
        (f, now, Tunables::for_cpus(1))
    }

    /// Thread `t` joins CPU 0 waiting (or running if `run`).
    fn enqueue(f: &mut Fixture, now: &Now, tunables: &Tunables, t: usize, run: bool) {
        f.groups.join(0, t, &mut f.rqs[0], &f.tasks, now, tunables);
        if run {
            f.rqs[0].curr = Some(t);
            f.groups.set_next(0, t, now);
        } else {
            f.groups.insert_task(0, t, &mut f.rqs[0], &f.tasks);
        }
    }

    #[test]
    fn picking_descends_and_groups_weigh_their_shares() {
        let (mut f, now, tun) = fixture(Kernel::V3_10);
        let (a, b, c) = (f.groups.find("/a").unwrap(), f.groups.find("/a/b").unwrap(), f.groups.find("/c").unwrap());
        f.tasks[0].vruntime = 5.0;
        f.tasks[2].vruntime = 1.0;
        f.tasks[3].vruntime = 0.0;
        for t in [0, 2, 3] {
            enqueue(&mut f, &now, &tun, t, false);
        }
        // the root level: task 0 (1024), /a's entity (1024) and /c's (its whole 512 here)
        assert_eq!(f.rqs[0].load_weight, 1024 + 1024 + 512);
        assert_eq!(f.groups.level(c, 0).se.weight, 512);
        assert_eq!(f.groups.level(a, 0).load_weight, 1024);
        // the groups' entities were placed as waking at the root's floor (0), at most half a
        // latency behind it: /a's and /c's at 0, before task 0 (5); /a first on the tie, then
        // /a/b's entity in /a, then task 2 in /a/b
        assert_eq!(f.groups.pick(0, &f.rqs[0], &f.tasks, None, false), Some(2));
        assert_eq!(f.groups.nr_running(0, ROOT, &f.rqs[0]), 3);
        // the CPU's queue keeps every waiting task
        assert_eq!(f.rqs[0].queue.len(), 3);
        // run task 2: /a and /a/b become running on their parents; put back, they wait again
        assert!(f.groups.remove_task(0, 2, &mut f.rqs[0], &f.tasks));
        f.rqs[0].curr = Some(2);
        f.groups.set_next(0, 2, &now);
        assert_eq!(f.groups.level(a, 0).curr, Some(Entity::Group(b)));
        assert!(f.groups.level(a, 0).se.running && f.groups.top[0].len() == 2);
        // its h_load: 1024 · (1024/(2561)) · (1024/1025) · (1024/1025)
        let h = f.groups.task_h_load(2, &f.rqs, &f.tasks);
        assert_eq!(h, 1024 * (2560 * 1024 / 2561 * 1024 / 1025) / 1025);
        // it sleeps: /a/b and then /a have nothing left, their entities leave
        f.groups.leave(0, 2, &mut f.rqs[0], &f.tasks, &now);
        f.rqs[0].curr = None;
        f.groups.put_prev(0, 2, &now);
        assert!(!f.groups.level(a, 0).se.on_rq && !f.groups.level(b, 0).se.on_rq);
        assert_eq!((f.rqs[0].load_weight, f.groups.top[0].len()), (1024 + 512, 2));
        assert_eq!(f.groups.pick(0, &f.rqs[0], &f.tasks, None, false), Some(3));
    }

    #[test]
    fn a_waking_task_preempts_by_its_entity_on_the_common_run_queue() {
        // running task 1 of /a is far ahead of waking task 3 of /c (100 ms of vruntime), but
        // they meet as /a's and /c's entities: /c's 50 ms ahead of /a's, no preemption; the
        // other way round it preempts
        let (mut f, now, tun) = fixture(Kernel::V3_10);
        let (a, c) = (f.groups.find("/a").unwrap(), f.groups.find("/c").unwrap());
        (f.tasks[1].vruntime, f.tasks[3].vruntime) = (100_000.0, 0.0);
        enqueue(&mut f, &now, &tun, 1, true);
        enqueue(&mut f, &now, &tun, 3, false);
        f.groups.level_mut(a, 0).se.vruntime = 0.0;
        f.groups.level_mut(c, 0).se.vruntime = 50_000.0;
        assert!(!f.groups.wakeup_preempts(0, 1, 3, &f.tasks, &tun));
        (f.groups.level_mut(a, 0).se.vruntime, f.groups.level_mut(c, 0).se.vruntime) = (50_000.0, 0.0);
        assert!(f.groups.wakeup_preempts(0, 1, 3, &f.tasks, &tun));
        // within one group, the tasks themselves: task 2 of /a/b against task 1 of /a meet as
        // /a/b's entity (placed at /a's floor) and task 1
        let (mut f, now, tun) = fixture(Kernel::V3_10);
        f.tasks[1].vruntime = 100_000.0;
        enqueue(&mut f, &now, &tun, 1, true);
        enqueue(&mut f, &now, &tun, 2, false);
        assert!(f.groups.wakeup_preempts(0, 1, 2, &f.tasks, &tun));
    }

    #[test]
    fn the_5_10_pick_keeps_a_groups_turn_while_its_tasks_switch() {
        // tasks 2 of /a/b and then task 1 of /a run in turn on CPU 0: /a's entity is on both
        // ways; 3.10 starts its turn anew at the switch, 5.10 keeps it
        for (kernel, kept) in [(Kernel::V3_10, false), (Kernel::V5_10, true)] {
            let (mut f, mut now, tun) = fixture(kernel);
            let a = f.groups.find("/a").unwrap();
            enqueue(&mut f, &now, &tun, 2, true);
            enqueue(&mut f, &now, &tun, 1, false);
            now.us = 3000.0;
            f.groups.update_curr(0, 2, &mut f.rqs[0], &f.tasks, now.us);
            f.groups.insert_task(0, 2, &mut f.rqs[0], &f.tasks);
            f.groups.put_prev(0, 2, &now);
            assert!(f.groups.remove_task(0, 1, &mut f.rqs[0], &f.tasks));
            f.groups.set_next(0, 1, &now);
            assert_eq!(f.groups.level(a, 0).se.slice_start_us == 0.0, kept, "{kernel:?}");
            assert_eq!(f.groups.level(a, 0).curr, Some(Entity::Task(1)));
        }
    }

    #[test]
    fn a_cpu_shares_a_group_by_load_and_wake_affine_counts_its_share() {
        // /c (512 shares) has a task on CPU 0 and its run queue there has carried 1024 for long;
        // CPU 1 has none: a task of /c joining CPU 1 would add 512·1024/(1024+1024) = 256
        let (mut f, mut now, tun) = fixture(Kernel::V3_10);
        let c = f.groups.find("/c").unwrap();
        enqueue(&mut f, &now, &tun, 3, true);
        now.ns = 1_000_000_000;
        now.us = 1e6;
        now.scale.runnable = true;
        f.groups.update_level(c, 0, &now);
        f.groups.update_shares(0, c, true, &mut f.rqs[0], &now);
        assert_eq!(f.groups.group(c).load_avg, 1024);
        f.tasks.push(f.tasks[3].clone());
        f.groups.of_task.push(c);
        // its entity on CPU 1 as its last task there left it (an empty run queue's share, 3.10)
        f.groups.level_mut(c, 1).se.weight = MIN_SHARES;
        assert_eq!(f.groups.effective_load(4, 1, &f.tasks), 256 - 2);
        // on CPU 0 it would add nothing: the group's entity has its whole shares there already
        assert_eq!(f.groups.effective_load(4, 0, &f.tasks), 0);
        // a root task adds its weight
        assert_eq!(f.groups.effective_load(0, 1, &f.tasks), 1024);
    }
}
