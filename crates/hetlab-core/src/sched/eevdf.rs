//! EEVDF, the fair class of Linux 6.6+ (Earliest Eligible Virtual Deadline First, "sched/fair:
//! Implement an EEVDF-like scheduling policy", Peter Zijlstra, 2023), as Linux 6.12 has it
//! (kernel/sched/fair.c and features.h of 6.12.19; `wishday/linux-6.12.y` snapshot
//! 21ae40e85ea7; line numbers below are that file's).
//!
//! Each entity is owed service by its weight; its *virtual lag* `V − v` is how much virtual
//! time it is behind the run queue's weighted average `V` (`avg_vruntime`, L653).
//! - **Eligible** (`vruntime_eligible`, L726): lag ≥ 0, i.e. `Σ (v_j − v0)·w_j ≥ (v − v0)·W`
//!   over the queued entities and the running one.
//! - **Virtual deadline** (`update_deadline`, L1007): `d = v + r/w`, the request `r` the slice
//!   (`sysctl_sched_base_slice` 0.75 ms × (1 + log2 CPUs), or the task's own from
//!   `sched_attr.sched_runtime`, clamped to 0.1-100 ms: syscalls.c L307-311); when `v` passes
//!   `d`, a new request begins and the CPU reschedules if others wait.
//! - **The pick** (`pick_eevdf`, L907): the eligible entity with the earliest deadline; the
//!   running one only while eligible, and it wins only with a strictly earlier deadline. With
//!   RUN_TO_PARITY the running entity keeps the CPU while eligible until its deadline moves
//!   (the deadline stashed at `set_next_entity`, L5615's "HACK").
//! - **Placement** (`place_entity`, L5281): an arriving entity keeps the lag it left with
//!   (PLACE_LAG; `entity_lag` clamps it to ±max(2·slice, a tick) of virtual time, L692),
//!   inflated by `(W + w)/W` so that it still has that lag once its own weight is in the
//!   average; a new task starts at lag 0 with half a slice to its deadline
//!   (PLACE_DEADLINE_INITIAL, `ENQUEUE_INITIAL` from `wake_up_new_task`); a task moved while
//!   runnable keeps its relative deadline (PLACE_REL_DEADLINE, `dequeue_entity` L5534).
//! - **Preemption**: at the tick (and every `update_curr`) when the running entity's request is
//!   done; at wake-up when the woken task is the pick (`check_preempt_wakeup_fair`, L8836),
//!   and, with PREEMPT_SHORT (L1164-1190), a waking eligible task of a shorter slice first
//!   cancels the running one's RUN_TO_PARITY protection (and the running one loses the CPU at
//!   its next `update_curr` once it is no longer eligible).
//! - `sched_yield` pushes the deadline one request on (`yield_task_fair`, L9078); a weight
//!   change keeps the lag and the deadline's distance in proportion (`reweight_eevdf`, L3777).
//!
//! Times are µs, virtual times µs of nice-0 time, as in [`cfs`](super::cfs). The kernel's
//! integer nanoseconds keep `V + 0` eligible by flooring the average; in `f64` a tolerance of
//! [`ELIGIBLE_TOLERANCE_US`] does the same for rounding. Not modelled: DELAY_DEQUEUE (6.12
//! default on: a sleeping non-eligible task stays queued until its lag is burnt; runs behave
//! as `NO_DELAY_DEQUEUE`), NEXT_BUDDY (off by default), the fair server (6.12's DL server that
//! guarantees CFS 50 ms/s under RT load), HRTICK (off by default).

use super::cfs::{delta_fair, tunable_scaling};
use crate::governor::tunables::{TunableDefault, TunableInfo, Values};

/// `sysctl_sched_base_slice` (fair.c L76): 0.75 ms, scaled like CFS's tunables.
pub const BASE_SLICE_US: f64 = 750.0;
/// The bounds of a custom slice (`__setscheduler_params`, syscalls.c L309-311: NSEC_PER_MSEC/10
/// and NSEC_PER_MSEC*100).
pub const MIN_CUSTOM_SLICE_US: f64 = 100.0;
pub const MAX_CUSTOM_SLICE_US: f64 = 100_000.0;
/// How far past the average a vruntime may be, from rounding alone, and still count as
/// eligible (1 ps; the kernel's integer ns floor the average instead).
pub const ELIGIBLE_TOLERANCE_US: f64 = 1e-6;

