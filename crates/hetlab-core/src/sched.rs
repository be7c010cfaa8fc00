//! Task placement policies. `pinned`: each thread stays on one CPU of its affinity mask
//! (assigned round-robin). `smp`: capacity-blind balancing as vanilla CFS treated big.LITTLE —
//! a waking thread goes to an idle allowed CPU (its previous one first), otherwise to the
//! least-loaded one, and a CPU that goes idle pulls a waiting thread. HMP and EAS plug in here.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    Pinned,
    Smp,
}

impl SchedPolicy {
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "pinned" => Ok(SchedPolicy::Pinned),
            "smp" => Ok(SchedPolicy::Smp),
            other => Err(format!("unknown scheduler '{other}'; known: pinned, smp")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SchedPolicy::Pinned => "pinned",
            SchedPolicy::Smp => "smp",
        }
    }
}

/// Wake-up CPU for `smp`: `loads` lists (cpu, threads on it) for the allowed CPUs, in CPU
/// order. The previous CPU if idle, else the first idle CPU, else the least loaded (lowest
/// number on ties).
pub fn select_cpu_smp(prev_cpu: usize, loads: &[(usize, usize)]) -> usize {
    if loads.iter().any(|&(c, n)| c == prev_cpu && n == 0) {
        return prev_cpu;
    }
    loads.iter().min_by_key(|&&(c, n)| (n, c)).map(|&(c, _)| c).unwrap_or(prev_cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smp_prefers_idle_previous_then_idle_then_least_loaded() {
        assert_eq!(select_cpu_smp(2, &[(0, 0), (1, 1), (2, 0)]), 2);
        assert_eq!(select_cpu_smp(1, &[(0, 1), (1, 1), (2, 0)]), 2);
        assert_eq!(select_cpu_smp(1, &[(0, 2), (1, 3), (2, 2)]), 0);
        assert!(SchedPolicy::parse("eas").unwrap_err().contains("pinned, smp"));
    }
}
