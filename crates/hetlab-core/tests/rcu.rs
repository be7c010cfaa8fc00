//! RCU's deferred work on the TC2 (kernel::rcu, engine::kernel_work, engine::flow): what each option does to the
//! callbacks, the ticks of idle CPUs and cluster power-down. OS jitter is off so that every
//! wake-up of an idle CPU is a thread's or RCU's.

use hetlab_core::engine::{simulate, CpuIdle, SimConfig};
use hetlab_core::kernel::boot::BootOptions;
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::{TraceEvent, CPU_IDLE_EXIT};
use hetlab_core::workload::Workload;

fn tc2(hz: u32) -> Platform {
    let mut p = Platform::builtin("tc2").unwrap();
    p.noise.kernel_wakeup_mean_busy_us = 0;
    p.hz = hz;
    p
}

/// A thread pinned to `cpu` that runs 2 ms of reference work every 100 ms for 2 s, queuing
/// `per_s` callbacks per second of that work (20 per burst at 10,000/s), each 5 µs, then
/// sleeps 200 ms (the last callbacks run before the end).
fn bursts(cpu: usize, per_s: f64, lazy: bool) -> Workload {
    let text = format!(
        "name = \"rcu-bursts\"\n[[tasks]]\nname = \"burst\"\naffinity = [{cpu}]\n[[tasks.phases]]\nrun_us = 2000.0\n\
         period_us = 100000\ncount = 20\ncall_rcu_per_s = {per_s}\nrcu_callback_us = 5.0\nrcu_lazy = {lazy}\n[[tasks.phases]]\nsleep_us = 200000\n"
    );
    Workload::from_toml("rcu-bursts.toml", &text).unwrap()
}

fn run(p: &Platform, w: &Workload, options: &str, trace: bool) -> RunResult {
    let governors = SimConfig::governor_plan(p, "performance", &[], None, &[]).unwrap();
    let config = SimConfig {
        scheduler: SchedPolicy::Pinned,
        cpuidle: CpuIdle::ClusterOff,
        kernel: BootOptions::parse(options, p.ncpus()).unwrap(),
        trace,
        ..SimConfig::new(governors)
    };
    simulate(p, w, config).unwrap()
}

/// Times idle `cpu` left idle for RCU alone (ticks that found no thread to run), as jiffies.
fn rcu_wake_jiffies(r: &RunResult, cpu: usize, tick_us: f64) -> Vec<u64> {
    let switch_ins: Vec<f64> = r
        .trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::SchedSwitch { time_us, cpu: c, prev_tid: 0, next_tid, .. } if c == cpu && next_tid != 0 => {
                Some(time_us)
            }
            _ => None,
        })
        .collect();
    r.trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::CpuIdle { time_us, cpu: c, state: CPU_IDLE_EXIT } if c == cpu => Some(time_us),
            _ => None,
        })
        .filter(|t| !switch_ins.iter().any(|s| (s - t).abs() < 1e-6))
        .map(|t| (t / tick_us).round() as u64)
        .collect()
}

#[test]
fn with_nothing_pending_an_idle_cpu_takes_no_tick() {
    let p = tc2(100);
    let r = run(&p, &bursts(0, 0.0, false), "", false);
    assert!(r.rcu.is_none(), "no callbacks, no options: RCU did nothing");
    // cpu0 wakes once per burst (20) and at the end of its last sleep, no more; the others
    // never leave idle
    assert_eq!(r.cpus[0].wakeups, 21);
    assert!(r.cpus[1..].iter().all(|c| c.wakeups == 0), "{:?}", r.cpus.iter().map(|c| c.wakeups).collect::<Vec<_>>());
    // with callbacks on cpu0, the CPUs that hold none still take no tick
    let r = run(&p, &bursts(0, 10_000.0, false), "", false);
    let rcu = r.rcu.as_ref().unwrap();
    assert!(rcu.idle_ticks[0] > 0);
    assert_eq!(&rcu.idle_ticks[1..], &[0, 0, 0, 0]);
    // the other CPUs wake only for the grace-period kthread, which runs where the scheduler
    // puts it (one wake-up per pass at most)
    let gp = r.threads.iter().find(|t| t.name.starts_with("rcu_preempt")).unwrap();
    for cpu in 1..5 {
        assert!(r.cpus[cpu].wakeups == 0 || gp.cpu_time_on_s[cpu] > 0.0, "cpu{cpu} woke for nothing");
    }
    assert!(r.cpus[1..].iter().map(|c| c.wakeups).sum::<u64>() <= rcu.gp_kthread_wakes);
}

