//! Seed 003's "big.LITTLE emulation" end to end: `perf record -a -e instructions -C <cpus>
//! -c N` on the simulated vexpress (`hetlab_core::kernel::perf_sampling`). The slowdown is
//! what the mechanism gives; nothing here sets it.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::kernel::perf_sampling::PerfSampling;
use hetlab_core::model::pollution::sample_cycles;
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::workload::Workload;

const PERIOD: u64 = 10_000;

fn vexpress() -> Platform {
    Platform::builtin("vexpress-a9").unwrap()
}

/// The vexpress without OS jitter, so that a thread's time is its work and its samples only.
fn quiet_vexpress() -> Platform {
    let text = hetlab_core::platform::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "vexpress-a9").unwrap().1;
    let quiet = text.replace("kernel_wakeup_mean_busy_us = 105", "kernel_wakeup_mean_busy_us = 0");
    assert_ne!(quiet, text, "fixture: the jitter line is in the platform file");
    Platform::from_toml("quiet-vexpress.toml", &quiet).unwrap()
}

/// A compute-only thread (CPI 1, no memory references) of `instructions` on each CPU listed.
fn compute(instructions: &[(usize, f64)]) -> Workload {
    let mut text = String::from("name = 'compute'\n");
    for (cpu, n) in instructions {
        text += &format!(
            "[[tasks]]\nname = 'on{cpu}'\naffinity = [{cpu}]\n[[tasks.phases]]\ninstructions = {n:?}\ncpi = 1.0\nrefs_per_instr = 0.0\n"
        );
    }
    Workload::from_toml("compute.toml", &text).unwrap()
}

fn run(p: &Platform, w: &Workload, perf_cpus: Option<&[usize]>) -> RunResult {
    let mut c = SimConfig::new(SimConfig::governor_plan(p, "performance", &[], None, &[]).unwrap());
    c.perf_sampling = perf_cpus.map(|cpus| PerfSampling { cpus: cpus.to_vec(), period_instructions: PERIOD });
    simulate(p, w, c).unwrap()
}

fn finish_s(r: &RunResult, task: &str) -> f64 {
    r.threads.iter().find(|t| t.name.starts_with(task)).unwrap().finish_s
}

/// Samples a thread of `w` instructions alone on a sampled CPU takes (the counter starts at 0).
fn samples(w: f64, h: f64) -> f64 {
    if w < PERIOD as f64 {
        0.0
    } else {
        ((w - PERIOD as f64) / (PERIOD as f64 - h)).floor() + 1.0
    }
}

#[test]
fn a_cpu_bound_thread_grows_by_exactly_the_samples_cost() {
    let p = quiet_vexpress();
    let cost = p.perf_sample.clone().unwrap();
    let khz = p.clusters[0].max_khz() as f64;
    let w = 1e8;
    let plain = run(&p, &compute(&[(1, w)]), None);
    let sampled = run(&p, &compute(&[(1, w)]), Some(&[1, 3]));
    // no jitter, CPI 1: the work alone is w cycles
    let work_s = w / (khz * 1e3);
    assert!((finish_s(&plain, "on1") - work_s).abs() < 1e-9 * work_s, "{}", finish_s(&plain, "on1"));
    // the samples' share: one per (N - h) instructions after the first N, each the handler's
    // warm run long (the thread makes no memory reference: it evicts none of the handler's lines)
    let n = samples(w, cost.counted_instructions);
    let expected = work_s + n * cost.handler_cycles / (khz * 1e3);
    let got = finish_s(&sampled, "on1");
    assert!((got - expected).abs() < 1e-9 * expected, "{got} s vs {expected} s ({n} samples)");
    // the thread's own CPU time is its work: the handlers' time is stolen from it
    let thread = sampled.threads.iter().find(|t| t.name.starts_with("on1")).unwrap();
    assert!((thread.cpu_time_s - work_s).abs() < 1e-9 * work_s);
    assert_eq!(thread.pmu.inst_retired, w as u64);
}

