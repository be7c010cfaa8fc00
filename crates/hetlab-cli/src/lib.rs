//! hetlabd's command line, as a library: the `hetlabd` binary and the Python `hetlab chase`,
//! `hetlab govern` and `hetlab characterize --backend linux` run this same code.
//! hetlabd: hetlab on a real Linux board, as one static binary (no Python needed).
//! Every error is one line, "hetlabd: error: ...", naming the thing and the fix; exit code 1
//! (2 for a command-line mistake).

use std::io::Write;
use std::path::PathBuf;

use hetlab_core::platform::Platform;
use hetlab_core::sweep::dataset::{schema, Dataset};
use hetlab_core::sweep::ActiveOpp;
use hetlab_core::tree::AntiSnoopModel;
use hetlab_linux::backend::{BackendConfig, CounterMode, PmuSource};
use hetlab_linux::characterize::{self, SweepConfig};
use hetlab_linux::chase::{self, ChaseOptions, Pattern};
use hetlab_linux::daemon::{self, GovernConfig};
use hetlab_linux::restore::{read_state, RunLock, STATE_FILE};
use hetlab_linux::stop::SignalStop;
use hetlab_linux::Roots;

const MAIN_HELP: &str = "\
hetlabd: hetlab on a real Linux big.LITTLE board (Odroid-XU3 / Exynos 5422 and others).

usage: hetlabd <command> [options]      hetlabd <command> --help