#[test]
fn stock_rcu_runs_callbacks_where_they_were_queued_and_keeps_the_idle_tick_every_jiffy() {
    let p = tc2(100);
    let r = run(&p, &bursts(0, 10_000.0, false), "", true);
    let rcu = r.rcu.as_ref().unwrap();
    assert_eq!(rcu.callbacks_queued, 400);
    assert_eq!(rcu.softirq_callbacks[0], 400, "every callback ran on cpu0");
    assert!(rcu.grace_periods >= 20);
    // after each burst cpu0 ticks on consecutive jiffies until its callbacks are done (the
    // grace period needs the FQS scan, 3 jiffies, as the other CPUs are idle)
    let wakes = rcu_wake_jiffies(&r, 0, 10_000.0);
    let consecutive = wakes.windows(2).filter(|w| w[1] == w[0] + 1).count();
    assert!(consecutive >= 20 * 2, "{wakes:?}");
    assert_eq!(rcu.idle_ticks[0] as usize, wakes.len());
}

#[test]
fn fast_no_hz_wakes_an_idle_cpu_with_callbacks_every_four_jiffies_instead_of_every_jiffy() {
    let p = tc2(100);
    let stock = run(&p, &bursts(0, 10_000.0, false), "", true);
    let fast = run(&p, &bursts(0, 10_000.0, false), "rcu_fast_no_hz", true);
    let wakes = rcu_wake_jiffies(&fast, 0, 10_000.0);
    assert!(!wakes.is_empty());
    // the timer fires on multiples of RCU_IDLE_GP_DELAY, never on consecutive jiffies
    assert!(wakes.iter().all(|j| j % 4 == 0), "{wakes:?}");
    assert!(wakes.windows(2).all(|w| w[1] - w[0] >= 4), "{wakes:?}");
    let (s, f) = (stock.rcu.as_ref().unwrap(), fast.rcu.as_ref().unwrap());
    assert!(f.idle_ticks[0] * 2 < s.idle_ticks[0], "{} vs {}", f.idle_ticks[0], s.idle_ticks[0]);
    assert_eq!(f.softirq_callbacks[0], 400, "the callbacks still run on cpu0");
    // only lazy callbacks: the timer is six seconds away, past the end of the run's idle gaps
    let lazy = run(&p, &bursts(0, 10_000.0, true), "rcu_fast_no_hz", false);
    assert_eq!(lazy.rcu.as_ref().unwrap().idle_ticks[0], 0);
}

#[test]
fn nocbs_on_the_a15s_moves_every_callback_to_rcuo_kthreads_on_the_a7s() {
    let p = tc2(100);
    for options in ["rcu_nocbs=0-1", "rcu_nocbs=0-1,rcu_fast_no_hz"] {
        let r = run(&p, &bursts(0, 10_000.0, false), options, false);
        let rcu = r.rcu.as_ref().unwrap();
        assert_eq!(&rcu.softirq_callbacks[..2], &[0, 0], "{options}");
        assert_eq!(&rcu.idle_ticks[..2], &[0, 0], "{options}: RCU never cuts an A15's idle period");
        assert_eq!(rcu.rcuo_callbacks, 400, "{options}");
        // cpu0 wakes only for its own thread
        assert_eq!(r.cpus[0].wakeups, 21, "{options}");
        let rcuo = r.threads.iter().find(|t| t.name == "rcuop/0").unwrap();
        assert!(rcuo.cpu_time_s > 0.0);
        assert_eq!(rcuo.cpu_time_on_s[0] + rcuo.cpu_time_on_s[1], 0.0, "{options}: rcuo stays on the A7s");
    }
}

#[test]
fn a_cluster_powers_down_only_when_all_its_cpus_are_idle_past_the_target_residency() {
    // HZ=1000: a jiffy (1 ms) is shorter than the A15 cluster's 2 ms target residency
    let p = tc2(1000);
    let a15 = p.cluster_index("a15").unwrap();
    let none = run(&p, &bursts(0, 0.0, false), "", false);
    let stock = run(&p, &bursts(0, 10_000.0, false), "", false);
    let fast = run(&p, &bursts(0, 10_000.0, false), "rcu_fast_no_hz", false);
    // without RCU, one power-down per idle gap; with the stock tick the cluster stays up
    // while callbacks are pending (ticks 1 ms apart), then goes down: the same count but less
    // time down; with fast-no-hz's 4 ms timer it may also power down between wake-ups
    let off = |r: &RunResult| r.clusters[a15].off_s;
    assert!(none.clusters[a15].power_downs >= 20);
    assert!(off(&stock) < off(&none), "{} vs {}", off(&stock), off(&none));
    assert!(fast.clusters[a15].power_downs > stock.clusters[a15].power_downs);
    // a busy CPU keeps its cluster up: cpu1 runs all the time
    let text = "name = \"busy\"\n[[tasks]]\nname = \"spin\"\naffinity = [1]\n[[tasks.phases]]\ninstructions = 2e9\n";
    let busy = run(&p, &Workload::from_toml("busy.toml", text).unwrap(), "", false);
    assert_eq!(busy.clusters[a15].power_downs, 0);
}

