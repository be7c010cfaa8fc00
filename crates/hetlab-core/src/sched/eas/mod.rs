//! `eas`: mainline energy-aware scheduling as Linux 5.10 has it (kernel/sched/fair.c;
//! shared/reference/linux-governors.md §6.2, sched-rcu-platforms.md §3).
//!
//! - **Wake-up** (`select_task_rq_fair` → `find_energy_efficient_cpu`, 5.10): unless the root
//!   domain is over-utilised, for each performance domain ([`EnergyModel`]) the allowed CPU
//!   with the most spare capacity that still fits the task (`fits_capacity`: util · 1280 <
//!   capacity · 1024) is a candidate, and so is the previous CPU; each candidate is priced by
//!   `compute_energy` (the domain's `em_cpu_energy` with the task's utilisation added there,
//!   minus the domain's energy without it). The cheapest wins, but the previous CPU is kept
//!   unless the winner saves more than 6.25 % of the energy (`>> 4`; the margin was removed in
//!   ≈v6.0). A task with no utilisation stays where it was. One later fix is taken: a negative
//!   delta (a costlier OPP can have a lower `cost` when voltages are flat, as on the 5422's
//!   A15 at 1.6-1.8 GHz) keeps the previous CPU ("sched/fair: Fix negative energy delta in
//!   find_energy_efficient_cpu()", Pierre Gondois, 2021) instead of 5.10's unsigned wrap.
//! - **Over-utilisation** (the tipping point, commit 2802bf3cd936, Morten Rasmussen, 2018): a
//!   CPU is over-utilised when its utilisation does not fit 80 % of its capacity. Any such CPU
//!   sets the root domain's flag at enqueue (not a new task's first) and at the tick
//!   (`update_overutilized_status`); the load balance at the root domain rewrites it from all
//!   CPUs (`update_sd_lb_stats`), so it clears at the next such balance after the load drops.
//!   While set, wake-ups take 5.10's CFS path for asymmetric capacities ([`select_asym`]:
//!   `wake_wide`, `wake_affine`, `select_idle_capacity`), forks CFS's ([`Smp`]'s
//!   `select_task_rq_fair`, 3.10's), and CFS's load balancing works ([`Smp`]: its new-idle,
//!   periodic and idle-CPU balancing), and so does
//!   the misfit migration (4.20+, the load balance of asymmetric systems, which `smp`'s 3.10
//!   balancer lacks): a running task that does not fit its CPU is moved by active balance to
//!   an idle CPU whose capacity is more than 1.25x (`group_smaller_max_cpu_capacity`). While
//!   clear, `find_busiest_group` reports balanced and nothing moves but by wake-up.
//! - **When the flag is rewritten and misfits move**: at the root domain (all CPUs, weight n)
//!   the interval is n ms (`sd->min_interval`) in jiffies; a busy CPU's is 16x that
//!   (`busy_factor`, 5.10); idle CPUs balance through the nohz idle balance, kicked from a
//!   busy CPU's tick when it runs two tasks or a misfit one (`nohz_balancer_kick`); a CPU going
//!   idle balances if the root domain is overloaded (a CPU with two tasks or a misfit task,
//!   `rd->overload`). CFS's own balancing keeps `smp`'s timing.
//!
//! Utilisations are PELT's `util_avg` ([`SchedEntity::avg`], [`RunQueue::avg`]): a waking
//! task's decayed to now (`sync_entity_load_avg`), an idle CPU's blocked utilisation decayed to
//! now (what the kernel's blocked-load updates approximate), a busy CPU's as of its last update
//! (at most a tick old, as in the kernel). Utilisation clamps (`uclamp`) count where 5.10 reads
//! them: a candidate CPU must fit the clamped utilisation, `compute_energy`'s max utilisation
//! (the OPP) is clamped, the sum (the busy time) is not, and a task misfits by its clamped
//! utilisation. RT work counts as 5.10 counts it (`sched::rt`): CFS fits in what the RT
//! utilisation leaves (`capacity_of`), and the energy estimate adds the RT utilisation (the
//! top OPP while an RT task is runnable and uclamp is not in use); SCHED_DEADLINE's running
//! time takes capacity from CFS too (`rt::capacity_of`), adds to the busy time the estimate
//! prices, and its active bandwidth to the OPP it predicts (`compute_energy`'s two calls of
//! `schedutil_cpu_util`, [`cpu_util`](super::cpu_util)); util_est on Linux 6.6+ runs
//! ([`util_est`](super::util_est), zero under 5.10's `eas`). Not modelled: IRQ
//! utilisation and thermal pressure, 5.10's fork path (`find_idlest_group`'s group types: forks
//! take 3.10's), the doubling of the balance interval while balanced. The kernel runs EAS only
//! with schedutil on every policy ([`Placement::required_governor`]) and on CPUs of more than
//! one capacity; [`Eas::new`] refuses other platforms instead of silently being `smp`.
//!
//! On `eas-eevdf` (Linux 6.12) the wake-up is 6.12's `find_energy_efficient_cpu`
//! ([`Eas::feec_612`]): a CPU's fit is `util_fits_cpu`'s ([`super::util_fits`]: the unclamped
//! utilisation against `capacity_of`, the util_max as a forced fit, a util_min above the actual
//! capacity a lesser fit, -1), with the run queues' clamps max-aggregated; lesser fits stay
//! candidates, a full fit beats them whatever the energy, among lesser fits the larger actual
//! capacity wins; the previous CPU is kept unless another saves energy (no margin), and another
//! CPU of the previous CPU's domain is priced only if it has more spare capacity. Its misfit
//! test is 6.12's (`update_misfit_status`: `task_fits_cpu`, `util_fits_cpu` of `task_util_est`
//! short of a full fit, and never on the biggest CPU the task may use, 6.10's
//! `max_allowed_capacity`) and so is its over-utilisation test (`cpu_overutilized`:
//! `util_fits_cpu` of the CPU's utilisation with the run queue's clamps, a lesser fit not
//! over-utilised).
//!
//! Cost per wake-up: one pass over the CPUs and a few energy evaluations per domain, whatever
//! the number of threads.

