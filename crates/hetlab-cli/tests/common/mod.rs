//! A fake sysfs/procfs tree laid out like an Exynos 5422 board (mainline OPPs), and helpers to
//! run hetlabd against it as a separate process.
#![allow(dead_code)]

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const LITTLE_KHZ: &[u32] =
    &[200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 1000000, 1100000, 1200000, 1300000, 1400000];
pub const BIG_KHZ: &[u32] = &[
    200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 1000000, 1100000, 1200000, 1300000, 1400000,
    1500000, 1600000, 1700000, 1800000, 1900000, 2000000,
];

pub fn hetlabd() -> &'static str {
    env!("CARGO_BIN_EXE_hetlabd")
}

/// Only against a hang: a hetlabd the test waits for is killed (with its process group) after
/// this, and the test fails. No test waits for a time.
pub const HANG_GUARD: Duration = Duration::from_secs(300);

/// Every process a test starts goes through these (tests/processes.py is the Python side): the
/// child leads a process group of its own and starts with SIGINT at its default, whatever the
/// test binary inherited (a shell that ignores SIGINT hands the ignore on through exec); a
/// failed assertion, a panic or the hang guard kills the whole group, never leaves it running.
pub trait Guarded {
    /// `spawn()`: the child, killed with its group when the handle is dropped unwaited.
    fn start(&mut self) -> Running;
    /// `output()` with the hang guard: stdin /dev/null, stdout and stderr captured.
    fn run(&mut self) -> Output;
}

impl Guarded for Command {
    fn start(&mut self) -> Running {
        self.process_group(0);
        // SAFETY: signal(2) is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            self.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        Running(Some(self.spawn().unwrap()))
    }

    fn run(&mut self) -> Output {
        self.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).start().output()
    }
}

/// A child started by `Guarded::start`.
pub struct Running(Option<Child>);

