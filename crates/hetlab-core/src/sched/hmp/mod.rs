//! `hmp`: ARM's big.LITTLE MP scheduler (`CONFIG_SCHED_HMP`) as the Linaro Stable Kernel patch
//! set has it (LSK-MP 15.07, gatieme/big.LITTLE @edcffead, patches 0001-0081 by Rasmussen,
//! Redpath, Eggemann et al., 2012-2014) and the vendor kernels built on it (Hardkernel
//! ODROID-XU3 3.10.9, voodik/android_kernel_hardkernel_odroidxu3_beta @41ed8ac5,
//! kernel/sched/fair.c), on top of vanilla CFS (`select`, `balance`); seed 003 is its 2012
//! prototype. Facts and line numbers: shared/reference/sched-rcu-platforms.md §2.
//!
//! - Domains: one MC domain per cluster and no load balancing between clusters; the clusters,
//!   fastest first, are the HMP domains (`hmp_domains`), unless `fast_cpu_mask` and
//!   `slow_cpu_mask` (`CONFIG_HMP_{FAST,SLOW}_CPU_MASK`) split the CPUs otherwise, as seed
//!   003's emulated big.LITTLE on one A9 cluster did (both its domain levels follow them).
//! - Load: a task's 3.x `load_avg_ratio` (time runnable, running *or waiting*, over wall time,
//!   0..1023; frequency-invariant by default, `pelt`). A CPU counts as loaded if any task on
//!   it has load, idle otherwise ("all load is max load", 0035), ties going to the CPU least
//!   recently disturbed by an HMP migration (0033).
//! - Wake-up (`select_task_rq_fair`): CFS chooses first; then the task goes up if its load is
//!   at least `up_threshold` and the faster domain has an idle CPU, down (to the least loaded
//!   slower CPU) if below `down_threshold`, else it stays in its previous HMP domain.
//! - Fork: a user task goes to the least loaded CPU of the fastest domain (0027: new tasks
//!   start fully loaded, `SchedAvg::new_task`; kernel threads get no boost, 0079).
//! - Forced migration, from the rebalance softirq of a tick (raised when a CPU's periodic
//!   balance is due or its running task's load exceeds `up_threshold`; once a jiffy, the
//!   global trylock of `hmp_force_up_migration`): on every CPU the heaviest of the running
//!   task and the first five queued (0031) goes up as at wake-up, a running one pushed by the
//!   CPU stopper; else the lightest of the first five queued is offloaded to an idle slower
//!   CPU if its own domain has no idle CPU, it shares the CPU and it is starving (running at
//!   most 768/1024 of its runnable time, 0021).
//! - Idle pull (0037): a CPU of a faster domain that finds nothing to pull in its own domain
//!   when going idle pulls the heaviest eligible task running (or among the first five queued)
//!   on a slower CPU.
//! - The same task migrates in the same direction at most once per 4096·1024 ns = 4.19 ms
//!   (`hmp_next_up_threshold`/`hmp_next_down_threshold`, 0011).
//! - Packing (0046/0072): a light task (load ≤ 90 %) waking on LITTLE goes to the first LITTLE
//!   CPU whose load plus its own stays within `packing_limit`; no idle balancing in the LITTLE
//!   domain then (`hmp_packing_ilb_needed` looks for an idle CPU loaded above the limit).
//! - Priority filter (`CONFIG_SCHED_HMP_PRIO_FILTER`, 0005/0014): a task at or above nice
//!   `prio_filter_val` never goes up and goes down whenever it may. LSK applies it to wake-up
//!   and forced migration only; here it also holds for fork and idle pull, so that it means
//!   what its Kconfig help says ("will always be on low-power cpus") and what seed 003's first
//!   stab did (without it LSK's fork boost and idle pull put such a task on big until it
//!   sleeps).
//!
//! Left out: `load_avg_period_ms` (`CONFIG_HMP_VARIABLE_SCALE`: 32, the default, is no
//! scaling); Samsung's `boost`/`boostpulse`/semiboost; 0075's variant that forces up-migration
//! as an idle pull by the target with keep-alive timers (the XU3 kernel pushes with the
//! stopper); RT task placement (no RT tasks); LSK's forced pushes of a waiting task through the
//! stopper (0049 moves it directly; here it moves directly).