/// The base slice on a machine of `ncpus` CPUs (`update_sysctl`, SCHED_TUNABLESCALING_LOG).
pub fn base_slice_us(ncpus: usize) -> f64 {
    BASE_SLICE_US * tunable_scaling(ncpus)
}

/// A custom slice as `sched_setattr` keeps it: clamped to 0.1-100 ms.
pub fn custom_slice_us(sched_runtime_us: f64) -> f64 {
    sched_runtime_us.clamp(MIN_CUSTOM_SLICE_US, MAX_CUSTOM_SLICE_US)
}

/// `/sys/kernel/debug/sched/base_slice_ns` (`debugfs_create_u32` on `sysctl_sched_base_slice`,
/// debug.c): the slice as the kernel uses it, already scaled; hetlab's bounds are those of a
/// custom slice (0.1-100 ms).
const BASE_SLICE_NS: &str = "base_slice_ns";

/// The scheduler features that decide EEVDF's rules (`/sys/kernel/debug/sched/features`);
/// 6.12's defaults are all on. With them, the base slice, if it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub place_rel_deadline: bool,
    pub run_to_parity: bool,
    pub preempt_short: bool,
    /// `UTIL_EST` (not EEVDF's own, but 6.x's fair class reads it): `sched::util_est`.
    pub util_est: bool,
    /// 6.4+'s runnable boost (not a sched feature: hetlab's switch to take it out): schedutil
    /// and EAS's OPP prediction read a CPU's utilisation as at least its `runnable_avg`.
    pub runnable_boost: bool,
    /// 6.8+'s performance estimation (hetlab's switch, as above): the 1.25 headroom on the
    /// actual utilisation only, util_min and the DL bandwidth as floors (`sched::cpu_perf`);
    /// off: 5.10's `schedutil_cpu_util` and 1.25 on the lot.
    pub effective_cpu_perf: bool,
    /// 6.10+'s capacity pressure (hetlab's switch, as above): a capped clock takes capacity from
    /// `capacity_of` (fits, misfit, over-utilisation) and EAS's actual capacity.
    pub hw_pressure: bool,
    /// `base_slice_ns` as written; `None`: [`base_slice_us`] of the machine's CPUs.
    pub base_slice_ns: Option<u32>,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            place_lag: true,
            place_deadline_initial: true,
            place_rel_deadline: true,
            run_to_parity: true,
            preempt_short: true,
            util_est: true,
            runnable_boost: true,
            effective_cpu_perf: true,
            hw_pressure: true,
            base_slice_ns: None,
        }
    }
}

/// The features as tunables (0 or 1), named as `/sys/kernel/debug/sched/features` shows them.
pub fn tunables() -> Vec<TunableInfo> {
    let feature =
        |name, help| TunableInfo { name, default: TunableDefault::Value(1.0), unit: "", help, min: 0.0, max: 1.0 };
    vec![
        feature("PLACE_LAG", "EEVDF sched feature: an arriving task keeps the lag it left with (0: placed at V)"),
        feature("PLACE_DEADLINE_INITIAL", "EEVDF sched feature: a new task's first request is half a slice"),
        feature("PLACE_REL_DEADLINE", "EEVDF sched feature: a task moved while runnable keeps its relative deadline"),
        feature(
            "RUN_TO_PARITY",
            "EEVDF sched feature: the running task keeps the CPU while eligible until its deadline moves",
        ),
        feature("PREEMPT_SHORT", "EEVDF sched feature: a waking task of a shorter slice cancels RUN_TO_PARITY"),
        feature(
            "UTIL_EST",
            "sched feature: a waking task and a CPU count at least the utilisation util_est remembers from before \
             the task slept (0: PELT's util_avg alone)",
        ),
        feature(
            "RUNNABLE_BOOST",
            "Linux 6.4+ (a hetlab switch, not a sched feature): schedutil and EAS's OPP prediction read a CPU's \
             utilisation as at least its runnable_avg (0: util_avg and util_est alone, as before 6.4)",
        ),
        feature(
            "EFFECTIVE_CPU_PERF",
            "Linux 6.8+ (a hetlab switch, not a sched feature): the 1.25 headroom on the actual utilisation only, \
             util_min and DL bandwidth as floors, util_max a cap after it (0: 5.10's rule, 1.25 on the clamped sum)",
        ),
        feature(
            "HW_PRESSURE",
            "Linux 6.10+ (a hetlab switch, not a sched feature): a thermally capped clock takes capacity from \
             capacity_of and EAS's actual capacity (cpufreq pressure; 0: capacity ignores the cap)",
        ),
        TunableInfo {
            name: BASE_SLICE_NS,
            default: TunableDefault::Policy(
                "0.75 ms x (1 + log2 CPUs, at most 8), as 6.12.19; later kernels with a 0.70 ms base (Debian's \
                 6.12.95 shows 2800000 on 8 CPUs) give 0.70 ms x the same",
            ),
            unit: "ns",
            help: "The EEVDF request of a task without a custom slice, as /sys/kernel/debug/sched/base_slice_ns \
                   holds it (already scaled by the CPU count)",
            min: MIN_CUSTOM_SLICE_US * 1e3,
            max: MAX_CUSTOM_SLICE_US * 1e3,
        },
    ]
}

