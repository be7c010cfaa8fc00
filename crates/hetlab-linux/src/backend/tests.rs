//! The backend against real perf_event_open groups (software events) and a fake sysfs tree.

use super::*;
use crate::sysfs::fake;

fn cfg(t: &fake::Tree) -> BackendConfig {
    BackendConfig::new(t.roots(), Platform::builtin("exynos5422").unwrap())
}

#[test]
fn policies_are_named_after_the_platform_clusters_with_their_cci_ports() {
    let t = fake::exynos5422("backend-names");
    let b = Backend::new(&cfg(&t)).unwrap();
    let got: Vec<(&str, Option<u8>, u32)> =
        b.policies.iter().map(|p| (p.cluster.as_str(), p.cci_port, p.capacity)).collect();
    assert_eq!(got, vec![("little", Some(3), 462), ("big", Some(4), 1024)]);
    assert_eq!(b.policy_of_cpu(5), Some(1));
    assert!(b.notes.is_empty(), "{:?}", b.notes);
}

#[test]
fn an_implausible_cpu_capacity_is_said_with_its_file_and_value_and_the_platforms_used() {
    let t = fake::exynos5422("backend-capacity");
    let file = t.root.join("sys/devices/system/cpu/cpu4/cpu_capacity");
    fs::write(&file, "99999\n").unwrap();
    let b = Backend::new(&cfg(&t)).unwrap();
    let platform = Platform::builtin("exynos5422").unwrap();
    let big = platform.cpu_capacity(platform.cluster_index("big").unwrap());
    assert_eq!(b.policies[1].capacity, big, "not 99999 clamped to 1024: the platform's");
    let expected =
        format!("{} holds '99999', not a capacity in 1..=1024; policy4 uses capacity {big} instead", file.display());
    assert_eq!(b.notes, vec![expected]);
    // a FIFO in its place cannot be read at all: an error, never a wait
    fs::remove_file(&file).unwrap();
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(file.as_os_str())).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert!(Backend::new(&cfg(&t)).err().unwrap().contains("not a regular file"));
}

#[test]
fn a_cgroup_to_count_that_does_not_exist_is_an_error() {
    let t = fake::exynos5422("backend-cgroup");
    let mut c = cfg(&t);
    c.counters = CounterMode::Cgroup(t.root.join("no-such-cgroup"));
    let e = Backend::new(&c).err().unwrap();
    assert!(e.starts_with("--counters cgroup=") && e.contains("not a directory"), "{e}");
}

#[test]
fn unmatched_policies_are_said_and_cluster_names_override() {
    let t = fake::exynos5422("backend-unmatched");
    fs::write(t.policy(4).join("related_cpus"), "4 5\n").unwrap();
    let b = Backend::new(&cfg(&t)).unwrap();
    assert_eq!(b.policies[1].cluster, "policy4");
    assert!(b.notes[0].contains("policy4 (cpus 4-5)") && b.notes[0].contains("--cluster-names"), "{:?}", b.notes);
    let mut c = cfg(&t);
    c.cluster_names = Some(vec!["little".into(), "big".into()]);
    let b = Backend::new(&c).unwrap();
    assert_eq!((b.policies[1].cluster.as_str(), b.policies[1].cci_port), ("big", Some(4)));
    c.cluster_names = Some(vec!["little".into()]);
    assert!(Backend::new(&c).err().unwrap().contains("2 cpufreq policies"));
}

#[test]
fn missing_hardware_pmus_are_noted_and_the_counters_dropped_together() {
    let t = fake::exynos5422("backend-nopmu");
    let mut c = cfg(&t);
    c.counters = CounterMode::PerCpu;
    let b = Backend::new(&c).unwrap();
    assert!(!b.has_core_counters() && !b.has_cci());
    assert_eq!(b.notes.len(), 2, "{:?}", b.notes);
    assert!(b.notes[0].contains("no ARM core PMU"), "{:?}", b.notes);
    assert!(b.notes[1].contains("no CCI-400 PMU"), "{:?}", b.notes);
}

