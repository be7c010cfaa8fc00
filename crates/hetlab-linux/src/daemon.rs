//! The governor daemon: every sampling period, per policy, build the [`PolicyView`] from the
//! backend, ask the governor (the very code the simulator runs) and write `scaling_setspeed`.
//!
//! Refusals, before anything is changed (each a one-line error naming the fix):
//! * not root (writes to cpufreq sysfs need it; `--dry-run` does not);
//! * no cpufreq policies; a policy without the `userspace` governor;
//! * another daemon already managing frequencies: a hetlabd holding `<run>/hetlabd.lock` (the
//!   run directory of the sysfs root, [`crate::Roots::run_dir`]); a running process whose name
//!   (`<procfs>/<pid>/comm`) is one of [`CONFLICTING_DAEMONS`]; a `<run>/hetlabd.saved` left by
//!   a hetlabd that died without restoring; or a hetlabd that reached the same policies by
//!   another path (a bind mount), holding the policy directories' locks ([`PolicyLocks`]).
//!
//! Then each policy's governor/min/max are saved ([`crate::restore`]), the policies switched
//! to `userspace`, and the loop runs until a signal, `--duration` or an error; the settings are
//! restored in every case. Only frequencies of the policy's list are written, and only when the
//! target changes. `--dry-run` switches nothing and writes nothing: it prints each decision and
//! feeds the decided frequency back as the current one, as if it had been applied.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use hetlab_core::governor::freq_table::{resolve, Relation};
use hetlab_core::governor::{registry, Decision, Governor, GovernorContext, PolicyView};
use hetlab_core::tree::AntiSnoopModel;

use crate::backend::{Backend, BackendConfig, Snapshot};
use crate::restore::{Guard, PolicyLocks, RunLock, STATE_FILE};
use crate::stop::Stop;
use crate::{display, euid, monotonic_us, sysfs};

/// Process names (as in /proc/<pid>/comm, at most 15 characters) of daemons that set CPU
/// frequencies or governors themselves (ecosystem.md §5).
pub const CONFLICTING_DAEMONS: &[&str] =
    &["auto-cpufreq", "power-profiles-", "tuned", "thermald", "cpufreqd", "cpufreq-set", "cpupower-gui"];

#[derive(Debug, Clone)]
pub struct GovernConfig {
    pub governor: String,
    /// (sysfs tunable name, value), applied over the defaults.
    pub tunables: Vec<(String, f64)>,
    /// anti-snoop's trees (default: the paper's Figure 4).
    pub model: Option<AntiSnoopModel>,
    pub dry_run: bool,
    /// `backend.counters` is used when set here; `None` counts per CPU for governors that read
    /// PMCs ([`Governor::reads_pmcs`], anti-snoop) and reads no counters for the others.
    pub counters: Option<crate::backend::CounterMode>,
    pub backend: BackendConfig,
    /// Stop after this long (a normal exit), µs.
    pub duration_us: Option<u64>,
    /// Print one line per sample (always on in dry-run).
    pub log_samples: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// "SIGTERM", "SIGINT", "duration", ...
    pub stop_reason: String,
    pub samples: u64,
    pub writes: u64,
    /// Saved settings written back, one per policy (empty in dry-run).
    pub restored: Vec<String>,
}

struct PolicyState {
    gov: Box<dyn Governor>,
    baseline: Snapshot,
    view: PolicyView,
    due_us: u64,
    cur_khz: u32,
    written: Option<u32>,
}

/// Checks the refusals that need no counters: cpufreq present and offering userspace.
pub fn check_policies(policies: &[sysfs::Policy]) -> Result<(), String> {
    for p in policies {
        if !p.has_governor("userspace") {
            return Err(format!(
                "{} (cpus {}) offers no userspace governor (scaling_available_governors: {}); build the kernel with CONFIG_CPU_FREQ_GOV_USERSPACE=y or run `modprobe cpufreq_userspace`",
                p.name,
                crate::cpus::format_cpu_list(&p.related_cpus),
                if p.available_governors.is_empty() { "none".to_string() } else { p.available_governors.join(" ") }
            ));
        }
    }
    Ok(())
}

