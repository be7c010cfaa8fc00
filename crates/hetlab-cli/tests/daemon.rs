//! hetlabd govern as a separate process against a fake Exynos 5422 sysfs/procfs tree.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use common::*;

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Records every value seen in the two scaling_setspeed files while the daemon runs.
struct Watcher {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<BTreeSet<(usize, String)>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(b: &Board) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(BTreeSet::new()));
        let files = [(0, b.policy(0).join("scaling_setspeed")), (4, b.policy(4).join("scaling_setspeed"))];
        let (s, v) = (stop.clone(), seen.clone());
        let handle = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                for (n, f) in &files {
                    if let Ok(t) = fs::read_to_string(f) {
                        let t = t.trim().to_string();
                        if !t.is_empty() && t != "<unsupported>" {
                            v.lock().unwrap().insert((*n, t));
                        }
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        Watcher { stop, seen, handle: Some(handle) }
    }

    fn finish(mut self) -> BTreeSet<(usize, String)> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap();
        self.seen.lock().unwrap().clone()
    }
}

fn assert_only_listed(seen: &BTreeSet<(usize, String)>) {
    assert!(!seen.is_empty());
    for (n, v) in seen {
        let list = if *n == 0 { LITTLE_KHZ } else { BIG_KHZ };
        let khz: u32 = v.parse().unwrap_or_else(|_| panic!("policy{n}/scaling_setspeed held '{v}'"));
        assert!(list.contains(&khz), "policy{n}: {khz} kHz is not an available frequency");
    }
}

fn setspeeds(b: &Board, little: u32, big: u32) -> bool {
    b.read(0, "scaling_setspeed") == little.to_string() && b.read(4, "scaling_setspeed") == big.to_string()
}

fn both_userspace(b: &Board) -> bool {
    b.read(0, "scaling_governor") == "userspace" && b.read(4, "scaling_governor") == "userspace"
}

#[test]
fn follows_load_writes_only_listed_frequencies_and_restores_exactly_on_sigterm() {
    if !is_root() {
        eprintln!("skipped: the daemon refuses to run without root");
        return;
    }
    let mut b = Board::new("sigterm");
    let before = b.snapshot();
    let child = b.govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000", "-v"]).start();
    let watch = Watcher::start(&b);
    wait_for("both policies on userspace", 10.0, || both_userspace(&b));
    assert!(b.run_dir().join("hetlabd.saved").exists(), "saved settings are persisted while running");
    // fully busy: ondemand goes to each policy's max (scaling_max_freq, below cpuinfo max)
    b.load_until(100, "policy max under full load", |b| setspeeds(b, 1300000, 1800000));
    // idle: cpuinfo min, clamped up to each policy's min
    b.load_until(0, "policy min when idle", |b| setspeeds(b, 300000, 400000));
    // half busy: cpuinfo min + 50 % of the range, closest OPP
    b.load_until(50, "proportional frequency at 50 % load", |b| setspeeds(b, 800000, 1100000));
    signal(&child, libc::SIGTERM);
    let f = finish(child);
    let seen = watch.finish();
    assert_eq!(f.code, Some(0), "stderr:\n{}", f.stderr);
    assert!(f.stderr.contains("stopped (SIGTERM)"), "{}", f.stderr);
    b.assert_restored();
    assert!(!b.run_dir().join("hetlabd.saved").exists());
    assert_only_listed(&seen);
    for (policy, list) in [("policy0", LITTLE_KHZ), ("policy4", BIG_KHZ)] {
        let t = targets(&f.stdout, policy);
        assert!(t.len() >= 3, "{policy}: {t:?}");
        assert!(t.iter().all(|k| list.contains(k)), "{policy}: {t:?}");
    }
    assert!(!f.stderr.contains("not an OPP"));
    // nothing but setspeed (and the restored attributes) changed
    let after = b.snapshot();
    for ((p, a), (_, z)) in before.iter().zip(&after) {
        if !p.ends_with("scaling_setspeed") {
            assert_eq!(a, z, "{}", p.display());
        }
    }
}

