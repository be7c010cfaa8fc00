//! The real-time and deadline classes end to end: FIFO and round-robin preemption and turns,
//! RT push and pull, schedutil under RT work, RT throttling, deadline servers and their
//! admission.

use super::*;

/// An rt-app workload run under `governor` (and `scheduler`), traced.
fn rtapp_run(p: &Platform, doc: &str, governor: &str, scheduler: SchedPolicy) -> RunResult {
    rtapp_run_with(p, doc, governor, scheduler, &[])
}

/// The same with scheduler tunables (sysctls).
fn rtapp_run_with(
    p: &Platform,
    doc: &str,
    governor: &str,
    scheduler: SchedPolicy,
    tunables: &[(&str, f64)],
) -> RunResult {
    let w = crate::rtapp::from_rtapp_json("rt.json", doc).unwrap();
    let mut c = config(p, governor, None, &[]);
    c.scheduler = scheduler;
    c.sched_tunables = tunables.iter().map(|&(n, v)| (n.to_string(), v)).collect();
    c.trace = true;
    simulate(p, &w, c).unwrap()
}

fn trace_text(r: &RunResult) -> String {
    let mut text = String::new();
    crate::trace::ftrace::write_ftrace(
        &r.trace,
        &r.trace_threads,
        r.threads[0].cpu_time_on_s.len(),
        Default::default(),
        &mut text,
    );
    text
}

fn thread<'r>(r: &'r RunResult, name: &str) -> &'r crate::result::ThreadReport {
    r.threads.iter().find(|t| t.name.starts_with(name)).unwrap_or_else(|| panic!("no thread {name}"))
}

/// A CFS hog on CPU 4 from the start, and task `rt` of `policy` waking 10 ms in for 50 ms of
/// work there: its finish time, and the hog's.
fn waking_beside_a_hog(policy: &str) -> (f64, f64) {
    let priority = if policy == "SCHED_OTHER" { 0 } else { 50 };
    let p = exynos();
    let doc = format!(
        r#"{{"global": {{"calibration": "CPU4"}}, "tasks": {{
            "hog": {{"cpus": [4], "loop": 1, "run": 200000}},
            "rt": {{"cpus": [4], "policy": "{policy}", "priority": {priority}, "loop": 1, "delay": 10000, "run": 50000}}}}}}"#
    );
    let r = rtapp_run(&p, &doc, "performance", SchedPolicy::Smp);
    (thread(&r, "rt").finish_s, thread(&r, "hog").finish_s)
}

#[test]
fn a_fifo_task_preempts_cfs_at_once_and_runs_to_its_end() {
    let (rt_s, hog_s) = waking_beside_a_hog("SCHED_FIFO");
    // 10 ms + its 50 ms, within a wake-up's exit latency; the hog waits for all of it
    assert!((rt_s - 0.060).abs() < 0.5e-3, "FIFO task done at {rt_s} s");
    assert!((hog_s - 0.250).abs() < 1e-3, "hog done at {hog_s} s");
    // as a CFS task it shares the CPU with the hog
    let (cfs_s, _) = waking_beside_a_hog("SCHED_OTHER");
    assert!(cfs_s > 0.09, "CFS task done at {cfs_s} s");
}

#[test]
fn a_waking_batch_task_waits_for_the_tick_where_a_normal_one_preempts() {
    // a CFS hog on CPU 4 from the start; task "w" wakes there at 12 ms, placed half a latency
    // behind the hog's vruntime: as SCHED_OTHER it preempts at once (`check_preempt_wakeup`), as
    // SCHED_BATCH it never preempts at wake-up and runs when the hog's turn ends at the next
    // tick (HZ 200: 15 ms; the hog has run far past its slice)
    let first_run_ms = |policy: &str| {
        let doc = format!(
            r#"{{"global": {{"calibration": "CPU4"}}, "tasks": {{
                "hog": {{"cpus": [4], "loop": 1, "run": 100000}},
                "w": {{"cpus": [4], "policy": "{policy}", "loop": 1, "delay": 12000, "run": 1000}}}}}}"#
        );
        let r = rtapp_run(&exynos(), &doc, "performance", SchedPolicy::Smp);
        let text = trace_text(&r);
        let line = text.lines().find(|l| l.contains("sched_switch") && l.contains("next_comm=w-")).expect("w ran");
        let stamp = line.split(": sched_switch").next().unwrap().split_whitespace().last().unwrap();
        stamp.parse::<f64>().unwrap() * 1e3
    };
    let (normal, batch) = (first_run_ms("SCHED_OTHER"), first_run_ms("SCHED_BATCH"));
    assert!((12.0..12.5).contains(&normal), "SCHED_OTHER first ran at {normal} ms");
    assert!((15.0..15.1).contains(&batch), "SCHED_BATCH first ran at {batch} ms");
    // the TOML form: policy = "batch" keeps its nice value
    let toml = "name = \"w\"\n[[tasks]]\nname = \"b\"\nnice = 5\npolicy = \"batch\"\n[[tasks.phases]]\nrun_us = 100\n";
    let w = Workload::from_toml("w.toml", toml).unwrap();
    assert_eq!((w.tasks[0].class, w.tasks[0].nice), (crate::workload::SchedClass::Batch, 5));
    let e = Workload::from_toml("w.toml", &toml.replace("batch", "bulk")).unwrap_err();
    assert!(e.contains("unknown policy 'bulk'; give SCHED_OTHER, SCHED_BATCH"), "{e}");
}