use super::balance::{Balancer, IdleBalance};
use super::domains::{Domains, Layout, SD_MC_INIT};
use super::select::select_task_rq_fair;
use super::{CpuMask, Migration, Placement, PlacementDescriptor, SchedPolicy, SchedView, WakeKind};
use crate::governor::tunables::{TunableDefault, TunableInfo, Values};
use crate::platform::Platform;

/// `hmp_next_up_threshold`/`hmp_next_down_threshold`: the delay between two migrations of a
/// task in the same direction, in units of 1024 ns ("1024 ~= 1 ms", LSK-MP 0011).
const NEXT_MIGRATION_DELAY: u64 = 4096;
/// `hmp_max_tasks`: queued tasks looked at besides the running one (LSK-MP 0031).
const MAX_TASKS: usize = 5;
/// A task starving for CPU runs at most this share of its runnable time, ·1024 (0021).
const STARVATION: u64 = 768;
/// Packing leaves out tasks above 90 % load (`(NICE_0_LOAD * 90) / 100`, 0046).
const PACKING_MAX_TASK_LOAD: u64 = 1024 * 90 / 100;
/// What `hmp_domain_min_load` counts a CPU with any load as (0035).
const LOADED: u64 = 1023;

/// The knobs, with their sysfs names under /sys/kernel/hmp/ (the priority filter is a Kconfig
/// option, no sysfs file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    pub up_threshold: u64,
    pub down_threshold: u64,
    pub frequency_invariant_load_scale: bool,
    pub packing_enable: bool,
    pub packing_limit: u64,
    pub prio_filter: bool,
    pub prio_filter_val: i32,
    /// `CONFIG_HMP_FAST_CPU_MASK`/`CONFIG_HMP_SLOW_CPU_MASK` as CPU bitmasks (0: the HMP
    /// domains are the clusters, by capacity, as from the device tree).
    pub fast_cpu_mask: u64,
    pub slow_cpu_mask: u64,
}

/// LSK-MP 15.07's defaults: 700/512 (0040, d73babce, 2013-10-11), frequency invariance on
/// (0019), packing on with limit 650 (0072), the priority filter off (0023 reverted 0012's
/// default) at nice 5 (0005's Kconfig default).
pub const LSK_DEFAULTS: Knobs = Knobs {
    up_threshold: 700,
    down_threshold: 512,
    frequency_invariant_load_scale: true,
    packing_enable: true,
    packing_limit: 650,
    prio_filter: false,
    prio_filter_val: 5,
    fast_cpu_mask: 0,
    slow_cpu_mask: 0,
};

/// Largest CPU bitmask a knob holds exactly (f64 integers).
const MAX_MASK: f64 = ((1u64 << 53) - 1) as f64;

