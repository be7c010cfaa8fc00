//! The kernel's Energy Model (EM) of the CPUs, as Linux 5.10 builds and reads it
//! (kernel/power/energy_model.c `em_create_perf_table`, include/linux/energy_model.h
//! `em_cpu_energy`; shared/reference/linux-governors.md §6.2, sched-rcu-platforms.md §3).
//!
//! One performance domain per cpufreq policy (a cluster), one performance state per OPP with
//! its frequency, the power of one fully busy CPU there and a cost. The power comes either from
//! an explicit table in the platform file (`[[energy_model]]`, what a driver would register), or
//! as the kernel derives it from the device tree (drivers/opp/of.c `_get_power`, 5.10):
//! `dynamic-power-coefficient · mV² · MHz / 10⁹` mW, truncated to whole mW — the model's own
//! C·V²·f ([`power::dynamic_mw`]) at activity 1 on the kernel's integer mV and MHz, with the
//! device tree's coefficient even where the platform gives a measured one the simulated cores
//! draw (the kernel knows only the DT's; the 5422's A15 draws about 1.3x it).
//!
//! Leakage is left out on purpose: the kernel's DT-derived EM has dynamic power only, so EAS
//! on a real 5422 decides without it while the silicon leaks; the simulated hardware leaks
//! (`power::cluster_static_mw`) and EAS here is as blind to it as the kernel's. A platform file
//! can give total powers in an explicit table instead (the EM's `power` "can be a total power:
//! static and dynamic").
//!
//! In the kernel the EM belongs to the PM core and has readers besides the scheduler (the
//! thermal power allocator); here EAS is its one reader and its energy estimate asks schedutil's
//! frequency rule, so it lives in `sched/` beside EAS, derived from the platform and the power
//! model's formula.
//!
//! Cost and energy follow 5.10 (before "PM: EM: Optimize em_cpu_energy() and remove division",
//! 1b600da51073, ≈v6.9): `cost = power · fmax / f`, and a domain's energy is
//! `cost(state) · Σutil / scale_cpu` at the lowest state whose frequency reaches what schedutil
//! would ask for the busiest CPU ([`schedutil::raw_next_khz`], with its 1.25 headroom). Each
//! state also carries its `performance` (the capacity at its frequency, `capacity · f / fmax`,
//! the field today's EM has) for reading.

use crate::governor::schedutil;
use crate::model::power;
use crate::platform::{Platform, EM_MAX_POWER_MW};

/// One performance state (`struct em_perf_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfState {
    pub frequency_khz: u32,
    /// Capacity at this frequency, 0..=1024: `capacity · f / fmax`.
    pub performance: u64,
    /// Power of one fully busy CPU of the domain, mW.
    pub power_mw: u64,
    /// `power · fmax / f` (5.10), mW-equivalent at fmax.
    pub cost: u64,
}

/// One performance domain (`struct em_perf_domain`): a cpufreq policy's CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfDomain {
    /// The platform cluster it describes.
    pub cluster: usize,
    /// Its CPUs at boot (platform CPU numbers).
    pub cpus: Vec<usize>,
    /// `arch_scale_cpu_capacity` of its CPUs (`scale_cpu`), 0..=1024.
    pub capacity: u64,
    /// Ascending frequency.
    pub states: Vec<PerfState>,
}

impl PerfDomain {
    /// `em_create_perf_table` (5.10): the states from `(kHz, mW)` pairs, ascending, with their
    /// cost; the kernel refuses powers of 0 or above `EM_MAX_POWER`, and so does this.
    pub fn new(cluster: usize, cpus: Vec<usize>, capacity: u64, table: &[(u32, u64)]) -> Result<PerfDomain, String> {
        let Some(&(fmax, _)) = table.last() else {
            return Err("an energy model needs at least one performance state".into());
        };
        if let Some(&(khz, mw)) = table.iter().find(|&&(_, mw)| mw == 0 || mw > u64::from(EM_MAX_POWER_MW)) {
            return Err(format!(
                "power {mw} mW at {khz} kHz is outside 1..={EM_MAX_POWER_MW}, which the kernel refuses (EAS would be off)"
            ));
        }
        let fmax = u64::from(fmax);
        let states = table
            .iter()
            .map(|&(khz, power_mw)| PerfState {
                frequency_khz: khz,
                performance: capacity * u64::from(khz) / fmax,
                power_mw,
                cost: fmax * power_mw / u64::from(khz),
            })
            .collect();
        Ok(PerfDomain { cluster, cpus, capacity, states })
    }

    pub fn max_khz(&self) -> u32 {
        self.states[self.states.len() - 1].frequency_khz
    }

    /// The state `em_cpu_energy` prices for a domain whose busiest CPU has `max_util`: the
    /// lowest one at or above the frequency schedutil would request, else the highest.
    pub fn state_for(&self, max_util: u64) -> &PerfState {
        let want_khz = schedutil::raw_next_khz(self.max_khz(), max_util as u32, self.capacity as u32);
        self.states.iter().find(|s| s.frequency_khz >= want_khz).unwrap_or(&self.states[self.states.len() - 1])
    }