#[test]
fn round_robin_shares_a_priority_in_100_ms_turns_and_fifo_does_not() {
    let p = exynos();
    let two = |policy: &str| {
        let doc = format!(
            r#"{{"global": {{"calibration": "CPU4"}}, "tasks": {{"a": {{"cpus": [4], "policy": "{policy}", "priority": 20,
                "instance": 2, "loop": 1, "run": 250000}}}}}}"#
        );
        let r = rtapp_run(&p, &doc, "performance", SchedPolicy::Smp);
        let mut finish: Vec<f64> = r.threads.iter().filter(|t| t.name.starts_with('a')).map(|t| t.finish_s).collect();
        finish.sort_by(f64::total_cmp);
        let switches =
            trace_text(&r).lines().filter(|l| l.contains("sched_switch") && l.contains("prev_state=R+")).count();
        (finish, switches)
    };
    let (fifo, fifo_switches) = two("SCHED_FIFO");
    assert!((fifo[0] - 0.25).abs() < 1e-3 && (fifo[1] - 0.5).abs() < 1e-3, "{fifo:?}");
    assert_eq!(fifo_switches, 0);
    // RR: 100 ms turns (HZ 200: 20 ticks): a 0-100, b 100-200, a 200-300, b 300-400, a done
    // at 450, b at 500
    let (rr, rr_switches) = two("SCHED_RR");
    assert!((rr[0] - 0.45).abs() < 1e-3 && (rr[1] - 0.5).abs() < 1e-3, "{rr:?}");
    assert_eq!(rr_switches, 4, "turns end at 100, 200, 300 and 400 ms");
    // sched_rr_timeslice_ms 50: twice the turns, and one more: each task's 250 ms of work take
    // a little longer than 5 turns (its wake-up and cache refill), so b's fifth turn ends too
    let doc = r#"{"global": {"calibration": "CPU4"}, "tasks": {"a": {"cpus": [4], "policy": "SCHED_RR", "priority": 20,
        "instance": 2, "loop": 1, "run": 250000}}}"#;
    let r = rtapp_run_with(&p, doc, "performance", SchedPolicy::Smp, &[("sched_rr_timeslice_ms", 50.0)]);
    let switches = trace_text(&r).lines().filter(|l| l.contains("sched_switch") && l.contains("prev_state=R+")).count();
    assert_eq!(switches, 10);
}

#[test]
fn rt_tasks_are_pushed_to_cpus_they_can_run_on_and_pull_back() {
    let p = exynos();
    // a pinned FIFO 90 on CPU 4 for 100 ms; two FIFO 50s woken there that may use CPUs 4-5,
    // where CPU 5 runs a CFS hog: one goes to CPU 5 at once (preempting the hog), the other
    // waits and is pulled to CPU 4 when the FIFO 90 ends
    let doc = r#"{"global": {"calibration": "CPU4"}, "tasks": {
        "high": {"cpus": [4], "policy": "SCHED_FIFO", "priority": 90, "loop": 1, "run": 100000},
        "hog": {"cpus": [5], "loop": 1, "run": 300000},
        "mid": {"cpus": [4, 5], "policy": "SCHED_FIFO", "priority": 50, "instance": 2, "loop": 1, "delay": 1000,
                "run": 50000}}}"#;
    let r = rtapp_run(&p, doc, "performance", SchedPolicy::Smp);
    let mut mids: Vec<_> = r.threads.iter().filter(|t| t.name.starts_with("mid")).collect();
    mids.sort_by(|a, b| a.finish_s.total_cmp(&b.finish_s));
    assert!((mids[0].finish_s - 0.051).abs() < 1e-3, "first mid at {} s", mids[0].finish_s);
    assert!(mids[0].cpu_time_on_s[5] > 0.049, "{:?}", mids[0].cpu_time_on_s);
    // the second: on CPU 5 after the first (or CPU 4 after the FIFO 90) at 101 ms
    assert!((mids[1].finish_s - 0.101).abs() < 1.5e-3, "second mid at {} s", mids[1].finish_s);
    assert!((thread(&r, "high").finish_s - 0.1).abs() < 1e-3);
    // the trace prints the kernel's priorities: 99 - 50 and 99 - 90
    assert!(trace_text(&r).contains("next_prio=49") && trace_text(&r).contains("next_prio=9"));
}

