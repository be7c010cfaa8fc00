//! Utilisation clamping (uclamp) as Linux 5.10 has it (kernel/sched/core.c; `uclamp_rq_util_with`
//! in kernel/sched/sched.h), with CONFIG_UCLAMP_TASK and CONFIG_UCLAMP_TASK_GROUP (as Android's
//! 5.10 GKI builds it): a task's `util_min`/`util_max` bound the utilisation the frequency and
//! placement decisions see.
//!
//! - **Effective clamps** ([`effective`], `uclamp_eff_get`): per clamp, the task's own request
//!   if it made one (`sched_setattr`, rt-app's and the TOML's keys), else its class's default
//!   (util_max 1024; util_min 0 for CFS, `sysctl_sched_uclamp_util_min_rt_default` for RT);
//!   then its task group's effective value where 5.10's `uclamp_tg_restrict` says ([`tg_restrict`]:
//!   the request is above it, or the task asked nothing), then the system defaults
//!   `sched_util_clamp_min`/`_max` (anything above is lowered to them). A task group's
//!   effective clamps ([`group_effective`], `cpu_util_update_eff`) are its `cpu.uclamp.*`
//!   capped by its parent's, its min capped by its max; the root group restricts nothing.
//! - **Buckets** ([`RqClamps`]): each run queue counts its runnable fair and RT tasks (the
//!   classes with `uclamp_enabled`; SCHED_DEADLINE is not counted) per clamp in
//!   CONFIG_UCLAMP_BUCKETS_COUNT buckets of `UCLAMP_BUCKET_DELTA` each; a bucket keeps the
//!   largest value of the tasks that entered it until it empties (a task left there alone may
//!   be over-boosted by one that left), and the run queue's clamp is its highest non-empty
//!   bucket's value (`uclamp_rq_inc_id`, `uclamp_rq_dec_id`, `uclamp_rq_max_value`). When the
//!   last task leaves, util_max keeps the value of the task that left and util_min drops to 0
//!   (`uclamp_idle_value`, UCLAMP_FLAG_IDLE), so a sleeping capped task's blocked utilisation
//!   stays capped; the next task to arrive resets both (`uclamp_idle_reset`). Each enqueue and
//!   dequeue costs O(buckets).
//!
//! Read by schedutil (`schedutil_cpu_util`'s FREQUENCY_UTIL, through the engine's view), by EAS
//! (`find_energy_efficient_cpu`'s fit test, `compute_energy`'s max util, the misfit test) and
//! by RT placement (`rt_task_fits_capacity`). The engine keeps the buckets (`engine::uclamp`)
//! only once something asks for a clamp (`sched_uclamp_used`: a task's request, a group's
//! `cpu.uclamp.*`, a sysctl other than its default), and counts every runnable task from the
//! start of the run then (the kernel counts only tasks enqueued after the key flipped).
//!
//! Under the 3.10 placements (`pinned`, `smp`, `hmp`) only schedutil reads the clamps: Linux
//! 3.10 had no uclamp, but hetlab pairs those placements with schedutil, a 4.7+ governor, and
//! clamps under them read as that governor would on 5.10 with its defaults; the 5.10-only
//! knobs (the sysctls, the bucket count, `cpu.uclamp.*`) are refused there.
//!
//! Not modelled: `uclamp_fork`'s reset-on-fork, `sched_setattr`'s -1 reset of a clamp (5.11+),
//! the 5.10 refusal of a util_max below an RT task's default util_min (`uclamp_validate`),
//! writes to the knobs during a run, autogroups.

use crate::governor::tunables::{TunableDefault, TunableInfo};
pub use crate::workload::{UclampRequest as Request, UtilClamp as Clamp, UTIL_CLAMP_SCALE as SCALE};

