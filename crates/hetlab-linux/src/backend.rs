//! Fills the governors' [`PolicyView`] from Linux: policies from sysfs, per-CPU busy/idle from
//! /proc/stat, PMC deltas from perf_event_open.
//!
//! A [`Snapshot`] holds cumulative values at one instant; a view is the difference between a
//! policy's previous snapshot and the current one, with the wall time from CLOCK_MONOTONIC.
//!
//! Counting units (`--counters`):
//! * `per-cpu` (default): one group per online CPU counting everything on it. The cost grows
//!   with CPUs, not threads. `memory_access` of a cluster is then Σbus_access/Σcpu_cycles of all
//!   work on its CPUs (idle CPUs add no cycles: the cycle counter stops in WFI).
//! * `cgroup=DIR`: one group per CPU counting the tasks of one cgroup (PERF_FLAG_PID_CGROUP);
//!   also grows with CPUs, and restricts the counts to the "processes of interest".
//! * `pid=P,...` / `tid=T,...`: per-thread groups (the paper's per-task reads), one per thread
//!   and core PMU. On big.LITTLE the PMU a count comes from says which cluster the thread ran on.
//!   Where one PMU covers several policies (software stand-ins, one PMU for all CPUs), the
//!   thread's cluster is its last CPU (`/proc/<tid>/stat` field 39), refreshed with the thread
//!   list every `thread_refresh_us`; threads that exit lose their counts since the last sample.
//!   A thread that has not run since its group was last read is not read again (its counts are
//!   the last ones): the group leader's mmap'ed user page tells, without a syscall, whether it
//!   was scheduled in since ([`crate::quiet`]). Where the page cannot be mapped or the kernel does
//!   not update it at sched-in, every group is read; the start-up line says which.
//!
//! The counts appear in the view as [`ThreadSample`]s: per thread (per-thread modes) or per CPU
//! (`tid` = the CPU number) — the governor sums them per cluster either way.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use hetlab_core::counters::{CciPortSample, CorePmu, ThreadSample};
use hetlab_core::governor::{CpuSample, PolicyView};
use hetlab_core::platform::Platform;

use crate::cpus::format_cpu_list;
use crate::perf::{self, EventSpec, Group, Target};
use crate::procstat::{self, CpuTimes, Fractions, ProcStat};
use crate::quiet::QuietTracker;
use crate::sysfs::{self, Policy};
use crate::{display, monotonic_us, Roots};

/// Which tasks the core PMU counters follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterMode {
    /// No PMCs: the governors see load only.
    Off,
    PerCpu,
    Cgroup(PathBuf),
    /// Every thread of these processes (rescanned every refresh).
    Pids(Vec<u32>),
    /// These threads.
    Tids(Vec<u32>),
}

impl CounterMode {
    /// `per-cpu`, `cgroup=DIR`, `pid=1,2`, `tid=3,4`, `off`.
    pub fn parse(s: &str) -> Result<CounterMode, String> {
        let ids = |v: &str, what: &str| -> Result<Vec<u32>, String> {
            let ids: Result<Vec<u32>, _> = v.split(',').filter(|x| !x.is_empty()).map(str::parse).collect();
            match ids {
                Ok(ids) if !ids.is_empty() => Ok(ids),
                _ => Err(format!("--counters {what}= expects numbers like {what}=1234,5678; got '{s}'")),
            }
        };
        match s.split_once('=') {
            None if s == "per-cpu" => Ok(CounterMode::PerCpu),
            None if s == "off" => Ok(CounterMode::Off),
            Some(("cgroup", d)) if !d.is_empty() => Ok(CounterMode::Cgroup(PathBuf::from(d))),
            Some(("pid", v)) => Ok(CounterMode::Pids(ids(v, "pid")?)),
            Some(("tid", v)) => Ok(CounterMode::Tids(ids(v, "tid")?)),
            _ => Err(format!("unknown counter mode '{s}'; use per-cpu, cgroup=/sys/fs/cgroup/DIR, pid=PID[,PID], tid=TID[,TID] or off")),
        }
    }

    fn per_thread(&self) -> bool {
        matches!(self, CounterMode::Pids(_) | CounterMode::Tids(_))
    }
}