#[test]
fn schedutil_runs_at_the_top_while_rt_work_is_runnable_and_eas_puts_it_on_big() {
    let p = exynos();
    let big = &p.clusters[cluster(&p, "big")].cpus;
    // a light FIFO task (2 ms every 20 ms) free to go anywhere
    let doc = r#"{"global": {"calibration": "CPU4"}, "tasks": {"light": {"policy": "SCHED_FIFO", "priority": 10,
        "loop": 50, "run": 2000, "timer": {"ref": "t", "period": 20000}}}}"#;
    let r = rtapp_run(&p, doc, "schedutil", SchedPolicy::Eas);
    let t = thread(&r, "light");
    let on_big: f64 = big.iter().map(|&c| t.cpu_time_on_s[c]).sum();
    assert!(on_big / t.cpu_time_s > 0.99, "{:?}", t.cpu_time_on_s);
    // as CFS it is light enough for EAS to keep it on LITTLE
    let r = rtapp_run(&p, &doc.replace("SCHED_FIFO", "SCHED_OTHER"), "schedutil", SchedPolicy::Eas);
    let t = thread(&r, "light");
    let on_big: f64 = big.iter().map(|&c| t.cpu_time_on_s[c]).sum();
    assert!(on_big / t.cpu_time_s < 0.5, "{:?}", t.cpu_time_on_s);
}

/// A FIFO hog of 2 s of CPU4's work pinned there, and a CFS hog beside it.
fn rt_hog(scheduler: SchedPolicy, governor: &str, sysctls: &[(&str, f64)]) -> RunResult {
    let doc = r#"{"global": {"calibration": "CPU4"}, "tasks": {
        "rt": {"cpus": [4], "policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": 2000000},
        "cfs": {"cpus": [4], "loop": 1, "run": 100000}}}"#;
    rtapp_run_with(&exynos(), doc, governor, scheduler, sysctls)
}

#[test]
fn a_fifo_hog_is_throttled_to_950_ms_a_second_in_5_10_and_borrows_runtime_in_3_10() {
    // 5.10 (EAS): 950 ms of each 1 s period, past it (at the next tick) CFS runs until the
    // period timer; the FIFO hog needs a third period
    let r = rt_hog(SchedPolicy::Eas, "schedutil", &[]);
    let (rt_s, cfs_s) = (thread(&r, "rt").finish_s, thread(&r, "cfs").finish_s);
    assert!(r.rt_throttles == 2 && (2.095..2.11).contains(&rt_s), "{} throttles, done at {rt_s} s", r.rt_throttles);
    // the CFS hog ran in the two 45-50 ms windows and finished after the FIFO hog
    assert!(cfs_s > rt_s && thread(&r, "cfs").cpu_time_s > 0.09, "{cfs_s}");
    // 3.10 (RT_RUNTIME_SHARE): CPU 4 borrows the idle CPUs' spare runtime up to the whole
    // period and is never throttled
    let r = rt_hog(SchedPolicy::Smp, "performance", &[]);
    assert_eq!(r.rt_throttles, 0);
    assert!((thread(&r, "rt").finish_s - 2.0).abs() < 2e-3);
    // the sysctls: a runtime of the whole period never throttles (the kernel's -1); at 500 ms
    // of each 1 s the 2 s of work need a fourth period
    let r = rt_hog(SchedPolicy::Eas, "schedutil", &[("sched_rt_runtime_us", 1e6)]);
    assert_eq!(r.rt_throttles, 0);
    let r = rt_hog(SchedPolicy::Eas, "schedutil", &[("sched_rt_runtime_us", 5e5)]);
    let rt_s = thread(&r, "rt").finish_s;
    assert!(r.rt_throttles >= 3 && rt_s > 3.0, "{} throttles, done at {rt_s} s", r.rt_throttles);
}

