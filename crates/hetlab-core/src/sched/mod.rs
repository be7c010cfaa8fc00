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
//! Policies, one file each: [`pinned`] (each thread stays on one CPU of its affinity mask),
//! [`smp`] (vanilla CFS, capacity-blind: one MC domain over all CPUs), [`hmp`] (ARM's
//! big.LITTLE MP: one domain per cluster, tasks moved between clusters by their tracked load)
//! and [`eas`] (mainline energy-aware scheduling over the platform's energy model,
//! [`energy_model`]: the kernel's EM, performance domains, states and cost); [`registry`] lists
//! them, each as its file declares it (name, summary, tunables, constructor).
//! Shared by the CFS policies: [`domains`] (the domain layouts), [`select`] (CFS's wake-up and
//! fork CPU choice) and [`balance`] (new-idle, periodic and idle load balancing).
//! Task groups (the cgroup cpu controller) nest run queues inside each CPU's: [`group`].
//! Above CFS, [`rt`]: the real-time class (SCHED_FIFO/RR), its queues and its own placement;
//! above both, [`deadline`]: SCHED_DEADLINE's servers, EDF queues and global EDF placement.
//! What schedutil and EAS's energy estimate read of a CPU, its utilisation summed over the
//! classes: [`cpu_util`].
//! Beside them, [`switching`]: the in-kernel switcher and cluster migration, which change
//! which cores the logical CPUs run on.

pub mod balance;
pub mod cfs;
pub mod cpu_perf;
pub mod cpu_util;
pub mod deadline;
pub mod domains;
pub mod eas;
pub mod eevdf;
pub mod energy_model;
pub mod group;
pub mod hmp;
pub mod pelt;
pub mod pinned;
pub mod registry;
pub mod rt;
pub mod select;
pub mod select_asym;
pub mod smp;
pub mod switching;
pub mod uclamp;
pub mod util_est;
pub mod util_fits;

use crate::governor::tunables::{TunableInfo, Values};
use crate::platform::Platform;
use cfs::RunQueue;
use pelt::SchedAvg;

/// A set of CPUs (`struct cpumask`), CPUs 0..64.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuMask(u64);

impl CpuMask {
    /// Most CPUs a platform may have.
    pub const MAX_CPUS: usize = crate::platform::MAX_CPUS;
    pub const EMPTY: CpuMask = CpuMask(0);

    /// The CPUs of bit mask `bits` (bit i: CPU i).
    pub fn from_bits(bits: u64) -> CpuMask {
        CpuMask(bits)
    }
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
    pub fn iter(&self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let cpu = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                cpu
            })
        })
    }
    /// The CPUs from `start` on, wrapping around: the order in which the kernel walks a
    /// domain's groups from a CPU's own (`sd->groups` starts at the CPU's group).
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = usize> {
        let high = if start >= Self::MAX_CPUS { 0 } else { self.0 >> start << start };
        CpuMask(high).iter().chain(CpuMask(self.0 & !high).iter())
    }
    /// The `n`-th CPU, ascending (`cpumask_nth`).
    pub fn nth(&self, n: usize) -> Option<usize> {
        self.iter().nth(n)
    }
    pub fn first(&self) -> Option<usize> {
        (self.0 != 0).then(|| self.0.trailing_zeros() as usize)
    }
    pub fn retain(&mut self, keep: impl Fn(usize) -> bool) {
        *self = CpuMask::of(self.iter().filter(|&c| keep(c)));
    }
    /// CPUs in both (`cpumask_and`).
    pub fn and(self, other: CpuMask) -> CpuMask {
        CpuMask(self.0 & other.0)
    }
    pub fn intersects(self, other: CpuMask) -> bool {
        self.0 & other.0 != 0
    }
    pub fn with(self, cpu: usize) -> CpuMask {
        CpuMask(self.0 | 1 << cpu)
    }
    pub fn without(self, cpu: usize) -> CpuMask {
        CpuMask(self.0 & !(1 << cpu))
    }
    /// The bit mask (bit i: CPU i).
    #[inline]
    pub fn bits(self) -> u64 {
        self.0
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
    /// When its run time was last accounted, µs (`se->exec_start`): while it runs, now; once
    /// it stopped, when it stopped (the load balancer's cache-hot test).
    pub exec_start_us: f64,
    /// A kernel thread (not part of the workload).
    pub kernel: bool,
    /// PELT signals, up to date as of their last update.
    pub avg: SchedAvg,
    /// Its utilisation clamps as asked (`p->uclamp_req`; `None` where it asked none).
    pub uclamp_req: uclamp::Request,
    /// Its effective utilisation clamps (`uclamp_eff_get`, kept up to date; `p->uclamp`).
    pub uclamp: uclamp::Clamp,
    /// The CPU whose run-queue buckets count it and the clamps it was counted with
    /// (`uc_se->active`, `uc_se->bucket_id`), while it is runnable there.
    pub uclamp_counted: Option<(usize, uclamp::Clamp)>,
    /// Its util_est (kept by Linux 6.6+ runs only, else zero).
    pub util_est: util_est::TaskEstimate,
    /// The CPU whose run queue's util_est sum counts it and the estimate it was counted with,
    /// while it is queued there.
    pub util_est_counted: Option<(usize, u64)>,
    /// CFS, or real-time with its priority ([`rt`]).
    pub class: rt::SchedClass,
    /// An RT task's place in its priority's list: the number of its last arrival there.
    pub rt_arrival: u64,
    /// A SCHED_RR task's ticks left of its slice as of when it last started running.
    pub rr_slice_left_ticks: u64,
    /// A SCHED_DEADLINE task's server: runtime left, absolute deadline, throttling.
    pub dl: deadline::DlEntity,
    /// EEVDF's request (Linux 6.6+; unused under CFS): virtual deadline, slice, kept lag.
    pub eevdf: eevdf::Request,
}

