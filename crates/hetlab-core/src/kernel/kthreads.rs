//! The kernel threads that run the kernel's deferred work, as Linux 3.x queues it, and where
//! their wake-ups come from:
//!
//! - `rcu_preempt`, the RCU grace-period kthread (`rcu_gp_kthread`, v3.7+): woken to start a
//!   grace period by the CPU that needs one, by its own timeout every `jiffies_till_first_fqs`
//!   then `jiffies_till_next_fqs` jiffies to scan for quiescent states, and by the CPU that
//!   reports the last one (`rcu_report_qs_rsp`) to end it (`kernel::rcu`).
//! - `kworker/N:1`, one bound kworker per CPU: work queued on that CPU's pool
//!   (`queue_work_on`, `schedule_delayed_work_on`: the per-CPU housekeeping timers'
//!   work, `platform::KernelTimer`).
//! - `kworker/u:1`, the unbound pool's worker: work on a WQ_UNBOUND workqueue, run wherever
//!   the scheduler places it among `workqueue.unbound_cpus=` (every CPU by default).
//!
//! Each is a task that sleeps on its own event until woken, then makes one pass over the work
//! queued for it (reference µs, plus its own pass cost), and sleeps again unless more came in
//! meanwhile. With `nohz_full=`, the grace-period kthread and the unbound workers keep to the
//! housekeeping CPUs (v4.x `housekeeping_affine`), and a timer armed on a nohz_full CPU goes to
//! a housekeeping one (`get_nohz_timer_target`, below).

use super::boot::BootOptions;
use crate::platform::Platform;
use crate::workload::{Access, MemProfile, Order, Pattern, Phase, PhaseKind, RcuCalls, Spread, Task};

/// The kernel threads of a platform with a `[kernel]` section, by job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kthread {
    RcuGp,
    Bound(usize),
    Unbound,
}

impl Kthread {
    /// The comm the kernel gives it.
    pub fn name(self) -> String {
        match self {
            Kthread::RcuGp => "rcu_preempt".into(),
            Kthread::Bound(cpu) => format!("kworker/{cpu}:1"),
            Kthread::Unbound => "kworker/u:1".into(),
        }
    }

    /// The event it sleeps on.
    pub fn event(self) -> String {
        format!("kthread/{}", self.name())
    }
}

/// The kernel threads a run of `platform` has beside the rcuo ones: none without `[kernel]`;
/// else the grace-period kthread, a bound kworker per CPU and the unbound worker.
pub fn kthreads(platform: &Platform) -> Vec<Kthread> {
    if platform.kernel.is_none() {
        return Vec::new();
    }
    let mut out = vec![Kthread::RcuGp];
    out.extend((0..platform.ncpus()).map(Kthread::Bound));
    out.push(Kthread::Unbound);
    out
}

/// The tasks of `kthreads` under `boot` with the `online` CPUs (an offline CPU has no bound
/// kworker here): each sleeps on its event, then makes one pass (its work set at each pass),
/// forever. A mask with no online CPU falls back to every CPU (`select_fallback_rq`).
pub fn kthread_tasks(platform: &Platform, boot: &BootOptions, online: &[bool]) -> Vec<Task> {
    let ncpus = platform.ncpus();
    let up = |cpus: Vec<usize>| -> Option<Vec<usize>> {
        let on: Vec<usize> = cpus.into_iter().filter(|&c| online[c]).collect();
        (!on.is_empty() && on.len() < online.iter().filter(|&&o| o).count()).then_some(on)
    };
    let housekeeping: Vec<usize> = (0..ncpus).filter(|&c| boot.housekeeping(c)).collect();
    kthreads(platform)
        .into_iter()
        .filter(|k| !matches!(k, Kthread::Bound(cpu) if !online[*cpu]))
        .map(|k| {
            let affinity = match k {
                Kthread::RcuGp => up(housekeeping.clone()),
                Kthread::Bound(cpu) => Some(vec![cpu]),
                Kthread::Unbound => {
                    let mask = boot.wq_unbound_cpus.clone().unwrap_or_else(|| (0..ncpus).collect());
                    let hk: Vec<usize> = mask.iter().copied().filter(|&c| boot.housekeeping(c)).collect();
                    up(if hk.is_empty() { mask } else { hk })
                }
            };
            pass_task(&k.name(), &k.event(), affinity)
        })
        .collect()
}