/// An rt-app run under EAS (Linux 5.10, schedutil) on `platform`, its threads on `cluster` if
/// given (the root domain).
fn dl_run(platform: &str, doc: &str, cluster: Option<&str>) -> Result<RunResult, String> {
    let p = Platform::builtin(platform).unwrap();
    let w = crate::rtapp::from_rtapp_json("dl.json", doc)?;
    let mut c = config(&p, "schedutil", cluster, &[]);
    c.scheduler = SchedPolicy::Eas;
    c.trace = true;
    simulate(&p, &w, c)
}

#[test]
fn a_deadline_server_gets_its_runtime_per_period_whatever_it_asks() {
    // linsched-2b2l's big cluster: 2 CPUs of capacity 1024 at one OPP (runtime unscaled), HZ
    // 1000. A task allowed 3 ms of each 10 ms that wants 5 ms each 10 ms: throttled at the tick
    // after its budget runs out (overruns are paid back), so 3 ms a period: 300 ms in 1 s
    let doc = r#"{"global": {"duration": 1, "calibration": "CPU2"}, "tasks": {"dl": {"policy": "SCHED_DEADLINE",
        "dl-runtime": 3000, "dl-period": 10000, "run": 5000, "timer": {"ref": "t", "period": 10000}}}}"#;
    let r = dl_run("linsched-2b2l", doc, Some("big")).unwrap();
    let dl = thread(&r, "dl");
    assert!((dl.cpu_time_s - 0.3).abs() < 0.0015, "{}", dl.cpu_time_s);
    // the throttles: preempted at prio -1 by the idle task, 3 ms into each period (it starts
    // at 0, on a tick)
    let text = trace_text(&r);
    let throttles = text.lines().filter(|l| l.contains("prev_prio=-1 prev_state=R+ ==> next_comm=swapper")).count();
    assert!(text.contains("     0.013000: sched_switch:         prev_comm=dl-0"), "throttled at 13 ms");
    assert!((98..=101).contains(&throttles), "{throttles}");
    // as SCHED_OTHER alone on its CPU it would run its 5 ms each period
    let r = dl_run(
        "linsched-2b2l",
        &doc.replace("SCHED_DEADLINE", "SCHED_OTHER").replace(r#""dl-runtime": 3000, "dl-period": 10000,"#, ""),
        Some("big"),
    )
    .unwrap();
    assert!((thread(&r, "dl").cpu_time_s - 0.5).abs() < 0.006);
}

#[test]
fn the_earliest_deadlines_run_first_on_two_cpus() {
    // four DL tasks of 5 ms (runtime 6 ms of 100 ms), deadlines 40, 30, 20 and 10 ms, forked in
    // that order at once on 2 CPUs: global EDF runs the 10 and 20 first (done at 5 ms), then 30
    // and 40 (done at 10 ms); forked in that order, FIFO would have run the 40 and 30 first
    let task = |d: u32| {
        format!(
            r#""d{d}": {{"policy": "SCHED_DEADLINE", "dl-runtime": 6000, "dl-deadline": {}, "dl-period": 100000,
                "loop": 1, "run": 5000}}"#,
            d * 1000
        )
    };
    let doc = format!(
        r#"{{"global": {{"calibration": "CPU2"}}, "tasks": {{ {}, {}, {}, {} }}}}"#,
        task(40),
        task(30),
        task(20),
        task(10)
    );
    let r = dl_run("linsched-2b2l", &doc, Some("big")).unwrap();
    let finish = |name: &str| thread(&r, name).finish_s;
    for (name, want) in [("d10", 0.005), ("d20", 0.005), ("d30", 0.010), ("d40", 0.010)] {
        assert!((finish(name) - want).abs() < 3e-4, "{name} done at {} s", finish(name));
    }
    // three tasks of 6 ms each period on 2 CPUs (1.8 of the 1.9 admitted): global EDF serves
    // all three, 6 ms every 10 ms each, over 1 s
    let doc = r#"{"global": {"duration": 1, "calibration": "CPU2"}, "tasks": {"t": {"instance": 3,
        "policy": "SCHED_DEADLINE", "dl-runtime": 6000, "dl-period": 10000, "run": 6000,
        "timer": {"ref": "unique", "period": 10000}}}}"#;
    let r = dl_run("linsched-2b2l", doc, Some("big")).unwrap();
    for t in r.threads.iter().filter(|t| t.name.starts_with("t-")) {
        assert!((t.cpu_time_s - 0.6).abs() < 0.012, "{}: {} s", t.name, t.cpu_time_s);
        assert!(t.migrations > 10, "{}: {} migrations: global, not partitioned", t.name, t.migrations);
    }
}

