//! Task groups (`sched::group`, the cgroup cpu controller) end to end on the Exynos 5422:
//! groups share a CPU by their `cpu.shares` whatever their numbers of tasks, a nested group
//! shares what its parent gets, a waking task preempts at the level it has in common with the
//! running one, the load balancer weighs grouped tasks by their share, rt-app moves threads
//! between groups per phase, and a group nobody is in changes nothing.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::ftrace::write_ftrace;
use hetlab_core::trace::TraceEvent;
use hetlab_core::workload::Workload;

fn exynos() -> Platform {
    Platform::builtin("exynos5422").unwrap()
}

/// `workload` under `scheduler` (schedutil for EAS, performance otherwise) for `limit_s`.
fn run(w: &Workload, scheduler: SchedPolicy, limit_s: f64, trace: bool) -> RunResult {
    run_on(&exynos(), &[], w, scheduler, limit_s, trace)
}

/// The same on platform `p` with the clusters `offline` hotplugged off.
fn run_on(
    p: &Platform,
    offline: &[&str],
    w: &Workload,
    scheduler: SchedPolicy,
    limit_s: f64,
    trace: bool,
) -> RunResult {
    let governor = if scheduler == SchedPolicy::Eas { "schedutil" } else { "performance" };
    let mut c = SimConfig::new(SimConfig::governor_plan(p, governor, &[], None, &[]).unwrap());
    c.scheduler = scheduler;
    c.trace = trace;
    c.time_limit_s = limit_s;
    c.offline_clusters = offline.iter().map(|name| p.cluster_index(name).unwrap()).collect();
    simulate(p, w, c).unwrap()
}

fn toml(text: &str) -> Workload {
    Workload::from_toml("groups.toml", text).unwrap()
}

/// A CPU-bound task of `threads` threads on `cpus`, in `group` (or the root group).
fn hog(name: &str, threads: u32, cpus: &str, group: Option<&str>) -> String {
    let group = group.map(|g| format!("taskgroup = \"{g}\"\n")).unwrap_or_default();
    format!("[[tasks]]\nname = \"{name}\"\nthreads = {threads}\naffinity = {cpus}\n{group}phases = [{{ instructions = 1e13 }}]\n")
}

fn cpu_s(r: &RunResult, task: &str) -> Vec<f64> {
    r.threads.iter().filter(|t| t.name.starts_with(&format!("{task}-"))).map(|t| t.cpu_time_s).collect()
}

fn group_s(r: &RunResult, path: &str) -> f64 {
    r.taskgroups.iter().find(|g| g.path == path).unwrap().cpu_time_s
}

