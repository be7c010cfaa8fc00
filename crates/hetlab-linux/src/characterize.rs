//! The characterization sweep on a real board (`--backend linux`): the plan and the rows of the
//! simulated sweep ([`hetlab_core::sweep`], docs/dataset.md), measured.
//!
//! For each chunk (active cluster, pattern, size) a worker thread pinned to a CPU of the active
//! cluster holds the chase array; for every run of the plan it builds the run's own random chain
//! (seed `seed + run_id`), both policies are set with `scaling_setspeed` (userspace governor,
//! limits opened to the cpuinfo range), the chase runs `iterations` dependent loads, and every
//! sampling period the sampling thread — pinned to another CPU of the *active* cluster so the
//! idle cluster stays idle — reads the CCI ports and the chase thread's core counters and emits
//! one row. The iteration count is chosen per chunk so a run lasts about `run_s` at both
//! clusters' top OPPs (slower configurations run longer and get more periods), as in the
//! simulated sweep.
//!
//! Governor, min and max of every policy are saved first and restored at the end, on a signal
//! and on any error (the daemon's [`Guard`]). Missing counters (no CCI PMU, no core PMU) refuse
//! the sweep unless `allow_missing_counters`, which writes zeros for them and says so once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use hetlab_core::counters::ClusterCounters;
use hetlab_core::governor::dbs::default_sampling_rate_us;
use hetlab_core::platform::{Platform, BUILTIN_PLATFORMS};
use hetlab_core::sweep::dataset::{Dataset, Period, RunRecord};
use hetlab_core::sweep::{self, Plan, SweepOptions};

use crate::backend::{Backend, BackendConfig, CounterMode, PmuSource, Snapshot};
use crate::chase::{self, ChaseArray, ChaseOptions, Pattern};
use crate::cpus::{allowed_cpus, gettid, pin_current_thread};
use crate::daemon::claim_frequencies;
use crate::restore::Guard;
use crate::stop::Stop;
use crate::{euid, sha256, Roots};

#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// The platform naming the clusters (its description's SHA-256 goes into every row).
    pub platform: Platform,
    pub platform_sha256: String,
    /// Patterns, sizes, repetitions, run length, seed and active OPPs: the plan's options.
    pub sweep: SweepOptions,
    pub roots: Roots,
    pub pmu: PmuSource,
    /// Sampling period, µs (default: ondemand's default for the policy's transition latency).
    pub period_us: Option<u64>,
    /// CPU to run the chase on, per cluster name (default: the cluster's first online CPU).
    pub chase_cpus: Vec<(String, usize)>,
    /// Frequencies to sweep per cluster name, kHz (default: every frequency of its policy).
    pub only_khz: Vec<(String, Vec<u32>)>,
    pub allow_missing_counters: bool,
    /// Name the policies after these platform clusters (see [`BackendConfig::cluster_names`]).
    pub cluster_names: Option<Vec<String>>,
}

impl SweepConfig {
    /// The defaults, on `platform` whose description hashes to `platform_sha256`.
    pub fn new(platform: Platform, platform_sha256: String) -> SweepConfig {
        SweepConfig {
            platform,
            platform_sha256,
            sweep: SweepOptions::default(),
            roots: Roots::default(),
            pmu: PmuSource::Hardware,
            period_us: None,
            chase_cpus: Vec::new(),
            only_khz: Vec::new(),
            allow_missing_counters: false,
            cluster_names: None,
        }
    }

    /// The defaults on a built-in platform.
    pub fn builtin(name: &str) -> Result<SweepConfig, String> {
        let platform = Platform::builtin(name)?;
        let text = BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == name).map_or("", |(_, t)| *t);
        Ok(SweepConfig::new(platform, sha256::hex(text.as_bytes())))
    }
}

/// What a run's sampling needs to know about the clusters.
struct Sampling<'a> {
    period_us: u64,
    /// Cluster index (platform order) of the active cluster.
    active: usize,
    nclusters: usize,
    /// The platform cluster of each policy (the backend numbers CCI ports by policy).
    cluster_of_policy: &'a [Option<usize>],
}