/// The knobs as declared: sysfs name, LSK default, range.
pub fn tunables() -> Vec<TunableInfo> {
    let k = LSK_DEFAULTS;
    let knob = |name, default: f64, unit, help, min, max| TunableInfo {
        name,
        default: TunableDefault::Value(default),
        unit,
        help,
        min,
        max,
    };
    vec![
        knob(
            "up_threshold",
            k.up_threshold as f64,
            "",
            "load_avg_ratio (0..1023) at or above which a task goes to a faster cluster (platform [hmp] may set the \
             default; LSK 700)",
            0.0,
            1024.0,
        ),
        knob(
            "down_threshold",
            k.down_threshold as f64,
            "",
            "load_avg_ratio below which a waking task goes to a slower cluster (platform [hmp] may set the default; \
             LSK 512)",
            0.0,
            1024.0,
        ),
        knob(
            "frequency_invariant_load_scale",
            1.0,
            "",
            "1: load accrues at the CPU's current/max frequency (1024 under performance and powersave); 0: at 1024",
            0.0,
            1.0,
        ),
        knob(
            "packing_enable",
            1.0,
            "",
            "1: light tasks waking on LITTLE fill CPUs in order up to packing_limit",
            0.0,
            1.0,
        ),
        knob(
            "packing_limit",
            k.packing_limit as f64,
            "",
            "summed load_avg_ratio up to which packing fills a LITTLE CPU",
            0.0,
            f64::from(u32::MAX),
        ),
        knob(
            "prio_filter",
            0.0,
            "",
            "CONFIG_SCHED_HMP_PRIO_FILTER: 1: tasks at or above nice prio_filter_val never go up (seed 003's first \
             stab: prio_filter_val=1, only nice <= 0 goes up)",
            0.0,
            1.0,
        ),
        knob(
            "prio_filter_val",
            k.prio_filter_val as f64,
            "",
            "CONFIG_SCHED_HMP_PRIO_FILTER_VAL: the nice value from which the filter holds",
            0.0,
            19.0,
        ),
        knob(
            "fast_cpu_mask",
            0.0,
            "",
            "CONFIG_HMP_FAST_CPU_MASK as a bitmask (5: CPUs 0 and 2), with slow_cpu_mask: the two HMP domains and \
             their balancing domains (seed 003's emulation); 0: the clusters, by capacity",
            0.0,
            MAX_MASK,
        ),
        knob("slow_cpu_mask", 0.0, "", "CONFIG_HMP_SLOW_CPU_MASK as a bitmask (10: CPUs 1 and 3)", 0.0, MAX_MASK),
    ]
}

impl Knobs {
    /// LSK's defaults, then the platform's `[hmp]` settings (its kernel's), then `given`.
    pub fn resolve(platform: &Platform, given: &Values) -> Result<Knobs, String> {
        let from_platform: Vec<(String, f64)> = platform.hmp.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let board = Values::check("hmp", &tunables(), &from_platform)
            .map_err(|e| format!("platform '{}' [hmp]: {e}", platform.name))?;
        let get = |name: &str| given.get(name).or_else(|| board.get(name));
        let d = LSK_DEFAULTS;
        Knobs {
            up_threshold: get("up_threshold").unwrap_or(d.up_threshold),
            down_threshold: get("down_threshold").unwrap_or(d.down_threshold),
            frequency_invariant_load_scale: get("frequency_invariant_load_scale")
                .map_or(d.frequency_invariant_load_scale, |v| v == 1),
            packing_enable: get("packing_enable").map_or(d.packing_enable, |v| v == 1),
            packing_limit: get("packing_limit").unwrap_or(d.packing_limit),
            prio_filter: get("prio_filter").map_or(d.prio_filter, |v| v == 1),
            prio_filter_val: get("prio_filter_val").map_or(d.prio_filter_val, |v| v as i32),
            fast_cpu_mask: get("fast_cpu_mask").unwrap_or(d.fast_cpu_mask),
            slow_cpu_mask: get("slow_cpu_mask").unwrap_or(d.slow_cpu_mask),
        }
        .checked(platform.ncpus())
    }

    /// The CPU masks, if given, split the platform's CPUs in two.
    fn checked(self, ncpus: usize) -> Result<Knobs, String> {
        let (fast, slow) = (self.fast_cpu_mask, self.slow_cpu_mask);
        if fast == 0 && slow == 0 {
            return Ok(self);
        }
        let all = if ncpus >= 64 { u64::MAX } else { (1u64 << ncpus) - 1 };
        if fast == 0 || slow == 0 || fast & slow != 0 || fast | slow != all {
            return Err(format!(
                "hmp: fast_cpu_mask {fast:#x} and slow_cpu_mask {slow:#x} must split the platform's {ncpus} CPUs in two \
                 (e.g. fast_cpu_mask=5 slow_cpu_mask=10 for CPUs 0,2 fast and 1,3 slow), or both be 0"
            ));
        }
        Ok(self)
    }
}

/// The HMP domains of a run.
#[derive(Debug, Clone)]
struct Topology {
    domains: Domains,
    /// HMP domains, fastest first: their online CPUs.
    hmp: Vec<CpuMask>,
    /// Per CPU: its HMP domain.
    hmp_of: Vec<usize>,
}

