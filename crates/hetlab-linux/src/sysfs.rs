//! cpufreq policies in sysfs (Documentation/admin-guide/pm/cpufreq.rst): discovery, reads and
//! writes. Every error names the file and says what to do about it.
//!
//! A policy is `<sysfs>/devices/system/cpu/cpufreq/policyN` (kernels >= 4.3); older kernels
//! only have `cpuN/cpufreq`, which is used when no `policy*` directory exists. The OPP table is
//! `scaling_available_frequencies`, else the frequencies of `stats/time_in_state`, else just
//! `cpuinfo_min_freq` and `cpuinfo_max_freq` (the attribute is driver-provided, not generic).

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::cpus::parse_cpu_list;
use crate::infile::{self, ReadError};
use crate::{display, Roots};

/// Reads a sysfs attribute, trimmed: at most one page, a regular file, without blocking (see
/// [`crate::infile`]: a FIFO or /dev/zero planted in a fake tree is refused, not waited on).
pub fn read_str(path: &Path) -> Result<String, String> {
    match infile::read_bounded(path, infile::SYSFS_ATTR_MAX_BYTES, true) {
        Ok(s) => Ok(s.trim().to_string()),
        Err(e) => {
            let hint = match &e {
                ReadError::Io(io) => read_hint(io),
                ReadError::Refused(_) => "; it is not a sysfs attribute (check --sysfs-root)",
            };
            Err(format!("cannot read {}: {}{hint}", display(path), e.reason()))
        }
    }
}

/// Like [`read_str`], but an attribute the kernel does not provide is `None`; anything else
/// that cannot be read (a FIFO, too large, no permission) is still an error.
pub fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match path.try_exists() {
        Ok(false) => Ok(None),
        _ => read_str(path).map(Some),
    }
}

fn read_hint(e: &std::io::Error) -> &'static str {
    match e.kind() {
        ErrorKind::NotFound => "; the kernel does not provide it (check the cpufreq driver)",
        ErrorKind::PermissionDenied => "; run as root",
        _ => "",
    }
}

/// Reads a sysfs attribute holding one unsigned number.
pub fn read_u64(path: &Path) -> Result<u64, String> {
    let s = read_str(path)?;
    s.parse().map_err(|_| format!("{} holds '{s}', expected a number", display(path)))
}

/// Reads a frequency attribute, kHz.
pub fn read_khz(path: &Path) -> Result<u32, String> {
    let v = read_u64(path)?;
    u32::try_from(v).map_err(|_| format!("{} holds {v}, which is not a frequency in kHz", display(path)))
}

/// Writes `value` to a sysfs attribute (one write, like `echo value > file`). The file must
/// exist (no O_CREAT: hetlabd never creates files in sysfs), must not be a symbolic link
/// (O_NOFOLLOW: a link planted in a fake or shared tree cannot redirect a root write), and must
/// be a regular file with one name (sysfs attributes are; a FIFO or a hard link to another
/// file is refused before anything is written, so the open does not truncate: that is done
/// after the check).
pub fn write_str(path: &Path, value: &str) -> Result<(), String> {
    let result = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .and_then(|f| {
            let meta = f.metadata()?;
            if !meta.file_type().is_file() || meta.nlink() != 1 {
                return Err(std::io::Error::other("not a sysfs attribute (a FIFO, device or hard link)"));
            }
            Ok(f)
        })
        .and_then(|mut f| {
            // sysfs ignores the length; a regular file in a test tree must not keep old bytes
            let _ = f.set_len(0);
            f.write_all(format!("{value}\n").as_bytes())
        });
    result.map_err(|e| {
        let hint = match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => "; run as root",
            Some(libc::EISDIR) => "; the path is a directory, not a sysfs attribute",
            Some(libc::ENOENT) => "; the kernel does not provide it (check the cpufreq driver)",
            Some(libc::ELOOP) => "; it is a symbolic link, which hetlabd never writes through (check --sysfs-root)",
            Some(libc::EINVAL) => {
                "; the kernel rejected the value (is it within the policy's limits, and is the governor right?)"
            }
            Some(libc::EBUSY) => "; the attribute is busy, try again",
            _ => "",
        };
        format!("cannot write '{value}' to {}: {e}{hint}", display(path))
    })
}