use super::cfs::RunQueue;
use super::cpu_perf::cpu_perf;
use super::cpu_util::{schedutil_cpu_util, CpuSignals, UtilType};
use super::energy_model::{EnergyModel, PerfDomain};
use super::pelt::State;
use super::select_asym::{self, fits_capacity, task_util_now, Wakees};
use super::smp::Smp;
use super::uclamp::{self, Clamp};
use super::util_est::task_util_est;
use super::util_fits::{util_fits_cpu, Capacities, Fit};
use super::{rt, CpuMask, Migration, Placement, PlacementDescriptor, SchedPolicy, SchedView, WakeKind};
use crate::governor::tunables::Values;
use crate::platform::Platform;

/// The kernel's `busy_factor` (5.10: 16, "sched/fair: Reduce busy load balance interval",
/// 6e7499135db7): a busy CPU balances this many times less often.
const BUSY_FACTOR: u64 = 16;

/// `EM_MAX_COMPLEXITY`: the kernel builds no performance domains (no EAS) when
/// domains · (CPUs + states) exceeds this (kernel/sched/topology.c).
const EM_MAX_COMPLEXITY: usize = 2048;

/// `eas` as the registry lists it.
pub const DESCRIPTOR: PlacementDescriptor = PlacementDescriptor {
    policy: SchedPolicy::Eas,
    name: "eas",
    summary: "mainline energy-aware scheduling (Linux 5.10, needs schedutil): wake-ups by energy model",
    // uclamp's knobs are 5.10's: Linux 3.10 had no uclamp (`uclamp`)
    tunables: uclamp::tunables,
    build,
};

fn build(platform: &Platform, _: &Values) -> Result<Box<dyn Placement>, String> {
    Ok(Box::new(Eas::new(platform)?))
}

/// `eas-eevdf` as the registry lists it: EAS over Linux 6.12's fair class (EEVDF).
pub const EEVDF_DESCRIPTOR: PlacementDescriptor = PlacementDescriptor {
    policy: SchedPolicy::EasEevdf,
    name: "eas-eevdf",
    summary: "energy-aware scheduling over EEVDF (Linux 6.12's feec: util_fits_cpu's fit ranking, no energy margin; needs schedutil)",
    tunables: super::smp::eevdf_tunables,
    build: build_eevdf,
};

fn build_eevdf(platform: &Platform, values: &Values) -> Result<Box<dyn Placement>, String> {
    let features = super::eevdf::Features::from_values(values);
    Ok(Box::new(Eas { eevdf: Some(features), ..Eas::new(platform)? }))
}