/// Running processes that manage CPU frequencies themselves: (pid, name).
pub fn conflicting_daemons(procfs: &std::path::Path) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let me = std::process::id();
    let Ok(rd) = fs::read_dir(procfs) else { return out };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        // comm is at most 16 bytes; bounded and non-blocking all the same (a fake procfs tree)
        let Ok(comm) = crate::infile::read_bounded(&e.path().join("comm"), 64, true) else { continue };
        let comm = comm.trim();
        if CONFLICTING_DAEMONS.contains(&comm) {
            let name = if comm == "power-profiles-" { "power-profiles-daemon" } else { comm };
            out.push((pid, name.to_string()));
        }
    }
    out.sort();
    out
}

fn not_root_error(uid: u32) -> String {
    format!("govern must run as root (effective uid {uid}): it writes scaling_governor and scaling_setspeed under /sys/devices/system/cpu/cpufreq; run it with sudo, or add --dry-run to only print decisions")
}

/// The locks held while hetlabd owns the frequencies, and where it saves the settings.
pub struct Claim {
    _run_dir: RunLock,
    _policies: PolicyLocks,
    /// `<run>/hetlabd.saved`: the [`Guard`]'s state file.
    pub state_file: PathBuf,
}

/// Refusals about other daemons; returns the locks to hold while governing `policies` (found
/// under `roots.sysfs`).
pub fn claim_frequencies(roots: &crate::Roots, policies: &[sysfs::Policy]) -> Result<Claim, String> {
    if let Some((pid, name)) = conflicting_daemons(&roots.procfs).into_iter().next() {
        return Err(format!(
            "{name} (pid {pid}) is running and manages CPU frequencies itself; stop it first (e.g. `systemctl stop {name}`)"
        ));
    }
    let run_dir = roots.run_dir()?;
    let lock = RunLock::acquire(&run_dir)?;
    let state = run_dir.join(STATE_FILE);
    if fs::symlink_metadata(&state).is_ok() {
        // The killed daemon's settings are the originals: saving the policies now would record
        // its `userspace` instead, so nothing starts until they are written back.
        let who = crate::restore::saved_by(&state).map_or(String::new(), |pid| format!(" (pid {pid})"));
        return Err(format!(
            "{} exists: a previous hetlabd{who} exited without restoring the policy settings it saved there; run \
             `hetlabd restore{}` first",
            display(&state),
            restore_args(roots)
        ));
    }
    // the same policies reached by another path (a bind mount of sysfs): the run directory
    // differs, the lock on the policy directories is the same (see PolicyLocks)
    let policies = PolicyLocks::acquire(policies)?;
    Ok(Claim { _run_dir: lock, _policies: policies, state_file: state })
}

/// ` --sysfs-root DIR` when the root is not the default: what `hetlabd restore` needs to be told.
pub fn restore_args(roots: &crate::Roots) -> String {
    if roots.sysfs == crate::Roots::default().sysfs {
        String::new()
    } else {
        format!(" --sysfs-root {}", display(&roots.sysfs))
    }
}

fn build_governor(cfg: &GovernConfig, cluster: &str) -> Result<Box<dyn Governor>, String> {
    policy_governor(&cfg.governor, &cfg.tunables, cfg.model.as_ref(), cfg.backend.platform.tick_us(), cluster)
}

/// The governor hetlabd runs on the policy of `cluster` (also the kernel module's conformance
/// test's "hetlabd" side): `governor` with `tunables` over its defaults, on a platform whose
/// tick is `tick_us`.
pub fn policy_governor(
    governor: &str,
    tunables: &[(String, f64)],
    model: Option<&AntiSnoopModel>,
    tick_us: u64,
    cluster: &str,
) -> Result<Box<dyn Governor>, String> {
    let ctx = GovernorContext { cluster_name: cluster, tick_us, model };
    registry::build(governor, tunables, &ctx)
}

/// The frequency hetlabd writes for a governor's `target_khz`: the target when it is an OPP of
/// `opps_khz`, else the closest OPP within [`min_khz`, `max_khz`].
pub fn frequency_to_write(opps_khz: &[u32], target_khz: u32, min_khz: u32, max_khz: u32) -> u32 {
    if opps_khz.contains(&target_khz) {
        target_khz
    } else {
        resolve(opps_khz, target_khz, Relation::C, min_khz, max_khz)
    }
}

