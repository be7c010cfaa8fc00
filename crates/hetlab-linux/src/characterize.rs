//! The characterization sweep on a real board (`--backend linux`): the same configurations and
//! the same rows as the simulated sweep (docs/dataset.md), measured.
//!
//! For each chunk (active cluster, pattern, size) the chase array is built once by a worker
//! thread pinned to a CPU of the active cluster; then for every (big kHz, LITTLE kHz) pair and
//! repetition both policies are set with `scaling_setspeed` (userspace governor, limits opened
//! to the cpuinfo range), the chase runs `iterations` dependent loads, and every sampling period
//! the sampling thread — pinned to another CPU of the *active* cluster so the idle cluster stays
//! idle — reads the CCI ports and the chase thread's core counters and emits one row. The
//! iteration count is chosen per chunk so a run lasts about `run_s` at both clusters' top OPPs
//! (slower configurations run longer and get more periods), as in the simulated sweep.
//!
//! Governor, min and max of every policy are saved first and restored at the end, on a signal
//! and on any error (the daemon's [`Guard`]). Missing counters (no CCI PMU, no core PMU) refuse
//! the sweep unless `allow_missing_counters`, which writes zeros for them and says so once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use hetlab_core::counters::ratio;
use hetlab_core::governor::dbs::default_sampling_rate_us;
use hetlab_core::platform::{Platform, BUILTIN_PLATFORMS};
use serde_json::{Map, Value};

use crate::backend::{Backend, BackendConfig, CounterMode, PmuSource, Snapshot};
use crate::chase::{self, ChaseArray, ChaseOptions, Pattern};
use crate::cpus::{allowed_cpus, gettid, pin_current_thread};
use crate::daemon::claim_frequencies;
use crate::restore::{Guard, STATE_FILE};
use crate::stop::Stop;
use crate::{euid, sha256, Roots};

#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// A built-in platform name (its text's SHA-256 goes into every row).
    pub platform: String,
    pub roots: Roots,
    pub pmu: PmuSource,
    pub run_dir: std::path::PathBuf,
    pub patterns: Vec<Pattern>,
    /// Array sizes, 4-byte elements; empty = half and twice every L1 and L2 size.
    pub sizes: Vec<usize>,
    pub reps: u32,
    /// Target run length at the top OPPs, s.
    pub run_s: f64,
    pub seed: u64,
    /// Sampling period, µs (default: ondemand's default for the policy's transition latency).
    pub period_us: Option<u64>,
    /// CPU to run the chase on, per cluster name (default: the cluster's first online CPU).
    pub chase_cpus: Vec<(String, usize)>,
    /// Restrict the frequency pairs (default: every OPP of each policy).
    pub big_khz: Option<Vec<u32>>,
    pub little_khz: Option<Vec<u32>>,
    /// Keep the active cluster at its highest listed frequency and sweep only the idle one (the
    /// layout the seed paper's Figure 4 sample counts imply; docs/training.md).
    pub active_at_top: bool,
    /// Run only these chunks (active, pattern name, size); run ids still follow the full plan.
    pub only_chunks: Option<Vec<(String, String, usize)>>,
    pub allow_missing_counters: bool,
    pub cluster_names: Option<Vec<String>>,
}

impl SweepConfig {
    pub fn new(roots: Roots) -> SweepConfig {
        SweepConfig {
            platform: "exynos5422".into(),
            roots,
            pmu: PmuSource::Hardware,
            run_dir: "/run".into(),
            patterns: vec![Pattern::Random, Pattern::Sequential, Pattern::Stride(16)],
            sizes: Vec::new(),
            reps: 5,
            run_s: 0.08,
            seed: 1,
            period_us: None,
            chase_cpus: Vec::new(),
            big_khz: None,
            little_khz: None,
            active_at_top: false,
            only_chunks: None,
            allow_missing_counters: false,
            cluster_names: None,
        }
    }
}

