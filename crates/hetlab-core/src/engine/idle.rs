//! cpuidle: when every CPU of a cluster is idle and no known wake-up comes within the target
//! residency, a cluster may power down (`CpuIdle::ClusterOff`; `model::idle`), and the first
//! CPU to wake powers it up again, paying the exit latency.

use super::{CpuIdle, Engine};
use crate::model::idle::{cluster_off_pays, STATE_CLUSTER_OFF};
use crate::trace::TraceEvent;

impl Engine<'_> {
    /// The policy of logical `cpu`.
    pub(super) fn policy_of(&self, cpu: usize) -> usize {
        self.policy_of_cpu[cpu]
    }

    /// Cluster power-down: when every CPU of `c` is idle from `idle_from_us` on and the next
    /// known wake-up (kernel bursts, sleeping threads' timers) is further than the target
    /// residency, cpuidle powers the cluster down.
    pub(super) fn maybe_power_down(&mut self, c: usize, idle_from_us: f64) {
        if self.config.cpuidle != CpuIdle::ClusterOff || !self.hw.clusters[c].powered {
            return;
        }
        let cpus = &self.sched.cpus_of_cluster[c];
        if cpus.iter().any(|&cpu| self.sched.rqs[cpu].curr.is_some()) {
            return;
        }
        let next_wakeup_us = cpus
            .iter()
            .map(|&cpu| self.jitter.next_burst_us(cpu).min(self.timers.next_us(cpu)).min(self.rcu_next_wakeup_us(cpu)))
            .fold(f64::INFINITY, f64::min);
        let Some((_, target_residency_us)) = self.platform.clusters[c].cluster_off_us() else {
            return; // WFI only: the cluster has no power-down state
        };
        if cluster_off_pays(idle_from_us, next_wakeup_us, target_residency_us) {
            self.integrate();
            self.hw.clusters[c].powered = false;
            self.hw.clusters[c].off_since_us = idle_from_us;
            self.dirty = true;
            for i in 0..self.sched.cpus_of_cluster[c].len() {
                let cpu = self.sched.cpus_of_cluster[c][i];
                self.out.trace(TraceEvent::CpuIdle { time_us: idle_from_us, cpu, state: STATE_CLUSTER_OFF });
            }
        }
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
