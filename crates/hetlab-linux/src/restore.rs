//! Saving and restoring a policy's settings, and the run-directory lock.
//!
//! Before changing anything, hetlabd saves each policy's `scaling_governor`, `scaling_min_freq`
//! and `scaling_max_freq` (and `scaling_setspeed` when the governor was already userspace),
//! in memory and in `<run>/hetlabd.saved`, `<run>` being the run directory of the sysfs root
//! ([`crate::Roots::run_dir`]: `/run` for `/sys`). A [`Guard`] writes them back on normal exit,
//! on SIGINT/SIGTERM (the daemon loop returns), on any error, and on Drop (a panic unwinding).
//! Only a SIGKILL or a power cut skips that; the state file then survives, the next
//! `hetlabd govern` refuses to start, and `hetlabd restore` writes the settings back. The file
//! is found from the sysfs root alone, so no option can make the next daemon miss it (and save
//! the killed one's `userspace` as the original).
//!
//! `<run>/hetlabd.lock` holds the pid of the daemon that owns the frequencies, under an
//! exclusive flock(2) for the daemon's lifetime: a second daemon finds it locked and refuses.
//! The policy directories are flock(2)ed too ([`PolicyLocks`]): a daemon that reaches them by
//! another path finds them locked and refuses.

use std::fs::{self, File};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::sysfs::{self, Policy};
use crate::{display, outfile};

/// One policy's settings before hetlabd touched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub name: String,
    pub dir: PathBuf,
    pub governor: String,
    pub min_khz: u32,
    pub max_khz: u32,
    /// scaling_setspeed, kept only when the governor was userspace.
    pub setspeed_khz: Option<u32>,
}

impl Saved {
    pub fn of(p: &Policy) -> Result<Saved, String> {
        let governor = p.governor()?;
        let setspeed_khz = if governor == "userspace" { p.setspeed_khz()? } else { None };
        Ok(Saved {
            name: p.name.clone(),
            dir: p.dir.clone(),
            governor,
            min_khz: p.min_khz()?,
            max_khz: p.max_khz()?,
            setspeed_khz,
        })
    }

    fn line(&self) -> String {
        let speed = self.setspeed_khz.map_or("-".to_string(), |s| s.to_string());
        format!(
            "policy\t{}\t{}\t{}\t{}\t{}\t{}",
            self.name,
            display(&self.dir),
            self.governor,
            self.min_khz,
            self.max_khz,
            speed
        )
    }

    fn parse(line: &str) -> Option<Saved> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 7 || f[0] != "policy" {
            return None;
        }
        Some(Saved {
            name: f[1].to_string(),
            dir: PathBuf::from(f[2]),
            governor: f[3].to_string(),
            min_khz: f[4].parse().ok()?,
            max_khz: f[5].parse().ok()?,
            setspeed_khz: if f[6] == "-" { None } else { Some(f[6].parse().ok()?) },
        })
    }

    /// "policy0 governor=ondemand min=200000 max=1400000".
    pub fn describe(&self) -> String {
        let speed = self.setspeed_khz.map_or(String::new(), |s| format!(" setspeed={s}"));
        format!("{} governor={} min={} max={}{speed}", self.name, self.governor, self.min_khz, self.max_khz)
    }

    /// Writes the settings back: the governor, then setspeed (userspace only), then min and
    /// max in an order the kernel accepts. Every step is tried; the errors are returned.
    pub fn restore(&self) -> Vec<String> {
        let mut errors = Vec::new();
        let f = |n: &str| self.dir.join(n);
        match sysfs::read_str(&f("scaling_governor")) {
            Ok(g) if g == self.governor => {}
            _ => {
                if let Err(e) = sysfs::write_str(&f("scaling_governor"), &self.governor) {
                    errors.push(e);
                }
            }
        }
        if let Some(s) = self.setspeed_khz {
            if let Err(e) = sysfs::write_str(&f("scaling_setspeed"), &s.to_string()) {
                errors.push(e);
            }
        }
        let cur_min = sysfs::read_khz(&f("scaling_min_freq")).ok();
        let cur_max = sysfs::read_khz(&f("scaling_max_freq")).ok();
        if cur_min != Some(self.min_khz) || cur_max != Some(self.max_khz) {
            let write = |name: &str, v: u32| sysfs::write_str(&f(name), &v.to_string());
            // max may not go below min: raise max first if the saved min is above the current max
            let order: [(&str, u32); 2] = if cur_max.is_some_and(|m| self.min_khz > m) {
                [("scaling_max_freq", self.max_khz), ("scaling_min_freq", self.min_khz)]
            } else {
                [("scaling_min_freq", self.min_khz), ("scaling_max_freq", self.max_khz)]
            };
            for (name, v) in order {
                if let Err(e) = write(name, v) {
                    errors.push(e);
                }
            }
        }
        errors
    }
}