#[test]
fn sigint_mid_run_restores_and_missing_pmus_are_said_once() {
    if !is_root() {
        return;
    }
    let mut b = Board::new("sigint");
    let child = b.govern(&["--governor", "anti-snoop", "--tunable", "sampling_rate=10000", "-v"]).start();
    wait_for("both policies on userspace", 10.0, || both_userspace(&b));
    b.load_until(100, "max", |b| setspeeds(b, 1300000, 1800000));
    signal(&child, libc::SIGINT);
    let f = finish(child);
    assert_eq!(f.code, Some(0), "stderr:\n{}", f.stderr);
    assert!(f.stderr.contains("stopped (SIGINT)"), "{}", f.stderr);
    b.assert_restored();
    // this tree has no PMUs: said once each, then anti-snoop decides on load alone
    assert_eq!(f.stderr.matches("no ARM core PMU").count(), 1, "{}", f.stderr);
    assert_eq!(f.stderr.matches("no CCI-400 PMU").count(), 1, "{}", f.stderr);
    assert_eq!(f.stderr.matches("runs load-only").count(), 1, "{}", f.stderr);
    assert!(f.stdout.lines().filter(|l| l.contains("policy=")).all(|l| l.contains("tree=-")), "{}", f.stdout);
}

#[test]
fn a_failing_sysfs_write_mid_run_restores_what_was_changed() {
    if !is_root() {
        return;
    }
    let mut b = Board::new("failwrite");
    let child = b.govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000"]).start();
    wait_for("both policies on userspace", 10.0, || both_userspace(&b));
    b.load_until(100, "max", |b| setspeeds(b, 1300000, 1800000));
    // root ignores file modes: make the next write fail by putting a directory in the way
    let f4 = b.policy(4).join("scaling_setspeed");
    fs::remove_file(&f4).unwrap();
    fs::create_dir(&f4).unwrap();
    b.load(0);
    let mut child = child;
    wait_for("the daemon to exit on the error", 10.0, || child.try_wait().unwrap().is_some());
    let f = finish(child);
    assert_eq!(f.code, Some(1), "stderr:\n{}", f.stderr);
    let err: Vec<&str> = f.stderr.lines().filter(|l| l.starts_with("hetlabd: error:")).collect();
    assert_eq!(err.len(), 1, "{}", f.stderr);
    assert!(
        err[0].contains("policy4/scaling_setspeed")
            && err[0].contains("directory")
            && err[0].contains("policy settings restored"),
        "{}",
        err[0]
    );
    b.assert_restored();
    assert!(!b.run_dir().join("hetlabd.saved").exists());
}

#[test]
fn dry_run_decides_but_writes_nothing() {
    let mut b = Board::new("dryrun");
    let before = b.snapshot();
    let child = b
        .govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000", "--dry-run", "--duration", "1.5"])
        .start();
    std::thread::sleep(std::time::Duration::from_millis(300));
    b.load(100);
    let f = finish(child);
    assert_eq!(f.code, Some(0), "stderr:\n{}", f.stderr);
    assert!(f.stderr.contains("stopped (duration)"), "{}", f.stderr);
    assert!(targets(&f.stdout, "policy0").contains(&1300000), "{}", f.stdout);
    assert!(targets(&f.stdout, "policy4").contains(&1800000), "{}", f.stdout);
    assert_eq!(b.snapshot(), before, "dry-run changed the sysfs tree");
    assert_eq!(fs::read_dir(b.run_dir()).unwrap().count(), 0, "no lock or state file in dry-run");
}

fn refused(b: &Board, cmd: &mut Command) -> String {
    let before = b.snapshot();
    let out = cmd.run();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("hetlabd: error: ") && err.lines().count() == 1, "one error line: {err}");
    assert_eq!(b.snapshot(), before, "a refusal changed the tree");
    err
}

#[test]
fn refuses_without_root() {
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].into_iter().find(|p| std::path::Path::new(p).exists());
    let b = Board::new("notroot");
    let e = match (is_root(), setpriv) {
        (true, Some(sp)) => {
            let mut c = Command::new(sp);
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", hetlabd(), "govern", "--governor", "ondemand"]);
            c.arg("--sysfs-root").arg(b.sys()).arg("--procfs-root").arg(b.proc_());
            refused(&b, &mut c)
        }
        (false, _) => refused(&b, &mut b.govern(&["--governor", "ondemand"])),
        (true, None) => panic!("setpriv (util-linux) is needed to test the refusal as root"),
    };
    assert!(e.contains("must run as root") && e.contains("effective uid 65534") || !is_root(), "{e}");
    assert!(e.contains("--dry-run"), "{e}");
}