/// One cpufreq policy (a cluster on big.LITTLE).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `policy0`, or `cpu0` on kernels without policy directories.
    pub name: String,
    pub dir: PathBuf,
    /// All CPUs of the policy, online or not.
    pub related_cpus: Vec<usize>,
    /// Its online CPUs.
    pub affected_cpus: Vec<usize>,
    /// Frequencies, kHz, ascending.
    pub opps_khz: Vec<u32>,
    /// Which file the OPP table came from.
    pub opps_source: &'static str,
    pub cpuinfo_min_khz: u32,
    pub cpuinfo_max_khz: u32,
    /// cpuinfo_transition_latency, ns; 0 when unknown (the kernel's CPUFREQ_ETERNAL, -1).
    pub transition_latency_ns: u32,
    pub available_governors: Vec<String>,
}

impl Policy {
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    pub fn governor(&self) -> Result<String, String> {
        read_str(&self.file("scaling_governor"))
    }
    pub fn min_khz(&self) -> Result<u32, String> {
        read_khz(&self.file("scaling_min_freq"))
    }
    pub fn max_khz(&self) -> Result<u32, String> {
        read_khz(&self.file("scaling_max_freq"))
    }
    /// scaling_setspeed; only meaningful under the userspace governor ("<unsupported>" otherwise).
    pub fn setspeed_khz(&self) -> Result<Option<u32>, String> {
        let s = read_str(&self.file("scaling_setspeed"))?;
        Ok(s.parse().ok())
    }
    pub fn cur_khz(&self) -> Result<u32, String> {
        read_khz(&self.file("scaling_cur_freq"))
    }
    pub fn has_governor(&self, name: &str) -> bool {
        self.available_governors.iter().any(|g| g == name)
    }

    /// Switches the governor and reads it back.
    pub fn set_governor(&self, name: &str) -> Result<(), String> {
        let path = self.file("scaling_governor");
        write_str(&path, name)?;
        let now = read_str(&path)?;
        if now != name {
            return Err(format!(
                "wrote '{name}' to {} but it reads '{now}'; is the governor built into the kernel?",
                display(&path)
            ));
        }
        Ok(())
    }

    /// Writes scaling_setspeed. The frequency must be in the OPP table: this is the only place
    /// a frequency is written to the hardware.
    pub fn set_speed(&self, khz: u32) -> Result<(), String> {
        if !self.opps_khz.contains(&khz) {
            return Err(format!(
                "refusing to write {khz} kHz to {}: not in the policy's frequency list ({})",
                display(&self.file("scaling_setspeed")),
                self.opps_source
            ));
        }
        write_str(&self.file("scaling_setspeed"), &khz.to_string())
    }

    pub fn set_min_khz(&self, khz: u32) -> Result<(), String> {
        write_str(&self.file("scaling_min_freq"), &khz.to_string())
    }
    pub fn set_max_khz(&self, khz: u32) -> Result<(), String> {
        write_str(&self.file("scaling_max_freq"), &khz.to_string())
    }

    /// Sets [min, max] in the order the kernel accepts: max may not go below min and vice
    /// versa, so raise max first when the new min is above the current max.
    pub fn set_limits(&self, min_khz: u32, max_khz: u32) -> Result<(), String> {
        let cur_max = self.max_khz().unwrap_or(u32::MAX);
        if min_khz > cur_max {
            self.set_max_khz(max_khz)?;
            self.set_min_khz(min_khz)
        } else {
            self.set_min_khz(min_khz)?;
            self.set_max_khz(max_khz)
        }
    }
}

/// `<sysfs>/devices/system/cpu`.
pub fn cpu_dir(roots: &Roots) -> PathBuf {
    roots.sys("devices/system/cpu")
}

fn numbered(dir: &Path, prefix: &str) -> Vec<(usize, PathBuf)> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(n) = name.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok()) {
                out.push((n, e.path()));
            }
        }
    }
    out.sort();
    out
}