    /// The state 6.12's `em_cpu_energy` prices for a performance request `perf` (the headroom
    /// already in it, `sched::cpu_perf`): the lowest whose `performance` reaches it
    /// (`em_pd_get_efficient_state`; every state counts as efficient here), else the highest.
    pub fn state_for_perf(&self, perf: u64) -> &PerfState {
        self.states.iter().find(|s| s.performance >= perf).unwrap_or(&self.states[self.states.len() - 1])
    }

    /// [`energy`](Self::energy) at [`state_for_perf`](Self::state_for_perf)'s state (Linux
    /// 6.8+'s performance rule; the cost stays 5.10's).
    pub fn energy_for_perf(&self, perf: u64, sum_util: u64) -> u64 {
        if sum_util == 0 {
            return 0;
        }
        self.state_for_perf(perf).cost * sum_util / self.capacity.max(1)
    }

    /// `em_cpu_energy` (5.10): the energy the domain's CPUs use over a scheduling period with
    /// these utilisations (busy time at the predicted state; idle costs nothing in the EM), in
    /// the EM's units: `cost · Σutil / scale_cpu`.
    pub fn energy(&self, max_util: u64, sum_util: u64) -> u64 {
        if sum_util == 0 {
            return 0;
        }
        self.state_for(max_util).cost * sum_util / self.capacity.max(1)
    }
}

/// The EM of every CPU: one domain per cluster, in cluster order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnergyModel {
    pub domains: Vec<PerfDomain>,
}

impl EnergyModel {
    /// The platform's EM: its explicit table where it gives one, else the kernel's derivation
    /// from the OPPs and `dynamic_power_coefficient`.
    pub fn of(platform: &Platform) -> Result<EnergyModel, String> {
        let domains = (0..platform.clusters.len())
            .map(|c| {
                let cluster = &platform.clusters[c];
                let table: Vec<(u32, u64)> = match platform.energy_model_table(c) {
                    Some(spec) => spec.ps.iter().map(|s| (s.frequency_khz, u64::from(s.power_mw))).collect(),
                    None => cluster.opps.iter().map(|&[khz, uv]| (khz, dt_power_mw(platform, c, khz, uv))).collect(),
                };
                let capacity = u64::from(platform.cpu_capacity(c));
                PerfDomain::new(c, cluster.cpus.clone(), capacity, &table)
                    .map_err(|e| format!("energy model of cluster '{}': {e}", cluster.name))
            })
            .collect::<Result<_, _>>()?;
        Ok(EnergyModel { domains })
    }
}

