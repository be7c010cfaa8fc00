//! The cost of one governor sample on this machine: the PMC reads (perf_event_open groups, one
//! read(2) each), filling the PolicyView, and the real anti-snoop decision — what the paper
//! measured as 41.82 µs (1 thread) and 415.18 µs (71 threads). Prints figures, asserts nothing.
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

use hetlab_core::governor::{registry, PolicyView};
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

/// Threads that run a little and sleep, like a mostly-waiting multithreaded program; `spin`
/// makes them run all the time instead (reading a running thread's counters needs an IPI).
struct Load {
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
    tids: Vec<u32>,
}

impl Load {
    fn start(n: usize, spin: bool) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let handles = (0..n)
            .map(|_| {
                let (s, tx) = (stop.clone(), tx.clone());
                std::thread::spawn(move || {
                    tx.send(gettid()).unwrap();
                    let mut x = 0u64;
                    while !s.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        while t.elapsed() < Duration::from_micros(200) || spin && !s.load(Ordering::Relaxed) {
                            x = std::hint::black_box(x.wrapping_add(1));
                        }
                        std::thread::sleep(Duration::from_millis(10));
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

/// Times SAMPLES anti-snoop samples of the little policy: read all counters, fill the view,
/// decide. Returns (stats in µs, perf groups read per sample).
fn time_samples(cfg: &BackendConfig) -> Result<(Stats, usize), String> {
    let mut b = Backend::new(cfg)?;
    if !(b.has_core_counters() && b.has_cci()) {
        return Err(b.notes.join("; "));
    }
    let mut gov = registry::build("anti-snoop", "little", &[], None)?;
    let mut prev = Snapshot::default();
    let mut cur = Snapshot::default();
    let mut view = PolicyView::default();
    b.read_counters(&mut prev)?;
    b.fill_view(0, &prev, &prev, 1_400_000, 200_000, 1_400_000, &mut view);
    gov.start(&view);
    let mut times = Vec::with_capacity(SAMPLES);
    let mut consulted = 0usize;
    for _ in 0..SAMPLES {
        // a governor period apart is not needed for the cost; a short pause lets the load run
        std::thread::sleep(Duration::from_micros(200));
        let t = Instant::now();
        b.read_counters(&mut cur)?;
        b.fill_view(0, &prev, &cur, view.cur_khz.max(200_000), 200_000, 1_400_000, &mut view);
        let d = gov.sample(&view);
        times.push(t.elapsed().as_secs_f64() * 1e6);
        consulted += usize::from(!view.cci_ports.is_empty());
        view.cur_khz = d.target_khz;
        std::mem::swap(&mut prev, &mut cur);
    }
    assert_eq!(consulted, SAMPLES, "every sample carried CCI counts for the tree");
    Ok((stats(times), b.groups()))
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

/// SCHED_FIFO for the calling thread (root only), as a daemon that must sample on time would run.
fn set_fifo(on: bool) -> bool {
    // SAFETY: sched_setscheduler on the calling thread with a valid sched_param.
    unsafe {
        let p = libc::sched_param { sched_priority: if on { 50 } else { 0 } };
        libc::sched_setscheduler(0, if on { libc::SCHED_FIFO } else { libc::SCHED_OTHER }, &p) == 0
    }
}

fn run_modes(cfg: &BackendConfig, ncpu: usize, label: &str) {
    let row = |name: &str, r: Result<(Stats, usize), String>, target: &str, paper: &str| match r {
        Ok((s, g)) => println!("{:<50} {g:>6} {:>10.2} {:>9.2} {:>9.2} {target:>10} {paper:>9}", format!("{name}{label}"), s.median, s.mean, s.p99),
        Err(e) => println!("{name:<50} unavailable here: {e}"),
    };
    {
        let load = Load::start(1, true);
        let mut c = cfg.clone();
        c.counters = CounterMode::Tids(load.tids.clone());
        row("per-thread, 1 thread (running)", time_samples(&c), "4", "41.82");
    }
    {
        let load = Load::start(71, false);
        let mut c = cfg.clone();
        c.counters = CounterMode::Tids(load.tids.clone());
        row("per-thread, 71 threads", time_samples(&c), "41", "415.18");
        c.pmu = PmuSource::Software { pmus: 2 };
        row("per-thread, 71 threads x 2 PMUs (big.LITTLE)", time_samples(&c), "", "");
    }
    {
        let _load = Load::start(71, false);
        let mut c = cfg.clone();
        c.counters = CounterMode::PerCpu;
        row(&format!("per-CPU, {ncpu} CPUs, 71 threads"), time_samples(&c), "", "");
        match cgroup_dir() {
            Ok(dir) => {
                c.counters = CounterMode::Cgroup(dir.clone());
                row(&format!("cgroup, {ncpu} CPUs, 71 threads outside it"), time_samples(&c), "", "");
                let _ = fs::remove_dir(&dir);
            }
            Err(e) => row("cgroup", Err(e), "", ""),
        }
    }
}

fn main() {
    let ncpu = hetlab_linux::cpus::allowed_cpus().len();
    let root = fake_tree(ncpu);
    let mut cfg = BackendConfig::new(Roots::new(root.join("sys"), "/proc"));
    cfg.platform = Some(Platform::builtin("exynos5422").unwrap());
    cfg.cluster_names = Some(vec!["little".into(), "big".into()]);
    cfg.pmu = PmuSource::Software { pmus: 1 };

    println!("governor_sample: one anti-snoop sample = read every perf group (PERF_FORMAT_GROUP, one read(2)");
    println!("each) + fill the PolicyView + the decision; {SAMPLES} samples; software events stand in for the");
    println!("ARM core PMU and the CCI-400 PMU (this machine has neither); {ncpu} CPUs.");
    println!();
    println!("{:<50} {:>6} {:>10} {:>9} {:>9} {:>10} {:>9}", "mode", "groups", "median µs", "mean µs", "p99 µs", "target µs", "paper µs");
    if set_fifo(true) {
        run_modes(&cfg, ncpu, " [FIFO]");
        set_fifo(false);
        println!("[FIFO]: the sampling thread at SCHED_FIFO 50, so the load cannot preempt it mid-sample; below,");
        println!("the same at normal priority, where the 71 load threads share {ncpu} CPUs with it:");
    }
    run_modes(&cfg, ncpu, "");

    // The rest of a daemon sample, outside the PMC budget: /proc/stat and two sysfs reads.
    println!();
    let mut ps = ProcStat::new(&Roots::default());
    let mut t = Vec::new();
    for _ in 0..SAMPLES {
        let s = Instant::now();
        std::hint::black_box(ps.read().unwrap());
        t.push(s.elapsed().as_secs_f64() * 1e6);
    }
    let s = stats(t);
    println!("{:<50} {:>6} {:>10.2} {:>9.2} {:>9.2}", "also: read + parse /proc/stat", "", s.median, s.mean, s.p99);
    let pols = sysfs::discover(&cfg.roots).unwrap();
    let mut t = Vec::new();
    for _ in 0..SAMPLES {
        let s = Instant::now();
        std::hint::black_box((pols[0].min_khz().unwrap(), pols[0].max_khz().unwrap()));
        t.push(s.elapsed().as_secs_f64() * 1e6);
    }
    let s = stats(t);
    println!("{:<50} {:>6} {:>10.2} {:>9.2} {:>9.2}", "also: scaling_min/max_freq (tmpfs stand-in)", "", s.median, s.mean, s.p99);
    let _ = fs::remove_dir_all(&root);
}