commands:
  govern        run a governor (the simulator's code) as a daemon: cpufreq sysfs + /proc/stat
                + perf_event_open; saves and restores each policy's governor, min and max
  chase         ccbench-style pointer-chase microbenchmark: ns (and cycles) per dependent load
  characterize  the snoop-latency training sweep on this board, rows in the dataset's columns
  restore       write back the settings a killed hetlabd left in <run-dir>/hetlabd.saved
  governors     list the governors and their tunables (kernel sysfs names and units)

examples:
  sudo hetlabd govern --governor anti-snoop --model model.json
  hetlabd govern --governor ondemand --dry-run --duration 5
  hetlabd chase --cpu 4 --sizes 4K..64M --pattern random,stride-16 --freq-khz 2000000
  sudo hetlabd characterize --out sweep.csv --reps 5
";

const GOVERN_HELP: &str = "\
usage: hetlabd govern --governor NAME [options]

Runs NAME on every cpufreq policy until SIGINT/SIGTERM (or --duration): switches the policies to
the userspace governor, and every sampling period builds the governor's view from /proc/stat,
sysfs and the PMCs and writes scaling_setspeed (only frequencies from the policy's list, only
when they change). Each policy's scaling_governor, scaling_min_freq and scaling_max_freq are
saved first (also to <run-dir>/hetlabd.saved) and restored on normal exit, on SIGINT, SIGTERM,
SIGHUP and SIGQUIT, and on any error.

It refuses to start when: not root (unless --dry-run); there are no cpufreq policies; a policy
has no userspace governor; another hetlabd holds <run-dir>/hetlabd.lock; auto-cpufreq,
power-profiles-daemon, tuned, thermald or cpufreqd is running; or a killed hetlabd left
<run-dir>/hetlabd.saved (run `hetlabd restore`).

options:
  --governor NAME       performance, powersave, userspace, ondemand, conservative, schedutil,
                        interactive or anti-snoop (see `hetlabd governors`)
  --model FILE          anti-snoop's trees (a model.json from `hetlab train`); default: the
                        paper's Figure 4 trees (lctes2020-fig4)
  --tunable NAME=VALUE  a governor tunable by its sysfs name, e.g. sampling_rate=20000 (µs),
                        up_threshold=80; repeatable
  --dry-run             decide but write nothing (no governor switch, no setspeed); prints every
                        decision; root not needed
  --duration SECONDS    stop after this long (a normal exit; settings restored)
  -v, --verbose         print every sample (time, load, current and target kHz, anti-snoop's
                        features) on stdout
  --counters MODE       which PMCs anti-snoop reads (other governors read none unless given):
                          per-cpu          one group per CPU, all tasks (default; cost grows
                                           with CPUs, not threads)
                          cgroup=DIR       one group per CPU for the tasks of a cgroup
                          pid=P[,P]        per-thread counters for every thread of processes
                          tid=T[,T]        per-thread counters for these threads
                          off              none: anti-snoop then decides on load only
  --pmu hardware|software
                        hardware (default): the ARM core PMUs and the CCI-400 PMU found under
                        /sys/bus/event_source/devices. software: software events stand in for
                        them (testing on machines without the hardware; values are not snoops).
                        If a hardware event is missing, hetlabd says so once and the governor
                        runs load-only.
  --platform NAME       platform description naming the clusters and CCI ports (exynos5422)
  --cluster-names A,B   name the policies (in CPU order) after these platform clusters instead
                        of matching CPU lists
  --sysfs-root DIR      read/write DIR/devices/system/cpu/cpufreq/... instead of /sys/...
  --procfs-root DIR     read DIR/stat, DIR/<pid>/comm instead of /proc/...
  --run-dir DIR         where hetlabd.lock and hetlabd.saved live (default /run)
";

const CHASE_HELP: &str = "\
usage: hetlabd chase [options]

ccbench 'caches' semantics (reimplemented): 4-byte elements; random = one element per 256-byte
block in random order within each 4 KB page, pages in ascending order; sequential; stride-K (K
words). One warm-up lap, then chunks of --iterations dependent loads until --min-time has
passed (CLOCK_MONOTONIC). Prints ns per access, and cycles per access given --freq-khz.

options:
  --cpu N               pin the benchmark thread to CPU N (sched_setaffinity)
  --sizes LIST          array sizes in bytes: 16K,64M,4096 or a doubling range 4K..64M
                        (default 4K..64M)
  --elements LIST       array sizes in 4-byte elements instead (ccbench's N), e.g. 4096,16777216
  --pattern LIST        random, sequential, stride-K (comma-separated; default random)
  --min-time SECONDS    minimum measured time per point (default 0.2; ccbench uses 1.0)
  --iterations N        dependent loads per timed chunk (default 1048576)
  --freq-khz KHZ        the CPU's frequency, for cycles per access
  --seed N              seed of the random order (default 1)
  --json                JSON instead of a table
";

const CHARACTERIZE_HELP: &str = "\
usage: hetlabd characterize --out FILE.csv [options]

The training sweep on this board: for each active cluster, pattern and size, and every pair of
(big, LITTLE) frequencies, repeated: both policies fixed with the userspace governor, the chase
pinned to a CPU of the active cluster, and every sampling period one row with the CCI-400 port
counters and the chase thread's core counters. Rows have exactly the columns of the simulated
sweep (docs/dataset.md); `hetlab characterize --backend linux` writes them as Parquet.
Governor, min and max are saved first and restored at the end, on a signal and on any error.
Needs root.

options:
  --out FILE            CSV output (one header line, then the rows as each run ends)
  --patterns LIST       random, sequential, stride-16 (default all three)
  --sizes LIST          array sizes in 4-byte elements, as `hetlab characterize` (default:
                        half and twice every L1 and L2 of the platform)
  --reps N              repetitions per configuration (default 5, at least 2)
  --run-s SECONDS       run length at the top OPPs (default 0.08)
  --seed N              seed of the random chains (default 1)
  --period-us US        sampling period (default: ondemand's default for the policy)
  --big-khz LIST        only these big frequencies (default: all)
  --little-khz LIST     only these LITTLE frequencies (default: all)
  --active-opp all|top  all (default): every pair of frequencies; top: the active cluster at
                        its highest listed frequency, only the idle cluster swept (the layout
                        the paper's Figure 4 sample counts imply; 13-19x fewer runs)
  --chase-cpu C=N[,..]  CPU running the chase per cluster, e.g. little=0,big=4 (default: the
                        cluster's first online CPU)
  --allow-missing-counters
                        sweep even if the CCI or core PMU is missing (those columns are 0)
  --pmu hardware|software, --platform NAME, --cluster-names A,B, --sysfs-root DIR,
  --procfs-root DIR, --run-dir DIR   as for govern
";

const RESTORE_HELP: &str = "\
usage: hetlabd restore [--run-dir DIR]

Writes back the governor, min and max saved in DIR/hetlabd.saved (default /run) by a hetlabd
that was killed (SIGKILL, power loss) before it could restore them, then deletes the file.
";

struct Fail {
    msg: String,
    code: i32,
}

fn usage(msg: impl Into<String>) -> Fail {
    Fail { msg: msg.into(), code: 2 }
}

fn fail(msg: impl Into<String>) -> Fail {
    Fail { msg: msg.into(), code: 1 }
}

/// `--name value` / `--name=value` options and flags, in order.
struct Args {
    items: Vec<(String, Option<String>)>,
}

impl Args {
    fn parse(argv: &[String], flags: &[&str], valued: &[&str], help: &str) -> Result<Args, Fail> {
        let mut items = Vec::new();
        let mut i = 0;
        while i < argv.len() {
            let a = &argv[i];
            if a == "-h" || a == "--help" {
                print!("{help}");
                std::process::exit(0);
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if flags.contains(&name.as_str()) {
                if inline.is_some() {
                    return Err(usage(format!("{name} takes no value")));
                }
                items.push((name, None));
            } else if valued.contains(&name.as_str()) {
                let v = match inline {
                    Some(v) => v,
                    None => {
                        i += 1;
                        argv.get(i).cloned().ok_or_else(|| usage(format!("{name} needs a value")))?
                    }
                };
                items.push((name, Some(v)));
            } else {
                return Err(usage(format!("unknown option '{a}'; see --help")));
            }
            i += 1;
        }
        Ok(Args { items })
    }
    fn flag(&self, n: &str) -> bool {
        self.items.iter().any(|(k, _)| k == n)
    }
    fn get(&self, n: &str) -> Option<&str> {
        self.items.iter().rev().find(|(k, _)| k == n).and_then(|(_, v)| v.as_deref())
    }
    fn all(&self, n: &str) -> Vec<&str> {
        self.items.iter().filter(|(k, _)| k == n).filter_map(|(_, v)| v.as_deref()).collect()
    }
    fn num<T: std::str::FromStr>(&self, n: &str, what: &str) -> Result<Option<T>, Fail> {
        match self.get(n) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| usage(format!("{n} expects {what}, got '{v}'"))),
        }
    }
}

fn roots(a: &Args) -> Roots {
    Roots::new(a.get("--sysfs-root").unwrap_or("/sys"), a.get("--procfs-root").unwrap_or("/proc"))
}

fn pmu(a: &Args) -> Result<PmuSource, Fail> {
    match a.get("--pmu").unwrap_or("hardware") {
        "hardware" => Ok(PmuSource::Hardware),
        "software" => Ok(PmuSource::Software { pmus: 1 }),
        o => Err(usage(format!("--pmu expects hardware or software, got '{o}'"))),
    }
}

fn platform(a: &Args) -> Result<Platform, Fail> {
    Platform::builtin(a.get("--platform").unwrap_or("exynos5422")).map_err(usage)
}

fn list<T: std::str::FromStr>(s: &str, opt: &str, what: &str) -> Result<Vec<T>, Fail> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| x.trim().parse().map_err(|_| usage(format!("{opt} expects {what}, got '{x}'"))))
        .collect()
}

fn patterns(a: &Args, default: &str) -> Result<Vec<Pattern>, Fail> {
    a.get("--pattern")
        .unwrap_or(default)
        .split(',')
        .filter(|x| !x.is_empty())
        .map(|p| Pattern::parse(p).map_err(usage))
        .collect()
}

/// Sizes in elements from --elements or --sizes (bytes).
fn sizes(a: &Args, default: &str) -> Result<Vec<usize>, Fail> {
    if let Some(e) = a.get("--elements") {
        return list(e, "--elements", "element counts like 4096,16777216");
    }
    Ok(chase::parse_sizes(a.get("--sizes").unwrap_or(default))
        .map_err(usage)?
        .into_iter()
        .map(|b| b.div_ceil(4))
        .collect())
}

const COMMON_VALUED: &[&str] =
    &["--sysfs-root", "--procfs-root", "--run-dir", "--platform", "--cluster-names", "--pmu"];

fn cmd_govern(argv: &[String]) -> Result<i32, Fail> {
    let valued: Vec<&str> = ["--governor", "--model", "--tunable", "--duration", "--counters"]
        .iter()
        .chain(COMMON_VALUED)
        .copied()
        .collect();
    let a = Args::parse(argv, &["--dry-run", "-v", "--verbose"], &valued, GOVERN_HELP)?;
    let governor =
        a.get("--governor").ok_or_else(|| usage("govern needs --governor NAME (see `hetlabd governors`)"))?.to_string();
    let platform = platform(&a)?;
    let model = match a.get("--model") {
        None | Some("lctes2020-fig4") => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read --model {path}: {e}")))?;
            let m: AntiSnoopModel = serde_json::from_str(&text).map_err(|e| {
                fail(format!("--model {path} is not a hetlab model ({e}); train one with `hetlab train`"))
            })?;
            m.check_for(&platform).map_err(|e| fail(format!("--model {path}: {e}")))?;
            Some(m)
        }
    };
    let mut tunables = Vec::new();
    for t in a.all("--tunable") {
        let (k, v) = t
            .split_once('=')
            .ok_or_else(|| usage(format!("--tunable expects NAME=VALUE, e.g. up_threshold=80; got '{t}'")))?;
        let v: f64 = v.parse().map_err(|_| usage(format!("--tunable {k}: '{v}' is not a number")))?;
        tunables.push((k.to_string(), v));
    }
    let counters = a.get("--counters").map(CounterMode::parse).transpose().map_err(usage)?;
    let duration_us = match a.num::<f64>("--duration", "seconds")? {
        Some(s) if s.is_finite() && s > 0.0 => Some((s * 1e6) as u64),
        Some(s) => return Err(usage(format!("--duration must be a positive number of seconds, got {s}"))),
        None => None,
    };
    let mut backend = BackendConfig::new(roots(&a));
    backend.pmu = pmu(&a)?;
    backend.platform = Some(platform);
    backend.cluster_names = a.get("--cluster-names").map(|s| s.split(',').map(str::to_string).collect());
    let cfg = GovernConfig {
        governor,
        tunables,
        model,
        dry_run: a.flag("--dry-run"),
        counters,
        backend,
        run_dir: PathBuf::from(a.get("--run-dir").unwrap_or("/run")),
        duration_us,
        log_samples: a.flag("-v") || a.flag("--verbose"),
    };
    let mut stop = SignalStop::new().map_err(fail)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let o = daemon::govern(&cfg, &mut stop, &mut out, &mut err).map_err(fail)?;
    let restored = if o.restored.is_empty() { String::new() } else { format!("; restored {}", o.restored.join("; ")) };
    eprintln!(
        "hetlabd: stopped ({}) after {} samples, {} frequency writes{restored}",
        o.stop_reason, o.samples, o.writes
    );
    Ok(0)
}

fn cmd_chase(argv: &[String]) -> Result<i32, Fail> {
    let a = Args::parse(
        argv,
        &["--json"],
        &["--cpu", "--sizes", "--elements", "--pattern", "--min-time", "--iterations", "--freq-khz", "--seed"],
        CHASE_HELP,
    )?;
    let opts = ChaseOptions {
        cpu: a.num("--cpu", "a CPU number")?,
        min_time_s: a.num("--min-time", "seconds")?.unwrap_or(0.2),
        iterations: a.num("--iterations", "a number of loads")?.unwrap_or(1 << 20),
        freq_khz: a.num("--freq-khz", "a frequency in kHz")?,
        seed: a.num("--seed", "a number")?.unwrap_or(1),
    };
    if opts.iterations == 0 {
        return Err(usage("--iterations must be at least 1"));
    }
    let sizes = sizes(&a, "4K..64M")?;
    let pats = patterns(&a, "random")?;
    let points = chase::sweep(&sizes, &pats, &opts).map_err(fail)?;
    if a.flag("--json") {
        println!("{}", chase::report(&opts, &points));
    } else {
        println!(
            "chase: cpu {}  min time {} s per point  {} loads per chunk{}",
            opts.cpu.map_or("any".to_string(), |c| c.to_string()),
            opts.min_time_s,
            opts.iterations,
            opts.freq_khz.map_or(String::new(), |f| format!("  at {f} kHz"))
        );
        print!("{}", chase::table(&points));
    }
    Ok(0)
}

fn cmd_characterize(argv: &[String]) -> Result<i32, Fail> {
    let valued: Vec<&str> = [
        "--out",
        "--patterns",
        "--sizes",
        "--reps",
        "--run-s",
        "--seed",
        "--period-us",
        "--big-khz",
        "--little-khz",
        "--chase-cpu",
        "--active-opp",
    ]
    .iter()
    .chain(COMMON_VALUED)
    .copied()
    .collect();
    let a = Args::parse(argv, &["--allow-missing-counters"], &valued, CHARACTERIZE_HELP)?;
    let out = PathBuf::from(a.get("--out").ok_or_else(|| usage("characterize needs --out FILE.csv"))?);
    let mut cfg = SweepConfig::builtin(a.get("--platform").unwrap_or("exynos5422")).map_err(usage)?;
    cfg.roots = roots(&a);
    cfg.pmu = pmu(&a)?;
    cfg.run_dir = PathBuf::from(a.get("--run-dir").unwrap_or("/run"));
    if let Some(p) = a.get("--patterns") {
        cfg.sweep.patterns = p.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect();
    }
    cfg.sweep.sizes = a
        .get("--sizes")
        .map(|s| list(s, "--sizes", "element counts like 4096,262144"))
        .transpose()?
        .unwrap_or_default();
    if let Some(r) = a.num("--reps", "a count")? {
        cfg.sweep.reps = r;
    }
    if let Some(r) = a.num("--run-s", "seconds")? {
        cfg.sweep.run_s = r;
    }
    if let Some(s) = a.num("--seed", "a number")? {
        cfg.sweep.seed = s;
    }
    cfg.period_us = a.num("--period-us", "µs")?;
    for (flag, cluster) in [("--big-khz", "big"), ("--little-khz", "little")] {
        if let Some(l) = a.get(flag) {
            cfg.only_khz.push((cluster.to_string(), list(l, flag, "kHz values")?));
        }
    }
    if let Some(o) = a.get("--active-opp") {
        cfg.sweep.active_opp = ActiveOpp::parse(o).map_err(usage)?;
    }
    cfg.allow_missing_counters = a.flag("--allow-missing-counters");
    cfg.cluster_names = a.get("--cluster-names").map(|s| s.split(',').map(str::to_string).collect());
    if let Some(s) = a.get("--chase-cpu") {
        for item in s.split(',').filter(|x| !x.is_empty()) {
            let (c, n) = item
                .split_once('=')
                .ok_or_else(|| usage(format!("--chase-cpu expects CLUSTER=CPU, e.g. little=0,big=4; got '{item}'")))?;
            let n: usize = n.parse().map_err(|_| usage(format!("--chase-cpu {c}: '{n}' is not a CPU number")))?;
            cfg.chase_cpus.push((c.to_string(), n));
        }
    }
    let dir =
        out.parent().filter(|p| !p.as_os_str().is_empty()).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    if !dir.is_dir() {
        return Err(fail(format!("cannot write {}: directory {} does not exist", out.display(), dir.display())));
    }
    let mut stop = SignalStop::new().map_err(fail)?;
    let names: Vec<String> = cfg.platform.clusters.iter().map(|c| c.name.clone()).collect();
    let header = schema(&names).into_iter().map(|(name, _)| name).collect::<Vec<_>>().join(",");
    let tmp = out.with_extension("csv.partial");
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(&tmp).map_err(|e| fail(format!("cannot write {}: {e}", tmp.display())))?,
    );
    writeln!(file, "{header}").map_err(|e| fail(e.to_string()))?;
    let mut on_rows = |rows: &Dataset| -> Result<(), String> {
        rows.write_csv_rows(&mut file).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
        file.flush().map_err(|e| format!("writing {}: {e}", tmp.display()))
    };
    let mut err = std::io::stderr();
    let s = characterize::characterize(&cfg, &mut stop, &mut on_rows, &mut err).map_err(fail)?;
    drop(file);
    if let Some(sig) = &s.stopped_by {
        eprintln!(
            "hetlabd: stopped by {sig} after {} runs; the rows so far are in {} (restored {})",
            s.runs,
            tmp.display(),
            s.restored.join("; ")
        );
        return Ok(1);
    }
    std::fs::rename(&tmp, &out)
        .map_err(|e| fail(format!("cannot move {} to {}: {e}", tmp.display(), out.display())))?;
    eprintln!(
        "hetlabd: {} runs, {} rows written to {}; restored {}",
        s.runs,
        s.rows,
        out.display(),
        s.restored.join("; ")
    );
    Ok(0)
}