impl SchedEntity {
    pub fn is_rt(&self) -> bool {
        self.class.rt_priority().is_some()
    }
    /// SCHED_DEADLINE.
    pub fn is_dl(&self) -> bool {
        self.class.dl().is_some()
    }
    /// A CFS task (SCHED_OTHER or SCHED_IDLE).
    pub fn is_fair(&self) -> bool {
        self.class.is_fair()
    }
    /// Its scheduling class.
    pub fn class_kind(&self) -> ClassKind {
        if self.is_dl() {
            ClassKind::Deadline
        } else if self.is_rt() {
            ClassKind::Rt
        } else {
            ClassKind::Fair
        }
    }
    /// The kernel's `prio`, as traces print it.
    pub fn kernel_prio(&self) -> i32 {
        self.class.kernel_prio(self.nice)
    }
}

/// The scheduling classes (`struct sched_class`), in the order they are picked from, last first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    Fair,
    Rt,
    Deadline,
}

/// What a placement policy may look at.
#[derive(Debug, Clone, Copy)]
pub struct SchedView<'a> {
    pub now_us: f64,
    /// The CPU the hook runs on (`smp_processor_id()`): the waker's for a wake-up (the
    /// sleeper's own CPU when its timer fired), the parent's for a fork, else the CPU asked
    /// about.
    pub this_cpu: usize,
    /// Per CPU: its run queue.
    pub rqs: &'a [RunQueue],
    /// Per CPU: the hardware cluster it runs on now (logical CPU -> core -> cluster).
    pub cluster_of: &'a [usize],
    /// Per CPU: its capacity at its top OPP, 0..=1024.
    pub capacity: &'a [u32],
    /// Per CPU: the capacity a capped clock takes from it (Linux 6.10+'s cpufreq pressure,
    /// `cpufreq_get_pressure`, through `get_actual_cpu_capacity`); zero but on Linux 6.12 runs
    /// with `HW_PRESSURE` (3.x and 5.10 placements do not model thermal pressure).
    pub pressure: &'a [u32],
    /// Per thread.
    pub tasks: &'a [SchedEntity],
    /// The task groups and each thread's (`group`).
    pub groups: &'a group::Groups,
}

impl SchedView<'_> {
    pub fn ncpus(&self) -> usize {
        self.rqs.len()
    }
    /// Now on PELT's clock, ns (the engine's rounding of `now_us`).
    pub fn now_ns(&self) -> u64 {
        (self.now_us * 1000.0).round() as u64
    }
}

