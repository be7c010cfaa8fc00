//! Trace events recorded by the engine, and their export as ftrace text.
//!
//! Two layouts ([`TraceFormat`]). `ftrace`, the kernel's `trace` file, is the one Perfetto UI and
//! LISA's `HRTxtTraceParser` both open (shared/reference/ecosystem.md §4 and §7): a `# tracer:
//! nop` header, then trace-cmd-report-style lines *without* the irq-flags column, timestamps in
//! seconds with 6 decimals. `trace-cmd` is what `trace-cmd report -R` prints, what LISA's
//! `TxtTraceParser` reads: a `cpus=N` first line, the same line heads, raw event fields
//! (`sched_switch`'s `prev_state` a number, the wake-ups' `success=1`), and user-space markers as
//! the `print` event (`print: tracing_mark_write: <text>`), so LISA turns rt-app's markers into
//! its `userspace@rtapp_*` events itself. Event bodies are otherwise the kernel's
//! `TP_printk` output: `sched_switch`, `sched_waking`, `sched_wakeup`, `sched_wakeup_new` and
//! `sched_migrate_task` as include/trace/events/sched.h prints them, `cpu_frequency` and
//! `cpu_idle` as include/trace/events/power.h does, and the scheduler signals LISA's analyses
//! read (`sched_pelt_se`, `sched_pelt_cfs`, `sched_cpu_capacity`, `sched_overutilized`) as
//! LISA's own `sched_tp` kernel module prints them (lisa/_assets/kmodules/sched_tp/
//! ftrace_events.h in lisa-linux 3.1.0, the version the tests pin).
//!
//! [`write_lisa_plat_info`] writes the companion LISA needs for its frequency analysis: the
//! platform's CPU capacities, frequency domains and frequencies as a `PlatformInfo` YAML map.

use crate::platform::Platform;

/// Linux's PWR_EVENT_EXIT, printed as u32 by the cpu_idle tracepoint.
pub const CPU_IDLE_EXIT: u32 = 4294967295;

/// The text layout of an exported trace (the module's header says what opens each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// The kernel's `trace` file: Perfetto UI, LISA's `HRTxtTraceParser`.
    #[default]
    Ftrace,
    /// `trace-cmd report -R`: LISA's `TxtTraceParser`.
    TraceCmd,
}

impl TraceFormat {
    pub const NAMES: [&'static str; 2] = ["ftrace", "trace-cmd"];

    pub fn parse(name: &str) -> Result<TraceFormat, String> {
        match name {
            "ftrace" => Ok(TraceFormat::Ftrace),
            "trace-cmd" => Ok(TraceFormat::TraceCmd),
            _ => Err(format!("unknown trace format '{name}'; give ftrace or trace-cmd")),
        }
    }
}

/// Task state letters of sched_switch's prev_state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted while runnable (`R+`).
    Runnable,
    /// Went to sleep (`S`).
    Sleeping,
    /// Exited (`X`).
    Dead,
}

impl PrevState {
    /// As `TP_printk` shows it; the idle task is always `R`.
    fn letters(self, tid: u32) -> &'static str {
        match (tid, self) {
            (0, _) => "R",
            (_, PrevState::Runnable) => "R+",
            (_, PrevState::Sleeping) => "S",
            (_, PrevState::Dead) => "X",
        }
    }

    /// The raw field (`__trace_sched_switch_state`, Linux 5.10): a preempted task reports
    /// TASK_REPORT_MAX (0x100), else the bit of its state's index (TASK_INTERRUPTIBLE 0x1,
    /// EXIT_DEAD 0x10; TASK_RUNNING 0).
    fn raw(self, tid: u32) -> u32 {
        match (tid, self) {
            (0, _) => 0,
            (_, PrevState::Runnable) => 0x100,
            (_, PrevState::Sleeping) => 0x1,
            (_, PrevState::Dead) => 0x10,
        }
    }
}

/// PELT signals as `struct sched_avg` holds them when the tracepoint fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeltSignals {
    /// `load_avg` (weighted by the entity's load weight).
    pub load: u64,
    /// `runnable_avg`: share of time runnable, 0..=1024.
    pub runnable: u64,
    /// `util_avg`, 0..=1024.
    pub util: u64,
    /// `last_update_time`, ns.
    pub update_time_ns: u64,
}

/// The signals' tail of a `sched_pelt_*` line, as every one of them ends.
impl std::fmt::Display for PeltSignals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let PeltSignals { load, runnable, util, update_time_ns } = self;
        write!(f, "load={load} runnable={runnable} util={util} update_time={update_time_ns}")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TraceEvent {
    /// A CPU switches from `prev` to `next`; tid 0 is the idle task `swapper/N`.
    SchedSwitch { time_us: f64, cpu: usize, prev_tid: u32, prev_state: PrevState, next_tid: u32 },
    /// `try_to_wake_up` starts waking `tid`, emitted on `waker_cpu`; `target_cpu` is the CPU the
    /// task last ran on (`task_cpu(p)` before `select_task_rq`, as the kernel prints it).
    SchedWaking { time_us: f64, waker_cpu: usize, tid: u32, target_cpu: usize },
    /// `tid` is runnable on `target_cpu` (`sched_wakeup`; `sched_wakeup_new` for a new task,
    /// which has no `sched_waking`), emitted on `cpu`.
    SchedWakeup { time_us: f64, cpu: usize, tid: u32, target_cpu: usize, new_task: bool },
    /// `set_task_cpu` moves `tid` from `orig_cpu` to `dest_cpu`, emitted on `cpu`.
    SchedMigrateTask { time_us: f64, cpu: usize, tid: u32, orig_cpu: usize, dest_cpu: usize },
    /// A task's PELT signals (`sched_pelt_se`, path `(null)`), on the CPU of its run queue.
    SchedPeltSe { time_us: f64, cpu: usize, tid: u32, signals: PeltSignals },
    /// A CPU's root CFS run queue's PELT signals (`sched_pelt_cfs`, path `/`).
    SchedPeltCfs { time_us: f64, cpu: usize, signals: PeltSignals },
    /// A task group's run queue's signals on `cpu` (`sched_pelt_cfs`, path the group's: `group`
    /// indexes `TraceThreads::groups`).
    SchedPeltGroupCfs { time_us: f64, cpu: usize, group: u32, signals: PeltSignals },
    /// A task group's entity's signals on `cpu` (`sched_pelt_se`, path the group's, comm
    /// `(null)`, pid -1).
    SchedPeltGroupSe { time_us: f64, cpu: usize, group: u32, signals: PeltSignals },
    /// A CPU's capacities, 0..=1024 (`sched_cpu_capacity`): `capacity_orig` at its top OPP,
    /// `capacity` what CFS may use of it, `capacity_curr` at the current frequency.
    SchedCpuCapacity { time_us: f64, cpu: usize, capacity: u32, capacity_orig: u32, capacity_curr: u32 },
    /// The root domain `span` (a CPU bit mask) becomes over-utilised or not (EAS's tipping
    /// point, `sched_overutilized`), emitted on `cpu`.
    SchedOverutilized { time_us: f64, cpu: usize, overutilized: bool, span: u64 },
    /// Frequency change of one CPU (one line per CPU of the cluster), kHz.
    CpuFrequency { time_us: f64, cpu: usize, freq_khz: u32 },
    /// Idle-state entry (`state` = index) or exit (`CPU_IDLE_EXIT`).
    CpuIdle { time_us: f64, cpu: usize, state: u32 },
    /// An atrace counter (`tracing_mark_write: C|pid|name|value`), e.g. cluster power in mW.
    Counter { time_us: f64, cpu: usize, name: String, value: f64 },
    /// A user-space marker `tid` writes to `trace_marker` on `cpu` (`tracing_mark_write:
    /// <text>`), e.g. rt-app's `rtapp_loop: event=start ...`.
    Marker { time_us: f64, cpu: usize, tid: u32, text: String },
}

