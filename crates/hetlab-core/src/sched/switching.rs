//! big.LITTLE switching modes: which physical cores the OS's logical CPUs run on, and when
//! they move. Three ways big.LITTLE SoCs have been run (ARM DEN0024A ch. 16; ref
//! sched-rcu-platforms.md §4):
//!
//! - **GTS** (global task scheduling, big.LITTLE MP): every core is a logical CPU; the
//!   placement policy (`hmp`, `eas`, ...) moves threads. Nothing here acts.
//! - **IKS** (the in-kernel switcher, CPU migration): each core of the first cluster is paired
//!   with one of the other cluster (`bL_switcher_halve_cpus`); the OS sees one logical CPU per
//!   pair, with its own cpufreq policy over a *virtual* OPP table, and the pair's active core
//!   changes when the governor asks for a frequency outside the current core's range
//!   (`vexpress-spc-cpufreq.c`, formerly `arm_big_little.c`).
//! - **Cluster switching** (cluster migration, Exynos 5410): one policy over all logical CPUs,
//!   the same virtual table and rule, and the whole cluster switches at once.
//!
//! This module owns the rules as functions of their inputs (the virtual table, the switch
//! rule, the pairing); the engine (`engine/switcher.rs`) applies them: it moves logical CPUs
//! onto their partner cores, pays the switch, and powers clusters up and down.

use crate::platform::Platform;

/// How logical CPUs map onto the cores of a two-cluster big.LITTLE SoC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwitchingMode {
    /// Every core visible; no switcher (the default).
    #[default]
    Gts,
    /// The in-kernel switcher: one logical CPU per big/LITTLE pair.
    Iks,
    /// Cluster migration: one cluster online at a time.
    ClusterSwitching,
}

impl SwitchingMode {
    pub const ALL: [SwitchingMode; 3] = [SwitchingMode::Gts, SwitchingMode::Iks, SwitchingMode::ClusterSwitching];

    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|m| m.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|m| m.name()).collect();
            format!("unknown switching mode '{name}'; known: {}", known.join(", "))
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SwitchingMode::Gts => "gts",
            SwitchingMode::Iks => "iks",
            SwitchingMode::ClusterSwitching => "cluster-switching",
        }
    }

    /// What the mode does, one line.
    pub fn summary(self) -> &'static str {
        match self {
            SwitchingMode::Gts => "global task scheduling: every core is a CPU the scheduler places threads on",
            SwitchingMode::Iks => {
                "in-kernel switcher: one CPU per big/LITTLE core pair, its own cpufreq policy over the virtual OPP \
                 table (LITTLE kHz halved); the pair's core changes with the frequency asked"
            }
            SwitchingMode::ClusterSwitching => {
                "cluster migration: one cluster online, one cpufreq policy over the virtual OPP table; the whole \
                 cluster switches with the frequency asked"
            }
        }
    }
}

/// The switcher's rules for one platform.
#[derive(Debug, Clone)]
pub struct Switcher {
    pub mode: SwitchingMode,
    /// The cluster of cpu0, whose cores are the logical CPUs at boot (`bL_switcher_halve_cpus`
    /// keeps them and offlines their partners).
    pub first: usize,
    pub big: usize,
    pub little: usize,
    /// (core of the first cluster, its partner in the other), one per logical CPU, in the first
    /// cluster's order.
    pub pairs: Vec<(usize, usize)>,
    /// The virtual OPP table, kHz ascending: the LITTLE OPPs halved, then the big ones not
    /// already present (`merge_cluster_tables`).
    pub virtual_khz: Vec<u32>,
    /// The lowest big OPP (`clk_big_min`) and the top LITTLE OPP halved (`clk_little_max`).
    big_min_khz: u32,
    little_max_virtual_khz: u32,
}