/// The kernel a placement policy models, where the CFS rules it shares with the others differ
/// (task groups' shares and turns: `group`; the fair class itself: [`eevdf`] from 6.6 on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Linux 3.10: the ODROID-XU3's and big.LITTLE MP's kernels (`smp`, `hmp`, `pinned`).
    V3_10,
    /// Linux 5.10 (`eas`).
    V5_10,
    /// Linux 6.12 (`eevdf`, `eas-eevdf`): the fair class is EEVDF ([`eevdf`]); where the rest
    /// of CFS is concerned (shares, uclamp, SCHED_DEADLINE, menu) it is 5.10's.
    V6_12,
}

impl Kernel {
    /// The fair class picks by EEVDF (Linux 6.6+) rather than by vruntime (CFS).
    pub fn eevdf(self) -> bool {
        self == Kernel::V6_12
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

    /// Whether the 3.x load sums behind `load_avg_ratio` are scaled by the CPU's current over
    /// maximum frequency (LSK-MP 0019, `/sys/kernel/hmp/frequency_invariant_load_scale`, on by
    /// default); today's `util_avg` is frequency-invariant either way.
    fn frequency_invariant_load(&self) -> bool {
        true
    }

    /// Whether the policy places by the CPUs' different capacities (HMP's big and LITTLE domains,
    /// EAS's energy model): it cannot run under a switcher, whose logical CPUs are all alike.
    fn reads_asymmetry(&self) -> bool {
        false
    }

    /// Whether the RT class's placement asks if a CPU's capacity fits the task (Linux 5.10 on
    /// asymmetric CPU capacities, `rt_task_fits_capacity`; the 3.10 kernels have no such test).
    fn rt_capacity_fitness(&self) -> bool {
        false
    }

    /// Whether a CPU over its RT runtime borrows from the others (RT_RUNTIME_SHARE: on in the
    /// 3.10 kernels, off in 5.10).
    fn rt_runtime_share(&self) -> bool {
        true
    }

    /// The kernel whose CFS group scheduling rules apply (`group`).
    fn kernel(&self) -> Kernel {
        Kernel::V3_10
    }

    /// The EEVDF scheduler features in effect (the placements of a 6.x kernel; `None` for CFS).
    fn eevdf_features(&self) -> Option<eevdf::Features> {
        None
    }

    /// The root domain's over-utilisation state now (EAS's tipping point), or `None` for a
    /// policy without one. The engine asks after each placement decision and traces changes
    /// (`sched_overutilized`).
    fn overutilized(&self) -> Option<bool> {
        None
    }
}

/// The placement policies, by the names users type (each one's entry: [`registry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    Pinned,
    Smp,
    Hmp,
    Eas,
    Eevdf,
    EasEevdf,
}

/// One placement policy as its file declares it and [`registry`] lists it (as a governor's
/// `GovernorDescriptor`).
pub struct PlacementDescriptor {
    pub policy: SchedPolicy,
    /// The name users type (`pinned`, `smp`, ...); also [`Placement::name`].
    pub name: &'static str,
    /// What the policy does, one line.
    pub summary: &'static str,
    /// Its own tunables, with their sysfs names (the defaults a platform may override are
    /// marked as such); the registry adds the RT class's sysctls, which every policy takes.
    pub tunables: fn() -> Vec<TunableInfo>,
    pub build: PlacementBuildFn,
}