impl Topology {
    fn build(view: &SchedView, knobs: &Knobs) -> Topology {
        if knobs.fast_cpu_mask != 0 {
            // CONFIG_HMP_{FAST,SLOW}_CPU_MASK: two HMP domains, balancing within each
            let parts = [CpuMask::from_bits(knobs.fast_cpu_mask), CpuMask::from_bits(knobs.slow_cpu_mask)];
            let domains = Domains::build_partition(view, &parts);
            let hmp: Vec<CpuMask> = parts.iter().map(|p| p.and(domains.online())).collect();
            let hmp_of = (0..view.ncpus()).map(|cpu| usize::from(!parts[0].contains(cpu))).collect();
            return Topology { domains, hmp, hmp_of };
        }
        let domains = Domains::build(Layout::PerCluster, view);
        let mut clusters: Vec<(u32, usize, CpuMask)> = Vec::new();
        for cpu in domains.online().iter() {
            let c = view.cluster_of[cpu];
            match clusters.iter_mut().find(|(_, cluster, _)| *cluster == c) {
                Some(entry) => entry.2 = entry.2.with(cpu),
                None => clusters.push((view.capacity[cpu], c, CpuMask::of([cpu]))),
            }
        }
        clusters.sort_by_key(|&(capacity, cluster, _)| (std::cmp::Reverse(capacity), cluster));
        let mut hmp_of = vec![0; view.ncpus()];
        for (i, (_, _, mask)) in clusters.iter().enumerate() {
            for cpu in mask.iter() {
                hmp_of[cpu] = i;
            }
        }
        Topology { domains, hmp: clusters.into_iter().map(|(_, _, mask)| mask).collect(), hmp_of }
    }

    fn is_fastest(&self, cpu: usize) -> bool {
        self.hmp_of[cpu] == 0
    }
    fn is_slowest(&self, cpu: usize) -> bool {
        self.hmp_of[cpu] == self.hmp.len() - 1
    }
    fn own(&self, cpu: usize) -> CpuMask {
        self.hmp[self.hmp_of[cpu]]
    }
    /// The next faster domain (the own one for the fastest).
    fn faster(&self, cpu: usize) -> CpuMask {
        self.hmp[self.hmp_of[cpu].saturating_sub(1)]
    }
    /// The next slower domain (the own one for the slowest).
    fn slower(&self, cpu: usize) -> CpuMask {
        self.hmp[(self.hmp_of[cpu] + 1).min(self.hmp.len() - 1)]
    }
}

/// When tasks and CPUs last took part in an HMP migration, ns; 0: never
/// (`se->avg.hmp_last_{up,down}_migration`, `rq->avg.hmp_last_{up,down}_migration`).
#[derive(Debug, Clone, Default)]
struct Stamps {
    task_up: Vec<u64>,
    task_down: Vec<u64>,
    cpu_up: Vec<u64>,
    cpu_down: Vec<u64>,
}

impl Stamps {
    fn fit(&mut self, ntasks: usize, ncpus: usize) {
        for (v, n) in [(&mut self.task_up, ntasks), (&mut self.task_down, ntasks)] {
            v.resize(n, 0);
        }
        for v in [&mut self.cpu_up, &mut self.cpu_down] {
            v.resize(ncpus, 0);
        }
    }
    /// `hmp_next_up_delay`: `t` moved up to `cpu` at `now`.
    fn up(&mut self, t: usize, cpu: usize, now: u64) {
        (self.task_up[t], self.task_down[t], self.cpu_up[cpu], self.cpu_down[cpu]) = (now, 0, now, 0);
    }
    /// `hmp_next_down_delay`.
    fn down(&mut self, t: usize, cpu: usize, now: u64) {
        (self.task_down[t], self.task_up[t], self.cpu_down[cpu], self.cpu_up[cpu]) = (now, 0, now, 0);
    }
    /// The CPU's last HMP migration, either direction (the min-load tie-break).
    fn cpu_last(&self, cpu: usize) -> u64 {
        if self.cpu_up[cpu] != 0 {
            self.cpu_up[cpu]
        } else {
            self.cpu_down[cpu]
        }
    }
}