/// CONFIG_UCLAMP_BUCKETS_COUNT (init/Kconfig): default 5, range 5..=20.
pub const BUCKETS_DEFAULT: usize = 5;
const BUCKETS_MIN: usize = 5;
pub const BUCKETS_MAX: usize = 20;
/// `sysctl_sched_uclamp_util_min_rt_default` (kernel/sched/core.c, 5.9+): SCHED_CAPACITY_SCALE,
/// RT tasks run at the top frequency unless they ask otherwise.
pub const UTIL_MIN_RT_DEFAULT: u32 = SCALE;
/// `root_task_group.uclamp[]` (`init_uclamp`): both at SCHED_CAPACITY_SCALE, so groups below it
/// are capped by nothing.
pub const ROOT_GROUP: Clamp = Clamp { min: SCALE, max: SCALE };

/// The 5.10 knobs: the three sysctls (`/proc/sys/kernel/sched_util_clamp_*`) and the bucket
/// count (a Kconfig option, here a tunable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `sysctl_sched_uclamp_util_min` / `_max` (`uclamp_default[]`): the most any task's
    /// util_min / util_max may be; both 1024 by default.
    pub util_min: u32,
    pub util_max: u32,
    /// `sysctl_sched_uclamp_util_min_rt_default`.
    pub util_min_rt_default: u32,
    pub buckets: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            util_min: SCALE,
            util_max: SCALE,
            util_min_rt_default: UTIL_MIN_RT_DEFAULT,
            buckets: BUCKETS_DEFAULT,
        }
    }
}

const SYSCTL_MIN: &str = "sched_util_clamp_min";
const SYSCTL_MAX: &str = "sched_util_clamp_max";
const SYSCTL_MIN_RT_DEFAULT: &str = "sched_util_clamp_min_rt_default";
const BUCKETS_COUNT: &str = "uclamp_buckets_count";

/// The knobs as tunables of a 5.10 placement (`eas`).
pub fn tunables() -> Vec<TunableInfo> {
    let knob = |name, default: u32, help, min: usize, max: u32| TunableInfo {
        name,
        default: TunableDefault::Value(f64::from(default)),
        unit: "",
        help,
        min: min as f64,
        max: f64::from(max),
    };
    vec![
        knob(SYSCTL_MIN, SCALE, "the most any task's util_min may be, 0..=1024 (Linux: 1024)", 0, SCALE),
        knob(SYSCTL_MAX, SCALE, "the most any task's util_max may be, 0..=1024 (Linux: 1024)", 0, SCALE),
        knob(
            SYSCTL_MIN_RT_DEFAULT,
            UTIL_MIN_RT_DEFAULT,
            "util_min of an RT task that asks none, 0..=1024 (Linux 5.9+: 1024)",
            0,
            SCALE,
        ),
        knob(
            BUCKETS_COUNT,
            BUCKETS_DEFAULT as u32,
            "CONFIG_UCLAMP_BUCKETS_COUNT: clamp buckets per run queue, 5..=20 (Linux: 5)",
            BUCKETS_MIN,
            BUCKETS_MAX as u32,
        ),
    ]
}

impl Settings {
    /// The knobs among `given` (already checked against [`tunables`]), else the defaults; the
    /// min above the max is refused as `sysctl_sched_uclamp_handler` refuses it.
    pub fn from_tunables(given: &[(String, f64)]) -> Result<Settings, String> {
        let d = Settings::default();
        let get = |name: &str, default: u32| given.iter().find(|(n, _)| n == name).map_or(default, |&(_, v)| v as u32);
        let s = Settings {
            util_min: get(SYSCTL_MIN, d.util_min),
            util_max: get(SYSCTL_MAX, d.util_max),
            util_min_rt_default: get(SYSCTL_MIN_RT_DEFAULT, d.util_min_rt_default),
            buckets: get(BUCKETS_COUNT, d.buckets as u32) as usize,
        };
        if s.util_min > s.util_max {
            return Err(format!(
                "{SYSCTL_MIN} {} exceeds {SYSCTL_MAX} {} (the kernel refuses it with EINVAL); give a min up to the max",
                s.util_min, s.util_max
            ));
        }
        Ok(s)
    }