/// Half and twice every cache size (L1D per core type, L2 per cluster), in elements — the same
/// rule as the simulated sweep's `default_sizes`.
pub fn default_sizes(p: &Platform) -> Vec<usize> {
    let mut s = std::collections::BTreeSet::new();
    for (i, c) in p.clusters.iter().enumerate() {
        for bytes in [p.core_type_of(i).l1d_bytes, c.l2_bytes] {
            let elems = (bytes / 4) as usize;
            s.insert(elems / 2);
            s.insert(elems * 2);
        }
    }
    s.into_iter().collect()
}

/// The column order of docs/dataset.md for clusters `names`.
pub fn columns(names: &[String]) -> Vec<String> {
    let mut c: Vec<String> = [
        "backend",
        "platform",
        "platform_sha256",
        "run_id",
        "config_id",
        "active_cluster",
        "idle_cluster",
        "big_khz",
        "little_khz",
        "pattern",
        "size_elements",
        "iterations",
        "rep",
        "seed",
        "run_time_s",
        "period_index",
        "t_end_s",
        "period_s",
        "cci_cycles",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in names {
        c.push(format!("si_rrq_hs_any_{n}"));
        c.push(format!("si_rrq_stall_tt_full_{n}"));
        c.push(format!("cci_congestion_{n}"));
    }
    for k in ["cpu_cycles", "inst_retired", "bus_access", "l2d_cache_refill", "memory_access"] {
        c.push(k.to_string());
    }
    c
}

/// Identity of one run.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub platform: String,
    pub platform_sha256: String,
    pub run_id: u64,
    pub active: String,
    pub idle: String,
    pub big_khz: u32,
    pub little_khz: u32,
    pub pattern: String,
    pub size_elements: usize,
    pub iterations: u64,
    pub rep: u32,
    pub seed: u64,
}

/// Counter deltas over one sampling period.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeriodCounts {
    pub cci_cycles: u64,
    /// (si_rrq_hs_any, si_rrq_stall_tt_full) per cluster, in `names` order.
    pub ports: Vec<(u64, u64)>,
    pub cpu_cycles: u64,
    pub inst_retired: u64,
    pub bus_access: u64,
    pub l2d_cache_refill: u64,
}

/// One dataset row: (column, value) in [`columns`] order.
pub type Row = Vec<(String, Value)>;

struct RowBuilder(Row);

impl RowBuilder {
    fn insert(&mut self, k: String, v: Value) {
        self.0.push((k, v));
    }
}

/// One dataset row (docs/dataset.md).
pub fn row(
    info: &RunInfo,
    names: &[String],
    run_time_s: f64,
    period_index: usize,
    t_end_s: f64,
    period_s: f64,
    c: &PeriodCounts,
) -> Row {
    let mut m = RowBuilder(Vec::with_capacity(32));
    m.insert("backend".into(), "linux".into());
    m.insert("platform".into(), info.platform.clone().into());
    m.insert("platform_sha256".into(), info.platform_sha256.clone().into());
    m.insert("run_id".into(), info.run_id.into());
    m.insert(
        "config_id".into(),
        format!("{}-{}-{}-{}-{}", info.active, info.pattern, info.size_elements, info.big_khz, info.little_khz).into(),
    );
    m.insert("active_cluster".into(), info.active.clone().into());
    m.insert("idle_cluster".into(), info.idle.clone().into());
    m.insert("big_khz".into(), info.big_khz.into());
    m.insert("little_khz".into(), info.little_khz.into());
    m.insert("pattern".into(), info.pattern.clone().into());
    m.insert("size_elements".into(), info.size_elements.into());
    m.insert("iterations".into(), info.iterations.into());
    m.insert("rep".into(), info.rep.into());
    m.insert("seed".into(), info.seed.into());
    m.insert("run_time_s".into(), run_time_s.into());
    m.insert("period_index".into(), period_index.into());
    m.insert("t_end_s".into(), t_end_s.into());
    m.insert("period_s".into(), period_s.into());
    m.insert("cci_cycles".into(), c.cci_cycles.into());
    for (n, &(hs, stall)) in names.iter().zip(&c.ports) {
        m.insert(format!("si_rrq_hs_any_{n}"), hs.into());
        m.insert(format!("si_rrq_stall_tt_full_{n}"), stall.into());
        m.insert(format!("cci_congestion_{n}"), ratio(stall, hs).into());
    }
    m.insert("cpu_cycles".into(), c.cpu_cycles.into());
    m.insert("inst_retired".into(), c.inst_retired.into());
    m.insert("bus_access".into(), c.bus_access.into());
    m.insert("l2d_cache_refill".into(), c.l2d_cache_refill.into());
    m.insert("memory_access".into(), ratio(c.bus_access, c.cpu_cycles).into());
    m.0
}

