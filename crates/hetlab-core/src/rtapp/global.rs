//! rt-app's `global` object (`parse_global`, src/rt-app_parse_config.c): the run's duration, the
//! calibration, the default policy, the memory buffer's size, the I/O device, priority
//! inheritance, the ftrace categories and the logs' settings, each with rt-app's default.

use super::json::{boolean, text, whole, Json};
use super::sched::policy;
use super::warnings::Warnings;
use crate::workload::{RtappFtrace, MAX_WORKING_SET_BYTES};

/// rt-app's `mem_buffer_size` default, bytes (src/rt-app_types.h DEFAULT_MEM_BUF_SIZE).
const DEFAULT_MEM_BUFFER_BYTES: u64 = 4 * 1024 * 1024;

/// The keys `parse_global` reads, for the warning about any other.
const GLOBAL_KEYS: &str = "duration, calibration, default_policy, pi_enabled, lock_pages, logdir, log_basename, \
                           log_size, ftrace, gnuplot, io_device, mem_buffer_size, cumulative_slack";

/// What `global` sets.
pub(super) struct Global {
    pub(super) duration_us: Option<u64>,
    /// A task's policy unless it gives one.
    pub(super) default_policy: String,
    pub(super) reference_cpu: Option<usize>,
    /// `calibration` as ns per loop, if given so.
    pub(super) ns_per_loop: Option<u32>,
    pub(super) mem_buffer_bytes: u64,
    /// `pi_enabled`: the resources' mutexes inherit priority (PTHREAD_PRIO_INHERIT).
    pub(super) pi_enabled: bool,
    /// The marker categories (`ftrace`; default none).
    pub(super) ftrace: RtappFtrace,
    pub(super) cumulative_slack: bool,
    /// The per-thread logs' file name prefix (`log_basename`), or `None` when rt-app writes no
    /// logs (`log_size` "disable", or no `global` object at all).
    pub(super) log_basename: Option<String>,
}

impl Default for Global {
    /// rt-app's without a `global` object: no duration, SCHED_OTHER, calibrated on CPU0, its
    /// default buffer, no priority inheritance, no markers, and no logs (`parse_global` sets
    /// `logsize = 0` when there is no `global`).
    fn default() -> Self {
        Global {
            duration_us: None,
            default_policy: "SCHED_OTHER".into(),
            reference_cpu: Some(0),
            ns_per_loop: None,
            mem_buffer_bytes: DEFAULT_MEM_BUFFER_BYTES,
            pi_enabled: false,
            ftrace: RtappFtrace::default(),
            cumulative_slack: false,
            log_basename: None,
        }
    }
}

impl Global {
    /// The `global` object `members`; `at` names it in messages.
    pub(super) fn read(at: &str, members: &[(String, Json)], warnings: &mut Warnings) -> Result<Global, String> {
        // with a `global` object, a missing `log_size` means rt-app's file mode: logs written
        let mut global = Global { log_basename: Some("rt-app".into()), ..Global::default() };
        let mut logs = true;
        for (key, value) in members {
            let at = format!("{at}.{key}");
            match key.as_str() {
                "duration" => {
                    let s = whole(&at, value, -1.0, 1e9)?;
                    global.duration_us = (s > 0.0).then_some(s as u64 * 1_000_000);
                }
                "calibration" => global.read_calibration(&at, value)?,
                "default_policy" => global.default_policy = policy(&at, value)?.to_string(),
                "mem_buffer_size" => {
                    global.mem_buffer_bytes = whole(&at, value, 1.0, MAX_WORKING_SET_BYTES as f64)? as u64
                }
                "io_device" => {
                    if text(&at, value)? != "/dev/null" {
                        return Err(format!(
                            "{at}: only /dev/null is supported (hetlab has no storage model); iorun then costs its \
                             system calls"
                        ));
                    }
                }
                "pi_enabled" => global.pi_enabled = boolean(&at, value)?,
                "ftrace" => global.ftrace = ftrace(&at, value)?,
                "cumulative_slack" => global.cumulative_slack = boolean(&at, value)?,
                "log_size" => logs = log_size(&at, value)?,
                "log_basename" => global.log_basename = Some(file_name_part(&at, value)?),
                // where rt-app writes its logs and gnuplot scripts: hetlab writes the logs where
                // it is told (`--rtapp-logs`), and no gnuplot script, which is only a plot
                "logdir" => {
                    text(&at, value)?;
                }
                "gnuplot" | "lock_pages" => {
                    boolean(&at, value)?;
                }
                _ => warnings.ignored_key(&at, GLOBAL_KEYS),
            }
        }
        if !logs {
            global.log_basename = None;
        }
        Ok(global)
    }