pub struct Eas {
    em: EnergyModel,
    /// `rd->overutilized`.
    overutilized: bool,
    /// Per CPU: the running thread flagged as misfit at its last tick (`rq->misfit_task_load`).
    misfit: Vec<Option<usize>>,
    /// Per CPU: its next periodic balance while busy, µs.
    next_busy_balance_us: Vec<f64>,
    /// The next nohz idle balance (`nohz.next_balance`), µs.
    next_idle_balance_us: f64,
    /// The root domain's balance interval for an idle CPU and for a busy one, µs.
    balance_interval_us: f64,
    busy_balance_interval_us: f64,
    /// Per CPU: utilisation now, refreshed by the hooks that read every CPU.
    util: Vec<u64>,
    /// Every CPU's util_est sum, beside `util` (zero but on Linux 6.6+ runs).
    util_est: Vec<u64>,
    /// Every CPU's `runnable_avg` now, beside `util` (zero but with 6.4+'s runnable boost).
    runnable: Vec<u64>,
    /// Per thread: placed before (its first placement is its fork).
    placed: Vec<bool>,
    /// CFS's placement and load balancing, for forks and while over-utilised.
    cfs: Smp,
    /// Who woke whom (`record_wakee`), for 5.10's CFS wake-up path ([`select_asym`]).
    wakees: Wakees,
    /// A task with clamps has been seen (the kernel's `sched_uclamp_used`): clamps are looked
    /// up from then on.
    uclamp_used: bool,
    /// Linux 6.12 (`eas-eevdf`): the fair class is EEVDF with these features, and feec keeps
    /// the previous CPU only when no candidate saves energy (the 1/16 margin went in ≈v6.0).
    eevdf: Option<super::eevdf::Features>,
}

/// A performance domain's candidates in 6.12's feec ([`Eas::candidates_612`]): the previous
/// CPU's spare capacity and fit, and the best other CPU, its spare capacity and fit.
struct PdCandidates {
    prev: Option<(u64, Fit)>,
    best: Option<(usize, u64, Fit)>,
}

/// The waking task as `cpu_util_next` sees it, and its clamps.
#[derive(Clone, Copy)]
struct Wakee {
    prev: usize,
    /// `task_util`, and `_task_util_est` (its util_est, not counted anywhere while it sleeps).
    util: u64,
    est: u64,
    clamp: Clamp,
}

impl Eas {
    /// EAS on `platform`, or why the kernel would not run it there.
    pub fn new(platform: &Platform) -> Result<Eas, String> {
        let ncpus = platform.ncpus();
        let caps: Vec<u32> = (0..platform.clusters.len()).map(|c| platform.cpu_capacity(c)).collect();
        if caps.iter().all(|&c| c == caps[0]) {
            return Err(format!(
                "scheduler 'eas' needs CPUs of different capacities (the kernel enables EAS only with \
                 SD_ASYM_CPUCAPACITY); every CPU of platform '{}' has capacity {}",
                platform.name, caps[0]
            ));
        }
        let em = EnergyModel::of(platform).map_err(|e| format!("scheduler 'eas': {e}"))?;
        let states: usize = em.domains.iter().map(|d| d.states.len()).sum();
        let complexity = em.domains.len() * (ncpus + states);
        if complexity > EM_MAX_COMPLEXITY {
            return Err(format!(
                "scheduler 'eas': {} domains x ({ncpus} CPUs + {states} states) = {complexity} exceeds the kernel's \
                 EM_MAX_COMPLEXITY {EM_MAX_COMPLEXITY}, above which it disables EAS",
                em.domains.len()
            ));
        }
        // get_sd_balance_interval: sd->min_interval = sd_weight ms, times busy_factor when busy,
        // then msecs_to_jiffies (rounding up)
        let tick_us = platform.tick_us();
        let jiffies_us = |ms: u64| ((ms * 1000).div_ceil(tick_us).max(1) * tick_us) as f64;
        let (balance_interval_us, busy_balance_interval_us) =
            (jiffies_us(ncpus as u64), jiffies_us(ncpus as u64 * BUSY_FACTOR));
        Ok(Eas {
            em,
            overutilized: false,
            misfit: vec![None; ncpus],
            next_busy_balance_us: vec![0.0; ncpus],
            next_idle_balance_us: 0.0,
            balance_interval_us,
            busy_balance_interval_us,
            util: vec![0; ncpus],
            util_est: vec![0; ncpus],
            runnable: vec![0; ncpus],
            placed: Vec::new(),
            cfs: Smp::new(platform),
            wakees: Wakees::new(ncpus, tick_us),
            uclamp_used: false,
            eevdf: None,
        })
    }

    /// `cpu_util` of every CPU now, into `self.util`.
    fn refresh_utils(&mut self, view: &SchedView) {
        let now_ns = view.now_ns();
        self.util.clear();
        self.util.extend(view.rqs.iter().map(|rq| rq_util_now(rq, now_ns)));
        self.util_est.clear();
        self.util_est.extend(view.rqs.iter().map(|rq| rq.util_est));
        self.runnable.clear();
        let boost = self.eevdf.is_some_and(|f| f.runnable_boost);
        self.runnable.extend(view.rqs.iter().map(|rq| if boost { rq_runnable_now(rq, now_ns) } else { 0 }));
    }