/// Where the events come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmuSource {
    /// The ARM core PMUs and the CCI-400 PMU found in sysfs.
    Hardware,
    /// Software events standing in for them (see [`perf::software_core_events`]); `pmus`
    /// stand-in core PMUs (2 mimics big.LITTLE's one group per cluster and thread).
    Software { pmus: usize },
}

impl PmuSource {
    pub const NAMES: [&'static str; 2] = ["hardware", "software"];

    /// `hardware` or `software` (one stand-in PMU).
    pub fn parse(name: &str) -> Result<PmuSource, String> {
        match name {
            "hardware" => Ok(PmuSource::Hardware),
            "software" => Ok(PmuSource::Software { pmus: 1 }),
            other => Err(format!("--pmu expects hardware or software, got '{other}'")),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            PmuSource::Hardware => "hardware",
            PmuSource::Software { .. } => "software",
        }
    }
}

#[derive(Debug, Clone)]
pub struct BackendConfig {
    pub roots: Roots,
    pub counters: CounterMode,
    pub pmu: PmuSource,
    /// The board's description: cluster names, CCI ports and capacities come from its clusters
    /// whose CPUs match a policy, the scheduler tick from its `hz`.
    pub platform: Platform,
    /// Names the policies (in order of their first CPU) after these platform clusters instead of
    /// matching CPU lists: for boards numbered differently from the platform description.
    pub cluster_names: Option<Vec<String>>,
    /// Per-thread modes: how often the thread list (and last CPUs) are rescanned, µs.
    pub thread_refresh_us: u64,
    /// If the core or the CCI counters are unavailable, drop all PMCs (the daemon then runs
    /// the governor load-only); otherwise keep what works.
    pub all_or_nothing: bool,
    /// Per-thread modes: leave unread the groups of threads that have not run since their last
    /// read ([`crate::quiet`]); `false` reads every group every sample.
    pub skip_quiet_threads: bool,
}

impl BackendConfig {
    pub fn new(roots: Roots, platform: Platform) -> Self {
        BackendConfig {
            roots,
            counters: CounterMode::Off,
            pmu: PmuSource::Hardware,
            platform,
            cluster_names: None,
            thread_refresh_us: 1_000_000,
            all_or_nothing: true,
            skip_quiet_threads: true,
        }
    }
}

/// A policy with what the governors need beyond sysfs.
#[derive(Debug, Clone)]
pub struct PolicyInfo {
    pub sysfs: Policy,
    /// Platform cluster name (`little`, `big`), or the policy's name when unmatched.
    pub cluster: String,
    /// CCI-400 slave port of the cluster, when known.
    pub cci_port: Option<u8>,
    /// cpu_capacity (sysfs, else the platform, else 1024; a value sysfs could not show is a note).
    pub capacity: u32,
}

/// One counted unit's cumulative core counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreEntry {
    /// Sort key: tid << 8 | PMU slot (per-thread) or the CPU (per-CPU, cgroup).
    pub key: u64,
    /// Thread id, or CPU number.
    pub unit: u32,
    /// Policy index the counts belong to.
    pub cluster: usize,
    pub pmu: CorePmu,
}

/// Cumulative values at one instant.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub t_us: u64,
    pub cpus: Vec<Option<CpuTimes>>,
    /// Sorted by key.
    pub core: Vec<CoreEntry>,
    /// Per CCI port, in [`Backend::cci_ports`] order: (si_rrq_hs_any, si_rrq_stall_tt_full).
    pub cci: Vec<(u64, u64)>,
    pub cci_cycles: u64,
}

struct Slot {
    events: Vec<EventSpec>,
    /// CPUs the PMU covers (None: all).
    cpus: Option<Vec<usize>>,
    /// The policy whose CPUs the PMU covers, when exactly one.
    cluster: Option<usize>,
}

struct CoreUnit {
    key: u64,
    unit: u32,
    cluster: usize,
    group: Group,
    quiet: QuietTracker,
    /// The counts of the last read (what a skipped group contributes again).
    last: [u64; 4],
}

impl CoreUnit {
    fn new(key: u64, unit: u32, cluster: usize, group: Group) -> CoreUnit {
        CoreUnit { key, unit, cluster, group, quiet: QuietTracker::default(), last: [0; 4] }
    }
}

