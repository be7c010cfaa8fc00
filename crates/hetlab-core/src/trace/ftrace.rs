//! The events as ftrace text, in two layouts ([`TraceFormat`]). `ftrace`, the kernel's `trace`
//! file, is the one Perfetto UI and LISA's `HRTxtTraceParser` both open (shared/reference/
//! ecosystem.md §4 and §7): a `# tracer: nop` header, then trace-cmd-report-style lines
//! *without* the irq-flags column, timestamps in seconds with 6 decimals. `trace-cmd` is what
//! `trace-cmd report -R` prints, what LISA's `TxtTraceParser` reads: a `cpus=N` first line, the
//! same line heads, raw event fields (`sched_switch`'s `prev_state` a number, the wake-ups'
//! `success=1`), and user-space markers as the `print` event (`print: tracing_mark_write:
//! <text>`), so LISA turns rt-app's markers into its `userspace@rtapp_*` events itself. Event
//! bodies are otherwise the kernel's `TP_printk` output: `sched_switch`, `sched_waking`,
//! `sched_wakeup`, `sched_wakeup_new` and `sched_migrate_task` as include/trace/events/sched.h
//! prints them, `cpu_frequency` and `cpu_idle` as include/trace/events/power.h does, and the
//! scheduler signals LISA's analyses read (`sched_pelt_se`, `sched_pelt_cfs`,
//! `sched_cpu_capacity`, `sched_overutilized`) as LISA's own `sched_tp` kernel module prints
//! them (lisa/_assets/kmodules/sched_tp/ftrace_events.h in lisa-linux 3.1.0, the version the
//! tests pin).

use std::fmt::Write as _;

use super::fields::{cpumask_hex, format_counter_value, group_path, sanitize_comm, sanitize_counter_name};
use super::{TraceEvent, TraceThreads};

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

/// Pseudo pid of the atrace counter lines (`C|0|name|value`). Perfetto keys `C` counters on this
/// tgid; 0 keeps them out of every simulated thread's process.
pub const COUNTER_PID: u32 = 0;

/// Priority printed for the idle task and for threads without an entry in `TraceThreads::prios`.
const DEFAULT_PRIO: i32 = 120;

/// The comms and priorities of the threads as of the event being printed.
pub(super) struct Namer<'a> {
    threads: &'a TraceThreads,
    /// Per tid, its priority as of the event being printed.
    prios: Vec<i32>,
    /// The next change of `threads.prio_changes` to apply.
    next_change: usize,
}

impl<'a> Namer<'a> {
    /// The threads' names and priorities at the start of the trace.
    pub(super) fn new(threads: &'a TraceThreads) -> Namer<'a> {
        Namer { threads, prios: threads.prios.clone(), next_change: 0 }
    }
}

impl Namer<'_> {
    /// comm as printed in event bodies; the idle task of `cpu` is `swapper/<cpu>`.
    pub(super) fn body_comm(&self, tid: u32, cpu: usize) -> String {
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

    pub(super) fn prio(&self, tid: u32) -> i32 {
        if tid == 0 {
            DEFAULT_PRIO
        } else {
            self.prios.get(tid as usize).copied().unwrap_or(DEFAULT_PRIO)
        }
    }

    /// Applies the priority changes made before event number `event` was traced.
    pub(super) fn catch_up(&mut self, event: usize) {
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
    let mut namer = Namer { threads, prios: threads.prios.clone(), next_change: 0 };
    let order = printed_order(events);
    let raw = format == TraceFormat::TraceCmd;
    write_header(out, format, order.len(), ncpus);
    let mut current = CurrentTasks(vec![0; ncpus]);
    for i in order {
        namer.catch_up(i);
        let ev = &events[i];
        let (cpu, name) = event_name(ev, raw);
        let running = match ev {
            // The switching-out task is by definition the one current on the CPU.
            TraceEvent::SchedSwitch { prev_tid, .. } => *prev_tid,
            // A marker is written by its thread.
            TraceEvent::Marker { tid, .. } => *tid,
            _ => current.on(cpu),
        };
        write_line_head(out, &namer.prefix_comm(running), running, cpu, ev.time_us(), name);
        write_body(out, ev, &namer, ncpus, raw);
        if let TraceEvent::SchedSwitch { cpu, next_tid, .. } = ev {
            current.set(*cpu, *next_tid);
        }
    }
}

/// The events to print, by index: counters whose value is not finite are left out, the rest
/// sorted by time. `sort_by` is stable; `total_cmp` keeps NaN times from panicking (they sort
/// last).
pub(super) fn printed_order(events: &[TraceEvent]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..events.len())
        .filter(|&i| match &events[i] {
            TraceEvent::Counter { value, .. } => value.is_finite(),
            _ => true,
        })
        .collect();
    order.sort_by(|&a, &b| events[a].time_us().total_cmp(&events[b].time_us()));
    order
}

/// The lines before the events: trace-cmd's `cpus=`, or the kernel file's `nop` tracer header
/// with the entry count `n`.
fn write_header(out: &mut String, format: TraceFormat, n: usize, ncpus: usize) {
    if format == TraceFormat::TraceCmd {
        let _ = writeln!(out, "cpus={ncpus}");
    } else {
        out.push_str("# tracer: nop\n#\n");
        let _ = writeln!(out, "# entries-in-buffer/entries-written: {n}/{n}   #P:{ncpus}");
        out.push_str("#\n");
        out.push_str("#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n");
        out.push_str("#              | |         |         |         |\n");
    }
}

/// The task current on each CPU, from the `sched_switch`es printed so far (the idle task, 0,
/// until the first); CPUs beyond the header's count are added as events name them.
struct CurrentTasks(Vec<u32>);

impl CurrentTasks {
    fn on(&mut self, cpu: usize) -> u32 {
        if cpu >= self.0.len() {
            self.0.resize(cpu + 1, 0);
        }
        self.0[cpu]
    }

