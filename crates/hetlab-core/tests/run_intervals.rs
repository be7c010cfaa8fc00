//! `trace::intervals::run_intervals` on whole runs. A thread's intervals on a CPU are its CPU time there
//! plus what was stolen from it while it held the CPU (interrupts, OS jitter, the refill of a
//! cold cache after a migration): on the LinSched model (no interrupts, no OS jitter) only the
//! refills, a little; on the vexpress with seed 003's perf sampling on CPUs 1 and 3 the sample
//! handlers' time, on those CPUs only.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::kernel::perf_sampling::PerfSampling;
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::intervals::run_intervals;
use hetlab_core::workload::Workload;

fn traced(
    platform: &str,
    workload: &str,
    scheduler: SchedPolicy,
    perf: Option<PerfSampling>,
    limit_s: f64,
) -> RunResult {
    let p = Platform::builtin(platform).unwrap();
    let w = Workload::from_spec(workload).unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(&p, "performance", &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.perf_sampling = perf;
    c.trace = true;
    c.series = false;
    c.time_limit_s = limit_s;
    simulate(&p, &w, c).unwrap()
}

/// Per thread (result order) and CPU: the summed length of its run intervals, s.
fn on_cpu_s(r: &RunResult) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; r.cpus.len()]; r.threads.len()];
    for i in run_intervals(&r.trace, r.time_s * 1e6) {
        if let Some(t) = r.threads.iter().position(|t| t.tid == i.tid) {
            out[t][i.cpu] += (i.end_us - i.start_us) * 1e-6;
        }
    }
    out
}

#[test]
fn on_the_linsched_model_the_intervals_are_the_cpu_time_and_the_refills() {
    let r = traced("linsched-2b2l", "linsched-test", SchedPolicy::Hmp, None, 2.0);
    let on = on_cpu_s(&r);
    for (t, th) in r.threads.iter().enumerate() {
        for cpu in 0..r.cpus.len() {
            assert!(on[t][cpu] >= th.cpu_time_on_s[cpu] - 1e-9, "{} cpu {cpu}: {on:?}", th.name);
        }
        let extra: f64 = on[t].iter().sum::<f64>() - th.cpu_time_s;
        assert!(extra < 0.01 * th.cpu_time_s, "{}: {extra} s beyond {} s", th.name, th.cpu_time_s);
    }
    // one interval never overlaps another on the same CPU
    let mut by_cpu = run_intervals(&r.trace, r.time_s * 1e6);
    by_cpu.sort_by(|a, b| a.cpu.cmp(&b.cpu).then(a.start_us.total_cmp(&b.start_us)));
    for w in by_cpu.windows(2) {
        assert!(w[0].cpu != w[1].cpu || w[0].end_us <= w[1].start_us + 1e-9, "{w:?}");
    }
}

#[test]
fn perf_samples_lengthen_the_intervals_on_the_sampled_cpus_only() {
    let perf = PerfSampling { cpus: vec![1, 3], period_instructions: 10_000 };
    let r = traced("vexpress-a9", "cpu-bound:threads=4", SchedPolicy::Pinned, Some(perf), 0.5);
    let on = on_cpu_s(&r);
    for (t, th) in r.threads.iter().enumerate() {
        for (cpu, (&on_s, &own_s)) in on[t].iter().zip(&th.cpu_time_on_s).enumerate() {
            if own_s < 0.1 {
                continue;
            }
            // a CPU-bound thread on a sampled CPU: a seventh of its time in the handlers (their
            // warm 1,400 cycles and the lines the two evict from each other, per 9,000 of its own
            // instructions: `model::pollution`); elsewhere only OS jitter
            let share = (on_s - own_s) / on_s;
            if cpu % 2 == 1 {
                assert!(share > 0.1 && share < 0.5, "{} cpu {cpu}: {share}", th.name);
            } else {
                assert!(share < 0.01, "{} cpu {cpu}: {share}", th.name);
            }
        }
    }
}
