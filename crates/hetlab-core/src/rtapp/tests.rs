//! rt-app files end to end: what each key and event becomes, and the one-line errors.

use super::events::{BYTE_LOOP_INSTRUCTIONS, DELAY_TIMER, NULL_WRITE_INSTRUCTIONS};
use super::*;
use crate::workload::{PhaseKind, PhaseLoop, SchedAttr, SchedClass, SyncOp, Task, ThreadCount};

/// A file where task t takes a lock under `policy` beside a SCHED_FIFO task u, with `pi_enabled`.
fn locker_beside_a_fifo_task(policy: &str, pi: bool) -> String {
    format!(
        r#"{{"global": {{"pi_enabled": {pi}}}, "tasks": {{"t": {{"policy": "{policy}", "lock": "m",
            "run": 1, "unlock": "m"}}, "u": {{"policy": "SCHED_FIFO", "run": 1}}}}}}"#
    )
}

#[test]
fn priority_inheritance_changes_nothing_for_cfs_lockers_or_plain_mutexes() {
    // CFS lockers: a CFS waiter boosts nothing; no PI: the mutexes are plain
    assert!(from_rtapp_json("t.json", &locker_beside_a_fifo_task("SCHED_OTHER", true)).is_ok());
    assert!(from_rtapp_json("t.json", &locker_beside_a_fifo_task("SCHED_FIFO", false)).is_ok());
}

#[test]
fn priority_inheritance_for_a_real_time_locker_is_refused() {
    let e = from_rtapp_json("t.json", &locker_beside_a_fifo_task("SCHED_RR", true)).unwrap_err();
    assert!(e.starts_with("t.json: global.pi_enabled: task t is real-time"), "{e}");
}

