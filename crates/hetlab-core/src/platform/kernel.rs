//! The board's kernel as a platform file describes it (`[kernel]`): what its interrupt paths,
//! its grace-period kthread and its kworkers cost, its devices' interrupt handlers, the
//! broadcast timer that stands in for local timers stopped in a power-down state, and its own
//! housekeeping timers. The mechanisms that use them are in `kernel::irq`, `kernel::rcu` and
//! `kernel::kthreads`; where each interrupt goes is the GIC's rule (`kernel::irq::irq_cpu`),
//! not a setting.
//!
//! Costs are *reference µs*: the time the platform's biggest core takes at its top OPP, the
//! unit of a phase's `run_us` and of `rcu_callback_us` (a smaller or slower core takes longer).
//! A platform without `[kernel]` keeps the abstract treatment: no interrupt is routed, no
//! kthread but the rcuo ones runs, and the tick of an idle CPU is `[sched] tick_cycles`.

use serde::Deserialize;

/// Largest cost of one kernel path, reference µs: a second, far above any interrupt handler.
const MAX_PATH_US: f64 = 1e6;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSetup {
    /// An interrupt's entry and exit around its handler: the exception vector, the GIC's
    /// acknowledge and end of interrupt, `irq_enter`/`irq_exit` (softirqs run after it).
    pub irq_entry_us: f64,
    /// A local timer interrupt's handler: `hrtimer_interrupt` running the expired timer and the
    /// wake-up it does, and reprogramming the timer.
    pub timer_irq_us: f64,
    /// Receiving one inter-processor interrupt beyond the entry (the IPI_TIMER or
    /// IPI_RESCHEDULE handler).
    pub ipi_us: f64,
    /// The broadcast clock event device, a `devices` name: the timer whose interrupt wakes
    /// the CPUs whose local timers stop in a power-down state (a cluster's
    /// `cluster_off_stops_local_timer`). `None`: no broadcast (no state stops the local timer).
    #[serde(default)]
    pub broadcast_timer: Option<String>,
    /// One pass of the RCU grace-period kthread: starting a grace period (`rcu_gp_init`), a
    /// force-quiescent-state scan (`rcu_gp_fqs`), ending one (`rcu_gp_cleanup`).
    pub rcu_gp_init_us: f64,
    pub rcu_gp_fqs_us: f64,
    pub rcu_gp_cleanup_us: f64,
    /// A kworker's own cost per wake-up besides its work items (`worker_thread`'s loop,
    /// `process_one_work`'s bookkeeping).
    pub kworker_pass_us: f64,
    /// The devices whose interrupts a workload may drive (`[[irqs]]` in a workload file).
    #[serde(default)]
    pub devices: Vec<Device>,
    /// The kernel's own periodic timers.
    #[serde(default)]
    pub timers: Vec<KernelTimer>,
}

/// A device interrupt: its handler's cost and the softirq it raises on the interrupted CPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub name: String,
    /// The handler itself (the entry and exit are `irq_entry_us`).
    pub handler_us: f64,
    /// The softirq the handler raises (NET_RX, BLOCK, TASKLET, ...), run on the same CPU
    /// at the interrupt's exit: its name, for the report.
    #[serde(default)]
    pub softirq: Option<String>,
    #[serde(default)]
    pub softirq_us: f64,
}

/// A periodic timer of the kernel's own, one per CPU (`queue_delayed_work_on` in each CPU's
/// bound workqueue, re-armed from its work function).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelTimer {
    pub name: String,
    pub period_ms: u32,
    /// A deferrable timer never wakes an idle CPU: it runs at that CPU's next wake-up.
    pub deferrable: bool,
    /// Re-armed with `round_jiffies_relative`: expiries on whole seconds, skewed by 3 jiffies
    /// per CPU (`round_jiffies_common`), so the CPUs' expiries come together.
    #[serde(default)]
    pub round_jiffies: bool,
    /// The work item it queues on its CPU's bound kworker.
    pub work_us: f64,
}

impl KernelSetup {
    /// The device named `name`.
    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// Every figure finite and in range, names unique, the broadcast timer a device.
    pub(super) fn validate(&self) -> Result<(), String> {
        let costs = [
            ("irq_entry_us", self.irq_entry_us),
            ("timer_irq_us", self.timer_irq_us),
            ("ipi_us", self.ipi_us),
            ("rcu_gp_init_us", self.rcu_gp_init_us),
            ("rcu_gp_fqs_us", self.rcu_gp_fqs_us),
            ("rcu_gp_cleanup_us", self.rcu_gp_cleanup_us),
            ("kworker_pass_us", self.kworker_pass_us),
        ];
        for (key, v) in costs {
            cost(&format!("kernel.{key}"), v)?;
        }
        for (i, d) in self.devices.iter().enumerate() {
            let at = format!("kernel.devices[{i}] '{}'", d.name);
            if d.name.is_empty() || self.devices[..i].iter().any(|o| o.name == d.name) {
                return Err(format!("{at}: a device needs a name of its own"));
            }
            cost(&format!("{at}.handler_us"), d.handler_us)?;
            cost(&format!("{at}.softirq_us"), d.softirq_us)?;
            if d.softirq.is_none() && d.softirq_us > 0.0 {
                return Err(format!("{at}: softirq_us needs the softirq's name (softirq = \"NET_RX\", ...)"));
            }
        }
        if let Some(b) = &self.broadcast_timer {
            if self.device(b).is_none() {
                return Err(format!("kernel.broadcast_timer '{b}' is not one of kernel.devices; add it there"));
            }
        }
        for (i, t) in self.timers.iter().enumerate() {
            let at = format!("kernel.timers[{i}] '{}'", t.name);
            if !(1..=3_600_000).contains(&t.period_ms) {
                return Err(format!("{at}.period_ms must be within 1..=3600000, got {}", t.period_ms));
            }
            cost(&format!("{at}.work_us"), t.work_us)?;
        }
        Ok(())
    }
}

fn cost(key: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=MAX_PATH_US).contains(&v) {
        Ok(())
    } else {
        Err(format!("{key} must be within 0..={MAX_PATH_US} reference µs, got {v}"))
    }
}