    fn set(&mut self, cpu: usize, tid: u32) {
        self.on(cpu);
        self.0[cpu] = tid;
    }
}

/// The CPU whose line the event is and the event's name there (`raw`: trace-cmd's layout).
fn event_name(ev: &TraceEvent, raw: bool) -> (usize, &'static str) {
    match ev {
        TraceEvent::SchedSwitch { cpu, .. } => (*cpu, "sched_switch"),
        TraceEvent::SchedWaking { waker_cpu, .. } => (*waker_cpu, "sched_waking"),
        TraceEvent::SchedWakeup { cpu, new_task: false, .. } => (*cpu, "sched_wakeup"),
        TraceEvent::SchedWakeup { cpu, new_task: true, .. } => (*cpu, "sched_wakeup_new"),
        TraceEvent::SchedMigrateTask { cpu, .. } => (*cpu, "sched_migrate_task"),
        TraceEvent::SchedPeltSe { cpu, .. } => (*cpu, "sched_pelt_se"),
        TraceEvent::SchedPeltCfs { cpu, .. } | TraceEvent::SchedPeltGroupCfs { cpu, .. } => (*cpu, "sched_pelt_cfs"),
        TraceEvent::SchedPeltGroupSe { cpu, .. } => (*cpu, "sched_pelt_se"),
        TraceEvent::SchedCpuCapacity { cpu, .. } => (*cpu, "sched_cpu_capacity"),
        TraceEvent::SchedOverutilized { cpu, .. } => (*cpu, "sched_overutilized"),
        TraceEvent::CpuFrequency { cpu, .. } => (*cpu, "cpu_frequency"),
        TraceEvent::CpuIdle { cpu, .. } => (*cpu, "cpu_idle"),
        // a write to trace_marker is the `print` event, which the kernel's file shows by
        // the function that wrote it and trace-cmd by name, then that function
        TraceEvent::Counter { cpu, .. } | TraceEvent::Marker { cpu, .. } if raw => (*cpu, "print"),
        TraceEvent::Counter { cpu, .. } | TraceEvent::Marker { cpu, .. } => (*cpu, "tracing_mark_write"),
    }
}

/// A line's head, up to its body: `comm-pid [cpu] secs.usecs: name:` in fixed columns, the
/// time rounded to the µs (a negative or not finite time prints as 0).
fn write_line_head(out: &mut String, comm: &str, pid: u32, cpu: usize, time_us: f64, name: &str) {
    let us_total = if time_us.is_finite() && time_us > 0.0 { time_us.round() as u64 } else { 0 };
    let (secs, usecs) = (us_total / 1_000_000, us_total % 1_000_000);
    let _ = write!(out, "{:>16}-{:<5} [{:03}] {:>5}.{:06}: {:<21} ", comm, pid, cpu, secs, usecs, format!("{name}:"));
}

/// The event's body and the line's end, as its tracepoint prints it (`raw`: trace-cmd's
/// layout).
fn write_body(out: &mut String, ev: &TraceEvent, namer: &Namer, ncpus: usize, raw: bool) {
    // `print`'s first field under trace-cmd: the function that wrote the marker
    let mark_function = if raw { "tracing_mark_write: " } else { "" };
    let threads = namer.threads;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{PeltSignals, PrevState, CPU_IDLE_EXIT};

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
}