#[test]
fn a_task_becomes_threads_phases_and_loops() {
    let doc = r#"{
        "global": { "calibration": 120, "default_policy": "SCHED_OTHER", "duration": -1, "logdir": "." },
        "tasks": {
            "periodic": { "instance": 2, "priority": -5, "cpus": [0, 1], "loop": 100, "util_min": 128,
                          "run": 2000, "timer": { "ref": "t", "period": 16000, "mode": "absolute" } },
            "burst": { "delay": 500, "loop": 2,
                       "phases": { "p0": { "loop": 3, "run0": 100, "sleep0": 50, "run1": 10 },
                                   "p1": { "suspend": "ignored" } } },
            "waker": { "sleep": 1000, "resume": "burst" },
        }
    }"#;
    let w = from_rtapp_json("dir/demo.json", doc).unwrap();
    assert_eq!((w.name.as_str(), w.reference_cpu, w.duration_us), ("demo", None, None));
    // without phases, `loop` loops the task's one phase: run, then the timer, 100 times within
    // one thread loop
    let t = &w.tasks[0];
    assert_eq!((t.threads, t.nice, t.repeat, t.affinity.clone()), (ThreadCount::Fixed(2), -5, 1, Some(vec![0, 1])));
    assert_eq!(t.loops, [PhaseLoop { start: 0, end: 2, count: 100 }]);
    assert_eq!((t.uclamp.min, t.uclamp.max), (Some(128), None));
    assert_eq!(t.phases[0].kind, PhaseKind::Periodic { run_us: 2000.0, period_us: 0, count: 1 });
    let timer =
        PhaseKind::Timer { timer: "t".into(), period_us: 16000, relative: false, per_thread: false, origin_us: 0 };
    assert_eq!(t.phases[1].kind, timer);
    // with phases: the delay once (a prologue), then 2 loops of (3 x (run, sleep, run)) and
    // the suspend, which waits on the task's own name; p0's loop is a loop, not unrolled
    let burst = &w.tasks[1];
    assert_eq!((burst.repeat, burst.prologue_phases, burst.phases.len()), (2, 1, 1 + 3 + 1));
    assert_eq!(burst.loops, [PhaseLoop { start: 1, end: 4, count: 3 }]);
    let delay =
        PhaseKind::Timer { timer: DELAY_TIMER.into(), period_us: 500, relative: false, per_thread: true, origin_us: 0 };
    assert_eq!(burst.phases[0].kind, delay);
    assert_eq!(burst.phases[2].kind, PhaseKind::Sleep { duration_us: 50 });
    assert_eq!(burst.phases[4].kind, PhaseKind::Suspend { event: "burst".into() });
    let steps = &burst.rtapp.as_ref().unwrap().steps;
    let starts: Vec<u32> = steps.iter().filter(|s| s.loop_start).map(|s| s.phase).collect();
    assert_eq!(starts, [0, 1]);
    assert_eq!(steps[0].event, None); // the delay
    let run1 = steps[3].event.as_ref().unwrap();
    assert_eq!((run1.id, run1.type_number, run1.desc.as_str(), run1.run_us), (2, 6, "run1", 10));
    // no loop and no phases: rt-app loops forever (bounded by its duration)
    assert_eq!(w.tasks[2].repeat, u32::MAX);
    assert_eq!(w.tasks[2].phases[1].kind, PhaseKind::Resume { event: "burst".into() });
    let calibrated =
        from_rtapp_json("c.json", r#"{"global": {"calibration": "CPU4", "duration": 3}, "tasks": {"t": {"run": 1}}}"#);
    let calibrated = calibrated.unwrap();
    assert_eq!((calibrated.reference_cpu, calibrated.duration_us), (Some(4), Some(3_000_000)));
    let default = from_rtapp_json("d.json", r#"{"tasks": {"t": {"run": 1}}}"#).unwrap();
    assert_eq!(default.reference_cpu, Some(0)); // rt-app calibrates on CPU0
}

#[test]
fn every_event_becomes_phases() {
    let doc = r#"{
        "global": { "mem_buffer_size": 1024, "io_device": "/dev/null" },
        "tasks": {
            "a": { "loop": 1, "lock": "m", "wait": { "ref": "c", "mutex": "m" }, "unlock": "m",
                   "sync": { "ref": "c", "mutex": "m" }, "signal": "c", "broad": "c",
                   "runtime": 300, "timer": { "ref": "unique", "period": 1000 },
                   "memrun": { "type": "chase", "size": 4194304, "count": 1000 },
                   "memrun1": { "type": "write", "size": 65536, "count": 131072, "ref": "buf" },
                   "mem": 4096, "iorun": 4096, "yield": "", "barrier": "b", "fork": "child",
                   "sem_post": "s", "sem_wait": "s" },
            "child": { "instance": 0, "loop": 1, "run": 10 },
            "b": { "instance": 2, "loop": 1, "barrier": "b" }
        }
    }"#;
    let w = from_rtapp_json("all.json", doc).unwrap();
    let sync = |op, object: &str| PhaseKind::Sync { op, object: object.into() };
    let kinds: Vec<PhaseKind> = w.tasks[0].phases.iter().map(|p| p.kind.clone()).collect();
    let expected_head = [
        sync(SyncOp::Lock, "m"),
        // wait: release, wait, take again
        sync(SyncOp::Unlock, "m"),
        PhaseKind::Suspend { event: "c".into() },
        sync(SyncOp::Lock, "m"),
        sync(SyncOp::Unlock, "m"),
        // sync: signal first
        sync(SyncOp::Signal, "c"),
        sync(SyncOp::Unlock, "m"),
        PhaseKind::Suspend { event: "c".into() },
        sync(SyncOp::Lock, "m"),
        sync(SyncOp::Signal, "c"),
        PhaseKind::Resume { event: "c".into() },
        PhaseKind::Runtime { duration_us: 300 },
        PhaseKind::Timer { timer: "unique".into(), period_us: 1000, relative: true, per_thread: true, origin_us: 0 },
    ];
    assert_eq!(kinds[..expected_head.len()], expected_head);
    let rest = &w.tasks[0].phases[expected_head.len()..];
    // the chase: one dependent load per step over size/stride 64-byte nodes
    assert_eq!(rest[0].kind, PhaseKind::Compute { instructions: 1000.0 });
    assert!(rest[0].mem.dependent_loads && rest[0].mem.working_set_bytes() == 4194304);
    // a buffer of 1 TiB is the largest (MAX_WORKING_SET_BYTES, as a workload file's working set)
    let tib = r#"{"tasks": {"t": {"memrun": {"type": "read", "size": 1099511627776, "count": 1}}}}"#;
    assert_eq!(from_rtapp_json("t.json", tib).unwrap().tasks[0].phases[0].mem.working_set_bytes(), 1 << 40);
    // a byte loop writing a shared buffer
    assert_eq!(rest[1].kind, PhaseKind::Compute { instructions: 131072.0 * BYTE_LOOP_INSTRUCTIONS });
    assert!(rest[1].mem.shared_working_set && rest[1].mem.write_fraction == 1.0);
    // memset over the thread's buffer; writes to /dev/null, one system call per buffer
    assert_eq!(rest[2].mem.working_set_bytes(), 1024);
    assert_eq!(rest[3].kind, PhaseKind::Compute { instructions: 4.0 * NULL_WRITE_INSTRUCTIONS });
    // the barrier waits for a's thread and b's two
    assert_eq!(
        rest[4..].iter().map(|p| p.kind.clone()).collect::<Vec<_>>(),
        [
            PhaseKind::Yield,
            sync(SyncOp::Barrier { parties: 3 }, "b"),
            PhaseKind::Fork { task: "child".into() },
            sync(SyncOp::SemPost, "s"),
            sync(SyncOp::SemWait, "s"),
        ]
    );
    // the child has no instance of its own: one forked thread per fork
    let child: Vec<&Task> = w.tasks.iter().filter(|t| t.name == "child").collect();
    assert_eq!(child.len(), 1);
    assert!(child[0].forked && child[0].threads == ThreadCount::Fixed(1));
    let markers: Vec<u32> = w.tasks[0]
        .rtapp
        .as_ref()
        .unwrap()
        .steps
        .iter()
        .filter_map(|s| s.event.as_ref())
        .map(|e| e.type_number)
        .collect();
    assert_eq!(markers, [8, 2, 9, 7, 3, 4, 19, 11, 17, 15, 14, 18, 20, 21, 22, 24, 23]);
}