#[test]
fn the_clusters_shared_logic_costs_its_busy_power_once_however_many_cpus_are_busy() {
    let p = tc2(100);
    let a15 = p.cluster_index("a15").unwrap();
    // one thread pinned to each CPU, 0.5 s of reference work each
    let spin = |cpus: &[usize]| {
        let tasks: String = cpus
            .iter()
            .map(|c| format!("[[tasks]]\nname = \"spin{c}\"\naffinity = [{c}]\n[[tasks.phases]]\nrun_us = 500000.0\n"))
            .collect();
        run(&p, &Workload::from_toml("spin.toml", &format!("name = \"spin\"\n{tasks}")).unwrap(), "", false)
    };
    let (one, two) = (spin(&[0]), spin(&[0, 1]));
    let t = one.time_s;
    assert!((two.time_s - t).abs() < 1e-3 * t);
    let (e1, e2) = (one.clusters[a15].dynamic_j, two.clusters[a15].dynamic_j);
    // e1 = (core + shared) t, e2 = (2 core + shared) t: the shared part is 2 e1 - e2
    let shared_w = (2.0 * e1 - e2) / t;
    assert!((shared_w - 2.845).abs() < 0.02 * 2.845, "{shared_w} W");
}

#[test]
fn every_seed_002_workload_finishes_under_every_option_and_seed() {
    // A lost wake-up (an rt-app resume with nobody waiting) would leave a fixed-count thread
    // waiting forever; the audio chain hands buffers over with replies so that none is lost,
    // and waits for the codec's periods on a semaphore its interrupts post.
    let p = Platform::builtin("tc2").unwrap();
    let offload = "rcu_nocbs=0-1,rcuo_affinity=2-4,irqaffinity=2-4,workqueue.unbound_cpus=2-4";
    for name in ["cyclictest", "sysbench", "andebench2", "andebench8", "audio", "audio-bbench"] {
        let w = Workload::from_spec(name).unwrap();
        for options in ["", "rcu_nocbs=0-1", "rcu_fast_no_hz", "rcu_nocbs=0-1,rcu_fast_no_hz", offload] {
            for seed in 1..=3 {
                let governors = SimConfig::governor_plan(&p, "ondemand", &[], None, &[]).unwrap();
                let config = SimConfig {
                    seed,
                    scheduler: SchedPolicy::parse("hmp").unwrap(),
                    cpuidle: CpuIdle::ClusterOff,
                    kernel: BootOptions::parse(options, p.ncpus()).unwrap(),
                    series: false,
                    time_limit_s: 900.0,
                    ..SimConfig::new(governors)
                };
                let r = simulate(&p, &w, config).unwrap();
                assert!(r.completed, "{name} '{options}' seed {seed}: stuck at {} s", r.time_s);
                // only the browser's page loads queue callbacks (the others' loops free nothing
                // through call_rcu: the workload files' derivations)
                let queued = r.rcu.as_ref().map_or(0, |rcu| rcu.callbacks_queued);
                assert_eq!(queued > 0, name == "audio-bbench", "{name} '{options}': {queued} callbacks");
            }
        }
    }
}

/// The kernel's own work of `name`'s kthreads (`rcuop/`, `rcu_preempt`), s per CPU.
fn kthread_time_on(r: &RunResult, prefix: &str) -> Vec<f64> {
    let mut on = vec![0.0; r.cpus.len()];
    for t in r.threads.iter().filter(|t| t.name.starts_with(prefix)) {
        for (a, b) in on.iter_mut().zip(&t.cpu_time_on_s) {
            *a += b;
        }
    }
    on
}