/// Whether `stamp` is less than the migration delay before `now`.
fn too_soon(stamp: u64, now: u64) -> bool {
    stamp != 0 && now.saturating_sub(stamp) >> 10 < NEXT_MIGRATION_DELAY
}

/// The decisions, over one view (read only).
struct Ctx<'v, 'a> {
    view: &'v SchedView<'a>,
    topo: &'v Topology,
    knobs: &'v Knobs,
    stamps: &'v Stamps,
    now: u64,
}

impl Ctx<'_, '_> {
    fn ratio(&self, t: usize) -> u64 {
        self.view.tasks[t].avg.load_avg_ratio()
    }

    /// Held back by the priority filter.
    fn filtered(&self, t: usize) -> bool {
        self.knobs.prio_filter && self.view.tasks[t].nice >= self.knobs.prio_filter_val
    }

    /// The run queue's `load_avg_ratio` (the sum of its tasks'), summed only until it exceeds
    /// `cap`.
    fn rq_ratio(&self, cpu: usize, cap: u64) -> u64 {
        let rq = &self.view.rqs[cpu];
        let mut sum = 0;
        for t in rq.cfs_curr().into_iter().chain(rq.queue.iter()) {
            sum += self.ratio(t);
            if sum > cap {
                break;
            }
        }
        sum
    }

    /// `hmp_domain_min_load`: among `domain`'s CPUs in `affinity`, the least loaded (0: idle,
    /// 1023: any load; `claimed` CPUs get a task in this pass), ties to the least recently
    /// disturbed, then the first; `None` if no CPU qualifies.
    fn min_load(&self, domain: CpuMask, affinity: CpuMask, claimed: CpuMask) -> Option<(u64, usize)> {
        let mut best: Option<(u64, u64, usize)> = None;
        for cpu in domain.and(affinity).iter() {
            let load = if claimed.contains(cpu) || self.rq_ratio(cpu, 0) > 0 { LOADED } else { 0 };
            let stamp = self.stamps.cpu_last(cpu);
            if best.is_none_or(|(l, s, _)| load < l || (load == l && stamp < s)) {
                best = Some((load, stamp, cpu));
            }
        }
        best.map(|(load, _, cpu)| (load, cpu))
    }

    /// `hmp_up_migration`: the idle faster CPU `t`, on `cpu`, should move up to.
    fn up_migration(&self, cpu: usize, t: usize, claimed: CpuMask) -> Option<usize> {
        if self.topo.is_fastest(cpu) || self.filtered(t) || self.ratio(t) < self.knobs.up_threshold {
            return None;
        }
        if too_soon(self.stamps.task_up[t], self.now) {
            return None;
        }
        match self.min_load(self.topo.faster(cpu), self.view.tasks[t].allowed, claimed) {
            Some((0, target)) => Some(target),
            _ => None,
        }
    }

    /// `hmp_down_migration`: whether `t`, waking from `cpu`, should go down (on the slowest
    /// domain: whether packing may place it).
    fn down_migration(&self, cpu: usize, t: usize) -> bool {
        if self.topo.is_slowest(cpu) {
            return self.knobs.packing_enable;
        }
        let may_go = self.topo.slower(cpu).intersects(self.view.tasks[t].allowed);
        if self.filtered(t) && may_go {
            return true;
        }
        !too_soon(self.stamps.task_down[t], self.now) && may_go && self.ratio(t) < self.knobs.down_threshold
    }

    /// `hmp_select_faster_cpu`: the least loaded CPU of the faster domain (of its own on the
    /// fastest) that `t` may use.
    fn faster_cpu(&self, cpu: usize, t: usize) -> Option<usize> {
        let domain = if self.topo.is_fastest(cpu) { self.topo.own(cpu) } else { self.topo.faster(cpu) };
        self.min_load(domain, self.view.tasks[t].allowed, CpuMask::EMPTY).map(|(_, c)| c)
    }