/// Task t on CPUs 0 and 1: phase a, twice, on CPU 4 at nice 5; then phase b with none of its own.
fn phase_a_on_cpu_4_then_b() -> Task {
    let doc = r#"{"tasks": {"t": {"cpus": [0, 1], "loop": 1, "phases": {
        "a": {"loop": 2, "cpus": [4], "priority": 5, "run": 10},
        "b": {"run": 20} } } } }"#;
    from_rtapp_json("s.json", doc).unwrap().tasks.remove(0)
}

#[test]
fn a_phase_that_sets_its_cpus_or_priority_sets_them_at_each_loop() {
    let t = phase_a_on_cpu_4_then_b();
    let kinds: Vec<&PhaseKind> = t.phases.iter().map(|p| &p.kind).collect();
    let here = PhaseKind::SetSched(SchedAttr { cpus: Some(vec![4]), nice: Some(5), ..Default::default() });
    // phase b has none of its own: the task's cpus come back, its priority stays
    let back = PhaseKind::SetSched(SchedAttr { cpus: Some(vec![0, 1]), ..Default::default() });
    assert_eq!([kinds[0], kinds[2]], [&here, &back]);
    // phase a's loop is its SetSched step and its run, twice
    assert_eq!(t.loops, [PhaseLoop { start: 0, end: 2, count: 2 }]);
}

#[test]
fn a_loop_starts_at_its_set_sched_step_and_its_first_event_follows() {
    let t = phase_a_on_cpu_4_then_b();
    let steps = &t.rtapp.as_ref().unwrap().steps;
    assert!(steps[0].loop_start && !steps[1].loop_start && steps[1].event.is_some());
}

#[test]
fn a_phase_that_gives_its_own_policy_needs_none_in_effect_before_it() {
    // on the first loop SCHED_OTHER is in effect before p, on later ones SCHED_RR (p's own):
    // p says which it runs under, so that is no ambiguity (it used to be refused as one)
    let doc = r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR", "priority": 50, "run": 10}}}}}"#;
    let t = &from_rtapp_json("s.json", doc).unwrap().tasks[0];
    let rr = PhaseKind::SetSched(SchedAttr { class: Some(SchedClass::RoundRobin(50)), ..Default::default() });
    assert_eq!(t.phases[0].kind, rr);
}