    /// `cpu_overutilized` on the utilisations in `self.util`, against what RT work leaves: 5.10's
    /// `fits_capacity`; 6.12's `!util_fits_cpu` with the run queue's clamps (a lesser fit is not
    /// over-utilised; a util_max at or below the CPU's capacity keeps it fitting).
    fn cpu_overutilized(&self, view: &SchedView, cpu: usize) -> bool {
        let util = self.util[cpu].max(self.util_est[cpu]);
        if self.eevdf.is_none() {
            return !fits_capacity(util, rt::capacity_of(view, cpu));
        }
        let clamp = if self.uclamp_used { view.rqs[cpu].uclamp.value() } else { Clamp::default() };
        util_fits_cpu(util, clamp, capacities(view, cpu), self.uclamp_used) == Fit::No
    }

    /// The root-domain statistics' verdict (`update_sd_lb_stats` with no parent domain): some
    /// online CPU is over-utilised. Sets the flag.
    fn update_root_status(&mut self, view: &SchedView) -> bool {
        self.refresh_utils(view);
        self.overutilized = (0..view.ncpus()).any(|c| view.rqs[c].online && self.cpu_overutilized(view, c));
        self.overutilized
    }

    /// `cpu_util_next` (6.x: `cpu_util(cpu, p, dst_cpu, boost)`): `cpu`'s utilisation if the
    /// wakee ends up on `dst` (`None`: nowhere in particular, i.e. off its previous CPU), at
    /// least its `runnable_avg` when `boost`ed (the OPP prediction, 6.4+), capped at the CPU's
    /// capacity.
    fn cpu_util_next(&self, view: &SchedView, cpu: usize, w: Wakee, dst: Option<usize>, boost: bool) -> u64 {
        let mut util = if boost { self.util[cpu].max(self.runnable[cpu]) } else { self.util[cpu] };
        if w.prev == cpu && dst != Some(cpu) {
            util = util.saturating_sub(w.util);
        } else if w.prev != cpu && dst == Some(cpu) {
            util += w.util;
        }
        // UTIL_EST: the queued tasks' estimates, the wakee's where it is to run
        let est = self.util_est[cpu] + if dst == Some(cpu) { w.est } else { 0 };
        util.max(est).min(u64::from(view.capacity[cpu]))
    }

    /// `uclamp_rq_util_with`: `util` of `cpu` within its run queue's clamps, and the wakee's
    /// if it is to run there.
    fn clamped(view: &SchedView, cpu: usize, util: u64, wakee: Option<Clamp>) -> u64 {
        uclamp::util_with(util, view.rqs[cpu].uclamp.value(), wakee)
    }

    /// `compute_energy` (5.10): over the domain's online CPUs, Σ of `schedutil_cpu_util`'s
    /// ENERGY_UTIL and the max of its FREQUENCY_UTIL (within the clamps, the wakee's on `dst`)
    /// of the CFS utilisation with the wakee on `dst`, priced by the EM. On 6.x runs the max
    /// reads the runnable-boosted utilisation (6.4+, `eenv_pd_max_util`'s `cpu_util(.., 1)`)
    /// and, with 6.8+'s rule, is the performance request itself (`sched::cpu_perf`, headroom
    /// included), at most the domain's actual capacity (less its pressure: `em_cpu_energy`'s
    /// `allowed_cpu_cap`), priced at the lowest state whose performance reaches it.
    fn compute_energy(&self, view: &SchedView, pd: &PerfDomain, w: Wakee, dst: Option<usize>) -> u64 {
        let (mut max_util, mut sum_util) = (0, 0);
        let now_ns = view.now_ns();
        let boost = self.eevdf.is_some_and(|f| f.runnable_boost);
        let perf_rule = self.eevdf.is_some_and(|f| f.effective_cpu_perf);
        // feec's `eenv.cpu_cap` (6.10+): the domain's actual capacity, less its pressure
        let actual_cap = (0..view.ncpus())
            .find(|&c| view.cluster_of[c] == pd.cluster && view.rqs[c].online)
            .map_or(pd.capacity, |c| pd.capacity.saturating_sub(u64::from(view.pressure[c])));
        for cpu in (0..view.ncpus()).filter(|&c| view.cluster_of[c] == pd.cluster && view.rqs[c].online) {
            let signals = CpuSignals { rq: &view.rqs[cpu], now_ns, uclamp_used: self.uclamp_used };
            let util_cfs = self.cpu_util_next(view, cpu, w, dst, false);
            sum_util += schedutil_cpu_util(&signals, util_cfs, pd.capacity, UtilType::Energy, None);
            let wakee = (dst == Some(cpu)).then_some(w.clamp);
            let util_max = if boost { self.cpu_util_next(view, cpu, w, dst, true) } else { util_cfs };
            max_util = max_util.max(if perf_rule {
                cpu_perf(&signals, util_max, pd.capacity, wakee).min(actual_cap)
            } else {
                schedutil_cpu_util(&signals, util_max, pd.capacity, UtilType::Frequency, wakee)
            });
        }
        if perf_rule {
            pd.energy_for_perf(max_util, sum_util)
        } else {
            pd.energy(max_util, sum_util)
        }
    }

