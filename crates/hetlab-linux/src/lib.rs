//! hetlab-linux: the real board. The same governors the simulator runs (hetlab-core), driven
//! from Linux's interfaces instead of the model:
//!
//! * [`sysfs`]: cpufreq policies under `/sys/devices/system/cpu/cpufreq/policy*` (discovery,
//!   reads, writes whose errors name the file and the fix), under a configurable root so tests
//!   can run against a fake tree;
//! * [`procstat`]: per-CPU busy/idle time from `/proc/stat`;
//! * [`perf`]: perf_event_open — core PMU events per CPU, per thread or per cgroup, and the
//!   CCI-400 PMU found by its sysfs type;
//! * [`quiet`]: which per-thread groups need reading (a thread that has not run is not read);
//! * [`backend`]: fills a [`hetlab_core::governor::PolicyView`] from those sources;
//! * [`daemon`]: the governor loop with save/restore of the policy settings ([`restore`]) and
//!   signal handling ([`stop`]);
//! * [`chase`]: the native ccbench-style pointer chase; [`characterize`]: the training sweep on a
//!   real board.

pub mod backend;
pub mod board_platform;
pub mod characterize;
pub mod chase;
pub mod cpus;
pub mod daemon;
pub mod dt_platform;
pub mod dts;
pub mod em_debugfs;
pub mod flags;
pub mod infile;
pub mod outfile;
pub mod perf;
pub mod pingpong;
pub mod procstat;
pub mod quiet;
pub mod restore;
pub mod sha256;
pub mod stop;
pub mod sysfs;

use std::path::{Path, PathBuf};

/// Where the kernel's pseudo file systems are: `/sys` and `/proc` on a board, a directory laid
/// out the same way in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// Replaces `/sys`: policies are read from `<sysfs>/devices/system/cpu/cpufreq/policy*`.
    pub sysfs: PathBuf,
    /// Replaces `/proc`: `<procfs>/stat`, `<procfs>/<pid>/comm`, ...
    pub procfs: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots { sysfs: PathBuf::from("/sys"), procfs: PathBuf::from("/proc") }
    }
}

impl Roots {
    pub fn new(sysfs: impl Into<PathBuf>, procfs: impl Into<PathBuf>) -> Self {
        Roots { sysfs: sysfs.into(), procfs: procfs.into() }
    }
    pub fn sys(&self, rel: &str) -> PathBuf {
        self.sysfs.join(rel)
    }
    pub fn proc(&self, rel: &str) -> PathBuf {
        self.procfs.join(rel)
    }

    /// The run directory of the system whose sysfs this is, where hetlabd keeps its lock and
    /// the cpufreq settings it must restore: `/run` when the root is the kernel's sysfs, by
    /// whatever path (`/sys`, or a bind mount of it elsewhere); for a directory tree laid out
    /// like sysfs (a test's, a copy), `run` beside the resolved root (`T/run` for `T/sys`).
    ///
    /// It follows from the sysfs root alone, never from an option: the saved settings belong to
    /// the policies, so every hetlabd on them must find them in one place. (An earlier
    /// `--run-dir` let a second daemon keep its own record: after a SIGKILL it found the
    /// policies on `userspace`, saved that as their original and later "restored" it. A run
    /// directory beside each path would do the same through a bind mount of `/sys`: the kernel
    /// has one sysfs, so any path to it leads to `/run`.) `/run` is a tmpfs emptied at boot,
    /// when the kernel resets the settings too, so a record never outlives what it describes.
    pub fn run_dir(&self) -> Result<PathBuf, String> {
        let sysfs = std::fs::canonicalize(&self.sysfs)
            .map_err(|e| format!("cannot resolve the sysfs root {}: {e}; check --sysfs-root", display(&self.sysfs)))?;
        if is_kernel_sysfs(&sysfs) {
            return Ok(PathBuf::from("/run"));
        }
        let parent = sysfs.parent().ok_or_else(|| {
            format!("the sysfs root {} has no parent directory to hold run/; check --sysfs-root", display(&sysfs))
        })?;
        Ok(parent.join("run"))
    }
}

/// `path` is on the kernel's sysfs (statfs's f_type is SYSFS_MAGIC, include/uapi/linux/magic.h).
pub(crate) fn is_kernel_sysfs(path: &std::path::Path) -> bool {
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: an all-zero statfs is a valid value for statfs(2) to overwrite.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statfs we own.
    let ok = unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } == 0;
    ok && stat.f_type as i64 == SYSFS_MAGIC
}

/// Monotonic time (CLOCK_MONOTONIC), µs.
pub fn monotonic_us() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// `seconds` of option `flag` as µs; it must be a positive number of at most a year (a larger
/// one would saturate the µs and wrap the deadline computed from it).
pub fn positive_seconds_us(flag: &str, seconds: f64) -> Result<u64, String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= flags::MAX_SECONDS {
        Ok((seconds * 1e6) as u64)
    } else {
        // a huge value is shown as 1e300, not as its 301 digits
        let got = if seconds.abs() >= 1e9 { format!("{seconds:e}") } else { seconds.to_string() };
        Err(format!(
            "{flag} must be a positive number of seconds, got {got} (at most {} s, a year)",
            flags::MAX_SECONDS
        ))
    }
}

/// The effective user id (0 = root).
pub fn euid() -> u32 {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() }
}

pub(crate) fn display(p: &Path) -> String {
    p.display().to_string()
}