    fn read_calibration(&mut self, at: &str, value: &Json) -> Result<(), String> {
        match value {
            // ns per loop, measured by whoever wrote the file: LISA measures on the biggest CPU
            // at its top OPP, hetlab's own reference
            Json::Num(_) => {
                self.ns_per_loop = Some(whole(at, value, 1.0, f64::from(i32::MAX))? as u32);
                self.reference_cpu = None;
            }
            Json::Str(cpu) => {
                self.reference_cpu = Some(
                    cpu.strip_prefix("CPU")
                        .and_then(|n| n.parse::<usize>().ok())
                        .filter(|&n| n < crate::platform::MAX_CPUS)
                        .ok_or_else(|| format!("{at} must be \"CPU<n>\" or ns per loop, got \"{cpu}\""))?,
                )
            }
            other => return Err(format!("{at} must be \"CPU<n>\" or ns per loop, got {}", other.kind())),
        }
        Ok(())
    }
}

/// `ftrace`: a comma list of rt-app's categories (`main`, `task`, `loop`, `event`, `stats`,
/// `none`, case-blind, as `ftrace_setup` compares them), or the deprecated boolean (true: all).
fn ftrace(at: &str, value: &Json) -> Result<RtappFtrace, String> {
    let list = match value {
        Json::Bool(all) => return Ok(if *all { RtappFtrace::ALL } else { RtappFtrace::default() }),
        Json::Str(list) => list,
        other => return Err(format!("{at} must be a string of categories, got {}", other.kind())),
    };
    let mut on = RtappFtrace::default();
    // strtok: empty items between commas are skipped
    for category in list.split(',').filter(|c| !c.is_empty()) {
        match category.to_ascii_lowercase().as_str() {
            "main" => on.main = true,
            "task" => on.task = true,
            "loop" => on.r#loop = true,
            "event" => on.event = true,
            "stats" => on.stats = true,
            "none" => on = RtappFtrace::default(),
            _ => {
                return Err(format!(
                    "{at}: '{category}' is not an ftrace category (rt-app's: main, task, loop, event, stats, none)"
                ))
            }
        }
    }
    Ok(on)
}

/// `log_size`: whether rt-app writes the per-thread logs. A number is a buffer in MB (0: none),
/// `"file"` and `"auto"` write as it goes, `"disable"` writes none; any other string leaves
/// rt-app's file mode.
fn log_size(at: &str, value: &Json) -> Result<bool, String> {
    match value {
        Json::Num(_) => Ok(whole(at, value, 0.0, 2047.0)? > 0.0),
        Json::Str(mode) => Ok(mode != "disable"),
        other => Err(format!("{at} must be a size in MB or \"file\", \"auto\" or \"disable\", got {}", other.kind())),
    }
}

/// `log_basename`: the start of each log's file name, so no path separator.
fn file_name_part(at: &str, value: &Json) -> Result<String, String> {
    let name = text(at, value)?;
    if name.contains('/') || name == "." || name == ".." {
        return Err(format!("{at}: '{name}' must be a file name's start, without '/'"));
    }
    Ok(name.to_string())
}