/// Restores the saved policies when asked, or when dropped while armed.
pub struct Guard {
    saved: Vec<Saved>,
    state_file: Option<PathBuf>,
    armed: bool,
}

impl Guard {
    pub fn new(state_file: Option<PathBuf>) -> Guard {
        Guard { saved: Vec::new(), state_file, armed: false }
    }

    /// Saves `p` (before any change to it) and persists the state file.
    pub fn save(&mut self, p: &Policy) -> Result<&Saved, String> {
        let s = Saved::of(p)?;
        self.saved.push(s);
        self.armed = true;
        self.persist()?;
        Ok(self.saved.last().unwrap())
    }

    pub fn saved(&self) -> &[Saved] {
        &self.saved
    }

    fn persist(&self) -> Result<(), String> {
        let Some(path) = &self.state_file else { return Ok(()) };
        let mut text = format!(
            "# hetlabd: cpufreq settings saved before pid {} changed them; `hetlabd restore` writes them back\n",
            std::process::id()
        );
        for s in &self.saved {
            text += &s.line();
            text.push('\n');
        }
        outfile::write_whole(path, text.as_bytes())
            .map_err(|e| format!("{e}; check that the run directory is writable"))
    }

    /// Restores every saved policy (each step tried even if another failed). On success the
    /// state file is removed and the summary returned; on failure the file is kept for
    /// `hetlabd restore` and the errors are returned.
    pub fn restore(&mut self) -> Result<Vec<String>, String> {
        if !self.armed {
            return Ok(Vec::new());
        }
        self.armed = false;
        let mut errors = Vec::new();
        for s in &self.saved {
            errors.extend(s.restore());
        }
        if errors.is_empty() {
            if let Some(p) = &self.state_file {
                let _ = fs::remove_file(p);
            }
            Ok(self.saved.iter().map(Saved::describe).collect())
        } else {
            let keep =
                self.state_file.as_ref().map_or(String::new(), |p| format!(" (saved settings kept in {})", display(p)));
            Err(format!("restoring the policies failed{keep}: {}", errors.join("; ")))
        }
    }

    /// Restores after a run that ended with `result`, and merges both outcomes: the run's value
    /// with the restored settings recorded by `record`, or one error that says whether the
    /// settings were put back.
    pub fn restore_after<T>(
        &mut self,
        result: Result<T, String>,
        record: impl FnOnce(&mut T, Vec<String>),
    ) -> Result<T, String> {
        match (result, self.restore()) {
            (Ok(mut value), Ok(restored)) => {
                record(&mut value, restored);
                Ok(value)
            }
            (Ok(_), Err(e)) => Err(e),
            (Err(e), Ok(_)) => Err(format!("{e} (policy settings restored)")),
            (Err(e), Err(r)) => Err(format!("{e}; then {r}")),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.armed {
            match self.restore() {
                // never eprintln!: a closed stderr must not panic while unwinding
                Ok(done) => drop(writeln!(std::io::stderr(), "hetlabd: restored {}", done.join("; "))),
                Err(e) => drop(writeln!(std::io::stderr(), "hetlabd: error: {e}")),
            }
        }
    }
}

/// Reads a state file written by a [`Guard`] (never through a link: the run directory may be
/// shared).
pub fn read_state(path: &Path) -> Result<Vec<Saved>, String> {
    Ok(read_state_lines(path)?.into_iter().map(|(_, s)| s).collect())
}

/// The pid of the daemon that wrote the state file `path` (from its first line), if it says.
pub fn saved_by(path: &Path) -> Option<u32> {
    let text = crate::infile::read_text(path, STATE_MAX_BYTES, false).ok()?;
    let head = text.lines().next()?.strip_prefix('#')?;
    head.split_once(" pid ")?.1.split_whitespace().next()?.parse().ok()
}

/// [`read_state`] with each policy's line number (from 1), for messages about the file.
pub fn read_state_lines(path: &Path) -> Result<Vec<(usize, Saved)>, String> {
    let text = crate::infile::read_text(path, STATE_MAX_BYTES, false)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let s = Saved::parse(line).ok_or_else(|| format!("{}:{}: not a saved policy line", display(path), i + 1))?;
        out.push((i + 1, s));
    }
    Ok(out)
}