#[test]
fn refuses_without_cpufreq_or_userspace_governor() {
    let b = Board::new("nocpufreq");
    fs::write(b.policy(4).join("scaling_available_governors"), "ondemand performance\n").unwrap();
    let e = refused(&b, &mut b.govern(&["--governor", "ondemand"]));
    assert!(
        e.contains("policy4 (cpus 4-7) offers no userspace governor") && e.contains("CONFIG_CPU_FREQ_GOV_USERSPACE"),
        "{e}"
    );
    fs::remove_dir_all(b.root.join("sys/devices/system/cpu/cpufreq")).unwrap();
    let e = refused(&b, &mut b.govern(&["--governor", "ondemand"]));
    assert!(e.contains("no cpufreq policies under") && e.contains("cpufreq driver"), "{e}");
}

#[test]
fn refuses_while_another_daemon_manages_frequencies() {
    if !is_root() {
        return;
    }
    let b = Board::new("another");
    // a known daemon by its process name
    fs::create_dir_all(b.proc_().join("999")).unwrap();
    fs::write(b.proc_().join("999/comm"), "auto-cpufreq\n").unwrap();
    let e = refused(&b, &mut b.govern(&["--governor", "ondemand"]));
    assert!(e.contains("auto-cpufreq (pid 999) is running") && e.contains("stop it"), "{e}");
    fs::remove_dir_all(b.proc_().join("999")).unwrap();
    // another hetlabd holding the lock
    let first = b.govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000"]).start();
    wait_for("the first daemon", 10.0, || both_userspace(&b));
    let out = b.govern(&["--governor", "performance"]).run();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains(&format!("another hetlabd (pid {}) is already managing CPU frequencies", first.id())), "{e}");
    assert!(both_userspace(&b), "the second daemon did not touch the first one's policies");
    // another hetlabd reaching the same tree by another path (a link to it): the same run
    // directory, so the same lock; `restore` too waits for the running daemon
    let other_path = b.root.with_extension("link");
    let _ = fs::remove_file(&other_path);
    std::os::unix::fs::symlink(&b.root, &other_path).unwrap();
    for cmd in ["govern", "restore"] {
        let mut c = Command::new(hetlabd());
        c.arg(cmd).arg("--sysfs-root").arg(other_path.join("sys"));
        if cmd == "govern" {
            c.args(["--governor", "performance", "--procfs-root"]).arg(b.proc_());
        }
        let e = one_error(&c.run());
        assert!(e.contains(&format!("another hetlabd (pid {}) is already managing", first.id())), "{cmd}: {e}");
    }
    // the policy directories' own locks hold whatever the run directory (sysfs bind-mounted
    // elsewhere has another one): the lock a second hetlabd would take on them is refused
    let held = fs::File::open(b.policy(0)).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_ne!(unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    let _ = fs::remove_file(&other_path);
    assert!(both_userspace(&b), "the second daemon did not touch the first one's policies");
    signal(&first, libc::SIGTERM);
    assert_eq!(finish(first).code, Some(0));
    b.assert_restored();
}

#[test]
fn after_sigkill_the_saved_settings_block_a_restart_until_restored() {
    if !is_root() {
        return;
    }
    let b = Board::new("sigkill");
    let mut child = b.govern(&["--governor", "powersave"]).start();
    wait_for("userspace", 10.0, || both_userspace(&b));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(b.run_dir().join("hetlabd.saved").exists());
    let e = refused(&b, &mut b.govern(&["--governor", "ondemand"]));
    assert!(e.contains("hetlabd restore --sysfs-root") && e.contains(&format!("(pid {})", child.id())), "{e}");
    let out = restore(&b).run();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    b.assert_restored();
    assert!(!b.run_dir().join("hetlabd.saved").exists());
}

