//! DVFS: a policy's frequency requests, resolved by the cpufreq core to an OPP within its
//! limits and applied to its cluster's clock after the transition latency; and the step-wise
//! thermal governor's caps (`model::thermal`), applied at once when lowered.

use super::Engine;
use crate::model::thermal;
use crate::trace::TraceEvent;

impl Engine<'_> {
    /// The highest frequency policy `p` may ask for now, in its table's terms: its cluster's
    /// thermal cap. Under a switcher the cooling device caps the policy over the virtual table
    /// (`cpufreq_cooling` on the switcher's policy): the big cluster's cap while it allows one
    /// of its OPPs; a cap below them reaches into the LITTLE part of the table, the LITTLE
    /// cluster's cap in virtual kHz, so the CPU switches down (the LITTLE cap also bounds its
    /// clock in `cluster_clock_khz`).
    pub(super) fn upper_limit_khz(&self, p: usize) -> u32 {
        let Some(sw) = self.switcher.as_ref() else {
            return self.hw.clusters[self.policies[p].cluster].thermal_cap_khz;
        };
        let big_cap_khz = self.hw.clusters[sw.big].thermal_cap_khz;
        if big_cap_khz >= self.platform.clusters[sw.big].min_khz() {
            big_cap_khz
        } else {
            sw.virtual_of(sw.little, self.hw.clusters[sw.little].thermal_cap_khz)
        }
    }

    /// The voltage of cluster `c`'s current OPP, V (what `Cluster::voltage_v` finds for it).
    pub(super) fn volts(&self, c: usize) -> f64 {
        self.platform.clusters[c].opps[self.hw.clusters[c].cur_opp][1] as f64 * 1e-6
    }

    pub(super) fn request_freq(&mut self, p: usize, khz: u32) {
        let cap = self.upper_limit_khz(p);
        let latency_us = self.platform.clusters[self.policies[p].cluster].transition_latency_ns as f64 / 1000.0;
        let policy = &mut self.policies[p];
        // The cpufreq core resolves to an OPP within the limits (RELATION_H below the cap).
        let khz = policy.opps_khz.iter().rev().copied().find(|&f| f <= khz.min(cap)).unwrap_or(policy.opps_khz[0]);
        match policy.pending {
            Some((_, pending)) if pending == khz => {}
            _ if policy.request_khz == khz => policy.pending = None,
            _ => policy.pending = Some((self.now_us + latency_us, khz)),
        }
    }

    /// The transition of policy `p` to `khz` completes: a switcher may move its CPUs to the
    /// other cluster, and the clusters concerned run at the clock their policies ask.
    pub(super) fn set_freq(&mut self, p: usize, khz: u32) {
        self.integrate();
        let policy = &mut self.policies[p];
        policy.pending = None;
        let changed = policy.request_khz != khz;
        policy.request_khz = khz;
        let from = policy.cluster;
        let to = self.switcher.as_ref().map_or(from, |sw| sw.cluster_for(from, khz));
        if to != from {
            self.switch_policy(p, to);
        }
        let clock_changed = self.set_cluster_clock(to);
        if changed {
            for i in 0..self.policies[p].cpus.len() {
                let (time_us, cpu) = (self.now_us, self.policies[p].cpus[i]);
                self.out.trace(TraceEvent::CpuFrequency { time_us, cpu, freq_khz: khz });
            }
        }
        if clock_changed {
            self.trace_cluster_capacity(to);
        }
        // the cluster left keeps the highest request of the CPUs still on it
        if to != from && self.set_cluster_clock(from) {
            self.trace_cluster_capacity(from);
        }
    }

    /// Cluster `c`'s clock becomes what its policies ask; whether it changed.
    fn set_cluster_clock(&mut self, c: usize) -> bool {
        let Some(khz) = self.cluster_clock_khz(c) else { return false };
        if self.hw.clusters[c].cur_khz == khz {
            return false;
        }
        let cluster = &mut self.hw.clusters[c];
        cluster.cur_khz = khz;
        cluster.cur_opp = self.platform.clusters[c].opps.iter().position(|o| o[0] == khz).expect("an OPP");
        cluster.transitions += 1;
        self.dirty = true;
        true
    }

    /// Step-wise passive cooling: the highest trip the hottest cluster exceeds sets each
    /// cluster's cap; a lowered cap applies at once (cpufreq_update_policy).
    pub(super) fn thermal_poll(&mut self) {
        self.integrate();
        let zone_c = self.hw.clusters.iter().map(|c| c.thermal.temp_c).fold(f64::MIN, f64::max);
        for c in 0..self.hw.clusters.len() {
            let cap = thermal::trip_cap_khz(self.platform, c, zone_c);
            let cluster = &mut self.hw.clusters[c];
            cluster.thermal_cap_khz = cap;
            cluster.min_thermal_cap_khz = cluster.min_thermal_cap_khz.min(cap);
        }
        for p in 0..self.policies.len() {
            let cap = self.upper_limit_khz(p);
            let policy = &self.policies[p];
            if policy.pending.map_or(policy.request_khz, |p| p.1) > cap {
                self.request_freq(p, cap);
            }
        }
    }
}