/// Checks saved settings (with their line numbers) against the policies the kernel has
/// (`policies`, from [`sysfs::discover`] under the sysfs root), all of them before anything is
/// written: each line must name one of their directories, and no policy twice (two lines would
/// write two different settings); a governor the policy lists (a policy that lists none cannot
/// be checked, so it is refused); frequencies within its cpuinfo limits, and a setspeed from
/// its frequency list (the only values the daemon ever writes there). A planted or corrupt
/// state file can then make `hetlabd restore` write only cpufreq attributes, and only values
/// the policy accepts.
pub fn check_saved(saved: &[(usize, Saved)], policies: &[Policy]) -> Result<(), String> {
    for (k, (line, s)) in saved.iter().enumerate() {
        let at = format!("line {line}");
        if let Some((first, _)) = saved[..k].iter().find(|(_, o)| o.dir == s.dir || o.name == s.name) {
            return Err(format!(
                "{at}: policy {} is saved twice (also on line {first}); remove one of the lines",
                s.name
            ));
        }
        let p = policies.iter().find(|p| p.dir == s.dir && p.name == s.name).ok_or_else(|| {
            format!(
                "{at}: saved policy {} at {} is not a cpufreq policy under the sysfs root (found: {}); pass the \
                 daemon's --sysfs-root, or remove the state file if it was not written by hetlabd",
                s.name,
                display(&s.dir),
                policies.iter().map(|p| display(&p.dir)).collect::<Vec<_>>().join(", ")
            )
        })?;
        if p.available_governors.is_empty() {
            return Err(format!(
                "{at}: {} lists no governors (scaling_available_governors is missing or empty), so the saved \
                 governor '{}' cannot be checked; restore it by hand",
                s.name, s.governor
            ));
        }
        if !p.available_governors.contains(&s.governor) {
            return Err(format!(
                "{at}: saved governor '{}' of {} is not one it offers ({})",
                s.governor,
                s.name,
                p.available_governors.join(" ")
            ));
        }
        let limits = p.cpuinfo_min_khz..=p.cpuinfo_max_khz;
        for (what, khz) in [("min", Some(s.min_khz)), ("max", Some(s.max_khz)), ("setspeed", s.setspeed_khz)] {
            if let Some(khz) = khz.filter(|k| !limits.contains(k)) {
                return Err(format!(
                    "{at}: saved {what} {khz} kHz of {} is outside its limits {}..{} kHz",
                    s.name, p.cpuinfo_min_khz, p.cpuinfo_max_khz
                ));
            }
        }
        if let Some(khz) = s.setspeed_khz.filter(|k| !p.opps_khz.contains(k)) {
            return Err(format!(
                "{at}: saved setspeed {khz} kHz of {} is not one of its frequencies ({})",
                s.name, p.opps_source
            ));
        }
        if s.min_khz > s.max_khz {
            return Err(format!("{at}: saved min {} kHz of {} is above its max {} kHz", s.min_khz, s.name, s.max_khz));
        }
    }
    Ok(())
}

pub const LOCK_FILE: &str = "hetlabd.lock";
pub const STATE_FILE: &str = "hetlabd.saved";
/// The state file's size bound: a line per policy (~200 bytes with its path), for at most
/// 8192 policies (one per CPU), is under 2 MiB.
pub const STATE_MAX_BYTES: u64 = 2 << 20;

/// Exclusive flock(2)s on the cpufreq policy directories themselves, held while the value
/// lives.
///
/// The run-directory lock stops a second hetlabd on the same sysfs root; one that reaches the
/// same policies by another path to a tree laid out like sysfs (a bind mount of it: only the
/// kernel's own sysfs maps every path to `/run`, [`crate::Roots::run_dir`]) has another run
/// directory. What
/// every hetlabd on these policies shares is the policy directories, so they are locked too:
/// flock works on a directory's descriptor (sysfs and a test tree alike), belongs to the open
/// file (a second open, even in the same process, conflicts), and is dropped by the kernel when
/// the holder exits, even by SIGKILL, so it never goes stale (a killed daemon's settings are
/// then `hetlabd restore`'s job, through the run directory's state file).
pub struct PolicyLocks {
    _dirs: Vec<File>,
}

impl PolicyLocks {
    pub fn acquire(policies: &[Policy]) -> Result<PolicyLocks, String> {
        let mut dirs = Vec::new();
        for p in policies {
            let dir = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
                .open(&p.dir)
                .map_err(|e| format!("cannot open {}: {e}", display(&p.dir)))?;
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                return Err(format!(
                    "another hetlabd is already managing {} (it holds a lock on {}), perhaps through another path to \
                     sysfs; stop it first",
                    p.name,
                    display(&p.dir)
                ));
            }
            dirs.push(dir);
        }
        Ok(PolicyLocks { _dirs: dirs })
    }
}

/// The exclusive lock of `<run-dir>/hetlabd.lock`, held while the value lives.
pub struct RunLock {
    _file: File,
    pub path: PathBuf,
}