    /// `hmp_select_slower_cpu`.
    fn slower_cpu(&self, cpu: usize, t: usize) -> Option<usize> {
        let domain = if self.topo.is_slowest(cpu) { self.topo.own(cpu) } else { self.topo.slower(cpu) };
        self.min_load(domain, self.view.tasks[t].allowed, CpuMask::EMPTY).map(|(_, c)| c)
    }

    /// `hmp_best_little_cpu`: with packing, the first slower CPU with room for `t`, else `cpu`.
    fn best_little_cpu(&self, cpu: usize, t: usize) -> Option<usize> {
        let ratio = self.ratio(t);
        if !self.knobs.packing_enable || ratio > PACKING_MAX_TASK_LOAD {
            return self.slower_cpu(cpu, t);
        }
        let domain = if self.topo.is_slowest(cpu) { self.topo.own(cpu) } else { self.topo.slower(cpu) };
        let limit = self.knobs.packing_limit;
        let room = domain
            .and(self.view.tasks[t].allowed)
            .iter()
            .find(|&c| self.rq_ratio(c, limit.saturating_sub(ratio)) + ratio <= limit);
        Some(room.unwrap_or(cpu))
    }

    /// The first `MAX_TASKS` tasks waiting on `cpu`, in vruntime order (`__pick_first_entity`,
    /// `__pick_next_entity`).
    fn first_queued(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        self.view.rqs[cpu].queue.iter().take(MAX_TASKS)
    }

    /// `hmp_get_heaviest_task(curr, 1)`: the running task, or a heavier one of the first
    /// queued that may run on the faster domain.
    fn heaviest(&self, cpu: usize, curr: usize) -> usize {
        if self.topo.is_fastest(cpu) {
            return curr;
        }
        let target = self.topo.faster(cpu);
        let mut best = (curr, self.ratio(curr));
        for t in self.first_queued(cpu) {
            let r = self.ratio(t);
            if r > best.1 && self.view.tasks[t].allowed.intersects(target) {
                best = (t, r);
            }
        }
        best.0
    }

    /// `hmp_get_lightest_task(curr, 1)`: the lightest of the first queued that may run on the
    /// slower domain, else the running task.
    fn lightest(&self, cpu: usize, curr: usize) -> usize {
        if self.topo.is_slowest(cpu) {
            return curr;
        }
        let target = self.topo.slower(cpu);
        let mut best: Option<(usize, u64)> = None;
        for t in self.first_queued(cpu) {
            let r = self.ratio(t);
            if best.is_none_or(|(_, min)| r < min) && self.view.tasks[t].allowed.intersects(target) {
                best = Some((t, r));
            }
        }
        best.map_or(curr, |(t, _)| t)
    }

    /// `hmp_offload_down`: the idle slower CPU `t` should be offloaded to.
    fn offload_down(&self, cpu: usize, t: usize, claimed: CpuMask) -> Option<usize> {
        if self.topo.is_slowest(cpu) {
            return None;
        }
        // an idle CPU in the own domain: the CFS balancer will use it
        if self.min_load(self.topo.own(cpu), self.topo.domains.online(), claimed).is_some_and(|(l, _)| l == 0) {
            return None;
        }
        if self.view.rqs[cpu].nr_running() < 2 || self.view.tasks[t].avg.usage_ratio() > STARVATION {
            return None;
        }
        match self.min_load(self.topo.slower(cpu), self.view.tasks[t].allowed, claimed) {
            Some((0, target)) => Some(target),
            _ => None,
        }
    }
}

/// `hmp` as the registry lists it.
pub const DESCRIPTOR: PlacementDescriptor = PlacementDescriptor {
    policy: SchedPolicy::Hmp,
    name: "hmp",
    summary: "ARM big.LITTLE MP (LSK 3.10): per-cluster domains, up/down migration by tracked load",
    tunables,
    build,
};

fn build(platform: &Platform, given: &Values) -> Result<Box<dyn Placement>, String> {
    Ok(Box::new(Hmp::new(platform, given)?))
}

