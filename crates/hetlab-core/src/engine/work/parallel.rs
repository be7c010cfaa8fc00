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

use crate::workload::Task;

/// One parallel phase of one task, for the round under way.
#[derive(Debug, Clone, Default)]
struct Pool {
    started: bool,
    left_instructions: f64,
    arrived: u32,
    waiting: Vec<usize>,
    /// The CPU whose cache holds the pool counter's line (the last grabber).
    counter_cpu: Option<usize>,
}

/// Every task's parallel phases, by task and phase.
pub struct Pools {
    pools: Vec<Vec<Pool>>,
}

/// A chunk taken from a dynamic pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chunk {
    pub instructions: f64,
    /// The CPU whose cache held the pool counter's line (it moves to the grabber's).
    pub counter_from_cpu: Option<usize>,
}

/// What a thread arriving at the barrier does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// It waits for the others.
    Waits,
    /// The last one: these waiting threads (in thread order) go on, then it does.
    Releases(Vec<usize>),
}

impl Pools {
    pub fn new(tasks: &[Task]) -> Pools {
        Pools { pools: tasks.iter().map(|t| vec![Pool::default(); t.phases.len()]).collect() }
    }

    /// A thread enters parallel phase `phase` of `task`: the round starts with the phase's
    /// `total_instructions` if it has not yet.
    pub fn enter(&mut self, task: usize, phase: usize, total_instructions: f64) {
        let pool = &mut self.pools[task][phase];
        if !pool.started {
            pool.started = true;
            pool.left_instructions = total_instructions;
        }
    }

    /// The next chunk of the pool for a thread on `cpu` (`None`: the pool is empty).
    pub fn grab(&mut self, task: usize, phase: usize, chunk_instructions: f64, cpu: usize) -> Option<Chunk> {
        let pool = &mut self.pools[task][phase];
        // Below a millionth of a chunk is rounding left by the subtractions, not work.
        if pool.left_instructions <= chunk_instructions * 1e-6 {
            return None;
        }
        let chunk = chunk_instructions.min(pool.left_instructions);
        pool.left_instructions -= chunk;
        let counter_from_cpu = pool.counter_cpu.replace(cpu);
        Some(Chunk { instructions: chunk, counter_from_cpu })
    }

    /// Thread `t` of a task of `nthreads` threads reaches the barrier of `phase`.
    pub fn arrive(&mut self, task: usize, phase: usize, t: usize, nthreads: u32) -> Arrival {
        let pool = &mut self.pools[task][phase];
        pool.arrived += 1;
        if pool.arrived < nthreads {
            pool.waiting.push(t);
            return Arrival::Waits;
        }
        // The round is over: the next round (a repeat) starts with a full pool.
        let mut waiting = std::mem::take(&mut pool.waiting);
        pool.started = false;
        pool.arrived = 0;
        waiting.sort_unstable();
        Arrival::Releases(waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    #[test]
    fn a_dynamic_pool_hands_out_chunks_until_empty_and_the_last_arrival_releases_the_others() {
        let w = Workload::from_spec("cpu-bound:threads=3,instructions=1e6").unwrap();
        let mut pools = Pools::new(&w.tasks);
        pools.enter(0, 0, 250.0);
        let first = pools.grab(0, 0, 100.0, 2).unwrap();
        assert_eq!(first, Chunk { instructions: 100.0, counter_from_cpu: None });
        assert_eq!(pools.grab(0, 0, 100.0, 5).unwrap().counter_from_cpu, Some(2));
        assert_eq!(pools.grab(0, 0, 100.0, 5).unwrap().instructions, 50.0);
        assert_eq!(pools.grab(0, 0, 100.0, 5), None);
        // entering again in the same round does not refill it
        pools.enter(0, 0, 250.0);
        assert_eq!(pools.grab(0, 0, 100.0, 5), None);
        assert_eq!(pools.arrive(0, 0, 2, 3), Arrival::Waits);
        assert_eq!(pools.arrive(0, 0, 0, 3), Arrival::Waits);
        assert_eq!(pools.arrive(0, 0, 1, 3), Arrival::Releases(vec![0, 2]));
        // the next round starts full
        pools.enter(0, 0, 250.0);
        assert_eq!(pools.grab(0, 0, 300.0, 1).unwrap().instructions, 250.0);
    }
}