/// The original settings survive a SIGKILLed daemon whatever the next one is told: the saved
/// settings are found from the sysfs root alone (`run/` beside it), never from an option. (With
/// a `--run-dir` of its own, the next daemon used to find the policies on `userspace`, save that
/// as their original and "restore" it, leaving the board on userspace.)
#[test]
fn a_daemon_started_after_a_sigkilled_one_never_takes_its_userspace_for_the_original() {
    if !is_root() {
        return;
    }
    let b = Board::new("sigkill-other");
    let mut first = b.govern(&["--governor", "powersave"]).start();
    wait_for("userspace", 10.0, || both_userspace(&b));
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(first.id() as i32, libc::SIGKILL) }, 0);
    first.wait().unwrap();
    assert!(both_userspace(&b), "a SIGKILL leaves the policies on userspace");
    let before = b.snapshot();
    // the next daemon as it used to be started, with a run directory of its own: not an option
    let other_run = b.root.join("run2");
    fs::create_dir(&other_run).unwrap();
    let mut c = b.govern(&["--governor", "ondemand"]);
    c.arg("--run-dir").arg(&other_run);
    let out = c.run();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_error(&out).contains("unknown option '--run-dir'"));
    // ... and through another path to the same tree: it finds the killed daemon's saved settings
    let other_path = b.root.with_extension("link");
    let _ = fs::remove_file(&other_path);
    std::os::unix::fs::symlink(&b.root, &other_path).unwrap();
    for cmd in ["govern", "characterize"] {
        let mut c = Command::new(hetlabd());
        c.arg(cmd).arg("--sysfs-root").arg(other_path.join("sys")).arg("--procfs-root").arg(b.proc_());
        c.args(if cmd == "govern" { &["--governor", "ondemand"][..] } else { &["--out", "-", "--pmu", "software"] });
        let e = one_error(&c.run());
        assert!(e.contains("hetlabd.saved exists") && e.contains(&format!("(pid {})", first.id())), "{cmd}: {e}");
    }
    assert_eq!(b.snapshot(), before, "nothing was saved over, nothing switched");
    assert_eq!(fs::read_dir(&other_run).unwrap().count(), 0);
    // restore, by either path, writes back the settings from before the first daemon
    let out = Command::new(hetlabd()).arg("restore").arg("--sysfs-root").arg(other_path.join("sys")).run();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    b.assert_restored();
    let _ = fs::remove_file(&other_path);
}

fn restore(b: &Board) -> Command {
    let mut c = Command::new(hetlabd());
    c.arg("restore").arg("--sysfs-root").arg(b.sys());
    c
}

/// One `hetlabd: error:` line and exit 1 or 2.
fn one_error(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(matches!(out.status.code(), Some(1 | 2)), "{err}");
    assert!(err.starts_with("hetlabd: error: ") && err.lines().count() == 1, "{err}");
    err
}

#[test]
fn a_planted_state_file_never_makes_restore_write_outside_the_policies() {
    let b = Board::new("planted-state");
    let victim = b.root.join("victim");
    fs::write(&victim, "precious\n").unwrap();
    let state = b.run_dir().join("hetlabd.saved");
    let line = |dir: &std::path::Path, gov: &str, min: u32, max: u32| {
        format!("policy\tpolicy0\t{}\t{gov}\t{min}\t{max}\t-\n", dir.display())
    };
    let before = b.snapshot();
    for (text, why) in [
        (line(&b.root, "ondemand", 200000, 1400000), "not a cpufreq policy"),
        (line(&b.policy(0).join(".."), "ondemand", 200000, 1400000), "not a cpufreq policy"),
        (line(&b.policy(0), "../../victim", 200000, 1400000), "not one it offers"),
        (line(&b.policy(0), "ondemand", 1, 1400000), "outside its limits"),
        (line(&b.policy(0), "ondemand", 1400000, 200000), "above its max"),
        // a setspeed off the frequency list, a policy saved twice (the second line names it)
        (
            line(&b.policy(0), "userspace", 200000, 1400000).replace("\t-\n", "\t1350000\n"),
            "line 1: saved setspeed 1350000 kHz of policy0 is not one of its frequencies",
        ),
        (
            line(&b.policy(0), "ondemand", 200000, 1400000) + &line(&b.policy(0), "performance", 200000, 1400000),
            "line 2: policy policy0 is saved twice (also on line 1)",
        ),
    ] {
        fs::write(&state, text).unwrap();
        let err = one_error(&restore(&b).run());
        assert!(err.contains(why) && err.contains("nothing written"), "{err}");
        assert_eq!(b.snapshot(), before, "nothing in sysfs changed");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    }
    // a policy that lists no governors cannot have its saved one checked: nothing is written,
    // not even the other, valid line
    let policy4 = format!("policy\tpolicy4\t{}\tconservative\t400000\t1800000\t-\n", b.policy(4).display());
    fs::write(b.policy(4).join("scaling_governor"), "performance\n").unwrap();
    fs::write(&state, policy4 + &line(&b.policy(0), "ondemand", 200000, 1400000)).unwrap();
    fs::remove_file(b.policy(0).join("scaling_available_governors")).unwrap();
    let unchanged = b.snapshot();
    let err = one_error(&restore(&b).run());
    assert!(err.contains("line 2: policy0 lists no governors") && err.contains("nothing written"), "{err}");
    assert_eq!(b.snapshot(), unchanged, "policy4's valid line was not written either");
    let governors = "conservative ondemand userspace powersave performance schedutil\n";
    fs::write(b.policy(0).join("scaling_available_governors"), governors).unwrap();
    fs::write(b.policy(4).join("scaling_governor"), "conservative\n").unwrap();
    // a state file that is a link to elsewhere is not read
    fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(&victim, &state).unwrap();
    let err = one_error(&restore(&b).run());
    assert!(err.contains("symbolic link"), "{err}");
    // a FIFO is refused at once (never waited on), an oversized file is not read whole
    fs::remove_file(&state).unwrap();
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(state.as_os_str())).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err = one_error(&restore(&b).run());
    assert!(err.contains("not a regular file"), "{err}");
    fs::remove_file(&state).unwrap();
    let mut big = line(&b.policy(0), "ondemand", 200000, 1400000);
    big.push_str(&"#".repeat(3 << 20));
    fs::write(&state, big).unwrap();
    let err = one_error(&restore(&b).run());
    assert!(err.contains("more than 2097152 bytes"), "{err}");
    assert_eq!(b.snapshot(), before, "nothing in sysfs changed");
    // the good line restores
    fs::remove_file(&state).unwrap();
    fs::write(b.policy(0).join("scaling_governor"), "performance\n").unwrap();
    fs::write(&state, line(&b.policy(0), "schedutil", 300000, 1300000)).unwrap();
    let out = restore(&b).run();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    b.assert_restored();
}