/// A kernel thread named `name` that sleeps on `event`, then makes one pass (a compute phase
/// whose work the engine sets when it starts), forever.
pub fn pass_task(name: &str, event: &str, affinity: Option<Vec<usize>>) -> Task {
    let mem = MemProfile::single(1.0, 0.3, Access::new(16384, Pattern::Random, 64, Order::Uniform), false, 0.2);
    let phases = vec![
        Phase {
            kind: PhaseKind::Suspend { event: event.to_string() },
            mem,
            mark: None,
            rcu: RcuCalls::default(),
            spread: Spread::NONE,
        },
        Phase {
            kind: PhaseKind::Compute { instructions: 1.0 },
            mem,
            mark: None,
            rcu: RcuCalls::default(),
            spread: Spread::NONE,
        },
    ];
    let mut task = super::kthread(name, affinity, phases);
    task.repeat = u32::MAX;
    task
}

/// Work queued for one kernel thread and not yet taken.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pending {
    /// Reference µs of work waiting.
    pub work_us: f64,
    /// Items waiting (each pays nothing extra: the pass cost is per wake-up).
    pub items: u64,
    /// It has been woken and has not run yet.
    pub woken: bool,
}

impl Pending {
    /// Queues `work_us`: true if the thread must be woken (it was not already).
    pub fn queue(&mut self, work_us: f64) -> bool {
        self.work_us += work_us;
        self.items += 1;
        !std::mem::replace(&mut self.woken, true)
    }

    /// The thread starts a pass: takes everything queued.
    pub fn take(&mut self) -> f64 {
        self.woken = false;
        self.items = 0;
        std::mem::take(&mut self.work_us)
    }

    pub fn has_work(&self) -> bool {
        self.items > 0
    }
}

/// Where a timer armed on `cpu` is queued (`get_nohz_timer_target`): on `cpu` itself, unless
/// `cpu` is not a housekeeping CPU, then on the first busy housekeeping CPU, else the first
/// online housekeeping one (`housekeeping_any_cpu`: within `cpu_online_mask`), else `cpu`
/// itself when no housekeeping CPU is online (the kernel's WARN fallback) (v4.x; 3.x moves a
/// timer only when armed from an idle CPU, which a running thread's CPU is not). An offline
/// CPU takes no timer: it runs nothing, and its cluster may be powered down.
pub fn timer_cpu(
    cpu: usize,
    boot: &BootOptions,
    busy: impl Fn(usize) -> bool,
    online: impl Fn(usize) -> bool,
    ncpus: usize,
) -> usize {
    if boot.housekeeping(cpu) {
        return cpu;
    }
    let hk = || (0..ncpus).filter(|&c| boot.housekeeping(c) && online(c));
    hk().find(|&c| busy(c)).or_else(|| hk().next()).unwrap_or(cpu)
}