/// The `hmp` placement policy.
pub struct Hmp {
    knobs: Knobs,
    topo: Option<Topology>,
    balancer: Balancer,
    stamps: Stamps,
    /// The jiffy of the last forced-migration scan.
    last_scan: Option<u64>,
    tick_us: f64,
}

impl Hmp {
    /// The policy on `platform` with the knobs `given` over the platform's and LSK's defaults.
    pub fn new(platform: &Platform, given: &Values) -> Result<Hmp, String> {
        let tick_us = platform.tick_us() as f64;
        Ok(Hmp {
            knobs: Knobs::resolve(platform, given)?,
            topo: None,
            balancer: Balancer::new(SD_MC_INIT, tick_us),
            stamps: Stamps::default(),
            last_scan: None,
            tick_us,
        })
    }

    pub fn knobs(&self) -> &Knobs {
        &self.knobs
    }

    /// The topology (built from the first view) and stamps sized for `view`.
    fn prepare(&mut self, view: &SchedView) {
        if self.topo.is_none() {
            self.topo = Some(Topology::build(view, &self.knobs));
        }
        self.stamps.fit(view.tasks.len(), view.ncpus());
    }

    fn now_ns(view: &SchedView) -> u64 {
        // never 0, which means "never migrated"
        view.now_ns().max(1)
    }

    /// `hmp_force_up_migration`: every CPU's up-migration or offload candidate. Both need an
    /// idle CPU in the other domain, so a CPU's tasks are looked at only if there is one: with
    /// every CPU busy the pass costs one look per CPU, whatever the number of tasks.
    fn force_migrations(&mut self, view: &SchedView, out: &mut Vec<Migration>) {
        let now = Self::now_ns(view);
        let topo = self.topo.as_ref().expect("prepared");
        let mut claimed = CpuMask::EMPTY;
        for cpu in topo.domains.online().iter() {
            let Some(curr) = view.rqs[cpu].cfs_curr() else { continue };
            let ctx = Ctx { view, topo, knobs: &self.knobs, stamps: &self.stamps, now };
            let idle = |claimed: CpuMask, domain: CpuMask| {
                ctx.min_load(domain, topo.domains.online(), claimed).is_some_and(|(load, _)| load == 0)
            };
            if !topo.is_fastest(cpu) && idle(claimed, topo.faster(cpu)) {
                let heaviest = ctx.heaviest(cpu, curr);
                if let Some(target) = ctx.up_migration(cpu, heaviest, claimed) {
                    out.push(Migration { thread: heaviest, to_cpu: target });
                    claimed = claimed.with(target);
                    self.stamps.up(heaviest, target, now);
                    continue;
                }
            }
            if !topo.is_slowest(cpu) && view.rqs[cpu].nr_running() >= 2 && idle(claimed, topo.slower(cpu)) {
                let lightest = ctx.lightest(cpu, curr);
                if let Some(target) = ctx.offload_down(cpu, lightest, claimed) {
                    out.push(Migration { thread: lightest, to_cpu: target });
                    claimed = claimed.with(target);
                    self.stamps.down(lightest, target, now);
                }
            }
        }
    }

    /// `hmp_idle_pull`: the heaviest task eligible to go up from the next slower domain to
    /// `this`, running or among the first queued there.
    fn idle_pull(&mut self, view: &SchedView, this: usize) -> Option<Migration> {
        let now = Self::now_ns(view);
        let topo = self.topo.as_ref().expect("prepared");
        if topo.is_slowest(this) {
            return None;
        }
        let ctx = Ctx { view, topo, knobs: &self.knobs, stamps: &self.stamps, now };
        let mut best: Option<(usize, u64)> = None;
        for cpu in topo.slower(this).iter() {
            let Some(curr) = view.rqs[cpu].cfs_curr() else { continue };
            let t = ctx.heaviest(cpu, curr);
            let ratio = ctx.ratio(t);
            let eligible = ratio >= self.knobs.up_threshold && !ctx.filtered(t);
            // 0076: only a task that may run here
            if eligible && view.tasks[t].allowed.contains(this) && best.is_none_or(|(_, r)| ratio > r) {
                best = Some((t, ratio));
            }
        }
        let (thread, _) = best?;
        self.stamps.up(thread, this, now);
        Some(Migration { thread, to_cpu: this })
    }
}