/// Runs the daemon until `stop` says so, `duration_us` passes, or an error. `out` gets the
/// per-sample lines, `log` the start-up notes (each said once).
pub fn govern(
    cfg: &GovernConfig,
    stop: &mut dyn Stop,
    out: &mut dyn Write,
    log: &mut dyn Write,
) -> Result<Outcome, String> {
    let uid = euid();
    if !cfg.dry_run && uid != 0 {
        return Err(not_root_error(uid));
    }
    let policies = sysfs::discover(&cfg.backend.roots)?;
    check_policies(&policies)?;
    let claim = if cfg.dry_run { None } else { Some(claim_frequencies(&cfg.backend.roots, &policies)?) };

    let mut bcfg = cfg.backend.clone();
    bcfg.counters = match &cfg.counters {
        Some(m) => m.clone(),
        None => {
            // Counters are opened with the backend, before the policies are known: ask the governor
            // built for any cluster of the platform (if none builds, the policies' builds below
            // fail and say why).
            let reads = bcfg.platform.clusters.iter().find_map(|c| build_governor(cfg, &c.name).ok());
            if reads.is_some_and(|g| g.reads_pmcs()) {
                crate::backend::CounterMode::PerCpu
            } else {
                crate::backend::CounterMode::Off
            }
        }
    };
    let mut backend = Backend::new(&bcfg)?;
    let mut govs = Vec::new();
    for p in &backend.policies {
        govs.push(build_governor(cfg, &p.cluster)?);
    }
    for line in backend.describe() {
        let _ = writeln!(log, "hetlabd: {line}");
    }
    for n in &backend.notes {
        let _ = writeln!(log, "hetlabd: note: {n}");
    }
    if let Some(cpu) = backend.cci_cpu() {
        // The CCI PMU counts on one CPU; reading it from elsewhere costs an IPI every sample.
        if crate::cpus::allowed_cpus().contains(&cpu) && crate::cpus::pin_current_thread(cpu).is_ok() {
            let _ = writeln!(
                log,
                "hetlabd: sampling on CPU {cpu}, where the CCI PMU counts (its counters are read without an IPI)"
            );
        }
    }
    if cfg.governor == "anti-snoop" && !(backend.has_cci() && backend.has_core_counters()) {
        let _ = writeln!(
            log,
            "hetlabd: note: anti-snoop runs load-only (as ondemand): it needs both the CCI and the core counters"
        );
    }

    let mut guard = Guard::new(claim.as_ref().map(|c| c.state_file.clone()));
    let result = run(cfg, &mut backend, govs, &mut guard, stop, out, log);
    guard.restore_after(result, |outcome, restored| outcome.restored = restored)
}

