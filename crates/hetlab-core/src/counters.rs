//! The PMU vocabulary shared by the model, the governors, the results, the training sweep and
//! the real board: core counters, CCI-400 port counters, and the seed paper's two features
//! defined once as counter ratios.
//!
//! Event numbers: ARMv7 core PMU (Cortex-A7/A15 TRMs) and CCI-400 slave-interface events
//! (shared/reference/platforms.md §4.3-4.4).

use serde::Serialize;

/// Feature names, as trained trees and the dataset columns spell them.
pub const FEATURE_CCI_CONGESTION: &str = "cci_congestion";
pub const FEATURE_MEMORY_ACCESS: &str = "memory_access";

/// ARMv7 core PMU counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CorePmu {
    /// 0x11 CPU_CYCLES
    pub cpu_cycles: u64,
    /// 0x08 INST_RETIRED
    pub inst_retired: u64,
    /// 0x17 L2D_CACHE_REFILL
    pub l2d_cache_refill: u64,
    /// 0x19 BUS_ACCESS
    pub bus_access: u64,
    /// 0x13 MEM_ACCESS
    pub mem_access: u64,
}

impl CorePmu {
    pub fn add(&mut self, other: &CorePmu) {
        self.cpu_cycles += other.cpu_cycles;
        self.inst_retired += other.inst_retired;
        self.l2d_cache_refill += other.l2d_cache_refill;
        self.bus_access += other.bus_access;
        self.mem_access += other.mem_access;
    }

    /// `self - before`, counter by counter (counters only grow).
    pub fn since(&self, before: &CorePmu) -> CorePmu {
        CorePmu {
            cpu_cycles: self.cpu_cycles - before.cpu_cycles,
            inst_retired: self.inst_retired - before.inst_retired,
            l2d_cache_refill: self.l2d_cache_refill - before.l2d_cache_refill,
            bus_access: self.bus_access - before.bus_access,
            mem_access: self.mem_access - before.mem_access,
        }
    }
}

/// Per-thread counter deltas for a thread that ran since the previous sample (the paper's
/// per-task PMC reads).
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSample {
    pub tid: u32,
    /// Cluster the thread ran on last.
    pub cluster: usize,
    pub pmu: CorePmu,
}

/// CCI-400 slave-interface counter deltas for one port (events 0x00 and 0x09).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CciPortSample {
    /// Slave interface number (S3 = 3, S4 = 4 on the Exynos 5422).
    pub port: u8,
    /// The cluster attached to this port.
    pub cluster: usize,
    /// si_rrq_hs_any: read request handshakes.
    pub si_rrq_hs_any: u64,
    /// si_rrq_stall_tt_full: cycles the read transaction tracker was full.
    pub si_rrq_stall_tt_full: u64,
}

/// `num / den`, 0 when nothing was counted (as the governor, the dataset and the trees read a
/// feature over an empty period).
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// The counters of one cluster over one period: its CCI port and the threads that ran on it.
/// This is what the training sweep records and what the anti-snoop trees read.
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq)]
pub struct ClusterCounters {
    pub si_rrq_hs_any: u64,
    pub si_rrq_stall_tt_full: u64,
    pub cpu_cycles: u64,
    pub inst_retired: u64,
    pub bus_access: u64,
    pub l2d_cache_refill: u64,
}

impl ClusterCounters {
    /// The counters of `cluster` in one sample's port and thread readings.
    pub fn of(cluster: usize, ports: &[CciPortSample], threads: &[ThreadSample]) -> ClusterCounters {
        let mut k = ClusterCounters::default();
        for p in ports.iter().filter(|p| p.cluster == cluster) {
            k.si_rrq_hs_any += p.si_rrq_hs_any;
            k.si_rrq_stall_tt_full += p.si_rrq_stall_tt_full;
        }
        for t in threads.iter().filter(|t| t.cluster == cluster) {
            k.cpu_cycles += t.pmu.cpu_cycles;
            k.inst_retired += t.pmu.inst_retired;
            k.bus_access += t.pmu.bus_access;
            k.l2d_cache_refill += t.pmu.l2d_cache_refill;
        }
        k
    }

    /// `cci_congestion` as (numerator, denominator): stall cycles per read request on the
    /// cluster's CCI port.
    pub fn cci_congestion_counts(&self) -> (u64, u64) {
        (self.si_rrq_stall_tt_full, self.si_rrq_hs_any)
    }

    /// `memory_access` as (numerator, denominator): bus accesses per cycle of the threads
    /// that ran on the cluster.
    pub fn memory_access_counts(&self) -> (u64, u64) {
        (self.bus_access, self.cpu_cycles)
    }

    pub fn cci_congestion(&self) -> f64 {
        let (n, d) = self.cci_congestion_counts();
        ratio(n, d)
    }

    pub fn memory_access(&self) -> f64 {
        let (n, d) = self.memory_access_counts();
        ratio(n, d)
    }

    /// A feature by name as counts; `None` for a name this vocabulary does not define.
    pub fn feature_counts(&self, name: &str) -> Option<(u64, u64)> {
        match name {
            FEATURE_CCI_CONGESTION => Some(self.cci_congestion_counts()),
            FEATURE_MEMORY_ACCESS => Some(self.memory_access_counts()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_ratios_of_one_clusters_counters() {
        let ports = [
            CciPortSample { port: 3, cluster: 0, si_rrq_hs_any: 1000, si_rrq_stall_tt_full: 50 },
            CciPortSample { port: 4, cluster: 1, si_rrq_hs_any: 0, si_rrq_stall_tt_full: 7 },
        ];
        let pmu = |cycles, bus| CorePmu { cpu_cycles: cycles, bus_access: bus, ..Default::default() };
        let threads = [
            ThreadSample { tid: 1, cluster: 0, pmu: pmu(1000, 20) },
            ThreadSample { tid: 2, cluster: 0, pmu: pmu(1000, 80) },
            ThreadSample { tid: 3, cluster: 1, pmu: pmu(5, 5) },
        ];
        let little = ClusterCounters::of(0, &ports, &threads);
        assert_eq!(little.cci_congestion(), 0.05);
        assert_eq!(little.memory_access(), 0.05);
        assert_eq!(little.feature_counts("memory_access"), Some((100, 2000)));
        // no reads: 0, never NaN
        assert_eq!(ClusterCounters::of(1, &ports, &threads).cci_congestion(), 0.0);
        assert_eq!(little.feature_counts("ipc"), None);
    }
}
