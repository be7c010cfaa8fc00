//! The kernel's layout read back: every event `ftrace::write_ftrace` prints comes back from its
//! line, under the task the line's head names.

use super::ftrace::{write_ftrace, TraceFormat};
use super::{PeltSignals, PrevState, TraceEvent, TraceThreads, CPU_IDLE_EXIT};

fn body_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

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

/// Minimal parser of the layout `write_ftrace` writes: `comm-pid [cpu] secs.usecs: event: body`.
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
        "sched_waking" => {
            TraceEvent::SchedWaking { time_us, waker_cpu: p.cpu, tid: num(p, "pid"), target_cpu: num(p, "target_cpu") }
        }
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
            TraceEvent::Counter { time_us, cpu: p.cpu, name: parts[2].to_string(), value: parts[3].parse().unwrap() }
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
            2 => {
                events.push(TraceEvent::CpuFrequency { time_us: t, cpu, freq_khz: 200_000 + 100_000 * rnd(12) as u32 })
            }
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