fn cmd_restore(argv: &[String]) -> Result<i32, Fail> {
    let a = Args::parse(argv, &[], &["--run-dir"], RESTORE_HELP)?;
    let dir = PathBuf::from(a.get("--run-dir").unwrap_or("/run"));
    let state = dir.join(STATE_FILE);
    if !state.exists() {
        eprintln!("hetlabd: nothing to restore: {} does not exist", state.display());
        return Ok(0);
    }
    let _lock = RunLock::acquire(&dir).map_err(fail)?;
    let saved = read_state(&state).map_err(fail)?;
    let mut errors = Vec::new();
    for s in &saved {
        errors.extend(s.restore());
    }
    if !errors.is_empty() {
        return Err(fail(format!("restoring from {} failed: {}", state.display(), errors.join("; "))));
    }
    std::fs::remove_file(&state).map_err(|e| fail(format!("restored, but cannot remove {}: {e}", state.display())))?;
    eprintln!("hetlabd: restored {}", saved.iter().map(|s| s.describe()).collect::<Vec<_>>().join("; "));
    Ok(0)
}

fn cmd_governors(argv: &[String]) -> Result<i32, Fail> {
    let a = Args::parse(argv, &["--json"], &[], "usage: hetlabd governors [--json]\n")?;
    let govs = hetlab_core::governor::registry::list();
    if a.flag("--json") {
        println!("{}", serde_json::to_string_pretty(&govs).map_err(|e| fail(e.to_string()))?);
        return Ok(0);
    }
    for g in govs {
        println!("{}: {}", g.name, g.summary);
        for t in g.tunables {
            let d = match t.default {
                hetlab_core::governor::registry::TunableDefault::Value(v) => format!("{v}"),
                hetlab_core::governor::registry::TunableDefault::Policy(p) => p.to_string(),
            };
            println!("    {:22} default {} {}  {}", t.name, d, t.unit, t.help);
        }
    }
    Ok(0)
}

/// Runs one hetlabd command line (`argv` without the program name) and returns the exit code.
/// `prog` names the program in error lines ("hetlabd" or "hetlab").
pub fn run(prog: &str, argv: &[String]) -> i32 {
    let Some(cmd) = argv.first() else {
        eprint!("{MAIN_HELP}");
        return 2;
    };
    let rest = &argv[1..];
    let r = match cmd.as_str() {
        "govern" => cmd_govern(rest),
        "chase" => cmd_chase(rest),
        "characterize" => cmd_characterize(rest),
        "restore" => cmd_restore(rest),
        "governors" => cmd_governors(rest),
        "-h" | "--help" | "help" => {
            print!("{MAIN_HELP}");
            Ok(0)
        }
        "-V" | "--version" => {
            println!("hetlabd {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        other => Err(usage(format!(
            "unknown command '{other}'; commands: govern, chase, characterize, restore, governors (see --help)"
        ))),
    };
    let _ = std::io::stdout().flush();
    match r {
        Ok(code) => code,
        Err(f) => {
            eprintln!("{prog}: error: {}", f.msg);
            f.code
        }
    }
}
