//! The events as a native Perfetto trace: a protobuf `Trace` of `TracePacket`s
//! (protos/perfetto/trace/trace.proto in google/perfetto), which Perfetto UI and its trace
//! processor open without the text importer's gaps:
//!
//! - the system: Linux 5.10's `utsname` (so Perfetto reads `prev_state` with 5.10's bits) and
//!   the CPU count (`SystemInfo`);
//! - the processes and threads by name (`ProcessTree`): the workload's threads in one process
//!   named after it, each kernel thread its own;
//! - the scheduler, frequency and idle events as the kernel's ftrace records them
//!   (`FtraceEventBundle` per CPU: `sched_switch`, `sched_waking`, `sched_wakeup[_new]`,
//!   `sched_migrate_task`, `cpu_frequency`, `cpu_idle`, and `print` for user markers such as
//!   rt-app's), which Perfetto turns into its CPU tracks, thread states and counters;
//! - hetlab's own series as named counter tracks with their units (`TrackDescriptor` with a
//!   `CounterDescriptor`, then `TrackEvent` counters): each cluster's power (mW) and snoop
//!   latency (ns), and per CPU the scheduler's signals (PELT utilisation and the capacity at the
//!   current frequency, out of 1024), the root domain's over-utilisation (0 or 1).
//!
//! The messages are declared here with `prost`'s derive, each field under the number the
//! official definitions give it (tests/test_perfetto_trace.py decodes a trace with those
//! definitions); a `oneof` of the official file is a set of optional fields of which one is
//! given, which is the same bytes.

use std::collections::BTreeMap;

use prost::Message;

use super::ftrace::{printed_order, Namer};
use super::{TraceEvent, TraceThreads};

/// The first tid of the workload's threads (below it, the kernel's).
const FIRST_USER_TID: u32 = crate::kernel::FIRST_USER_TID;

/// The sequence every packet of this writer is on (one writer, so one sequence).
const SEQUENCE_ID: u32 = 1;

/// `TracePacket.sequence_flags`: SEQ_INCREMENTAL_STATE_CLEARED.
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// `TrackEvent.Type`: TYPE_COUNTER.
const TYPE_COUNTER: i32 = 4;

/// `CounterDescriptor.Unit`: UNIT_TIME_NS and UNIT_COUNT.
const UNIT_TIME_NS: i32 = 1;
const UNIT_COUNT: i32 = 2;

/// Most ftrace events in one bundle (Perfetto's own writer cuts bundles at a page of the
/// kernel's ring buffer; any size reads the same).
const BUNDLE_EVENTS: usize = 1024;

/// Uuid of the first counter track (the next ones follow); any value unique in the trace.
const FIRST_TRACK_UUID: u64 = 0x6865_746c_6162_0001;

/// The kernel release the trace says it comes from: the one whose tracepoints it reproduces.
const KERNEL_RELEASE: &str = "5.10.0-hetlab";

#[derive(Clone, PartialEq, Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "1")]
    pub ftrace_events: Option<FtraceEventBundle>,
    #[prost(message, optional, tag = "2")]
    pub process_tree: Option<ProcessTree>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "45")]
    pub system_info: Option<SystemInfo>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
    #[prost(uint32, optional, tag = "8")]
    pub num_cpus: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Utsname {
    #[prost(string, optional, tag = "1")]
    pub sysname: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub machine: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(message, optional, tag = "3")]
    pub print: Option<PrintFtraceEvent>,
    #[prost(message, optional, tag = "4")]
    pub sched_switch: Option<SchedSwitchFtraceEvent>,
    #[prost(message, optional, tag = "11")]
    pub cpu_frequency: Option<CpuFtraceEvent>,
    #[prost(message, optional, tag = "13")]
    pub cpu_idle: Option<CpuFtraceEvent>,
    #[prost(message, optional, tag = "17")]
    pub sched_wakeup: Option<SchedWakeupFtraceEvent>,
    #[prost(message, optional, tag = "20")]
    pub sched_waking: Option<SchedWakeupFtraceEvent>,
    #[prost(message, optional, tag = "114")]
    pub sched_wakeup_new: Option<SchedWakeupFtraceEvent>,
    #[prost(message, optional, tag = "491")]
    pub sched_migrate_task: Option<SchedMigrateTaskFtraceEvent>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PrintFtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub ip: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub buf: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitchFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `sched_wakeup`, `sched_waking` and `sched_wakeup_new` have one layout.