    /// A sysctl differs from its default: writing it turns uclamp on (`sysctl_sched_uclamp_handler`
    /// enables `sched_uclamp_used` when a value changes). The bucket count does not.
    pub fn changes_sysctls(&self) -> bool {
        let d = Settings::default();
        (self.util_min, self.util_max, self.util_min_rt_default) != (d.util_min, d.util_max, d.util_min_rt_default)
    }

    /// `UCLAMP_BUCKET_DELTA`: DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, buckets), 205 for 5.
    fn bucket_delta(&self) -> u32 {
        let n = self.buckets as u32;
        (SCALE + n / 2) / n
    }

    /// `uclamp_bucket_id`: the bucket of a clamp `value`.
    pub fn bucket_id(&self, value: u32) -> usize {
        ((value / self.bucket_delta()) as usize).min(self.buckets - 1)
    }
}

/// `uclamp_tg_restrict` as Linux 5.10 released it (3eac870a3247): the group's effective value
/// replaces the task's request when the request is above it or the task asked nothing
/// (`!user_defined`), so a task that set no util_min gets its group's `cpu.uclamp.min`, and one
/// that set more gets it too (a limit, not a protection). 5.14's 0c18f2ecfcc2 ("sched/uclamp:
/// Fix wrong implementation of cpu.uclamp.min", later in the stable trees) clamps the request
/// between the group's min and max instead; hetlab follows v5.10 as tagged, as its other 5.10
/// rules do. `asked`: the task's own value, if any; `default`: its class's.
fn tg_restrict(asked: Option<u32>, default: u32, group: Option<u32>) -> u32 {
    let request = asked.unwrap_or(default);
    match group {
        Some(tg) if request > tg || asked.is_none() => tg,
        _ => request,
    }
}

/// `uclamp_eff_get` for both clamps of a task: `req` its request, `rt` whether it is an RT task
/// (its util_min default), `group` its group's effective clamps (`None`: the root group).
pub fn effective(req: Request, rt: bool, group: Option<Clamp>, settings: &Settings) -> Clamp {
    let min_default = if rt { settings.util_min_rt_default } else { 0 };
    let min = tg_restrict(req.min, min_default, group.map(|g| g.min));
    let max = tg_restrict(req.max, SCALE, group.map(|g| g.max));
    // system default restrictions always apply
    Clamp { min: min.min(settings.util_min), max: max.min(settings.util_max) }
}

/// `cpu_util_update_eff` for one group: its `cpu.uclamp.*` (`uclamp_none` where unwritten)
/// capped by its parent's effective clamps, and its min by its max.
pub fn group_effective(req: Request, parent: Clamp) -> Clamp {
    let max = req.max.unwrap_or(SCALE).min(parent.max);
    let min = req.min.unwrap_or(0).min(parent.min).min(max);
    Clamp { min, max }
}

/// One clamp bucket of a run queue (`struct uclamp_bucket`).
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    /// Runnable tasks counted here.
    tasks: u32,
    /// The largest value of the tasks that entered since it was last empty.
    value: u32,
}

/// One clamp of a run queue (`struct uclamp_rq`).
#[derive(Debug, Clone, Copy)]
struct RqClamp {
    value: u32,
    buckets: [Bucket; BUCKETS_MAX],
}

impl RqClamp {
    fn new(value: u32) -> RqClamp {
        RqClamp { value, buckets: [Bucket::default(); BUCKETS_MAX] }
    }

    /// `uclamp_rq_inc_id` for a task of clamp `value` in bucket `id`; `idle`: the run queue
    /// had no task (`uclamp_idle_reset`).
    fn inc(&mut self, id: usize, value: u32, idle: bool) {
        let bucket = &mut self.buckets[id];
        bucket.tasks += 1;
        if idle {
            self.value = value;
        }
        // local max aggregation: a bucket tracks the largest value it was asked
        if bucket.tasks == 1 || value > bucket.value {
            bucket.value = value;
        }
        self.value = self.value.max(value);
    }