#[test]
fn views_carry_load_from_proc_stat_and_counter_deltas() {
    let t = fake::exynos5422("backend-view");
    let mut b = Backend::new(&cfg(&t)).unwrap();
    let mut prev = Snapshot::default();
    b.snapshot(&mut prev).unwrap();
    // cpu4 fully busy over the window, cpu5 half idle (iowait counts as idle), others idle
    let mut text = String::from("cpu  0 0 0 0 0 0 0 0 0 0\n");
    for cpu in 0..8 {
        let (user, idle, iowait) = match cpu {
            4 => (110, 1000, 10),
            5 => (105, 1003, 12),
            _ => (100, 1010, 10),
        };
        text += &format!("cpu{cpu} {user} 0 50 {idle} {iowait} 0 0 0 0 0\n");
    }
    fs::write(t.root.join("proc/stat"), text).unwrap();
    let mut cur = Snapshot::default();
    b.snapshot(&mut cur).unwrap();
    cur.t_us = prev.t_us + 20_000;
    cur.core = vec![CoreEntry {
        key: 4,
        unit: 4,
        cluster: 1,
        pmu: CorePmu { cpu_cycles: 100, bus_access: 7, ..Default::default() },
    }];
    let mut v = PolicyView::default();
    b.fill_view(1, &prev, &cur, 1_000_000, 200_000, 2_000_000, &mut v);
    assert_eq!(v.policy, 1);
    assert_eq!(v.opps_khz.len(), 19);
    assert_eq!((v.cpus[0].cpu, v.cpus[0].wall_us, v.cpus[0].idle_us), (4, 20_000, 0));
    assert_eq!(v.cpus[1].idle_us, 10_000);
    assert_eq!(v.cpus[2].idle_us, 20_000);
    assert_eq!(v.cpus[0].util_avg, 512, "busy × 1.0/2.0 GHz × 1024");
    assert_eq!(v.threads.len(), 1);
    assert_eq!((v.threads[0].tid, v.threads[0].cluster, v.threads[0].pmu.bus_access), (4, 1, 7));
    assert_eq!(
        (v.policy_min_khz, v.policy_max_khz, v.cur_khz, v.transition_latency_ns),
        (200_000, 2_000_000, 1_000_000, 140_000)
    );
    assert_eq!(v.tick_us, 5_000, "CONFIG_HZ=200 of the platform");
}

#[test]
fn per_thread_software_counters_follow_a_thread_and_its_cluster() {
    // real /proc for the thread, fake sysfs whose two policies are this machine's CPU 0
    // and (if present) CPU 1
    let t = fake::exynos5422("backend-threads");
    fs::write(t.policy(0).join("related_cpus"), "0\n").unwrap();
    fs::write(t.policy(0).join("affected_cpus"), "0\n").unwrap();
    fs::write(t.policy(4).join("related_cpus"), "1\n").unwrap();
    fs::write(t.policy(4).join("affected_cpus"), "1\n").unwrap();
    let mut c = BackendConfig::new(Roots::new(t.root.join("sys"), "/proc"), Platform::builtin("exynos5422").unwrap());
    c.cluster_names = Some(vec!["little".into(), "big".into()]);
    c.pmu = PmuSource::Software { pmus: 1 };
    let tid = crate::cpus::gettid();
    c.counters = CounterMode::Tids(vec![tid]);
    crate::cpus::pin_current_thread(0).unwrap();
    let mut b = match Backend::new(&c) {
        Ok(b) if b.has_core_counters() => b,
        Ok(b) => panic!("{:?}", b.notes),
        Err(e) => panic!("{e}"),
    };
    assert!(b.has_cci());
    let mut s0 = Snapshot::default();
    b.read_counters(&mut s0).unwrap();
    let mut x = 0u64;
    for i in 0..3_000_000u64 {
        x = std::hint::black_box(x ^ i);
    }
    let mut s1 = Snapshot::default();
    b.read_counters(&mut s1).unwrap();
    let mut v = PolicyView::default();
    b.fill_view(1, &s0, &s1, 1_000_000, 200_000, 2_000_000, &mut v);
    assert_eq!(v.threads.len(), 1, "{:?}", v.threads);
    assert_eq!(v.threads[0].tid, tid);
    assert_eq!(v.threads[0].cluster, 0, "pinned to CPU 0 = policy 0");
    assert!(v.threads[0].pmu.cpu_cycles > 0);
    assert_eq!(v.cci_ports.iter().map(|p| p.port).collect::<Vec<_>>(), vec![3, 4]);
}

