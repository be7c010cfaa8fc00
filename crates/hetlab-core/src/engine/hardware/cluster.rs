//! A hardware cluster's state: its clock, power state, temperature and CCI port, and what it
//! has accumulated (OPP residency, transitions, power-downs).

use crate::model::cci::CciPort;
use crate::model::energy::{ClusterEnergy, ClusterPower};
use crate::model::thermal::ThermalNode;
use crate::platform::Cluster;
use crate::result::ClusterReport;

#[derive(Clone)]
pub(super) struct ClusterHw {
    pub(super) online: bool,
    /// Online and not in cluster power-down.
    pub(super) powered: bool,
    pub(super) cur_khz: u32,
    /// Index of `cur_khz` in the cluster's OPP table.
    pub(super) cur_opp: usize,
    pub(super) power: ClusterPower,
    pub(super) thermal: ThermalNode,
    pub(super) thermal_cap_khz: u32,
    pub(super) min_thermal_cap_khz: u32,
    /// Its CCI slave port; `None` on a platform without a CCI.
    pub(super) port: Option<CciPort>,
    /// Time at each OPP while online, and the clock integrated over it.
    residency_us: Vec<f64>,
    khz_us: f64,
    /// Time not online (no residency counted), µs.
    offline_us: f64,
    pub(super) transitions: u64,
    /// Cluster power-down/up cycles (cpuidle C1).
    pub(super) power_downs: u64,
    /// Time spent powered down before the last power-up, and when the current power-down
    /// began, µs.
    pub(super) off_us: f64,
    pub(super) off_since_us: f64,
}

impl ClusterHw {
    /// A cluster at boot: at its top OPP, as the bootloader leaves it (the governor takes over
    /// at its start), at `temp_c`, online and powered if `online`.
    pub(super) fn boot(cluster: &Cluster, online: bool, temp_c: f64) -> ClusterHw {
        ClusterHw {
            online,
            powered: online,
            cur_khz: cluster.max_khz(),
            cur_opp: cluster.opps.len() - 1,
            power: ClusterPower::default(),
            thermal: ThermalNode::at(temp_c),
            thermal_cap_khz: cluster.max_khz(),
            min_thermal_cap_khz: cluster.max_khz(),
            port: cluster.cci_port.map(CciPort::new),
            residency_us: vec![0.0; cluster.opps.len()],
            khz_us: 0.0,
            transitions: 0,
            power_downs: 0,
            off_us: 0.0,
            offline_us: 0.0,
            off_since_us: 0.0,
        }
    }

    /// `dt` µs at the current clock: residency while online (a cluster no CPU is online on,
    /// hotplugged off or left by the switcher, has no cpufreq policy clocking it: no time in
    /// any state), temperature at the current power, the CCI port's counters.
    pub(super) fn integrate(&mut self, dt: f64, ambient_c: f64, cluster: &Cluster, decay: f64) {
        if self.online {
            self.residency_us[self.cur_opp] += dt;
            self.khz_us += self.cur_khz as f64 * dt;
        } else {
            self.offline_us += dt;
        }
        self.thermal.step_decayed(ambient_c, self.power.total_mw, cluster, dt * 1e-6, decay);
        if let Some(port) = &mut self.port {
            port.integrate(dt);
        }
    }

    /// The report at `now_us`; `hotplugged` if the run took it offline (its power-down is no
    /// cpuidle state then).
    pub(super) fn report(
        &self,
        cluster: &Cluster,
        governor: String,
        energy: &ClusterEnergy,
        now_us: f64,
        hotplugged: bool,
    ) -> ClusterReport {
        let online_us = now_us - self.offline_us;
        let off_now_us = if !self.powered && !hotplugged { (now_us - self.off_since_us).max(0.0) } else { 0.0 };
        ClusterReport {
            name: cluster.name.clone(),
            governor,
            avg_freq_khz: if online_us > 0.0 { self.khz_us / online_us } else { self.cur_khz as f64 },
            residency: cluster.opps.iter().zip(&self.residency_us).map(|(o, &us)| (o[0], us * 1e-6)).collect(),
            dynamic_j: energy.dynamic_j(),
            static_j: energy.static_j(),
            transitions: self.transitions,
            peak_temp_c: self.thermal.peak_temp_c,
            mean_temp_c: self.thermal.mean_temp_c(),
            end_temp_c: self.thermal.temp_c,
            min_thermal_cap_khz: self.min_thermal_cap_khz,
            online: self.online,
            power_downs: self.power_downs,
            off_s: (self.off_us + off_now_us) * 1e-6,
        }
    }
}
