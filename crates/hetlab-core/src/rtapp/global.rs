//! rt-app's `global` object: the run's duration, the calibration CPU, the default policy, the
//! memory buffer's size, the I/O device, priority inheritance, and the logging keys (nothing to
//! simulate).

use super::json::{boolean, object, text, whole, Json};
use super::sched::policy;
use crate::workload::MAX_WORKING_SET_BYTES;

/// `global` keys that only concern rt-app's logs and memory locking: nothing to simulate.
const LOGGING_KEYS: &[&str] =
    &["logdir", "log_basename", "log_size", "ftrace", "gnuplot", "lock_pages", "cumulative_slack"];

/// rt-app's `mem_buffer_size` default, bytes (src/rt-app_types.h DEFAULT_MEM_BUF_SIZE).
const DEFAULT_MEM_BUFFER_BYTES: u64 = 4 * 1024 * 1024;

/// What `global` sets.
pub(super) struct Global {
    pub(super) duration_us: Option<u64>,
    /// A task's policy unless it gives one.
    pub(super) default_policy: String,
    pub(super) reference_cpu: Option<usize>,
    pub(super) mem_buffer_bytes: u64,
    /// `pi_enabled`: the resources' mutexes inherit priority (PTHREAD_PRIO_INHERIT).
    pub(super) pi_enabled: bool,
}

impl Default for Global {
    /// rt-app's: no duration, SCHED_OTHER, calibrated on CPU0, its default buffer, no priority
    /// inheritance.
    fn default() -> Self {
        Global {
            duration_us: None,
            default_policy: "SCHED_OTHER".into(),
            reference_cpu: Some(0),
            mem_buffer_bytes: DEFAULT_MEM_BUFFER_BYTES,
            pi_enabled: false,
        }
    }
}

impl Global {
    /// The `global` object `value`; `at` names it in errors.
    pub(super) fn read(at: &str, value: &Json) -> Result<Global, String> {
        let mut global = Global::default();
        for (key, value) in object(at, value)? {
            let at = format!("{at}.{key}");
            match key.as_str() {
                "duration" => {
                    let s = whole(&at, value, -1.0, 1e9)?;
                    global.duration_us = (s > 0.0).then_some(s as u64 * 1_000_000);
                }
                "calibration" => {
                    global.reference_cpu = match value {
                        // ns per loop, measured by whoever wrote the file: LISA measures on the
                        // biggest CPU at its top OPP, hetlab's own reference
                        Json::Num(_) => {
                            whole(&at, value, 1.0, 1e9)?;
                            None
                        }
                        Json::Str(cpu) => Some(
                            cpu.strip_prefix("CPU")
                                .and_then(|n| n.parse::<usize>().ok())
                                .filter(|&n| n < crate::platform::MAX_CPUS)
                                .ok_or_else(|| format!("{at} must be \"CPU<n>\" or ns per loop, got \"{cpu}\""))?,
                        ),
                        other => return Err(format!("{at} must be \"CPU<n>\" or ns per loop, got {}", other.kind())),
                    };
                }
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
                k if LOGGING_KEYS.contains(&k) => {}
                _ => return Err(format!("{at}: unknown or unsupported global key")),
            }
        }
        Ok(global)
    }
}