#[test]
fn call_rcu_at_a_known_rate_charges_its_callbacks_work_where_the_kernel_runs_them() {
    // 20 bursts of 2 ms of reference work at 10,000 call_rcu per s: 400 callbacks of 5 µs,
    // 2 ms of reference work; `performance` keeps each cluster at its top OPP, where an A15
    // (the reference core) does it in 2 ms and an A7 in 2 ms x 1.2/1.0 GHz x 1.98 (its
    // cpi_factor): 4.752 ms
    let p = tc2(100);
    let expected_a15_s = 400.0 * 5e-6;
    let expected_a7_s = expected_a15_s * 1.2 / 1.0 * 1.98;
    let close = |got: f64, want: f64| (got - want).abs() < 1e-9 + 1e-6 * want;
    // stock: RCU_SOFTIRQ on the CPU that queued them, an A15 or an A7
    for (cpu, want) in [(0, expected_a15_s), (2, expected_a7_s)] {
        let r = run(&p, &bursts(cpu, 10_000.0, false), "", false);
        let rcu = r.rcu.as_ref().unwrap();
        assert_eq!(rcu.callbacks_queued, 400);
        assert_eq!(rcu.softirq_callbacks[cpu], 400);
        assert!(close(rcu.softirq_s[cpu], want), "cpu{cpu}: {} s, expected {want} s", rcu.softirq_s[cpu]);
        let elsewhere: f64 = rcu.softirq_s.iter().enumerate().filter(|&(c, _)| c != cpu).map(|(_, s)| s).sum();
        assert_eq!(elsewhere, 0.0);
        // the grace periods they needed cost the grace-period kthread CPU time
        assert!(rcu.grace_periods >= 20);
        assert!(kthread_time_on(&r, "rcu_preempt").iter().sum::<f64>() > 0.0);
    }
    // rcu_nocbs=0-1: cpu0's callbacks run in rcuop/0 on the A7s, nothing in cpu0's softirq;
    // its time there is the callbacks' work on an A7 plus one short pass per wake-up
    let r = run(&p, &bursts(0, 10_000.0, false), "rcu_nocbs=0-1", false);
    let rcu = r.rcu.as_ref().unwrap();
    assert_eq!(rcu.rcuo_callbacks, 400);
    assert!(rcu.softirq_s.iter().all(|&s| s == 0.0), "{:?}", rcu.softirq_s);
    let rcuo = kthread_time_on(&r, "rcuop/0");
    assert_eq!(rcuo[0] + rcuo[1], 0.0, "rcuop/0 runs on the A7s");
    let on_a7_s: f64 = rcuo[2..].iter().sum();
    let passes = 2.0 * 20.0; // a wake-up at the first call_rcu of a burst, one at its grace period's end
    let pass_s = passes * hetlab_core::kernel::rcu::RCUO_PASS_US * 1e-6 * 1.2 * 1.98;
    assert!(
        on_a7_s > expected_a7_s * 0.8 && on_a7_s < (expected_a7_s + pass_s) * 1.25,
        "{on_a7_s} s vs {expected_a7_s} s"
    );
}

#[test]
fn an_rcuo_kthread_woken_while_it_runs_is_woken_again_at_its_grace_periods_end() {
    // Both A15s queue callbacks in overlapping bursts; their rcuo kthreads share one A7, so
    // one is often running or queued when the other's list (or its own) asks for a wake-up.
    // Every callback queued before the last sleep must still be invoked.
    let p = tc2(100);
    let task = |cpu: usize, period_us: u32| {
        format!(
            "[[tasks]]\nname = \"burst{cpu}\"\naffinity = [{cpu}]\n[[tasks.phases]]\nrun_us = 3000.0\nperiod_us = {period_us}\n\
             count = 100\ncall_rcu_per_s = 10000\nrcu_callback_us = 20.0\n[[tasks.phases]]\nsleep_us = 300000\n"
        )
    };
    let text = format!("name = \"two-bursts\"\n{}{}", task(0, 7000), task(1, 11000));
    let w = Workload::from_toml("two-bursts.toml", &text).unwrap();
    let r = run(&p, &w, "rcu_nocbs=0-1,rcuo_affinity=2", false);
    let rcu = r.rcu.as_ref().unwrap();
    assert!(rcu.callbacks_queued >= 2 * 100 * 30 - 2, "{}", rcu.callbacks_queued);
    assert_eq!(rcu.rcuo_callbacks, rcu.callbacks_queued, "callbacks left uninvoked in an rcuo list");
    for name in ["rcuop/0", "rcuop/1"] {
        let on = kthread_time_on(&r, name);
        assert!(on[2] > 100.0 * 30.0 * 20e-6, "{name}: {on:?}");
    }
}