impl Features {
    /// The features among `values` (checked against [`tunables`]), else on.
    pub fn from_values(values: &Values) -> Features {
        let on = |name| values.get(name) != Some(0);
        Features {
            place_lag: on("PLACE_LAG"),
            place_deadline_initial: on("PLACE_DEADLINE_INITIAL"),
            place_rel_deadline: on("PLACE_REL_DEADLINE"),
            run_to_parity: on("RUN_TO_PARITY"),
            preempt_short: on("PREEMPT_SHORT"),
            util_est: on("UTIL_EST"),
            runnable_boost: on("RUNNABLE_BOOST"),
            effective_cpu_perf: on("EFFECTIVE_CPU_PERF"),
            hw_pressure: on("HW_PRESSURE"),
            base_slice_ns: values.get(BASE_SLICE_NS).map(|ns| ns as u32),
        }
    }

    /// The base slice on a machine of `ncpus` CPUs: the one written, else the kernel's default.
    pub fn base_slice_us(&self, ncpus: usize) -> f64 {
        self.base_slice_ns.map_or_else(|| base_slice_us(ncpus), |ns| f64::from(ns) / 1e3)
    }
}

/// What EEVDF keeps of an entity besides its vruntime and weight (`struct sched_entity`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// Virtual deadline, µs of nice-0 time (absolute; relative to the vruntime while
    /// `rel_deadline`).
    pub deadline: f64,
    /// The request `r_i`, µs of wall time (`se->slice`).
    pub slice_us: f64,
    /// The slice comes from `sched_attr.sched_runtime` (`se->custom_slice`).
    pub custom_slice: bool,
    /// Virtual lag kept while off the run queue (`se->vlag`).
    pub vlag: f64,
    /// The deadline it was picked with (`se->vlag = se->deadline` at `set_next_entity`), or NaN:
    /// RUN_TO_PARITY protects its turn while its deadline is still that one.
    pub picked_deadline: f64,
    /// The deadline is kept relative to the vruntime (moved while runnable, PLACE_REL_DEADLINE).
    pub rel_deadline: bool,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            deadline: 0.0,
            slice_us: BASE_SLICE_US,
            custom_slice: false,
            vlag: 0.0,
            picked_deadline: f64::NAN,
            rel_deadline: false,
        }
    }
}

impl Request {
    /// A request of the slice `custom_us` asks (`sched_attr.sched_runtime`), else the base one.
    pub fn new(custom_us: Option<f64>, base_slice_us: f64) -> Request {
        match custom_us {
            Some(us) => Request { slice_us: custom_slice_us(us), custom_slice: true, ..Default::default() },
            None => Request { slice_us: base_slice_us, ..Default::default() },
        }
    }

    /// RUN_TO_PARITY's protection holds (its deadline is the one it was picked with).
    pub fn protected(&self) -> bool {
        self.picked_deadline == self.deadline
    }
}

/// A run queue's weighted average vruntime as the kernel keeps it (`avg_vruntime`,
/// `avg_load`): keys relative to `v0` (`min_vruntime`), the running entity counted while queued.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Average {
    pub v0: f64,
    /// `Σ (v_j − v0)·w_j`.
    pub sum: f64,
    /// `Σ w_j` (`avg_load` plus the running entity's weight).
    pub load: f64,
}

impl Average {
    /// The average over `entities` (vruntime, weight), relative to `v0`.
    pub fn of(v0: f64, entities: impl IntoIterator<Item = (f64, u64)>) -> Average {
        let (mut sum, mut load) = (0.0, 0.0);
        for (v, w) in entities {
            sum += (v - v0) * w as f64;
            load += w as f64;
        }
        Average { v0, sum, load }
    }