fn run(
    cfg: &GovernConfig,
    backend: &mut Backend,
    govs: Vec<Box<dyn Governor>>,
    guard: &mut Guard,
    stop: &mut dyn Stop,
    out: &mut dyn Write,
    log: &mut dyn Write,
) -> Result<Outcome, String> {
    let mut outcome = Outcome { stop_reason: String::new(), samples: 0, writes: 0, restored: Vec::new() };
    // Save everything first, then switch: a failure half-way still restores what was saved.
    if !cfg.dry_run {
        for p in &backend.policies {
            let s = guard.save(&p.sysfs)?;
            let _ = writeln!(log, "hetlabd: saved {}", s.describe());
        }
        for p in &backend.policies {
            p.sysfs.set_governor("userspace")?;
        }
    }
    let mut cur = Snapshot::default();
    backend.snapshot(&mut cur)?;
    let start_us = cur.t_us;
    let mut states = Vec::new();
    for (i, gov) in govs.into_iter().enumerate() {
        let pol = &backend.policies[i].sysfs;
        let (min, max) = (pol.min_khz()?, pol.max_khz()?);
        let cur_khz = pol.cur_khz().unwrap_or(min);
        let mut st =
            PolicyState { gov, baseline: cur.clone(), view: PolicyView::default(), due_us: 0, cur_khz, written: None };
        backend.fill_view(i, &cur, &cur, cur_khz, min, max, &mut st.view);
        let d = st.gov.start(&st.view);
        apply(cfg, backend, i, &mut st, d, min, max, &mut outcome, log)?;
        st.due_us = cur.t_us + d.next_sample_us.max(1);
        states.push(st);
    }
    let _ = writeln!(
        log,
        "hetlabd: {} {} on {}{}",
        if cfg.dry_run { "dry run of" } else { "governing with" },
        cfg.governor,
        backend.policies.iter().map(|p| p.sysfs.name.as_str()).collect::<Vec<_>>().join(", "),
        if cfg.dry_run { " (nothing is written)" } else { "" }
    );
    let end_us = cfg.duration_us.map(|d| start_us + d);
    loop {
        let now = monotonic_us();
        if end_us.is_some_and(|e| now >= e) {
            outcome.stop_reason = "duration".into();
            break;
        }
        let next = states.iter().map(|s| s.due_us).min().unwrap_or(now).min(end_us.unwrap_or(u64::MAX));
        let wait = Duration::from_micros(next.saturating_sub(now));
        if let Some(reason) = stop.wait(wait) {
            outcome.stop_reason = reason;
            break;
        }
        let now = monotonic_us();
        if !states.iter().any(|s| s.due_us <= now) {
            continue;
        }
        backend.snapshot(&mut cur)?;
        let mut stopped = None;
        for (i, st) in states.iter_mut().enumerate() {
            if st.due_us > now {
                continue;
            }
            let pol = &backend.policies[i].sysfs;
            let (min, max) = (pol.min_khz()?, pol.max_khz()?);
            let mut view = std::mem::take(&mut st.view);
            backend.fill_view(i, &st.baseline, &cur, st.cur_khz, min, max, &mut view);
            let d = st.gov.sample(&view);
            outcome.samples += 1;
            if cfg.log_samples || cfg.dry_run {
                let line = sample_line(&backend.policies[i], &view, st, d, start_us);
                if let Some(reason) = output_failed(writeln!(out, "{line}"))? {
                    stopped = Some(reason);
                }
            }
            st.view = view;
            apply(cfg, backend, i, st, d, min, max, &mut outcome, log)?;
            st.baseline.clone_from(&cur);
            st.due_us = cur.t_us + d.next_sample_us.max(1);
        }
        if let Some(reason) = stopped.or(output_failed(out.flush())?) {
            outcome.stop_reason = reason;
            break;
        }
    }
    Ok(outcome)
}

/// What a failed write of the sample lines means: a closed pipe (`hetlabd govern -v | head`)
/// ends the run like a signal (settings restored, a normal exit); any other failure (a full
/// disk) is an error, after which the settings are restored too.
fn output_failed(r: std::io::Result<()>) -> Result<Option<String>, String> {
    match r {
        Ok(()) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Some("standard output closed".into())),
        Err(e) => Err(format!("cannot write the sample lines to standard output: {e}")),
    }
}

#[allow(clippy::too_many_arguments)]
fn apply(
    cfg: &GovernConfig,
    backend: &Backend,
    i: usize,
    st: &mut PolicyState,
    d: Decision,
    min: u32,
    max: u32,
    outcome: &mut Outcome,
    log: &mut dyn Write,
) -> Result<(), String> {
    let pol = &backend.policies[i].sysfs;
    let target = frequency_to_write(&pol.opps_khz, d.target_khz, min, max);
    if target != d.target_khz {
        let _ = writeln!(
            log,
            "hetlabd: note: {} asked for {} kHz, not an OPP of {}; using {target}",
            cfg.governor, d.target_khz, pol.name
        );
    }
    if !cfg.dry_run && st.written != Some(target) {
        pol.set_speed(target)?;
        st.written = Some(target);
        outcome.writes += 1;
    }
    // What the kernel runs: the request within the policy limits, rounded up to an OPP.
    st.cur_khz = resolve(&pol.opps_khz, target, Relation::L, min, max);
    Ok(())
}

