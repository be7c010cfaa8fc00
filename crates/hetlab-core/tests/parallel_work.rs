//! Parallel work on the Exynos 5433 (seed 004's mechanisms): static and dynamic allocation
//! with a barrier, streaming bounded by DRAM, shared read-modify-write data through the CCI.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::workload::Workload;

fn exynos5433() -> Platform {
    Platform::builtin("exynos5433").unwrap()
}

/// A task of one thread per CPU of `cpus`, hard-pinned (each thread to its own CPU, as Sandra
/// does), running one parallel phase with `phase` keys; performance governor.
fn run(p: &Platform, cpus: &[usize], phase: &str) -> RunResult {
    let w = format!(
        "name='w'\n[[tasks]]\nname='t'\nthreads={}\naffinity={cpus:?}\n[[tasks.phases]]\n{phase}\n",
        cpus.len()
    );
    let plan = SimConfig::governor_plan(p, "performance", &[], None, &[]).unwrap();
    simulate(p, &Workload::from_toml("w.toml", &w).unwrap(), SimConfig::new(plan)).unwrap()
}

const ALL8: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
const BIG4: [usize; 4] = [4, 5, 6, 7];
const LITTLE4: [usize; 4] = [0, 1, 2, 3];
const COMPUTE: &str = "mix={int_alu=0.6, fp32=0.2, load=0.15, store=0.05}\nworking_set_bytes=8192";

#[test]
fn a_static_split_on_all_8_finishes_when_the_little_threads_finish() {
    let p = exynos5433();
    let total = 8e9;
    let all8 = run(&p, &ALL8, &format!("parallel_instructions={total}\nallocation='static'\n{COMPUTE}"));
    // The same share on the LITTLE cores alone takes the same time: the A53s set the pace.
    let little = run(&p, &LITTLE4, &format!("parallel_instructions={}\nallocation='static'\n{COMPUTE}", total / 2.0));
    assert!((all8.time_s / little.time_s - 1.0).abs() < 0.02, "all-8 {} little-4 {}", all8.time_s, little.time_s);
    // Every thread leaves the barrier together; the big ones spent part of it waiting.
    let finish: Vec<f64> = all8.threads.iter().map(|t| t.finish_s).collect();
    assert!(finish.iter().all(|f| (f - finish[0]).abs() < 1e-3), "{finish:?}");
    let cpu_big = all8.threads[4].cpu_time_s;
    let cpu_little = all8.threads[0].cpu_time_s;
    assert!(cpu_big < 0.7 * cpu_little, "big {cpu_big} s busy vs little {cpu_little} s");
}

#[test]
fn a_dynamic_pool_beats_the_static_split_and_the_4_big_cores() {
    let p = exynos5433();
    let total = 8e9;
    let dynamic = format!("parallel_instructions={total}\nallocation='dynamic'\nchunk_instructions=2e7\n{COMPUTE}");
    let stat = format!("parallel_instructions={total}\nallocation='static'\n{COMPUTE}");
    let dyn8 = run(&p, &ALL8, &dynamic).time_s;
    let stat8 = run(&p, &ALL8, &stat).time_s;
    let big4 = run(&p, &BIG4, &stat).time_s;
    let big4_dyn = run(&p, &BIG4, &dynamic).time_s;
    assert!(dyn8 < stat8 && dyn8 < big4 && dyn8 < big4_dyn, "dyn8 {dyn8} stat8 {stat8} big4 {big4} {big4_dyn}");
    // The pool's counter costs little at this chunk size: on 4 equal cores dynamic ≈ static.
    assert!((big4_dyn / big4 - 1.0).abs() < 0.01, "{big4_dyn} vs {big4}");
}

#[test]
fn streaming_on_all_8_is_bounded_by_dram_bandwidth() {
    let p = exynos5433();
    let stream = "mix={int_alu=0.4, neon_int=0.2, load=0.3, store=0.1}\nworking_set_bytes=67108864\npattern='sequential'\nstride_bytes=16\nwrite_fraction=0.3";
    let r =
        run(&p, &ALL8, &format!("parallel_instructions=4e9\nallocation='dynamic'\nchunk_instructions=2e7\n{stream}"));
    let mb_s = r.dram_lines * 64.0 / r.time_s / 1e6;
    let sustained = p.dram.peak_bandwidth_mb_s * p.dram.bandwidth_efficiency;
    assert!(mb_s <= sustained * 1.001, "{mb_s} MB/s > {sustained}");
    assert!(mb_s > 0.8 * sustained, "{mb_s} MB/s: not saturated");
    // So 8 cores gain little over the 4 big ones on it.
    let big =
        run(&p, &BIG4, &format!("parallel_instructions=4e9\nallocation='dynamic'\nchunk_instructions=2e7\n{stream}"));
    assert!(big.time_s / r.time_s < 1.3, "big-4 {} all-8 {}", big.time_s, r.time_s);
}