    /// `V`, the zero-lag point (`v0` on an empty queue).
    pub fn v(&self) -> f64 {
        if self.load > 0.0 {
            self.v0 + self.sum / self.load
        } else {
            self.v0
        }
    }

    /// `vruntime_eligible`: lag ≥ 0.
    pub fn eligible(&self, vruntime: f64) -> bool {
        self.sum >= (vruntime - self.v0 - ELIGIBLE_TOLERANCE_US) * self.load
    }
}

/// `entity_lag`: `V − v`, limited to ±max(2·slice, a tick) of the entity's virtual time.
pub fn entity_lag(v: f64, vruntime: f64, weight: u64, slice_us: f64, tick_us: f64) -> f64 {
    let limit = delta_fair((2.0 * slice_us).max(tick_us), weight);
    (v - vruntime).clamp(-limit, limit)
}

/// How an entity arrives for [`place`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arriving {
    /// A new task (`ENQUEUE_INITIAL`).
    New,
    /// Woken, moved, or back from another class or group.
    Other,
}

/// `place_entity`: the vruntime and deadline of an entity of `weight` arriving on a run queue
/// whose average is `avg` (over the entities already there, `nr_running` of them, the running
/// one included), from its kept lag.
pub fn place(avg: &Average, nr_running: usize, weight: u64, r: &mut Request, arriving: Arriving, f: &Features) -> f64 {
    let vslice = delta_fair(r.slice_us, weight);
    let mut lag = 0.0;
    if f.place_lag && nr_running > 0 {
        // inflate: once its weight is in the average, its lag comes out as kept
        let load = if avg.load > 0.0 { avg.load } else { 1.0 };
        lag = r.vlag * (load + weight as f64) / load;
    }
    let vruntime = avg.v() - lag;
    if f.place_rel_deadline && r.rel_deadline {
        r.deadline += vruntime;
        r.rel_deadline = false;
        return vruntime;
    }
    let half = f.place_deadline_initial && arriving == Arriving::New;
    r.deadline = vruntime + if half { vslice / 2.0 } else { vslice };
    vruntime
}

/// `dequeue_entity`'s EEVDF part: the lag kept (the average `avg` still counts the entity);
/// a task leaving while runnable (`sleeping` false: moved to another CPU, class or group)
/// keeps its deadline relative to its vruntime (PLACE_REL_DEADLINE).
pub fn dequeue(avg: &Average, vruntime: f64, weight: u64, r: &mut Request, sleeping: bool, tick_us: f64, f: &Features) {
    r.vlag = entity_lag(avg.v(), vruntime, weight, r.slice_us, tick_us);
    if f.place_rel_deadline && !sleeping {
        r.deadline -= vruntime;
        r.rel_deadline = true;
    }
}

/// `update_deadline`: once the running entity's vruntime reaches its deadline, its next
/// request begins (the base slice again unless custom); true if so (the CPU reschedules when
/// others wait).
pub fn update_deadline(vruntime: f64, weight: u64, r: &mut Request, base_slice_us: f64) -> bool {
    if vruntime < r.deadline {
        return false;
    }
    if !r.custom_slice {
        r.slice_us = base_slice_us;
    }
    r.deadline = vruntime + delta_fair(r.slice_us, weight);
    true
}

/// `did_preempt_short`: the running entity's protection was cancelled by a shorter slice and it
/// is no longer eligible: it gives way at `update_curr`.
pub fn did_preempt_short(avg: &Average, vruntime: f64, r: &Request, f: &Features) -> bool {
    f.preempt_short && !r.protected() && !avg.eligible(vruntime)
}

/// One entity as the pick sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate<T> {
    pub id: T,
    pub vruntime: f64,
    pub deadline: f64,
    pub slice_us: f64,
}

/// `do_preempt_short`: waking `p` has a shorter slice than running `curr`, is eligible, and
/// has the earlier deadline or `curr` is no longer eligible.
pub fn do_preempt_short<T>(avg: &Average, p: &Candidate<T>, curr: &Candidate<T>, f: &Features) -> bool {
    f.preempt_short
        && p.slice_us < curr.slice_us
        && avg.eligible(p.vruntime)
        && (p.deadline < curr.deadline || !avg.eligible(curr.vruntime))
}