#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeupFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedMigrateTaskFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
}

/// `cpu_frequency` (state: kHz) and `cpu_idle` (state: the idle state's index, or
/// PWR_EVENT_EXIT) have one layout.
#[derive(Clone, PartialEq, Message)]
pub struct CpuFtraceEvent {
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
}

/// A counter track: its name and unit.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct CounterTrack {
    name: String,
    /// A `CounterDescriptor.Unit`, or a unit's name.
    unit: Unit,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Nanoseconds,
    Count,
    Named(&'static str),
}

/// Renders `events` (threads named by `threads`, on a platform of `ncpus` CPUs, running the
/// workload `workload`) as a Perfetto trace's bytes.
pub fn write_perfetto(events: &[TraceEvent], threads: &TraceThreads, ncpus: usize, workload: &str) -> Vec<u8> {
    let mut packets = vec![system_packet(ncpus), process_tree_packet(threads, workload)];
    let mut namer = Namer::new(threads);
    let mut bundles: BTreeMap<usize, Vec<FtraceEvent>> = BTreeMap::new();
    let mut tracks: BTreeMap<CounterTrack, u64> = BTreeMap::new();
    for i in printed_order(events) {
        namer.catch_up(i);
        let ev = &events[i];
        let ts = timestamp_ns(ev.time_us());
        if let Some((track, value)) = counter_of(ev) {
            let next_uuid = FIRST_TRACK_UUID + tracks.len() as u64;
            let uuid = *tracks.entry(track.clone()).or_insert_with(|| {
                packets.push(track_packet(&track, next_uuid));
                next_uuid
            });
            packets.push(counter_packet(ts, uuid, value));
            continue;
        }
        let Some((cpu, event)) = ftrace_event(ev, &namer, ts) else { continue };
        let bundle = bundles.entry(cpu).or_default();
        bundle.push(event);
        if bundle.len() == BUNDLE_EVENTS {
            packets.push(bundle_packet(cpu, std::mem::take(bundle)));
        }
    }
    for (cpu, rest) in bundles.into_iter().filter(|(_, b)| !b.is_empty()) {
        packets.push(bundle_packet(cpu, rest));
    }
    Trace { packet: packets }.encode_to_vec()
}

/// A time in µs as the trace's ns (a negative or not finite time as 0).
fn timestamp_ns(time_us: f64) -> u64 {
    if time_us.is_finite() && time_us > 0.0 {
        (time_us * 1000.0).round() as u64
    } else {
        0
    }
}

fn sequenced(packet: TracePacket) -> TracePacket {
    TracePacket { trusted_packet_sequence_id: Some(SEQUENCE_ID), ..packet }
}

/// The first packet: the kernel and the CPU count; it starts the sequence's state.
fn system_packet(ncpus: usize) -> TracePacket {
    let utsname =
        Utsname { sysname: Some("Linux".into()), release: Some(KERNEL_RELEASE.into()), machine: Some("armv7l".into()) };
    sequenced(TracePacket {
        system_info: Some(SystemInfo { utsname: Some(utsname), num_cpus: Some(ncpus as u32) }),
        sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
        timestamp: Some(0),
        ..Default::default()
    })
}