impl Running {
    /// `wait_with_output()` under the hang guard (on it the group is killed and the test fails).
    pub fn output(mut self) -> Output {
        let child = self.0.take().unwrap();
        let pgid = child.id() as i32;
        let done = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let done = done.clone();
            std::thread::spawn(move || {
                let end = Instant::now() + HANG_GUARD;
                while !done.load(Ordering::SeqCst) && Instant::now() < end {
                    std::thread::park_timeout(Duration::from_millis(100));
                }
                let hung = !done.load(Ordering::SeqCst);
                if hung {
                    kill_group(pgid);
                }
                hung
            })
        };
        let out = child.wait_with_output().unwrap();
        done.store(true, Ordering::SeqCst);
        watchdog.thread().unpark();
        assert!(!watchdog.join().unwrap(), "the child ran past the hang guard ({HANG_GUARD:?}): killed");
        out
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.0.as_ref().unwrap()
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            kill_group(child.id() as i32);
            let _ = child.wait();
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: kill(2) on a process group this test started (its leader not yet reaped, so the
    // number is still ours).
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// A `/dev/full` of our own in `dir` (mknod needs root: `None` otherwise), never touching /dev.
pub fn dev_full(dir: &Path) -> Option<fs::File> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    fs::create_dir_all(dir).unwrap();
    let full = dir.join("full");
    let _ = fs::remove_file(&full);
    let c = std::ffi::CString::new(full.as_os_str().as_bytes()).unwrap();
    // SAFETY: mknod on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) }, 0);
    Some(fs::OpenOptions::new().write(true).open(&full).unwrap())
}

/// `hetlabd ARGS | head -0`: its standard output closed at once. It must say nothing and end
/// well (or by the SIGPIPE a shell pipeline gives).
pub fn assert_quiet_into_a_closed_pipe(args: &[&str]) {
    let mut child = Command::new(hetlabd()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).start();
    drop(child.stdout.take());
    let out = child.output();
    assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(matches!(out.status.code(), Some(0 | 141)), "{args:?}: {:?}", out.status);
}

pub struct Board {
    pub root: PathBuf,
    /// Cumulative (user, idle) ticks per CPU written so far.
    ticks: Vec<(u64, u64)>,
}

impl Drop for Board {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn w(p: &Path, s: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, format!("{s}\n")).unwrap();
}

/// What a policy's settings are before the daemon starts: (governor, min, max).
pub const START: [(&str, u32, u32); 2] = [("schedutil", 300000, 1300000), ("conservative", 400000, 1800000)];

impl Board {
    pub fn new(tag: &str) -> Board {
        let root = std::env::temp_dir().join(format!("hetlabd-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (i, (n, cpus, opps)) in [(0, "0 1 2 3", LITTLE_KHZ), (4, "4 5 6 7", BIG_KHZ)].into_iter().enumerate() {
            let d = root.join(format!("sys/devices/system/cpu/cpufreq/policy{n}"));
            let list: Vec<String> = opps.iter().map(|k| k.to_string()).collect();
            let (gov, min, max) = START[i];
            w(&d.join("scaling_available_frequencies"), &(list.join(" ") + " "));
            w(
                &d.join("scaling_available_governors"),
                "conservative ondemand userspace powersave performance schedutil",
            );
            w(&d.join("scaling_governor"), gov);
            w(&d.join("scaling_min_freq"), &min.to_string());
            w(&d.join("scaling_max_freq"), &max.to_string());
            w(&d.join("scaling_setspeed"), "<unsupported>");
            w(&d.join("scaling_cur_freq"), &min.to_string());
            w(&d.join("cpuinfo_min_freq"), &opps[0].to_string());
            w(&d.join("cpuinfo_max_freq"), &opps[opps.len() - 1].to_string());
            w(&d.join("cpuinfo_transition_latency"), "140000");
            w(&d.join("related_cpus"), cpus);
            w(&d.join("affected_cpus"), cpus);
        }
        fs::create_dir_all(root.join("run")).unwrap();
        let b = Board { root, ticks: vec![(1000, 5000); 8] };
        b.write_stat();
        b
    }

    pub fn sys(&self) -> PathBuf {
        self.root.join("sys")
    }
    pub fn proc_(&self) -> PathBuf {
        self.root.join("proc")
    }
    /// The run directory hetlabd uses for this tree: `run` beside `sys`.
    pub fn run_dir(&self) -> PathBuf {
        self.root.join("run")
    }
    pub fn policy(&self, n: usize) -> PathBuf {
        self.root.join(format!("sys/devices/system/cpu/cpufreq/policy{n}"))
    }
    pub fn read(&self, n: usize, file: &str) -> String {
        fs::read_to_string(self.policy(n).join(file)).unwrap_or_default().trim().to_string()
    }

    fn write_stat(&self) {
        let mut s = String::from("cpu  0 0 0 0 0 0 0 0 0 0\n");
        for (cpu, (user, idle)) in self.ticks.iter().enumerate() {
            s += &format!("cpu{cpu} {user} 0 0 {idle} 0 0 0 0 0 0\n");
        }
        s += "intr 0\nctxt 0\nbtime 0\n";
        let tmp = self.proc_().join(".stat.tmp");
        fs::create_dir_all(self.proc_()).unwrap();
        fs::write(&tmp, s).unwrap();
        fs::rename(&tmp, self.proc_().join("stat")).unwrap(); // atomic, like a fresh procfs read
    }

    /// Advances every CPU by 100 ticks at `busy_pct` percent busy.
    pub fn load(&mut self, busy_pct: u64) {
        for t in &mut self.ticks {
            t.0 += busy_pct;
            t.1 += 100 - busy_pct;
        }
        self.write_stat();
    }

    /// Keeps the CPUs `busy_pct` % busy until `cond` holds (10 s at most): the tick counters go
    /// on advancing while the test waits, as /proc/stat's do. A single write would be seen only
    /// if the daemon had read the counters before it, and its first read may come later.
    pub fn load_until(&mut self, busy_pct: u64, what: &str, cond: impl Fn(&Board) -> bool) {
        wait_for(what, 10.0, || {
            self.load(busy_pct);
            cond(self)
        });
    }

    /// Every file of the sysfs tree and its contents.
    pub fn snapshot(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut stack = vec![self.sys()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push((p.clone(), fs::read_to_string(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    pub fn assert_restored(&self) {
        for (i, n) in [0, 4].into_iter().enumerate() {
            let (gov, min, max) = START[i];
            assert_eq!(self.read(n, "scaling_governor"), gov, "policy{n} governor");
            assert_eq!(self.read(n, "scaling_min_freq"), min.to_string(), "policy{n} min");
            assert_eq!(self.read(n, "scaling_max_freq"), max.to_string(), "policy{n} max");
        }
    }

    pub fn govern(&self, args: &[&str]) -> Command {
        let mut c = Command::new(hetlabd());
        c.arg("govern")
            .arg("--sysfs-root")
            .arg(self.sys())
            .arg("--procfs-root")
            .arg(self.proc_())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }
}

pub fn wait_for(what: &str, timeout_s: f64, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs_f64(timeout_s);
    while Instant::now() < end {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("timed out after {timeout_s} s waiting for {what}");
}

pub fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn finish(child: Running) -> Finished {
    let out = child.output();
    Finished {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `target_khz` of every sample line for `policy`.
pub fn targets(stdout: &str, policy: &str) -> Vec<u32> {
    stdout
        .lines()
        .filter(|l| l.contains(&format!(" policy={policy} ")))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("target_khz=")).and_then(|v| v.parse().ok()))
        .collect()
}