/// A row as a JSON object (keys sorted: the column order is [`columns`]).
pub fn row_json(r: &Row) -> Value {
    Value::Object(r.iter().cloned().collect::<Map<String, Value>>())
}

/// CSV text of one row (values in [`columns`] order).
pub fn csv_line(m: &Row, cols: &[String]) -> String {
    cols.iter()
        .map(|k| match m.iter().find(|(c, _)| c == k).map(|(_, v)| v) {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn period_counts(b: &Backend, prev: &Snapshot, cur: &Snapshot, nclusters: usize, tid: u32) -> PeriodCounts {
    let mut c = PeriodCounts {
        cci_cycles: cur.cci_cycles.saturating_sub(prev.cci_cycles),
        ports: vec![(0, 0); nclusters],
        ..Default::default()
    };
    for (i, &(_, cluster)) in b.cci_ports().iter().enumerate() {
        if let (Some(a), Some(z)) = (prev.cci.get(i), cur.cci.get(i)) {
            c.ports[cluster] = (z.0.saturating_sub(a.0), z.1.saturating_sub(a.1));
        }
    }
    for e in cur.core.iter().filter(|e| e.unit == tid) {
        let base = prev.core.iter().find(|p| p.key == e.key).map(|p| p.pmu).unwrap_or_default();
        c.cpu_cycles += e.pmu.cpu_cycles.saturating_sub(base.cpu_cycles);
        c.inst_retired += e.pmu.inst_retired.saturating_sub(base.inst_retired);
        c.bus_access += e.pmu.bus_access.saturating_sub(base.bus_access);
        c.l2d_cache_refill += e.pmu.l2d_cache_refill.saturating_sub(base.l2d_cache_refill);
    }
    c
}

enum Job {
    Build(usize, Pattern, u64),
    Probe(f64),
    Run(u64),
}

enum Reply {
    Ready(u32),
    Built(usize),
    Probed(f64),
    Ran { seconds: f64 },
    Failed(String),
}

/// The chase thread, pinned to one CPU.
struct Worker {
    tx: Option<Sender<Job>>,
    rx: Receiver<Reply>,
    tid: u32,
    cancel: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    fn spawn(cpu: usize) -> Result<Worker, String> {
        let (tx, jobs) = mpsc::channel::<Job>();
        let (replies, rx) = mpsc::channel::<Reply>();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let handle = std::thread::Builder::new()
            .name(format!("hetlab-chase-cpu{cpu}"))
            .spawn(move || {
                if let Err(e) = pin_current_thread(cpu) {
                    let _ = replies.send(Reply::Failed(e));
                    return;
                }
                let _ = replies.send(Reply::Ready(gettid()));
                let mut arr: Option<(ChaseArray, Pattern)> = None;
                let mut idx = 0u32;
                for job in jobs {
                    let reply = match job {
                        Job::Build(n, p, seed) => match chase::build(n, p, seed) {
                            Ok(a) => {
                                let len = a.len();
                                idx = 0;
                                arr = Some((a, p));
                                Reply::Built(len)
                            }
                            Err(e) => Reply::Failed(e),
                        },
                        Job::Probe(min_time_s) => {
                            let (a, p) = arr.as_ref().expect("built");
                            let opts = ChaseOptions { min_time_s, iterations: 1 << 16, ..Default::default() };
                            Reply::Probed(chase::measure(a, *p, &opts).ns_per_access)
                        }
                        Job::Run(n) => {
                            let (a, _) = arr.as_ref().expect("built");
                            let t0 = std::time::Instant::now();
                            let mut left = n;
                            while left > 0 {
                                if flag.load(Ordering::Relaxed) {
                                    break;
                                }
                                let k = left.min(1 << 18);
                                idx = chase::walk(a.as_slice(), idx, k);
                                left -= k;
                            }
                            std::hint::black_box(idx);
                            Reply::Ran { seconds: t0.elapsed().as_secs_f64() }
                        }
                    };
                    if replies.send(reply).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot start the chase thread: {e}"))?;
        let tid = match rx.recv() {
            Ok(Reply::Ready(t)) => t,
            Ok(Reply::Failed(e)) => return Err(e),
            _ => return Err("the chase thread did not start".into()),
        };
        Ok(Worker { tx: Some(tx), rx, tid, cancel, handle: Some(handle) })
    }

    fn call(&self, job: Job) -> Result<Reply, String> {
        self.tx.as_ref().unwrap().send(job).map_err(|_| "the chase thread stopped".to_string())?;
        match self.rx.recv() {
            Ok(Reply::Failed(e)) => Err(e),
            Ok(r) => Ok(r),
            Err(_) => Err("the chase thread stopped".into()),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Restores the calling thread's affinity when dropped.
struct AffinityRestore(Vec<usize>);

impl Drop for AffinityRestore {
    fn drop(&mut self) {
        set_affinity(&self.0);
    }
}

fn set_affinity(cpus: &[usize]) {
    // SAFETY: a locally built cpu_set_t.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c, &mut set);
            }
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// What a sweep did.
#[derive(Debug, Clone, Default)]
pub struct SweepSummary {
    pub runs: u64,
    pub rows: u64,
    /// Set when a signal stopped the sweep early.
    pub stopped_by: Option<String>,
    pub restored: Vec<String>,
}

/// Runs the sweep. `on_rows` gets each run's rows as soon as the run ends; `log` the notes.
pub fn characterize(
    cfg: &SweepConfig,
    stop: &mut dyn Stop,
    on_rows: &mut dyn FnMut(&[Row]) -> Result<(), String>,
    log: &mut dyn std::io::Write,
) -> Result<SweepSummary, String> {
    let uid = euid();
    if uid != 0 {
        return Err(format!("characterize must run as root (effective uid {uid}): it sets every cluster's frequency through scaling_setspeed; run it with sudo"));
    }
    let platform = Platform::builtin(&cfg.platform)?;
    let text = BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == cfg.platform).map(|(_, t)| *t).unwrap_or("");
    let sha = sha256::hex(text.as_bytes());
    if cfg.reps < 2 {
        return Err(format!("--reps must be at least 2 (the t-test needs repetitions), got {}", cfg.reps));
    }
    if !(cfg.run_s.is_finite() && cfg.run_s > 0.0) {
        return Err(format!("--run-s must be a positive number of seconds, got {}", cfg.run_s));
    }
    let names: Vec<String> = platform.clusters.iter().map(|c| c.name.clone()).collect();
    if names.len() != 2 || platform.cluster_index("big").is_none() || platform.cluster_index("little").is_none() {
        return Err(format!(
            "the sweep needs a platform with clusters 'big' and 'little'; {} has {}",
            platform.name,
            names.join(", ")
        ));
    }
    let policies = crate::sysfs::discover(&cfg.roots)?;
    crate::daemon::check_policies(&policies)?;
    let _lock = claim_frequencies(&cfg.run_dir, &cfg.roots.procfs)?;

    let sizes = if cfg.sizes.is_empty() { default_sizes(&platform) } else { cfg.sizes.clone() };
    // One backend to find the policies; per active cluster another one counting the chase thread.
    let mut bcfg = BackendConfig::new(cfg.roots.clone(), platform.clone());
    bcfg.cluster_names = cfg.cluster_names.clone();
    bcfg.pmu = cfg.pmu;
    bcfg.all_or_nothing = false;
    let probe = Backend::new(&bcfg)?;
    let policy_of = |cluster: &str| probe.policies.iter().position(|p| p.cluster == cluster);
    let (Some(pb), Some(pl)) = (policy_of("big"), policy_of("little")) else {
        return Err(format!(
            "no cpufreq policy matches the big and LITTLE clusters of {} ({}); pass --cluster-names",
            platform.name,
            probe.policies.iter().map(|p| format!("{} = {}", p.sysfs.name, p.cluster)).collect::<Vec<_>>().join(", ")
        ));
    };
    let pick = |list: &Option<Vec<u32>>, p: usize| -> Result<Vec<u32>, String> {
        let opps = &probe.policies[p].sysfs.opps_khz;
        match list {
            None => Ok(opps.clone()),
            Some(l) => {
                for f in l {
                    if !opps.contains(f) {
                        return Err(format!(
                            "{f} kHz is not a frequency of {} ({})",
                            probe.policies[p].sysfs.name, probe.policies[p].cluster
                        ));
                    }
                }
                Ok(l.clone())
            }
        }
    };
    let bigs = pick(&cfg.big_khz, pb)?;
    let littles = pick(&cfg.little_khz, pl)?;
    let (top_big, top_little) = (*bigs.iter().max().unwrap(), *littles.iter().max().unwrap());
    // the (big, LITTLE) pairs a chunk sweeps while `active` runs the chase
    let pairs_for = |active: &str| -> Vec<(u32, u32)> {
        let b: Vec<u32> = if cfg.active_at_top && active == "big" { vec![top_big] } else { bigs.clone() };
        let l: Vec<u32> = if cfg.active_at_top && active == "little" { vec![top_little] } else { littles.clone() };
        b.iter().flat_map(|&b| l.iter().map(move |&l| (b, l))).collect()
    };
    let mut chunks: Vec<(String, Pattern, usize)> = Vec::new();
    for a in &names {
        for &p in &cfg.patterns {
            for &s in &sizes {
                chunks.push((a.clone(), p, s));
            }
        }
    }
    // run ids follow the full plan: chunk ci starts after the runs of chunks 0..ci
    let mut first_run = Vec::with_capacity(chunks.len());
    let mut planned: u64 = 0;
    for (a, _, _) in &chunks {
        first_run.push(planned);
        planned += pairs_for(a).len() as u64 * u64::from(cfg.reps);
    }

    let mut guard = Guard::new(Some(cfg.run_dir.join(STATE_FILE)));
    let result = (|| -> Result<SweepSummary, String> {
        for p in &probe.policies {
            guard.save(&p.sysfs)?;
        }
        for p in &probe.policies {
            p.sysfs.set_governor("userspace")?;
            p.sysfs.set_limits(p.sysfs.cpuinfo_min_khz, p.sysfs.cpuinfo_max_khz)?;
        }
        let mut summary = SweepSummary::default();
        let mut said_missing = false;
        let mut said_freq = false;
        let _affinity = AffinityRestore(allowed_cpus());
        for (ci, (active, pattern, size)) in chunks.iter().enumerate() {
            if let Some(only) = &cfg.only_chunks {
                if !only.iter().any(|(a, p, s)| a == active && *p == pattern.name() && s == size) {
                    continue;
                }
            }
            let ap = policy_of(active).unwrap();
            let idle = names.iter().find(|n| *n != active).unwrap().clone();
            let pol = &probe.policies[ap].sysfs;
            let chase_cpu = match cfg.chase_cpus.iter().find(|(c, _)| c == active) {
                Some(&(_, cpu)) => cpu,
                None => *pol.affected_cpus.first().ok_or_else(|| format!("{} has no online CPU", pol.name))?,
            };
            // the sampler runs on another CPU of the active cluster, keeping the idle one idle
            if let Some(&s) = pol.affected_cpus.iter().find(|&&c| c != chase_cpu && allowed_cpus().contains(&c)) {
                let _ = pin_current_thread(s);
            }
            let worker = Worker::spawn(chase_cpu)?;
            let mut wb = bcfg.clone();
            wb.counters = CounterMode::Tids(vec![worker.tid]);
            let mut backend = Backend::new(&wb)?;
            if !(backend.has_cci() && backend.has_core_counters()) {
                if !cfg.allow_missing_counters {
                    return Err(format!(
                        "counters missing: {}; the rows would hold zeros for them (pass --allow-missing-counters to sweep anyway, or --pmu software for stand-ins)",
                        backend.notes.join("; ")
                    ));
                }
                if !said_missing {
                    for n in &backend.notes {
                        let _ = writeln!(log, "hetlabd: note: {n}; its columns are written as 0");
                    }
                    said_missing = true;
                }
            }
            let chain_seed = cfg.seed + first_run[ci];
            let n = match worker.call(Job::Build(*size, *pattern, chain_seed))? {
                Reply::Built(n) => n,
                _ => unreachable!(),
            };
            // iterations: about run_s at both clusters' top OPPs
            set_pair(&probe, pb, pl, top_big, top_little)?;
            let ns = match worker.call(Job::Probe((cfg.run_s / 2.0).min(0.05)))? {
                Reply::Probed(ns) => ns,
                _ => unreachable!(),
            };
            let iterations = ((cfg.run_s * 1e9 / ns.max(1e-3)) as u64).max(1000);
            let period_us = cfg
                .period_us
                .unwrap_or_else(|| default_sampling_rate_us(platform.tick_us(), pol.transition_latency_ns));
            for (k, &(big_khz, little_khz)) in pairs_for(active).iter().enumerate() {
                for rep in 0..cfg.reps {
                    if let Some(sig) = stop.wait(Duration::ZERO) {
                        summary.stopped_by = Some(sig);
                        return Ok(summary);
                    }
                    let run_id = first_run[ci] + k as u64 * u64::from(cfg.reps) + u64::from(rep);
                    let info = RunInfo {
                        platform: platform.name.clone(),
                        platform_sha256: sha.clone(),
                        run_id,
                        active: active.clone(),
                        idle: idle.clone(),
                        big_khz,
                        little_khz,
                        pattern: pattern.name(),
                        size_elements: n,
                        iterations,
                        rep,
                        seed: chain_seed,
                    };
                    let off = set_pair(&probe, pb, pl, big_khz, little_khz)?;
                    if let (Some(msg), false) = (off, said_freq) {
                        let _ = writeln!(log, "hetlabd: note: {msg}");
                        said_freq = true;
                    }
                    let (rows, stopped) = one_run(&mut backend, &worker, &info, &names, period_us, stop)?;
                    summary.runs += 1;
                    summary.rows += rows.len() as u64;
                    on_rows(&rows)?;
                    if let Some(sig) = stopped {
                        summary.stopped_by = Some(sig);
                        return Ok(summary);
                    }
                }
            }
        }
        Ok(summary)
    })();
    guard.restore_after(result, |outcome, restored| outcome.restored = restored)
}

/// Sets both clusters; returns a note if a policy does not run at the requested frequency.
fn set_pair(b: &Backend, pb: usize, pl: usize, big_khz: u32, little_khz: u32) -> Result<Option<String>, String> {
    let mut note = None;
    let mut wait_ns = 0;
    for (p, f) in [(pb, big_khz), (pl, little_khz)] {
        let pol = &b.policies[p].sysfs;
        pol.set_speed(f)?;
        wait_ns = wait_ns.max(pol.transition_latency_ns);
    }
    std::thread::sleep(Duration::from_nanos(u64::from(wait_ns) * 2).max(Duration::from_millis(1)));
    for (p, f) in [(pb, big_khz), (pl, little_khz)] {
        let pol = &b.policies[p].sysfs;
        if let Ok(cur) = pol.cur_khz() {
            if cur != f {
                note = Some(format!(
                    "{} runs at {cur} kHz after {f} kHz was set (thermal capping?); rows record the requested frequency",
                    pol.name
                ));
            }
        }
    }
    Ok(note)
}

type RunRows = (Vec<Row>, Option<String>);

fn one_run(
    backend: &mut Backend,
    worker: &Worker,
    info: &RunInfo,
    names: &[String],
    period_us: u64,
    stop: &mut dyn Stop,
) -> Result<RunRows, String> {
    let mut s0 = Snapshot::default();
    backend.read_counters(&mut s0)?;
    let mut prev = s0.clone();
    let mut cur = Snapshot::default();
    worker.tx.as_ref().unwrap().send(Job::Run(info.iterations)).map_err(|_| "the chase thread stopped".to_string())?;
    let mut periods: Vec<(f64, f64, PeriodCounts)> = Vec::new();
    let mut stopped = None;
    let mut next = s0.t_us + period_us;
    let run_time_s = loop {
        let wait = Duration::from_micros(next.saturating_sub(crate::monotonic_us()));
        match worker.rx.recv_timeout(wait) {
            Ok(Reply::Ran { seconds }) => {
                backend.read_counters(&mut cur)?;
                periods.push((
                    (cur.t_us - s0.t_us) as f64 * 1e-6,
                    (cur.t_us - prev.t_us) as f64 * 1e-6,
                    period_counts(backend, &prev, &cur, names.len(), worker.tid),
                ));
                break seconds;
            }
            Ok(Reply::Failed(e)) => return Err(e),
            Ok(_) => return Err("unexpected reply from the chase thread".into()),
            Err(RecvTimeoutError::Disconnected) => return Err("the chase thread stopped".into()),
            Err(RecvTimeoutError::Timeout) => {
                backend.read_counters(&mut cur)?;
                periods.push((
                    (cur.t_us - s0.t_us) as f64 * 1e-6,
                    (cur.t_us - prev.t_us) as f64 * 1e-6,
                    period_counts(backend, &prev, &cur, names.len(), worker.tid),
                ));
                std::mem::swap(&mut prev, &mut cur);
                next += period_us;
                if stopped.is_none() {
                    if let Some(sig) = stop.wait(Duration::ZERO) {
                        stopped = Some(sig);
                        worker.cancel.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    };
    if stopped.is_some() {
        return Ok((Vec::new(), stopped)); // a cut run is not a measurement
    }
    let rows = periods.iter().enumerate().map(|(i, (t, p, c))| row(info, names, run_time_s, i, *t, *p, c)).collect();
    Ok((rows, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_exactly_the_dataset_columns_in_order() {
        let names = vec!["little".to_string(), "big".to_string()];
        let info = RunInfo {
            platform: "exynos5422".into(),
            platform_sha256: "ab".into(),
            run_id: 7,
            active: "little".into(),
            idle: "big".into(),
            big_khz: 200000,
            little_khz: 1400000,
            pattern: "random".into(),
            size_elements: 262144,
            iterations: 1000,
            rep: 1,
            seed: 3,
        };
        let c = PeriodCounts {
            cci_cycles: 9,
            ports: vec![(100, 5), (0, 0)],
            cpu_cycles: 1000,
            inst_retired: 10,
            bus_access: 50,
            l2d_cache_refill: 4,
        };
        let r = row(&info, &names, 0.5, 2, 0.03, 0.01, &c);
        let cols = columns(&names);
        assert_eq!(r.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(), cols);
        let j = row_json(&r);
        assert_eq!(j["config_id"], "little-random-262144-200000-1400000");
        assert_eq!(j["cci_congestion_little"], 0.05);
        assert_eq!(j["cci_congestion_big"], 0.0, "no reads: 0, as in the simulated sweep");
        assert_eq!(j["memory_access"], 0.05);
        assert_eq!(j["backend"], "linux");
        let line = csv_line(&r, &cols);
        assert!(line.starts_with("linux,exynos5422,ab,7,little-random-262144-200000-1400000,little,big,200000,1400000,random,262144,1000,1,3,0.5,2,0.03,0.01,9,100,5,0.05,0,0,0.0,1000,10,50,4,0.05"), "{line}");
    }

    #[test]
    fn default_sizes_straddle_every_cache() {
        let p = Platform::builtin("exynos5422").unwrap();
        // L1D 32 KB both core types; L2 512 KB (A7) and 2 MB (A15): half and twice each
        assert_eq!(default_sizes(&p), vec![4096, 16384, 65536, 262144, 1048576]);
    }

    #[test]
    fn the_sweep_refuses_without_root_or_with_one_rep() {
        let mut c = SweepConfig::new(Roots::default());
        c.reps = 1;
        let mut never = crate::stop::PollStop { f: || None };
        let e = characterize(&c, &mut never, &mut |_| Ok(()), &mut Vec::new()).unwrap_err();
        if euid() == 0 {
            assert!(e.contains("--reps"), "{e}");
        } else {
            assert!(e.contains("root"), "{e}");
        }
    }
}