/// Counter deltas from `prev` to `cur`: CCI ports per cluster, the chase thread's core counters
/// on the active cluster. `t_end_s` is left to the caller.
fn period_counts(b: &Backend, prev: &Snapshot, cur: &Snapshot, s: &Sampling, tid: u32) -> Period {
    let mut clusters = vec![ClusterCounters::default(); s.nclusters];
    for (i, &(_, policy)) in b.cci_ports().iter().enumerate() {
        let cluster = s.cluster_of_policy.get(policy).copied().flatten();
        if let (Some(a), Some(z), Some(k)) = (prev.cci.get(i), cur.cci.get(i), cluster.map(|c| &mut clusters[c])) {
            k.si_rrq_hs_any = z.0.saturating_sub(a.0);
            k.si_rrq_stall_tt_full = z.1.saturating_sub(a.1);
        }
    }
    let k = &mut clusters[s.active];
    for e in cur.core.iter().filter(|e| e.unit == tid) {
        let base = prev.core.iter().find(|p| p.key == e.key).map(|p| p.pmu).unwrap_or_default();
        k.cpu_cycles += e.pmu.cpu_cycles.saturating_sub(base.cpu_cycles);
        k.inst_retired += e.pmu.inst_retired.saturating_sub(base.inst_retired);
        k.bus_access += e.pmu.bus_access.saturating_sub(base.bus_access);
        k.l2d_cache_refill += e.pmu.l2d_cache_refill.saturating_sub(base.l2d_cache_refill);
    }
    Period {
        t_end_s: 0.0,
        period_s: (cur.t_us - prev.t_us) as f64 * 1e-6,
        cci_cycles: cur.cci_cycles.saturating_sub(prev.cci_cycles),
        clusters,
    }
}

enum Job {
    Build(usize, Pattern, u64),
    Probe(f64),
    Run(u64),
}