impl Placement for Hmp {
    fn name(&self) -> &'static str {
        DESCRIPTOR.name
    }

    fn select_cpu(&mut self, view: &SchedView, thread: usize, kind: WakeKind) -> usize {
        self.prepare(view);
        let now = Self::now_ns(view);
        let topo = self.topo.as_ref().expect("prepared");
        let task = &view.tasks[thread];
        let prev = task.cpu;
        if task.allowed.count() == 1 {
            return prev;
        }
        let ctx = Ctx { view, topo, knobs: &self.knobs, stamps: &self.stamps, now };
        // fork boost: a new user task starts on the fastest domain
        if kind == WakeKind::Fork && !task.kernel && !ctx.filtered(thread) {
            if let Some(cpu) = ctx.faster_cpu(prev, thread) {
                self.stamps.up(thread, cpu, now);
                return cpu;
            }
        }
        let mut cpu = select_task_rq_fair(view, &topo.domains, &SD_MC_INIT, thread, kind);
        let mut decided = None;
        if let Some(target) = ctx.up_migration(prev, thread, CpuMask::EMPTY) {
            decided = Some((target, true));
        } else if ctx.down_migration(prev, thread) {
            if let Some(target) = ctx.best_little_cpu(prev, thread) {
                if target != prev {
                    decided = Some((target, false));
                }
                cpu = target;
            }
        }
        let own = topo.own(prev);
        match decided {
            Some((target, true)) => {
                self.stamps.up(thread, target, now);
                cpu = target;
            }
            Some((target, false)) => {
                self.stamps.down(thread, target, now);
                cpu = target;
            }
            // stay in the previous HMP domain
            None if !own.contains(cpu) => cpu = prev,
            None => {}
        }
        if kind == WakeKind::Wakeup {
            self.balancer.note_wakeup(view.ncpus(), cpu, view.now_us);
        }
        cpu
    }

    fn balance_newidle(&mut self, view: &SchedView, cpu: usize) -> Option<Migration> {
        self.prepare(view);
        let topo = self.topo.as_ref().expect("prepared");
        match self.balancer.idle_balance(view, &topo.domains, cpu) {
            IdleBalance::Skipped => None,
            IdleBalance::Pulled(m) => Some(m),
            IdleBalance::Nothing => self.idle_pull(view, cpu),
        }
    }

    fn tick(&mut self, view: &SchedView, cpu: usize, out: &mut Vec<Migration>) {
        self.prepare(view);
        let jiffy = (view.now_us / self.tick_us + 1e-6).floor() as u64;
        let topo = self.topo.as_ref().expect("prepared");
        // the rebalance softirq runs if the periodic balance is due or the running task's load
        // is above the up threshold (__update_task_entity_contrib pulls next_balance to now)
        let heavy =
            view.rqs[cpu].cfs_curr().is_some_and(|t| view.tasks[t].avg.load_avg_ratio() > self.knobs.up_threshold);
        if (heavy || self.balancer.due(view, &topo.domains, cpu)) && self.last_scan != Some(jiffy) {
            self.last_scan = Some(jiffy);
            self.force_migrations(view, out);
        }
        let topo = self.topo.as_ref().expect("prepared");
        // with packing, the LITTLE domain has no idle balancing (hmp_packing_ilb_needed)
        let kick_idle = !(self.knobs.packing_enable && topo.is_slowest(cpu));
        self.balancer.tick(view, &topo.domains, cpu, kick_idle, out);
    }

    fn uses_tick(&self) -> bool {
        true
    }

    fn uses_util(&self) -> bool {
        true
    }

    fn frequency_invariant_load(&self) -> bool {
        self.knobs.frequency_invariant_load_scale
    }

    fn reads_asymmetry(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