impl RunLock {
    pub fn acquire(run_dir: &Path) -> Result<RunLock, String> {
        if !run_dir.is_dir() {
            return Err(format!(
                "run directory {} (beside the sysfs root) does not exist; create it, or check --sysfs-root",
                display(run_dir)
            ));
        }
        let path = run_dir.join(LOCK_FILE);
        let mut file = outfile::open_lock(&path)?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim();
            let who = if pid.is_empty() { String::new() } else { format!(" (pid {pid})") };
            return Err(format!(
                "another hetlabd{who} is already managing CPU frequencies: it holds {}; stop it first",
                display(&path)
            ));
        }
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = writeln!(file, "{}", std::process::id());
        Ok(RunLock { _file: file, path })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::{discover, fake};

    #[test]
    fn a_guard_restores_governor_min_max_and_removes_its_state_file() {
        let t = fake::exynos5422("guard");
        let pols = discover(&t.roots()).unwrap();
        let state = t.root.join(STATE_FILE);
        {
            let mut g = Guard::new(Some(state.clone()));
            for p in &pols {
                g.save(p).unwrap();
            }
            let saved = read_state(&state).unwrap();
            assert_eq!(saved, g.saved());
            pols[0].set_governor("userspace").unwrap();
            pols[0].set_speed(900000).unwrap();
            pols[1].set_limits(600000, 800000).unwrap();
            // dropped here without an explicit restore: Drop restores
        }
        assert_eq!(pols[0].governor().unwrap(), "ondemand");
        assert_eq!((pols[1].min_khz().unwrap(), pols[1].max_khz().unwrap()), (200000, 2000000));
        assert!(!state.exists());
    }

    #[test]
    fn restore_reports_every_failure_and_keeps_the_state_file() {
        let t = fake::exynos5422("guard-fail");
        let pols = discover(&t.roots()).unwrap();
        let state = t.root.join(STATE_FILE);
        let mut g = Guard::new(Some(state.clone()));
        g.save(&pols[0]).unwrap();
        g.save(&pols[1]).unwrap();
        pols[0].set_governor("userspace").unwrap();
        pols[1].set_governor("userspace").unwrap();
        let gov = t.policy(0).join("scaling_governor");
        fs::remove_file(&gov).unwrap();
        fs::create_dir(&gov).unwrap();
        let e = g.restore().unwrap_err();
        assert!(e.contains("policy0/scaling_governor") && e.contains("kept in"), "{e}");
        assert_eq!(pols[1].governor().unwrap(), "ondemand", "the other policy is still restored");
        assert!(state.exists());
    }

    #[test]
    fn the_policy_directories_are_locked_whatever_the_run_directory() {
        let t = fake::exynos5422("policy-lock");
        let pols = discover(&t.roots()).unwrap();
        let held = PolicyLocks::acquire(&pols).unwrap();
        let e = PolicyLocks::acquire(&pols[1..]).err().unwrap();
        assert!(e.contains("another hetlabd is already managing policy4") && e.contains("another path"), "{e}");
        drop(held);
        PolicyLocks::acquire(&pols).unwrap();
    }

    #[test]
    fn every_path_to_the_kernels_sysfs_has_one_run_directory() {
        let t = fake::exynos5422("run-dir");
        assert_eq!(t.roots().run_dir().unwrap(), fs::canonicalize(t.run_dir()).unwrap(), "a tree: run beside sys");
        let kernel = crate::Roots::new("/sys", "/proc");
        if !crate::is_kernel_sysfs(&kernel.sysfs) {
            return; // no sysfs mounted here: nothing to compare with
        }
        assert_eq!(kernel.run_dir().unwrap(), Path::new("/run"));
        // a bind mount of /sys elsewhere (root only: where mount(2) is refused the rule above is
        // the whole test) leads to the same record, not to `<elsewhere>/../run`
        let other = t.root.join("elsewhere/sys");
        fs::create_dir_all(&other).unwrap();
        let c_src = std::ffi::CString::new("/sys").unwrap();
        let c_dst = std::ffi::CString::new(other.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: NUL-terminated paths; a bind mount has no type, data or other flags.
        let mounted =
            unsafe { libc::mount(c_src.as_ptr(), c_dst.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) }
                == 0;
        if mounted {
            let run_dir = crate::Roots::new(&other, "/proc").run_dir();
            // SAFETY: unmounting what this test mounted
            unsafe { libc::umount2(c_dst.as_ptr(), libc::MNT_DETACH) };
            assert_eq!(run_dir.unwrap(), Path::new("/run"));
        }
    }

    #[test]
    fn the_run_lock_is_exclusive() {
        let t = fake::exynos5422("lock");
        let a = RunLock::acquire(&t.root).unwrap();
        let e = RunLock::acquire(&t.root).err().unwrap();
        assert!(e.contains(&format!("pid {}", std::process::id())) && e.contains("already managing"), "{e}");
        drop(a);
        RunLock::acquire(&t.root).unwrap();
        assert!(RunLock::acquire(&t.root.join("nope")).err().unwrap().contains("--sysfs-root"));
    }
}
