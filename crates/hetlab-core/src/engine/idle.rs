//! cpuidle: an idle core may power down when the menu governor expects it to stay idle longer
//! than its power-down state's target residency, and a cluster when every CPU of it expects
//! that (`CpuIdle::ClusterOff`; `model::idle`); a CPU that wakes powers its core (and its
//! cluster, first) up again, paying the exit latency.

use super::{CpuIdle, Engine};
use crate::model::idle::{cluster_off_state, power_down_pays, STATE_CORE_OFF};
use crate::trace::TraceEvent;

impl Engine<'_> {
    /// The policy of logical `cpu`.
    pub(super) fn policy_of(&self, cpu: usize) -> usize {
        self.policy_of_cpu[cpu]
    }

    /// When the menu governor expects idle `cpu`, idle since `idle_from_us`, to wake: at the
    /// next wake-up it knows of (a kernel burst, a sleeping thread's timer, RCU's), or sooner
    /// when its recent idle periods agree on a shorter one (a wake-up from another CPU, which
    /// no timer announces).
    fn predicted_wakeup_us(&self, cpu: usize, idle_from_us: f64) -> f64 {
        let known_us = self.jitter.next_burst_us(cpu).min(self.timers.next_us(cpu)).min(self.rcu_next_wakeup_us(cpu));
        let typical_us = self.cpus[cpu].idle_history.typical_us().map_or(f64::INFINITY, |us| idle_from_us + us);
        known_us.min(typical_us)
    }

    /// The cpu_idle state index of cluster power-down on cluster `c`.
    pub(super) fn cluster_off_state_of(&self, c: usize) -> u32 {
        cluster_off_state(self.platform.clusters[c].core_off_us().is_some())
    }

    /// Idle `cpu`, idle from `idle_from_us` on, goes as deep as cpuidle's residency tests let
    /// it: its core powers down when its own expected wake-up is far enough, then its cluster
    /// when every CPU of it is idle and none expects to wake within the cluster state's target
    /// residency.
    pub(super) fn enter_deep_idle(&mut self, cpu: usize, idle_from_us: f64) {
        let c = self.sched.cluster_of[cpu];
        if self.config.cpuidle != CpuIdle::ClusterOff || !self.hw.clusters[c].powered {
            return;
        }
        if self.sched.rqs[cpu].curr.is_some() {
            return;
        }
        self.cpus[cpu].idle_since_us = Some(idle_from_us);
        if let Some((_, target_residency_us)) = self.platform.clusters[c].core_off_us() {
            if self.cpus[cpu].core_off_since_us.is_none()
                && power_down_pays(idle_from_us, self.predicted_wakeup_us(cpu, idle_from_us), target_residency_us)
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
        let next_wakeup_us = cpus
            .iter()
            .map(|&cpu| self.predicted_wakeup_us(cpu, self.cpus[cpu].idle_since_us.unwrap_or(idle_from_us)))
            .fold(f64::INFINITY, f64::min);
        let Some((_, target_residency_us)) = self.platform.clusters[c].cluster_off_us() else {
            return; // the cluster has no power-down state
        };
        if power_down_pays(idle_from_us, next_wakeup_us, target_residency_us) {
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
    /// returns the exit latency it pays, µs (the cluster's covers the core's).
    pub(super) fn wake_cpu(&mut self, cpu: usize) -> f64 {
        if let Some(since_us) = self.cpus[cpu].idle_since_us.take().filter(|&since| since <= self.now_us) {
            self.cpus[cpu].idle_history.record(self.now_us - since_us);
        }
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