/// All cpufreq policies, ordered by their first CPU.
pub fn discover(roots: &Roots) -> Result<Vec<Policy>, String> {
    let cpufreq = cpu_dir(roots).join("cpufreq");
    let mut dirs: Vec<(String, PathBuf)> =
        numbered(&cpufreq, "policy").into_iter().map(|(n, p)| (format!("policy{n}"), p)).collect();
    if dirs.is_empty() {
        // Pre-4.3 kernels: cpuN/cpufreq, shared by the CPUs of a policy (symlinks).
        let mut seen = Vec::new();
        for (n, p) in numbered(&cpu_dir(roots), "cpu") {
            let d = p.join("cpufreq");
            if d.join("scaling_governor").exists() {
                let real = fs::canonicalize(&d).unwrap_or(d.clone());
                if !seen.contains(&real) {
                    seen.push(real);
                    dirs.push((format!("cpu{n}"), d));
                }
            }
        }
    }
    if dirs.is_empty() {
        return Err(format!(
            "no cpufreq policies under {}: this kernel has no cpufreq driver for these CPUs \
             (it needs CONFIG_CPU_FREQ and a driver such as cpufreq-dt, and the board's OPP tables)",
            display(&cpufreq)
        ));
    }
    // Every policy is kept by its resolved path, and that path must lie under the resolved
    // sysfs root: a policy directory that is (or passes through) a link out of the tree would
    // make a root daemon write somewhere else.
    let root = fs::canonicalize(&roots.sysfs)
        .map_err(|e| format!("cannot resolve the sysfs root {}: {e}; check --sysfs-root", display(&roots.sysfs)))?;
    let mut policies = Vec::new();
    for (name, dir) in dirs {
        let real = fs::canonicalize(&dir).map_err(|e| format!("cannot resolve {}: {e}", display(&dir)))?;
        if !real.starts_with(&root) {
            return Err(format!(
                "{} leads to {}, outside the sysfs root {}; remove the link or check --sysfs-root",
                display(&dir),
                display(&real),
                display(&root)
            ));
        }
        policies.push(read_policy(name, real)?);
    }
    policies.sort_by_key(|p| p.related_cpus.first().copied().unwrap_or(usize::MAX));
    // A CPU is in one policy (cpufreq_online gives each CPU one): overlapping related_cpus are
    // no tree a kernel shows, and two policies would drive one CPU's clock.
    for (i, a) in policies.iter().enumerate() {
        for b in &policies[i + 1..] {
            if let Some(cpu) = a.related_cpus.iter().find(|c| b.related_cpus.contains(c)) {
                return Err(format!(
                    "{} and {} both list CPU {cpu} in related_cpus: a CPU belongs to one cpufreq policy; correct \
                     the trees under --sysfs-root",
                    display(&a.dir.join("related_cpus")),
                    display(&b.dir.join("related_cpus"))
                ));
            }
        }
    }
    Ok(policies)
}

fn read_policy(name: String, dir: PathBuf) -> Result<Policy, String> {
    let f = |n: &str| dir.join(n);
    let related_cpus =
        parse_cpu_list(&read_str(&f("related_cpus"))?).map_err(|e| format!("{}: {e}", display(&f("related_cpus"))))?;
    let affected_cpus = match read_optional(&f("affected_cpus"))? {
        Some(s) => parse_cpu_list(&s).map_err(|e| format!("{}: {e}", display(&f("affected_cpus"))))?,
        None => related_cpus.clone(),
    };
    if related_cpus.is_empty() {
        return Err(format!("{} lists no CPUs", display(&f("related_cpus"))));
    }
    let cpuinfo_min_khz = read_khz(&f("cpuinfo_min_freq"))?;
    let cpuinfo_max_khz = read_khz(&f("cpuinfo_max_freq"))?;
    if cpuinfo_min_khz == 0 || cpuinfo_max_khz < cpuinfo_min_khz {
        return Err(format!(
            "{}: cpuinfo_min_freq {cpuinfo_min_khz} and cpuinfo_max_freq {cpuinfo_max_khz} kHz are not a frequency range",
            display(&dir)
        ));
    }
    let transition_latency_ns = match read_u64(&f("cpuinfo_transition_latency")) {
        Ok(v) if v < u64::from(u32::MAX) => v as u32,
        _ => 0, // CPUFREQ_ETERNAL (-1 printed as 4294967295) or absent: unknown
    };
    let parse_list = |text: &str, file: &Path| -> Result<Vec<u32>, String> {
        text.split_whitespace()
            .map(|w| w.parse::<u32>().map_err(|_| format!("{}: '{w}' is not a frequency in kHz", display(file))))
            .collect()
    };
    let (mut opps_khz, opps_source) = if let Some(s) = read_optional(&f("scaling_available_frequencies"))? {
        (parse_list(&s, &f("scaling_available_frequencies"))?, "scaling_available_frequencies")
    } else if let Some(s) = read_optional(&f("stats/time_in_state"))? {
        let firsts: String = s.lines().filter_map(|l| l.split_whitespace().next()).collect::<Vec<_>>().join(" ");
        (parse_list(&firsts, &f("stats/time_in_state"))?, "stats/time_in_state")
    } else {
        (vec![cpuinfo_min_khz, cpuinfo_max_khz], "cpuinfo_min_freq/cpuinfo_max_freq")
    };
    opps_khz.retain(|&k| k > 0);
    opps_khz.sort_unstable();
    opps_khz.dedup();
    if opps_khz.is_empty() {
        return Err(format!("{}: the policy lists no frequencies ({opps_source})", display(&dir)));
    }
    let available_governors = read_optional(&f("scaling_available_governors"))?
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    Ok(Policy {
        name,
        dir,
        related_cpus,
        affected_cpus,
        opps_khz,
        opps_source,
        cpuinfo_min_khz,
        cpuinfo_max_khz,
        transition_latency_ns,
        available_governors,
    })
}