impl TraceEvent {
    pub fn time_us(&self) -> f64 {
        match self {
            TraceEvent::SchedSwitch { time_us, .. }
            | TraceEvent::SchedWaking { time_us, .. }
            | TraceEvent::SchedWakeup { time_us, .. }
            | TraceEvent::SchedMigrateTask { time_us, .. }
            | TraceEvent::SchedPeltSe { time_us, .. }
            | TraceEvent::SchedPeltCfs { time_us, .. }
            | TraceEvent::SchedPeltGroupCfs { time_us, .. }
            | TraceEvent::SchedPeltGroupSe { time_us, .. }
            | TraceEvent::SchedCpuCapacity { time_us, .. }
            | TraceEvent::SchedOverutilized { time_us, .. }
            | TraceEvent::CpuFrequency { time_us, .. }
            | TraceEvent::CpuIdle { time_us, .. }
            | TraceEvent::Counter { time_us, .. }
            | TraceEvent::Marker { time_us, .. } => *time_us,
        }
    }
}

/// Names of the threads, for the comm fields: `names[tid]`; tid 0 is unused (idle).
#[derive(Debug, Clone, Default)]
pub struct TraceThreads {
    pub names: Vec<String>,
    /// Kernel priority per tid at the start (120 + nice; 99 - sched_priority for real time).
    pub prios: Vec<i32>,
    /// Priority changes (`sched_setscheduler`, `setpriority`) in the order they happened: the
    /// number of events traced before it, the tid and its new priority.
    pub prio_changes: Vec<(usize, u32, i32)>,
    /// Task group paths by index (`sched::group`; 0 is the root, `/`).
    pub groups: Vec<String>,
}

// ------------------------------------------------------------------------------------------------
// ftrace text export
// ------------------------------------------------------------------------------------------------

/// Pseudo pid of the atrace counter lines (`C|0|name|value`). Perfetto keys `C` counters on this
/// tgid; 0 keeps them out of every simulated thread's process.
pub const COUNTER_PID: u32 = 0;

/// Priority printed for the idle task and for threads without an entry in `TraceThreads::prios`.
const DEFAULT_PRIO: i32 = 120;

/// Comm of a thread as printed: every character that is not printable ASCII (spaces, tabs,
/// non-ASCII) becomes `_`, because both Perfetto (splits fields on spaces) and LISA (decodes
/// fields as ASCII) would mis-parse it. An empty or missing name prints as `<...>`, like the
/// kernel does for an unknown comm.
fn sanitize_comm(name: Option<&str>) -> String {
    match name {
        Some(n) if !n.is_empty() => n.chars().map(|c| if c.is_ascii_graphic() { c } else { '_' }).collect(),
        _ => "<...>".to_string(),
    }
}

/// Counter names additionally must not contain `|` (the atrace field separator).
fn sanitize_counter_name(name: &str) -> String {
    if name.is_empty() {
        return "counter".to_string();
    }
    name.chars().map(|c| if c.is_ascii_graphic() && c != '|' { c } else { '_' }).collect()
}

/// A value with at most 3 decimals, trailing zeros dropped (`12.5`, `7`, `0.125`).
fn format_counter_value(value: f64) -> String {
    let mut s = format!("{value:.3}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// A CPU mask as the kernel's `%*pb` prints it for `nbits` CPUs (`bitmap_string`): hex, in
/// comma-separated 32-bit chunks from the highest, the first as wide as its bits need, zero
/// padded (`ff` for 8 CPUs, `0f` for CPUs 0-3 of 8, `3,ffffffff` for 34).
fn cpumask_hex(mask: u64, nbits: usize) -> String {
    let nbits = nbits.clamp(1, 64);
    let mut out = String::new();
    let mut chunk_bits = if nbits.is_multiple_of(32) { 32 } else { nbits % 32 };
    let mut lo = nbits.div_ceil(32) * 32 - 32;
    loop {
        let val = (mask >> lo) & ((1u64 << chunk_bits) - 1);
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("{val:0width$x}", width = chunk_bits.div_ceil(4)));
        if lo == 0 {
            return out;
        }
        lo -= 32;
        chunk_bits = 32;
    }
}

/// A task group's path as LISA's sched_tp prints it (`cfs_rq_tg_path`), spaces and other
/// unprintables as `_`; an unknown index prints as `/`.
fn group_path(threads: &TraceThreads, group: u32) -> String {
    match threads.groups.get(group as usize) {
        Some(p) => p.chars().map(|c| if c.is_ascii_graphic() { c } else { '_' }).collect(),
        None => "/".to_string(),
    }
}

struct Namer<'a> {
    threads: &'a TraceThreads,
    /// Per tid, its priority as of the event being printed.
    prios: Vec<i32>,
    /// The next change of `threads.prio_changes` to apply.
    next_change: usize,
}

impl Namer<'_> {
    /// comm as printed in event bodies; the idle task of `cpu` is `swapper/<cpu>`.
    fn body_comm(&self, tid: u32, cpu: usize) -> String {
        if tid == 0 {
            format!("swapper/{cpu}")
        } else {
            sanitize_comm(self.threads.names.get(tid as usize).map(String::as_str))
        }
    }

    /// comm as printed in the line prefix; the idle task is `<idle>`.
    fn prefix_comm(&self, tid: u32) -> String {
        if tid == 0 {
            "<idle>".to_string()
        } else {
            sanitize_comm(self.threads.names.get(tid as usize).map(String::as_str))
        }
    }

    fn prio(&self, tid: u32) -> i32 {
        if tid == 0 {
            DEFAULT_PRIO
        } else {
            self.prios.get(tid as usize).copied().unwrap_or(DEFAULT_PRIO)
        }
    }

    /// Applies the priority changes made before event number `event` was traced.
    fn catch_up(&mut self, event: usize) {
        while let Some(&(before, tid, prio)) = self.threads.prio_changes.get(self.next_change) {
            if before > event {
                break;
            }
            if let Some(p) = self.prios.get_mut(tid as usize) {
                *p = prio;
            }
            self.next_change += 1;
        }
    }
}

