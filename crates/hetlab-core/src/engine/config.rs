//! What a simulation run is asked to do: governors per cluster, placement, idle states,
//! hotplugged clusters, tracing and the seed.

use crate::platform::Platform;
use crate::sched::SchedPolicy;
use crate::tree::AntiSnoopModel;

/// How a cluster's frequency is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct GovernorSetting {
    pub name: String,
    pub tunables: Vec<(String, f64)>,
}

/// Idle states the simulated cpuidle may enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuIdle {
    /// WFI only: idle CPUs are clock-gated, clusters stay powered and are snooped. The seed
    /// paper's board behaves this way (its idle cluster is snooped), so this is the default.
    Wfi,
    /// WFI, plus cluster power-down (the big_little cpuidle driver's C1) when every CPU of a
    /// cluster is idle and the next known wake-up is further away than the target residency.
    /// A powered-down cluster leaks nothing and its CCI port is disabled: it is not snooped.
    ClusterOff,
}

impl CpuIdle {
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "wfi" => Ok(CpuIdle::Wfi),
            "cluster-off" => Ok(CpuIdle::ClusterOff),
            other => Err(format!("unknown cpuidle policy '{other}'; known: wfi, cluster-off")),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SimConfig {
    pub seed: u64,
    pub scheduler: SchedPolicy,
    /// One per cluster, in platform order.
    pub governors: Vec<GovernorSetting>,
    pub model: Option<AntiSnoopModel>,
    /// Clusters whose CPUs are hotplugged off (cluster powered down, CCI port disabled).
    pub offline_clusters: Vec<usize>,
    /// Restrict every task to this cluster's CPUs (like `taskset`).
    pub cluster: Option<usize>,
    /// Which idle states cpuidle may use.
    pub cpuidle: CpuIdle,
    pub trace: bool,
    /// Stop after this much simulated time even if tasks remain.
    pub time_limit_s: f64,
}

impl SimConfig {
    /// Resolves a governor name for every cluster. Besides the governors, two of the seed
    /// paper's comparison points are named configurations: `all-max` (performance everywhere)
    /// and `idle-min` (the active cluster at max, the others at min). `fixed_khz` pins a
    /// cluster's frequency as the userspace governor would (`--freq`).
    pub fn governor_plan(
        platform: &Platform,
        governor: &str,
        tunables: &[(String, f64)],
        active_cluster: Option<usize>,
        fixed_khz: &[(usize, u32)],
    ) -> Result<Vec<GovernorSetting>, String> {
        let n = platform.clusters.len();
        let mut plan: Vec<GovernorSetting> = match governor {
            "all-max" => (0..n).map(|_| GovernorSetting { name: "performance".into(), tunables: vec![] }).collect(),
            "idle-min" => {
                let active =
                    active_cluster.ok_or("governor idle-min needs --cluster to know which cluster is active")?;
                (0..n)
                    .map(|c| GovernorSetting {
                        name: if c == active { "performance" } else { "powersave" }.into(),
                        tunables: vec![],
                    })
                    .collect()
            }
            name => (0..n).map(|_| GovernorSetting { name: name.into(), tunables: tunables.to_vec() }).collect(),
        };
        for &(c, khz) in fixed_khz {
            let cluster = &platform.clusters[c];
            if !cluster.opps.iter().any(|o| o[0] == khz) {
                return Err(format!(
                    "--freq {}={khz}: not an OPP of cluster {}; available kHz: {}",
                    cluster.name,
                    cluster.name,
                    cluster.freqs_khz().iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            plan[c] = GovernorSetting { name: "userspace".into(), tunables: vec![("setspeed_khz".into(), khz as f64)] };
        }
        Ok(plan)
    }
}