fn near(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

#[test]
fn two_groups_share_a_cpu_by_their_shares_not_their_tasks() {
    for scheduler in [SchedPolicy::Smp, SchedPolicy::Eas] {
        // one task in /one, four in /four, all on an A15 for 2 s: 50/50 between the groups by
        // default (each group's entity weighs its 1024 shares), a quarter of /four's half each
        let both =
            format!("name = \"g\"\n{}{}", hog("one", 1, "[4]", Some("/one")), hog("four", 4, "[4]", Some("/four")));
        let r = run(&toml(&both), scheduler, 2.0, false);
        let (one, four) = (cpu_s(&r, "one"), cpu_s(&r, "four"));
        assert!(near(one[0], 1.0, 0.02), "{scheduler:?}: {one:?} {four:?}");
        assert!(four.iter().all(|&s| near(s, 0.25, 0.01)), "{scheduler:?}: {four:?}");
        assert!(near(group_s(&r, "/one"), one[0], 1e-9) && near(group_s(&r, "/four"), four.iter().sum(), 1e-9));
        assert_eq!(r.threads[1].taskgroup.as_deref(), Some("/four"));
        // shares 2048 against 1024: two thirds
        let shares = format!("{both}[taskgroups.\"/one\"]\nshares = 2048\n");
        let r = run(&toml(&shares), scheduler, 2.0, false);
        assert!(near(cpu_s(&r, "one")[0], 4.0 / 3.0, 0.02), "{scheduler:?}: {:?}", cpu_s(&r, "one"));
        assert_eq!(r.taskgroups.iter().map(|g| g.shares).collect::<Vec<_>>(), [1024, 2048]);
    }
    // without groups the five tasks share it equally
    let flat = format!("name = \"g\"\n{}{}", hog("one", 1, "[4]", None), hog("four", 4, "[4]", None));
    let r = run(&toml(&flat), SchedPolicy::Smp, 2.0, false);
    assert!(near(cpu_s(&r, "one")[0], 0.4, 0.01) && r.taskgroups.is_empty());
}

#[test]
fn a_nested_group_shares_what_its_parent_gets() {
    // /a holds a task and the group /a/b of two; /c one task: /a and /c halve the CPU, /a's
    // task and /a/b halve /a's half, /a/b's tasks halve that
    let text = format!(
        "name = \"n\"\n{}{}{}",
        hog("a", 1, "[4]", Some("/a")),
        hog("b", 2, "[4]", Some("/a/b")),
        hog("c", 1, "[4]", Some("/c"))
    );
    let r = run(&toml(&text), SchedPolicy::Smp, 2.0, false);
    assert!(near(cpu_s(&r, "c")[0], 1.0, 0.02), "{:?}", r.threads);
    assert!(near(cpu_s(&r, "a")[0], 0.5, 0.02), "{:?}", r.threads);
    assert!(cpu_s(&r, "b").iter().all(|&s| near(s, 0.25, 0.02)), "{:?}", cpu_s(&r, "b"));
    // a group's time counts its children's (cpuacct.usage)
    assert!(near(group_s(&r, "/a"), group_s(&r, "/a/b") + cpu_s(&r, "a")[0], 1e-9));
    assert!(near(group_s(&r, "/a") + group_s(&r, "/c"), 2.0, 0.01));
}

#[test]
fn a_waking_task_of_another_group_preempts_at_once() {
    // a hog in /bg on an A15, and a task of /fg that sleeps 50 ms then runs 0.1 ms: /fg's
    // entity wakes half a latency behind the root's floor, ahead of /bg's, and preempts
    for fg in ["/fg", "/bg"] {
        let text = format!(
            "name = \"p\"\n{}[[tasks]]\nname = \"sleeper\"\naffinity = [4]\ntaskgroup = \"{fg}\"\n\
             phases = [{{ sleep_us = 50000 }}, {{ instructions = 2e5 }}]\n",
            hog("hog", 1, "[4]", Some("/bg"))
        );
        let r = run(&toml(&text), SchedPolicy::Smp, 0.2, false);
        let sleeper = r.threads.iter().find(|t| t.name.starts_with("sleeper")).unwrap();
        assert!(sleeper.finish_s > 0.050 && sleeper.finish_s < 0.0505, "{fg}: {}", sleeper.finish_s);
    }
}

#[test]
fn the_balancer_weighs_grouped_tasks_by_their_share() {
    // TC2's two A15s (its A7s offline: one domain of two CPUs), two root tasks and four of
    // /bg. A root task is worth 1024 of its CPU's load and /bg's tasks together 1024, split
    // by where they are (256 and 768 for one and three): the balancer moves /bg's tasks, each
    // worth a quarter of its group's entity, until each CPU has a root task and half of /bg
    // (1024 + 512), and the root tasks get two thirds of a CPU each
    let tc2 = Platform::builtin("tc2").unwrap();
    let text = format!("name = \"b\"\n{}{}", hog("fg", 2, "[0, 1]", None), hog("bg", 4, "[0, 1]", Some("/bg")));
    let r = run_on(&tc2, &["a7"], &toml(&text), SchedPolicy::Smp, 4.0, false);
    let (fg, bg) = (cpu_s(&r, "fg"), cpu_s(&r, "bg"));
    assert!(fg.iter().all(|&s| near(s, 8.0 / 3.0, 0.15)), "{fg:?} {bg:?}");
    assert!(near(group_s(&r, "/bg"), 8.0 - 16.0 / 3.0, 0.3), "{fg:?} {bg:?}");
    // counted as tasks (no group), the six share the two CPUs equally
    let text = format!("name = \"b\"\n{}{}", hog("fg", 2, "[0, 1]", None), hog("bg", 4, "[0, 1]", None));
    let r = run_on(&tc2, &["a7"], &toml(&text), SchedPolicy::Smp, 4.0, false);
    assert!(cpu_s(&r, "fg").iter().chain(&cpu_s(&r, "bg")).all(|&s| near(s, 4.0 / 3.0, 0.1)), "{:?}", r.threads);
}

#[test]
fn rt_app_moves_a_thread_between_groups_per_phase() {
    // the mover runs its 20 ms twice in /a, then once in /b and once more there (a phase
    // without a taskgroup leaves it where it is), five loops; a hog stays in /b: all the
    // mover's work in /a is /a's time, the rest of the CPU /b's; it ends in /b; the groups'
    // signals are traced with their paths
    let doc = r#"{
        "tasks": {
            "mover": {"cpus": [4], "loop": 5, "phases": {
                "in_a": {"loop": 2, "taskgroup": "/a", "run": 20000},
                "in_b": {"taskgroup": "/b", "run": 20000},
                "stays": {"run": 20000}}},
            "hog": {"cpus": [4], "taskgroup": "/b", "run": 10000000}
        },
        "global": {"duration": 2, "calibration": "CPU4"}
    }"#;
    let w = from_rtapp_json("movers.json", doc).unwrap();
    let r = run(&w, SchedPolicy::Smp, 5.0, true);
    let mover = r.threads.iter().find(|t| t.name.starts_with("mover")).unwrap();
    assert_eq!(mover.taskgroup.as_deref(), Some("/b"));
    // 5 loops of 40 ms of work in /a and 40 ms in /b: what it ran in /a is 200 ms
    assert!(near(group_s(&r, "/a"), 0.2, 0.005), "{:?}", r.taskgroups);
    assert!(near(group_s(&r, "/b"), 2.0 - 0.2, 0.01), "{:?}", r.taskgroups);
    let paths: std::collections::BTreeSet<u32> = r
        .trace
        .iter()
        .filter_map(|e| match e {
            TraceEvent::SchedPeltGroupCfs { group, .. } => Some(*group),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = paths.iter().map(|&g| r.trace_threads.groups[g as usize].as_str()).collect();
    assert_eq!(names, ["/a", "/b"]);
    let mut text = String::new();
    write_ftrace(&r.trace, &r.trace_threads, 8, Default::default(), &mut text);
    assert!(text.contains("sched_pelt_se:        cpu=4 path=/a comm=(null) pid=-1 load="), "no group entity");
    assert!(text.contains("sched_pelt_cfs:       cpu=4 path=/b load="), "no group run queue");
}

#[test]
fn a_group_nobody_is_in_changes_nothing() {
    // the run's hierarchy is on (a root level of entities) but every task is in the root
    // group: the same run, event for event
    let mixed8 = include_str!("../../../data/workloads/mixed8.toml");
    let unused = format!("{mixed8}\n[taskgroups.\"/unused\"]\nshares = 52\n");
    for scheduler in [SchedPolicy::Smp, SchedPolicy::Hmp, SchedPolicy::Eas] {
        let plain = run(&toml(mixed8), scheduler, 3.0, true);
        let mut grouped = run(&toml(&unused), scheduler, 3.0, true);
        assert_eq!(grouped.taskgroups.len(), 1);
        grouped.taskgroups.clear();
        let json = |r: &RunResult| serde_json::to_string(r).unwrap();
        assert_eq!(json(&plain), json(&grouped), "{scheduler:?}");
        assert_eq!(plain.trace, grouped.trace, "{scheduler:?}");
    }
}