impl Switcher {
    /// The switcher of `mode` on `platform`; `None` under GTS. The switcher needs two clusters
    /// of different capacity (the driver's A15 and A7 clusters); cluster migration also needs
    /// as many cores in each (DEN0024A 16.2.1).
    pub fn new(platform: &Platform, mode: SwitchingMode) -> Result<Option<Switcher>, String> {
        if mode == SwitchingMode::Gts {
            return Ok(None);
        }
        let [a, b] = [0, 1];
        if platform.clusters.len() != 2 || platform.cpu_capacity(a) == platform.cpu_capacity(b) {
            return Err(format!(
                "switching mode {}: platform {} needs two clusters of different capacity (a big and a LITTLE one); \
                 use gts",
                mode.name(),
                platform.name
            ));
        }
        let (big, little) = if platform.cpu_capacity(a) > platform.cpu_capacity(b) { (a, b) } else { (b, a) };
        let first = platform.clusters.iter().position(|c| c.cpus.contains(&0)).unwrap_or(0);
        let other = 1 - first;
        let (first_cpus, other_cpus) = (&platform.clusters[first].cpus, &platform.clusters[other].cpus);
        if mode == SwitchingMode::ClusterSwitching && first_cpus.len() != other_cpus.len() {
            return Err(format!(
                "switching mode cluster-switching: clusters '{}' and '{}' of platform {} have {} and {} cores; cluster \
                 migration needs as many in each (use iks)",
                platform.clusters[first].name,
                platform.clusters[other].name,
                platform.name,
                first_cpus.len(),
                other_cpus.len()
            ));
        }
        // bL_switcher_halve_cpus: each CPU of the first cluster takes the last partner still
        // available ("odd pairings on purpose"); CPUs left without one are offlined.
        let mut available: Vec<usize> = other_cpus.clone();
        let mut pairs = Vec::new();
        for &cpu in first_cpus {
            let Some(partner) = available.pop() else { break };
            pairs.push((cpu, partner));
        }
        let little_table: Vec<u32> = platform.clusters[little].freqs_khz().iter().map(|f| f >> 1).collect();
        let big_table = platform.clusters[big].freqs_khz();
        let mut virtual_khz = little_table.clone();
        virtual_khz.extend(big_table.iter().filter(|f| !little_table.contains(f)));
        virtual_khz.sort_unstable();
        Ok(Some(Switcher {
            mode,
            first,
            big,
            little,
            pairs,
            virtual_khz,
            big_min_khz: big_table[0],
            little_max_virtual_khz: *little_table.last().expect("a cluster has OPPs"),
        }))
    }

    /// The cluster a logical CPU on cluster `on` runs on after asking for `virtual_khz`
    /// (`ve_spc_cpufreq_set_target`): down to LITTLE below the lowest big OPP, up to big above
    /// the top LITTLE one; in between it stays.
    pub fn cluster_for(&self, on: usize, virtual_khz: u32) -> usize {
        if on == self.big && virtual_khz < self.big_min_khz {
            self.little
        } else if on == self.little && virtual_khz > self.little_max_virtual_khz {
            self.big
        } else {
            on
        }
    }

    /// The clock `virtual_khz` means on `cluster` (`ACTUAL_FREQ`: LITTLE kHz are shown halved).
    pub fn actual_khz(&self, cluster: usize, virtual_khz: u32) -> u32 {
        if cluster == self.little {
            virtual_khz << 1
        } else {
            virtual_khz
        }
    }

    /// The virtual kHz of `cluster`'s clock `actual_khz` (`VIRT_FREQ`).
    pub fn virtual_of(&self, cluster: usize, actual_khz: u32) -> u32 {
        if cluster == self.little {
            actual_khz >> 1
        } else {
            actual_khz
        }
    }

    /// The other core of `core`'s pair, if it has one.
    pub fn partner(&self, core: usize) -> Option<usize> {
        self.pairs.iter().find_map(|&(a, b)| {
            if a == core {
                Some(b)
            } else if b == core {
                Some(a)
            } else {
                None
            }
        })
    }

    /// Whether logical CPU `cpu` (core `cpu` at boot) is online: the first cluster's paired
    /// cores are; their partners and unpaired cores are not.
    pub fn online_at_boot(&self, cpu: usize) -> bool {
        self.pairs.iter().any(|&(a, _)| a == cpu)
    }

