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
//!
//! Files: this one the group tree and each thread's group; `levels` the entities and run
//! queues of each CPU's levels; `enqueue` a task joining and leaving them; `pick` which
//! entity runs (turns, the pick, preemption, the tick); `shares` the groups' shares and their
//! run queues' PELT signals; `hierarchical_load` what the balancer and wake_affine read.

mod enqueue;
mod hierarchical_load;
mod levels;
mod pick;
mod shares;
#[cfg(test)]
mod tests;

use super::cfs::{self, Timeline};
use super::pelt::{SchedAvg, State};
use super::Kernel;

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
}
