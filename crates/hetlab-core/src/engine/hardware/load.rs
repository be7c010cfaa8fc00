//! What one logical CPU holds when the hardware model is solved: whether it is online, the
//! cluster it is on, the thread running there (with its task and phase) and whether cpuidle
//! holds its core down. The solver, the solution keys and the clusters' power all read it.

use crate::result::MAX_CLUSTERS;

/// What one logical CPU holds when the model is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuLoad {
    pub online: bool,
    /// The hardware cluster it runs on now.
    pub cluster: usize,
    /// Its running thread with the thread's task and phase.
    pub running: Option<RunningOn>,
    /// cpuidle holds its core powered down.
    pub core_off: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningOn {
    pub thread: usize,
    pub task: usize,
    pub phase: usize,
}

/// Per cluster: its online logical CPUs, and those of them whose core cpuidle holds powered
/// down — what the key of a solution, each cluster's kernel housekeeping and its leakage count.
/// Counted in the pass that compares the CPUs with the last solution's (`Solver::reuse`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterCounts {
    pub online: [u32; MAX_CLUSTERS],
    pub core_off: [u32; MAX_CLUSTERS],
}

impl ClusterCounts {
    /// Counts `cpu`.
    #[inline]
    pub fn add(&mut self, cpu: &CpuLoad) {
        self.online[cpu.cluster] += cpu.online as u32;
        self.core_off[cpu.cluster] += (cpu.online && cpu.core_off) as u32;
    }

    /// Takes `cpu` out of the counts (it was counted by `add`).
    #[inline]
    pub fn remove(&mut self, cpu: &CpuLoad) {
        self.online[cpu.cluster] -= cpu.online as u32;
        self.core_off[cpu.cluster] -= (cpu.online && cpu.core_off) as u32;
    }

    /// The counts of `cpus`.
    pub fn of(cpus: &[CpuLoad]) -> ClusterCounts {
        let mut counts = ClusterCounts::default();
        cpus.iter().for_each(|cpu| counts.add(cpu));
        counts
    }
}
