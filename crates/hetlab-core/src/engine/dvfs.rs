//! DVFS: a policy's frequency requests, resolved by the cpufreq core to an OPP within its
//! limits and applied to its cluster's clock after the transition latency; and the step-wise
//! thermal governor's caps (`model::thermal`), applied at once when lowered.

use super::Engine;
use crate::model::thermal;
use crate::trace::TraceEvent;

impl Engine<'_> {
    /// The highest frequency policy `p` may run at now: its cluster's thermal cap.
    pub(super) fn upper_limit_khz(&self, p: usize) -> u32 {
        self.hw.clusters[self.policies[p].cluster].thermal_cap_khz
    }

    /// The voltage of cluster `c`'s current OPP, V (what `Cluster::voltage_v` finds for it).
    pub(super) fn volts(&self, c: usize) -> f64 {
        self.platform.clusters[c].opps[self.hw.clusters[c].cur_opp][1] as f64 * 1e-6
    }

    pub(super) fn request_freq(&mut self, p: usize, khz: u32) {
        let cap = self.upper_limit_khz(p);
        let latency_us = self.platform.clusters[self.policies[p].cluster].transition_latency_ns as f64 / 1000.0;
        let cur_khz = self.hw.clusters[self.policies[p].cluster].cur_khz;
        let policy = &mut self.policies[p];
        // The cpufreq core resolves to an OPP within the limits (RELATION_H below the cap).
        let khz = policy.opps_khz.iter().rev().copied().find(|&f| f <= khz.min(cap)).unwrap_or(policy.opps_khz[0]);
        match policy.pending {
            Some((_, pending)) if pending == khz => {}
            _ if cur_khz == khz => policy.pending = None,
            _ => policy.pending = Some((self.now_us + latency_us, khz)),
        }
    }

    /// The transition of policy `p` to `khz` completes: its cluster runs at the new clock.
    pub(super) fn set_freq(&mut self, p: usize, khz: u32) {
        self.integrate();
        self.policies[p].pending = None;
        let c = self.policies[p].cluster;
        if self.hw.clusters[c].cur_khz == khz {
            return;
        }
        let cluster = &mut self.hw.clusters[c];
        cluster.cur_khz = khz;
        cluster.cur_opp = self.policies[p].opps_khz.iter().position(|&f| f == khz).expect("resolved to an OPP");
        cluster.transitions += 1;
        self.dirty = true;
        for i in 0..self.policies[p].cpus.len() {
            let (time_us, cpu) = (self.now_us, self.policies[p].cpus[i]);
            self.out.trace(TraceEvent::CpuFrequency { time_us, cpu, freq_khz: khz });
        }
        self.trace_cluster_capacity(c);
    }

    /// Step-wise passive cooling: the highest trip the hottest cluster exceeds sets each
    /// cluster's cap; a lowered cap applies at once (cpufreq_update_policy).
    pub(super) fn thermal_poll(&mut self) {
        self.integrate();
        let zone_c = self.hw.clusters.iter().map(|c| c.thermal.temp_c).fold(f64::MIN, f64::max);
        for p in 0..self.policies.len() {
            let c = self.policies[p].cluster;
            let cap = thermal::trip_cap_khz(self.platform, c, zone_c);
            let cluster = &mut self.hw.clusters[c];
            cluster.thermal_cap_khz = cap;
            cluster.min_thermal_cap_khz = cluster.min_thermal_cap_khz.min(cap);
            let effective = self.policies[p].pending.map_or(cluster.cur_khz, |p| p.1);
            if effective > cap {
                self.request_freq(p, cap);
            }
        }
    }
}