/// `pick_eevdf`: the entity to run among the waiting ones (`waiting`, in vruntime order) and
/// the running one (`curr`: its candidate and whether RUN_TO_PARITY protects it), over their
/// average `avg`. The earliest deadline among the eligible ones (on equal deadlines, the
/// smaller vruntime: the kernel's tree keeps the first inserted), the running one only while
/// eligible and only with a strictly earlier deadline.
pub fn pick<T: Copy, I>(avg: &Average, curr: Option<(Candidate<T>, bool)>, waiting: I, f: &Features) -> Option<T>
where
    I: Iterator<Item = Candidate<T>> + Clone,
{
    // a lone entity needs no eligibility test
    if curr.is_some() as usize + waiting.clone().take(2).count() == 1 {
        return curr.map(|(c, _)| c.id).or_else(|| waiting.clone().next().map(|c| c.id));
    }
    let curr = curr.filter(|(c, _)| avg.eligible(c.vruntime));
    if let Some((c, protected)) = curr {
        if f.run_to_parity && protected {
            return Some(c.id);
        }
    }
    // the eligible ones are a prefix of the vruntime order
    let mut best: Option<Candidate<T>> = None;
    for c in waiting.take_while(|c| avg.eligible(c.vruntime)) {
        if best.is_none_or(|b| c.deadline < b.deadline) {
            best = Some(c);
        }
    }
    match (best, curr) {
        (Some(b), Some((c, _))) if c.deadline < b.deadline => Some(c.id),
        (None, Some((c, _))) => Some(c.id),
        (b, _) => b.map(|b| b.id),
    }
}

/// `yield_task_fair`: the running entity's deadline moves one request on.
pub fn yield_deadline(weight: u64, r: &mut Request) {
    r.deadline += delta_fair(r.slice_us, weight);
}

/// `reweight_eevdf`: a queued or running entity's weight changes from `old` to `new` with the
/// run queue's average at `v`: its lag and its deadline's distance from `V` scale by
/// `old/new`. Returns the new vruntime.
pub fn reweight(v: f64, vruntime: f64, old: u64, new: u64, r: &mut Request, tick_us: f64) -> f64 {
    let scale = old as f64 / new as f64;
    let vruntime = if v != vruntime { v - entity_lag(v, vruntime, old, r.slice_us, tick_us) * scale } else { v };
    r.deadline = v + (r.deadline - v) * scale;
    vruntime
}