pub struct Backend {
    pub roots: Roots,
    pub policies: Vec<PolicyInfo>,
    cpu_policy: Vec<Option<usize>>,
    procstat: ProcStat,
    mode: CounterMode,
    slots: Vec<Slot>,
    core: Vec<CoreUnit>,
    core_ok: bool,
    cci: Option<Group>,
    /// The CPU the CCI group counts on (its PMU's cpumask).
    cci_cpu: Option<usize>,
    /// (port, policy index) of each CCI port counted.
    cci_ports: Vec<(u8, usize)>,
    cgroup: Option<OwnedFd>,
    refresh_us: u64,
    last_refresh_us: u64,
    carry: Vec<Fractions>,
    scratch: Vec<u64>,
    /// Per-thread modes: groups of threads that have not run are left unread (pages mapped).
    skip_quiet: bool,
    /// How the per-thread groups are read, for the start-up line.
    read_policy: String,
    /// read(2)s made by the last [`Backend::read_counters`] (the CCI group included).
    reads_last: usize,
    /// What is unsupported or assumed; said once, by the caller.
    pub notes: Vec<String>,
    /// The platform's scheduler tick, µs.
    tick_us: u64,
}

fn find_cluster(platform: &Platform, name: &str) -> Option<usize> {
    platform.cluster_index(name)
}