    /// `find_energy_efficient_cpu` (5.10, with the negative-delta fix; 6.12's on `eas-eevdf`,
    /// [`Self::feec_612`]) for a waking `thread` while the root domain is not over-utilised.
    pub fn find_energy_efficient_cpu(&mut self, view: &SchedView, thread: usize) -> usize {
        if self.eevdf.is_some() {
            return self.feec_612(view, thread);
        }
        let task = &view.tasks[thread];
        let prev = task.cpu;
        let now_ns = view.now_ns();
        let w = Wakee { prev, util: task_util_now(task, now_ns), est: task.util_est.ewma, clamp: task.uclamp };
        if task_util_est(w.util, task.util_est) == 0 {
            return prev;
        }
        self.uclamp_used |= !task.uclamp.is_default();
        self.refresh_utils(view);
        let (mut prev_delta, mut best_delta) = (u64::MAX, u64::MAX);
        let mut best_energy_cpu = prev;
        let mut base_energy = 0;
        for pd in &self.em.domains {
            let base_energy_pd = self.compute_energy(view, pd, w, None);
            base_energy += base_energy_pd;
            let (mut max_spare_cap, mut max_spare_cap_cpu) = (0, None);
            for cpu in task.allowed.iter().filter(|&c| view.cluster_of[c] == pd.cluster && view.rqs[c].online) {
                let util = self.cpu_util_next(view, cpu, w, Some(cpu), false);
                let cpu_cap = rt::capacity_of(view, cpu);
                let spare_cap = cpu_cap.saturating_sub(util);
                // the capacity the clamps ask of the CPU must fit too
                let util = if self.uclamp_used { Self::clamped(view, cpu, util, Some(w.clamp)) } else { util };
                if !fits_capacity(util, cpu_cap) {
                    continue;
                }
                if cpu == prev {
                    let Some(delta) = self.compute_energy(view, pd, w, Some(prev)).checked_sub(base_energy_pd) else {
                        return prev;
                    };
                    prev_delta = delta;
                    best_delta = best_delta.min(prev_delta);
                }
                if spare_cap > max_spare_cap {
                    max_spare_cap = spare_cap;
                    max_spare_cap_cpu = Some(cpu);
                }
            }
            if let Some(cpu) = max_spare_cap_cpu.filter(|&c| c != prev) {
                let Some(cur_delta) = self.compute_energy(view, pd, w, Some(cpu)).checked_sub(base_energy_pd) else {
                    return prev;
                };
                if cur_delta < best_delta {
                    best_delta = cur_delta;
                    best_energy_cpu = cpu;
                }
            }
        }
        // the previous CPU unless it cannot take the task or the best saves more than 1/16
        // (6.x: saves anything, "sched/fair: Remove the energy margin in feec()")
        let saves = |saved: u64| match self.eevdf {
            Some(_) => saved > 0,
            None => saved > (prev_delta + base_energy) >> 4,
        };
        if prev_delta == u64::MAX || saves(prev_delta - best_delta) {
            best_energy_cpu
        } else {
            prev
        }
    }

