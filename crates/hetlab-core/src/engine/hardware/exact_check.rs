//! Tests only: the exact solution beside the one a run keeps. At every re-solution of a run
//! with a re-solve tolerance, the model is solved again from nothing (a new `Solver`, every
//! cluster re-solved) on the same inputs, and the largest relative difference of what the
//! kept solution gives — each running thread's speed and core activity, each CCI port's read
//! rate, the DRAM's line rate, each cluster's power — is recorded, apart for the events where
//! the solver re-solved and those where it gave the threads their predecessors' speeds
//! (`Solver::reuse`: those are the last solution's, whose DRAM fixed point started from the
//! one before; a solution from this one's utilisation settles within the fixed point's
//! stopping rule of it, not to the bit).

use std::cell::Cell;
use std::rc::Rc;

use super::cluster::ClusterHw;
use super::load::CpuLoad;
use super::solve::{Inputs, Solver};
use crate::model::dram::DramState;
use crate::model::power;
use crate::platform::Platform;
use crate::workload::MemProfile;

/// The largest relative difference seen so far where the solver re-solved (`worst`) and where
/// it reused the last solution (`worst_reused`), and how many re-solutions were compared.
#[derive(Clone, Default)]
pub struct ExactCheck {
    pub worst: Rc<Cell<f64>>,
    pub worst_reused: Rc<Cell<f64>>,
    pub compared: Rc<Cell<u64>>,
}

/// What the kept solution gives for the comparison.
pub(super) struct Kept<'k> {
    pub solver: &'k Solver,
    pub clusters: &'k [ClusterHw],
    pub dram_lines_per_us: f64,
}

/// The exact solution: a new solver's, on a copy of the clusters (whose power the caller sets).
pub(super) struct Exact {
    pub solver: Solver,
    pub clusters: Vec<ClusterHw>,
    pub dram_lines_per_us: f64,
}

/// Solves the model from nothing on `cpus` with `dram_before` (the DRAM's state before the
/// re-solution: the same warm start), every cluster re-solved.
pub(super) fn solve<'t>(
    platform: &Platform,
    cpus: &[CpuLoad],
    clusters: &[ClusterHw],
    kept: &Solver,
    dram_before: &DramState,
    mem_of: &impl Fn(usize, usize) -> &'t MemProfile,
    live: &impl Fn(usize) -> Option<(usize, usize)>,
) -> Exact {
    let mut clusters = clusters.to_vec();
    let mut solver = Solver::new(kept.threads());
    solver.dsu_fixed_khz = kept.dsu_fixed_khz;
    let inputs = Inputs { cpus, moved: None, clusters: &clusters, noise: dram_before.noise };
    assert!(!solver.reuse(platform, &inputs), "a new solver solves");
    let answer = solver.solve_rates(platform, cpus, &mut clusters, dram_before, mem_of, live);
    Exact { solver, clusters, dram_lines_per_us: answer.lines_per_us }
}

/// |a - b| / |b| (0 when both are 0).
fn relative(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs()
    }
}

impl ExactCheck {
    /// Records how far `kept` is from `exact` (`solved`: the kept solution was re-solved at this
    /// event, else reused).
    pub(super) fn record(&self, platform: &Platform, cpus: &[CpuLoad], kept: &Kept, exact: &Exact, solved: bool) {
        let cell = if solved { &self.worst } else { &self.worst_reused };
        let mut worst = cell.get();
        for cpu in cpus.iter().filter(|c| c.online) {
            if let Some(r) = cpu.running {
                let (k, e) = (kept.solver.speed(r.thread), exact.solver.speed(r.thread));
                let core = platform.core_type_of(cpu.cluster);
                worst = worst.max(relative(k.instr_per_us, e.instr_per_us));
                worst = worst.max(relative(power::activity(core, k.stall_share), power::activity(core, e.stall_share)));
            }
        }
        for (k, e) in kept.clusters.iter().zip(&exact.clusters) {
            let reads = |c: &ClusterHw| c.port.as_ref().map_or(0.0, |p| p.read_rate_per_us());
            worst = worst.max(relative(reads(k), reads(e)));
            worst = worst.max(relative(k.power.total_mw, e.power.total_mw));
        }
        worst = worst.max(relative(kept.dram_lines_per_us, exact.dram_lines_per_us));
        cell.set(worst);
        self.compared.set(self.compared.get() + 1);
    }
}