fn sample_line(p: &crate::backend::PolicyInfo, v: &PolicyView, st: &PolicyState, d: Decision, start_us: u64) -> String {
    let load =
        v.cpus.iter().map(|c| (100 * (c.wall_us - c.idle_us)).checked_div(c.wall_us).unwrap_or(0)).max().unwrap_or(0);
    let mut line = format!(
        "t={:.6} policy={} cluster={} load={} cur_khz={} target_khz={}",
        (v.now_us.saturating_sub(start_us)) as f64 * 1e-6,
        p.sysfs.name,
        p.cluster,
        load,
        v.cur_khz,
        d.target_khz
    );
    // Writing to a String cannot fail.
    let _ = st.gov.explain(&mut line);
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::PollStop;
    use crate::sysfs::fake;

    fn cfg(t: &fake::Tree, governor: &str) -> GovernConfig {
        let b = BackendConfig::new(t.roots(), hetlab_core::platform::Platform::builtin("exynos5422").unwrap());
        GovernConfig {
            governor: governor.into(),
            tunables: vec![("sampling_rate".into(), 10_000.0)],
            model: None,
            dry_run: false,
            counters: None,
            backend: b,
            duration_us: Some(60_000),
            log_samples: true,
        }
    }

    #[test]
    fn a_short_run_switches_to_userspace_writes_opps_and_restores() {
        if euid() != 0 {
            return;
        }
        let t = fake::exynos5422("daemon-run");
        let mut out = Vec::new();
        let mut log = Vec::new();
        let mut never = PollStop { f: || None };
        let mut c = cfg(&t, "performance");
        c.tunables.clear();
        let o = govern(&c, &mut never, &mut out, &mut log).unwrap();
        assert_eq!(o.stop_reason, "duration");
        assert!(o.samples >= 2, "{o:?}");
        assert_eq!(o.writes, 2, "one write per policy: performance never changes its mind");
        assert_eq!(fs::read_to_string(t.policy(4).join("scaling_setspeed")).unwrap().trim(), "2000000");
        assert_eq!(fs::read_to_string(t.policy(0).join("scaling_governor")).unwrap().trim(), "ondemand");
        assert_eq!(o.restored[0], "policy0 governor=ondemand min=200000 max=1400000");
        assert!(!t.run_dir().join(STATE_FILE).exists());
    }

    #[test]
    fn refusals_name_the_fix() {
        let t = fake::exynos5422("daemon-refuse");
        fs::write(t.policy(4).join("scaling_available_governors"), "ondemand performance\n").unwrap();
        let mut never = PollStop { f: || None };
        let mut c = cfg(&t, "ondemand");
        c.dry_run = true;
        let e = govern(&c, &mut never, &mut Vec::new(), &mut Vec::new()).unwrap_err();
        assert!(
            e.contains("policy4 (cpus 4-7) offers no userspace governor") && e.contains("cpufreq_userspace"),
            "{e}"
        );
        assert!(not_root_error(65534).contains("sudo"));
    }

    #[test]
    fn conflicting_daemons_are_found_by_name() {
        let t = fake::exynos5422("daemon-conflict");
        let p = t.root.join("proc");
        fs::create_dir_all(p.join("4242")).unwrap();
        fs::write(p.join("4242/comm"), "power-profiles-\n").unwrap();
        fs::create_dir_all(p.join("77")).unwrap();
        fs::write(p.join("77/comm"), "bash\n").unwrap();
        assert_eq!(conflicting_daemons(&p), vec![(4242, "power-profiles-daemon".to_string())]);
        let roots = crate::Roots::new(t.root.join("sys"), &p);
        let e = claim_frequencies(&roots, &[]).err().unwrap();
        assert!(e.contains("power-profiles-daemon (pid 4242)") && e.contains("systemctl stop"), "{e}");
        fs::remove_dir_all(p.join("4242")).unwrap();
        fs::write(t.run_dir().join(STATE_FILE), "# saved before pid 31337 changed them\n").unwrap();
        let e = claim_frequencies(&roots, &[]).err().unwrap();
        assert!(e.contains("(pid 31337)") && e.contains(" --sysfs-root "), "{e}");
        assert!(e.contains("hetlabd restore"), "{e}");
    }
}
