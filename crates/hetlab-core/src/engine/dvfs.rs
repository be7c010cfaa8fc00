//! DVFS requests and transitions, and step-wise thermal capping.

use super::*;

impl<'a> Engine<'a> {
    pub(super) fn upper_limit_khz(&self, c: usize) -> u32 {
        self.clusters[c].thermal_cap_khz
    }

    pub(super) fn request_freq(&mut self, c: usize, khz: u32) {
        let cap = self.upper_limit_khz(c);
        let cl = &mut self.clusters[c];
        // The cpufreq core resolves to an OPP within the limits (RELATION_H below the cap).
        let khz = cl.opps_khz.iter().rev().copied().find(|&f| f <= khz.min(cap)).unwrap_or(cl.opps_khz[0]);
        let latency_us = self.platform.clusters[c].transition_latency_ns as f64 / 1000.0;
        match cl.pending {
            Some((_, p)) if p == khz => {}
            _ if cl.cur_khz == khz => cl.pending = None,
            _ => cl.pending = Some((self.now_us + latency_us, khz)),
        }
    }

    pub(super) fn set_freq(&mut self, c: usize, khz: u32) {
        self.flush();
        let cl = &mut self.clusters[c];
        cl.pending = None;
        if cl.cur_khz == khz {
            return;
        }
        cl.cur_khz = khz;
        cl.cur_opp = cl.opps_khz.iter().position(|&f| f == khz).expect("resolved to an OPP");
        cl.transitions += 1;
        self.dirty = true;
        if self.config.trace {
            for &cpu in &self.platform.clusters[c].cpus {
                self.trace.push(TraceEvent::CpuFrequency { time_us: self.now_us, cpu, freq_khz: khz });
            }
        }
    }

    /// Step-wise passive cooling: the highest trip the hottest cluster exceeds sets each
    /// cluster's cap; a lowered cap applies at once (cpufreq_update_policy).
    pub(super) fn thermal_poll(&mut self) {
        self.flush();
        let zone_c = self.clusters.iter().map(|c| c.temp_c).fold(f64::MIN, f64::max);
        for c in 0..self.clusters.len() {
            let cluster = &self.platform.clusters[c];
            let mut cap = cluster.max_khz();
            for trip in &self.platform.thermal.trips {
                if zone_c >= trip.temp_c {
                    if let Some(&k) = trip.caps_khz.get(&cluster.name) {
                        cap = cap.min(k);
                    }
                }
            }
            self.clusters[c].thermal_cap_khz = cap;
            self.clusters[c].min_cap_khz = self.clusters[c].min_cap_khz.min(cap);
            let effective = self.clusters[c].pending.map_or(self.clusters[c].cur_khz, |p| p.1);
            if effective > cap {
                self.request_freq(c, cap);
            }
        }
    }
}