#[test]
fn a_planted_lock_link_is_refused_and_its_target_untouched() {
    let b = Board::new("planted-lock");
    let victim = b.root.join("victim");
    fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, b.run_dir().join("hetlabd.lock")).unwrap();
    fs::write(b.run_dir().join("hetlabd.saved"), "# nothing\n").unwrap();
    let err = one_error(&restore(&b).run());
    assert!(err.contains("hetlabd.lock") && err.contains("symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn help_explains_each_command_and_mistakes_are_usage_errors() {
    for (cmd, words) in [
        ("govern", &["--governor", "--dry-run", "restored", "userspace", "--counters", "--sysfs-root"][..]),
        ("chase", &["--sizes", "256-byte", "--min-time", "cycles"][..]),
        ("characterize", &["--out", "docs/dataset.md", "restored"][..]),
        ("restore", &["hetlabd.saved"][..]),
    ] {
        let out = Command::new(hetlabd()).args([cmd, "--help"]).run();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0));
        for w in words {
            assert!(text.contains(w), "{cmd} --help lacks {w}");
        }
    }
    let out = Command::new(hetlabd()).args(["govern", "--governor", "ondemand", "--frobnicate"]).run();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("hetlabd: error: unknown option '--frobnicate'"));
    let out = Command::new(hetlabd()).args(["govern"]).run();
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --governor"));
    // an endless --model is refused, not read into memory
    let out =
        Command::new(hetlabd()).args(["govern", "--governor", "anti-snoop", "--dry-run", "--model", "/dev/zero"]).run();
    let e = one_error(&out);
    assert!(e.contains("--model") && e.contains("not a regular file"), "{e}");
    let b = Board::new("badgov");
    let out = b.govern(&["--governor", "turbo", "--dry-run"]).run();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(e.contains("unknown governor 'turbo'") && e.contains("anti-snoop"), "{e}");
}