/// The threads by name: the workload's in one process named after it (its pid the first
/// one's tid), each kernel thread a process of its own, as the kernel's are.
fn process_tree_packet(threads: &TraceThreads, workload: &str) -> TracePacket {
    let named = || threads.names.iter().enumerate().filter(|(tid, name)| *tid > 0 && !name.is_empty());
    let user_pid = named().map(|(tid, _)| tid as u32).find(|&tid| tid >= FIRST_USER_TID);
    let mut tree = ProcessTree::default();
    if let Some(pid) = user_pid {
        tree.processes.push(Process { pid: Some(pid as i32), ppid: Some(1), cmdline: vec![workload.to_string()] });
    }
    for (tid, name) in named() {
        let tid = tid as u32;
        let tgid = if tid >= FIRST_USER_TID { user_pid.unwrap_or(tid) } else { tid };
        if tid < FIRST_USER_TID {
            // a kernel thread: its own process, parent kthreadd (2)
            tree.processes.push(Process { pid: Some(tid as i32), ppid: Some(2), cmdline: vec![name.clone()] });
        }
        tree.threads.push(Thread { tid: Some(tid as i32), name: Some(name.clone()), tgid: Some(tgid as i32) });
    }
    sequenced(TracePacket { process_tree: Some(tree), timestamp: Some(0), ..Default::default() })
}

fn bundle_packet(cpu: usize, event: Vec<FtraceEvent>) -> TracePacket {
    TracePacket {
        ftrace_events: Some(FtraceEventBundle { cpu: Some(cpu as u32), event }),
        trusted_packet_sequence_id: Some(SEQUENCE_ID),
        ..Default::default()
    }
}

fn track_packet(track: &CounterTrack, uuid: u64) -> TracePacket {
    let counter = match &track.unit {
        Unit::Nanoseconds => CounterDescriptor { unit: Some(UNIT_TIME_NS), unit_name: None },
        Unit::Count => CounterDescriptor { unit: Some(UNIT_COUNT), unit_name: None },
        Unit::Named(name) => CounterDescriptor { unit: None, unit_name: Some((*name).into()) },
    };
    let descriptor = TrackDescriptor { uuid: Some(uuid), name: Some(track.name.clone()), counter: Some(counter) };
    sequenced(TracePacket { track_descriptor: Some(descriptor), ..Default::default() })
}

