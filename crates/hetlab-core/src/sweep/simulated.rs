//! The simulated backend of the sweep: a run is the engine on ccbench's pointer chase, every
//! thread on the active cluster, both clusters at fixed frequencies (the userspace governor),
//! idle CPUs in WFI (the idle cluster stays powered and is snooped, as on the seed paper's board).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use super::dataset::{Dataset, Period, RunRecord};
use super::{iterations, Chunk, Plan, Run, PROBE_LOADS};
use crate::engine::{simulate, SimConfig};
use crate::platform::Platform;
use crate::result::RunResult;
use crate::workload::Workload;

/// Simulated-time limit of a run: far beyond any run of the sweep.
const TIME_LIMIT_S: f64 = 3600.0;

/// How often the caller of [`run_chunk`] hears from it while no run finishes.
pub const TICK: Duration = Duration::from_millis(50);

/// ccbench's chase as a workload spec.
pub fn chase_spec(size_elements: usize, pattern: &str, iterations: u64) -> String {
    format!("ccbench:size={size_elements},pattern={pattern},iterations={iterations}")
}

fn simulate_chase(
    platform: &Platform,
    chunk: &Chunk,
    fixed_khz: &[(usize, u32)],
    iterations: u64,
    seed: u64,
) -> Result<RunResult, String> {
    let workload = Workload::from_spec(&chase_spec(chunk.size_elements, &chunk.pattern, iterations))?;
    let governors = SimConfig::governor_plan(platform, "userspace", &[], Some(chunk.active), fixed_khz)?;
    let config =
        SimConfig { seed, cluster: Some(chunk.active), time_limit_s: TIME_LIMIT_S, ..SimConfig::new(governors) };
    let result = simulate(platform, &workload, config)?;
    // A run cut by the time limit measured a truncated chase: not training data.
    if !result.completed {
        return Err(format!(
            "a {} chase of {} elements ({iterations} loads) on {} hit the {TIME_LIMIT_S} s simulated-time limit; \
             it is not training data: lower --run-s or --sizes",
            chunk.pattern, chunk.size_elements, platform.clusters[chunk.active].name
        ));
    }
    Ok(result)
}

/// The active cluster's sampling periods of a run.
fn periods(result: &RunResult, active: usize) -> Vec<Period> {
    result
        .series
        .iter()
        .filter(|s| s.cluster == active)
        .map(|s| Period {
            t_end_s: s.time_s,
            period_s: s.period_s,
            cci_cycles: s.cci_cycles,
            clusters: s.counters.to_vec(),
        })
        .collect()
}

/// Loads per run of chunk `c`: the time per load of a [`PROBE_LOADS`] chase at the top OPPs,
/// with the sweep's seed.
pub fn chunk_iterations(platform: &Platform, plan: &Plan, c: usize) -> Result<u64, String> {
    let probe = simulate_chase(platform, &plan.chunks[c], &plan.top_khz(), PROBE_LOADS, plan.options.seed)?;
    Ok(iterations(plan.options.run_s, probe.time_s / PROBE_LOADS as f64))
}

/// Runs a worker claims at a time: each block's rows are built on the worker that ran them,
/// and its thread sends one message per block, not per run.
const BLOCK_RUNS: usize = 16;

