//! perf_event_open(2) through the raw syscall (libc), counting only (no sampling). A group
//! leader's user page can be mapped ([`Group::map_user_page`]) to tell, without a syscall,
//! whether its thread has been scheduled in since it was last read (see [`crate::quiet`]).
//!
//! * Core PMU events: the ARM PMUs are found in sysfs (`<sysfs>/bus/event_source/devices/
//!   armv7_cortex_a7`, `armv7_cortex_a15`, `armv8_*`, each with a `type` and the `cpus` it
//!   covers; platforms.md §4.4) and opened with their dynamic type and the raw event number:
//!   0x11 CPU_CYCLES, 0x08 INST_RETIRED, 0x19 BUS_ACCESS, 0x17 L2D_CACHE_REFILL (ARMv7 PMUv2 and
//!   ARMv8 PMUv3 share these numbers). On big.LITTLE each cluster has its own PMU and a per-task
//!   event counts only while the task runs on that PMU's CPUs, so a thread gets one group per
//!   PMU — which also tells which cluster the counts come from.
//! * The CCI-400 PMU (`CCI_400` or `CCI_400_r1`, drivers/perf/arm-cci.c): type from sysfs,
//!   `config = source << 5 | event` (platforms.md §4.3), opened system-wide on the CPU of its
//!   `cpumask`. Per cluster port: 0x00 si_rrq_hs_any and 0x09 si_rrq_stall_tt_full, plus the
//!   cycle counter (0xff): five events, the CCI's four counters plus the fixed one.
//! * Software stand-ins (`--pmu software`), only when asked: the same groups with software
//!   events, for machines without the hardware (this project's VM) — never chosen silently.
//!
//! Each counting unit is one group read with `PERF_FORMAT_GROUP` (one syscall for all its
//! events), with the enabled/running times to scale multiplexed counts.

use std::fs;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::cpus::parse_cpu_list;
use crate::sysfs::read_str;
use crate::Roots;

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_RAW: u32 = 4;

pub const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
pub const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
pub const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
pub const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
pub const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;

const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// `pid` is a cgroup directory fd.
pub const PERF_FLAG_PID_CGROUP: libc::c_ulong = 1 << 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// ARM architectural event numbers (platforms.md §4.4).
pub const ARM_CPU_CYCLES: u64 = 0x11;
pub const ARM_INST_RETIRED: u64 = 0x08;
pub const ARM_BUS_ACCESS: u64 = 0x19;
pub const ARM_L2D_CACHE_REFILL: u64 = 0x17;
/// CCI-400 slave-interface events and the cycle counter (platforms.md §4.3).
pub const CCI_SI_RRQ_HS_ANY: u64 = 0x00;
pub const CCI_SI_RRQ_STALL_TT_FULL: u64 = 0x09;
pub const CCI_CYCLES: u64 = 0xff;

/// `struct perf_event_attr` up to PERF_ATTR_SIZE_VER5 (112 bytes, Linux 4.1+). Older kernels
/// accept a larger struct when the bytes they do not know are zero.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// disabled:1, inherit:1, pinned:1, exclusive:1, exclude_user:1, exclude_kernel:1, ...
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
}

const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == 112);

/// One event: perf type and config, and the name used in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    pub type_: u32,
    pub config: u64,
    pub name: String,
}

/// Who is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One thread, on whatever CPU it runs.
    Thread(u32),
    /// Everything on one CPU.
    Cpu(usize),
    /// The tasks of a cgroup (the fd of its directory) on one CPU.
    Cgroup { fd: RawFd, cpu: usize },
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::Thread(t) => format!("thread {t}"),
            Target::Cpu(c) => format!("CPU {c}"),
            Target::Cgroup { cpu, .. } => format!("the cgroup on CPU {cpu}"),
        }
    }
}

fn perf_event_open(
    attr: &PerfEventAttr,
    pid: i32,
    cpu: i32,
    group_fd: i32,
    flags: libc::c_ulong,
) -> Result<OwnedFd, std::io::Error> {
    // SAFETY: the attr struct is a valid, fully initialised perf_event_attr of `size` bytes; the
    // kernel only reads it. A returned fd is new and owned by us.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const PerfEventAttr,
            pid,
            cpu,
            group_fd,
            flags | PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        // SAFETY: fd is a fresh descriptor returned by the kernel.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }
}