#[test]
fn deadline_tasks_preempt_rt_and_cfs_at_once() {
    // CPU 2 runs a FIFO 99 hog, CPU 3 a CFS hog; two DL tasks wake at 10 ms for 5 ms each:
    // each preempts one of them at once and is done at 15 ms
    let doc = r#"{"global": {"calibration": "CPU2"}, "tasks": {
        "rt": {"cpus": [2], "policy": "SCHED_FIFO", "priority": 99, "loop": 1, "run": 50000},
        "cfs": {"cpus": [3], "loop": 1, "run": 50000},
        "dl": {"instance": 2, "policy": "SCHED_DEADLINE", "dl-runtime": 6000, "dl-period": 20000, "loop": 1,
               "delay": 10000, "run": 5000}}}"#;
    let r = dl_run("linsched-2b2l", doc, Some("big")).unwrap();
    for t in r.threads.iter().filter(|t| t.name.starts_with("dl")) {
        assert!((t.finish_s - 0.015).abs() < 3e-4, "{} done at {} s", t.name, t.finish_s);
    }
    let text = trace_text(&r);
    assert!(text.contains("prev_prio=0 prev_state=R+ ==> next_comm=dl"), "the FIFO 99 preempted");
    assert!(text.contains("prev_prio=120 prev_state=R+ ==> next_comm=dl"), "the CFS hog preempted");
    assert!(text.contains("next_prio=-1"));
}

#[test]
fn deadline_run_time_counts_against_the_rt_runtime_of_its_cpu() {
    // linsched-2b2l's big CPUs 2 and 3 (HZ 1000, one OPP) each run a FIFO hog; a DL server runs
    // 1 ms every 10 ms on one of them. RT throttling's 950 ms a second counts the DL time there
    // too (`update_curr_dl` while the period timer runs): both CPUs are busy throughout, so
    // both hogs are throttled at the first tick past 950 ms, but the one beside the DL task has
    // run 950 ms less the DL task's 1 ms in each of the 96 periods begun by then (0, 10, ...,
    // 950 ms). Without that accounting it would run 900 ms of the second and never be throttled
    let doc = r#"{"global": {"duration": 1, "calibration": "CPU2"}, "tasks": {
        "a": {"cpus": [2], "policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": 2000000},
        "b": {"cpus": [3], "policy": "SCHED_FIFO", "priority": 50, "loop": 1, "run": 2000000},
        "dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000, "run": 1000,
               "timer": {"ref": "t", "period": 10000}}}}"#;
    let r = dl_run("linsched-2b2l", doc, Some("big")).unwrap();
    let dl = thread(&r, "dl");
    let dl_cpu = if dl.cpu_time_on_s[2] > dl.cpu_time_on_s[3] { 2 } else { 3 };
    assert!(dl.cpu_time_on_s[dl_cpu] > 0.099, "the DL task stays on one CPU: {:?}", dl.cpu_time_on_s);
    let (beside, alone) = if dl_cpu == 2 { ("a", "b") } else { ("b", "a") };
    let (beside_s, alone_s) = (thread(&r, beside).cpu_time_s, thread(&r, alone).cpu_time_s);
    assert_eq!(r.rt_throttles, 2);
    assert!((alone_s - 0.951).abs() < 1.5e-3, "alone: {alone_s} s");
    assert!(((alone_s - beside_s) - 0.096).abs() < 1.5e-3, "beside the DL task: {beside_s} s, alone {alone_s} s");
}