/// An entity off the run queue changes weight: its kept virtual lag scales by `old/new`.
pub fn reweight_off_queue(old: u64, new: u64, r: &mut Request) {
    r.vlag = r.vlag * old as f64 / new as f64;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(id: usize, vruntime: f64, deadline: f64) -> Candidate<usize> {
        Candidate { id, vruntime, deadline, slice_us: 3000.0 }
    }

    #[test]
    fn the_average_and_eligibility() {
        // nice 0 at v = 10 ms and nice 5 (335) at v = 20 ms, keys from v0 = 10 ms:
        // Σ = 0·1024 + 10 000·335 = 3 350 000, W = 1359, V = 10 000 + 2465.05 µs
        let avg = Average::of(10_000.0, [(10_000.0, 1024), (20_000.0, 335)]);
        assert_eq!((avg.sum, avg.load), (3_350_000.0, 1359.0));
        assert!((avg.v() - 12_465.048).abs() < 1e-3);
        assert!(avg.eligible(10_000.0) && avg.eligible(avg.v()) && !avg.eligible(20_000.0));
        assert!(!avg.eligible(avg.v() + 0.001));
        // the lag is clamped to twice the slice (3 ms → 6 ms at nice 0, 6 ms·1024/335 at nice 5)
        assert_eq!(entity_lag(0.0, 9_000.0, 1024, 3000.0, 4000.0), -6000.0);
        assert!((entity_lag(30_000.0, 0.0, 335, 3000.0, 4000.0) - 6000.0 * 1024.0 / 335.0).abs() < 1e-9);
        // ... or a tick, whichever is longer (HZ=100: 10 ms)
        assert_eq!(entity_lag(0.0, 20_000.0, 1024, 3000.0, 10_000.0), -10_000.0);
        assert_eq!(base_slice_us(8), 3000.0);
        assert_eq!((custom_slice_us(50.0), custom_slice_us(5e6), custom_slice_us(300.0)), (100.0, 100_000.0, 300.0));
    }

    #[test]
    fn placement_keeps_the_lag_it_left_with() {
        let f = Features::default();
        // two nice-0 entities at 0 and 6 ms: V = 3 ms; one of lag +2 ms joins: inflated by
        // (2048 + 1024)/2048 = 1.5 → placed at 3 − 3 = 0 ms; its lag in the new average of
        // (0 + 6 + 0)/3 = 2 ms is then exactly 2 ms
        let avg = Average::of(0.0, [(0.0, 1024), (6000.0, 1024)]);
        let mut r = Request { vlag: 2000.0, slice_us: 3000.0, ..Default::default() };
        let v = place(&avg, 2, 1024, &mut r, Arriving::Other, &f);
        assert_eq!((v, r.deadline), (0.0, 3000.0));
        assert_eq!(Average::of(0.0, [(0.0, 1024), (6000.0, 1024), (v, 1024)]).v() - v, 2000.0);
        // without PLACE_LAG it lands at V with a full request
        let no_lag = Features { place_lag: false, ..f };
        let mut r = Request { vlag: 2000.0, slice_us: 3000.0, ..Default::default() };
        assert_eq!((place(&avg, 2, 1024, &mut r, Arriving::Other, &no_lag), r.deadline), (3000.0, 6000.0));
        // a new task: lag 0, half a request (PLACE_DEADLINE_INITIAL)
        let mut r = Request { slice_us: 3000.0, ..Default::default() };
        assert_eq!((place(&avg, 2, 1024, &mut r, Arriving::New, &f), r.deadline), (3000.0, 4500.0));
        // a nice-5 task's request is 3 ms·1024/335 of virtual time
        let mut r = Request { slice_us: 3000.0, ..Default::default() };
        place(&avg, 2, 335, &mut r, Arriving::Other, &f);
        assert!((r.deadline - (3000.0 + 3000.0 * 1024.0 / 335.0)).abs() < 1e-9);
        // an empty queue: lag is not kept (nr_running 0), the entity starts at v0
        let mut r = Request { vlag: -500.0, ..Default::default() };
        assert_eq!(place(&Average::of(7.0, []), 0, 1024, &mut r, Arriving::Other, &f), 7.0);
    }

    #[test]
    fn a_moved_task_keeps_its_relative_deadline() {
        let f = Features::default();
        // leaving a queue whose V is 5 ms, at v = 4 ms with deadline 6 ms, runnable (moved):
        // lag +1 ms, deadline kept as +2 ms
        let here = Average::of(0.0, [(4000.0, 1024), (6000.0, 1024)]);
        let mut r = Request { deadline: 6000.0, slice_us: 3000.0, ..Default::default() };
        dequeue(&here, 4000.0, 1024, &mut r, false, 4000.0, &f);
        assert_eq!((r.vlag, r.deadline, r.rel_deadline), (1000.0, 2000.0, true));
        // joining a queue of one entity at 100 ms: lag inflated ×2, v = 98 ms, deadline 100 ms
        let there = Average::of(100_000.0, [(100_000.0, 1024)]);
        let v = place(&there, 1, 1024, &mut r, Arriving::Other, &f);
        assert_eq!((v, r.deadline, r.rel_deadline), (98_000.0, 100_000.0, false));
        // going to sleep keeps no relative deadline
        let mut r = Request { deadline: 6000.0, slice_us: 3000.0, ..Default::default() };
        dequeue(&here, 4000.0, 1024, &mut r, true, 4000.0, &f);
        assert_eq!((r.deadline, r.rel_deadline), (6000.0, false));
    }

    #[test]
    fn the_pick_is_the_earliest_eligible_deadline() {
        let f = Features::default();
        // waiting at v = 0, 1, 5 ms (deadlines 9, 4, 5 ms), running at 2 ms (deadline 6 ms),
        // all nice 0: V = 2 ms; eligible: 0, 1 and the running one; earliest: deadline 4 ms
        let avg = Average::of(0.0, [(0.0, 1024), (1000.0, 1024), (5000.0, 1024), (2000.0, 1024)]);
        assert_eq!(avg.v(), 2000.0);
        let waiting = [cand(0, 0.0, 9000.0), cand(1, 1000.0, 4000.0), cand(2, 5000.0, 5000.0)];
        let curr = cand(3, 2000.0, 6000.0);
        assert_eq!(pick(&avg, Some((curr, false)), waiting.iter().copied(), &f), Some(1));
        // protected by RUN_TO_PARITY, the running one keeps the CPU while eligible...
        assert_eq!(pick(&avg, Some((curr, true)), waiting.iter().copied(), &f), Some(3));
        assert_eq!(
            pick(&avg, Some((curr, true)), waiting.iter().copied(), &Features { run_to_parity: false, ..f }),
            Some(1)
        );
        // ... not once past V
        let late = cand(3, 2500.0, 6000.0);
        let avg_late = Average::of(0.0, [(0.0, 1024), (1000.0, 1024), (5000.0, 1024), (2500.0, 1024)]);
        assert_eq!(pick(&avg_late, Some((late, true)), waiting.iter().copied(), &f), Some(1));
        // the running one wins only with a strictly earlier deadline
        let early = cand(3, 2000.0, 4000.0);
        assert_eq!(pick(&avg, Some((early, false)), waiting.iter().copied(), &f), Some(1));
        let earlier = cand(3, 2000.0, 3999.0);
        assert_eq!(pick(&avg, Some((earlier, false)), waiting.iter().copied(), &f), Some(3));
        // alone, no test: an ineligible entity still runs
        assert_eq!(pick(&avg, None, [cand(2, 5000.0, 5000.0)].into_iter(), &f), Some(2));
        assert_eq!(pick(&avg, None, std::iter::empty::<Candidate<usize>>(), &f), None);
    }

    #[test]
    fn requests_wake_up_preemption_and_yield() {
        let f = Features::default();
        // a 3 ms request at nice 0 ends when v reaches the deadline; the next is 3 ms on
        let mut r = Request { deadline: 3000.0, slice_us: 3000.0, ..Default::default() };
        assert!(!update_deadline(2999.0, 1024, &mut r, 3000.0));
        assert!(update_deadline(3001.0, 1024, &mut r, 3000.0));
        assert_eq!(r.deadline, 6001.0);
        // a custom slice stays through the base slice changing
        let mut r = Request::new(Some(500.0), 3000.0);
        assert!(update_deadline(0.0, 1024, &mut r, 6000.0));
        assert_eq!((r.slice_us, r.deadline), (500.0, 500.0));
        // yield: one request on
        yield_deadline(2048, &mut r);
        assert_eq!(r.deadline, 750.0);
        // PREEMPT_SHORT: a waking 0.5 ms task at V = 2 ms cancels a 3 ms task's protection
        let avg = Average::of(0.0, [(2000.0, 1024), (2000.0, 1024)]);
        let short = Candidate { id: 1, vruntime: 2000.0, deadline: 2500.0, slice_us: 500.0 };
        let long = Candidate { id: 0, vruntime: 2000.0, deadline: 5000.0, slice_us: 3000.0 };
        assert!(do_preempt_short(&avg, &short, &long, &f));
        assert!(!do_preempt_short(&avg, &long, &short, &f));
        assert!(!do_preempt_short(&avg, &short, &long, &Features { preempt_short: false, ..f }));
        // protected, it keeps the CPU; cancelled, the short one is the pick
        assert_eq!(pick(&avg, Some((long, true)), [short].into_iter(), &f), Some(0));
        assert_eq!(pick(&avg, Some((long, false)), [short].into_iter(), &f), Some(1));
        // once cancelled, the running one gives way at update_curr when past V
        let mut r = Request { deadline: 5000.0, picked_deadline: f64::NAN, ..Default::default() };
        let ahead = Average::of(0.0, [(1000.0, 1024), (2000.0, 1024)]);
        assert!(did_preempt_short(&ahead, 2000.0, &r, &f));
        r.picked_deadline = 5000.0;
        assert!(!did_preempt_short(&ahead, 2000.0, &r, &f));
    }

    #[test]
    fn a_weight_change_scales_lag_and_deadline() {
        // V = 10 ms, v = 8 ms (lag 2 ms), deadline 12 ms; nice 0 → 2048: lag 1 ms, deadline 11 ms
        let mut r = Request { deadline: 12_000.0, slice_us: 3000.0, ..Default::default() };
        let v = reweight(10_000.0, 8000.0, 1024, 2048, &mut r, 4000.0);
        assert_eq!((v, r.deadline), (9000.0, 11_000.0));
        let mut r = Request { vlag: 1000.0, ..Default::default() };
        reweight_off_queue(1024, 335, &mut r);
        assert!((r.vlag - 1000.0 * 1024.0 / 335.0).abs() < 1e-9);
    }
}
