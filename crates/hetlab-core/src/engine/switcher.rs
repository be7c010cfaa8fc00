//! The big.LITTLE switcher in the engine (`sched::switching` owns the rules): a policy whose
//! frequency leaves its cluster's range moves its logical CPUs onto their partner cores
//! (`bL_switch_to`), each running thread stopping for the inbound cluster's power-up and the
//! context transfer and then refilling its caches; a cluster no logical CPU uses any more is
//! powered down (MCPM's last man) and one a switch enters is powered up. A cluster's clock is
//! the highest request of the policies on it (`find_cluster_maxfreq`).

use super::Engine;

impl Engine<'_> {
    /// The clock cluster `c` runs at for the requests of the policies on it, kHz: the highest,
    /// translated from the virtual table, rounded down to one of its OPPs within its thermal
    /// cap; `None` when no policy is on it.
    pub(super) fn cluster_clock_khz(&self, c: usize) -> Option<u32> {
        let want = self
            .policies
            .iter()
            .filter(|p| p.cluster == c)
            .map(|p| self.switcher.as_ref().map_or(p.request_khz, |sw| sw.actual_khz(c, p.request_khz)))
            .max()?;
        let limit = want.min(self.hw.clusters[c].thermal_cap_khz);
        let opps = &self.platform.clusters[c].opps;
        Some(opps.iter().rev().map(|o| o[0]).find(|&f| f <= limit).unwrap_or(opps[0][0]))
    }

    /// Policy `p`'s logical CPUs move onto their partners in cluster `to`.
    pub(super) fn switch_policy(&mut self, p: usize, to: usize) {
        let from = self.policies[p].cluster;
        let stop_us = self.bring_online(to) + self.platform.sched.switch_transfer_us;
        for i in 0..self.policies[p].cpus.len() {
            let cpu = self.policies[p].cpus[i];
            let switcher = self.switcher.as_ref().expect("only a switcher switches");
            let partner = switcher.partner(self.sched.core_of[cpu]).expect("a switched CPU is paired");
            self.move_cpu_to_core(cpu, partner).expect("a platform core");
            // the outbound core is gated by the switch itself; the inbound one is powered
            if self.cpus[cpu].core_off_since_us.is_some() {
                self.integrate();
                self.cpus[cpu].core_off_since_us = None;
            }
            self.out.cpu_switches += 1;
            if let Some(t) = self.sched.rqs[cpu].curr {
                let refill_us = self.cold_cache_us(t, from, to);
                self.threads[t].progress.stolen_us += stop_us + refill_us;
            }
        }
        self.policies[p].cluster = to;
        if !self.policies.iter().any(|q| q.cluster == from) {
            self.take_offline(from);
        }
    }

    /// Cluster `c` takes a switched-in CPU: powered up if it was off (MCPM powers a cluster up
    /// for its first inbound core); returns the power-up latency, µs.
    fn bring_online(&mut self, c: usize) -> f64 {
        if self.hw.clusters[c].online {
            return self.power_up(c); // cpuidle may have powered it down
        }
        self.integrate();
        let now = self.now_us;
        let hw = &mut self.hw.clusters[c];
        hw.online = true;
        hw.powered = true;
        hw.off_us += (now - hw.off_since_us).max(0.0);
        self.dirty = true;
        let cluster = &self.platform.clusters[c];
        self.hw.energy.add_dynamic_mj(c, cluster.cluster_off_wakeup_energy_uj * 1e-3);
        cluster.cluster_off_us().map_or(0.0, |(exit_us, _)| exit_us as f64)
    }

    /// No logical CPU uses cluster `c` any more: the last core out powers it down.
    fn take_offline(&mut self, c: usize) {
        self.integrate();
        let now = self.now_us;
        let hw = &mut self.hw.clusters[c];
        hw.online = false;
        if hw.powered {
            hw.powered = false;
            hw.off_since_us = now;
        }
        self.dirty = true;
    }
}