#[test]
fn deadline_admission_the_kernel_and_the_affinity_are_checked() {
    let tasks = |n: u32| {
        format!(
            r#"{{"tasks": {{"t": {{"instance": {n}, "policy": "SCHED_DEADLINE", "dl-runtime": 5000,
                "dl-period": 10000, "loop": 1, "run": 100}}}}}}"#
        )
    };
    // 2 CPUs: 95 % of 2048 admits three halves, not four
    assert!(dl_run("linsched-2b2l", &tasks(3), Some("big")).is_ok());
    let e = dl_run("linsched-2b2l", &tasks(4), Some("big")).unwrap_err();
    assert!(e.starts_with("task 't': SCHED_DEADLINE admission refused") && e.contains("2.000 CPUs, over 1.900"), "{e}");
    assert!(!e.contains('\n'));
    // 3.10 has no SCHED_DEADLINE
    let p = Platform::builtin("linsched-2b2l").unwrap();
    let w = crate::rtapp::from_rtapp_json("dl.json", &tasks(1)).unwrap();
    let e = simulate(&p, &w, config(&p, "performance", None, &[])).unwrap_err();
    assert!(
        e.contains("SCHED_DEADLINE needs Linux 3.14+") && e.contains("models Linux 3.10; use --scheduler eas"),
        "{e}"
    );
    // its affinity must span the root domain
    let doc = tasks(1).replace(r#""loop": 1"#, r#""cpus": [2], "loop": 1"#);
    let e = dl_run("linsched-2b2l", &doc, Some("big")).unwrap_err();
    assert!(e.contains("must span its root domain (cpus [2, 3]"), "{e}");
}

#[test]
fn schedutil_adds_the_deadline_bandwidth_to_its_request() {
    // on the 5422's LITTLE cluster, 1 ms of CPU0 work every 10 ms: as CFS its utilisation asks
    // for a low OPP; as a DL server of 8 ms per 10 ms, schedutil adds 0.8 x 1024 (more than a
    // LITTLE CPU's capacity): the top OPP, so the same work takes less CPU time
    let doc = r#"{"global": {"duration": 1}, "tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 8000,
        "dl-period": 10000, "run": 1000, "timer": {"ref": "t", "period": 10000}}}}"#;
    let dl = thread(&dl_run("exynos5422", doc, Some("little")).unwrap(), "t").cpu_time_s;
    let cfs_doc = doc.replace("SCHED_DEADLINE", "SCHED_OTHER").replace(
        r#""dl-runtime": 8000,
        "dl-period": 10000, "#,
        "",
    );
    let cfs = thread(&dl_run("exynos5422", &cfs_doc, Some("little")).unwrap(), "t").cpu_time_s;
    // 100 ms of top-OPP work
    assert!((dl - 0.1).abs() < 0.005, "DL {dl} s");
    assert!(cfs > 1.3 * dl, "CFS {cfs} s, DL {dl} s");
}

#[test]
fn deadline_servers_that_lock_yield_fork_and_sleep_run_to_their_end() {
    // the fuzz seed: DL tasks with a mutex, yield, per-thread timers, a fork and a constrained
    // deadline, beside FIFO, SCHED_IDLE (in a taskgroup, and by phase) and CFS work
    let doc = include_str!("../../../../../fuzz/corpus/rtapp_sim/sched-classes.json");
    let r = dl_run("exynos5422", doc, None).unwrap();
    for t in &r.threads {
        assert!(t.finish_s > 0.0, "{} did not finish", t.name);
    }
    // yield gives up the rest of a period: each of the 6 loops of a "dl" thread takes a period
    // or more (5 ms), so none is done before 30 ms
    let first = r.threads.iter().filter(|t| t.name.starts_with("dl")).map(|t| t.finish_s).fold(1.0, f64::min);
    assert!(first > 0.03, "{first}");
    // the TOML form of the same attributes
    let toml = r#"name = "w"
[[tasks]]
name = "dl"
policy = "deadline"
dl_runtime_us = 2000
dl_period_us = 10000
[[tasks.phases]]
run_us = 5000
period_us = 10000
count = 20
"#;
    let w = Workload::from_toml("w.toml", toml).unwrap();
    assert_eq!(
        w.tasks[0].class,
        crate::workload::SchedClass::Deadline(crate::workload::DlParams {
            runtime_ns: 2_000_000,
            deadline_ns: 10_000_000,
            period_ns: 10_000_000
        })
    );
    for (bad, says) in [
        ("dl_period_us = 10000", "tasks[0] 'dl': policy = \"deadline\" needs dl_runtime_us"),
        ("dl_runtime_us = 2000", "needs its deadline or period"),
    ] {
        let e = Workload::from_toml("w.toml", &toml.replace("dl_runtime_us = 2000\ndl_period_us = 10000", bad))
            .unwrap_err();
        assert!(e.contains(says), "{e}");
    }
    let e = Workload::from_toml("w.toml", &toml.replace("policy = \"deadline\"", "policy = \"fifo\"")).unwrap_err();
    assert!(e.contains("belong to policy = \"deadline\""), "{e}");
}
