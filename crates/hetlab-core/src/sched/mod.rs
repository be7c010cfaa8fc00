//! Task placement: where each thread runs. The engine owns the clock and the threads; the
//! scheduler's state — one CFS run queue per CPU ([`cfs::RunQueue`]) and one scheduling entity
//! per thread ([`SchedEntity`]: allowed CPUs, current CPU, PELT utilisation) — lives here, and a
//! placement policy sees it through a [`SchedView`], as a governor sees a policy through a
//! `PolicyView`, so a policy can be tested without the engine.
//!
//! A policy answers the kernel's placement hooks ([`Placement`]): which CPU a waking or new
//! thread goes to (`select_task_rq`), which waiting thread a CPU that goes idle pulls
//! (`newidle_balance`), what the periodic balance moves, and what it does at each scheduler
//! tick of a busy CPU (forced migration of a *running* thread, as big.LITTLE MP does).
//!
//! Policies: [`pinned`] (each thread stays on one CPU of its affinity mask), [`smp`]
//! (vanilla CFS, capacity-blind: one MC domain over all CPUs) and [`eas`] (mainline
//! energy-aware scheduling over the platform's energy model). HMP comes next, in a file of its
//! own.

pub mod cfs;
pub mod eas;
pub mod pelt;
pub mod pinned;
pub mod smp;

use crate::platform::Platform;
use cfs::RunQueue;
use pelt::SchedAvg;

/// A set of CPUs (`struct cpumask`), CPUs 0..64.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuMask(u64);

impl CpuMask {
    /// Most CPUs a platform may have.
    pub const MAX_CPUS: usize = crate::platform::MAX_CPUS;

    pub fn of(cpus: impl IntoIterator<Item = usize>) -> CpuMask {
        CpuMask(cpus.into_iter().fold(0, |m, c| m | 1u64 << c))
    }
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < Self::MAX_CPUS && self.0 >> cpu & 1 == 1
    }
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
    pub fn count(&self) -> usize {
        self.0.count_ones() as usize
    }
    /// The CPUs, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..Self::MAX_CPUS).filter(move |&c| self.contains(c))
    }
    /// The `n`-th CPU, ascending (`cpumask_nth`).
    pub fn nth(&self, n: usize) -> Option<usize> {
        self.iter().nth(n)
    }
    pub fn first(&self) -> Option<usize> {
        self.nth(0)
    }
    pub fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        *self = CpuMask::of(self.iter().filter(|&c| keep(c)).collect::<Vec<_>>());
    }
}

/// The scheduler's view of one thread (`struct sched_entity` and the task's placement facts).
#[derive(Debug, Clone)]
pub struct SchedEntity {
    /// CPUs it may run on (`p->cpus_mask`), online ones only.
    pub allowed: CpuMask,
    /// CPU it runs, waits or last ran on (`task_cpu(p)`).
    pub cpu: usize,
    pub nice: i32,
    /// Load weight from `nice` (`sched_prio_to_weight`).
    pub weight: u64,
    /// CFS virtual runtime, µs of nice-0 time (relative to its run queue's `min_vruntime`).
    pub vruntime: f64,
    /// A kernel thread (not part of the workload).
    pub kernel: bool,
    /// PELT signals, up to date as of their last update.
    pub avg: SchedAvg,
}

/// What a placement policy may look at.
#[derive(Debug, Clone, Copy)]
pub struct SchedView<'a> {
    pub now_us: f64,
    /// Per CPU: its run queue.
    pub rqs: &'a [RunQueue],
    /// Per CPU: the hardware cluster it runs on now (logical CPU -> core -> cluster).
    pub cluster_of: &'a [usize],
    /// Per CPU: its capacity at its top OPP, 0..=1024.
    pub capacity: &'a [u32],
    /// Per thread.
    pub tasks: &'a [SchedEntity],
}

impl SchedView<'_> {
    pub fn ncpus(&self) -> usize {
        self.rqs.len()
    }
}

/// Why a CPU is being chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// A new thread's first placement (`SD_BALANCE_FORK`).
    Fork,
    /// A sleeping thread wakes up (`SD_BALANCE_WAKE`).
    Wakeup,
}

/// A thread to move between CPUs, waiting or running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub thread: usize,
    pub to_cpu: usize,
}

/// A placement policy: the kernel's hooks, each answered from a [`SchedView`].
pub trait Placement: Send {
    /// The name users type (`pinned`, `smp`, ...).
    fn name(&self) -> &'static str;

