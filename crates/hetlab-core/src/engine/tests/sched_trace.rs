//! The scheduler's trace events end to end: tracing changes nothing else, PELT ramps, wake-ups,
//! migrations and over-utilisation traced where the kernel traces them.

use crate::engine::{simulate, Engine, SimConfig};
use crate::platform::Platform;
use crate::result::RunResult;
use crate::sched::smp::Smp;
use crate::sched::{Migration, Placement, SchedPolicy, SchedView, WakeKind};
use crate::trace::{PrevState, TraceEvent};
use crate::workload::Workload;

fn exynos() -> Platform {
    Platform::builtin("exynos5422").unwrap()
}

fn config(p: &Platform, governor: &str, trace: bool) -> SimConfig {
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    c.scheduler = SchedPolicy::Smp;
    c.trace = trace;
    c
}

/// `smp`'s choices, PELT tracked; over-utilised from `overutilized_from_us` until
/// `overutilized_until_us`; at the first tick after `move_at_us` it moves thread 0,
/// running, to CPU `move_to`.
struct Probe {
    smp: Smp,
    overutilized: Option<(f64, f64)>,
    now_us: f64,
    move_at_us: f64,
    move_to: usize,
}

impl Placement for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn select_cpu(&mut self, view: &SchedView, thread: usize, kind: WakeKind) -> usize {
        self.now_us = view.now_us;
        self.smp.select_cpu(view, thread, kind)
    }
    fn balance_newidle(&mut self, view: &SchedView, cpu: usize) -> Option<Migration> {
        self.now_us = view.now_us;
        self.smp.balance_newidle(view, cpu)
    }
    fn tick(&mut self, view: &SchedView, cpu: usize, out: &mut Vec<Migration>) {
        self.now_us = view.now_us;
        if view.now_us >= self.move_at_us && view.rqs[cpu].curr == Some(0) {
            self.move_at_us = f64::INFINITY;
            out.push(Migration { thread: 0, to_cpu: self.move_to });
        }
    }
    fn uses_tick(&self) -> bool {
        true
    }
    fn uses_util(&self) -> bool {
        true
    }
    fn overutilized(&self) -> Option<bool> {
        self.overutilized.map(|(from, until)| self.now_us >= from && self.now_us < until)
    }
}

fn probe_run(p: &Platform, workload: &str, governor: &str, probe: Probe) -> RunResult {
    probe_run_on(p, workload, governor, None, probe)
}

fn probe_run_on(p: &Platform, workload: &str, governor: &str, cluster: Option<&str>, probe: Probe) -> RunResult {
    let w = Workload::from_spec(workload).unwrap();
    let mut c = config(p, governor, true);
    c.cluster = cluster.map(|name| p.cluster_index(name).unwrap());
    Engine::with_placement(p, &w, c, Box::new(probe)).unwrap().run().unwrap()
}

fn no_probe() -> Probe {
    Probe { smp: Smp::new(&exynos()), overutilized: None, now_us: 0.0, move_at_us: f64::INFINITY, move_to: 0 }
}

#[test]
fn tracing_changes_nothing_but_the_trace() {
    let p = exynos();
    let w = Workload::from_spec("mixed8").unwrap();
    let with = simulate(&p, &w, config(&p, "schedutil", true)).unwrap();
    let without = simulate(&p, &w, config(&p, "schedutil", false)).unwrap();
    assert!(without.trace.is_empty());
    let count = |f: fn(&TraceEvent) -> bool| with.trace.iter().filter(|e| f(e)).count();
    assert!(count(|e| matches!(e, TraceEvent::SchedPeltSe { .. })) > 100);
    assert!(count(|e| matches!(e, TraceEvent::SchedPeltCfs { .. })) > 100);
    assert!(count(|e| matches!(e, TraceEvent::SchedWakeup { new_task: false, .. })) > 100);
    assert_eq!(serde_json::to_string(&with).unwrap(), serde_json::to_string(&without).unwrap());
}

/// A CPU-bound thread alone on an A15 at its top OPP (performance): its traced util is the
/// kernel's ramp 1024·(1 - y^n) after n periods, within the part of a period the kernel
/// accounts undecayed; its runnable ratio starts at 1023 (new task) and stays there; the
/// CPU's capacity is traced at boot.
#[test]
fn a_running_thread_traces_the_kernels_ramp() {
    let p = exynos();
    let big = p.cluster_index("big").unwrap();
    let r = probe_run_on(&p, "cpu-bound:threads=1,instructions=2e9", "performance", Some("big"), no_probe());
    let tid = r.threads[0].tid;
    let samples: Vec<_> = r
        .trace
        .iter()
        .filter_map(|e| match e {
            TraceEvent::SchedPeltSe { tid: t, signals, .. } if *t == tid => Some(*signals),
            _ => None,
        })
        .collect();
    assert!(samples.len() > 100, "{}", samples.len());
    assert_eq!(r.threads[0].migrations, 0);
    // forked on an A15 at 0 (vanilla CFS: the idlest CPU next to the parent's), running
    // there since: 1024·(1 - y^n) after n periods, within
    // one period's contribution (1024·(1 - y) = 22) and the truncations
    for s in &samples {
        let periods = s.update_time_ns as f64 / (1024.0 * 1024.0);
        let expected = 1024.0 * (1.0 - 0.5f64.powf(periods / 32.0));
        assert!((s.util as f64 - expected).abs() <= 25.0, "{s:?}: {expected}");
        assert!(s.runnable >= 1000, "{s:?}");
    }
    assert!(samples.last().unwrap().util >= 1000, "{:?}", samples.last());
    let boot: Vec<_> = r
        .trace
        .iter()
        .take_while(|e| e.time_us() == 0.0)
        .filter_map(|e| match e {
            TraceEvent::SchedCpuCapacity { cpu, capacity_orig, capacity_curr, .. } => {
                Some((*cpu, *capacity_orig, *capacity_curr))
            }
            _ => None,
        })
        .collect();
    assert_eq!(boot.len(), 8);
    assert!(boot.contains(&(4, 1024, 1024)), "{boot:?}");
    assert!(boot.contains(&(0, p.cpu_capacity(1 - big), p.cpu_capacity(1 - big))), "{boot:?}");
}

