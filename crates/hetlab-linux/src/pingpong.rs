//! Inter-core latency, as Sandra's "inter-core latency" test measures it (seed 004; the shortest
//! time to move the smallest amount of data from one core to another, for every pair of
//! cores): a cache line bounced between two threads pinned to two CPUs.
//!
//! The line holds one 64-bit counter, alone in a 128-byte aligned block (no neighbour shares
//! the line, and an adjacent-line prefetcher pulls nothing in). The ping thread writes an odd
//! value and spins until it reads the next even one; the pong thread spins for the odd value
//! and answers with the even one. Each write moves the line to the writer's cache, so one
//! round trip is two one-way transfers. After an untimed warm-up the round trips are timed
//! with CLOCK_MONOTONIC; a pair is measured `repeats` times and the fastest kept (a thread
//! preempted by another program only ever makes a run slower). Both ends run in threads of
//! their own, so the caller's CPU affinity is untouched.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use serde_json::json;

use crate::cpus::{allowed_cpus, format_cpu_list, parse_cpu_list, pin_current_thread};

/// The most round trips per measurement (minutes at any latency) and measurements per pair.
pub const MAX_ROUND_TRIPS: u64 = 1_000_000_000;
pub const MAX_REPEATS: u32 = 1000;

#[derive(Debug, Clone, PartialEq)]
pub struct PingpongOptions {
    /// Timed round trips per measurement.
    pub round_trips: u64,
    /// Measurements per pair; the fastest counts.
    pub repeats: u32,
}

impl Default for PingpongOptions {
    fn default() -> Self {
        PingpongOptions { round_trips: 20_000, repeats: 3 }
    }
}

/// The counter's line, alone in its 128 bytes.
#[repr(align(128))]
struct Line(AtomicU64);

/// One measurement: ns per one-way transfer between `ping_cpu` and `pong_cpu`.
fn bounce(ping_cpu: usize, pong_cpu: usize, round_trips: u64) -> Result<f64, String> {
    let line = Line(AtomicU64::new(0));
    let start = Barrier::new(2);
    // A thread that cannot pin says so before the barrier, so neither spins for the other.
    let failed = AtomicBool::new(false);
    let pin = |cpu: usize| {
        let r = pin_current_thread(cpu);
        if r.is_err() {
            failed.store(true, Ordering::SeqCst);
        }
        start.wait();
        match (r, failed.load(Ordering::SeqCst)) {
            (Err(e), _) => Err(e),
            (Ok(()), true) => Err(format!("cpu{ping_cpu} <-> cpu{pong_cpu}: the other thread could not pin")),
            (Ok(()), false) => Ok(()),
        }
    };
    let warmup = (round_trips / 10).max(100);
    std::thread::scope(|s| {
        let pong = s.spawn(|| -> Result<(), String> {
            pin(pong_cpu)?;
            for i in 0..warmup + round_trips {
                while line.0.load(Ordering::Acquire) != 2 * i + 1 {
                    spin_loop();
                }
                line.0.store(2 * i + 2, Ordering::Release);
            }
            Ok(())
        });
        // Both ends run in threads of their own: the caller's affinity is untouched.
        let ping = s.spawn(|| -> Result<f64, String> {
            pin(ping_cpu)?;
            let mut t0 = Instant::now();
            for i in 0..warmup + round_trips {
                if i == warmup {
                    t0 = Instant::now();
                }
                line.0.store(2 * i + 1, Ordering::Release);
                while line.0.load(Ordering::Acquire) != 2 * i + 2 {
                    spin_loop();
                }
            }
            Ok(t0.elapsed().as_nanos() as f64 / (2 * round_trips) as f64)
        });
        let ping = ping.join().map_err(|_| "the ping thread panicked".to_string())?;
        let pong = pong.join().map_err(|_| "the pong thread panicked".to_string())?;
        pong.and(ping)
    })
}

/// The CPUs to measure: `list` (`0-3,7`) or, without one, every CPU this process may use; a
/// CPU it may not use is an error naming the ones it may.
pub fn choose_cpus(list: Option<&str>) -> Result<Vec<usize>, String> {
    let allowed = allowed_cpus();
    let chosen = match list {
        Some(l) => parse_cpu_list(l).map_err(|e| format!("--cpus: {e}"))?,
        None => allowed.clone(),
    };
    match chosen.iter().find(|c| !allowed.contains(c)) {
        Some(bad) => {
            Err(format!("--cpus: cpu{bad} is not one this process may run on ({})", format_cpu_list(&allowed)))
        }
        None => Ok(chosen),
    }
}

