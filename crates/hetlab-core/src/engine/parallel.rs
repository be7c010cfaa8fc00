//! Fork-join parallel phases (`PhaseKind::Parallel`): the task's threads share a fixed amount
//! of work, then meet at a barrier.
//!
//! - `static`: each thread takes an equal share when it enters the phase, so on unequal cores
//!   the fast threads wait at the barrier for the slowest one;
//! - `dynamic`: a shared pool of chunks; a thread that finishes a chunk takes the next one by
//!   an atomic update of the pool's counter. The update moves the counter's cache line to the
//!   grabbing core (`model::coherence`): from the same core nothing, from a core of the same
//!   cluster an L2 transfer, from the other cluster a CCI crossing plus a snoop at that
//!   cluster's clock. The thread spins for that time (charged as time without progress).
//!
//! The barrier: a thread that arrives waits (suspended, as in a futex wait) until the last of
//! the task's threads arrives; the last one wakes them all and they enter the next phase.

use super::Engine;
use crate::workload::{Allocation, PhaseKind};

/// One parallel phase of one task, for the round under way.
#[derive(Debug, Clone, Default)]
pub(super) struct Pool {
    started: bool,
    left_instructions: f64,
    arrived: u32,
    waiting: Vec<usize>,
    /// The CPU whose cache holds the pool counter's line (the last grabber).
    counter_cpu: Option<usize>,
}

impl Engine<'_> {
    /// Latency of moving one cache line from `from_cpu`'s cache into `to_cpu`'s, now, ns.
    pub(super) fn line_transfer_ns(&self, from_cpu: usize, to_cpu: usize) -> f64 {
        if from_cpu == to_cpu {
            return 0.0;
        }
        self.transfer_from_cluster_ns(self.sched.cluster_of[from_cpu], self.sched.cluster_of[to_cpu])
    }

    /// `t` enters a parallel phase: it takes its share or its first chunk, or goes straight to
    /// the barrier when the pool is already empty.
    pub(super) fn enter_parallel(&mut self, t: usize, waker: Option<usize>) {
        let (task, phase) = (self.threads[t].task, self.threads[t].progress.phase);
        let PhaseKind::Parallel { total_instructions, allocation } = self.tasks[task].phases[phase].kind else {
            unreachable!("enter_parallel on a parallel phase")
        };
        let nthreads = self.tasks[task].resolved_threads();
        let pool = &mut self.pools[task][phase];
        if !pool.started {
            pool.started = true;
            pool.left_instructions = total_instructions;
        }
        match allocation {
            Allocation::Static => {
                self.threads[t].progress.work_left = total_instructions / nthreads as f64;
                self.make_runnable(t, waker);
            }
            Allocation::Dynamic { .. } => {
                if self.grab_chunk(t) {
                    self.make_runnable(t, waker);
                } else {
                    self.arrive(t);
                }
            }
        }
    }

    /// `t` finished its share or its chunk.
    pub(super) fn parallel_job_done(&mut self, t: usize) {
        let (task, phase) = (self.threads[t].task, self.threads[t].progress.phase);
        let dynamic = matches!(
            self.tasks[task].phases[phase].kind,
            PhaseKind::Parallel { allocation: Allocation::Dynamic { .. }, .. }
        );
        if !(dynamic && self.grab_chunk(t)) {
            self.arrive(t);
        }
    }

    /// Takes the next chunk of the pool for `t` (false: the pool is empty) and charges the
    /// counter line's transfer.
    fn grab_chunk(&mut self, t: usize) -> bool {
        let (task, phase) = (self.threads[t].task, self.threads[t].progress.phase);
        let PhaseKind::Parallel { allocation: Allocation::Dynamic { chunk_instructions }, .. } =
            self.tasks[task].phases[phase].kind
        else {
            unreachable!("grab_chunk on a dynamic parallel phase")
        };
        let cpu = self.sched.entities[t].cpu;
        let pool = &self.pools[task][phase];
        // Below a millionth of a chunk is rounding left by the subtractions, not work.
        if pool.left_instructions <= chunk_instructions * 1e-6 {
            return false;
        }
        let transfer_ns = pool.counter_cpu.map_or(0.0, |f| self.line_transfer_ns(f, cpu));
        let pool = &mut self.pools[task][phase];
        let chunk = chunk_instructions.min(pool.left_instructions);
        pool.left_instructions -= chunk;
        pool.counter_cpu = Some(cpu);
        let p = &mut self.threads[t].progress;
        p.work_left = chunk;
        p.stolen_us += transfer_ns * 1e-3;
        true
    }

    /// `t` reaches the barrier: it waits, or, the last one, releases everyone.
    fn arrive(&mut self, t: usize) {
        let (task, phase) = (self.threads[t].task, self.threads[t].progress.phase);
        let nthreads = self.tasks[task].resolved_threads();
        let pool = &mut self.pools[task][phase];
        pool.arrived += 1;
        if pool.arrived < nthreads {
            pool.waiting.push(t);
            self.block(t);
            return;
        }
        // The round is over: the next round (a repeat) starts with a full pool.
        let mut waiting = std::mem::take(&mut pool.waiting);
        pool.started = false;
        pool.arrived = 0;
        waiting.sort_unstable();
        let cpu = self.sched.entities[t].cpu;
        for &w in &waiting {
            self.threads[w].progress.phase += 1;
            self.enter_phase(w, Some(cpu));
        }
        self.threads[t].progress.phase += 1;
        self.enter_phase(t, None);
    }
}
