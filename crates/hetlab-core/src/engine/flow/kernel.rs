//! The kernel's own work where it lands (`kernel_work` keeps it): kernel work charged to the
//! running thread or, on an idle CPU, charged ahead as busy time, cycles and energy (and taken
//! back by a thread switched in before its end); OS jitter; the board's interrupts (device
//! streams, local timers and the broadcast timer, IPIs) and its kernel threads and timers; RCU
//! from the tick, idle entry, the grace-period and rcuo kthreads; and cpuidle's power-down on
//! idle entry and power-up at wake-up (`idle` decides, `hardware` powers).

use crate::engine::kernel_work::KernelBurst;
use crate::engine::scheduler::ThreadState;
use crate::engine::work::SyncOutcome;
use crate::engine::Engine;
use crate::kernel::kthreads::{timer_cpu, Kthread};
use crate::kernel::rcu::Batch;
use crate::model::idle::{cluster_off_state, STATE_CORE_OFF, STATE_WFI};
use crate::trace::{TraceEvent, CPU_IDLE_EXIT};
use crate::workload::SyncOp;

impl Engine<'_> {
    // ---- kernel work on a CPU ------------------------------------------------------------------

    /// `busy_us` of kernel work on `cpu` starting now, charged at once as stolen time (see
    /// `kernel::jitter`): the running thread needs that much longer; an idle CPU is busy for
    /// it (load, cycles, energy; not CFS utilisation: it is interrupt and softirq work).
    pub(in crate::engine) fn charge_kernel_time(&mut self, cpu: usize, busy_us: f64) {
        let now = self.now_us;
        let c = self.sched.cluster_of(cpu);
        // a busy CPU's cycles are counted with its busy time already (`advance`)
        if let Some(t) = self.sched.curr(cpu) {
            return self.work.steal(t, busy_us);
        }
        let khz = self.hw.cur_khz(c);
        // the cluster's shared logic wakes with it unless another CPU keeps it busy
        let mw = self.hw.charge_idle_burst(cpu, c, busy_us, self.sched.cluster_busy(c));
        self.sched.account_kernel_work(cpu, busy_us);
        // more kernel work on a CPU still busy with some runs after it, in the same wake-up
        let start_us = self.kernel.burst_end_us(cpu).filter(|&end| end > now);
        if start_us.is_none() {
            self.sched.count_wakeup(cpu);
            self.out.trace(TraceEvent::CpuIdle { time_us: now, cpu, state: CPU_IDLE_EXIT });
        } else {
            self.out.drop_recent(|e| {
                matches!(*e, TraceEvent::CpuIdle { time_us, cpu: c, state: STATE_WFI }
                    if c == cpu && Some(time_us) == start_us)
            });
        }
        let until_us = start_us.unwrap_or(now) + busy_us;
        self.kernel.start_burst(cpu, KernelBurst { until_us, khz, mw });
        self.out.trace(TraceEvent::CpuIdle { time_us: until_us, cpu, state: STATE_WFI });
        self.enter_deep_idle(cpu, until_us);
    }

    /// A thread switched in on `cpu` while kernel work charged in advance is still under way
    /// (softirqs run before the scheduler returns to a task): the thread waits for the rest as
    /// stolen time, which its own busy time then covers, so the CPU's busy time, cycles and
    /// energy charged for that rest are taken back, and the idle entry traced at the burst's
    /// end is dropped (the CPU never went idle).
    pub(super) fn join_kernel_burst(&mut self, cpu: usize, t: usize) {
        let Some(burst) = self.kernel.take_burst(cpu) else { return };
        let now = self.now_us;
        let rest_us = burst.until_us - now;
        self.work.steal(t, rest_us);
        self.sched.account_kernel_work(cpu, -rest_us);
        let c = self.sched.cluster_of(cpu);
        self.hw.refund_burst(cpu, c, rest_us, burst.khz, burst.mw);
        let until_us = burst.until_us;
        // power-downs decided for the burst's end never happen
        if !self.hw.powered(c) && self.hw.off_since_us(c) > now {
            self.hw.cancel_power_down(c, now);
            let state = cluster_off_state(self.platform.clusters[c].core_off_us().is_some());
            let (off_since_us, cluster_cpus) = (self.hw.off_since_us(c), self.sched.cpus_of_cluster(c));
            self.out.drop_recent(|e| {
                matches!(*e, TraceEvent::CpuIdle { time_us, cpu: other, state: s }
                    if s == state && time_us == off_since_us && cluster_cpus.contains(&other))
            });
        }
        // nor does the idle period that was to follow it
        self.idle.cancel(cpu);
        if let Some(off_since_us) = self.idle.core_off_since_us(cpu).filter(|&since| since > now) {
            self.hw.integrate(now);
            self.idle.core_on(cpu);
            self.hw.mark_dirty();
            self.out.drop_recent(|e| {
                matches!(*e, TraceEvent::CpuIdle { time_us, cpu: c, state: STATE_CORE_OFF }
                    if c == cpu && time_us == off_since_us)
            });
        }
        self.out.drop_recent(|e| {
            matches!(*e, TraceEvent::CpuIdle { time_us, cpu: c, state: STATE_WFI } if c == cpu && time_us == until_us)
        });
    }

    /// OS jitter: the burst due on `cpu` now (`kernel::jitter`).
    pub(in crate::engine) fn kernel_jitter(&mut self, cpu: usize) {
        let exit_us = self.wake_cpu(cpu);
        self.wake_policy(self.cpufreq.policy_of(cpu));
        let busy_us = self.kernel.jitter_burst(cpu, self.now_us, exit_us, &mut self.rng);
        self.charge_kernel_time(cpu, busy_us);
    }

    // ---- RCU -------------------------------------------------------------------------------------

    /// RCU_SOFTIRQ invoking `batch` on `cpu` now: its CPU time there, µs.
    fn run_callbacks(&mut self, cpu: usize, batch: Batch) -> f64 {
        if batch.is_empty() {
            return 0.0;
        }
        let c = self.sched.cluster_of(cpu);
        let us = self.kernel.work_us(c, self.hw.cur_khz(c), batch.cost_us);
        self.kernel.note_softirq(cpu, us * 1e-6);
        us
    }

    /// The tick's RCU part at a jiffy (after the scheduler's on busy CPUs): busy CPUs report a
    /// quiescent state and run ready callbacks (`BLIMIT` of them); idle CPUs that RCU keeps
    /// ticking wake for it (the cluster powers up if it was down) and run all of theirs;
    /// then the grace period advances and rcuo kthreads are woken.
    pub(in crate::engine) fn rcu_tick(&mut self) {
        if !self.kernel.rcu_needs_tick() {
            return;
        }
        let jiffy = self.sched.jiffy(self.now_us);
        let ncpus = self.sched.ncpus();
        // CPUs without a tick this jiffy (idle in dyntick mode, or offline)
        let mut dyntick_idle = vec![true; ncpus];
        for (cpu, no_tick) in dyntick_idle.iter_mut().enumerate() {
            if !self.sched.online(cpu) {
                continue;
            }
            if self.sched.curr(cpu).is_some() {
                *no_tick = false;
                let batch = self.kernel.rcu_tick(cpu, false);
                let us = self.run_callbacks(cpu, batch);
                if us > 0.0 {
                    self.charge_kernel_time(cpu, us);
                }
            } else if self.kernel.rcu_idle_needs_tick(cpu, jiffy) {
                *no_tick = false;
                if self.kernel.interrupts().is_some() {
                    // the board's kernel: the tick is a local timer interrupt, through the
                    // broadcast timer if the CPU's cluster is down
                    self.local_timer_irq(cpu);
                } else {
                    let exit_us = self.wake_cpu(cpu);
                    // a governor sample that fell due while the CPU slept runs now (its
                    // deferrable timer), as at any wake-up (`kernel_jitter`)
                    self.wake_policy(self.cpufreq.policy_of(cpu));
                    let khz = self.hw.cur_khz(self.sched.cluster_of(cpu)) as f64;
                    self.charge_kernel_time(cpu, exit_us + self.platform.sched.tick_cycles * 1000.0 / khz);
                }
                let batch = self.kernel.rcu_tick(cpu, true);
                let us = self.run_callbacks(cpu, batch);
                // back to idle: rcu_prepare_for_idle re-arms the fast-no-hz timer
                self.kernel.rcu_back_to_idle(cpu, jiffy);
                if us > 0.0 {
                    self.charge_kernel_time(cpu, us);
                }
            }
        }
        let gp_cpu = self.kernel.interrupts().and_then(|k| k.thread_of(Kthread::RcuGp)).map(|t| self.sched.cpu_of(t));
        self.kernel.rcu_end_jiffy(jiffy, &dyntick_idle, gp_cpu);
        self.rcu_wake_pending();
    }

    /// Wakes the rcuo kthreads whose list became non-empty (`call_rcu` during the last
    /// interval: the wake-up comes at its end, the next event) or whose grace period ended.
    #[inline]
    pub(in crate::engine) fn rcu_wake_pending(&mut self) {
        if self.kernel.rcuo_to_wake() {
            self.wake_rcuo_kthreads();
        }
    }

    /// [`rcu_wake_pending`](Self::rcu_wake_pending)'s wake-ups (asked at every event, rarely
    /// with any: the test is inlined, the work is not).
    fn wake_rcuo_kthreads(&mut self) {
        let mut wakes = std::mem::take(&mut self.rcuo_wakes);
        self.kernel.take_rcuo_wakes(&mut wakes);
        for &(cpu, waker) in &wakes {
            if let Some((t, event)) = self.kernel.rcuo_of(cpu) {
                self.wake_kthread(t, event, waker);
            }
        }
        self.rcuo_wakes = wakes;
    }

    /// Wakes kernel thread `t` if it sleeps on `event`, from `waker` (a wake-up of a running or
    /// queued kthread is lost: it finds the work when it comes back to sleep).
    fn wake_kthread(&mut self, t: usize, event: usize, waker: Option<usize>) {
        if self.sched.state(t) != ThreadState::Suspended || !self.work.sync().waits(t, event) {
            return;
        }
        self.work.sync_mut().stop_waiting(t, event);
        self.work.next_phase(t);
        self.enter_phase(t, waker);
    }

    /// `cpu` just went idle: RCU_FAST_NO_HZ runs its ready callbacks and arms its timer.
    pub(super) fn rcu_enter_idle(&mut self, cpu: usize) {
        let jiffy = self.sched.jiffy(self.now_us);
        let Some(batch) = self.kernel.rcu_enter_idle(cpu, jiffy) else { return };
        let us = self.run_callbacks(cpu, batch);
        if us > 0.0 {
            self.charge_kernel_time(cpu, us);
        }
    }

    // ---- cpuidle ---------------------------------------------------------------------------------

    /// The next wake-up idle `cpu` knows of (a kernel burst, a sleeping thread's timer, RCU's),
    /// as an absolute time, µs.
    fn next_known_wakeup_us(&self, cpu: usize) -> f64 {
        let rcu_us = self
            .kernel
            .rcu_idle_wakeup_jiffy(cpu, self.sched.jiffy(self.now_us) + 1)
            .map_or(f64::INFINITY, |j| j as f64 * self.sched.tick_us());
        let kernel_timer_us = self.kernel.interrupts().map_or(f64::INFINITY, |k| k.next_timer_us(cpu, true));
        self.kernel.next_burst_us(cpu).min(self.work.next_timer_us(cpu)).min(rcu_us).min(kernel_timer_us)
    }

    /// Idle `cpu`, idle from `idle_from_us` on, goes as deep as cpuidle's tests let it: its core
    /// powers down when the menu governor lets it, then its cluster when every CPU of it is idle
    /// and the governor of each lets the cluster's state.
    pub(in crate::engine) fn enter_deep_idle(&mut self, cpu: usize, idle_from_us: f64) {
        let c = self.sched.cluster_of(cpu);
        if !self.idle.powers_down() || !self.hw.powered(c) || self.sched.curr(cpu).is_some() {
            return;
        }
        self.idle.begin(cpu, idle_from_us, self.next_known_wakeup_us(cpu));
        if !self.idle.deep_states_allowed() {
            return; // WFI only; the governor still learns from this idle (`menu_update`)
        }
        let cluster = &self.platform.clusters[c];
        if let Some(core_off) = cluster.core_off_us() {
            let next_us = self.next_known_wakeup_us(cpu);
            if self.idle.core_off_since_us(cpu).is_none()
                && self.idle.allows(cpu, idle_from_us, idle_from_us, core_off, next_us)
            {
                self.hw.integrate(self.now_us);
                self.idle.core_off(cpu, idle_from_us);
                self.hw.mark_dirty();
                self.out.trace(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state: STATE_CORE_OFF });
            }
        }
        if self.sched.cluster_busy(c) {
            return;
        }
        let Some(cluster_off) = cluster.cluster_off_us() else {
            return; // the cluster has no power-down state
        };
        let every_cpu_allows = self.sched.cpus_of_cluster(c).iter().all(|&other| {
            let since_us = self.idle.idle_since_us(other).unwrap_or(idle_from_us);
            self.idle.allows(other, since_us, idle_from_us, cluster_off, self.next_known_wakeup_us(other))
        });
        if every_cpu_allows {
            self.hw.power_down(c, self.now_us, idle_from_us);
            let state = cluster_off_state(cluster.core_off_us().is_some());
            for &cpu in self.sched.cpus_of_cluster(c) {
                self.out.trace(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state });
            }
        }
    }

    /// `cpu` wakes: its cluster powers up if cpuidle had powered it down, then its core;
    /// returns the exit latency it pays, µs (the cluster's covers the core's). The menu
    /// governor then learns from the idle period that ended.
    pub(in crate::engine) fn wake_cpu(&mut self, cpu: usize) -> f64 {
        let now = self.now_us;
        let idle_since_us = self.idle.end(cpu, now);
        let exit_us = self.power_up_cpu(cpu);
        if let Some(since_us) = idle_since_us {
            self.idle.learn(cpu, since_us, now, exit_us);
        }
        // its deferrable kernel timers that fell due while it slept run now
        if let Some(k) = self.kernel.interrupts_mut() {
            k.run_timers(cpu, now, now);
        }
        exit_us
    }

    /// Powers `cpu`'s cluster and core up where cpuidle had powered them down; returns the
    /// exit latency the CPU pays, µs.
    fn power_up_cpu(&mut self, cpu: usize) -> f64 {
        let now = self.now_us;
        let c = self.sched.cluster_of(cpu);
        let cluster_exit_us = self.hw.power_up(c, now);
        if self.idle.core_off_since_us(cpu).is_none() {
            return cluster_exit_us;
        }
        self.hw.integrate(now);
        let off_since_us = self.idle.core_on(cpu).expect("powered down");
        self.hw.mark_dirty();
        if off_since_us > now {
            return cluster_exit_us; // decided for the end of kernel work that is still running
        }
        let core = self.platform.clusters[c].core_off_us();
        cluster_exit_us.max(core.map_or(0.0, |(exit_us, _)| exit_us as f64))
    }

    // ---- the board's kernel: interrupts, kernel threads and timers ------------------------------

    /// `reference_us` of interrupt work from `source` on `cpu` now (`interrupts` accounts it):
    /// the running thread pays it, or an idle CPU wakes for it (its cluster powers up if
    /// cpuidle had it down), is busy for it and goes back to idle.
    pub(in crate::engine) fn interrupt_on(&mut self, cpu: usize, source: &str, reference_us: f64) {
        let c = self.sched.cluster_of(cpu);
        let us = self.kernel.work_us(c, self.hw.cur_khz(c), reference_us);
        if let Some(k) = self.kernel.interrupts_mut() {
            k.account(source, cpu, us * 1e-6);
        }
        if self.sched.curr(cpu).is_some() || self.kernel.in_burst(cpu, self.now_us) {
            return self.charge_kernel_time(cpu, us);
        }
        let exit_us = self.wake_cpu(cpu);
        // a governor sample that fell due while the CPU slept runs now (its deferrable timer)
        self.wake_policy(self.cpufreq.policy_of(cpu));
        self.charge_kernel_time(cpu, exit_us + us);
    }

    /// `cpu`'s local timer fires now (an hrtimer or the tick: entry and `timer_irq_us`), once
    /// per instant. If `cpu` sleeps in a state that stops its local timer, the broadcast
    /// timer's interrupt comes first on its CPU, which sends `cpu` an IPI_TIMER unless it is
    /// `cpu` itself (`tick_do_broadcast`).
    pub(in crate::engine) fn local_timer_irq(&mut self, cpu: usize) {
        let now = self.now_us;
        let Some(k) = self.kernel.interrupts_mut() else { return };
        if !k.timer_irq_once(cpu, now) {
            return;
        }
        let s = k.setup();
        let (entry, handler, ipi) = (s.irq_entry_us, s.timer_irq_us, s.ipi_us);
        let broadcast = k.broadcast();
        let c = self.sched.cluster_of(cpu);
        let stopped = self.sched.curr(cpu).is_none()
            && !self.kernel.in_burst(cpu, now)
            && !self.hw.powered(c)
            && self.platform.clusters[c].cluster_off_stops_local_timer;
        match broadcast {
            Some((b, broadcast_us)) if stopped && b == cpu => {
                self.interrupt_on(cpu, "broadcast", entry + broadcast_us + handler)
            }
            Some((b, broadcast_us)) if stopped => {
                self.interrupt_on(b, "broadcast", entry + broadcast_us);
                self.interrupt_on(cpu, "IPI_TIMER", entry + ipi + handler);
            }
            _ => self.interrupt_on(cpu, "timer", entry + handler),
        }
    }

    /// The CPU a timer armed now on `cpu` is queued on (`kernel::kthreads::timer_cpu`:
    /// housekeeping CPUs under `nohz_full=`); `cpu` itself without the board's kernel.
    pub(in crate::engine) fn timer_cpu_for(&self, cpu: usize) -> usize {
        if self.kernel.interrupts().is_none() || self.config.kernel.nohz_full.is_empty() {
            return cpu;
        }
        let busy = |c: usize| self.sched.curr(c).is_some();
        timer_cpu(cpu, &self.config.kernel, busy, |c| self.sched.online(c), self.sched.ncpus())
    }

    /// A thread woken on idle `target` from another CPU: the reschedule IPI that makes the
    /// target run it (`ttwu_queue`'s or `resched_task`'s `smp_send_reschedule`).
    pub(in crate::engine) fn resched_ipi(&mut self, target: usize, waker: usize) {
        let Some(k) = self.kernel.interrupts() else { return };
        if target == waker || self.sched.curr(target).is_some() || self.kernel.in_burst(target, self.now_us) {
            return;
        }
        let us = k.setup().irq_entry_us + k.setup().ipi_us;
        self.interrupt_on(target, "IPI_RESCHEDULE", us);
    }

    /// The device interrupts of the workload's streams due by `by_us`, in time order: each
    /// runs its handler (and softirq) on the CPU the GIC gives it and posts the semaphore its
    /// driver completes, from that CPU.
    pub(in crate::engine) fn device_irqs_due(&mut self, by_us: f64) {
        loop {
            let Some(k) = self.kernel.interrupts_mut() else { return };
            let Some(irq) = k.fire_due(by_us, &mut self.rng) else { return };
            let (cpu, entry) = (k.device_cpu(), k.setup().irq_entry_us);
            self.interrupt_on(cpu, &irq.device, entry + irq.handler_us);
            if let Some((softirq, us)) = &irq.softirq {
                self.interrupt_on(cpu, softirq, *us);
            }
            if let Some(sem) = irq.posts {
                if let SyncOutcome::GoOn(Some(w)) = self.work.sync_mut().op(0, SyncOp::SemPost, sem) {
                    self.go_on(w, cpu);
                }
            }
        }
    }

    /// The kernel's own timers due by `by_us` on every CPU: on a busy CPU they run from its
    /// tick; an idle CPU is woken only by the non-deferrable ones (its local timer).
    pub(in crate::engine) fn kernel_timers_due(&mut self, by_us: f64) {
        let Some(k) = self.kernel.interrupts() else { return };
        let timer_us = k.setup().timer_irq_us;
        for cpu in 0..self.sched.ncpus() {
            if !self.sched.online(cpu) {
                continue;
            }
            let idle = self.sched.curr(cpu).is_none() && !self.kernel.in_burst(cpu, self.now_us);
            let due = self.kernel.interrupts().is_some_and(|k| k.next_timer_us(cpu, idle) <= by_us);
            if !due {
                continue;
            }
            if idle {
                self.local_timer_irq(cpu);
            } else {
                self.interrupt_on(cpu, "TIMER_SOFTIRQ", timer_us);
            }
            let now = self.now_us;
            if let Some(k) = self.kernel.interrupts_mut() {
                k.run_timers(cpu, now, by_us);
            }
        }
    }

    /// Wakes the kernel threads that have work queued: a wake-up by a CPU comes from it; one by
    /// the thread's own timer (the grace-period kthread's scans) is a local timer interrupt on
    /// its timer's CPU first.
    pub(in crate::engine) fn kthread_wakes_pending(&mut self) {
        let Some(k) = self.kernel.interrupts_mut() else { return };
        if !k.kthreads_to_wake() {
            return;
        }
        for (t, event, waker) in k.take_wakes() {
            let waker = match waker {
                Some(cpu) => cpu,
                None => {
                    let cpu = self.timer_cpu_for(self.sched.cpu_of(t));
                    self.local_timer_irq(cpu);
                    cpu
                }
            };
            self.wake_kthread(t, event, Some(waker));
        }
    }
}