    /// `uclamp_rq_dec_id` for a task of clamp `value` in bucket `id`: when its bucket empties
    /// and held the run queue's value, the highest other non-empty bucket's value, else
    /// `idle_value`. True if no bucket has tasks left.
    fn dec(&mut self, id: usize, value: u32, idle_value: u32) -> bool {
        let bucket = &mut self.buckets[id];
        debug_assert!(bucket.tasks > 0, "uclamp bucket {id} has no task of value {value} to lose");
        bucket.tasks = bucket.tasks.saturating_sub(1);
        if bucket.tasks > 0 {
            return false; // the bucket keeps its value: its tasks may be over-boosted
        }
        let top = self.buckets.iter().rev().find(|b| b.tasks > 0);
        // only a bucket that held the run queue's value changes it
        if self.buckets[id].value >= self.value {
            self.value = top.map_or(idle_value, |b| b.value);
        }
        top.is_none()
    }
}

/// A run queue's clamps (`rq->uclamp[]`, `rq->uclamp_flags`).
#[derive(Debug, Clone)]
pub struct RqClamps {
    min: RqClamp,
    max: RqClamp,
    /// No task counted: the next one to arrive sets both values (UCLAMP_FLAG_IDLE).
    idle: bool,
    settings: Settings,
}

impl Default for RqClamps {
    fn default() -> Self {
        RqClamps::new(Settings::default())
    }
}

impl RqClamps {
    /// A run queue at the start of a run: idle after boot (UCLAMP_FLAG_IDLE, util_max kept at
    /// the 1024 of the tasks that ran before, util_min 0). v5.10's `init_uclamp_rq` leaves the
    /// flag clear until a CPU first idles, so the first task there could not lower util_max
    /// ("sched/uclamp: Fix rq->uclamp_max not set on first enqueue", 5.17); on a booted system
    /// every CPU has idled long before a workload starts.
    pub fn new(settings: Settings) -> RqClamps {
        RqClamps { min: RqClamp::new(0), max: RqClamp::new(SCALE), idle: true, settings }
    }

    /// The run queue's clamps now (`rq->uclamp[].value`).
    pub fn value(&self) -> Clamp {
        Clamp { min: self.min.value, max: self.max.value }
    }

    /// No task is counted (`uclamp_rq_is_idle`: UCLAMP_FLAG_IDLE, util_max held at the last
    /// task's).
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// Runnable tasks counted.
    pub fn nr_tasks(&self) -> u32 {
        self.max.buckets.iter().map(|b| b.tasks).sum()
    }

    /// `uclamp_rq_inc`: a task of effective clamps `c` becomes runnable here.
    pub fn inc(&mut self, c: Clamp) {
        let s = self.settings;
        self.min.inc(s.bucket_id(c.min), c.min, self.idle);
        self.max.inc(s.bucket_id(c.max), c.max, self.idle);
        self.idle = false;
    }

    /// `uclamp_rq_dec`: a task counted with clamps `c` leaves; the last one leaves util_max at
    /// its own value and util_min at 0 (`uclamp_idle_value`).
    pub fn dec(&mut self, c: Clamp) {
        let s = self.settings;
        self.min.dec(s.bucket_id(c.min), c.min, 0);
        self.idle |= self.max.dec(s.bucket_id(c.max), c.max, c.max);
    }
}