#[test]
fn anti_snoop_reads_stand_in_counters_and_consults_its_trees() {
    // software events stand in for the PMUs; the counted threads are this test process's
    let b = Board::new("pmcs");
    let mut c = Command::new(hetlabd());
    c.args(["govern", "--governor", "anti-snoop", "--dry-run", "--duration", "0.5", "--pmu", "software"])
        .args(["--tunable", "sampling_rate=10000", "--counters", &format!("pid={}", std::process::id())])
        .arg("--sysfs-root")
        .arg(b.sys())
        .args(["--procfs-root", "/proc"]);
    let out = c.run();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("PMCs: core on (per thread of pid") && stderr.contains("CCI S3=little S4=big"), "{stderr}");
    // the start-up line says whether threads that have not run are read (the kernel here updates
    // the task clock's user page at sched-in, so they are not)
    assert!(stderr.contains("threads that have not run since their last read are not read"), "{stderr}");
    assert!(stderr.contains("sampling on CPU"), "{stderr}");
    assert!(!stderr.contains("load-only"), "{stderr}");
    let consulted: Vec<&str> = stdout.lines().filter(|l| l.contains("cci_congestion=")).collect();
    assert!(!consulted.is_empty(), "the tree saw CCI features: {stdout}");
    assert!(consulted.iter().all(|l| l.contains("tree=increase") || l.contains("tree=decrease")));
    // --read-all-threads: every group read, and the start-up line says so
    let out = c.arg("--read-all-threads").run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("every group read each sample"), "{stderr}");
    assert!(!stderr.contains("are not read"), "{stderr}");
}

#[test]
fn a_full_or_closed_stdout_is_one_error_line_or_quiet_never_a_panic() {
    let b = Board::new("stdout");
    if let Some(sink) = dev_full(&b.root) {
        let out = Command::new(hetlabd()).arg("governors").stdout(sink).stderr(Stdio::piped()).start().output();
        assert!(one_error(&out).contains("cannot write standard output"));
    }
    assert_quiet_into_a_closed_pipe(&["governors", "--json"]);
}

#[test]
fn a_closed_or_full_stdout_ends_govern_with_its_settings_restored() {
    let b = Board::new("govern-stdout");
    // a closed pipe: the run ends as if stopped, quietly
    let mut child = b
        .govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000", "--dry-run", "--duration", "30"])
        .start();
    drop(child.stdout.take());
    let f = finish(child);
    assert!(matches!(f.code, Some(0 | 141)), "{}", f.stderr);
    assert!(f.stderr.contains("stopped (standard output closed)"), "{}", f.stderr);
    assert!(!f.stderr.contains("error"), "{}", f.stderr);
    if !is_root() {
        return;
    }
    // a full disk: one error line, after the settings are restored
    let full = b.root.join("full");
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(full.as_os_str())).unwrap();
    // SAFETY: mknod on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) }, 0);
    let sink = fs::OpenOptions::new().write(true).open(&full).unwrap();
    let out = b
        .govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000", "-v", "--duration", "30"])
        .stdout(sink)
        .stderr(Stdio::piped())
        .start()
        .output();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("hetlabd: error:")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    assert!(errors[0].contains("cannot write the sample lines") && errors[0].contains("restored"), "{e}");
    b.assert_restored();
}

#[test]
fn signals_during_shutdown_keep_the_restore_report_and_the_exit_code() {
    if !is_root() {
        return;
    }
    // Two different signals sent together: the daemon stops on one, the other stays pending
    // through the restore; it must not kill the process before it reports and exits.
    for fail_restore in [false, true] {
        let b = Board::new(&format!("double-signal-{fail_restore}"));
        let child = b.govern(&["--governor", "ondemand", "--tunable", "sampling_rate=10000"]).start();
        wait_for("both policies on userspace", 10.0, || both_userspace(&b));
        if fail_restore {
            let gov = b.policy(0).join("scaling_governor");
            fs::remove_file(&gov).unwrap();
            fs::create_dir(&gov).unwrap();
        }
        signal(&child, libc::SIGTERM);
        signal(&child, libc::SIGHUP);
        signal(&child, libc::SIGINT);
        let f = finish(child);
        if fail_restore {
            assert_eq!(f.code, Some(1), "{}", f.stderr);
            let errors: Vec<&str> = f.stderr.lines().filter(|l| l.starts_with("hetlabd: error:")).collect();
            assert_eq!(errors.len(), 1, "{}", f.stderr);
            assert!(
                errors[0].contains("restoring the policies failed") && errors[0].contains("kept in"),
                "{}",
                errors[0]
            );
        } else {
            assert_eq!(f.code, Some(0), "{}", f.stderr);
            assert!(f.stderr.contains("stopped (SIG") && f.stderr.contains("restored"), "{}", f.stderr);
            b.assert_restored();
        }
    }
}