/// The largest `cpu_capacity`: arch_topology normalises the biggest CPU to
/// SCHED_CAPACITY_SCALE, so no CPU shows more.
pub const MAX_CPU_CAPACITY: u32 = 1024;

/// `cpu_capacity` of `cpu` (arch_topology, ARM: 1..=1024, the largest CPU at 1024): `Ok(None)`
/// if the kernel has none. The outer error is a file that cannot be read (a FIFO in its
/// place); the inner one a value that is not a capacity, naming the file and the value: the
/// caller decides whether the run can go on without it (a note and the platform's capacity for
/// `govern`, a TODO for `platform from-board`), never a silently clamped number.
pub fn cpu_capacity(roots: &Roots, cpu: usize) -> Result<Result<Option<u32>, String>, String> {
    let path = cpu_dir(roots).join(format!("cpu{cpu}/cpu_capacity"));
    let Some(text) = read_optional(&path)? else {
        return Ok(Ok(None));
    };
    Ok(match text.parse::<u32>() {
        Ok(v) if (1..=MAX_CPU_CAPACITY).contains(&v) => Ok(Some(v)),
        _ => Err(format!("{} holds '{text}', not a capacity in 1..={MAX_CPU_CAPACITY}", display(&path))),
    })
}

#[cfg(test)]
pub(crate) mod fake {
    //! A fake sysfs/procfs tree of an Exynos 5422 (mainline OPPs), for unit tests.
    use std::fs;
    use std::path::{Path, PathBuf};

    pub const LITTLE_KHZ: &[u32] =
        &[200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 1000000, 1100000, 1200000, 1300000, 1400000];
    pub const BIG_KHZ: &[u32] = &[
        200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 1000000, 1100000, 1200000, 1300000, 1400000,
        1500000, 1600000, 1700000, 1800000, 1900000, 2000000,
    ];

    pub struct Tree {
        pub root: PathBuf,
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    fn w(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, format!("{s}\n")).unwrap();
    }