    /// The CPU `thread` runs on after waking up or being created (`select_task_rq`); one of
    /// its allowed CPUs.
    fn select_cpu(&mut self, view: &SchedView, thread: usize, kind: WakeKind) -> usize;

    /// `cpu` is about to go idle and its own queue is empty: a waiting thread to pull here
    /// (`newidle_balance`), or none.
    fn balance_newidle(&mut self, _view: &SchedView, _cpu: usize) -> Option<Migration> {
        None
    }

    /// A scheduler tick on busy `cpu` (`scheduler_tick` -> `trigger_load_balance`): migrations
    /// to make now, of waiting or running threads.
    fn tick(&mut self, _view: &SchedView, _cpu: usize, _out: &mut Vec<Migration>) {}

    /// Whether [`tick`](Self::tick) does anything; the engine skips the calls otherwise.
    fn uses_tick(&self) -> bool {
        false
    }

    /// Whether it reads PELT utilisation (`SchedEntity::util`); the engine keeps the signals
    /// up to date only when someone reads them.
    fn uses_util(&self) -> bool {
        false
    }

    /// The cpufreq governor it needs on every policy, if any (EAS: schedutil; the kernel builds
    /// no performance domains otherwise). The host refuses other governors.
    fn required_governor(&self) -> Option<&'static str> {
        None
    }

    /// The root domain's over-utilisation state now (EAS's tipping point), or `None` for a
    /// policy without one. The engine asks after each placement decision and traces changes
    /// (`sched_overutilized`).
    fn overutilized(&self) -> Option<bool> {
        None
    }
}

/// The placement policies, by the names users type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    Pinned,
    Smp,
    Eas,
}

impl SchedPolicy {
    pub const ALL: [SchedPolicy; 3] = [SchedPolicy::Pinned, SchedPolicy::Smp, SchedPolicy::Eas];

    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
            format!("unknown scheduler '{name}'; known: {}", known.join(", "))
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SchedPolicy::Pinned => "pinned",
            SchedPolicy::Smp => "smp",
            SchedPolicy::Eas => "eas",
        }
    }

    /// The policy for a run on `platform`, or why it cannot run there.
    pub fn build(self, platform: &Platform) -> Result<Box<dyn Placement>, String> {
        Ok(match self {
            SchedPolicy::Pinned => Box::new(pinned::Pinned),
            SchedPolicy::Smp => Box::new(smp::Smp),
            SchedPolicy::Eas => Box::new(eas::Eas::new(platform)?),
        })
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// A view of `rqs` with every CPU on cluster 0 at capacity 1024, at time 0.
    pub struct Fixture {
        pub now_us: f64,
        pub rqs: Vec<RunQueue>,
        pub cluster_of: Vec<usize>,
        pub capacity: Vec<u32>,
        pub tasks: Vec<SchedEntity>,
    }

    impl Fixture {
        pub fn new(ncpus: usize, allowed: &[&[usize]]) -> Fixture {
            let tasks = allowed
                .iter()
                .map(|a| SchedEntity {
                    allowed: CpuMask::of(a.iter().copied()),
                    cpu: a[0],
                    nice: 0,
                    weight: cfs::NICE_0_WEIGHT,
                    vruntime: 0.0,
                    kernel: false,
                    avg: SchedAvg::default(),
                })
                .collect();
            Fixture {
                now_us: 0.0,
                rqs: (0..ncpus).map(|_| RunQueue::new(true)).collect(),
                cluster_of: vec![0; ncpus],
                capacity: vec![1024; ncpus],
                tasks,
            }
        }
        pub fn view(&self) -> SchedView<'_> {
            SchedView {
                now_us: self.now_us,
                rqs: &self.rqs,
                cluster_of: &self.cluster_of,
                capacity: &self.capacity,
                tasks: &self.tasks,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_names() {
        let m = CpuMask::of([1, 4, 5]);
        assert!(m.contains(4) && !m.contains(0) && !m.contains(200));
        assert_eq!((m.count(), m.nth(1), m.first()), (3, Some(4), Some(1)));
        let mut n = m;
        n.retain(|c| c != 4);
        assert_eq!(n.iter().collect::<Vec<_>>(), [1, 5]);
        assert!(SchedPolicy::parse("eas-v2").unwrap_err().contains("pinned, smp, eas"));
        let exynos = Platform::builtin("exynos5422").unwrap();
        assert_eq!(SchedPolicy::parse("smp").unwrap().build(&exynos).unwrap().name(), "smp");
        assert_eq!(SchedPolicy::parse("eas").unwrap().build(&exynos).unwrap().name(), "eas");
    }
}