/// Why an event could not be opened, in words.
fn open_error(e: &std::io::Error, ev: &EventSpec, target: &Target) -> String {
    let why = match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => "the PMU does not support this event",
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "not permitted (run as root, or lower /proc/sys/kernel/perf_event_paranoid)"
        }
        Some(libc::ENODEV) => "no such PMU on that CPU",
        Some(libc::EINVAL) => "invalid for this PMU or target",
        Some(libc::ESRCH) => "the thread has exited",
        Some(libc::EBADF) => "the cgroup directory is not usable (is it a perf_event cgroup?)",
        _ => "",
    };
    let sep = if why.is_empty() { "" } else { ": " };
    format!("perf_event_open({}, {}): {e}{sep}{why}", ev.name, target.describe())
}

/// The first page of an event's mmap, `struct perf_event_mmap_page` (include/uapi/linux/
/// perf_event.h), mapped read-only and without data pages (no ring buffer is allocated beyond
/// it). Only its `lock` is read: the kernel adds 2 to it at every perf_event_update_userpage()
/// (kernel/events/core.c), odd while it writes the page.
pub struct UserPage {
    addr: NonNull<libc::c_void>,
    len: usize,
}

// SAFETY: the mapping belongs to the process; the kernel writes it, this code only reads it
// (atomically), so moving the owner to another thread is sound.
unsafe impl Send for UserPage {}

/// Byte offset of `__u32 lock` in struct perf_event_mmap_page (after `version`, `compat_version`).
const USER_PAGE_LOCK_OFFSET: usize = 8;

impl UserPage {
    fn map(fd: RawFd) -> Result<UserPage, std::io::Error> {
        // SAFETY: sysconf has no memory effects.
        let len = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        // SAFETY: a new shared read-only mapping of one page of a perf event fd; the kernel
        // checks the fd and the size. The result is checked against MAP_FAILED.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let addr = NonNull::new(p).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EFAULT))?;
        Ok(UserPage { addr, len })
    }

    /// How often the kernel has updated the page (its `lock` sequence count; odd: mid-update).
    pub fn updates(&self) -> u32 {
        // SAFETY: the page is mapped readable for as long as self lives and `lock` is an aligned
        // u32 at this offset; the kernel writes it concurrently, hence the atomic load.
        let lock = unsafe { &*(self.addr.as_ptr().cast::<u8>().add(USER_PAGE_LOCK_OFFSET).cast::<AtomicU32>()) };
        lock.load(Ordering::Acquire)
    }
}