/// Runs chunk `c` of `plan` on `workers` threads and returns its rows in run-id order.
///
/// `tick(n)` is called on the calling thread with the number of runs finished since its last
/// call, at least every [`TICK`]; when it returns false the chunk stops (runs under way finish,
/// no new one starts) and `Ok(None)` is returned.
pub fn run_chunk(
    platform: &Platform,
    plan: &Plan,
    c: usize,
    workers: usize,
    tick: &mut dyn FnMut(usize) -> bool,
) -> Result<Option<Dataset>, String> {
    let chunk = &plan.chunks[c];
    let iterations = chunk_iterations(platform, plan, c)?;
    let runs: Vec<Run> = plan.runs(c).collect();
    let blocks: Vec<&[Run]> = runs.chunks(BLOCK_RUNS).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // The rows of one block of runs, in run order; None if the chunk stopped meanwhile.
    let run_block = |block: &[Run]| -> Result<Option<Dataset>, String> {
        let mut rows = Dataset::new(&plan.clusters, "sim");
        for run in block {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let r = simulate_chase(platform, chunk, &plan.fixed_khz(run), iterations, run.seed)?;
            let periods = periods(&r, chunk.active);
            rows.push_run(plan, &RunRecord { chunk, run, iterations, run_time_s: r.time_s, periods: &periods });
        }
        Ok(Some(rows))
    };
    let mut finished_blocks: Vec<Option<Dataset>> = (0..blocks.len()).map(|_| None).collect();
    let mut failed = None;
    let mut stopped = false;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..workers.clamp(1, blocks.len().max(1)) {
            let (tx, blocks, next, stop, run_block) = (tx.clone(), &blocks, &next, &stop, &run_block);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let b = next.fetch_add(1, Ordering::Relaxed);
                    let Some(block) = blocks.get(b) else { break };
                    if tx.send((b, run_block(block))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        loop {
            let mut finished = 0;
            let mut take = |(b, rows): (usize, Result<Option<Dataset>, String>)| match rows {
                Ok(Some(rows)) => {
                    finished += blocks[b].len();
                    finished_blocks[b] = Some(rows);
                }
                Ok(None) => {}
                Err(e) => {
                    failed.get_or_insert(e);
                    stop.store(true, Ordering::Relaxed);
                }
            };
            let done = match rx.recv_timeout(TICK) {
                Ok(msg) => {
                    take(msg);
                    rx.try_iter().for_each(&mut take);
                    false
                }
                Err(RecvTimeoutError::Timeout) => false,
                Err(RecvTimeoutError::Disconnected) => true,
            };
            if !stopped && !tick(finished) {
                stopped = true;
                stop.store(true, Ordering::Relaxed);
            }
            if done {
                break;
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if stopped {
        return Ok(None);
    }
    let mut rows = Dataset::new(&plan.clusters, "sim");
    rows.reserve(finished_blocks.iter().flatten().map(Dataset::len).sum());
    for block in finished_blocks {
        rows.append(block.expect("every block finished"));
    }
    Ok(Some(rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::dataset::Values;
    use crate::sweep::SweepOptions;

    #[test]
    fn a_chunk_is_the_same_on_any_number_of_threads_and_can_stop() {
        let p = Platform::builtin("exynos5422").unwrap();
        let opts = SweepOptions {
            patterns: vec!["random".into()],
            sizes: vec![1048576],
            reps: 2,
            run_s: 0.03,
            ..Default::default()
        };
        let plan = Plan::new(&p, "ab", opts, vec![vec![1_400_000], vec![200_000, 2_000_000]]).unwrap();
        let mut seen = 0;
        let one = run_chunk(&p, &plan, 0, 1, &mut |n| {
            seen += n;
            true
        })
        .unwrap()
        .unwrap();
        assert_eq!(seen, 4);
        let three = run_chunk(&p, &plan, 0, 3, &mut |_| true).unwrap().unwrap();
        let (one, three) = (one.into_columns(), three.into_columns());
        assert!(one == three, "same rows whatever the thread count");
        let col = |name: &str| &one.iter().find(|(n, _)| n == name).unwrap().1;
        let Values::Int(runs) = col("run_id") else { panic!() };
        let Values::Int(seeds) = col("seed") else { panic!() };
        assert!(runs.windows(2).all(|w| w[0] <= w[1]) && runs[0] == 0 && *runs.last().unwrap() == 3);
        assert!(runs.iter().zip(seeds).all(|(r, s)| *s == 1 + r), "seed + run_id, per run");
        let Values::Int(reads) = col("si_rrq_hs_any_little") else { panic!() };
        assert!(reads.iter().all(|&n| n > 0), "a random 1 MB chase on little reads through its port");
        let Values::Float(congestion) = col("cci_congestion_little") else { panic!() };
        assert!(congestion.iter().all(|&c| c < 0.01), "one read in flight waits only beside a kernel wake-up");
        assert!(run_chunk(&p, &plan, 0, 2, &mut |_| false).unwrap().is_none());
    }
}