/// A placement policy's constructor: an instance for a run on the platform, with the given
/// tunables (already checked against its declared ones) over the defaults.
pub type PlacementBuildFn = fn(&Platform, &Values) -> Result<Box<dyn Placement>, String>;

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// A view of `rqs` with every CPU on cluster 0 at capacity 1024, at time 0.
    pub struct Fixture {
        pub now_us: f64,
        pub this_cpu: usize,
        pub rqs: Vec<RunQueue>,
        pub cluster_of: Vec<usize>,
        pub capacity: Vec<u32>,
        pub pressure: Vec<u32>,
        pub tasks: Vec<SchedEntity>,
        pub groups: group::Groups,
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
                    exec_start_us: f64::NEG_INFINITY,
                    kernel: false,
                    avg: SchedAvg::default(),
                    uclamp_req: Default::default(),
                    uclamp: Default::default(),
                    uclamp_counted: None,
                    util_est: Default::default(),
                    util_est_counted: None,
                    class: Default::default(),
                    rt_arrival: 0,
                    rr_slice_left_ticks: 0,
                    dl: Default::default(),
                    eevdf: Default::default(),
                })
                .collect();
            Fixture {
                now_us: 0.0,
                this_cpu: 0,
                rqs: (0..ncpus).map(|_| RunQueue::new(true)).collect(),
                cluster_of: vec![0; ncpus],
                capacity: vec![1024; ncpus],
                pressure: vec![0; ncpus],
                tasks,
                groups: group::Groups::default(),
            }
        }
        /// `cpu` runs `n` more nice-0 tasks pinned there, new (fully loaded, LSK-MP 0027) and
        /// cache-cold, appended to `tasks`.
        pub fn busy(&mut self, cpu: usize, n: usize) {
            for _ in 0..n {
                self.tasks.push(SchedEntity {
                    allowed: CpuMask::of([cpu]),
                    cpu,
                    nice: 0,
                    weight: cfs::NICE_0_WEIGHT,
                    vruntime: 0.0,
                    exec_start_us: f64::NEG_INFINITY,
                    kernel: false,
                    avg: SchedAvg::new_task(0),
                    uclamp_req: Default::default(),
                    uclamp: Default::default(),
                    uclamp_counted: None,
                    util_est: Default::default(),
                    util_est_counted: None,
                    class: Default::default(),
                    rt_arrival: 0,
                    rr_slice_left_ticks: 0,
                    dl: Default::default(),
                    eevdf: Default::default(),
                });
                self.put(self.tasks.len() - 1, cpu);
            }
        }
        /// Task `t` joins `cpu`'s run queue (and its group's), running if nothing runs there,
        /// else waiting.
        pub fn put(&mut self, t: usize, cpu: usize) {
            self.tasks[t].cpu = cpu;
            let now = group::Now { us: self.now_us, ns: 0, scale: pelt::State::IDLE };
            let tunables = cfs::Tunables::for_cpus(self.rqs.len());
            let rq = &mut self.rqs[cpu];
            self.groups.join(cpu, t, rq, &self.tasks, &now, &tunables);
            if rq.curr.is_none() {
                rq.curr = Some(t);
                self.groups.set_next(cpu, t, &now);
            } else {
                self.groups.insert_task(cpu, t, rq, &self.tasks);
            }
        }
        /// Task groups at `paths` (with their `cpu.shares`, parents first) and the group of
        /// each thread `members` names; before any `put`.
        pub fn groups(&mut self, kernel: Kernel, paths: &[(&str, u64)], members: &[(usize, &str)]) {
            let specs: Vec<(String, u64)> = paths.iter().map(|&(p, s)| (p.to_string(), s)).collect();
            self.groups = group::Groups::new(self.rqs.len(), kernel, &specs, self.tasks.len());
            for &(t, path) in members {
                let g = self.groups.find(path).expect("a listed path");
                self.groups.assign(t, g);
            }
        }
        pub fn view(&self) -> SchedView<'_> {
            SchedView {
                now_us: self.now_us,
                this_cpu: self.this_cpu,
                rqs: &self.rqs,
                cluster_of: &self.cluster_of,
                capacity: &self.capacity,
                pressure: &self.pressure,
                tasks: &self.tasks,
                groups: &self.groups,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        let m = CpuMask::of([1, 4, 5]);
        assert!(m.contains(4) && !m.contains(0) && !m.contains(200));
        assert_eq!((m.count(), m.nth(1), m.first()), (3, Some(4), Some(1)));
        let mut n = m;
        n.retain(|c| c != 4);
        assert_eq!(n.iter().collect::<Vec<_>>(), [1, 5]);
        assert_eq!(m.iter_from(4).collect::<Vec<_>>(), [4, 5, 1]);
        assert_eq!(m.iter_from(2).collect::<Vec<_>>(), [4, 5, 1]);
        assert_eq!(m.iter_from(63).collect::<Vec<_>>(), [1, 4, 5]);
        assert_eq!(
            (m.and(CpuMask::of([4, 6])), m.without(4), CpuMask::EMPTY.with(3)),
            (CpuMask::of([4]), n, CpuMask::of([3]))
        );
        assert!(m.intersects(CpuMask::of([5])) && !m.intersects(CpuMask::of([0])));
    }
}