impl Drop for UserPage {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`; nothing refers to it after drop.
        unsafe {
            libc::munmap(self.addr.as_ptr(), self.len);
        }
    }
}

/// A group of counters read with one syscall.
pub struct Group {
    /// Declared before `leader`: unmapped before the fd closes.
    page: Option<UserPage>,
    leader: OwnedFd,
    _members: Vec<OwnedFd>,
    n: usize,
    buf: Vec<u64>,
}

impl Group {
    /// Opens `events` as one group on `target`. The first event leads.
    pub fn open(events: &[EventSpec], target: Target) -> Result<Group, String> {
        Group::open_attr(events, target, false)
    }

    /// A group that stays disabled (never scheduled in): what a PMU that never updates the
    /// user page looks like to [`crate::backend`]'s start-up check.
    #[cfg(test)]
    pub(crate) fn open_disabled(events: &[EventSpec], target: Target) -> Result<Group, String> {
        Group::open_attr(events, target, true)
    }

    fn open_attr(events: &[EventSpec], target: Target, disabled: bool) -> Result<Group, String> {
        assert!(!events.is_empty());
        let (pid, cpu, flags) = match target {
            Target::Thread(t) => (t as i32, -1, 0),
            Target::Cpu(c) => (-1, c as i32, 0),
            Target::Cgroup { fd, cpu } => (fd, cpu as i32, PERF_FLAG_PID_CGROUP),
        };
        let mut leader: Option<OwnedFd> = None;
        let mut members = Vec::new();
        for ev in events {
            let attr = PerfEventAttr {
                type_: ev.type_,
                size: std::mem::size_of::<PerfEventAttr>() as u32,
                config: ev.config,
                read_format: PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
                flags: u64::from(disabled), // bit 0: disabled
                ..Default::default()
            };
            let group_fd = leader.as_ref().map_or(-1, |l| l.as_raw_fd());
            let fd = perf_event_open(&attr, pid, cpu, group_fd, flags).map_err(|e| open_error(&e, ev, &target))?;
            if leader.is_none() {
                leader = Some(fd);
            } else {
                members.push(fd);
            }
        }
        let n = events.len();
        Ok(Group { page: None, leader: leader.expect("non-empty"), _members: members, n, buf: vec![0; 3 + n] })
    }

    /// Maps the leader's user page (one page of locked memory, counted against
    /// perf_event_mlock_kb and RLIMIT_MEMLOCK).
    pub fn map_user_page(&mut self) -> Result<(), String> {
        if self.page.is_none() {
            let page =
                UserPage::map(self.leader.as_raw_fd()).map_err(|e| format!("mmap of the perf user page: {e}"))?;
            self.page = Some(page);
        }
        Ok(())
    }

    /// The leader's user-page update count, when the page is mapped.
    pub fn page_updates(&self) -> Option<u32> {
        self.page.as_ref().map(UserPage::updates)
    }

    /// The group's time running (ns) at the last [`Group::read`].
    pub fn time_running(&self) -> u64 {
        self.buf[2]
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Reads every counter into `out` (cumulative since open), scaled up when the group was
    /// multiplexed (time running < time enabled).
    pub fn read(&mut self, out: &mut [u64]) -> Result<(), String> {
        let bytes = self.buf.len() * 8;
        // SAFETY: buf holds `bytes` writable bytes; the fd is open.
        let got = unsafe { libc::read(self.leader.as_raw_fd(), self.buf.as_mut_ptr() as *mut libc::c_void, bytes) };
        if got < 0 {
            return Err(format!("reading perf counters: {}", std::io::Error::last_os_error()));
        }
        if (got as usize) < bytes || self.buf[0] as usize != self.n {
            return Err(format!("reading perf counters: short read ({got} bytes, {} events)", self.buf[0]));
        }
        let (enabled, running) = (self.buf[1], self.buf[2]);
        for (o, &v) in out.iter_mut().zip(&self.buf[3..]) {
            *o = if running == 0 {
                0
            } else if running < enabled {
                (v as u128 * enabled as u128 / running as u128) as u64
            } else {
                v
            };
        }
        Ok(())
    }
}

/// A PMU under `<sysfs>/bus/event_source/devices`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmuInfo {
    pub name: String,
    pub type_: u32,
    /// The CPUs it covers (`cpus`), or where to open system-wide events (`cpumask`); `None` if
    /// the PMU lists neither (it then covers every CPU).
    pub cpus: Option<Vec<usize>>,
}

pub fn event_source_dir(roots: &Roots) -> std::path::PathBuf {
    roots.sys("bus/event_source/devices")
}

fn read_pmu(dir: &Path) -> Option<PmuInfo> {
    let name = dir.file_name()?.to_string_lossy().to_string();
    let type_ = read_str(&dir.join("type")).ok()?.parse().ok()?;
    let cpus = read_str(&dir.join("cpus"))
        .or_else(|_| read_str(&dir.join("cpumask")))
        .ok()
        .and_then(|s| parse_cpu_list(&s).ok());
    Some(PmuInfo { name, type_, cpus })
}

fn list_pmus(roots: &Roots) -> Vec<PmuInfo> {
    let mut out: Vec<PmuInfo> = fs::read_dir(event_source_dir(roots))
        .map(|rd| rd.flatten().filter_map(|e| read_pmu(&e.path())).collect())
        .unwrap_or_default();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// ARM core PMUs (armv7_cortex_a7, armv7_cortex_a15, armv8_pmuv3_0, armv8_cortex_a53, ...).
pub fn arm_core_pmus(roots: &Roots) -> Vec<PmuInfo> {
    list_pmus(roots).into_iter().filter(|p| p.name.starts_with("armv7_") || p.name.starts_with("armv8_")).collect()
}

/// The CCI-400 PMU (`CCI_400` for r0, `CCI_400_r1`).
pub fn cci_pmu(roots: &Roots) -> Option<PmuInfo> {
    list_pmus(roots).into_iter().find(|p| p.name.starts_with("CCI_400"))
}

/// Which core counters a group counts, in this order: cpu_cycles, inst_retired, bus_access,
/// l2d_cache_refill.
pub const CORE_EVENT_NAMES: [&str; 4] = ["cpu_cycles", "inst_retired", "bus_access", "l2d_cache_refill"];

/// The core events on an ARM PMU.
pub fn arm_core_events(pmu: &PmuInfo) -> Vec<EventSpec> {
    [ARM_CPU_CYCLES, ARM_INST_RETIRED, ARM_BUS_ACCESS, ARM_L2D_CACHE_REFILL]
        .iter()
        .zip(CORE_EVENT_NAMES)
        .map(|(&config, n)| EventSpec { type_: pmu.type_, config, name: format!("{}/{n}=0x{config:02x}", pmu.name) })
        .collect()
}

/// Software stand-ins for the core events (`--pmu software`): cpu_cycles <- task-clock (per
/// thread) or cpu-clock (per CPU / cgroup), in ns; inst_retired <- page-faults; bus_access <-
/// context-switches; l2d_cache_refill <- cpu-migrations. They exercise the same code paths and
/// costs; their values mean nothing for snoops.
pub fn software_core_events(per_thread: bool) -> Vec<EventSpec> {
    let clock = if per_thread { PERF_COUNT_SW_TASK_CLOCK } else { PERF_COUNT_SW_CPU_CLOCK };
    [
        (clock, "cpu_cycles<-sw-clock"),
        (PERF_COUNT_SW_PAGE_FAULTS, "inst_retired<-page-faults"),
        (PERF_COUNT_SW_CONTEXT_SWITCHES, "bus_access<-context-switches"),
        (PERF_COUNT_SW_CPU_MIGRATIONS, "l2d_cache_refill<-cpu-migrations"),
    ]
    .iter()
    .map(|&(config, name)| EventSpec { type_: PERF_TYPE_SOFTWARE, config, name: name.to_string() })
    .collect()
}

/// CCI events for the given slave ports: per port si_rrq_hs_any then si_rrq_stall_tt_full,
/// then the cycle counter last.
pub fn cci_events(pmu: &PmuInfo, ports: &[u8]) -> Vec<EventSpec> {
    let mut v = Vec::new();
    for &p in ports {
        for (ev, n) in [(CCI_SI_RRQ_HS_ANY, "si_rrq_hs_any"), (CCI_SI_RRQ_STALL_TT_FULL, "si_rrq_stall_tt_full")] {
            let config = cci_config(p, ev);
            v.push(EventSpec {
                type_: pmu.type_,
                config,
                name: format!("{}/{n},source=0x{p:x}/ (config 0x{config:02x})", pmu.name),
            });
        }
    }
    v.push(EventSpec { type_: pmu.type_, config: CCI_CYCLES, name: format!("{}/cycles/", pmu.name) });
    v
}

/// arm-cci.c's encoding: event in config bits 0-4, source (slave 0-4, master 5-7) in bits 5-7.
pub fn cci_config(source: u8, event: u64) -> u64 {
    (u64::from(source) << 5) | (event & 0x1f)
}

/// Software stand-ins for the CCI group: per port context-switches (reads) and page-faults
/// (stalls) on the CCI's CPU, and cpu-clock as the cycle counter.
pub fn software_cci_events(ports: &[u8]) -> Vec<EventSpec> {
    let mut v = Vec::new();
    for &p in ports {
        v.push(EventSpec {
            type_: PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_CONTEXT_SWITCHES,
            name: format!("S{p} si_rrq_hs_any<-context-switches"),
        });
        v.push(EventSpec {
            type_: PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_PAGE_FAULTS,
            name: format!("S{p} si_rrq_stall_tt_full<-page-faults"),
        });
    }
    v.push(EventSpec { type_: PERF_TYPE_SOFTWARE, config: PERF_COUNT_SW_CPU_CLOCK, name: "cycles<-cpu-clock".into() });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cci_configs_match_the_worked_encodings() {
        // platforms.md §4.3: Exynos 5422 A7 (S3) 0x69 / 0x60, A15 (S4) 0x89 / 0x80
        assert_eq!(cci_config(3, CCI_SI_RRQ_STALL_TT_FULL), 0x69);
        assert_eq!(cci_config(3, CCI_SI_RRQ_HS_ANY), 0x60);
        assert_eq!(cci_config(4, CCI_SI_RRQ_STALL_TT_FULL), 0x89);
        assert_eq!(cci_config(4, CCI_SI_RRQ_HS_ANY), 0x80);
        let pmu = PmuInfo { name: "CCI_400".into(), type_: 9, cpus: Some(vec![0]) };
        let ev = cci_events(&pmu, &[3, 4]);
        let configs: Vec<u64> = ev.iter().map(|e| e.config).collect();
        assert_eq!(configs, vec![0x60, 0x69, 0x80, 0x89, 0xff]);
        assert!(ev.iter().all(|e| e.type_ == 9));
    }

    #[test]
    fn finds_pmus_by_their_sysfs_type() {
        let t = crate::sysfs::fake::exynos5422("pmus");
        let d = t.root.join("sys/bus/event_source/devices");
        for (n, ty, cpus) in [("armv7_cortex_a7", "8", "0-3"), ("armv7_cortex_a15", "7", "4-7"), ("software", "1", "")]
        {
            fs::create_dir_all(d.join(n)).unwrap();
            fs::write(d.join(n).join("type"), ty).unwrap();
            if !cpus.is_empty() {
                fs::write(d.join(n).join("cpus"), cpus).unwrap();
            }
        }
        fs::create_dir_all(d.join("CCI_400_r1")).unwrap();
        fs::write(d.join("CCI_400_r1/type"), "10\n").unwrap();
        fs::write(d.join("CCI_400_r1/cpumask"), "0\n").unwrap();
        let core = arm_core_pmus(&t.roots());
        assert_eq!(core.len(), 2);
        assert_eq!(core[0], PmuInfo { name: "armv7_cortex_a15".into(), type_: 7, cpus: Some(vec![4, 5, 6, 7]) });
        let cci = cci_pmu(&t.roots()).unwrap();
        assert_eq!((cci.type_, cci.cpus), (10, Some(vec![0])));
        let ev = arm_core_events(&core[1]);
        assert_eq!(ev.iter().map(|e| e.config).collect::<Vec<_>>(), vec![0x11, 0x08, 0x19, 0x17]);
    }

    #[test]
    fn software_groups_count_this_thread_and_unsupported_events_are_named() {
        let tid = crate::cpus::gettid();
        let mut g = match Group::open(&software_core_events(true), Target::Thread(tid)) {
            Ok(g) => g,
            Err(e) if e.contains("not permitted") => return, // unprivileged CI without perf
            Err(e) => panic!("{e}"),
        };
        let mut a = [0u64; 4];
        g.read(&mut a).unwrap();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let mut b = [0u64; 4];
        g.read(&mut b).unwrap();
        assert!(b[0] > a[0], "task-clock advances while the thread runs: {a:?} -> {b:?}");
        // a raw event on the software PMU type does not exist
        let bad = EventSpec { type_: PERF_TYPE_SOFTWARE, config: 0x69, name: "CCI_400/si_rrq_stall_tt_full".into() };
        let e = Group::open(&[bad], Target::Cpu(0)).err().unwrap();
        assert!(e.contains("CCI_400/si_rrq_stall_tt_full") && e.contains("CPU 0"), "{e}");
    }
}