enum Reply {
    Ready(u32),
    Built,
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
                let mut built = None; // (n, pattern, seed) of `arr`
                let mut idx = 0u32;
                for job in jobs {
                    let reply = match job {
                        Job::Build(n, p, seed) if built == Some((n, p, seed)) => {
                            idx = 0;
                            Reply::Built
                        }
                        Job::Build(n, p, seed) => match chase::build(n, p, seed) {
                            Ok(a) => {
                                idx = 0;
                                arr = Some((a, p));
                                built = Some((n, p, seed));
                                Reply::Built
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
                                idx = chase::walk(a, idx, k);
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
    on_rows: &mut dyn FnMut(&Dataset) -> Result<(), String>,
    log: &mut dyn std::io::Write,
) -> Result<SweepSummary, String> {
    check_config(cfg)?;
    let platform = &cfg.platform;
    let policies = crate::sysfs::discover(&cfg.roots)?;
    crate::daemon::check_policies(&policies)?;
    let claim = claim_frequencies(&cfg.roots, &policies)?;

    // One backend to find the policies; per active cluster another one counting the chase thread.
    let mut bcfg = BackendConfig::new(cfg.roots.clone(), platform.clone());
    bcfg.cluster_names = cfg.cluster_names.clone();
    bcfg.pmu = cfg.pmu;
    bcfg.all_or_nothing = false;
    let probe = Backend::new(&bcfg)?;
    let policy_of = policy_of_clusters(platform, &probe)?;
    let freqs_khz = swept_frequencies(cfg, &probe, &policy_of)?;
    let plan = Plan::new(platform, &cfg.platform_sha256, cfg.sweep.clone(), freqs_khz)?;
    // the platform cluster each policy counts for (CCI ports are numbered by policy)
    let cluster_of_policy: Vec<Option<usize>> =
        probe.policies.iter().map(|p| plan.clusters.iter().position(|c| *c == p.cluster)).collect();
    let sweep = Sweep { cfg, bcfg, probe, policy_of, cluster_of_policy, plan };

    let mut guard = Guard::new(Some(claim.state_file.clone()));
    let result = (|| -> Result<SweepSummary, String> {
        for p in &sweep.probe.policies {
            guard.save(&p.sysfs)?;
        }
        for p in &sweep.probe.policies {
            p.sysfs.set_governor("userspace")?;
            p.sysfs.set_limits(p.sysfs.cpuinfo_min_khz, p.sysfs.cpuinfo_max_khz)?;
        }
        let mut summary = SweepSummary::default();
        let mut said = Said::default();
        let _affinity = AffinityRestore(allowed_cpus());
        for ci in 0..sweep.plan.chunks.len() {
            if let Some(sig) = sweep.chunk(ci, stop, on_rows, log, &mut said, &mut summary)? {
                summary.stopped_by = Some(sig);
                return Ok(summary);
            }
        }
        Ok(summary)
    })();
    guard.restore_after(result, |outcome, restored| outcome.restored = restored)
}

/// The checks before the board is touched: root, the plan's options, and (for the library's
/// callers, the Python binding) the checks hetlabd's flags make.
fn check_config(cfg: &SweepConfig) -> Result<(), String> {
    let uid = euid();
    if uid != 0 {
        return Err(format!("characterize must run as root (effective uid {uid}): it sets every cluster's frequency through scaling_setspeed; run it with sudo"));
    }
    cfg.sweep.validate()?;
    let platform = &cfg.platform;
    if cfg.sweep.seed > crate::flags::MAX_SWEEP_SEED {
        return Err(format!("--seed must be at most {} (run i uses seed + i)", crate::flags::MAX_SWEEP_SEED));
    }
    if cfg.period_us == Some(0) {
        return Err("--period-us must be at least 1 µs".into());
    }
    for (i, (name, _)) in cfg.chase_cpus.iter().enumerate() {
        if !platform.clusters.iter().any(|c| c.name == *name) {
            let names: Vec<&str> = platform.clusters.iter().map(|c| c.name.as_str()).collect();
            return Err(format!(
                "--chase-cpu names cluster '{name}', which {} does not have; its clusters are {}",
                platform.name,
                names.join(", ")
            ));
        }
        if cfg.chase_cpus[..i].iter().any(|(n, _)| n == name) {
            return Err(format!("--chase-cpu names cluster {name} twice; give one CPU per cluster"));
        }
    }
    Ok(())
}

/// The policy of each platform cluster, by the probe's names.
fn policy_of_clusters(platform: &Platform, probe: &Backend) -> Result<Vec<usize>, String> {
    let mut policy_of = Vec::new();
    for c in &platform.clusters {
        let Some(p) = probe.policies.iter().position(|p| p.cluster == c.name) else {
            return Err(format!(
                "no cpufreq policy matches cluster {} of {} ({}); pass --cluster-names",
                c.name,
                platform.name,
                probe
                    .policies
                    .iter()
                    .map(|p| format!("{} = {}", p.sysfs.name, p.cluster))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        policy_of.push(p);
    }
    Ok(policy_of)
}

/// Per platform cluster, the frequencies to sweep, kHz: every one of its policy's, or those
/// `--only-khz` gives (each one of the policy's).
fn swept_frequencies(cfg: &SweepConfig, probe: &Backend, policy_of: &[usize]) -> Result<Vec<Vec<u32>>, String> {
    let mut freqs_khz = Vec::new();
    for (c, &p) in cfg.platform.clusters.iter().zip(policy_of) {
        let opps = &probe.policies[p].sysfs.opps_khz;
        let freqs = match cfg.only_khz.iter().find(|(name, _)| *name == c.name) {
            None => opps.clone(),
            Some((_, only)) => {
                if let Some(f) = only.iter().find(|f| !opps.contains(f)) {
                    return Err(format!("{f} kHz is not a frequency of {} ({})", probe.policies[p].sysfs.name, c.name));
                }
                only.clone()
            }
        };
        freqs_khz.push(freqs);
    }
    Ok(freqs_khz)
}

/// A sweep about to run: its plan and how the platform's clusters map to the board's policies.
struct Sweep<'a> {
    cfg: &'a SweepConfig,
    /// The backend configuration each chunk's counting backend starts from.
    bcfg: BackendConfig,
    /// The backend that found the policies.
    probe: Backend,
    /// The policy of each platform cluster.
    policy_of: Vec<usize>,
    /// The platform cluster each policy counts for.
    cluster_of_policy: Vec<Option<usize>>,
    plan: Plan,
}

/// Notes said once per sweep.
#[derive(Default)]
struct Said {
    missing_counters: bool,
    frequency: bool,
}

/// One chunk's chase thread, its counting backend, and how long each of its runs chases.
struct ChunkSetup {
    // fields drop in order: the backend stops counting before the chase thread ends
    backend: Backend,
    worker: Worker,
    pattern: Pattern,
    iterations: u64,
    period_us: u64,
}

impl Sweep<'_> {
    /// Runs chunk `ci`, each run's rows to `on_rows`; the signal that stopped it, if one did.
    fn chunk(
        &self,
        ci: usize,
        stop: &mut dyn Stop,
        on_rows: &mut dyn FnMut(&Dataset) -> Result<(), String>,
        log: &mut dyn std::io::Write,
        said: &mut Said,
        summary: &mut SweepSummary,
    ) -> Result<Option<String>, String> {
        let chunk = &self.plan.chunks[ci];
        let plan = &self.plan;
        let mut setup = self.set_up_chunk(ci, log, said)?;
        for run in plan.runs(ci) {
            if let Some(sig) = stop.wait(Duration::ZERO) {
                return Ok(Some(sig));
            }
            setup.worker.call(Job::Build(chunk.size_elements, setup.pattern, run.seed))?; // the run's own chain
            let off = set_freqs(&self.probe, &self.policy_of, plan.fixed_khz(&run))?;
            if let (Some(msg), false) = (off, said.frequency) {
                let _ = writeln!(log, "hetlabd: note: {msg}");
                said.frequency = true;
            }
            let sampling = Sampling {
                period_us: setup.period_us,
                active: chunk.active,
                nclusters: plan.clusters.len(),
                cluster_of_policy: &self.cluster_of_policy,
            };
            let iterations = setup.iterations;
            let measured = one_run(&mut setup.backend, &setup.worker, iterations, &sampling, stop)?;
            let (run_time_s, periods) = match measured {
                Measured::Done { run_time_s, periods } => (run_time_s, periods),
                Measured::Stopped(sig) => return Ok(Some(sig)), // a cut run is not a measurement
            };
            let mut rows = Dataset::new(&plan.clusters, "linux");
            rows.push_run(plan, &RunRecord { chunk, run: &run, iterations, run_time_s, periods: &periods });
            summary.runs += 1;
            summary.rows += rows.len() as u64;
            on_rows(&rows)?;
        }
        Ok(None)
    }

    /// Chunk `ci`'s chase thread on its CPU of the active cluster (the sampler on another),
    /// its counting backend, and the iterations of a run: about `run_s` at both clusters' top
    /// OPPs, on the chain of the chunk's first run.
    fn set_up_chunk(&self, ci: usize, log: &mut dyn std::io::Write, said: &mut Said) -> Result<ChunkSetup, String> {
        let (cfg, plan) = (self.cfg, &self.plan);
        let chunk = &plan.chunks[ci];
        let active = &plan.clusters[chunk.active];
        let pattern = Pattern::parse(&chunk.pattern)?;
        let pol = &self.probe.policies[self.policy_of[chunk.active]].sysfs;
        let chase_cpu = match cfg.chase_cpus.iter().find(|(c, _)| c == active) {
            Some(&(_, cpu)) => cpu,
            None => *pol.affected_cpus.first().ok_or_else(|| format!("{} has no online CPU", pol.name))?,
        };
        // the sampler runs on another CPU of the active cluster, keeping the idle one idle
        if let Some(&s) = pol.affected_cpus.iter().find(|&&c| c != chase_cpu && allowed_cpus().contains(&c)) {
            let _ = pin_current_thread(s);
        }
        let worker = Worker::spawn(chase_cpu)?;
        let mut wb = self.bcfg.clone();
        wb.counters = CounterMode::Tids(vec![worker.tid]);
        let backend = Backend::new(&wb)?;
        if !(backend.has_cci() && backend.has_core_counters()) {
            if !cfg.allow_missing_counters {
                return Err(format!(
                    "counters missing: {}; the rows would hold zeros for them (pass --allow-missing-counters to sweep anyway, or --pmu software for stand-ins)",
                    backend.notes.join("; ")
                ));
            }
            if !said.missing_counters {
                for n in &backend.notes {
                    let _ = writeln!(log, "hetlabd: note: {n}; its columns are written as 0");
                }
                said.missing_counters = true;
            }
        }
        let first_seed = plan.runs(ci).next().map_or(plan.options.seed, |r| r.seed);
        worker.call(Job::Build(chunk.size_elements, pattern, first_seed))?;
        set_freqs(&self.probe, &self.policy_of, plan.top_khz())?;
        let ns = match worker.call(Job::Probe((plan.options.run_s / 2.0).min(0.05)))? {
            Reply::Probed(ns) => ns,
            _ => unreachable!(),
        };
        let iterations = sweep::iterations(plan.options.run_s, ns * 1e-9);
        let period_us = cfg
            .period_us
            .unwrap_or_else(|| default_sampling_rate_us(cfg.platform.tick_us(), pol.transition_latency_ns));
        Ok(ChunkSetup { backend, worker, pattern, iterations, period_us })
    }
}

/// Sets every cluster's frequency; returns a note if a policy does not run at the requested one.
fn set_freqs(b: &Backend, policy_of: &[usize], fixed: [(usize, u32); 2]) -> Result<Option<String>, String> {
    let mut note = None;
    let mut wait_ns = 0;
    for (c, f) in fixed {
        let pol = &b.policies[policy_of[c]].sysfs;
        pol.set_speed(f)?;
        wait_ns = wait_ns.max(pol.transition_latency_ns);
    }
    std::thread::sleep(Duration::from_nanos(u64::from(wait_ns) * 2).max(Duration::from_millis(1)));
    for (c, f) in fixed {
        let pol = &b.policies[policy_of[c]].sysfs;
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

enum Measured {
    Done { run_time_s: f64, periods: Vec<Period> },
    Stopped(String),
}

/// One run of the chase, sampled every `period_us`.
fn one_run(
    backend: &mut Backend,
    worker: &Worker,
    iterations: u64,
    sampling: &Sampling,
    stop: &mut dyn Stop,
) -> Result<Measured, String> {
    let period_us = sampling.period_us;
    let mut s0 = Snapshot::default();
    backend.read_counters(&mut s0)?;
    let mut prev = s0.clone();
    let mut cur = Snapshot::default();
    worker.tx.as_ref().unwrap().send(Job::Run(iterations)).map_err(|_| "the chase thread stopped".to_string())?;
    let mut periods: Vec<Period> = Vec::new();
    let mut stopped = None;
    let mut next = s0.t_us + period_us;
    let mut sample = |backend: &mut Backend, prev: &Snapshot, cur: &mut Snapshot| -> Result<(), String> {
        backend.read_counters(cur)?;
        let mut p = period_counts(backend, prev, cur, sampling, worker.tid);
        p.t_end_s = (cur.t_us - s0.t_us) as f64 * 1e-6;
        periods.push(p);
        Ok(())
    };
    let run_time_s = loop {
        let wait = Duration::from_micros(next.saturating_sub(crate::monotonic_us()));
        match worker.rx.recv_timeout(wait) {
            Ok(Reply::Ran { seconds }) => {
                sample(backend, &prev, &mut cur)?;
                break seconds;
            }
            Ok(Reply::Failed(e)) => return Err(e),
            Ok(_) => return Err("unexpected reply from the chase thread".into()),
            Err(RecvTimeoutError::Disconnected) => return Err("the chase thread stopped".into()),
            Err(RecvTimeoutError::Timeout) => {
                sample(backend, &prev, &mut cur)?;
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
    Ok(match stopped {
        Some(sig) => Measured::Stopped(sig),
        None => Measured::Done { run_time_s, periods },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_refuses_without_root_or_with_one_rep() {
        let mut c = SweepConfig::builtin("exynos5422").unwrap();
        c.sweep.reps = 1;
        let mut never = crate::stop::PollStop { f: || None };
        let e = characterize(&c, &mut never, &mut |_| Ok(()), &mut Vec::new()).unwrap_err();
        if euid() == 0 {
            assert!(e.contains("--reps"), "{e}");
        } else {
            assert!(e.contains("root"), "{e}");
        }
    }

    #[test]
    fn a_chase_cpu_for_an_unknown_cluster_or_a_wrapping_seed_is_refused() {
        if euid() != 0 {
            return;
        }
        let mut never = crate::stop::PollStop { f: || None };
        let mut c = SweepConfig::builtin("exynos5422").unwrap();
        c.chase_cpus = vec![("middle".into(), 0)];
        let e = characterize(&c, &mut never, &mut |_| Ok(()), &mut Vec::new()).unwrap_err();
        assert!(e.contains("'middle'") && e.contains("little, big"), "{e}");
        c.chase_cpus = vec![("big".into(), 4), ("big".into(), 5)];
        let e = characterize(&c, &mut never, &mut |_| Ok(()), &mut Vec::new()).unwrap_err();
        assert!(e.contains("twice"), "{e}");
        c.chase_cpus.clear();
        c.sweep.seed = u64::MAX - 3;
        let e = characterize(&c, &mut never, &mut |_| Ok(()), &mut Vec::new()).unwrap_err();
        assert!(e.contains("--seed must be at most"), "{e}");
    }

    #[test]
    fn rows_record_the_platforms_sha256() {
        let c = SweepConfig::builtin("exynos5422").unwrap();
        let text = BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5422").unwrap().1;
        assert_eq!(c.platform_sha256, sha256::hex(text.as_bytes()));
        assert!(SweepConfig::builtin("nosuch").is_err());
    }
}