    /// The cpufreq policies' CPUs: one per logical CPU under IKS (`ve_spc_cpufreq_init` with
    /// switching: `policy->cpus` is the CPU alone), one over all under cluster switching.
    pub fn policies(&self) -> Vec<Vec<usize>> {
        let cpus: Vec<usize> = self.pairs.iter().map(|&(a, _)| a).collect();
        match self.mode {
            SwitchingMode::Iks => cpus.into_iter().map(|c| vec![c]).collect(),
            _ => vec![cpus],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn platform(name: &str) -> Platform {
        Platform::builtin(name).expect("built in")
    }

    #[test]
    fn tc2_virtual_table_and_rule_are_the_drivers() {
        // ref sched-rcu-platforms.md §4.2 [D]: A7 350-1000, A15 500-1200 MHz give 175 ... 500
        // (all A7), then 600 ... 1200; A15-500 dropped as a duplicate of A7-1000 halved.
        let p = platform("tc2");
        let sw = Switcher::new(&p, SwitchingMode::Iks).unwrap().unwrap();
        let little: Vec<u32> = p.clusters[sw.little].freqs_khz().iter().map(|f| f / 2).collect();
        assert_eq!(&sw.virtual_khz[..little.len()], &little[..]);
        assert!(!sw.virtual_khz[little.len()..].contains(&500_000));
        assert!(sw.virtual_khz.windows(2).all(|w| w[0] < w[1]));
        // the rule: 450 MHz virtual on an A15 goes to the A7s; 600 on an A7 to the A15s;
        // 500 (the overlap) stays where it is
        assert_eq!(sw.cluster_for(sw.big, 450_000), sw.little);
        assert_eq!(sw.cluster_for(sw.little, 600_000), sw.big);
        assert_eq!(sw.cluster_for(sw.big, 500_000), sw.big);
        assert_eq!(sw.cluster_for(sw.little, 500_000), sw.little);
        assert_eq!(sw.actual_khz(sw.little, 500_000), 1_000_000);
        assert_eq!(sw.virtual_of(sw.little, 1_000_000), 500_000);
    }

    #[test]
    fn pairing_takes_the_last_available_partner_and_offlines_the_rest() {
        // TC2: 2 A15 (cpu0-1) + 3 A7 (cpu2-4): cpu0-cpu4, cpu1-cpu3; cpu2 has no partner
        let p = platform("tc2");
        let sw = Switcher::new(&p, SwitchingMode::Iks).unwrap().unwrap();
        let first = &p.clusters[sw.first].cpus;
        assert!(first.contains(&0));
        assert_eq!(sw.pairs.len(), first.len().min(p.ncpus() - first.len()));
        let other = &p.clusters[1 - sw.first].cpus;
        assert_eq!(sw.pairs[0], (first[0], *other.last().unwrap()));
        let online: Vec<usize> = (0..p.ncpus()).filter(|&c| sw.online_at_boot(c)).collect();
        assert_eq!(online, sw.pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(sw.policies().len(), sw.pairs.len());
        // cluster migration needs equal clusters
        assert!(Switcher::new(&p, SwitchingMode::ClusterSwitching).unwrap_err().contains("as many in each"));
        let p = platform("exynos5433");
        let cs = Switcher::new(&p, SwitchingMode::ClusterSwitching).unwrap().unwrap();
        assert_eq!(cs.policies(), vec![vec![0, 1, 2, 3]]);
        assert_eq!(cs.partner(0), Some(7));
        assert_eq!(cs.partner(7), Some(0));
    }

    #[test]
    fn gts_needs_no_switcher_and_a_one_cluster_platform_has_none() {
        assert!(Switcher::new(&platform("exynos5433"), SwitchingMode::Gts).unwrap().is_none());
        let err = Switcher::new(&platform("vexpress-a9"), SwitchingMode::Iks).unwrap_err();
        assert!(err.contains("two clusters"), "{err}");
        assert_eq!(SwitchingMode::parse("cluster-switching").unwrap(), SwitchingMode::ClusterSwitching);
        assert!(SwitchingMode::parse("hmp").unwrap_err().contains("known: gts, iks, cluster-switching"));
    }
}