/// A thread that burns CPU when told to and otherwise blocks on a channel.
struct Worker {
    go: std::sync::mpsc::Sender<u64>,
    done: std::sync::mpsc::Receiver<()>,
    tid: u32,
}

impl Worker {
    fn start() -> Worker {
        let (go, rx) = std::sync::mpsc::channel::<u64>();
        let (done_tx, done) = std::sync::mpsc::channel();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            tid_tx.send(crate::cpus::gettid()).unwrap();
            while let Ok(n) = rx.recv() {
                let mut x = 0u64;
                for i in 0..n {
                    x = std::hint::black_box(x ^ i);
                }
                if done_tx.send(()).is_err() {
                    break;
                }
            }
        });
        Worker { go, done, tid: tid_rx.recv().unwrap() }
    }

    fn voluntary_switches(&self) -> u64 {
        let status = fs::read_to_string(format!("/proc/self/task/{}/status", self.tid)).unwrap();
        let line = status.lines().find(|l| l.starts_with("voluntary_ctxt_switches")).unwrap();
        line.split_whitespace().last().unwrap().parse().unwrap()
    }

    /// Runs `n` iterations, then returns once the thread has blocked again (it has switched
    /// out voluntarily since, which is where perf schedules its counters out).
    fn run(&self, n: u64) {
        let before = self.voluntary_switches();
        self.go.send(n).unwrap();
        self.done.recv().unwrap();
        while self.voluntary_switches() == before {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

fn thread_backend(t: &fake::Tree, tids: Vec<u32>, skip: bool) -> Backend {
    let mut c = BackendConfig::new(Roots::new(t.root.join("sys"), "/proc"), Platform::builtin("exynos5422").unwrap());
    c.cluster_names = Some(vec!["little".into(), "big".into()]);
    c.pmu = PmuSource::Software { pmus: 1 };
    c.counters = CounterMode::Tids(tids);
    c.skip_quiet_threads = skip;
    let b = Backend::new(&c).unwrap();
    assert!(b.has_core_counters() && b.has_cci(), "{:?}", b.notes);
    b
}

#[test]
fn threads_that_did_not_run_are_not_read_and_decisions_equal_reading_every_thread() {
    let t = fake::exynos5422("backend-quiet");
    for (p, cpu) in [(0, "0"), (4, "1")] {
        fs::write(t.policy(p).join("related_cpus"), format!("{cpu}\n")).unwrap();
        fs::write(t.policy(p).join("affected_cpus"), format!("{cpu}\n")).unwrap();
    }
    let workers: Vec<Worker> = (0..3).map(|_| Worker::start()).collect();
    let tids: Vec<u32> = workers.iter().map(|w| w.tid).collect();
    let mut skip = thread_backend(&t, tids.clone(), true);
    let mut all = thread_backend(&t, tids.clone(), false);
    assert!(skip.skips_quiet_threads(), "{:?}", skip.describe());
    assert!(skip.describe().iter().any(|l| l.contains("threads that have not run since their last read are not read")));
    assert!(!all.skips_quiet_threads());
    assert!(all.describe().iter().any(|l| l.contains("every group read each sample")));
    let pl = Platform::builtin("exynos5422").unwrap();
    let ctx = hetlab_core::governor::GovernorContext { cluster_name: "little", tick_us: pl.tick_us(), model: None };
    let mut gov_skip = hetlab_core::governor::registry::build("anti-snoop", &[], &ctx).unwrap();
    let mut gov_all = hetlab_core::governor::registry::build("anti-snoop", &[], &ctx).unwrap();
    let (mut prev_s, mut prev_a) = (Snapshot::default(), Snapshot::default());
    // two reads with nobody running: every thread is found off the CPU
    for _ in 0..2 {
        skip.snapshot(&mut prev_s).unwrap();
        all.snapshot(&mut prev_a).unwrap();
    }
    assert_eq!(skip.groups_read(), 4, "the second read confirms; nothing skipped yet");
    let (mut v_s, mut v_a) = (PolicyView::default(), PolicyView::default());
    skip.fill_view(0, &prev_a, &prev_a, 1_400_000, 200_000, 1_400_000, &mut v_a);
    gov_skip.start(&v_a);
    gov_all.start(&v_a);
    let mut khz = 1_400_000;
    for round in 0..6 {
        let ran = round % 3;
        workers[ran].run(3_000_000);
        let (mut cur_s, mut cur_a) = (Snapshot::default(), Snapshot::default());
        skip.snapshot(&mut cur_s).unwrap();
        all.snapshot(&mut cur_a).unwrap();
        // the thread that ran, and the one that ran the round before (its confirming read)
        let expected = if round == 0 { 1 } else { 2 };
        assert_eq!(skip.groups_read(), expected + 1, "round {round}: plus the CCI group");
        assert_eq!(all.groups_read(), 4);
        // everything but the thread counts from the read-everything snapshot: the views
        // then differ only where the two paths could
        for (p, c) in [(&mut prev_s, &prev_a), (&mut cur_s, &cur_a)] {
            (p.t_us, p.cci_cycles) = (c.t_us, c.cci_cycles);
            p.cpus.clone_from(&c.cpus);
            p.cci.clone_from(&c.cci);
        }
        skip.fill_view(0, &prev_s, &cur_s, khz, 200_000, 1_400_000, &mut v_s);
        all.fill_view(0, &prev_a, &cur_a, khz, 200_000, 1_400_000, &mut v_a);
        let tids_ran: Vec<u32> = v_s.threads.iter().map(|s| s.tid).collect();
        assert_eq!(tids_ran, vec![tids[ran]], "round {round}: only the thread that ran has counts");
        assert!(v_s.threads[0].pmu.cpu_cycles > 0);
        assert_eq!(format!("{:?}", v_s.threads), format!("{:?}", v_a.threads), "round {round}");
        let (d_s, d_a) = (gov_skip.sample(&v_s), gov_all.sample(&v_a));
        assert_eq!(d_s, d_a, "round {round}");
        khz = d_a.target_khz;
        (prev_s, prev_a) = (cur_s, cur_a);
    }
    // a skipped group's counts are what a read(2) of it returns now
    let mut direct = [0u64; 4];
    for u in &mut skip.core {
        u.group.read(&mut direct).unwrap();
        assert_eq!(direct, u.last, "thread {}", u.unit);
    }
}

#[test]
fn the_start_up_check_tells_a_page_that_moves_at_sched_in_from_one_that_does_not() {
    // the software PMUs' add() updates the user page (task_clock_event_add, perf_swevent_add
    // in kernel/events/core.c), as the ARM PMUs' armpmu_add does
    let me = Target::Thread(crate::cpus::gettid());
    let task_clock = perf::software_core_events(true);
    let faults = EventSpec {
        type_: perf::PERF_TYPE_SOFTWARE,
        config: perf::PERF_COUNT_SW_PAGE_FAULTS,
        name: "page-faults".into(),
    };
    for events in [task_clock.clone(), vec![faults]] {
        assert_eq!(page_moves_at_sched_in(&mut Group::open(&events, me).unwrap()), Ok(true), "{}", events[0].name);
    }
    // a leader that is never scheduled in leaves its page still: every group would be read
    assert_eq!(page_moves_at_sched_in(&mut Group::open_disabled(&task_clock, me).unwrap()), Ok(false));
}

#[test]
fn counter_modes_parse() {
    assert_eq!(CounterMode::parse("per-cpu").unwrap(), CounterMode::PerCpu);
    assert_eq!(CounterMode::parse("pid=1,2").unwrap(), CounterMode::Pids(vec![1, 2]));
    assert_eq!(CounterMode::parse("cgroup=/x").unwrap(), CounterMode::Cgroup("/x".into()));
    assert!(CounterMode::parse("pid=").is_err());
    assert!(CounterMode::parse("threads").unwrap_err().contains("per-cpu"));
}
