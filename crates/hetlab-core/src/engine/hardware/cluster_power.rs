//! Each cluster's power from a solution of the model. Its dynamic part — the cores by their
//! activity, the powered cluster's clocked shared logic and the snoops it serves — is a
//! function of the solution (the running CPUs' stall shares in CPU order, the ports' read
//! rates) and the clusters' clocks and power states, so it is worked out with the solution and
//! kept with it; the leakage moves with the temperature and is worked out at every re-solution.

use super::cluster::ClusterHw;
use super::load::{ClusterCounts, CpuLoad};
use crate::model::power;
use crate::platform::Platform;
use crate::result::MAX_CLUSTERS;

/// The voltage of cluster `c`'s current OPP (`hw`), V.
pub(super) fn volts(platform: &Platform, c: usize, hw: &ClusterHw) -> f64 {
    platform.clusters[c].opps[hw.cur_opp][1] as f64 * 1e-6
}

/// Sets each cluster's power: its dynamic part — `kept` where the solution's is known (given
/// again or reused), else worked out: every core running a thread by its activity
/// (`stall_share(thread)`), summed in CPU order (an idle or offline core is clock-gated: its +0
/// is not added), the cluster's active power when a core runs, and, while it is powered, its
/// clocked shared logic and the snoops of the other clusters' reads — and its leakage at its
/// temperature now: a core no online logical CPU is on is power-gated (the switcher's outbound
/// core), and so is one cpuidle powered down (`core_off`; `counts`: those of `cpus`). Returns
/// the dynamic part.
pub(super) fn set_power(
    platform: &Platform,
    cpus: &[CpuLoad],
    counts: &ClusterCounts,
    clusters: &mut [ClusterHw],
    kept: Option<&[f64; MAX_CLUSTERS]>,
    stall_share: impl Fn(usize) -> f64,
) -> [f64; MAX_CLUSTERS] {
    let mut volts_now = [0.0; MAX_CLUSTERS];
    for (c, cl) in clusters.iter().enumerate() {
        volts_now[c] = volts(platform, c, cl);
    }
    let dynamic = match kept {
        Some(kept) => *kept,
        None => {
            let mut dynamic = [0.0; MAX_CLUSTERS];
            let mut busy = [false; MAX_CLUSTERS];
            for cpu in cpus {
                if let Some(r) = cpu.running.filter(|_| cpu.online) {
                    let c = cpu.cluster;
                    let core = platform.core_type_of(c);
                    let activity = power::activity(core, stall_share(r.thread));
                    busy[c] = true;
                    dynamic[c] += power::core_dynamic_mw(core, volts_now[c], clusters[c].cur_khz, activity);
                }
            }
            let mut reads_per_us = [0.0; MAX_CLUSTERS];
            for (c, cl) in clusters.iter().enumerate() {
                reads_per_us[c] = cl.port.as_ref().map_or(0.0, |p| p.read_rate_per_us());
            }
            let all_reads_per_us: f64 = reads_per_us.iter().sum();
            for (c, hw) in clusters.iter().enumerate() {
                let cluster = &platform.clusters[c];
                if busy[c] {
                    dynamic[c] += cluster.active_mw_at(hw.cur_opp);
                }
                if hw.powered {
                    dynamic[c] += power::cluster_clock_mw(cluster, volts_now[c], hw.cur_khz);
                    dynamic[c] += power::snoop_lookup_mw(cluster, volts_now[c], all_reads_per_us - reads_per_us[c]);
                }
            }
            dynamic
        }
    };
    for (c, hw) in clusters.iter_mut().enumerate() {
        let cluster = &platform.clusters[c];
        let gated_cores = cluster.cpus.len().saturating_sub(counts.online[c] as usize) + counts.core_off[c] as usize;
        hw.power.static_mw = if hw.powered {
            power::cluster_static_mw(cluster, volts_now[c], hw.thermal.temp_c, gated_cores)
        } else {
            0.0
        };
        hw.power.total_mw = dynamic[c] + hw.power.static_mw;
    }
    dynamic
}
