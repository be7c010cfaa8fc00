//! The big.LITTLE MP scheduler (`hmp`) and vanilla CFS (`smp`) end to end on the Exynos 5422:
//! forced up-migration after the load crosses the threshold, the priority filter, short tasks
//! staying on LITTLE, no balancing across clusters, the stopper's latency.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::TraceEvent;
use hetlab_core::workload::Workload;
use std::collections::BTreeMap;

fn exynos() -> Platform {
    Platform::builtin("exynos5422").unwrap()
}

/// A run of `workload` (TOML text) under `scheduler` with `knobs`, `governor` everywhere,
/// traced.
fn run(p: &Platform, workload: &str, scheduler: SchedPolicy, knobs: &[(&str, f64)], governor: &str, limit_s: f64) -> RunResult {
    let w = Workload::from_toml("test.toml", workload).unwrap();
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.sched_tunables = knobs.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    c.trace = true;
    c.series = false;
    c.time_limit_s = limit_s;
    simulate(p, &w, c).unwrap()
}

/// Per thread name: its running time on each cluster, s, and when it first ran on each, s
/// (from the trace's context switches).
#[derive(Debug, Default, Clone)]
struct Residency {
    on: BTreeMap<String, f64>,
    first: BTreeMap<String, f64>,
}

fn residency(r: &RunResult) -> BTreeMap<String, Residency> {
    let names = &r.trace_threads.names;
    let mut out: BTreeMap<String, Residency> = BTreeMap::new();
    let mut current: Vec<(u32, f64)> = vec![(0, 0.0); r.cpus.len()];
    let mut close = |cpu: usize, (tid, since): (u32, f64), at: f64, out: &mut BTreeMap<String, Residency>| {
        if tid != 0 {
            let e = out.entry(names[tid as usize].clone()).or_default();
            let cluster = r.cpus[cpu].cluster.clone();
            *e.on.entry(cluster.clone()).or_default() += (at - since) * 1e-6;
            e.first.entry(cluster).or_insert(since * 1e-6);
        }
    };
    for ev in &r.trace {
        if let TraceEvent::SchedSwitch { time_us, cpu, next_tid, .. } = *ev {
            close(cpu, current[cpu], time_us, &mut out);
            current[cpu] = (next_tid, time_us);
        }
    }
    for cpu in 0..current.len() {
        close(cpu, current[cpu], r.time_s * 1e6, &mut out);
    }
    out
}

#[test]
fn explore() {
    let p = exynos();
    let w = "name='w'\n[[tasks]]\nname='hog'\n[[tasks.phases]]\nsleep_us=1000000\n[[tasks.phases]]\ninstructions=2e9\n";
    let r = run(&p, w, SchedPolicy::Hmp, &[], "performance", 10.0);
    println!("{:#?}", residency(&r));
    println!("time {}", r.time_s);
}