    /// One performance domain's candidates in 6.12's feec: the previous CPU if it is there and
    /// fits (its spare capacity and fit), and the best other CPU by fit, then spare capacity.
    /// The clamps are the task's, max-aggregated with those of each run queue that has tasks,
    /// and (as the kernel's per-domain `util_min`/`util_max`) kept for the CPUs after it.
    fn candidates_612(&self, view: &SchedView, pd: &PerfDomain, w: Wakee, allowed: &CpuMask) -> PdCandidates {
        let p_clamp = if self.uclamp_used { w.clamp } else { Clamp::default() };
        let mut clamp = p_clamp;
        let mut c = PdCandidates { prev: None, best: None };
        for cpu in allowed.iter().filter(|&c| view.cluster_of[c] == pd.cluster && view.rqs[c].online) {
            let util = self.cpu_util_next(view, cpu, w, Some(cpu), false);
            let cpu_cap = rt::capacity_of(view, cpu);
            let rq_clamps = &view.rqs[cpu].uclamp;
            if self.uclamp_used && !rq_clamps.is_idle() {
                clamp =
                    Clamp { min: rq_clamps.value().min.max(p_clamp.min), max: rq_clamps.value().max.max(p_clamp.max) };
            }
            let fit = util_fits_cpu(util, clamp, capacities(view, cpu), self.uclamp_used);
            if fit == Fit::No {
                continue;
            }
            let spare = cpu_cap.saturating_sub(util);
            if cpu == w.prev {
                c.prev = Some((spare, fit));
            } else if c.best.is_none_or(|(_, s, f)| fit > f || (fit == f && spare > s)) {
                c.best = Some((cpu, spare, fit));
            }
        }
        c
    }

    /// `find_energy_efficient_cpu` as Linux 6.12 has it: candidates ranked by `util_fits_cpu`
    /// ([`super::util_fits`]) before energy. A CPU whose actual capacity is below the task's
    /// util_min (a lesser fit, -1) stays a candidate; a full fit beats it whatever the energy,
    /// and among lesser fits the larger actual capacity wins. Among full fits the lowest energy
    /// delta wins, the previous CPU kept unless another saves anything (no 1/16 margin); the
    /// best other CPU of a domain is priced only if its spare capacity exceeds the previous
    /// CPU's there. A task with neither utilisation nor util_min stays; a negative delta keeps
    /// the previous CPU. The `i8` ranks are the kernel's ints: -1 also means "none yet".
    fn feec_612(&mut self, view: &SchedView, thread: usize) -> usize {
        let task = &view.tasks[thread];
        let prev = task.cpu;
        let w = Wakee { prev, util: task_util_now(task, view.now_ns()), est: task.util_est.ewma, clamp: task.uclamp };
        self.uclamp_used |= !task.uclamp.is_default();
        let p_util_min = if self.uclamp_used { w.clamp.min } else { 0 };
        if task_util_est(w.util, task.util_est) == 0 && p_util_min == 0 {
            return prev;
        }
        self.refresh_utils(view);
        let (mut prev_delta, mut best_delta) = (u64::MAX, u64::MAX);
        let (mut prev_fits, mut best_fits) = (-1i8, -1i8);
        let (mut prev_actual_cap, mut best_actual_cap) = (0u64, 0u64);
        let mut best_energy_cpu = prev;
        for pd in &self.em.domains {
            let Some(first) = (0..view.ncpus()).find(|&c| view.cluster_of[c] == pd.cluster && view.rqs[c].online)
            else {
                continue;
            };
            let cpu_actual_cap = u64::from(view.capacity[first] - view.pressure[first]);
            let c = self.candidates_612(view, pd, w, &task.allowed);
            if c.prev.is_none() && c.best.is_none() {
                continue;
            }
            let base_energy = self.compute_energy(view, pd, w, None);
            if let Some((_, fit)) = c.prev {
                let Some(delta) = self.compute_energy(view, pd, w, Some(prev)).checked_sub(base_energy) else {
                    return prev; // CPU utilisation has changed
                };
                (prev_delta, prev_fits, prev_actual_cap) = (delta, fit.rank(), cpu_actual_cap);
                best_delta = best_delta.min(prev_delta);
            }
            let prev_spare = c.prev.map(|(s, _)| s);
            let Some((cpu, _, fit)) = c.best.filter(|&(_, s, _)| prev_spare.is_none_or(|p| s > p)) else {
                continue;
            };
            let max_fits = fit.rank();
            // a better fit found before, or both lesser fits and this domain no bigger
            if max_fits < best_fits || (max_fits < 0 && cpu_actual_cap <= best_actual_cap) {
                continue;
            }
            let Some(cur_delta) = self.compute_energy(view, pd, w, Some(cpu)).checked_sub(base_energy) else {
                return prev;
            };
            if max_fits > 0 && best_fits > 0 && cur_delta >= best_delta {
                continue;
            }
            (best_delta, best_energy_cpu, best_fits, best_actual_cap) = (cur_delta, cpu, max_fits, cpu_actual_cap);
        }
        let better = best_fits > prev_fits
            || (best_fits > 0 && best_delta < prev_delta)
            || (best_fits < 0 && best_actual_cap > prev_actual_cap);
        if better {
            best_energy_cpu
        } else {
            prev
        }
    }