/// `uclamp_rq_util_with`: `util` within the run queue's clamps (`rq.uclamp.value()`), with
/// `task`'s added as if it were runnable there; when the min reaches the max, the min wins.
pub fn util_with(util: u64, rq: Clamp, task: Option<Clamp>) -> u64 {
    let c = task.map_or(rq, |t| rq.max_aggregate(t));
    if c.min >= c.max {
        return u64::from(c.min);
    }
    util.clamp(u64::from(c.min), u64::from(c.max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clamp(min: u32, max: u32) -> Clamp {
        Clamp { min, max }
    }

    #[test]
    fn the_most_demanding_task_sets_both_clamps() {
        let (boosted, capped) = (clamp(512, 1024), clamp(0, 300));
        assert_eq!(util_with(100, boosted, None), 512);
        assert_eq!(util_with(800, capped, None), 300);
        // together: min 512, max 1024 (max-aggregation), so the cap does not hold
        assert_eq!(util_with(100, capped, Some(boosted)), 512);
        assert_eq!(util_with(100, clamp(0, 1024), None), 100);
        // min above max: the min wins (uclamp_rq_util_with)
        assert_eq!(util_with(100, clamp(700, 700), None), 700);
        assert!(Request::new("t", Some(600), Some(500)).is_err() && Request::new("t", None, Some(1025)).is_err());
        assert!(Request::new("t", Some(600), None).is_ok());
        assert_eq!(clamp(100, 200).task_util(50), 100);
    }

    #[test]
    fn buckets_are_205_wide_and_the_last_takes_the_rest() {
        let five = Settings::default();
        assert_eq!(
            (five.bucket_delta(), five.bucket_id(204), five.bucket_id(205), five.bucket_id(1024)),
            (205, 0, 1, 4)
        );
        // 20 buckets: DIV_ROUND_CLOSEST(1024, 20) = 51; 1020/51 = 20 is the 20th (id 19)
        let twenty = Settings { buckets: 20, ..five };
        assert_eq!((twenty.bucket_delta(), twenty.bucket_id(300), twenty.bucket_id(350)), (51, 5, 6));
        assert_eq!(twenty.bucket_id(1024), 19);
    }

    #[test]
    fn a_bucket_over_boosts_the_task_left_in_it() {
        // util_max 300 and 350: one bucket of 5 (205..=409), two of 20 (5: 255..305, 6: 306..356)
        let leave_350 = |buckets: usize| {
            let mut rq = RqClamps::new(Settings { buckets, ..Settings::default() });
            rq.inc(clamp(0, 300));
            rq.inc(clamp(0, 350));
            assert_eq!(rq.value(), clamp(0, 350));
            rq.dec(clamp(0, 350));
            rq.value().max
        };
        // the 300 task alone reads the 350 its bucket kept; in its own bucket, its 300
        assert_eq!(leave_350(5), 350);
        assert_eq!(leave_350(20), 300);
        // once the bucket empties and refills, it holds the new task's value
        let mut rq = RqClamps::new(Settings::default());
        rq.inc(clamp(0, 300));
        rq.inc(clamp(0, 350));
        rq.dec(clamp(0, 350));
        rq.inc(clamp(0, 1024));
        rq.dec(clamp(0, 300));
        assert_eq!(rq.value().max, 1024);
        rq.inc(clamp(0, 250));
        rq.dec(clamp(0, 1024));
        assert_eq!(rq.value().max, 250);
    }

    #[test]
    fn an_idle_run_queue_keeps_the_util_max_of_the_last_task_to_leave() {
        let mut rq = crate::sched::cfs::RunQueue::new(true);
        // after boot: no clamp below 1024
        assert_eq!(util_with(900, rq.uclamp.value(), None), 900);
        // the first task to arrive sets both clamps, even below the 1024 held (idle reset)
        rq.uclamp.inc(clamp(200, 300));
        assert_eq!(rq.uclamp.value(), clamp(200, 300));
        // it leaves: its blocked utilisation stays capped at 300, with no min
        rq.uclamp.dec(clamp(200, 300));
        assert_eq!(rq.uclamp.value(), clamp(0, 300));
        assert_eq!(util_with(900, rq.uclamp.value(), None), 300);
        // a waking task's own clamps aggregate with it, as uclamp_rq_util_with does
        assert_eq!(util_with(900, rq.uclamp.value(), Some(clamp(0, 1024))), 900);
        // the next task resets both, even to a larger util_min and a smaller util_max
        rq.uclamp.inc(clamp(100, 150));
        assert_eq!(rq.uclamp.value(), clamp(100, 150));
        assert_eq!(rq.uclamp.nr_tasks(), 1);
    }

    #[test]
    fn effective_clamps_follow_the_request_the_class_the_group_and_the_sysctls() {
        let s = Settings::default();
        let none = Request::default();
        let asks = |min, max| Request { min, max };
        // CFS: no clamp; RT: util_min 1024 unless it asks its own (an explicit 0 too)
        assert_eq!(effective(none, false, None, &s), clamp(0, 1024));
        assert_eq!(effective(none, true, None, &s), clamp(1024, 1024));
        assert_eq!(effective(asks(Some(0), None), true, None, &s), clamp(0, 1024));
        assert_eq!(effective(asks(Some(300), None), true, None, &s), clamp(300, 1024));
        // a group with cpu.uclamp.max 30 % (307) caps a task that asks 1024, and one that asks none
        let capped = group_effective(asks(None, Some(307)), ROOT_GROUP);
        assert_eq!(capped, clamp(0, 307));
        // ... and in 5.10 the group's default cpu.uclamp.min (0) is a limit too: the task's 100
        // is cut to it
        assert_eq!(effective(asks(Some(100), Some(1024)), false, Some(capped), &s), clamp(0, 307));
        assert_eq!(effective(none, false, Some(capped), &s), clamp(0, 307));
        // 5.10's rule for util_min: a task that set none gets the group's cpu.uclamp.min 20 %
        // (205); one that set more is cut to it; one that set less keeps its own
        let protected = group_effective(asks(Some(205), None), ROOT_GROUP);
        assert_eq!(effective(none, false, Some(protected), &s).min, 205);
        assert_eq!(effective(asks(Some(512), None), false, Some(protected), &s).min, 205);
        assert_eq!(effective(asks(Some(100), None), false, Some(protected), &s).min, 100);
        // an RT task that set none loses its 1024 to a group's default min 0
        assert_eq!(effective(none, true, Some(group_effective(none, ROOT_GROUP)), &s).min, 0);
        // a child is capped by its parent; a min above the max is cut to it
        let child = group_effective(asks(Some(600), Some(900)), capped);
        assert_eq!(child, clamp(0, 307));
        assert_eq!(group_effective(asks(Some(600), Some(400)), ROOT_GROUP), clamp(400, 400));
        // the sysctls lower what is above them
        let low = Settings { util_min: 256, util_max: 512, ..s };
        assert_eq!(effective(asks(Some(400), Some(800)), false, None, &low), clamp(256, 512));
        assert_eq!(effective(none, true, None, &low), clamp(256, 512));
        assert_eq!(effective(none, true, None, &Settings { util_min_rt_default: 128, ..s }), clamp(128, 1024));
    }

    #[test]
    fn the_sysctls_are_checked_as_the_kernel_checks_them() {
        let given = |pairs: &[(&str, f64)]| pairs.iter().map(|&(n, v)| (n.to_string(), v)).collect::<Vec<_>>();
        let s =
            given(&[("sched_util_clamp_min", 0.0), ("sched_util_clamp_max", 512.0), ("uclamp_buckets_count", 20.0)]);
        let s = Settings::from_tunables(&s).unwrap();
        assert_eq!((s.util_min, s.util_max, s.util_min_rt_default, s.buckets), (0, 512, 1024, 20));
        assert!(s.changes_sysctls());
        // the default util_min 1024 above a max of 512: refused, as the kernel refuses it
        let e = Settings::from_tunables(&given(&[("sched_util_clamp_max", 512.0)])).unwrap_err();
        assert!(e.contains("sched_util_clamp_min 1024 exceeds sched_util_clamp_max 512") && !e.contains('\n'), "{e}");
        // the bucket count is a build option, not a write that turns uclamp on
        assert!(!Settings::from_tunables(&given(&[("uclamp_buckets_count", 20.0)])).unwrap().changes_sysctls());
    }
}