/// `_get_power` (drivers/opp/of.c, 5.10): a CPU's dynamic power at an OPP from the DT's
/// `dynamic-power-coefficient`, in the kernel's integers: µV → mV and kHz → MHz truncated, the
/// product divided by 10⁹ and truncated to mW.
fn dt_power_mw(platform: &Platform, cluster: usize, khz: u32, uv: u32) -> u64 {
    let mv = uv / 1000;
    let mhz = khz / 1000;
    let coefficient = platform.core_type_of(cluster).dynamic_power_coefficient;
    let mw = power::dynamic_mw(coefficient, f64::from(mv) / 1000.0, mhz * 1000, 1.0);
    // truncation as do_div does; the nudge keeps an exact integer from flooring one below
    (mw + 1e-9).floor() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exynos_em() -> EnergyModel {
        EnergyModel::of(&Platform::builtin("exynos5422").unwrap()).unwrap()
    }

    #[test]
    fn exynos5422_states_from_the_device_tree() {
        let em = exynos_em();
        let (little, big) = (&em.domains[0], &em.domains[1]);
        assert_eq!((little.cpus.as_slice(), big.cpus.as_slice()), ([0, 1, 2, 3].as_slice(), [4, 5, 6, 7].as_slice()));
        assert_eq!((little.capacity, big.capacity), (377, 1024));
        assert_eq!((little.states.len(), big.states.len()), (13, 19));
        // A7 (C = 90): 200 MHz at 900 mV: 90·900²·200/10⁹ = 14.58 -> 14 mW; cost 1400000·14/200000 = 98
        assert_eq!(little.states[0], PerfState { frequency_khz: 200_000, performance: 53, power_mw: 14, cost: 98 });
        // 500 MHz at 1000 mV: 90·10⁶·500/10⁹ = 45 mW exactly; cost 1400000·45/500000 = 126
        assert_eq!((little.states[3].power_mw, little.states[3].cost), (45, 126));
        // 1400 MHz at 1275 mV: 90·1275²·1400/10⁹ = 204.8 -> 204 mW = its own cost
        assert_eq!(
            little.states[12],
            PerfState { frequency_khz: 1_400_000, performance: 377, power_mw: 204, cost: 204 }
        );
        // A15 (C = 310): 200 MHz at 900 mV: 310·810000·200/10⁹ = 50.2 -> 50; cost 2000000·50/200000 = 500
        assert_eq!((big.states[0].power_mw, big.states[0].cost, big.states[0].performance), (50, 500, 102));
        // 2000 MHz at 1312.5 mV -> 1312 mV: 310·1312²·2000/10⁹ = 1067.2 -> 1067
        assert_eq!((big.states[18].power_mw, big.states[18].cost), (1067, 1067));
        // 1800 MHz at 1237.5 mV -> 1237: 310·1237²·1800/10⁹ = 853.8 -> 853; cost 2000000·853/1800000 = 947
        assert_eq!((big.states[16].power_mw, big.states[16].cost), (853, 947));
    }

    #[test]
    fn dt_power_is_c_v2_f_within_the_kernels_truncation() {
        let p = Platform::builtin("exynos5422").unwrap();
        for (c, d) in exynos_em().domains.iter().enumerate() {
            for (s, &[khz, uv]) in d.states.iter().zip(&p.clusters[c].opps) {
                let exact = power::dynamic_mw(p.core_type_of(c).dynamic_power_coefficient, uv as f64 * 1e-6, khz, 1.0);
                assert!(exact - s.power_mw as f64 >= 0.0 && exact - (s.power_mw as f64) < 2.0, "{khz}: {exact}");
            }
        }
    }

    #[test]
    fn em_cpu_energy_by_hand() {
        let em = exynos_em();
        let little = &em.domains[0];
        // max_util 100 of 377: schedutil asks 1750000·100/377 = 464190 kHz -> 500 MHz (cost 126);
        // Σutil 150: 126·150/377 = 50.13 -> 50
        assert_eq!(little.state_for(100).frequency_khz, 500_000);
        assert_eq!(little.energy(100, 150), 50);
        // max_util 300: 1750000·300/377 = 1392572 -> 1400 MHz (cost 204); Σutil 300 -> 204·300/377 = 162
        assert_eq!(little.energy(300, 300), 162);
        // above capacity: the top state
        assert_eq!(little.state_for(5000).frequency_khz, 1_400_000);
        assert_eq!(little.energy(0, 0), 0);
        // the same 150 of work on big: max 150 of 1024 asks 2500000·150/1024 = 366210 -> 400 MHz
        // (900 mV: 310·810000·400/10⁹ = 100.4 -> 100 mW, cost 2000000·100/400000 = 500):
        // 500·150/1024 = 73, about 1.5x the LITTLE's 50
        let big = &em.domains[1];
        assert_eq!(big.state_for(150).frequency_khz, 400_000);
        assert_eq!(big.energy(150, 150), 73);
    }

    #[test]
    fn an_explicit_table_replaces_the_derivation_and_is_validated() {
        let text = crate::platform::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5422").unwrap().1;
        let little_ps: Vec<String> = [
            200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 1000000, 1100000, 1200000, 1300000, 1400000,
        ]
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{{ frequency_khz = {f}, power_mw = {} }}", 20 + 20 * i))
        .collect();
        let table = format!("\n[[energy_model]]\ncpus = [3, 2, 1, 0]\nps = [{}]\n", little_ps.join(", "));
        let p = Platform::from_toml("x.toml", &format!("{text}{table}")).unwrap();
        let em = EnergyModel::of(&p).unwrap();
        // LITTLE from the table: 20 mW at 200 MHz, cost 1400000·20/200000 = 140; big still derived
        assert_eq!((em.domains[0].states[0].power_mw, em.domains[0].states[0].cost), (20, 140));
        assert_eq!(em.domains[0].states[12].power_mw, 260);
        assert_eq!(em.domains[1], exynos_em().domains[1]);

        let bad = |from: &str, to: &str| {
            let t = format!("{text}{}", table.replacen(from, to, 1));
            Platform::from_toml("x.toml", &t).unwrap_err()
        };
        let e = bad("cpus = [3, 2, 1, 0]", "cpus = [0, 1, 4]");
        assert!(e.contains("energy_model[0].cpus") && e.contains("one cpufreq policy"), "{e}");
        let e = bad("frequency_khz = 300000", "frequency_khz = 350000");
        assert!(e.contains("energy_model[0].ps") && e.contains("OPPs"), "{e}");
        let e = bad("power_mw = 20 }", "power_mw = 0 }");
        assert!(e.contains("energy_model[0].ps[0]") && e.contains("EM_MAX_POWER"), "{e}");
        let e = bad("power_mw = 20 }", "power_mw = 70000 }");
        assert!(e.contains("1..=65535"), "{e}");
        let e = bad("power_mw = 20 }", "power_mw = 20, cost = 140 }");
        assert!(e.contains("unknown field `cost`"), "{e}");
        let twice = Platform::from_toml("x.toml", &format!("{text}{table}{table}")).unwrap_err();
        assert!(twice.contains("two energy models"), "{twice}");
    }

    #[test]
    fn a_derived_power_of_zero_is_refused_as_the_kernel_does() {
        let d = PerfDomain::new(0, vec![0], 1024, &[(100_000, 0), (200_000, 5)]);
        assert!(d.unwrap_err().contains("outside 1..=65535"));
        assert!(PerfDomain::new(0, vec![0], 1024, &[]).is_err());
    }
}
