//! cpuidle: an idle core may power down when the menu governor expects it to stay idle longer
//! than its power-down state's target residency, and a cluster when every CPU of it expects
//! that (`CpuIdle::ClusterOff`; `model::idle`, `kernel::menu`); a CPU that wakes powers its core
//! (and its cluster, first) up again, paying the exit latency, and the governor learns from how
//! long the idle lasted (`menu_update`).

use super::{CpuIdle, Engine};
use crate::kernel::menu::{deep_states_allowed, exit_latency_allowed, MenuRules};
use crate::model::idle::{cluster_off_state, power_down_pays, STATE_CORE_OFF};
use crate::sched::Kernel;
use crate::trace::TraceEvent;

/// Tasks waiting on I/O on a CPU (`nr_iowait_cpu`): the model has no block I/O, so none; the
/// correction factors' I/O half and the performance multiplier's I/O term never apply.
const NR_IOWAITERS: u32 = 0;

impl Engine<'_> {
    /// The policy of logical `cpu`.
    pub(super) fn policy_of(&self, cpu: usize) -> usize {
        self.policy_of_cpu[cpu]
    }

    /// The menu.c of the kernel the placement models.
    fn menu_rules(&self) -> MenuRules {
        match self.sched.placement.kernel() {
            Kernel::V3_10 => MenuRules::V3_10,
            Kernel::V5_10 => MenuRules::V5_10,
        }
    }

    /// The next wake-up idle `cpu` knows of (a kernel burst, a sleeping thread's timer, RCU's),
    /// as an absolute time, µs.
    fn next_known_wakeup_us(&self, cpu: usize) -> f64 {
        self.jitter.next_burst_us(cpu).min(self.timers.next_us(cpu)).min(self.rcu_next_wakeup_us(cpu))
    }

    /// How long the menu governor expects idle `cpu`, idle since `idle_from_us`, to stay idle,
    /// µs: the distance to the next known wake-up scaled by the correction factor of its bucket,
    /// or the typical recent idle period where the last ones agree (a wake-up from another CPU,
    /// which no timer announces). 5.10 takes the shorter of the two; 3.10 takes the typical
    /// period whenever there is one, even past the timer (its `get_typical_interval` overwrites
    /// `predicted_us`; later kernels compare it with the timer first).
    fn predicted_idle_us(&self, cpu: usize, idle_from_us: f64) -> f64 {
        let rules = self.menu_rules();
        let next_timer_us = self.next_known_wakeup_us(cpu) - idle_from_us;
        let st = &self.cpus[cpu];
        let corrected_us = st.menu.corrected_us(rules, next_timer_us, NR_IOWAITERS);
        let typical_us = st.idle_history.typical_us();
        match rules {
            MenuRules::V3_10 => typical_us.unwrap_or(corrected_us),
            MenuRules::V5_10 => typical_us.map_or(corrected_us, |avg| corrected_us.min(avg)),
        }
    }

    /// Whether a state of `cpu`, idle since `idle_from_us`, with exit latency `exit_latency_us`
    /// and target residency `target_residency_us` may be entered at `now_us`: the residency
    /// test on the rest of the predicted idle, and the exit latency within the PM QoS limit and
    /// the prediction (`kernel::menu::exit_latency_allowed`).
    fn menu_allows(
        &self,
        cpu: usize,
        idle_from_us: f64,
        now_us: f64,
        exit_latency_us: u32,
        target_residency_us: u32,
    ) -> bool {
        let predicted_end_us = idle_from_us + self.predicted_idle_us(cpu, idle_from_us);
        power_down_pays(now_us, predicted_end_us, target_residency_us)
            && exit_latency_allowed(
                self.menu_rules(),
                exit_latency_us,
                predicted_end_us - now_us,
                NR_IOWAITERS,
                self.config.cpu_dma_latency_us,
            )
    }

    /// The cpu_idle state index of cluster power-down on cluster `c`.
    pub(super) fn cluster_off_state_of(&self, c: usize) -> u32 {
        cluster_off_state(self.platform.clusters[c].core_off_us().is_some())
    }

    /// Idle `cpu`, idle from `idle_from_us` on, goes as deep as cpuidle's tests let it: its core
    /// powers down when the menu governor lets it, then its cluster when every CPU of it is idle
    /// and the governor of each lets the cluster's state.
    pub(super) fn enter_deep_idle(&mut self, cpu: usize, idle_from_us: f64) {
        let c = self.sched.cluster_of[cpu];
        if self.config.cpuidle != CpuIdle::ClusterOff || !self.hw.clusters[c].powered {
            return;
        }
        if self.sched.rqs[cpu].curr.is_some() {
            return;
        }
        self.cpus[cpu].idle_since_us = Some(idle_from_us);
        self.cpus[cpu].idle_next_timer_us = self.next_known_wakeup_us(cpu) - idle_from_us;
        if !deep_states_allowed(self.config.cpu_dma_latency_us) {
            return; // WFI only; the governor still learns from this idle (`menu_update`)
        }
        if let Some((exit_latency_us, target_residency_us)) = self.platform.clusters[c].core_off_us() {
            if self.cpus[cpu].core_off_since_us.is_none()
                && self.menu_allows(cpu, idle_from_us, idle_from_us, exit_latency_us, target_residency_us)
            {
                self.integrate();
                self.cpus[cpu].core_off_since_us = Some(idle_from_us);
                self.dirty = true;
                self.out.trace(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state: STATE_CORE_OFF });
            }
        }
        let cpus = &self.sched.cpus_of_cluster[c];
        if cpus.iter().any(|&cpu| self.sched.rqs[cpu].curr.is_some()) {
            return;
        }
        let Some((exit_latency_us, target_residency_us)) = self.platform.clusters[c].cluster_off_us() else {
            return; // the cluster has no power-down state
        };
        let every_cpu_allows = cpus.iter().all(|&other| {
            let since_us = self.cpus[other].idle_since_us.unwrap_or(idle_from_us);
            self.menu_allows(other, since_us, idle_from_us, exit_latency_us, target_residency_us)
        });
        if every_cpu_allows {
            self.integrate();
            self.hw.clusters[c].powered = false;
            self.hw.clusters[c].off_since_us = idle_from_us;
            self.dirty = true;
            let state = self.cluster_off_state_of(c);
            for i in 0..self.sched.cpus_of_cluster[c].len() {
                let cpu = self.sched.cpus_of_cluster[c][i];
                self.out.trace(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state });
            }
        }
    }

    /// `cpu` wakes: its cluster powers up if cpuidle had powered it down, then its core;
    /// returns the exit latency it pays, µs (the cluster's covers the core's). The menu
    /// governor then learns from the idle period that ended.
    pub(super) fn wake_cpu(&mut self, cpu: usize) -> f64 {
        let idle_since_us = self.cpus[cpu].idle_since_us.take().filter(|&since| since <= self.now_us);
        let exit_us = self.power_up_cpu(cpu);
        if let Some(since_us) = idle_since_us {
            self.menu_update(cpu, since_us, exit_us);
        }
        exit_us
    }

    /// `menu_update` for `cpu`, idle since `since_us` and woken now, paying `exit_us`: the
    /// kernel measures the residency to the end of the exit, so the exit is in it.
    fn menu_update(&mut self, cpu: usize, since_us: f64, exit_us: f64) {
        let rules = self.menu_rules();
        let residency_us = self.now_us - since_us + exit_us;
        let st = &mut self.cpus[cpu];
        let recorded_us =
            st.menu.update(rules, st.idle_next_timer_us, NR_IOWAITERS, residency_us, exit_us.round() as u32);
        st.idle_history.record(recorded_us);
    }

    /// Powers `cpu`'s cluster and core up where cpuidle had powered them down; returns the
    /// exit latency the CPU pays, µs.
    fn power_up_cpu(&mut self, cpu: usize) -> f64 {
        let cluster_exit_us = self.power_up(self.sched.cluster_of[cpu]);
        let Some(off_since_us) = self.cpus[cpu].core_off_since_us else {
            return cluster_exit_us;
        };
        self.integrate();
        self.cpus[cpu].core_off_since_us = None;
        self.dirty = true;
        if off_since_us > self.now_us {
            return cluster_exit_us; // decided for the end of kernel work that is still running
        }
        let core = self.platform.clusters[self.sched.cluster_of[cpu]].core_off_us();
        cluster_exit_us.max(core.map_or(0.0, |(exit_us, _)| exit_us as f64))
    }

    /// Powers cluster `c` up if cpuidle had powered it down; returns the exit latency the
    /// waking CPU pays, µs.
    pub(super) fn power_up(&mut self, c: usize) -> f64 {
        let cluster = &mut self.hw.clusters[c];
        if cluster.powered || !cluster.online {
            return 0.0;
        }
        self.integrate();
        let cluster = &mut self.hw.clusters[c];
        cluster.powered = true;
        cluster.power_downs += 1;
        // a power-down decided at the end of a kernel burst starts then (`charge_kernel_time`)
        cluster.off_us += (self.now_us - cluster.off_since_us).max(0.0);
        self.dirty = true;
        let wakeup_mj = self.platform.clusters[c].cluster_off_wakeup_energy_uj * 1e-3;
        self.hw.energy.add_dynamic_mj(c, wakeup_mj);
        self.platform.clusters[c].cluster_off_us().map_or(0.0, |(exit_us, _)| exit_us as f64)
    }
}