    pub fn exynos5422(tag: &str) -> Tree {
        let root = std::env::temp_dir().join(format!("hetlab-linux-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let sys = root.join("sys");
        for (n, cpus, opps) in [(0, "0-3", LITTLE_KHZ), (4, "4-7", BIG_KHZ)] {
            let d = sys.join(format!("devices/system/cpu/cpufreq/policy{n}"));
            let list: Vec<String> = opps.iter().map(|k| k.to_string()).collect();
            w(&d.join("scaling_available_frequencies"), &(list.join(" ") + " "));
            w(
                &d.join("scaling_available_governors"),
                "conservative ondemand userspace powersave performance schedutil",
            );
            w(&d.join("scaling_governor"), "ondemand");
            w(&d.join("scaling_min_freq"), &opps[0].to_string());
            w(&d.join("scaling_max_freq"), &opps[opps.len() - 1].to_string());
            w(&d.join("scaling_setspeed"), "<unsupported>");
            w(&d.join("scaling_cur_freq"), &opps[0].to_string());
            w(&d.join("cpuinfo_min_freq"), &opps[0].to_string());
            w(&d.join("cpuinfo_max_freq"), &opps[opps.len() - 1].to_string());
            w(&d.join("cpuinfo_transition_latency"), "140000");
            w(&d.join("related_cpus"), &cpus.replace("0-3", "0 1 2 3").replace("4-7", "4 5 6 7"));
            w(&d.join("affected_cpus"), &cpus.replace("0-3", "0 1 2 3").replace("4-7", "4 5 6 7"));
        }
        for cpu in 0..8 {
            w(&sys.join(format!("devices/system/cpu/cpu{cpu}/cpu_capacity")), if cpu < 4 { "462" } else { "1024" });
        }
        let proc_ = root.join("proc");
        let mut stat = String::from("cpu  0 0 0 0 0 0 0 0 0 0\n");
        for cpu in 0..8 {
            stat += &format!("cpu{cpu} 100 0 50 1000 10 0 0 0 0 0\n");
        }
        stat += "intr 0\nctxt 0\n";
        w(&proc_.join("stat"), stat.trim_end());
        fs::create_dir_all(root.join("run")).unwrap();
        Tree { root }
    }

    impl Tree {
        pub fn roots(&self) -> crate::Roots {
            crate::Roots::new(self.root.join("sys"), self.root.join("proc"))
        }
        pub fn policy(&self, n: usize) -> PathBuf {
            self.root.join(format!("sys/devices/system/cpu/cpufreq/policy{n}"))
        }
        /// The run directory the daemon uses for this tree (`run` beside `sys`).
        pub fn run_dir(&self) -> PathBuf {
            self.root.join("run")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::*;
    use super::*;

    #[test]
    fn discovers_the_two_exynos5422_policies() {
        let t = exynos5422("discover");
        let p = discover(&t.roots()).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].name, "policy0");
        assert_eq!(p[0].related_cpus, vec![0, 1, 2, 3]);
        assert_eq!(p[1].affected_cpus, vec![4, 5, 6, 7]);
        assert_eq!(p[0].opps_khz, LITTLE_KHZ);
        assert_eq!(p[1].opps_khz, BIG_KHZ);
        assert_eq!(p[1].transition_latency_ns, 140000);
        assert!(p[0].has_governor("userspace"));
        assert_eq!(p[0].governor().unwrap(), "ondemand");
        assert_eq!(p[0].setspeed_khz().unwrap(), None);
        assert_eq!(cpu_capacity(&t.roots(), 5), Ok(Ok(Some(1024))));
        assert_eq!(cpu_capacity(&t.roots(), 9), Ok(Ok(None)), "no such CPU: no capacity");
        for bad in ["1025", "99999", "0", "-5", "lots"] {
            std::fs::write(t.root.join("sys/devices/system/cpu/cpu5/cpu_capacity"), format!("{bad}\n")).unwrap();
            let e = cpu_capacity(&t.roots(), 5).unwrap().unwrap_err();
            let file = t.root.join("sys/devices/system/cpu/cpu5/cpu_capacity");
            assert_eq!(e, format!("{} holds '{bad}', not a capacity in 1..=1024", file.display()));
        }
    }

    /// Issue 34, class 9: hetlabd took policies whose related_cpus overlap.
    #[test]
    fn overlapping_related_cpus_are_refused_naming_both_files() {
        let t = exynos5422("overlap");
        fs::write(t.policy(4).join("related_cpus"), "3 4 5 6 7\n").unwrap();
        let e = discover(&t.roots()).unwrap_err();
        assert!(e.contains("policy0/related_cpus and ") && e.contains("policy4/related_cpus both list CPU 3"), "{e}");
    }

    #[test]
    fn falls_back_to_cpuinfo_limits_without_a_frequency_list() {
        let t = exynos5422("noavail");
        fs::remove_file(t.policy(0).join("scaling_available_frequencies")).unwrap();
        let p = discover(&t.roots()).unwrap();
        assert_eq!(p[0].opps_khz, vec![200000, 1400000]);
        assert_eq!(p[0].opps_source, "cpuinfo_min_freq/cpuinfo_max_freq");
        fs::create_dir_all(t.policy(0).join("stats")).unwrap();
        fs::write(t.policy(0).join("stats/time_in_state"), "200000 5\n700000 0\n1400000 9\n").unwrap();
        let p = discover(&t.roots()).unwrap();
        assert_eq!(p[0].opps_khz, vec![200000, 700000, 1400000]);
    }

    #[test]
    fn no_cpufreq_is_a_clear_error() {
        let t = exynos5422("nocpufreq");
        fs::remove_dir_all(t.root.join("sys/devices/system/cpu/cpufreq")).unwrap();
        let e = discover(&t.roots()).unwrap_err();
        assert!(e.contains("no cpufreq policies under") && e.contains("CONFIG_CPU_FREQ"), "{e}");
    }

    #[test]
    fn writes_only_listed_frequencies_and_names_the_file_on_failure() {
        let t = exynos5422("writes");
        let p = discover(&t.roots()).unwrap();
        p[0].set_governor("userspace").unwrap();
        p[0].set_speed(1400000).unwrap();
        assert_eq!(p[0].setspeed_khz().unwrap(), Some(1400000));
        let e = p[0].set_speed(1450000).unwrap_err();
        assert!(e.contains("not in the policy's frequency list"), "{e}");
        fs::remove_file(t.policy(0).join("scaling_setspeed")).unwrap();
        fs::create_dir(t.policy(0).join("scaling_setspeed")).unwrap();
        let e = p[0].set_speed(200000).unwrap_err();
        assert!(e.contains("policy0/scaling_setspeed") && e.contains("directory"), "{e}");
    }

    #[test]
    fn planted_links_fifos_and_oversized_attributes_are_refused_without_blocking() {
        use std::os::unix::ffi::OsStrExt;
        let t = exynos5422("planted");
        let p = discover(&t.roots()).unwrap();
        p[0].set_governor("userspace").unwrap();
        // a link in place of an attribute is never written through
        let victim = t.root.join("victim");
        fs::write(&victim, "keep\n").unwrap();
        let speed = t.policy(0).join("scaling_setspeed");
        fs::remove_file(&speed).unwrap();
        std::os::unix::fs::symlink(&victim, &speed).unwrap();
        let e = p[0].set_speed(200000).unwrap_err();
        assert!(e.contains("symbolic link") && !e.contains('\n'), "{e}");
        // nor through a hard link to another file
        fs::remove_file(&speed).unwrap();
        fs::hard_link(&victim, &speed).unwrap();
        let e = p[0].set_speed(200000).unwrap_err();
        assert!(e.contains("hard link"), "{e}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep\n");
        // a FIFO is refused at once for reading and for writing, /dev/zero is not read forever
        fs::remove_file(&speed).unwrap();
        let c = std::ffi::CString::new(speed.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(p[0].setspeed_khz().unwrap_err().contains("not a regular file"));
        assert!(p[0].set_speed(200000).is_err());
        let gov = t.policy(4).join("scaling_governor");
        fs::remove_file(&gov).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &gov).unwrap();
        assert!(p[1].governor().unwrap_err().contains("not a sysfs attribute"));
        fs::remove_file(&gov).unwrap();
        fs::write(&gov, vec![b'x'; 5000]).unwrap();
        assert!(p[1].governor().unwrap_err().contains("more than 4096 bytes"));
        // a policy directory that is a link out of the sysfs root is not a policy
        let outside = t.root.join("outside");
        fs::rename(t.policy(4), &outside).unwrap();
        std::os::unix::fs::symlink(&outside, t.policy(4)).unwrap();
        let e = discover(&t.roots()).unwrap_err();
        assert!(e.contains("outside the sysfs root") && e.contains("policy4"), "{e}");
    }

    #[test]
    fn limits_are_written_in_an_order_the_kernel_accepts() {
        let t = exynos5422("limits");
        let p = discover(&t.roots()).unwrap();
        p[1].set_limits(200000, 600000).unwrap();
        assert_eq!((p[1].min_khz().unwrap(), p[1].max_khz().unwrap()), (200000, 600000));
        p[1].set_limits(1000000, 2000000).unwrap();
        assert_eq!((p[1].min_khz().unwrap(), p[1].max_khz().unwrap()), (1000000, 2000000));
    }
}