    /// `update_misfit_status` for `cpu`'s running thread. 5.10: its clamped utilisation does not
    /// fit. 6.12: it is not already on the biggest CPU it may use (6.10's `max_allowed_capacity`)
    /// and `task_fits_cpu` (`util_fits_cpu` of `task_util_est` and its clamps) is not a full fit.
    fn update_misfit(&mut self, view: &SchedView, cpu: usize) {
        let (linux_612, uclamp_used) = (self.eevdf.is_some(), self.uclamp_used);
        self.misfit[cpu] = view.rqs[cpu].cfs_curr().filter(|&t| {
            let task = &view.tasks[t];
            if task.allowed.count() <= 1 {
                return false;
            }
            if !linux_612 {
                return !fits_capacity(task.uclamp.task_util(task.avg.util_avg), rt::capacity_of(view, cpu));
            }
            let biggest = task.allowed.iter().filter(|&c| view.rqs[c].online).map(|c| view.capacity[c]).max();
            let util = task_util_est(task.avg.util_avg, task.util_est);
            biggest != Some(view.capacity[cpu])
                && util_fits_cpu(util, task.uclamp, capacities(view, cpu), uclamp_used) != Fit::Full
        });
    }

    /// The misfit thread still running on `cpu`, if any.
    fn misfit_on(&self, view: &SchedView, cpu: usize) -> Option<usize> {
        self.misfit[cpu].filter(|&t| view.rqs[cpu].cfs_curr() == Some(t))
    }

    /// The root domain is overloaded (`rd->overload`): a CPU runs two tasks or a misfit one.
    fn overloaded(&self, view: &SchedView) -> bool {
        (0..view.ncpus()).any(|c| view.rqs[c].nr_running() >= 2 || self.misfit_on(view, c).is_some())
    }

    /// The nohz idle balance's misfit part: each idle online CPU balances the root domain;
    /// while over-utilised, an idle CPU of more than 1.25x the capacity pulls a misfit running
    /// thread (the busiest: the largest utilisation, then the lowest CPU) by active balance.
    fn misfit_balance(&mut self, view: &SchedView, out: &mut Vec<Migration>) {
        if !self.update_root_status(view) {
            return;
        }
        let mut pulled: Vec<usize> = Vec::new(); // source CPUs of misfit pulls
        for dst in (0..view.ncpus()).filter(|&c| view.rqs[c].online && view.rqs[c].nr_running() == 0) {
            let dst_cap = u64::from(view.capacity[dst]);
            let busiest = (0..view.ncpus())
                .filter_map(|src| self.misfit_on(view, src).map(|t| (src, t)))
                .filter(|&(src, t)| {
                    !pulled.contains(&src)
                        && view.tasks[t].allowed.contains(dst)
                        && fits_capacity(u64::from(view.capacity[src]), dst_cap)
                })
                .max_by_key(|&(src, t)| (view.tasks[t].avg.util_avg, std::cmp::Reverse(src)));
            if let Some((src, thread)) = busiest {
                pulled.push(src);
                out.push(Migration { thread, to_cpu: dst });
            }
        }
    }
}

/// A run queue's `runnable_avg` now: decayed to now while idle, else as last updated.
fn rq_runnable_now(rq: &RunQueue, now_ns: u64) -> u64 {
    if rq.cfs_curr().is_some() {
        return rq.avg.runnable_util_avg();
    }
    let mut avg = rq.avg;
    avg.update(now_ns, State::IDLE);
    avg.runnable_util_avg()
}

/// `cpu`'s three capacities as 6.12's `util_fits_cpu` reads them.
fn capacities(view: &SchedView, cpu: usize) -> Capacities {
    let orig = u64::from(view.capacity[cpu]);
    Capacities { of: rt::capacity_of(view, cpu), orig, actual: orig - u64::from(view.pressure[cpu]) }
}

/// A run queue's utilisation now: decayed to now while idle, else as last updated.
fn rq_util_now(rq: &RunQueue, now_ns: u64) -> u64 {
    if rq.cfs_curr().is_some() {
        return rq.avg.util_avg;
    }
    let mut avg = rq.avg;
    avg.update(now_ns, State::IDLE);
    avg.util_avg
}

/// A sleeping task's utilisation decayed to now (`sync_entity_load_avg`).
/// The online CPUs are of more than one capacity (the root domain has an
/// `sd_asym_cpucapacity`).
fn asymmetric(view: &SchedView) -> bool {
    let mut online = (0..view.ncpus()).filter(|&c| view.rqs[c].online).map(|c| view.capacity[c]);
    let first = online.next();
    online.any(|cap| Some(cap) != first)
}

