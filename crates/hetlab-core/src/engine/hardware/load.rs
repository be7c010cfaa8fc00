//! What one logical CPU holds when the hardware model is solved: whether it is online, the
//! cluster it is on, the thread running there (with its task and phase) and whether cpuidle
//! holds its core down. The solver, the solution keys and the clusters' power all read it.

/// What one logical CPU holds when the model is solved.
#[derive(Debug, Clone, Copy)]
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