#[test]
fn taskgroups_are_the_tasks_from_their_start_and_a_phases_from_each_of_its_loops() {
    // rt-app's tutorial example11: phase0 in /tg1/tg11, phase1 stays there, phase2 in the
    // root group; the task's own group holds from the thread's start; "" is none
    let doc = r#"{"tasks": {
        "thread0": {"taskgroup": "//tg0/", "loop": -1, "phases": {
            "phase0": {"run": 20000, "sleep": 80000, "taskgroup": "/tg1/tg11"},
            "phase1": {"run": 20000, "sleep": 80000},
            "phase2": {"run": 20000, "sleep": 80000, "taskgroup": "/"}}},
        "plain": {"taskgroup": "", "run": 1000}},
        "global": {"duration": 2}}"#;
    let w = from_rtapp_json("example11.json", doc).unwrap();
    let t = &w.tasks[0];
    assert_eq!(t.taskgroup.as_deref(), Some("/tg0"));
    assert_eq!(w.tasks[1].taskgroup, None);
    let groups: Vec<Option<&str>> = t
        .phases
        .iter()
        .filter_map(|p| match &p.kind {
            PhaseKind::SetSched(attr) => Some(attr.taskgroup.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(groups, [Some("/tg1/tg11"), None, Some("/")]);
    let mut paths: Vec<&str> = w.taskgroup_paths().collect();
    paths.sort();
    assert_eq!(paths, ["/", "/tg0", "/tg1/tg11"]);
    // at most 32 distinct names (rt-app's max_nbr_tgs), "/a" and "/a/" counting as two
    let doc = |n: usize| {
        let slash = |i: usize| if i % 2 == 1 { "/" } else { "" };
        let tasks: Vec<String> =
            (0..n).map(|i| format!(r#""t{i}": {{"taskgroup": "/g{}{}", "run": 1}}"#, i / 2, slash(i))).collect();
        format!(r#"{{"tasks": {{{}}}}}"#, tasks.join(", "))
    };
    assert!(from_rtapp_json("many.json", &doc(32)).is_ok());
    let e = from_rtapp_json("many.json", &doc(33)).unwrap_err();
    assert!(e.contains("tasks.t32.taskgroup: more than 32 distinct taskgroups"), "{e}");
}

#[test]
fn binding_memory_to_the_one_node_changes_nothing() {
    let doc = |task_bind: &str, phase_bind: &str| {
        format!(
            r#"{{"tasks": {{"t": {{ {task_bind} "loop": 1, "phases": {{"p": {{ {phase_bind} "loop": 2, "run": 100, "sleep": 100}}}}}}}}}}"#
        )
    };
    let phases = |doc: String| format!("{:?}", from_rtapp_json("t.json", &doc).unwrap().tasks[0].phases);
    assert_eq!(phases(doc("", "")), phases(doc(r#""nodes_membind": [0],"#, r#""nodes_membind": [0],"#)));
}

#[test]
fn sched_idle_is_a_cfs_policy_rt_app_may_put_in_a_taskgroup() {
    let doc = r#"{"tasks": {"t": {"policy": "SCHED_IDLE", "priority": 5, "taskgroup": "/bg", "run": 100},
        "u": {"phases": {"a": {"run": 1}, "b": {"policy": "SCHED_IDLE", "taskgroup": "/bg", "run": 1}}}}}"#;
    let w = from_rtapp_json("t.json", doc).unwrap();
    // rt-app sets no nice value for SCHED_IDLE: the priority stays unapplied
    assert_eq!((w.tasks[0].class, w.tasks[0].nice), (SchedClass::Idle, 0));
    let PhaseKind::SetSched(attr) = &w.tasks[1].phases[2].kind else { panic!("{:?}", w.tasks[1].phases) };
    assert_eq!((attr.class, attr.nice), (Some(SchedClass::Idle), None));
}

#[test]
fn sched_batch_takes_a_nice_value_and_may_be_in_a_taskgroup() {
    // rt-app (since 2026) sets SCHED_BATCH as SCHED_OTHER: its priority is the nice value
    let doc = r#"{"tasks": {"t": {"policy": "SCHED_BATCH", "priority": 5, "taskgroup": "/bg", "run": 100},
        "u": {"phases": {"a": {"run": 1}, "b": {"policy": "SCHED_BATCH", "priority": -3, "run": 1}}}}}"#;
    let w = from_rtapp_json("t.json", doc).unwrap();
    assert_eq!((w.tasks[0].class, w.tasks[0].nice), (SchedClass::Batch, 5));
    let PhaseKind::SetSched(attr) = &w.tasks[1].phases[2].kind else { panic!("{:?}", w.tasks[1].phases) };
    assert_eq!((attr.class, attr.nice), (Some(SchedClass::Batch), Some(-3)));
    let e = from_rtapp_json("t.json", &doc.replace("\"priority\": 5", "\"priority\": 20")).unwrap_err();
    assert_eq!(e, "t.json: tasks.t: a SCHED_BATCH priority is a nice value within -20..=19, got 20");
}

#[test]
fn what_is_not_supported_is_a_one_line_error_naming_it() {
    let cases = [
        (r#"{"tasks": {"t": {"memrun": 10}}}"#, "tasks.t.memrun must be an object"),
        (r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 64, "count": 1}}}}"#, "at least 2 x stride"),
        // a buffer, as a working set, is at most 1 TiB (MAX_WORKING_SET_BYTES), a chase's stride too
        (
            r#"{"tasks": {"t": {"memrun": {"type": "read", "size": 1e15, "count": 1000}}}}"#,
            "tasks.t.memrun.size must be a whole number in 1..=1.099511627776e12, got 1e15",
        ),
        (r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 1e15, "count": 1}}}}"#, "memrun.size must be"),
        (
            r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 2199023255552, "stride": 1099511627776, "count": 1}}}}"#,
            "tasks.t.memrun.size must be a whole number in 1..=1.099511627776e12, got 2.199023255552e12",
        ),
        (
            r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 1099511627776, "stride": 2199023255552, "count": 1}}}}"#,
            "tasks.t.memrun.stride must be a whole number in 4..=1.099511627776e12, got 2.199023255552e12",
        ),
        (r#"{"tasks": {"t": {"loop": 1, "fork": "x"}}}"#, "fork names 'x', which is not a task"),
        (r#"{"tasks": {"t": {"fork": "u"}, "u": {"instance": 0, "run": 1}}}"#, "loops forever is not supported"),
        (r#"{"tasks": {"t": {"phases": {"p": {"loop": 0, "run": 1}}}}}"#, "until its loop counter wraps"),
        (r#"{"tasks": {"t": {"phases": {"p": {"loop": 2}}}}}"#, "tasks.t.phases.p: no events"),
        (r#"{"global": {"ftrace": "main,sched"}, "tasks": {"t": {"run": 1}}}"#, "'sched' is not an ftrace category"),
        (r#"{"global": {"log_basename": "a/b"}, "tasks": {"t": {"run": 1}}}"#, "without '/'"),
        (r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "run": 1}}}"#, "runtime of 0 µs is below the kernel's"),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "dl-period": 200, "run": 1}}}"#,
            "runtime <= deadline <= period, got 300 / 200 / 200 µs",
        ),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 30, "dl-period": 50, "run": 1}}}"#,
            "period of 50 µs is outside 100..=4194304 µs",
        ),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "priority": 3, "dl-runtime": 300, "run": 1}}}"#,
            "tasks.t: a SCHED_DEADLINE task's priority must be 0",
        ),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "phases": {"p": {"priority": 5, "run": 1}}}}}"#,
            "tasks.t.phases.p: a phase that changes a SCHED_DEADLINE task's policy",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_DEADLINE", "run": 1}}}}}"#,
            "tasks.t.phases.p: a phase that changes a SCHED_DEADLINE task's policy",
        ),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "phases": {"p": {"cpus": [1], "run": 1}}}}}"#,
            "tasks.t.phases.p: a SCHED_DEADLINE task's CPUs cannot change",
        ),
        (r#"{"tasks": {"t": {"taskgroup": "a", "run": 1}}}"#, "tasks.t.taskgroup: taskgroup 'a' must start with /"),
        (r#"{"tasks": {"t": {"taskgroup": "/a/../b", "run": 1}}}"#, "has the component '..'"),
        (r#"{"tasks": {"t": {"taskgroup": 3, "run": 1}}}"#, "tasks.t.taskgroup must be a string"),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "taskgroup": "/", "run": 1}}}"#,
            "tasks.t: rt-app has no taskgroup support for SCHED_FIFO",
        ),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_RR", "phases": {"a": {"run": 1}, "b": {"taskgroup": "/g", "run": 1}}}}}"#,
            "tasks.t.phases.b: rt-app has no taskgroup support for SCHED_RR",
        ),
        (r#"{"tasks": {"t": {"nodes_membind": [0, 1], "run": 1}}}"#, "node 1 does not exist"),
        (r#"{"tasks": {"t": {"nodes_membind": 0, "run": 1}}}"#, "must be an array of NUMA node numbers"),
        (
            r#"{"tasks": {"t": {"util_max": 500, "phases": {"a": {"util_min": 100, "run": 1}, "b": {"util_min": 600, "run": 1}}}}}"#,
            "tasks.t.phases.b: util_min 600 above util_max 500",
        ),
        (r#"{"tasks": {"t": {"util_min": 600, "util_max": 500, "run": 1}}}"#, "min <= max"),
        (r#"{"tasks": {"t": {"policy": "SCHED_NORMAL", "run": 1}}}"#, "unknown policy 'SCHED_NORMAL'"),
        (r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 0, "run": 1}}}"#, "within 1..=99, got 0"),
        (r#"{"tasks": {"t": {"priority": 50, "run": 1}}}"#, "nice value within -20..=19, got 50"),
        // a phase that gives its policy needs none in effect before it; its priority is checked
        (
            r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR", "priority": 200, "run": 1}}}}}"#,
            "tasks.t.phases.p: a real-time priority is within 1..=99, got 200",
        ),
        (r#"{"tasks": {"t": {"policy": "SCHED_RR", "priority": 100, "run": 1}}}"#, "within 1..=99, got 100"),
        (
            r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "phases": {"a": {"priority": 5, "run": 1}, "b": {"policy": "SCHED_OTHER", "run": 1}}}}}"#,
            "tasks.t.phases.a: give its policy with its priority: SCHED_FIFO on the first loop, SCHED_OTHER on later ones",
        ),
        (r#"{"global": {"io_device": "/tmp/x"}, "tasks": {"t": {"run": 1}}}"#, "only /dev/null"),
        (r#"{"global": {"pi_enabled": 1}, "tasks": {"t": {"run": 1}}}"#, "pi_enabled must be true or false"),
        (
            r#"{"global": {"pi_enabled": true}, "tasks": {"t": {"policy": "SCHED_FIFO", "lock": "m", "run": 1,
               "unlock": "m"}}}"#,
            "task t is real-time and takes a lock, and priority inheritance is not modelled",
        ),
        (
            r#"{"global": {"pi_enabled": true}, "tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR",
               "lock": "m", "run": 1, "unlock": "m"}}}}}"#,
            "task t is real-time",
        ),
        (r#"{"global": {"calibration": "big"}, "tasks": {"t": {"run": 1}}}"#, "\"CPU<n>\" or ns per loop"),
        (r#"{"tasks": {"t": {"lock": ""}}}"#, "tasks.t.lock must not be empty"),
        (r#"{"tasks": {}}"#, "at least one task"),
        (r#"{"tasks": {"t": {"instance": 0, "run": 1}}}"#, "every task has 0 instances"),
        (r#"{"tasks": {"t": {"run": 1e400}}}"#, "1e400 is out of range"),
        ("\u{feff}{\"tasks\": {\"t\": {\"run\": 1}}}", "byte-order mark"),
    ];
    for (doc, says) in cases {
        let e = from_rtapp_json("x.json", doc).unwrap_err();
        assert!(e.contains(says) && e.starts_with("x.json") && !e.contains('\n'), "{doc}: {e}");
    }
}

#[test]
fn what_rt_app_reads_past_is_one_warning_each_and_the_file_runs() {
    let doc = r#"{
        "global": {"frag": 6, "calibration": 120, "ftrace": "loop,stats"},
        "resources": {},
        "comment": "a key rt-app never reads",
        "tasks": {
            "t": {"instance": 1, "nice": 3, "run": 10, "timer": {"ref": "x", "period": 100, "jitter": 5}},
            "u": {"dl-runtime": 2000, "phases": {"p": {"loop": 5000, "colour": "red", "run": 5}}, "sleep": 4},
            "v": {"policy": "SCHED_BATCH", "runtime": 300},
            "w": {"memrun": {"type": "read", "size": 4096, "count": 10, "stride": 8}, "timer": {"period": 10, "mode": "late"}}
        }
    }"#;
    let file = read_rtapp_json("w.json", doc).unwrap();
    let has = |what: &str| file.warnings.iter().filter(|w| w.contains(what)).count();
    assert_eq!(has("w.json: global.frag: rt-app does not read this key here and ignores it"), 1);
    assert_eq!(has("w.json: comment: rt-app does not read"), 1);
    assert_eq!(has("tasks.t.nice: rt-app does not read"), 1);
    assert_eq!(has("tasks.t.timer.jitter: rt-app does not read"), 1);
    assert_eq!(has("tasks.u.phases.p.colour: rt-app does not read"), 1);
    assert_eq!(has("tasks.u: dl-runtime 2000 µs on a SCHED_OTHER task is Linux 6.12's custom slice"), 1);
    // the task's custom slice, as sched_setattr clamps it (0.1-100 ms)
    let slice = |name: &str| file.workload.tasks.iter().find(|t| t.name == name).unwrap().slice_us;
    assert_eq!((slice("u"), slice("v"), slice("t")), (Some(2000), Some(300), None));
    assert_eq!(has("tasks.u.sleep: an event beside `phases`"), 1);
    // rt-app reads a task's `runtime` as the legacy dl-runtime too
    assert_eq!(has("tasks.v: runtime (rt-app's legacy dl-runtime key) 300 µs on a SCHED_BATCH task"), 1);
    assert_eq!(has("tasks.w.memrun.stride: rt-app reads stride for a memrun of type chase only"), 1);
    assert_eq!(has("tasks.w.timer.mode: 'late' is neither relative nor absolute"), 1);
    assert_eq!(file.warnings.len(), 10, "{:#?}", file.warnings);
    assert!(file.warnings.iter().all(|w| !w.contains('\n')));
    // the loop of 5000 is a loop, not 5000 copies
    let u = &file.workload.tasks[1];
    assert_eq!((u.phases.len(), u.loops.as_slice()), (1, &[PhaseLoop { start: 0, end: 1, count: 5000 }][..]));
    let steps = file.workload.tasks[0].rtapp.as_ref().unwrap();
    assert_eq!(
        (steps.ns_per_loop, steps.ftrace.r#loop, steps.ftrace.stats, steps.ftrace.event),
        (Some(120), true, true, false)
    );
    // a `global` gives the logs' default name; none gives no logs (rt-app's logsize 0)
    assert_eq!(file.log_basename.as_deref(), Some("rt-app"));
    assert_eq!(read_rtapp_json("n.json", r#"{"tasks": {"t": {"run": 1}}}"#).unwrap().log_basename, None);
    let disabled = r#"{"global": {"log_size": "disable"}, "tasks": {"t": {"run": 1}}}"#;
    assert_eq!(read_rtapp_json("n.json", disabled).unwrap().log_basename, None);
}

/// Issue 34: 2,000 tasks of 4,096 steps each took 8.7 GB; the tasks' total is bounded, checked
/// as each task is read.
#[test]
fn the_tasks_phases_have_a_total_bound_checked_as_they_are_read() {
    let events: String = (0..4000).map(|i| format!("\"run{i}\": 10")).collect::<Vec<_>>().join(", ");
    let tasks: String = (0..40).map(|t| format!("\"t{t}\": {{ {events} }}")).collect::<Vec<_>>().join(", ");
    let text = format!("{{ \"tasks\": {{ {tasks} }} }}");
    let e = from_rtapp_json("big.json", &text).unwrap_err();
    assert!(e.contains("big.json: the tasks have more than 131072 phases together"), "{e}");
}