/// A new thread is announced by `sched_wakeup_new` (no `sched_waking`); a forced
/// migration of the running thread is traced on the source CPU between its switch out
/// and its switch in; every switch-in of a woken thread follows its `sched_wakeup`.
#[test]
fn wakeups_and_migrations_are_traced_where_the_kernel_traces_them() {
    let p = exynos();
    let probe = Probe { move_at_us: 200_000.0, move_to: 5, ..no_probe() };
    let r = probe_run(&p, "mixed8", "schedutil", probe);
    let mut runnable: Vec<Option<usize>> = vec![None; 1 << 16]; // tid -> CPU it waits on
    let mut migrations = vec![0u64; 1 << 16];
    // per tid: first seen as new (sched_wakeup_new) or as woken (sched_waking), has run
    let mut first_new: Vec<Option<bool>> = vec![None; 1 << 16];
    let mut has_run = vec![false; 1 << 16];
    for e in &r.trace {
        match *e {
            TraceEvent::SchedWakeup { tid, target_cpu, new_task, .. } => {
                assert!(runnable[tid as usize].is_none(), "{e:?}: already runnable");
                runnable[tid as usize] = Some(target_cpu);
                assert_eq!(*first_new[tid as usize].get_or_insert(new_task), new_task, "{e:?}");
            }
            TraceEvent::SchedWaking { tid, .. } => {
                assert!(runnable[tid as usize].is_none(), "{e:?}");
                first_new[tid as usize].get_or_insert(false);
            }
            TraceEvent::SchedSwitch { cpu, prev_tid, prev_state, next_tid, .. } => {
                if prev_tid != 0 && prev_state == PrevState::Runnable {
                    runnable[prev_tid as usize] = Some(cpu);
                }
                if next_tid != 0 {
                    assert_eq!(runnable[next_tid as usize].take(), Some(cpu), "{e:?}");
                    has_run[next_tid as usize] = true;
                }
            }
            TraceEvent::SchedMigrateTask { tid, orig_cpu, dest_cpu, .. } => {
                assert_ne!(orig_cpu, dest_cpu);
                if let Some(waits_on) = runnable[tid as usize].as_mut() {
                    assert_eq!(*waits_on, orig_cpu, "{e:?}");
                    *waits_on = dest_cpu;
                }
                // the run's count starts once a thread has run (a thread that slept
                // first is woken away from the CPU it was forked on)
                migrations[tid as usize] += u64::from(has_run[tid as usize]);
            }
            _ => {}
        }
    }
    // mixed8: the periodic threads start asleep at a random phase, the others runnable
    let new: usize = r.threads.iter().filter(|th| first_new[th.tid as usize] == Some(true)).count();
    assert!(new > 0 && new < r.threads.len(), "{new}");
    for th in &r.threads {
        assert_eq!(migrations[th.tid as usize], th.migrations, "{}", th.name);
    }
    let tid0 = r.threads[0].tid;
    let forced = r.trace.iter().find(|e| {
        matches!(e, TraceEvent::SchedMigrateTask { tid, dest_cpu: 5, time_us, .. } if *tid == tid0 && *time_us >= 200_000.0)
    });
    assert!(
        matches!(forced, Some(TraceEvent::SchedMigrateTask { cpu, orig_cpu, .. }) if cpu == orig_cpu),
        "{forced:?}"
    );
}

#[test]
fn over_utilisation_is_traced_when_it_changes() {
    let p = exynos();
    let w = "cpu-bound:threads=2,instructions=1e9";
    let silent = probe_run(&p, w, "schedutil", no_probe());
    assert!(!silent.trace.iter().any(|e| matches!(e, TraceEvent::SchedOverutilized { .. })));
    let probe = Probe { overutilized: Some((100_000.0, 300_000.0)), ..no_probe() };
    let r = probe_run(&p, w, "schedutil", probe);
    let states: Vec<(f64, bool, u64)> = r
        .trace
        .iter()
        .filter_map(|e| match e {
            TraceEvent::SchedOverutilized { time_us, overutilized, span, .. } => Some((*time_us, *overutilized, *span)),
            _ => None,
        })
        .collect();
    // at boot, then at the first decision (a tick, every 5 ms) after each change
    assert_eq!(states.iter().map(|s| s.1).collect::<Vec<_>>(), [false, true, false], "{states:?}");
    assert_eq!(states[0].0, 0.0);
    assert!(states[1].0 >= 100_000.0 && states[1].0 <= 105_000.0, "{states:?}");
    assert!(states[2].0 >= 300_000.0 && states[2].0 <= 305_000.0, "{states:?}");
    assert!(states.iter().all(|s| s.2 == 0xff));
}