#[test]
fn shared_read_modify_write_lines_cross_the_cci() {
    let p = exynos5433();
    let reads = |r: &RunResult| r.cci_ports.iter().map(|c| c.si_rrq_hs_any).sum::<u64>();
    let phase = |rmw: f64| {
        format!("parallel_instructions=4e9\nallocation='dynamic'\nchunk_instructions=2e7\n{COMPUTE}\nshared_rmw_fraction={rmw}")
    };
    let private8 = run(&p, &ALL8, &phase(0.0));
    let shared8 = run(&p, &ALL8, &phase(0.05));
    assert!(reads(&shared8) > reads(&private8) + 1_000_000, "{} vs {}", reads(&shared8), reads(&private8));
    assert!(shared8.time_s > private8.time_s * 1.05, "{} vs {}", shared8.time_s, private8.time_s);
    // Within one cluster the lines move through its L2: no CCI reads, a smaller cost.
    let private4 = run(&p, &BIG4, &phase(0.0));
    let shared4 = run(&p, &BIG4, &phase(0.05));
    assert_eq!(reads(&shared4), reads(&private4));
    assert!(shared4.time_s > private4.time_s, "{} vs {}", shared4.time_s, private4.time_s);
    let slowdown8 = shared8.time_s / private8.time_s;
    let slowdown4 = shared4.time_s / private4.time_s;
    assert!(slowdown8 > slowdown4, "all-8 x{slowdown8} big-4 x{slowdown4}");
}

#[test]
fn a_shared_working_set_is_one_copy_per_cluster() {
    let p = exynos5433();
    // 4 A53s reading 128 KB each: private, 512 KB overflow the 256 KB L2; shared, one copy fits.
    let phase = |shared: bool| {
        format!("parallel_instructions=1e9\nallocation='static'\n{COMPUTE}\nshared_working_set={shared}")
            .replace("working_set_bytes=8192", "working_set_bytes=131072")
    };
    let private = run(&p, &LITTLE4, &phase(false));
    let shared = run(&p, &LITTLE4, &phase(true));
    assert!(shared.time_s < 0.8 * private.time_s, "shared {} private {}", shared.time_s, private.time_s);
    // One thread alone: the flag changes nothing.
    let one = |shared: bool| run(&p, &[0], &phase(shared)).time_s;
    assert_eq!(one(true), one(false));
}

#[test]
fn handed_over_data_moves_at_the_transfer_latency_between_the_pair() {
    let p = exynos5433();
    // A producer-consumer pair in lockstep: 200 blocks, each thread writing its half of a block
    // while reading the other's previous one (every 16-byte read starts 1/4 of a line: one
    // reference in 8 brings a line the other thread wrote), a barrier after each.
    let pair = |cpus: &[usize], fraction: f64| {
        let w = format!(
            "name='w'\n[[tasks]]\nname='t'\nthreads=2\naffinity={cpus:?}\nrepeat=200\n[[tasks.phases]]\n\
             parallel_instructions=1e6\nallocation='static'\n\
             mix={{neon_int=0.3, int_alu=0.2, load=0.25, store=0.25}}\nworking_set_bytes=65536\n\
             pattern='sequential'\nstride_bytes=16\nwrite_fraction=0.5\npeer_written_fraction={fraction}\n"
        );
        let plan = SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap();
        simulate(&p, &Workload::from_toml("w.toml", &w).unwrap(), SimConfig::new(plan)).unwrap()
    };
    let reads = |r: &RunResult| r.cci_ports.iter().map(|c| c.si_rrq_hs_any).sum::<u64>();
    let lines = |r: &RunResult| r.threads.iter().map(|t| t.peer_lines_in).sum::<u64>();
    let big_pair = pair(&[4, 5], 0.125);
    let cross_pair = pair(&[0, 4], 0.125);
    // Every handed-over line is counted, waiting at the barrier or not: 2e8 instr x 0.5 refs x 0.125.
    for r in [&big_pair, &cross_pair] {
        assert!((lines(r) as f64 / (2e8 * 0.5 * 0.125) - 1.0).abs() < 1e-3, "{} lines", lines(r));
    }
    // Within the cluster they come through its L2; across, each is a CCI read and an L2 refill.
    assert_eq!(reads(&big_pair), reads(&pair(&[4, 5], 0.0)));
    // (The ports count on through the OS's stolen time, when the thread does not progress.)
    let cross_reads = reads(&cross_pair) - reads(&pair(&[0, 4], 0.0));
    assert!((cross_reads as f64 / lines(&cross_pair) as f64 - 1.0).abs() < 0.01, "{cross_reads} CCI reads");
    let refills: u64 = cross_pair.threads.iter().map(|t| t.pmu.l2d_cache_refill).sum();
    assert!(refills >= lines(&cross_pair), "{refills} L2 refills");
    // The A57 of the cross pair waits longer for lines from the A53 than from another A57.
    let a57_busy_s = |r: &RunResult| r.threads.iter().find(|t| t.cpu_time_on_s[4] > 0.0).unwrap().cpu_time_s;
    assert!(
        a57_busy_s(&cross_pair) > 1.2 * a57_busy_s(&big_pair),
        "{} vs {}",
        a57_busy_s(&cross_pair),
        a57_busy_s(&big_pair)
    );
    // Alone, a thread reads back its own data: no transfer.
    assert_eq!(lines(&run(&p, &[4], "instructions=1e6\npeer_written_fraction=0.5")), 0);
}
