//! The floor an event-driven simulator of this shape can reach, beside hetlab: a minimal loop
//! with the same event count and a comparable mix — one pop from a heap of pending events, the
//! closed-form integration of 8 CPUs' counters and energy since the last event, and the event's
//! own work (re-arming its source) — and no model. Prints, per case, hetlab's engine µs/event,
//! the floor's, and their ratio. Asserts nothing (figures only; issue 38).
//!
//! The floor's sources follow what dominates each case's events in hetlab: governor samples
//! (every 10 ms per policy), OS jitter bursts (exponential, per CPU), the scheduler tick (at HZ,
//! on busy CPUs) and thread wake-ups (periodic threads, their periods). The floor does not know
//! which CPU runs what; it is a lower bound of the loop's own cost, not a model.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::workload::Workload;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

const CPUS: usize = 8;

/// A pending event: when (µs, as ordered bits), which source.
type Pending = Reverse<(u64, usize)>;

/// A recurring event source: its period, µs, and whether its gaps are exponential.
type Source = (f64, bool);

/// A case: its label, hetlab's run, and the floor's sources.
type Case = (String, Workload, SimConfig, Vec<Source>);

/// Recurring event sources: (period µs, jitter: exponential when true).
struct Floor {
    sources: Vec<Source>,
}

impl Floor {
    /// Runs `events` events; returns µs of wall time per event.
    fn run(&self, events: u64) -> f64 {
        let mut heap: BinaryHeap<Pending> = BinaryHeap::with_capacity(self.sources.len());
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next_random = move || {
            // xorshift64*: cheap, deterministic
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            (rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        };
        for (i, &(period, _)) in self.sources.iter().enumerate() {
            heap.push(Reverse(((period * next_random()).to_bits(), i)));
        }
        let (mut cycles, mut instr, mut energy) = ([0.0f64; CPUS], [0.0f64; CPUS], 0.0f64);
        let (khz, ipc, mw) = ([1_400_000.0f64; CPUS], [0.8f64; CPUS], [120.0f64; CPUS]);
        let mut now = 0.0f64;
        let start = Instant::now();
        for _ in 0..events {
            let Reverse((at, source)) = heap.pop().expect("every source re-arms");
            let at = f64::from_bits(at);
            let dt = at - now;
            for cpu in 0..CPUS {
                cycles[cpu] += dt * khz[cpu] * 1e-3;
                instr[cpu] += dt * khz[cpu] * 1e-3 * ipc[cpu];
                energy += dt * mw[cpu] * 1e-6;
            }
            now = at;
            let (period, random) = self.sources[source];
            let gap = if random { -period * (1.0 - next_random()).ln() } else { period };
            heap.push(Reverse(((now + gap).to_bits(), source)));
        }
        let wall = start.elapsed().as_secs_f64();
        // keep the sums alive
        assert!(cycles.iter().chain(&instr).sum::<f64>() + energy >= 0.0);
        wall * 1e6 / events as f64
    }
}

/// hetlab's engine µs per event on `workload` under `config` (best of `reps`), and its events.
fn hetlab(platform: &Platform, workload: &Workload, config: &SimConfig, reps: u32) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut events = 0;
    for seed in 1..=reps as u64 {
        let mut c = config.clone();
        c.seed = seed;
        c.series = false;
        let start = Instant::now();
        let r = simulate(platform, workload, c).expect("simulation runs");
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / r.events as f64);
        events = r.events;
    }
    (best, events)
}

fn main() {
    let platform = Platform::builtin("exynos5422").unwrap();
    let little = platform.cluster_index("little");
    let plan = |governor: &str, cluster| SimConfig::governor_plan(&platform, governor, &[], cluster, &[]).unwrap();
    let tick_us = platform.tick_us() as f64;
    // governor samples of two policies, jitter on every CPU (the platform's mean interval)
    let jitter_us = platform.noise.kernel_wakeup_mean_interval_us as f64;
    let base: Vec<Source> =
        [(10_000.0, false), (10_000.0, false)].into_iter().chain((0..CPUS).map(|_| (jitter_us, true))).collect();

    let mut ccbench_config = SimConfig::new(plan("ondemand", little));
    ccbench_config.cluster = little;
    let mut smp = SimConfig::new(plan("ondemand", None));
    smp.scheduler = SchedPolicy::Smp;
    let cases: Vec<Case> = vec![
        (
            "ccbench random 4 MB, LITTLE, ondemand".into(),
            Workload::from_spec("ccbench:size=1048576,pattern=random,iterations=60000000").unwrap(),
            ccbench_config,
            base.clone(),
        ),
        (
            "mixed8 (smp)".into(),
            Workload::from_spec("mixed8").unwrap(),
            smp.clone(),
            // + the tick on 8 busy CPUs and 4 periodic threads
            base.iter()
                .copied()
                .chain((0..CPUS).map(|_| (tick_us, false)))
                .chain((0..4).map(|_| (10_000.0, false)))
                .collect(),
        ),
        (
            "periodic, 4000 jobs/s on 64 threads (smp)".into(),
            Workload::from_spec("periodic:threads=64,run_us=125,period_us=16000,duration_us=10000000").unwrap(),
            smp,
            // each job wakes, runs and sleeps: two events per period per thread
            base.iter().copied().chain((0..128).map(|_| (16_000.0, false))).collect(),
        ),
    ];
    println!("{:<46} {:>12} {:>12} {:>9} {:>10}", "case", "hetlab µs/ev", "floor µs/ev", "ratio", "events");
    for (label, workload, config, sources) in cases {
        let (hetlab_us, events) = hetlab(&platform, &workload, &config, 5);
        let floor = Floor { sources };
        let floor_us = (0..5).map(|_| floor.run(events)).fold(f64::INFINITY, f64::min);
        println!("{label:<46} {hetlab_us:>12.3} {floor_us:>12.3} {:>8.1}x {events:>10}", hetlab_us / floor_us);
    }
}