/// ns per one-way transfer for every ordered pair of `cpus` (`None` on the diagonal), the
/// fastest of `repeats` measurements each.
pub fn matrix(cpus: &[usize], opts: &PingpongOptions) -> Result<Vec<Vec<Option<f64>>>, String> {
    if cpus.len() < 2 {
        return Err(format!("pingpong needs at least two CPUs, got {}", cpus.len()));
    }
    // the counter reaches 2 x (round trips + warm-up): bounded far below u64::MAX
    if !(1..=MAX_ROUND_TRIPS).contains(&opts.round_trips) || !(1..=MAX_REPEATS).contains(&opts.repeats) {
        return Err(format!("--round-trips must be from 1 to {MAX_ROUND_TRIPS} and --repeats from 1 to {MAX_REPEATS}"));
    }
    let mut m = vec![vec![None; cpus.len()]; cpus.len()];
    for (i, &a) in cpus.iter().enumerate() {
        for (j, &b) in cpus.iter().enumerate() {
            if i == j {
                continue;
            }
            let mut best = f64::INFINITY;
            for _ in 0..opts.repeats {
                best = best.min(bounce(a, b, opts.round_trips)?);
            }
            m[i][j] = Some(best);
        }
    }
    Ok(m)
}

/// The matrix as a table: a row per ping CPU, a column per pong CPU, ns.
pub fn text_report(cpus: &[usize], opts: &PingpongOptions, m: &[Vec<Option<f64>>]) -> String {
    let mut out = format!(
        "pingpong: ns per one-way cache-line transfer ({} round trips, fastest of {})\n{:>6}",
        opts.round_trips, opts.repeats, "cpu"
    );
    for c in cpus {
        out.push_str(&format!(" {:>8}", format!("cpu{c}")));
    }
    out.push('\n');
    for (i, row) in m.iter().enumerate() {
        out.push_str(&format!("{:>6}", format!("cpu{}", cpus[i])));
        for v in row {
            match v {
                Some(ns) => out.push_str(&format!(" {ns:>8.1}")),
                None => out.push_str(&format!(" {:>8}", "-")),
            }
        }
        out.push('\n');
    }
    out
}

pub fn json_report(cpus: &[usize], opts: &PingpongOptions, m: &[Vec<Option<f64>>]) -> String {
    json!({"cpus": cpus, "round_trips": opts.round_trips, "repeats": opts.repeats, "one_way_ns": m}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_bounce_a_line_and_the_matrix_has_every_ordered_pair() {
        let cpus: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
        if cpus.len() < 2 {
            // One CPU cannot bounce a line between two; the error says so.
            assert!(matrix(&cpus, &PingpongOptions::default()).unwrap_err().contains("at least two CPUs"));
            return;
        }
        let opts = PingpongOptions { round_trips: 2_000, repeats: 2 };
        let m = matrix(&cpus, &opts).unwrap();
        assert!(m[0][0].is_none() && m[1][1].is_none());
        for ns in [m[0][1].unwrap(), m[1][0].unwrap()] {
            // faster than a scheduler round trip, slower than an L1 hit
            assert!(ns > 1.0 && ns < 1_000_000.0, "{ns} ns");
        }
        // the caller still runs wherever it ran before
        assert_eq!(allowed_cpus().into_iter().take(2).collect::<Vec<_>>(), cpus);
        let text = text_report(&cpus, &opts, &m);
        assert!(text.starts_with("pingpong: ns per one-way") && text.lines().count() == 4, "{text}");
        assert!(json_report(&cpus, &opts, &m).contains("\"one_way_ns\""));
    }

    #[test]
    fn bad_options_are_errors() {
        assert!(matrix(&[0], &PingpongOptions::default()).unwrap_err().contains("at least two CPUs"));
        let zero = PingpongOptions { round_trips: 0, repeats: 1 };
        assert!(matrix(&[0, 1], &zero).unwrap_err().contains("from 1 to"));
        let huge = PingpongOptions { round_trips: u64::MAX, repeats: 1 };
        assert!(matrix(&[0, 1], &huge).unwrap_err().contains("--round-trips must be from 1 to 1000000000"));
    }
}