/// Renders `events` as ftrace text in the layout that both Perfetto UI and LISA's
/// `HRTxtTraceParser`/`SysTraceParser` read (shared/reference/ecosystem.md §4, §7):
///
/// ```text
/// # tracer: nop
/// #
/// # entries-in-buffer/entries-written: 4/4   #P:8
/// #
/// #           TASK-PID     CPU#     TIMESTAMP  FUNCTION
/// #              | |         |         |         |
///           <idle>-0     [004]     0.000100: sched_switch:         prev_comm=swapper/4 ...
/// ```
///
/// * Lines are sorted by time (stable: events at the same time keep their input order).
/// * The `comm-pid` prefix is the task current on the line's CPU, tracked from the
///   sched_switch events (`<idle>-0` until the first switch on that CPU).
/// * Timestamps are `time_us / 1e6` printed as `secs.usecs` (rounded to the µs); there is no
///   irq-flags column (LISA rejects lines that have one).
/// * The idle task is printed as `swapper/<cpu>` pid 0 prio 120 in sched_switch bodies, and its
///   prev_state is always `R` (as the kernel prints it for the idle task).
/// * Counters become atrace lines `tracing_mark_write: C|0|<name>|<value>` with the value
///   rounded to 3 decimals; counters whose value is not finite are skipped.
/// * Markers are `tracing_mark_write: <text>` lines of the thread that wrote them.
/// * `ncpus` is printed in the header (`#P:`); events on a CPU >= `ncpus` are still rendered.
pub fn write_ftrace(
    events: &[TraceEvent],
    threads: &TraceThreads,
    ncpus: usize,
    format: TraceFormat,
    out: &mut String,
) {
    use std::fmt::Write as _;

    let mut namer = Namer { threads, prios: threads.prios.clone(), next_change: 0 };
    let mut order: Vec<usize> = (0..events.len())
        .filter(|&i| match &events[i] {
            TraceEvent::Counter { value, .. } => value.is_finite(),
            _ => true,
        })
        .collect();
    // `sort_by` is stable; `total_cmp` keeps NaN times from panicking (they sort last).
    order.sort_by(|&a, &b| events[a].time_us().total_cmp(&events[b].time_us()));

    let n = order.len();
    let raw = format == TraceFormat::TraceCmd;
    // `print`'s first field under trace-cmd: the function that wrote the marker
    let mark_function = if raw { "tracing_mark_write: " } else { "" };
    if raw {
        let _ = writeln!(out, "cpus={ncpus}");
    } else {
        out.push_str("# tracer: nop\n#\n");
        let _ = writeln!(out, "# entries-in-buffer/entries-written: {n}/{n}   #P:{ncpus}");
        out.push_str("#\n");
        out.push_str("#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n");
        out.push_str("#              | |         |         |         |\n");
    }

    let mut current: Vec<u32> = vec![0; ncpus];
    let current_on = |current: &mut Vec<u32>, cpu: usize| -> u32 {
        if cpu >= current.len() {
            current.resize(cpu + 1, 0);
        }
        current[cpu]
    };

    for i in order {
        namer.catch_up(i);
        let ev = &events[i];
        let (cpu, name) = match ev {
            TraceEvent::SchedSwitch { cpu, .. } => (*cpu, "sched_switch"),
            TraceEvent::SchedWaking { waker_cpu, .. } => (*waker_cpu, "sched_waking"),
            TraceEvent::SchedWakeup { cpu, new_task: false, .. } => (*cpu, "sched_wakeup"),
            TraceEvent::SchedWakeup { cpu, new_task: true, .. } => (*cpu, "sched_wakeup_new"),
            TraceEvent::SchedMigrateTask { cpu, .. } => (*cpu, "sched_migrate_task"),
            TraceEvent::SchedPeltSe { cpu, .. } => (*cpu, "sched_pelt_se"),
            TraceEvent::SchedPeltCfs { cpu, .. } | TraceEvent::SchedPeltGroupCfs { cpu, .. } => {
                (*cpu, "sched_pelt_cfs")
            }
            TraceEvent::SchedPeltGroupSe { cpu, .. } => (*cpu, "sched_pelt_se"),
            TraceEvent::SchedCpuCapacity { cpu, .. } => (*cpu, "sched_cpu_capacity"),
            TraceEvent::SchedOverutilized { cpu, .. } => (*cpu, "sched_overutilized"),
            TraceEvent::CpuFrequency { cpu, .. } => (*cpu, "cpu_frequency"),
            TraceEvent::CpuIdle { cpu, .. } => (*cpu, "cpu_idle"),
            // a write to trace_marker is the `print` event, which the kernel's file shows by
            // the function that wrote it and trace-cmd by name, then that function
            TraceEvent::Counter { cpu, .. } | TraceEvent::Marker { cpu, .. } if raw => (*cpu, "print"),
            TraceEvent::Counter { cpu, .. } | TraceEvent::Marker { cpu, .. } => (*cpu, "tracing_mark_write"),
        };
        let running = match ev {
            // The switching-out task is by definition the one current on the CPU.
            TraceEvent::SchedSwitch { prev_tid, .. } => *prev_tid,
            // A marker is written by its thread.
            TraceEvent::Marker { tid, .. } => *tid,
            _ => current_on(&mut current, cpu),
        };

        let t = ev.time_us();
        let us_total = if t.is_finite() && t > 0.0 { t.round() as u64 } else { 0 };
        let (secs, usecs) = (us_total / 1_000_000, us_total % 1_000_000);
        let _ = write!(
            out,
            "{:>16}-{:<5} [{:03}] {:>5}.{:06}: {:<21} ",
            namer.prefix_comm(running),
            running,
            cpu,
            secs,
            usecs,
            format!("{name}:"),
        );

        match ev {
            TraceEvent::SchedSwitch { cpu, prev_tid, prev_state, next_tid, .. } => {
                let (state, arrow) = if raw {
                    (prev_state.raw(*prev_tid).to_string(), " ")
                } else {
                    (prev_state.letters(*prev_tid).to_string(), " ==> ")
                };
                let _ = writeln!(
                    out,
                    "prev_comm={} prev_pid={} prev_prio={} prev_state={state}{arrow}next_comm={} next_pid={} next_prio={}",
                    namer.body_comm(*prev_tid, *cpu),
                    prev_tid,
                    namer.prio(*prev_tid),
                    namer.body_comm(*next_tid, *cpu),
                    next_tid,
                    namer.prio(*next_tid),
                );
                current_on(&mut current, *cpu);
                current[*cpu] = *next_tid;
            }
            TraceEvent::SchedWaking { tid, target_cpu, .. } | TraceEvent::SchedWakeup { tid, target_cpu, .. } => {
                let (comm, prio) = (namer.body_comm(*tid, *target_cpu), namer.prio(*tid));
                // raw: the record's `success` field (always 1 since 4.x) and an unpadded CPU
                let _ = if raw {
                    writeln!(out, "comm={comm} pid={tid} prio={prio} success=1 target_cpu={target_cpu}")
                } else {
                    writeln!(out, "comm={comm} pid={tid} prio={prio} target_cpu={target_cpu:03}")
                };
            }
            TraceEvent::SchedMigrateTask { tid, orig_cpu, dest_cpu, .. } => {
                let _ = writeln!(
                    out,
                    "comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
                    namer.body_comm(*tid, *orig_cpu),
                    tid,
                    namer.prio(*tid),
                    orig_cpu,
                    dest_cpu,
                );
            }
            TraceEvent::SchedPeltSe { cpu, tid, signals, .. } => {
                let comm = namer.body_comm(*tid, *cpu);
                let _ = writeln!(out, "cpu={cpu} path=(null) comm={comm} pid={tid} {signals}");
            }
            TraceEvent::SchedPeltCfs { cpu, signals, .. } => {
                let _ = writeln!(out, "cpu={cpu} path=/ {signals}");
            }
            TraceEvent::SchedPeltGroupCfs { cpu, group, signals, .. } => {
                let _ = writeln!(out, "cpu={cpu} path={} {signals}", group_path(threads, *group));
            }
            TraceEvent::SchedPeltGroupSe { cpu, group, signals, .. } => {
                let _ = writeln!(out, "cpu={cpu} path={} comm=(null) pid=-1 {signals}", group_path(threads, *group));
            }
            TraceEvent::SchedCpuCapacity { cpu, capacity, capacity_orig, capacity_curr, .. } => {
                let _ = writeln!(
                    out,
                    "cpu={cpu} capacity={capacity} capacity_orig={capacity_orig} capacity_curr={capacity_curr}"
                );
            }
            TraceEvent::SchedOverutilized { overutilized, span, .. } => {
                let _ = writeln!(out, "overutilized={} span=0x{}", u8::from(*overutilized), cpumask_hex(*span, ncpus));
            }
            TraceEvent::CpuFrequency { cpu, freq_khz, .. } => {
                let _ = writeln!(out, "state={freq_khz} cpu_id={cpu}");
            }
            TraceEvent::CpuIdle { cpu, state, .. } => {
                let _ = writeln!(out, "state={state} cpu_id={cpu}");
            }
            TraceEvent::Counter { name, value, .. } => {
                let _ = writeln!(
                    out,
                    "{mark_function}C|{}|{}|{}",
                    COUNTER_PID,
                    sanitize_counter_name(name),
                    format_counter_value(*value),
                );
            }
            TraceEvent::Marker { text, .. } => {
                let _ = writeln!(out, "{mark_function}{text}");
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// LISA platform info
// ------------------------------------------------------------------------------------------------

/// Renders the platform as the YAML map LISA loads with
/// `lisa.platforms.platinfo.PlatformInfo.from_yaml_map` (the layout of LISA's own
/// `doc/traces/plat_info.yml` and `lisa-platinfo-extract` output): name, CPU count, each CPU's
/// capacity at its top OPP (`cpu-capacities/orig`, from the core type's DMIPS/MHz and top
/// frequency, as arch_topology normalises them), the frequency domains (one cpufreq policy per
/// cluster) and each CPU's frequencies, kHz ascending. LISA's frequency analysis needs
/// `freq-domains`; its load-tracking analysis reads the capacities.
///
/// CPU numbers are the logical CPUs at boot (logical CPU i on core i); a run that moves
/// logical CPUs onto other cores traces the new capacities as `sched_cpu_capacity`.
/// No `nrg-model`: LISA's `EnergyModel` is a Python object, not plain YAML.
pub fn write_lisa_plat_info(platform: &Platform, out: &mut String) {
    use std::fmt::Write as _;

    let ncpus = platform.ncpus();
    let cluster_of = |cpu: usize| platform.clusters.iter().position(|c| c.cpus.contains(&cpu));
    let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(", ");
    // A JSON string is a YAML double-quoted scalar.
    let name = serde_json::to_string(&platform.name).unwrap_or_else(|_| "\"platform\"".into());

    out.push_str("# LISA PlatformInfo: PlatformInfo.from_yaml_map(path) (lisa.platforms.platinfo)\n");
    out.push_str("platform-info:\n    conf:\n");
    let _ = writeln!(out, "        name: {name}");
    out.push_str("        os: linux\n");
    let _ = writeln!(out, "        cpus-count: {ncpus}");
    out.push_str("        numa-nodes-count: 1\n");
    out.push_str("        cpu-capacities:\n            writeable: false\n            orig:\n");
    for cpu in 0..ncpus {
        if let Some(c) = cluster_of(cpu) {
            let _ = writeln!(out, "                {cpu}: {}", platform.cpu_capacity(c));
        }
    }
    out.push_str("        freq-domains:\n");
    for cluster in &platform.clusters {
        let mut cpus = cluster.cpus.clone();
        cpus.sort_unstable();
        let _ = writeln!(out, "        - [{}]", list(&mut cpus.iter().map(|c| c.to_string())));
    }
    out.push_str("        freqs:\n");
    for cpu in 0..ncpus {
        if let Some(c) = cluster_of(cpu) {
            let mut khz = platform.clusters[c].freqs_khz();
            khz.sort_unstable();
            let _ = writeln!(out, "            {cpu}: [{}]", list(&mut khz.iter().map(|f| f.to_string())));
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Where each thread ran
// ------------------------------------------------------------------------------------------------

/// A stretch of time a thread was the running task of a CPU (between two `sched_switch`es),
/// whatever it did there: its own work, and the interrupts and kernel work charged to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunInterval {
    pub tid: u32,
    pub cpu: usize,
    pub start_us: f64,
    pub end_us: f64,
}

/// The run intervals of every thread from the `sched_switch` events (in time order, stable, as
/// `write_ftrace` prints them), a thread still running at `end_us` closed there. Ordered by
/// start time, then CPU; empty stretches are left out; the idle task (tid 0) has none.
pub fn run_intervals(events: &[TraceEvent], end_us: f64) -> Vec<RunInterval> {
    let mut switches: Vec<(f64, usize, u32)> = events
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::SchedSwitch { time_us, cpu, next_tid, .. } => Some((time_us, cpu, next_tid)),
            _ => None,
        })
        .collect();
    switches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut current: Vec<Option<(u32, f64)>> = Vec::new(); // per CPU: (tid, since)
    let close = |out: &mut Vec<RunInterval>, cpu: usize, running: Option<(u32, f64)>, at_us: f64| {
        if let Some((tid, start_us)) = running {
            if at_us > start_us {
                out.push(RunInterval { tid, cpu, start_us, end_us: at_us });
            }
        }
    };
    for (time_us, cpu, next_tid) in switches {
        if cpu >= current.len() {
            current.resize(cpu + 1, None);
        }
        close(&mut out, cpu, current[cpu].take(), time_us);
        current[cpu] = (next_tid != 0).then_some((next_tid, time_us));
    }
    for (cpu, running) in current.into_iter().enumerate() {
        close(&mut out, cpu, running, end_us);
    }
    out.sort_by(|a, b| a.start_us.total_cmp(&b.start_us).then(a.cpu.cmp(&b.cpu)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threads() -> TraceThreads {
        TraceThreads {
            names: vec![String::new(), "task0".into(), "my worker".into()],
            prios: vec![120, 120, 100],
            prio_changes: vec![],
            groups: vec!["/".into(), "/bg/low".into()],
        }
    }

    fn render(events: &[TraceEvent], ncpus: usize) -> String {
        let mut s = String::new();
        write_ftrace(events, &threads(), ncpus, TraceFormat::Ftrace, &mut s);
        s
    }

    fn body_lines(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn header_is_nop_tracer_without_irq_flag_columns() {
        let text = render(&[], 8);
        assert_eq!(
            text,
            "# tracer: nop\n\
             #\n\
             # entries-in-buffer/entries-written: 0/0   #P:8\n\
             #\n\
             #           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n\
             #              | |         |         |         |\n"
        );
    }

    /// Lines 1, 3 and 4 of the sample in ecosystem.md §7, byte for byte (line 2 of the sample
    /// names `<idle>-0` as current although task0 was switched in, so it is checked separately
    /// with the tracked prefix).
    #[test]
    fn matches_the_reference_sample_layout() {
        let events = vec![
            TraceEvent::SchedSwitch {
                time_us: 100_000_100.0,
                cpu: 4,
                prev_tid: 0,
                prev_state: PrevState::Runnable,
                next_tid: 1,
            },
            TraceEvent::CpuFrequency { time_us: 100_000_150.0, cpu: 4, freq_khz: 1_800_000 },
            TraceEvent::SchedSwitch {
                time_us: 100_010_100.0,
                cpu: 4,
                prev_tid: 1,
                prev_state: PrevState::Sleeping,
                next_tid: 0,
            },
            TraceEvent::CpuIdle { time_us: 100_010_200.0, cpu: 4, state: 0 },
        ];
        let mut th = threads();
        th.names.resize(1002, String::new());
        th.prios.resize(1002, 120);
        th.names[1001] = "task0".into();
        let events: Vec<TraceEvent> = events
            .into_iter()
            .map(|e| match e {
                TraceEvent::SchedSwitch { time_us, cpu, prev_tid, prev_state, next_tid } => {
                    let f = |t: u32| if t == 1 { 1001 } else { t };
                    TraceEvent::SchedSwitch { time_us, cpu, prev_tid: f(prev_tid), prev_state, next_tid: f(next_tid) }
                }
                e => e,
            })
            .collect();
        let mut text = String::new();
        write_ftrace(&events, &th, 8, TraceFormat::Ftrace, &mut text);
        let lines = body_lines(&text);
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            "          <idle>-0     [004]   100.000100: sched_switch:         prev_comm=swapper/4 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=task0 next_pid=1001 next_prio=120"
        );
        assert_eq!(lines[1], "           task0-1001  [004]   100.000150: cpu_frequency:        state=1800000 cpu_id=4");
        assert_eq!(
            lines[2],
            "           task0-1001  [004]   100.010100: sched_switch:         prev_comm=task0 prev_pid=1001 prev_prio=120 prev_state=S ==> next_comm=swapper/4 next_pid=0 next_prio=120"
        );
        assert_eq!(lines[3], "          <idle>-0     [004]   100.010200: cpu_idle:             state=0 cpu_id=4");
    }

    /// The trace-cmd layout (`trace-cmd report -R`): a `cpus=` line, raw fields, markers as
    /// `print` events from tracing_mark_write; everything else as in the kernel's file.
    #[test]
    fn trace_cmd_layout_has_raw_fields_and_print_events() {
        let events = vec![
            TraceEvent::SchedSwitch {
                time_us: 10.0,
                cpu: 1,
                prev_tid: 0,
                prev_state: PrevState::Runnable,
                next_tid: 1,
            },
            TraceEvent::Marker { time_us: 11.0, cpu: 1, tid: 1, text: "rtapp_loop: event=start thread_loop=0".into() },
            TraceEvent::Counter { time_us: 12.0, cpu: 1, name: "power_big_mw".into(), value: 1.5 },
            TraceEvent::SchedWaking { time_us: 13.0, waker_cpu: 1, tid: 2, target_cpu: 0 },
            TraceEvent::SchedWakeup { time_us: 14.0, cpu: 0, tid: 2, target_cpu: 0, new_task: false },
            TraceEvent::SchedSwitch {
                time_us: 20.0,
                cpu: 1,
                prev_tid: 1,
                prev_state: PrevState::Runnable,
                next_tid: 2,
            },
            TraceEvent::SchedSwitch {
                time_us: 30.0,
                cpu: 1,
                prev_tid: 2,
                prev_state: PrevState::Sleeping,
                next_tid: 1,
            },
            TraceEvent::SchedSwitch { time_us: 40.0, cpu: 1, prev_tid: 1, prev_state: PrevState::Dead, next_tid: 0 },
            TraceEvent::CpuFrequency { time_us: 50.0, cpu: 1, freq_khz: 800_000 },
        ];
        let mut text = String::new();
        write_ftrace(&events, &threads(), 2, TraceFormat::TraceCmd, &mut text);
        let want = [
            "cpus=2",
            "          <idle>-0     [001]     0.000010: sched_switch:         prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=0 next_comm=task0 next_pid=1 next_prio=120",
            "           task0-1     [001]     0.000011: print:                tracing_mark_write: rtapp_loop: event=start thread_loop=0",
            "           task0-1     [001]     0.000012: print:                tracing_mark_write: C|0|power_big_mw|1.5",
            "           task0-1     [001]     0.000013: sched_waking:         comm=my_worker pid=2 prio=100 success=1 target_cpu=0",
            "          <idle>-0     [000]     0.000014: sched_wakeup:         comm=my_worker pid=2 prio=100 success=1 target_cpu=0",
            "           task0-1     [001]     0.000020: sched_switch:         prev_comm=task0 prev_pid=1 prev_prio=120 prev_state=256 next_comm=my_worker next_pid=2 next_prio=100",
            "       my_worker-2     [001]     0.000030: sched_switch:         prev_comm=my_worker prev_pid=2 prev_prio=100 prev_state=1 next_comm=task0 next_pid=1 next_prio=120",
            "           task0-1     [001]     0.000040: sched_switch:         prev_comm=task0 prev_pid=1 prev_prio=120 prev_state=16 next_comm=swapper/1 next_pid=0 next_prio=120",
            "          <idle>-0     [001]     0.000050: cpu_frequency:        state=800000 cpu_id=1",
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), want);
        assert_eq!(TraceFormat::parse("trace-cmd"), Ok(TraceFormat::TraceCmd));
        assert!(TraceFormat::parse("dat").unwrap_err().contains("give ftrace or trace-cmd"));
    }

    #[test]
    fn renders_exact_lines_sorted_with_tracked_current_task() {
        // Deliberately out of order; equal times keep their input order.
        let events = vec![
            TraceEvent::Counter { time_us: 2500.0, cpu: 1, name: "power big|mw".into(), value: 1234.5678 },
            TraceEvent::SchedSwitch {
                time_us: 1000.0,
                cpu: 0,
                prev_tid: 0,
                prev_state: PrevState::Runnable,
                next_tid: 1,
            },
            TraceEvent::SchedWaking { time_us: 1500.4, waker_cpu: 0, tid: 2, target_cpu: 1 },
            TraceEvent::CpuIdle { time_us: 1600.0, cpu: 1, state: CPU_IDLE_EXIT },
            TraceEvent::SchedSwitch {
                time_us: 1600.0,
                cpu: 1,
                prev_tid: 0,
                prev_state: PrevState::Runnable,
                next_tid: 2,
            },
            TraceEvent::CpuFrequency { time_us: 2000.0, cpu: 0, freq_khz: 1_400_000 },
            TraceEvent::CpuFrequency { time_us: 2000.0, cpu: 1, freq_khz: 1_400_000 },
            TraceEvent::SchedSwitch {
                time_us: 3_000_000.0,
                cpu: 0,
                prev_tid: 1,
                prev_state: PrevState::Runnable,
                next_tid: 2,
            },
            TraceEvent::SchedSwitch {
                time_us: 3_000_000.0,
                cpu: 1,
                prev_tid: 2,
                prev_state: PrevState::Sleeping,
                next_tid: 0,
            },
            TraceEvent::CpuIdle { time_us: 3_000_001.0, cpu: 1, state: 1 },
            TraceEvent::SchedSwitch {
                time_us: 4_000_000.0,
                cpu: 0,
                prev_tid: 2,
                prev_state: PrevState::Dead,
                next_tid: 0,
            },
            TraceEvent::Counter { time_us: 4_000_000.0, cpu: 0, name: "temp".into(), value: f64::NAN },
            TraceEvent::Counter { time_us: 4_000_000.0, cpu: 0, name: "energy".into(), value: -0.0001 },
        ];
        let text = render(&events, 2);
        let expected = "\
# tracer: nop
#
# entries-in-buffer/entries-written: 12/12   #P:2
#
#           TASK-PID     CPU#     TIMESTAMP  FUNCTION
#              | |         |         |         |
          <idle>-0     [000]     0.001000: sched_switch:         prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=task0 next_pid=1 next_prio=120
           task0-1     [000]     0.001500: sched_waking:         comm=my_worker pid=2 prio=100 target_cpu=001
          <idle>-0     [001]     0.001600: cpu_idle:             state=4294967295 cpu_id=1
          <idle>-0     [001]     0.001600: sched_switch:         prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my_worker next_pid=2 next_prio=100
           task0-1     [000]     0.002000: cpu_frequency:        state=1400000 cpu_id=0
       my_worker-2     [001]     0.002000: cpu_frequency:        state=1400000 cpu_id=1
       my_worker-2     [001]     0.002500: tracing_mark_write:   C|0|power_big_mw|1234.568
           task0-1     [000]     3.000000: sched_switch:         prev_comm=task0 prev_pid=1 prev_prio=120 prev_state=R+ ==> next_comm=my_worker next_pid=2 next_prio=100
       my_worker-2     [001]     3.000000: sched_switch:         prev_comm=my_worker prev_pid=2 prev_prio=100 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0     [001]     3.000001: cpu_idle:             state=1 cpu_id=1
       my_worker-2     [000]     4.000000: sched_switch:         prev_comm=my_worker prev_pid=2 prev_prio=100 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [000]     4.000000: tracing_mark_write:   C|0|energy|0
";
        assert_eq!(text, expected);
    }

    #[test]
    fn unknown_threads_long_pids_and_big_times() {
        let events = vec![
            TraceEvent::SchedSwitch {
                time_us: 123_456_789_012.4,
                cpu: 12,
                prev_tid: 0,
                prev_state: PrevState::Runnable,
                next_tid: 123_456,
            },
            TraceEvent::CpuFrequency { time_us: -5.0, cpu: 3, freq_khz: 200_000 },
        ];
        let lines: Vec<String> = body_lines(&render(&events, 4)).into_iter().map(String::from).collect();
        assert_eq!(
            lines,
            vec![
                "          <idle>-0     [003]     0.000000: cpu_frequency:        state=200000 cpu_id=3".to_string(),
                "          <idle>-0     [012] 123456.789012: sched_switch:         prev_comm=swapper/12 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=<...> next_pid=123456 next_prio=120".to_string(),
            ]
        );
    }

    /// The scheduler events, each as the kernel's TP_printk (sched.h) or LISA's sched_tp module
    /// prints it, in the order the engine emits a wake-up with a migration.
    #[test]
    fn scheduler_events_print_as_the_kernel_tracepoints() {
        let pelt = PeltSignals { load: 1000, runnable: 1017, util: 377, update_time_ns: 1_049_600 };
        let events = vec![
            TraceEvent::SchedCpuCapacity {
                time_us: 0.0,
                cpu: 1,
                capacity: 377,
                capacity_orig: 377,
                capacity_curr: 188,
            },
            TraceEvent::SchedWakeup { time_us: 5.0, cpu: 0, tid: 1, target_cpu: 0, new_task: true },
            TraceEvent::SchedWaking { time_us: 1000.0, waker_cpu: 0, tid: 2, target_cpu: 0 },
            TraceEvent::SchedMigrateTask { time_us: 1000.0, cpu: 0, tid: 2, orig_cpu: 0, dest_cpu: 1 },
            TraceEvent::SchedWakeup { time_us: 1000.0, cpu: 1, tid: 2, target_cpu: 1, new_task: false },
            TraceEvent::SchedPeltSe { time_us: 1050.0, cpu: 1, tid: 2, signals: pelt },
            TraceEvent::SchedPeltCfs { time_us: 1050.0, cpu: 1, signals: PeltSignals { load: 2000, ..pelt } },
            TraceEvent::SchedPeltGroupCfs { time_us: 1050.0, cpu: 1, group: 1, signals: pelt },
            TraceEvent::SchedPeltGroupSe { time_us: 1050.0, cpu: 1, group: 1, signals: pelt },
            TraceEvent::SchedOverutilized { time_us: 1100.0, cpu: 1, overutilized: true, span: 0b11 },
            TraceEvent::SchedOverutilized { time_us: 1200.0, cpu: 1, overutilized: false, span: 0b11 },
        ];
        let lines: Vec<String> = body_lines(&render(&events, 2)).into_iter().map(String::from).collect();
        let want = [
            "          <idle>-0     [001]     0.000000: sched_cpu_capacity:   cpu=1 capacity=377 capacity_orig=377 capacity_curr=188",
            "          <idle>-0     [000]     0.000005: sched_wakeup_new:     comm=task0 pid=1 prio=120 target_cpu=000",
            "          <idle>-0     [000]     0.001000: sched_waking:         comm=my_worker pid=2 prio=100 target_cpu=000",
            "          <idle>-0     [000]     0.001000: sched_migrate_task:   comm=my_worker pid=2 prio=100 orig_cpu=0 dest_cpu=1",
            "          <idle>-0     [001]     0.001000: sched_wakeup:         comm=my_worker pid=2 prio=100 target_cpu=001",
            "          <idle>-0     [001]     0.001050: sched_pelt_se:        cpu=1 path=(null) comm=my_worker pid=2 load=1000 runnable=1017 util=377 update_time=1049600",
            "          <idle>-0     [001]     0.001050: sched_pelt_cfs:       cpu=1 path=/ load=2000 runnable=1017 util=377 update_time=1049600",
            "          <idle>-0     [001]     0.001050: sched_pelt_cfs:       cpu=1 path=/bg/low load=1000 runnable=1017 util=377 update_time=1049600",
            "          <idle>-0     [001]     0.001050: sched_pelt_se:        cpu=1 path=/bg/low comm=(null) pid=-1 load=1000 runnable=1017 util=377 update_time=1049600",
            "          <idle>-0     [001]     0.001100: sched_overutilized:   overutilized=1 span=0x3",
            "          <idle>-0     [001]     0.001200: sched_overutilized:   overutilized=0 span=0x3",
        ];
        assert_eq!(lines, want);
    }

    #[test]
    fn cpu_masks_print_as_bitmap_string() {
        assert_eq!(cpumask_hex(0xff, 8), "ff");
        assert_eq!(cpumask_hex(0x0f, 8), "0f");
        assert_eq!(cpumask_hex(0x3, 2), "3");
        assert_eq!(cpumask_hex(0x3f, 6), "3f");
        assert_eq!(cpumask_hex(0x0001, 16), "0001");
        assert_eq!(cpumask_hex(u32::MAX as u64, 32), "ffffffff");
        assert_eq!(cpumask_hex((1 << 34) - 1, 34), "3,ffffffff");
        assert_eq!(cpumask_hex(1 << 33, 40), "02,00000000");
        assert_eq!(cpumask_hex(u64::MAX, 64), "ffffffff,ffffffff");
    }

    #[test]
    fn lisa_plat_info_lists_capacities_domains_and_frequencies() {
        let p = Platform::builtin("exynos5422").unwrap();
        let mut text = String::new();
        write_lisa_plat_info(&p, &mut text);
        let little = p.cluster_index("little").unwrap();
        let big = p.cluster_index("big").unwrap();
        let (cap_l, cap_b) = (p.cpu_capacity(little), p.cpu_capacity(big));
        assert_eq!(cap_b, 1024);
        let freqs = |c: usize| p.clusters[c].freqs_khz().iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ");
        let mut want = String::from(
            "# LISA PlatformInfo: PlatformInfo.from_yaml_map(path) (lisa.platforms.platinfo)\n\
             platform-info:\n    conf:\n        name: \"exynos5422\"\n        os: linux\n\
             \x20       cpus-count: 8\n        numa-nodes-count: 1\n        cpu-capacities:\n\
             \x20           writeable: false\n            orig:\n",
        );
        for cpu in 0..8 {
            want += &format!("                {cpu}: {}\n", if cpu < 4 { cap_l } else { cap_b });
        }
        want += "        freq-domains:\n        - [0, 1, 2, 3]\n        - [4, 5, 6, 7]\n        freqs:\n";
        for cpu in 0..8 {
            want += &format!("            {cpu}: [{}]\n", freqs(if cpu < 4 { little } else { big }));
        }
        assert_eq!(text, want);
    }

    #[test]
    fn counter_values_have_at_most_three_decimals() {
        assert_eq!(format_counter_value(12.5), "12.5");
        assert_eq!(format_counter_value(7.0), "7");
        assert_eq!(format_counter_value(0.125), "0.125");
        assert_eq!(format_counter_value(0.1234), "0.123");
        assert_eq!(format_counter_value(-2.0006), "-2.001");
        assert_eq!(format_counter_value(-0.0004), "0");
        assert_eq!(format_counter_value(100.0), "100");
        assert_eq!(sanitize_counter_name("a b|c\td"), "a_b_c_d");
        assert_eq!(sanitize_comm(Some("wörker 1")), "w_rker_1");
        assert_eq!(sanitize_comm(Some("")), "<...>");
    }

    // --- round trip ------------------------------------------------------------------------

    /// A line parsed back: prefix (comm, pid, cpu, time in µs) and the event.
    #[derive(Debug)]
    struct Parsed {
        comm: String,
        pid: u32,
        cpu: usize,
        time_us: u64,
        event: String,
        fields: Vec<(String, String)>,
    }

    /// Minimal parser of the layout written above: `comm-pid [cpu] secs.usecs: event: body`.
    fn parse_line(line: &str) -> Parsed {
        let open = line.find(" [").expect("cpu field");
        let (task, rest) = line.split_at(open);
        let task = task.trim_start();
        let dash = task.rfind('-').expect("comm-pid");
        let comm = task[..dash].to_string();
        let pid = task[dash + 1..].trim_end().parse().expect("pid");
        let close = rest.find(']').expect("]");
        let cpu = rest[2..close].parse().expect("cpu");
        let rest = rest[close + 1..].trim_start();
        let colon = rest.find(": ").expect("timestamp");
        let (secs, usecs) = rest[..colon].split_once('.').expect("secs.usecs");
        assert_eq!(usecs.len(), 6, "6 decimals in {line}");
        let time_us = secs.parse::<u64>().unwrap() * 1_000_000 + usecs.parse::<u64>().unwrap();
        let rest = &rest[colon + 2..];
        let colon = rest.find(':').expect("event name");
        let event = rest[..colon].to_string();
        let body = rest[colon + 1..].trim_start();
        let fields = if event == "tracing_mark_write" {
            vec![("buf".to_string(), body.to_string())]
        } else {
            body.split(' ')
                .filter(|t| *t != "==>")
                .map(|t| {
                    let (k, v) = t.split_once('=').expect("key=value");
                    (k.to_string(), v.to_string())
                })
                .collect()
        };
        Parsed { comm, pid, cpu, time_us, event, fields }
    }

    fn field<'a>(p: &'a Parsed, k: &str) -> &'a str {
        &p.fields.iter().find(|(key, _)| key == k).unwrap_or_else(|| panic!("{k} in {p:?}")).1
    }

    fn num<T: std::str::FromStr>(p: &Parsed, k: &str) -> T
    where
        T::Err: std::fmt::Debug,
    {
        field(p, k).parse().unwrap()
    }

    fn to_event(p: &Parsed) -> TraceEvent {
        let time_us = p.time_us as f64;
        match p.event.as_str() {
            "sched_switch" => TraceEvent::SchedSwitch {
                time_us,
                cpu: p.cpu,
                prev_tid: num(p, "prev_pid"),
                prev_state: match field(p, "prev_state") {
                    "R" | "R+" => PrevState::Runnable,
                    "S" => PrevState::Sleeping,
                    "X" => PrevState::Dead,
                    s => panic!("prev_state {s}"),
                },
                next_tid: num(p, "next_pid"),
            },
            "sched_waking" => TraceEvent::SchedWaking {
                time_us,
                waker_cpu: p.cpu,
                tid: num(p, "pid"),
                target_cpu: num(p, "target_cpu"),
            },
            "sched_wakeup" | "sched_wakeup_new" => TraceEvent::SchedWakeup {
                time_us,
                cpu: p.cpu,
                tid: num(p, "pid"),
                target_cpu: num(p, "target_cpu"),
                new_task: p.event == "sched_wakeup_new",
            },
            "sched_migrate_task" => TraceEvent::SchedMigrateTask {
                time_us,
                cpu: p.cpu,
                tid: num(p, "pid"),
                orig_cpu: num(p, "orig_cpu"),
                dest_cpu: num(p, "dest_cpu"),
            },
            "sched_pelt_se" | "sched_pelt_cfs" => {
                assert_eq!(num::<usize>(p, "cpu"), p.cpu);
                let signals = PeltSignals {
                    load: num(p, "load"),
                    runnable: num(p, "runnable"),
                    util: num(p, "util"),
                    update_time_ns: num(p, "update_time"),
                };
                if p.event == "sched_pelt_se" {
                    assert_eq!(field(p, "path"), "(null)");
                    TraceEvent::SchedPeltSe { time_us, cpu: p.cpu, tid: num(p, "pid"), signals }
                } else {
                    assert_eq!(field(p, "path"), "/");
                    TraceEvent::SchedPeltCfs { time_us, cpu: p.cpu, signals }
                }
            }
            "sched_cpu_capacity" => {
                assert_eq!(num::<usize>(p, "cpu"), p.cpu);
                TraceEvent::SchedCpuCapacity {
                    time_us,
                    cpu: p.cpu,
                    capacity: num(p, "capacity"),
                    capacity_orig: num(p, "capacity_orig"),
                    capacity_curr: num(p, "capacity_curr"),
                }
            }
            "sched_overutilized" => TraceEvent::SchedOverutilized {
                time_us,
                cpu: p.cpu,
                overutilized: num::<u8>(p, "overutilized") == 1,
                span: u64::from_str_radix(field(p, "span").strip_prefix("0x").unwrap(), 16).unwrap(),
            },
            "cpu_frequency" => {
                assert_eq!(num::<usize>(p, "cpu_id"), p.cpu);
                TraceEvent::CpuFrequency { time_us, cpu: p.cpu, freq_khz: num(p, "state") }
            }
            "cpu_idle" => {
                assert_eq!(num::<usize>(p, "cpu_id"), p.cpu);
                TraceEvent::CpuIdle { time_us, cpu: p.cpu, state: num(p, "state") }
            }
            "tracing_mark_write" => {
                let parts: Vec<&str> = field(p, "buf").split('|').collect();
                assert_eq!(parts.len(), 4, "{p:?}");
                assert_eq!(parts[0], "C");
                assert_eq!(parts[1], "0");
                TraceEvent::Counter {
                    time_us,
                    cpu: p.cpu,
                    name: parts[2].to_string(),
                    value: parts[3].parse().unwrap(),
                }
            }
            e => panic!("unexpected event {e}"),
        }
    }

    /// Deterministic pseudo-random schedule on `ncpus` CPUs with consistent switches.
    fn random_schedule(ncpus: usize, nthreads: u32, n: usize) -> Vec<TraceEvent> {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = move |m: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let mut current = vec![0u32; ncpus];
        let mut events = Vec::new();
        let mut t = 0.0f64;
        for _ in 0..n {
            t += rnd(5000) as f64 + 1.0; // distinct integer µs
            let cpu = rnd(ncpus as u64) as usize;
            match rnd(11) {
                0 => {
                    let next = if current[cpu] == 0 { 1 + rnd(nthreads as u64) as u32 } else { 0 };
                    let prev_state = match (current[cpu], rnd(3)) {
                        (0, _) | (_, 0) => PrevState::Runnable,
                        (_, 1) => PrevState::Sleeping,
                        _ => PrevState::Dead,
                    };
                    events.push(TraceEvent::SchedSwitch {
                        time_us: t,
                        cpu,
                        prev_tid: current[cpu],
                        prev_state,
                        next_tid: next,
                    });
                    current[cpu] = next;
                }
                1 => events.push(TraceEvent::SchedWaking {
                    time_us: t,
                    waker_cpu: cpu,
                    tid: 1 + rnd(nthreads as u64) as u32,
                    target_cpu: rnd(ncpus as u64) as usize,
                }),
                2 => events.push(TraceEvent::CpuFrequency {
                    time_us: t,
                    cpu,
                    freq_khz: 200_000 + 100_000 * rnd(12) as u32,
                }),
                3 => events.push(TraceEvent::CpuIdle {
                    time_us: t,
                    cpu,
                    state: if rnd(2) == 0 { CPU_IDLE_EXIT } else { rnd(3) as u32 },
                }),
                4 => events.push(TraceEvent::Counter {
                    time_us: t,
                    cpu,
                    name: format!("cluster{}_power_mw", rnd(2)),
                    value: rnd(10_000_000) as f64 / 1000.0,
                }),
                5 => events.push(TraceEvent::SchedWakeup {
                    time_us: t,
                    cpu,
                    tid: 1 + rnd(nthreads as u64) as u32,
                    target_cpu: cpu,
                    new_task: rnd(2) == 0,
                }),
                6 => events.push(TraceEvent::SchedMigrateTask {
                    time_us: t,
                    cpu,
                    tid: 1 + rnd(nthreads as u64) as u32,
                    orig_cpu: rnd(ncpus as u64) as usize,
                    dest_cpu: rnd(ncpus as u64) as usize,
                }),
                7 | 8 => {
                    let signals = PeltSignals {
                        load: rnd(90_000),
                        runnable: rnd(1024),
                        util: rnd(1025),
                        update_time_ns: (t as u64 * 1000) & !1023,
                    };
                    events.push(if rnd(2) == 0 {
                        TraceEvent::SchedPeltSe { time_us: t, cpu, tid: 1 + rnd(nthreads as u64) as u32, signals }
                    } else {
                        TraceEvent::SchedPeltCfs { time_us: t, cpu, signals }
                    })
                }
                9 => events.push(TraceEvent::SchedCpuCapacity {
                    time_us: t,
                    cpu,
                    capacity: 1024,
                    capacity_orig: 1024,
                    capacity_curr: 200 + rnd(825) as u32,
                }),
                _ => events.push(TraceEvent::SchedOverutilized {
                    time_us: t,
                    cpu,
                    overutilized: rnd(2) == 0,
                    span: 1 + rnd((1 << ncpus) - 1),
                }),
            }
        }
        events
    }

    #[test]
    fn round_trip_recovers_every_event() {
        let ncpus = 8;
        let nthreads = 6;
        let mut events = random_schedule(ncpus, nthreads, 2000);
        // Shuffle deterministically (reverse halves) to exercise the sort.
        let half = events.len() / 2;
        events[..half].reverse();
        let th = TraceThreads {
            names: (0..=nthreads).map(|i| format!("thread {i}")).collect(),
            prios: (0..=nthreads as i32).map(|i| 100 + i).collect(),
            prio_changes: vec![],
            groups: vec![],
        };
        let mut text = String::new();
        write_ftrace(&events, &th, ncpus, TraceFormat::Ftrace, &mut text);

        let parsed: Vec<Parsed> = body_lines(&text).into_iter().map(parse_line).collect();
        let mut expected = events.clone();
        expected.sort_by(|a, b| a.time_us().total_cmp(&b.time_us()));
        assert_eq!(parsed.len(), expected.len());

        let mut current = vec![0u32; ncpus];
        for (p, want) in parsed.iter().zip(&expected) {
            // Prefix = task current on that CPU.
            assert_eq!(p.pid, current[p.cpu], "prefix of {p:?}");
            let want_comm = if p.pid == 0 { "<idle>".to_string() } else { format!("thread_{}", p.pid) };
            assert_eq!(p.comm, want_comm);
            let got = to_event(p);
            assert_eq!(&got, want);
            match want {
                TraceEvent::SchedSwitch { cpu, prev_tid, next_tid, .. } => {
                    let pc = field(p, "prev_comm");
                    if *prev_tid == 0 {
                        assert_eq!(pc, format!("swapper/{cpu}"));
                        assert_eq!(field(p, "prev_prio"), "120");
                    } else {
                        assert_eq!(pc, format!("thread_{prev_tid}"));
                        assert_eq!(num::<i32>(p, "prev_prio"), 100 + *prev_tid as i32);
                    }
                    if *next_tid != 0 {
                        assert_eq!(num::<i32>(p, "next_prio"), 100 + *next_tid as i32);
                    }
                    current[*cpu] = *next_tid;
                }
                TraceEvent::SchedWaking { tid, .. } => {
                    assert_eq!(field(p, "comm"), format!("thread_{tid}"));
                    assert_eq!(field(p, "target_cpu").len(), 3);
                }
                _ => {}
            }
        }
        // Header count matches.
        assert!(text.contains(&format!("# entries-in-buffer/entries-written: {0}/{0}   #P:8\n", expected.len())));
    }

    fn switch(time_us: f64, cpu: usize, prev_tid: u32, next_tid: u32) -> TraceEvent {
        TraceEvent::SchedSwitch { time_us, cpu, prev_tid, prev_state: PrevState::Runnable, next_tid }
    }

    #[test]
    fn run_intervals_follow_the_switches_of_each_cpu() {
        // out of time order on purpose, with a frequency event in between (ignored); thread 1
        // runs on CPU 0, is preempted by 2, comes back on CPU 1 and runs to the end; CPU 1
        // switches 2 in and out at the same time (an empty stretch: left out)
        let events = [
            switch(30.0, 0, 2, 0),
            switch(10.0, 0, 1, 2),
            TraceEvent::CpuFrequency { time_us: 15.0, cpu: 0, freq_khz: 200_000 },
            switch(0.0, 0, 0, 1),
            switch(20.0, 1, 0, 2),
            switch(20.0, 1, 2, 1),
        ];
        let got = run_intervals(&events, 50.0);
        let want = [
            RunInterval { tid: 1, cpu: 0, start_us: 0.0, end_us: 10.0 },
            RunInterval { tid: 2, cpu: 0, start_us: 10.0, end_us: 30.0 },
            RunInterval { tid: 1, cpu: 1, start_us: 20.0, end_us: 50.0 },
        ];
        assert_eq!(got, want);
        assert!(run_intervals(&[], 50.0).is_empty());
    }
}