#[test]
fn a_thread_shorter_than_the_period_is_not_slowed() {
    let p = quiet_vexpress();
    let short = (PERIOD - 1) as f64;
    let plain = run(&p, &compute(&[(1, short)]), None);
    let sampled = run(&p, &compute(&[(1, short)]), Some(&[1]));
    assert_eq!(finish_s(&sampled, "on1"), finish_s(&plain, "on1"));
    // one instruction more, and it pays one sample
    let cost = p.perf_sample.clone().unwrap();
    let sampled = run(&p, &compute(&[(1, PERIOD as f64)]), Some(&[1]));
    let expected = (PERIOD as f64 + cost.handler_cycles) / 400e6;
    assert!((finish_s(&sampled, "on1") - expected).abs() < 1e-12, "{}", finish_s(&sampled, "on1"));
}

#[test]
fn unsampled_cpus_are_untouched() {
    let p = vexpress(); // with jitter: the unsampled CPUs' runs stay identical all the same
    let w = compute(&[(0, 4e7), (1, 4e7), (2, 4e7)]);
    let plain = run(&p, &w, None);
    let sampled = run(&p, &w, Some(&[1]));
    assert_eq!(finish_s(&sampled, "on0"), finish_s(&plain, "on0"));
    assert_eq!(finish_s(&sampled, "on2"), finish_s(&plain, "on2"));
    assert!(finish_s(&sampled, "on1") > 1.1 * finish_s(&plain, "on1"));
    // a run that asks for nothing is the run without the mechanism
    assert_eq!(
        serde_json::to_string(&run(&p, &w, None)).unwrap(),
        serde_json::to_string(&plain).unwrap(),
        "perf sampling is off unless configured"
    );
}

#[test]
fn bad_perf_settings_are_one_line_errors() {
    let p = vexpress();
    let w = compute(&[(0, 1e6)]);
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
    c.perf_sampling = Some(PerfSampling { cpus: vec![7], period_instructions: PERIOD });
    let e = simulate(&p, &w, c.clone()).unwrap_err();
    assert!(e.contains("cpu7 does not exist") && !e.contains('\n'), "{e}");
    let exynos = Platform::builtin("exynos5422").unwrap();
    c.governors = SimConfig::governor_plan(&exynos, "performance", &[], None, &[]).unwrap();
    c.perf_sampling = Some(PerfSampling { cpus: vec![1], period_instructions: PERIOD });
    let e = simulate(&exynos, &w, c).unwrap_err();
    assert!(e.contains("[perf_sample]"), "{e}");
}

/// What the mechanism gives for seed 003's N = 10,000 on the vexpress's 400 MHz A9s, for the
/// `cpu-bound` generator's thread (CPI 0.9 on the A9, L1-resident), with OS jitter on: printed
/// (`cargo test -p hetlab-core --release --test perf_sampling -- --nocapture`) and checked
/// against the mechanism's closed form.
#[test]
fn slowdown_of_a_cpu_bound_task_at_n_10000_on_the_vexpress() {
    let p = vexpress();
    let cost = p.perf_sample.clone().unwrap();
    let w = Workload::from_spec("cpu-bound:threads=1,instructions=4e8").unwrap();
    let mut pinned = w.clone();
    pinned.tasks[0].affinity = Some(vec![1]);
    let plain = run(&p, &pinned, None);
    let sampled = run(&p, &pinned, Some(&[1, 3]));
    let slowdown = sampled.time_s / plain.time_s;
    // closed form: per sample, N - h instructions of work at 0.9 cycles each plus the sample,
    // whose cost the thread's cache traffic sets (`sample_cycles`)
    let cpi = 0.9;
    let work = PERIOD as f64 - cost.counted_instructions;
    let mem = &pinned.tasks[0].phases[0].mem;
    let sample = sample_cycles(&cost, mem, p.core_type_of(0), p.clusters[0].l2_bytes as f64, &p.caches, work);
    let closed = 1.0 + sample / (work * cpi);
    println!(
        "vexpress-a9, perf record -c {PERIOD} on the task's CPU: cpu-bound (CPI {cpi}) {:.4} s -> {:.4} s: \
         time x {slowdown:.4} (closed form {closed:.4}), speed {:.1} % of unsampled",
        plain.time_s,
        sampled.time_s,
        100.0 / slowdown
    );
    assert!((slowdown - closed).abs() < 2e-3, "{slowdown} vs {closed}");
}
