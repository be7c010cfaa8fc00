//! The cost of one governor sample on this machine: the PMC reads (perf_event_open groups, one
//! read(2) each), filling the PolicyView, and the real anti-snoop decision — what the paper
//! measured as 41.82 µs (1 thread) and 415.18 µs (71 threads). Prints figures, asserts nothing.
//!
//! Per-thread cases run twice: reading every group each sample (`read all`, the path before the
//! perf user page was used) and leaving the groups of threads that have not run since their last
//! read unread (`skip quiet`, hetlabd's default; crate::quiet). `read/smp` is the mean number of
//! groups read with read(2) per sample, `ran/smp` the mean number of threads with counts in the
//! view (those that ran since the previous sample): skip quiet reads those, the ones that ran the
//! sample before (the read that finds them stopped) and the CCI group.
//!
//! This VM has no hardware PMU, so software events stand in for the core and CCI events
//! (`PmuSource::Software`); the syscalls, group reads and bookkeeping are the same. The policies
//! come from a fake sysfs tree whose two policies are this machine's CPUs 0 and 1, named little
//! and big; threads and /proc/stat are real.
//!
//! Run: cargo bench -p hetlab-linux --bench governor_sample

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use hetlab_core::governor::{registry, GovernorContext, PolicyView};
use hetlab_core::platform::Platform;
use hetlab_linux::backend::{Backend, BackendConfig, CounterMode, PmuSource, Snapshot};
use hetlab_linux::cpus::gettid;
use hetlab_linux::procstat::ProcStat;
use hetlab_linux::{sysfs, Roots};

const SAMPLES: usize = 3000;

fn w(p: &Path, s: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, format!("{s}\n")).unwrap();
}

fn fake_tree(ncpu: usize) -> PathBuf {
    let root = std::env::temp_dir().join(format!("hetlab-bench-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let little: Vec<u32> = (2..=14).map(|m| m * 100_000).collect();
    let big: Vec<u32> = (2..=20).map(|m| m * 100_000).collect();
    let cpu_big = if ncpu > 1 { 1 } else { 0 };
    for (n, cpu, opps) in [(0, 0, &little), (cpu_big, cpu_big, &big)] {
        let d = root.join(format!("sys/devices/system/cpu/cpufreq/policy{n}"));
        let list: Vec<String> = opps.iter().map(u32::to_string).collect();
        w(&d.join("scaling_available_frequencies"), &list.join(" "));
        w(&d.join("scaling_available_governors"), "ondemand userspace performance");
        w(&d.join("scaling_governor"), "userspace");
        w(&d.join("scaling_min_freq"), &opps[0].to_string());
        w(&d.join("scaling_max_freq"), &opps[opps.len() - 1].to_string());
        w(&d.join("scaling_setspeed"), &opps[0].to_string());
        w(&d.join("scaling_cur_freq"), &opps[0].to_string());
        w(&d.join("cpuinfo_min_freq"), &opps[0].to_string());
        w(&d.join("cpuinfo_max_freq"), &opps[opps.len() - 1].to_string());
        w(&d.join("cpuinfo_transition_latency"), "140000");
        w(&d.join("related_cpus"), &cpu.to_string());
        w(&d.join("affected_cpus"), &cpu.to_string());
    }
    root
}

/// How the counted threads behave.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Blocked (sleeping) all the time: their counters are inactive, a read needs no IPI.
    Blocked,
    /// Run 200 µs every 10 ms (2 % each): sometimes running on the other CPU at a read.
    Duty,
    /// Running all the time on `cpu`: every read of an active counter on another CPU is a
    /// cross-CPU call (an IPI).
    Running { cpu: usize },
}

struct Load {
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
    tids: Vec<u32>,
}

impl Load {
    fn start(n: usize, kind: Kind) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let handles = (0..n)
            .map(|_| {
                let (s, tx) = (stop.clone(), tx.clone());
                std::thread::spawn(move || {
                    if let Kind::Running { cpu } = kind {
                        hetlab_linux::cpus::pin_current_thread(cpu).unwrap();
                    }
                    tx.send(gettid()).unwrap();
                    let mut x = 0u64;
                    while !s.load(Ordering::Relaxed) {
                        match kind {
                            Kind::Blocked => std::thread::sleep(Duration::from_millis(20)),
                            Kind::Duty => {
                                let t = Instant::now();
                                while t.elapsed() < Duration::from_micros(200) {
                                    x = std::hint::black_box(x.wrapping_add(1));
                                }
                                std::thread::sleep(Duration::from_millis(10));
                            }
                            Kind::Running { .. } => x = std::hint::black_box(x.wrapping_add(1)),
                        }
                    }
                })
            })
            .collect();
        let tids = (0..n).map(|_| rx.recv().unwrap()).collect();
        Load { stop, handles, tids }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

struct Stats {
    median: f64,
    mean: f64,
    p99: f64,
}

fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Stats { median: v[v.len() / 2], mean, p99: v[(v.len() * 99 / 100).min(v.len() - 1)] }
}

/// Times SAMPLES anti-snoop samples of the little policy: read the counters, fill the view,
/// decide. Returns (stats in µs, perf groups, mean groups read and threads with counts per
/// sample).
fn time_samples(cfg: &BackendConfig) -> Result<(Stats, usize, f64, f64), String> {
    let mut b = Backend::new(cfg)?;
    if !(b.has_core_counters() && b.has_cci()) {
        return Err(b.notes.join("; "));
    }
    if cfg.skip_quiet_threads && matches!(cfg.counters, CounterMode::Tids(_)) && !b.skips_quiet_threads() {
        return Err(b.describe().join("; "));
    }
    let ctx = GovernorContext { cluster_name: "little", tick_us: cfg.platform.tick_us(), model: None };
    let mut gov = registry::build("anti-snoop", &[], &ctx)?;
    let mut prev = Snapshot::default();
    let mut cur = Snapshot::default();
    let mut view = PolicyView::default();
    b.read_counters(&mut prev)?;
    b.fill_view(0, &prev, &prev, 1_400_000, 200_000, 1_400_000, &mut view);
    gov.start(&view);
    let mut times = Vec::with_capacity(SAMPLES);
    let mut consulted = 0usize;
    let (mut reads, mut ran) = (0usize, 0usize);
    for _ in 0..SAMPLES {
        // a governor period apart is not needed for the cost; a short pause lets the load run
        std::thread::sleep(Duration::from_micros(200));
        let t = Instant::now();
        b.read_counters(&mut cur)?;
        b.fill_view(0, &prev, &cur, view.cur_khz.max(200_000), 200_000, 1_400_000, &mut view);
        let d = gov.sample(&view);
        times.push(t.elapsed().as_secs_f64() * 1e6);
        reads += b.groups_read();
        ran += view.threads.len();
        consulted += usize::from(!view.cci_ports.is_empty());
        view.cur_khz = d.target_khz;
        std::mem::swap(&mut prev, &mut cur);
    }
    assert_eq!(consulted, SAMPLES, "every sample carried CCI counts for the tree");
    let per_sample = |n: usize| n as f64 / SAMPLES as f64;
    Ok((stats(times), b.groups(), per_sample(reads), per_sample(ran)))
}

fn cgroup_dir() -> Result<PathBuf, String> {
    for base in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup/perf_event", "/sys/fs/cgroup"] {
        let d = Path::new(base).join(format!("hetlab-bench-{}", std::process::id()));
        if fs::create_dir(&d).is_ok() {
            return Ok(d);
        }
    }
    Err("cannot create a cgroup under /sys/fs/cgroup".into())
}