impl Backend {
    /// Discovers the policies and opens the counters. Failures to open counters are not errors:
    /// they become [`Backend::notes`] and the counters are left out.
    pub fn new(cfg: &BackendConfig) -> Result<Backend, String> {
        // a cgroup the user named must exist (a typo is an error, not a governor gone load-only);
        // a PMU the board lacks is only a note
        if let CounterMode::Cgroup(dir) = &cfg.counters {
            if !dir.is_dir() {
                return Err(format!(
                    "--counters cgroup={}: not a directory; give an existing cgroup directory such as /sys/fs/cgroup/NAME",
                    display(dir)
                ));
            }
        }
        let sys_policies = sysfs::discover(&cfg.roots)?;
        if let Some(names) = &cfg.cluster_names {
            if names.len() != sys_policies.len() {
                return Err(format!(
                    "--cluster-names gives {} names but the board has {} cpufreq policies ({})",
                    names.len(),
                    sys_policies.len(),
                    sys_policies.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        let mut policies = Vec::new();
        let mut capacity_notes = Vec::new();
        for (i, p) in sys_policies.into_iter().enumerate() {
            let pl = &cfg.platform;
            let matched = match &cfg.cluster_names {
                Some(names) => find_cluster(pl, &names[i]),
                None => pl.clusters.iter().position(|c| {
                    let mut cpus = c.cpus.clone();
                    cpus.sort_unstable();
                    cpus == p.related_cpus
                }),
            };
            if let (Some(names), None) = (&cfg.cluster_names, matched) {
                return Err(format!("--cluster-names: platform {} has no cluster '{}'", pl.name, names[i]));
            }
            // what the kernel shows, else the platform's capacity for the cluster, else the
            // largest (1024); a value the kernel could not show is said, with what is used
            let fallback = matched.map_or(sysfs::MAX_CPU_CAPACITY, |k| pl.cpu_capacity(k));
            let sys_cap = match p.related_cpus.first() {
                Some(&cpu) => sysfs::cpu_capacity(&cfg.roots, cpu)?.unwrap_or_else(|why| {
                    capacity_notes.push(format!("{why}; {} uses capacity {fallback} instead", p.name));
                    None
                }),
                None => None,
            };
            let info = match matched {
                Some(k) => PolicyInfo {
                    cluster: pl.clusters[k].name.clone(),
                    cci_port: pl.clusters[k].cci_port,
                    capacity: sys_cap.unwrap_or(fallback),
                    sysfs: p,
                },
                None => PolicyInfo {
                    cluster: p.name.clone(),
                    cci_port: None,
                    capacity: sys_cap.unwrap_or(fallback),
                    sysfs: p,
                },
            };
            policies.push(info);
        }
        let ncpu = policies.iter().flat_map(|p| p.sysfs.related_cpus.iter()).max().map_or(0, |m| m + 1);
        let mut cpu_policy = vec![None; ncpu];
        for (i, p) in policies.iter().enumerate() {
            for &c in &p.sysfs.related_cpus {
                cpu_policy[c] = Some(i);
            }
        }
        let mut b = Backend {
            roots: cfg.roots.clone(),
            policies,
            cpu_policy,
            procstat: ProcStat::new(&cfg.roots),
            mode: cfg.counters.clone(),
            slots: Vec::new(),
            core: Vec::new(),
            core_ok: false,
            cci: None,
            cci_cpu: None,
            cci_ports: Vec::new(),
            cgroup: None,
            refresh_us: cfg.thread_refresh_us.max(1),
            last_refresh_us: 0,
            carry: vec![Fractions::default(); ncpu],
            scratch: vec![0; 16],
            skip_quiet: false,
            read_policy: String::new(),
            reads_last: 0,
            notes: capacity_notes,
            tick_us: cfg.platform.tick_us(),
        };
        // Unmatched policies are named after themselves, not after a cluster of the platform.
        let unmatched = |p: &&PolicyInfo| cfg.platform.cluster_index(&p.cluster).is_none();
        if b.policies.iter().any(|p| unmatched(&p)) {
            b.notes.push(format!(
                "policies {} do not match a cluster of platform {} by CPUs: they are named after the policy, have no CCI port, and anti-snoop has no tree for them (pass --cluster-names)",
                b.policies.iter().filter(unmatched).map(|p| format!("{} (cpus {})", p.sysfs.name, format_cpu_list(&p.sysfs.related_cpus))).collect::<Vec<_>>().join(", "),
                cfg.platform.name
            ));
        }
        if cfg.counters != CounterMode::Off {
            b.open_core(cfg);
            if b.core_ok && b.mode.per_thread() {
                b.choose_read_policy(cfg);
            }
            b.open_cci(cfg);
            if cfg.all_or_nothing && (!b.core_ok || b.cci.is_none()) && (b.core_ok || b.cci.is_some()) {
                b.core.clear();
                b.core_ok = false;
                (b.skip_quiet, b.read_policy) = (false, String::new());
                b.cci = None;
                b.cci_ports.clear();
            }
        }
        Ok(b)
    }

    /// Whether core (thread/CPU) counters are being read.
    pub fn has_core_counters(&self) -> bool {
        self.core_ok
    }
    /// Whether the CCI ports are being read.
    pub fn has_cci(&self) -> bool {
        self.cci.is_some()
    }
    /// The CPU the CCI counters are bound to: reading them from that CPU needs no IPI.
    pub fn cci_cpu(&self) -> Option<usize> {
        self.cci.as_ref().and(self.cci_cpu)
    }
    /// (port, policy index) of the CCI ports counted.
    pub fn cci_ports(&self) -> &[(u8, usize)] {
        &self.cci_ports
    }
    /// Number of perf groups per snapshot.
    pub fn groups(&self) -> usize {
        self.core.len() + usize::from(self.cci.is_some())
    }
    /// How many of them the last [`Backend::read_counters`] read with read(2).
    pub fn groups_read(&self) -> usize {
        self.reads_last
    }
    /// Whether groups of threads that have not run are left unread.
    pub fn skips_quiet_threads(&self) -> bool {
        self.skip_quiet
    }
    pub fn policy_of_cpu(&self, cpu: usize) -> Option<usize> {
        self.cpu_policy.get(cpu).copied().flatten()
    }

    fn open_core(&mut self, cfg: &BackendConfig) {
        match cfg.pmu {
            PmuSource::Software { pmus } => {
                for _ in 0..pmus.max(1) {
                    self.slots.push(Slot {
                        events: perf::software_core_events(self.mode.per_thread()),
                        cpus: None,
                        cluster: None,
                    });
                }
            }
            PmuSource::Hardware => {
                let pmus = perf::arm_core_pmus(&cfg.roots);
                if pmus.is_empty() {
                    self.notes.push(format!(
                        "no ARM core PMU under {} (armv7_cortex_*, armv8_*): cpu_cycles and bus_access (0x19) cannot be counted, so memory_access is unavailable (is the PMU enabled in the device tree? the XU3-Lite disables it)",
                        display(&perf::event_source_dir(&cfg.roots))
                    ));
                    return;
                }
                for pmu in pmus {
                    let cluster = pmu.cpus.as_ref().and_then(|cpus| {
                        let owners: Vec<Option<usize>> = cpus.iter().map(|&c| self.policy_of_cpu(c)).collect();
                        match owners.first() {
                            Some(&Some(first)) if owners.iter().all(|&o| o == Some(first)) => Some(first),
                            _ => None,
                        }
                    });
                    self.slots.push(Slot { events: perf::arm_core_events(&pmu), cpus: pmu.cpus.clone(), cluster });
                }
            }
        }
        let result = match self.mode.clone() {
            CounterMode::Off => return,
            CounterMode::PerCpu => self.open_per_cpu(None),
            CounterMode::Cgroup(dir) => match fs::File::open(&dir) {
                Ok(f) if f.metadata().map(|m| m.is_dir()).unwrap_or(false) => {
                    let fd: OwnedFd = f.into();
                    let raw = fd.as_raw_fd();
                    self.cgroup = Some(fd);
                    self.open_per_cpu(Some(raw))
                }
                Ok(_) => Err(format!(
                    "--counters cgroup={}: not a directory; give a cgroup directory such as /sys/fs/cgroup/NAME",
                    display(&dir)
                )),
                Err(e) => Err(format!("--counters cgroup={}: {e}; give an existing cgroup directory", display(&dir))),
            },
            CounterMode::Pids(_) | CounterMode::Tids(_) => self.refresh_threads(monotonic_us()),
        };
        match result {
            Ok(()) => self.core_ok = true,
            Err(e) => {
                self.core.clear();
                self.notes.push(format!("core PMU counters unavailable: {e}"));
            }
        }
    }

    fn slot_for_cpu(&self, cpu: usize) -> Option<usize> {
        self.slots.iter().position(|s| s.cpus.as_ref().is_none_or(|c| c.contains(&cpu)))
    }

    fn open_per_cpu(&mut self, cgroup: Option<i32>) -> Result<(), String> {
        for (pi, p) in self.policies.iter().enumerate() {
            for &cpu in &p.sysfs.affected_cpus {
                let Some(slot) = self.slot_for_cpu(cpu) else {
                    return Err(format!("no core PMU covers CPU {cpu}"));
                };
                let target = match cgroup {
                    Some(fd) => Target::Cgroup { fd, cpu },
                    None => Target::Cpu(cpu),
                };
                let group = Group::open(&self.slots[slot].events, target)?;
                self.core.push(CoreUnit::new(cpu as u64, cpu as u32, pi, group));
            }
        }
        self.core.sort_by_key(|u| u.key);
        Ok(())
    }

    /// Last CPU a thread ran on (/proc/<tid>/stat field 39).
    fn last_cpu(&self, tid: u32) -> Option<usize> {
        let text = crate::infile::read_bounded(&self.roots.proc(&format!("{tid}/stat")), 4096, true).ok()?;
        let after = &text[text.rfind(')')? + 1..];
        after.split_ascii_whitespace().nth(36)?.parse().ok()
    }

    fn list_tids(&self) -> Result<Vec<u32>, String> {
        match &self.mode {
            CounterMode::Tids(t) => Ok(t.clone()),
            CounterMode::Pids(pids) => {
                let mut out = Vec::new();
                for pid in pids {
                    let dir = self.roots.proc(&format!("{pid}/task"));
                    match fs::read_dir(&dir) {
                        Ok(rd) => out.extend(rd.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())),
                        Err(_) if !self.core.is_empty() || self.last_refresh_us > 0 => {} // exited since
                        Err(e) => {
                            return Err(format!(
                                "cannot list the threads of process {pid} ({}): {e}; is the pid right?",
                                display(&dir)
                            ))
                        }
                    }
                }
                out.sort_unstable();
                Ok(out)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Per-thread modes: open groups for new threads, drop exited ones, update last CPUs.
    fn refresh_threads(&mut self, now_us: u64) -> Result<(), String> {
        self.last_refresh_us = now_us.max(1);
        let tids = self.list_tids()?;
        self.core.retain(|u| tids.binary_search(&u.unit).is_ok());
        for &tid in &tids {
            let mut cluster_of_thread = None;
            for slot in 0..self.slots.len() {
                let key = (u64::from(tid) << 8) | slot as u64;
                let fixed = self.slots[slot].cluster;
                let cluster = match fixed {
                    Some(c) => Some(c),
                    None => {
                        if cluster_of_thread.is_none() {
                            cluster_of_thread = self.last_cpu(tid).and_then(|c| self.policy_of_cpu(c));
                        }
                        cluster_of_thread
                    }
                };
                if let Ok(i) = self.core.binary_search_by_key(&key, |u| u.key) {
                    if let Some(c) = cluster {
                        self.core[i].cluster = c;
                    }
                    continue;
                }
                match Group::open(&self.slots[slot].events, Target::Thread(tid)) {
                    Ok(mut group) => {
                        // a group whose page cannot be mapped is read every sample
                        if self.skip_quiet {
                            let _ = group.map_user_page();
                        }
                        let pos = self.core.partition_point(|u| u.key < key);
                        self.core.insert(pos, CoreUnit::new(key, tid, cluster.unwrap_or(0), group));
                    }
                    Err(e) if e.contains("has exited") => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Per-thread modes: map every group's user page so that threads that have not run are not
    /// read — if asked, if this kernel updates the page when a thread is scheduled in (checked
    /// on the calling thread), and if the pages can be mapped. Says which in `read_policy`.
    fn choose_read_policy(&mut self, cfg: &BackendConfig) {
        self.read_policy = "every group read each sample".into();
        if !cfg.skip_quiet_threads {
            return;
        }
        // SAFETY: sched_getcpu has no memory effects.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0);
        let Some(slot) = self.slot_for_cpu(cpu).or(if self.slots.is_empty() { None } else { Some(0) }) else {
            return;
        };
        let probe = Group::open(&self.slots[slot].events, Target::Thread(crate::cpus::gettid()));
        match probe.and_then(|mut g| page_moves_at_sched_in(&mut g)) {
            Ok(true) => {}
            Ok(false) => {
                self.read_policy += " (this kernel does not update the perf user page when the counted thread is scheduled in, so a thread that did not run cannot be told without a read)";
                return;
            }
            Err(e) => {
                self.read_policy += &format!(" ({e})");
                return;
            }
        }
        let mut failed = Vec::new();
        for u in &mut self.core {
            if let Err(e) = u.group.map_user_page() {
                failed.push(e);
            }
        }
        if failed.len() == self.core.len() && !failed.is_empty() {
            self.read_policy += &format!(" ({}; see perf_event_mlock_kb)", failed[0]);
            return;
        }
        self.skip_quiet = true;
        self.read_policy = "threads that have not run since their last read are not read (perf user page)".into();
        if let Some(e) = failed.first() {
            self.read_policy +=
                &format!("; {} of {} groups are read every sample ({e})", failed.len(), self.core.len());
        }
    }

    fn open_cci(&mut self, cfg: &BackendConfig) {
        let ports: Vec<(u8, usize)> =
            self.policies.iter().enumerate().filter_map(|(i, p)| p.cci_port.map(|port| (port, i))).collect();
        if ports.is_empty() {
            self.notes.push("the CCI ports of the policies are unknown (no platform cluster matches), so cci_congestion is unavailable".into());
            return;
        }
        let port_numbers: Vec<u8> = ports.iter().map(|p| p.0).collect();
        let (events, cpu) = match cfg.pmu {
            PmuSource::Software { .. } => {
                let cpu = self.policies.iter().flat_map(|p| p.sysfs.affected_cpus.first()).next().copied().unwrap_or(0);
                (perf::software_cci_events(&port_numbers), cpu)
            }
            PmuSource::Hardware => match perf::cci_pmu(&cfg.roots) {
                Some(pmu) => {
                    let cpu = pmu.cpus.as_ref().and_then(|c| c.first().copied()).unwrap_or(0);
                    (perf::cci_events(&pmu, &port_numbers), cpu)
                }
                None => {
                    self.notes.push(format!(
                        "no CCI-400 PMU under {} (CCI_400, CCI_400_r1): si_rrq_hs_any / si_rrq_stall_tt_full cannot be counted, so cci_congestion is unavailable (the mainline Exynos 5422 device tree has no CCI PMU node; platforms.md §4.3)",
                        display(&perf::event_source_dir(&cfg.roots))
                    ));
                    return;
                }
            },
        };
        match Group::open(&events, Target::Cpu(cpu)) {
            Ok(g) => {
                self.cci = Some(g);
                self.cci_cpu = Some(cpu);
                self.cci_ports = ports;
            }
            Err(e) => self.notes.push(format!("CCI-400 counters unavailable: {e}")),
        }
    }

    /// Reads the PMCs only (the part of a sample the speed benchmark times with the decision).
    pub fn read_counters(&mut self, out: &mut Snapshot) -> Result<(), String> {
        out.t_us = monotonic_us();
        if self.mode.per_thread() && self.core_ok && out.t_us.saturating_sub(self.last_refresh_us) >= self.refresh_us {
            self.refresh_threads(out.t_us)?;
        }
        out.core.clear();
        self.reads_last = 0;
        for u in &mut self.core {
            let updates = u.group.page_updates().filter(|_| self.skip_quiet);
            let s = match updates {
                Some(n) if u.quiet.can_skip(n) => u.last,
                _ => {
                    u.group.read(&mut self.scratch)?;
                    self.reads_last += 1;
                    if let Some(n) = updates {
                        u.quiet.after_read(n, u.group.time_running());
                    }
                    u.last.copy_from_slice(&self.scratch[..4]);
                    u.last
                }
            };
            out.core.push(CoreEntry {
                key: u.key,
                unit: u.unit,
                cluster: u.cluster,
                pmu: CorePmu {
                    cpu_cycles: s[0],
                    inst_retired: s[1],
                    bus_access: s[2],
                    l2d_cache_refill: s[3],
                    mem_access: 0,
                },
            });
        }
        out.cci.clear();
        out.cci_cycles = 0;
        if let Some(g) = &mut self.cci {
            self.reads_last += 1;
            g.read(&mut self.scratch)?;
            for i in 0..self.cci_ports.len() {
                out.cci.push((self.scratch[2 * i], self.scratch[2 * i + 1]));
            }
            out.cci_cycles = self.scratch[2 * self.cci_ports.len()];
        }
        Ok(())
    }

    /// A full snapshot: /proc/stat and the PMCs.
    pub fn snapshot(&mut self, out: &mut Snapshot) -> Result<(), String> {
        let cpus = self.procstat.read()?;
        self.read_counters(out)?;
        out.cpus = cpus;
        Ok(())
    }

    /// Fills `view` for policy `p` over the window from `prev` to `cur`. `cur_khz` is the
    /// policy's current frequency and `[min_khz, max_khz]` its limits (scaling_min/max_freq,
    /// which include thermal capping through frequency QoS).
    #[allow(clippy::too_many_arguments)]
    pub fn fill_view(
        &mut self,
        p: usize,
        prev: &Snapshot,
        cur: &Snapshot,
        cur_khz: u32,
        min_khz: u32,
        max_khz: u32,
        view: &mut PolicyView,
    ) {
        let info = &self.policies[p];
        let pol = &info.sysfs;
        let wall_us = cur.t_us.saturating_sub(prev.t_us);
        view.now_us = cur.t_us;
        view.policy = p;
        if view.opps_khz != pol.opps_khz {
            view.opps_khz = pol.opps_khz.clone();
        }
        view.cpuinfo_min_khz = pol.cpuinfo_min_khz;
        view.cpuinfo_max_khz = pol.cpuinfo_max_khz;
        view.policy_min_khz = min_khz;
        view.policy_max_khz = max_khz;
        view.thermal_cap_khz = pol.cpuinfo_max_khz; // folded into scaling_max_freq by the kernel
        view.cur_khz = cur_khz;
        view.transition_latency_ns = pol.transition_latency_ns;
        view.tick_us = self.tick_us;
        view.cpu_capacity = info.capacity;
        view.cpus.clear();
        let freq_scale = f64::from(cur_khz) / f64::from(pol.cpuinfo_max_khz.max(1));
        for &cpu in &pol.related_cpus {
            let (idle_us, nice_us) = procstat::window_us(
                prev.cpus.get(cpu).and_then(Option::as_ref),
                cur.cpus.get(cpu).and_then(Option::as_ref),
                wall_us,
                &mut self.carry[cpu],
            );
            let busy = if wall_us == 0 { 0.0 } else { (wall_us - idle_us) as f64 / wall_us as f64 };
            // PELT util is not visible from user space: estimate it as the frequency- and
            // capacity-invariant busy fraction (what util_avg converges to at steady load).
            let util_avg = (busy * freq_scale * f64::from(info.capacity)).round().min(1024.0) as u32;
            let pmu = if matches!(self.mode, CounterMode::PerCpu | CounterMode::Cgroup(_)) {
                delta_of(prev, cur, cpu as u64)
            } else {
                CorePmu::default()
            };
            view.cpus.push(CpuSample { cpu, wall_us, idle_us, nice_us, util_avg, was_idle: idle_us > 0, pmu });
        }
        view.threads.clear();
        let mut j = 0;
        for e in &cur.core {
            while j < prev.core.len() && prev.core[j].key < e.key {
                j += 1;
            }
            let base =
                if j < prev.core.len() && prev.core[j].key == e.key { prev.core[j].pmu } else { CorePmu::default() };
            let d = sub(&e.pmu, &base);
            if d.cpu_cycles > 0 {
                view.threads.push(ThreadSample { tid: e.unit, cluster: e.cluster, pmu: d });
            }
        }
        view.cci_ports.clear();
        if cur.cci.len() == self.cci_ports.len() && prev.cci.len() == cur.cci.len() {
            for (i, &(port, cluster)) in self.cci_ports.iter().enumerate() {
                view.cci_ports.push(CciPortSample {
                    port,
                    cluster,
                    si_rrq_hs_any: cur.cci[i].0.saturating_sub(prev.cci[i].0),
                    si_rrq_stall_tt_full: cur.cci[i].1.saturating_sub(prev.cci[i].1),
                });
            }
        }
        view.cci_cycles = cur.cci_cycles.saturating_sub(prev.cci_cycles);
    }

    /// One line per policy, and the counters, for the start-up log.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .policies
            .iter()
            .map(|p| {
                let s = &p.sysfs;
                format!(
                    "{} ({}, cpus {}{}): {} OPPs {}-{} kHz from {}",
                    s.name,
                    p.cluster,
                    format_cpu_list(&s.related_cpus),
                    p.cci_port.map_or(String::new(), |x| format!(", CCI S{x}")),
                    s.opps_khz.len(),
                    s.opps_khz[0],
                    s.opps_khz[s.opps_khz.len() - 1],
                    s.opps_source
                )
            })
            .collect();
        if self.mode != CounterMode::Off {
            let unit = match &self.mode {
                CounterMode::PerCpu => "per CPU".to_string(),
                CounterMode::Cgroup(d) => format!("per CPU for cgroup {}", display(d)),
                CounterMode::Pids(p) => {
                    format!("per thread of pid {}", p.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                }
                CounterMode::Tids(t) => format!("per thread ({} threads)", t.len()),
                CounterMode::Off => unreachable!(),
            };
            let policy = if self.read_policy.is_empty() { String::new() } else { format!("; {}", self.read_policy) };
            out.push(format!(
                "PMCs: core {} ({unit}{policy}), CCI {}",
                if self.core_ok { "on" } else { "off" },
                if self.cci.is_some() {
                    self.cci_ports
                        .iter()
                        .map(|(p, c)| format!("S{p}={}", self.policies[*c].cluster))
                        .collect::<Vec<_>>()
                        .join(" ")
                } else {
                    "off".into()
                }
            ));
        }
        out
    }
}

/// Whether a per-thread group's user page moves when its thread is scheduled in: `g` counts the
/// calling thread, which maps the leader's page and sleeps 1 ms (out and back in) between two
/// looks, up to three times (a migration to a CPU the PMU does not cover may hide one).
fn page_moves_at_sched_in(g: &mut Group) -> Result<bool, String> {
    g.map_user_page()?;
    for _ in 0..3 {
        let before = g.page_updates();
        std::thread::sleep(std::time::Duration::from_millis(1));
        if g.page_updates() != before {
            return Ok(true);
        }
    }
    Ok(false)
}

fn sub(a: &CorePmu, b: &CorePmu) -> CorePmu {
    CorePmu {
        cpu_cycles: a.cpu_cycles.saturating_sub(b.cpu_cycles),
        inst_retired: a.inst_retired.saturating_sub(b.inst_retired),
        l2d_cache_refill: a.l2d_cache_refill.saturating_sub(b.l2d_cache_refill),
        bus_access: a.bus_access.saturating_sub(b.bus_access),
        mem_access: a.mem_access.saturating_sub(b.mem_access),
    }
}

fn delta_of(prev: &Snapshot, cur: &Snapshot, key: u64) -> CorePmu {
    let find = |s: &Snapshot| s.core.binary_search_by_key(&key, |e| e.key).ok().map(|i| s.core[i].pmu);
    match (find(prev), find(cur)) {
        (Some(a), Some(b)) => sub(&b, &a),
        (None, Some(b)) => b,
        _ => CorePmu::default(),
    }
}

#[cfg(test)]
mod tests;