fn counter_packet(ts: u64, uuid: u64, value: f64) -> TracePacket {
    let event = TrackEvent { r#type: Some(TYPE_COUNTER), track_uuid: Some(uuid), double_counter_value: Some(value) };
    sequenced(TracePacket { timestamp: Some(ts), track_event: Some(event), ..Default::default() })
}

/// The counter track and value an event is, if it is one: hetlab's counters (a name ending in
/// its unit, `power_big_mw`, `snoop_latency_big_ns`) and the scheduler's per-CPU signals.
fn counter_of(ev: &TraceEvent) -> Option<(CounterTrack, f64)> {
    let track = |name: String, unit: Unit| CounterTrack { name, unit };
    match ev {
        TraceEvent::Counter { name, value, .. } => {
            let (base, unit) = if let Some(base) = name.strip_suffix("_mw") {
                (base, Unit::Named("mW"))
            } else if let Some(base) = name.strip_suffix("_ns") {
                (base, Unit::Nanoseconds)
            } else {
                (name.as_str(), Unit::Count)
            };
            Some((track(base.replace('_', " "), unit), *value))
        }
        TraceEvent::SchedPeltCfs { cpu, signals, .. } => {
            Some((track(format!("cpu{cpu} util_avg"), Unit::Named("/1024")), signals.util as f64))
        }
        TraceEvent::SchedCpuCapacity { cpu, capacity_curr, .. } => {
            Some((track(format!("cpu{cpu} capacity_curr"), Unit::Named("/1024")), f64::from(*capacity_curr)))
        }
        TraceEvent::SchedOverutilized { overutilized, .. } => {
            Some((track("overutilized".into(), Unit::Count), f64::from(u8::from(*overutilized))))
        }
        _ => None,
    }
}

/// The ftrace event an event is, and the CPU whose buffer holds it; `None` for what the
/// kernel's ftrace protos have no message for here (the task and group PELT signals).
fn ftrace_event(ev: &TraceEvent, namer: &Namer, ts: u64) -> Option<(usize, FtraceEvent)> {
    let base = FtraceEvent { timestamp: Some(ts), ..Default::default() };
    let wakeup = |tid: u32, target_cpu: usize| SchedWakeupFtraceEvent {
        comm: Some(namer.body_comm(tid, target_cpu)),
        pid: Some(tid as i32),
        prio: Some(namer.prio(tid)),
        success: Some(1),
        target_cpu: Some(target_cpu as i32),
    };
    let cpu_event = |state: u32, cpu: usize| Some(CpuFtraceEvent { state: Some(state), cpu_id: Some(cpu as u32) });
    Some(match ev {
        TraceEvent::SchedSwitch { cpu, prev_tid, prev_state, next_tid, .. } => {
            let switch = SchedSwitchFtraceEvent {
                prev_comm: Some(namer.body_comm(*prev_tid, *cpu)),
                prev_pid: Some(*prev_tid as i32),
                prev_prio: Some(namer.prio(*prev_tid)),
                prev_state: Some(i64::from(prev_state.raw(*prev_tid))),
                next_comm: Some(namer.body_comm(*next_tid, *cpu)),
                next_pid: Some(*next_tid as i32),
                next_prio: Some(namer.prio(*next_tid)),
            };
            (*cpu, FtraceEvent { pid: Some(*prev_tid), sched_switch: Some(switch), ..base })
        }
        TraceEvent::SchedWaking { waker_cpu, tid, target_cpu, .. } => {
            (*waker_cpu, FtraceEvent { sched_waking: Some(wakeup(*tid, *target_cpu)), ..base })
        }
        TraceEvent::SchedWakeup { cpu, tid, target_cpu, new_task, .. } => {
            let event = wakeup(*tid, *target_cpu);
            let event = match new_task {
                true => FtraceEvent { sched_wakeup_new: Some(event), ..base },
                false => FtraceEvent { sched_wakeup: Some(event), ..base },
            };
            (*cpu, event)
        }
        TraceEvent::SchedMigrateTask { cpu, tid, orig_cpu, dest_cpu, .. } => {
            let migrate = SchedMigrateTaskFtraceEvent {
                comm: Some(namer.body_comm(*tid, *orig_cpu)),
                pid: Some(*tid as i32),
                prio: Some(namer.prio(*tid)),
                orig_cpu: Some(*orig_cpu as i32),
                dest_cpu: Some(*dest_cpu as i32),
            };
            (*cpu, FtraceEvent { sched_migrate_task: Some(migrate), ..base })
        }
        TraceEvent::CpuFrequency { cpu, freq_khz, .. } => {
            (*cpu, FtraceEvent { cpu_frequency: cpu_event(*freq_khz, *cpu), ..base })
        }
        TraceEvent::CpuIdle { cpu, state, .. } => (*cpu, FtraceEvent { cpu_idle: cpu_event(*state, *cpu), ..base }),
        TraceEvent::Marker { cpu, tid, text, .. } => {
            let print = PrintFtraceEvent { ip: Some(0), buf: Some(format!("{text}\n")) };
            (*cpu, FtraceEvent { pid: Some(*tid), print: Some(print), ..base })
        }
        TraceEvent::SchedPeltSe { .. }
        | TraceEvent::SchedPeltGroupCfs { .. }
        | TraceEvent::SchedPeltGroupSe { .. }
        | TraceEvent::SchedPeltCfs { .. }
        | TraceEvent::SchedCpuCapacity { .. }
        | TraceEvent::SchedOverutilized { .. }
        | TraceEvent::Counter { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{PeltSignals, PrevState};

    fn threads() -> TraceThreads {
        let mut names = vec![String::new(); 1002];
        (names[101], names[1000], names[1001]) = ("rcuop/0".into(), "t-0".into(), "t-1".into());
        TraceThreads { names, prios: vec![120; 1002], prio_changes: vec![], groups: vec!["/".into()] }
    }

    fn events() -> Vec<TraceEvent> {
        vec![
            TraceEvent::CpuFrequency { time_us: 0.0, cpu: 4, freq_khz: 2_000_000 },
            TraceEvent::SchedSwitch {
                time_us: 10.0,
                cpu: 4,
                prev_tid: 0,
                prev_state: PrevState::Runnable,
                next_tid: 1000,
            },
            TraceEvent::Counter { time_us: 12.0, cpu: 4, name: "power_big_mw".into(), value: 812.5 },
            TraceEvent::Counter { time_us: 12.0, cpu: 4, name: "snoop_latency_big_ns".into(), value: 91.0 },
            TraceEvent::Marker { time_us: 15.0, cpu: 4, tid: 1000, text: "rtapp_loop: event=start".into() },
            TraceEvent::SchedPeltCfs {
                time_us: 16.0,
                cpu: 4,
                signals: PeltSignals { load: 1, runnable: 2, util: 300, update_time_ns: 16_000 },
            },
            TraceEvent::SchedSwitch {
                time_us: 20.0,
                cpu: 4,
                prev_tid: 1000,
                prev_state: PrevState::Runnable,
                next_tid: 1001,
            },
            TraceEvent::Counter { time_us: 22.0, cpu: 4, name: "power_big_mw".into(), value: 700.0 },
            TraceEvent::CpuIdle { time_us: 30.0, cpu: 0, state: 1 },
        ]
    }

    #[test]
    fn the_trace_holds_the_system_the_threads_the_ftrace_events_and_named_counter_tracks() {
        let bytes = write_perfetto(&events(), &threads(), 8, "demo");
        let trace = Trace::decode(bytes.as_slice()).unwrap();
        let p = &trace.packet;
        let system = p[0].system_info.as_ref().unwrap();
        assert_eq!(
            (system.num_cpus, system.utsname.as_ref().unwrap().release.as_deref()),
            (Some(8), Some("5.10.0-hetlab"))
        );
        let tree = p[1].process_tree.as_ref().unwrap();
        assert_eq!(tree.processes[0].cmdline, ["demo"]);
        let tgids: Vec<(i32, i32)> = tree.threads.iter().map(|t| (t.tid.unwrap(), t.tgid.unwrap())).collect();
        assert_eq!(tgids, [(101, 101), (1000, 1000), (1001, 1000)]);
        // three counter tracks, each described once before its first value, with its unit
        let tracks: Vec<&TrackDescriptor> = p.iter().filter_map(|q| q.track_descriptor.as_ref()).collect();
        let names: Vec<&str> = tracks.iter().map(|t| t.name.as_deref().unwrap()).collect();
        assert_eq!(names, ["power big", "snoop latency big", "cpu4 util_avg"]);
        assert_eq!(tracks[0].counter.as_ref().unwrap().unit_name.as_deref(), Some("mW"));
        assert_eq!(tracks[1].counter.as_ref().unwrap().unit, Some(UNIT_TIME_NS));
        let power: Vec<(u64, f64)> = p
            .iter()
            .filter_map(|q| {
                q.track_event
                    .as_ref()
                    .filter(|e| e.track_uuid == tracks[0].uuid)
                    .map(|e| (q.timestamp.unwrap(), e.double_counter_value.unwrap()))
            })
            .collect();
        assert_eq!(power, [(12_000, 812.5), (22_000, 700.0)]);
        // per CPU, one bundle, its events in time order
        let bundles: Vec<&FtraceEventBundle> = p.iter().filter_map(|q| q.ftrace_events.as_ref()).collect();
        assert_eq!(bundles.iter().map(|b| b.cpu.unwrap()).collect::<Vec<_>>(), [0, 4]);
        let cpu4 = &bundles[1].event;
        assert_eq!(cpu4.len(), 4);
        let switch = cpu4[3].sched_switch.as_ref().unwrap();
        assert_eq!(
            (switch.prev_comm.as_deref(), switch.prev_state, switch.next_pid),
            (Some("t-0"), Some(0x100), Some(1001))
        );
        assert_eq!(cpu4[2].print.as_ref().unwrap().buf.as_deref(), Some("rtapp_loop: event=start\n"));
        assert_eq!(bundles[0].event[0].cpu_idle.as_ref().unwrap().state, Some(1));
        // the same events, the same bytes
        assert_eq!(bytes, write_perfetto(&events(), &threads(), 8, "demo"));
    }
}