impl Placement for Eas {
    fn name(&self) -> &'static str {
        match self.eevdf {
            Some(_) => EEVDF_DESCRIPTOR.name,
            None => DESCRIPTOR.name,
        }
    }

    fn select_cpu(&mut self, view: &SchedView, thread: usize, kind: WakeKind) -> usize {
        // feec only on wake-ups (SD_BALANCE_WAKE); forks and over-utilised wake-ups take CFS's
        // path. A thread's first placement is its fork, also when the engine calls it a wake-up
        // (a thread whose first phase sleeps is taken to have been forked and gone to sleep
        // without being placed).
        if self.placed.len() < view.tasks.len() {
            self.placed.resize(view.tasks.len(), false);
        }
        let first = !std::mem::replace(&mut self.placed[thread], true);
        let kind = if first { WakeKind::Fork } else { kind };
        let target = if kind == WakeKind::Wakeup {
            self.wakees.record(view, thread);
            if !self.overutilized || asymmetric(view) {
                let cpu = if self.overutilized {
                    select_asym::select_wakeup(view, &self.wakees, thread)
                } else {
                    self.find_energy_efficient_cpu(view, thread)
                };
                self.cfs.note_wakeup(view, cpu);
                cpu
            } else {
                self.cfs.select_cpu(view, thread, kind)
            }
        } else {
            self.cfs.select_cpu(view, thread, kind)
        };
        // enqueue_task_fair -> update_overutilized_status, skipped for a new task's first enqueue
        if kind == WakeKind::Wakeup && !self.overutilized {
            let task = &view.tasks[thread];
            // (a sleeping task's util_avg stays in its CPU's; its estimate is counted at enqueue)
            let rq = &view.rqs[target];
            let util = rq_util_now(rq, view.now_ns())
                + if task.cpu == target { 0 } else { task_util_now(task, view.now_ns()) };
            let util = util.max(rq.util_est + task.util_est.ewma);
            self.overutilized = !fits_capacity(util, rt::capacity_of(view, target));
        }
        target
    }

    fn balance_newidle(&mut self, view: &SchedView, cpu: usize) -> Option<Migration> {
        if !self.overloaded(view) || !self.update_root_status(view) {
            return None;
        }
        self.cfs.balance_newidle(view, cpu)
    }

    fn tick(&mut self, view: &SchedView, cpu: usize, out: &mut Vec<Migration>) {
        let now = view.now_us;
        // task_tick_fair: misfit and over-utilisation of this CPU
        self.update_misfit(view, cpu);
        if !self.overutilized {
            let util = view.rqs[cpu].avg.util_avg;
            self.overutilized = !fits_capacity(util, rt::capacity_of(view, cpu));
        }
        // trigger_load_balance: this busy CPU's own balance at the root domain
        if now >= self.next_busy_balance_us[cpu] {
            self.next_busy_balance_us[cpu] = now + self.busy_balance_interval_us;
            self.update_root_status(view);
        }
        // nohz_balancer_kick: two tasks or a misfit one here wake the idle balancer
        let kick = view.rqs[cpu].nr_running() >= 2 || self.misfit_on(view, cpu).is_some();
        if kick && now >= self.next_idle_balance_us {
            self.next_idle_balance_us = now + self.balance_interval_us;
            self.misfit_balance(view, out);
        }
        // CFS's periodic and idle-CPU balancing, which finds the system balanced otherwise
        if self.overutilized {
            self.cfs.tick(view, cpu, out);
        }
    }

    fn uses_tick(&self) -> bool {
        true
    }

    fn uses_util(&self) -> bool {
        true
    }

    fn required_governor(&self) -> Option<&'static str> {
        Some("schedutil")
    }

    fn reads_asymmetry(&self) -> bool {
        true
    }

    /// EAS needs asymmetric capacities (`sched_asym_cpucapacity`), which turn the RT class's
    /// capacity fitness on.
    fn rt_capacity_fitness(&self) -> bool {
        true
    }

    /// 5.10: RT_RUNTIME_SHARE is off.
    fn rt_runtime_share(&self) -> bool {
        false
    }

    fn kernel(&self) -> super::Kernel {
        match self.eevdf {
            Some(_) => super::Kernel::V6_12,
            None => super::Kernel::V5_10,
        }
    }

    fn eevdf_features(&self) -> Option<super::eevdf::Features> {
        self.eevdf
    }

    fn overutilized(&self) -> Option<bool> {
        Some(self.overutilized)
    }
}

#[cfg(test)]
mod tests;