/// When a per-CPU housekeeping timer of `period_ms` armed at `now_us` on `cpu` expires:
/// `round_jiffies_relative` (`round_jiffies_common`: shift by `3 × cpu` jiffies, round to a
/// whole second, down only within the first quarter of one, shift back; the unrounded time if
/// that is not in the future), or plainly `period_ms` later.
pub fn next_expiry_us(now_us: f64, period_ms: u32, round: bool, cpu: usize, hz: u32) -> f64 {
    let plain = now_us + f64::from(period_ms) * 1e3;
    if !round {
        return plain;
    }
    let skew_us = 3.0 * cpu as f64 * 1e6 / f64::from(hz);
    let shifted_s = (plain + skew_us) / 1e6;
    let rounded_s = if shifted_s.fract() < 0.25 { shifted_s.floor() } else { shifted_s.ceil() };
    let expiry = rounded_s * 1e6 - skew_us;
    if expiry <= now_us {
        plain
    } else {
        expiry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_with_a_kernel_section_has_the_gp_kthread_and_kworkers_where_the_options_say() {
        let p = Platform::builtin("tc2").unwrap();
        let names: Vec<String> = kthreads(&p).into_iter().map(Kthread::name).collect();
        assert_eq!(names[0], "rcu_preempt");
        assert_eq!(names[1..=5], ["kworker/0:1", "kworker/1:1", "kworker/2:1", "kworker/3:1", "kworker/4:1"]);
        assert_eq!(names[6], "kworker/u:1");
        let boot = BootOptions::parse("nohz_full=0-1,workqueue.unbound_cpus=1-4", 5).unwrap();
        let tasks = kthread_tasks(&p, &boot, &[true; 5]);
        assert_eq!(tasks[0].affinity, Some(vec![2, 3, 4]), "the GP kthread on housekeeping CPUs");
        assert_eq!(tasks[2].affinity, Some(vec![1]));
        assert_eq!(tasks[6].affinity, Some(vec![2, 3, 4]), "unbound: the mask less nohz_full");
        assert_eq!(kthread_tasks(&p, &BootOptions::default(), &[true; 5])[0].affinity, None);
        let a7_only = kthread_tasks(&p, &BootOptions::default(), &[false, false, true, true, true]);
        assert_eq!(a7_only.len(), 5, "no bound kworkers for the offline A15s");
        assert!(kthreads(&Platform::builtin("exynos5422").unwrap()).is_empty());
    }

    #[test]
    fn pending_work_wakes_its_thread_once_until_taken() {
        let mut p = Pending::default();
        assert!(p.queue(3.0));
        assert!(!p.queue(2.0), "already woken");
        assert!(p.has_work());
        assert_eq!(p.take(), 5.0);
        assert!(!p.has_work() && p.queue(1.0));
    }

    #[test]
    fn timers_leave_nohz_full_cpus_for_a_busy_housekeeping_one() {
        let boot = BootOptions::parse("nohz_full=0-1", 5).unwrap();
        let all = |_| true;
        assert_eq!(timer_cpu(3, &boot, |_| false, all, 5), 3);
        assert_eq!(timer_cpu(0, &boot, |c| c == 4, all, 5), 4);
        assert_eq!(timer_cpu(1, &boot, |_| false, all, 5), 2);
        assert_eq!(timer_cpu(1, &BootOptions::default(), |_| false, all, 5), 1);
    }

    #[test]
    fn timers_go_to_online_housekeeping_cpus_only() {
        // TC2 with its A15 cluster (cpu0-1) offline (a configuration fuzz/config_sim runs):
        // timers were queued on the offline cpu0, which took the broadcast's IPI_TIMERs
        let online = |c: usize| c >= 2;
        let boot = BootOptions::parse("nohz_full=3-4", 5).unwrap();
        assert_eq!(timer_cpu(3, &boot, |_| false, online, 5), 2, "the first online housekeeping CPU, not cpu0");
        assert_eq!(timer_cpu(4, &boot, |c| c < 2, online, 5), 2, "an offline CPU is never the busy one");
        // every online CPU is nohz_full: the arming CPU keeps its timer (housekeeping_any_cpu's fallback)
        let boot = BootOptions::parse("nohz_full=2-4", 5).unwrap();
        assert_eq!(timer_cpu(3, &boot, |_| false, online, 5), 3);
    }

    #[test]
    fn rounded_timers_expire_on_whole_seconds_skewed_per_cpu() {
        // HZ 100: cpu 2's skew is 6 jiffies = 60 ms
        assert_eq!(next_expiry_us(0.0, 1000, true, 0, 100), 1e6);
        assert_eq!(next_expiry_us(1_100_000.0, 1000, true, 0, 100), 2e6, "within a quarter: down");
        assert_eq!(next_expiry_us(1_400_000.0, 1000, true, 0, 100), 3e6, "else up");
        assert_eq!(next_expiry_us(1_700_000.0, 1000, true, 2, 100), 2_940_000.0, "2.76 s shifted: up to 3 s");
        assert_eq!(next_expiry_us(250.0, 1000, false, 2, 100), 1_000_250.0);
    }
}