/// Median cost of one read(2) of a 4-event software group in a given state, µs.
fn read_cost(target: hetlab_linux::perf::Target, per_thread: bool) -> f64 {
    use hetlab_linux::perf::{software_core_events, Group};
    let mut g = Group::open(&software_core_events(per_thread), target).unwrap();
    let mut out = [0u64; 4];
    let mut v: Vec<f64> = (0..2000)
        .map(|_| {
            std::thread::sleep(Duration::from_micros(100));
            let t = Instant::now();
            g.read(&mut out).unwrap();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let ncpu = hetlab_linux::cpus::allowed_cpus().len();
    // the sampling thread on CPU 0; "another CPU" is the last one
    let other = *hetlab_linux::cpus::allowed_cpus().last().unwrap_or(&0);
    hetlab_linux::cpus::pin_current_thread(0).unwrap();
    let root = fake_tree(ncpu);
    let mut cfg = BackendConfig::new(Roots::new(root.join("sys"), "/proc"), Platform::builtin("exynos5422").unwrap());
    cfg.cluster_names = Some(vec!["little".into(), "big".into()]);
    cfg.pmu = PmuSource::Software { pmus: 1 };

    println!("governor_sample: one anti-snoop sample = read every perf group (PERF_FORMAT_GROUP, one read(2)");
    println!("each: the counted units plus the CCI group) + fill the PolicyView + the decision; {SAMPLES} samples;");
    println!("software events stand in for the ARM core PMU and the CCI-400 PMU (this machine has neither);");
    println!("{ncpu} CPUs; the sampling thread is pinned to CPU 0. Per-thread cases twice on the same threads:");
    println!("'read all' reads every group; 'skip quiet' (hetlabd's default) leaves unread the groups of threads");
    println!("that have not run since their last read. read/smp: read(2)s per sample; ran/smp: threads with counts.");
    println!();
    println!(
        "{:<62} {:>6} {:>8} {:>7} {:>10} {:>9} {:>9} {:>10} {:>9}",
        "mode", "groups", "read/smp", "ran/smp", "median µs", "mean µs", "p99 µs", "target µs", "paper µs"
    );
    let row = |name: &str, r: Result<(Stats, usize, f64, f64), String>, target: &str, paper: &str| match r {
        Ok((s, g, read, ran)) => println!(
            "{name:<62} {g:>6} {read:>8.1} {ran:>7.1} {:>10.2} {:>9.2} {:>9.2} {target:>10} {paper:>9}",
            s.median, s.mean, s.p99
        ),
        Err(e) => println!("{name:<62} unavailable here: {e}"),
    };
    // each case with the same threads, read all then skip quiet
    let threads = |name: &str, n: usize, kind: Kind, pmus: usize, target: &str, paper: &str| {
        let load = Load::start(n, kind);
        for skip in [false, true] {
            let mut c = cfg.clone();
            c.counters = CounterMode::Tids(load.tids.clone());
            c.pmu = PmuSource::Software { pmus };
            c.skip_quiet_threads = skip;
            let how = if skip { "skip quiet" } else { "read all" };
            row(&format!("per-thread, {name}, {how}"), time_samples(&c), target, paper);
        }
    };
    threads("1 thread, blocked", 1, Kind::Blocked, 1, "4", "41.82");
    threads(&format!("1 thread, running on CPU {other}"), 1, Kind::Running { cpu: other }, 1, "4", "41.82");
    threads("71 threads, blocked", 71, Kind::Blocked, 1, "41", "415.18");
    threads("71 threads, each running 2 %", 71, Kind::Duty, 1, "41", "415.18");
    threads(&format!("71 threads, all running on CPU {other}"), 71, Kind::Running { cpu: other }, 1, "41", "415.18");
    threads("71 threads x 2 PMUs, blocked", 71, Kind::Blocked, 2, "", "");
    {
        let mut c = cfg.clone();
        c.counters = CounterMode::PerCpu;
        row(&format!("per-CPU, {ncpu} CPUs"), time_samples(&c), "", "");
        match cgroup_dir() {
            Ok(dir) => {
                c.counters = CounterMode::Cgroup(dir.clone());
                row(&format!("cgroup, {ncpu} CPUs (none of its tasks running)"), time_samples(&c), "", "");
                let _ = fs::remove_dir(&dir);
            }
            Err(e) => row("cgroup", Err(e), "", ""),
        }
    }

    // Where the time goes: one group read, by the state of what it counts.
    use hetlab_linux::perf::Target;
    println!();
    println!("one read(2) of a 4-event group, median µs:");
    println!("  this thread                                    {:>8.2}", read_cost(Target::Thread(gettid()), true));
    {
        let l = Load::start(1, Kind::Blocked);
        println!(
            "  a blocked thread                               {:>8.2}",
            read_cost(Target::Thread(l.tids[0]), true)
        );
    }
    {
        let l = Load::start(1, Kind::Running { cpu: other });
        println!(
            "  a thread running on CPU {other} (IPI to it)          {:>8.2}",
            read_cost(Target::Thread(l.tids[0]), true)
        );
    }
    println!("  per-CPU, CPU 0 (local)                         {:>8.2}", read_cost(Target::Cpu(0), false));
    println!("  per-CPU, CPU {other} (IPI to it)                     {:>8.2}", read_cost(Target::Cpu(other), false));

    // The rest of a daemon sample, outside the PMC budget: /proc/stat and two sysfs reads.
    println!("the rest of a daemon sample (not PMC reads), median µs:");
    let mut ps = ProcStat::new(&Roots::default());
    let mut t = Vec::new();
    for _ in 0..SAMPLES {
        let s = Instant::now();
        std::hint::black_box(ps.read().unwrap());
        t.push(s.elapsed().as_secs_f64() * 1e6);
    }
    let s = stats(t);
    println!("  read + parse /proc/stat                        {:>8.2}", s.median);
    let pols = sysfs::discover(&cfg.roots).unwrap();
    let mut t = Vec::new();
    for _ in 0..SAMPLES {
        let s = Instant::now();
        std::hint::black_box((pols[0].min_khz().unwrap(), pols[0].max_khz().unwrap()));
        t.push(s.elapsed().as_secs_f64() * 1e6);
    }
    let s = stats(t);
    println!("  scaling_min_freq + scaling_max_freq (tmpfs)    {:>8.2}", s.median);
    let _ = fs::remove_dir_all(&root);
}
