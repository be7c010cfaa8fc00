//! hetlabd's command line, as a library (`main.rs` is the binary): hetlab on a real Linux
//! board, as one static binary (no Python needed). The options of each command are declared
//! once, with their help and defaults, in [`hetlab_linux::flags`]; this file parses argv
//! against those declarations and runs the commands. Nothing here exits the process: `--help`
//! is an outcome like any other.
//!
//! Every error is one line, "hetlabd: error: ...", naming the thing and the fix; exit code 1
//! (2 for a command-line mistake).

use std::io::Write;
use std::path::PathBuf;

use hetlab_core::governor::tunables::TunableDefault;
use hetlab_core::platform::{Platform, DEFAULT_PLATFORM};
use hetlab_core::sweep::dataset::{csv_writer, schema, Dataset};
use hetlab_core::sweep::{ActiveOpp, FREQ_CLUSTERS};
use hetlab_core::tree::AntiSnoopModel;
use hetlab_linux::backend::{BackendConfig, CounterMode, PmuSource};
use hetlab_linux::characterize::{self, SweepConfig};
use hetlab_linux::chase::{self, ChaseOptions, Pattern, DEFAULT_PATTERNS, DEFAULT_SIZES};
use hetlab_linux::cpus::{parse_cpu_list, MAX_CPU_NUMBER};
use hetlab_linux::daemon::{self, GovernConfig};
use hetlab_linux::flags::{self, Command};
use hetlab_linux::outfile::Output;
use hetlab_linux::pingpong::{self, PingpongOptions};
use hetlab_linux::restore::{check_saved, read_state_lines, PolicyLocks, RunLock, STATE_FILE};
use hetlab_linux::stop::SignalStop;
use hetlab_linux::{positive_seconds_us, Roots};

const MAIN_HELP: &str = "\
hetlabd: hetlab on a real Linux big.LITTLE board (Odroid-XU3 / Exynos 5422 and others).

usage: hetlabd <command> [options]      hetlabd <command> --help

commands:
  govern        run a governor (the simulator's code) as a daemon: cpufreq sysfs + /proc/stat
                + perf_event_open; saves and restores each policy's governor, min and max
  chase         ccbench-style pointer-chase microbenchmark: ns (and cycles) per dependent load
  pingpong      inter-core latency: a cache line bounced between two pinned threads, every pair
  characterize  the snoop-latency training sweep on this board, rows in the dataset's columns
  restore       write back the settings a killed hetlabd left in /run/hetlabd.saved
  governors     list the governors and their tunables (kernel sysfs names and units)

examples:
  sudo hetlabd govern --governor anti-snoop --model model.json
  hetlabd govern --governor ondemand --dry-run --duration 5
  hetlabd chase --cpu 4 --sizes 4K..64M --pattern random,stride-16 --freq-khz 2000000
  hetlabd pingpong --cpus 0-7
  sudo hetlabd characterize --out sweep.csv --reps 5
";

/// `print!` that returns a [`Fail`] instead of panicking when standard output cannot be
/// written (a full disk, a closed pipe).
macro_rules! out {
    ($($arg:tt)*) => {
        write!(std::io::stdout(), $($arg)*).map_err(stdout_failed)?
    };
}
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*).map_err(stdout_failed)?
    };
}

/// `eprintln!` that never panics: a closed or full stderr loses the line, not the exit code.
macro_rules! note {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

fn stdout_failed(e: std::io::Error) -> Fail {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        // the reader (`| head`) is gone: stop quietly, as a pipeline expects
        Fail { msg: String::new(), code: 141 }
    } else {
        fail(format!("cannot write standard output: {e}"))
    }
}

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

/// What a command line asks for.
enum Parsed {
    /// `-h` / `--help`: the command's help text.
    Help(String),
    Run(Args),
}

/// A command's options as given, in order: (long name, value), checked against its
/// declarations.
struct Args {
    cmd: Command,
    items: Vec<(&'static str, Option<String>)>,
}

impl Args {
    fn parse(cmd: Command, argv: &[String]) -> Result<Parsed, Fail> {
        let mut items = Vec::new();
        let mut i = 0;
        while i < argv.len() {
            let a = &argv[i];
            if a == "-h" || a == "--help" {
                return Ok(Parsed::Help(cmd.help()));
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (a.as_str(), None),
            };
            let flag = cmd.flag(name).ok_or_else(|| usage(format!("unknown option '{a}'; see --help")))?;
            let value = match (flag.value, inline) {
                (None, Some(_)) => return Err(usage(format!("{name} takes no value"))),
                (None, None) => None,
                (Some(_), Some(v)) => Some(v),
                (Some(_), None) => {
                    i += 1;
                    Some(argv.get(i).cloned().ok_or_else(|| usage(format!("{name} needs a value")))?)
                }
            };
            items.push((flag.long, value));
            i += 1;
        }
        Ok(Parsed::Run(Args { cmd, items }))
    }

    /// The declaration of `long`: asking for an undeclared option is a bug in this file.
    fn declared(&self, long: &str, valued: bool) {
        let f = self.cmd.flag(long).unwrap_or_else(|| panic!("{} has no option {long}", self.cmd.name));
        assert_eq!(f.value.is_some(), valued, "{long}: switch or valued");
    }
    fn flag(&self, long: &str) -> bool {
        self.declared(long, false);
        self.items.iter().any(|(k, _)| *k == long)
    }
    /// The last value given.
    fn get(&self, long: &str) -> Option<&str> {
        self.declared(long, true);
        self.items.iter().rev().find(|(k, _)| *k == long).and_then(|(_, v)| v.as_deref())
    }
    fn all(&self, long: &str) -> Vec<&str> {
        self.declared(long, true);
        self.items.iter().filter(|(k, _)| *k == long).filter_map(|(_, v)| v.as_deref()).collect()
    }
    /// The declaration of a valued option (its range, its list rules).
    fn decl(&self, long: &str) -> &flags::Flag {
        self.declared(long, true);
        self.cmd.flag(long).expect("declared")
    }
    /// A whole number within the option's declared range.
    fn whole(&self, long: &str) -> Result<Option<u64>, Fail> {
        self.get(long).map(|v| self.decl(long).whole(v)).transpose().map_err(usage)
    }
    /// A whole number within the declared range, as the type the option feeds.
    fn whole_as<T: TryFrom<u64>>(&self, long: &str) -> Result<Option<T>, Fail> {
        // the declared ranges fit their types; a failure here is a declaration bug
        Ok(self.whole(long)?.map(|v| T::try_from(v).unwrap_or_else(|_| panic!("{long}: range exceeds its type"))))
    }
    /// A finite number within the option's declared range.
    fn real(&self, long: &str) -> Result<Option<f64>, Fail> {
        self.get(long).map(|v| self.decl(long).real(v)).transpose().map_err(usage)
    }
    /// A list of whole numbers: no empty item, no repeat, each within the declared range.
    fn whole_list<T: TryFrom<u64>>(&self, long: &str) -> Result<Option<Vec<T>>, Fail> {
        let Some(text) = self.get(long) else { return Ok(None) };
        let values = self.decl(long).whole_list(text).map_err(usage)?;
        Ok(Some(values.into_iter().map(|v| T::try_from(v).unwrap_or_else(|_| panic!("{long}: range"))).collect()))
    }
    /// A list of words: no empty item, no repeat.
    fn items(&self, long: &str) -> Result<Option<Vec<&str>>, Fail> {
        self.get(long).map(|t| self.decl(long).items(t)).transpose().map_err(usage)
    }
}

fn roots(a: &Args) -> Roots {
    let mut r = Roots::default();
    if let Some(s) = a.get("--sysfs-root") {
        r.sysfs = s.into();
    }
    if let Some(p) = a.get("--procfs-root") {
        r.procfs = p.into();
    }
    r
}

fn pmu(a: &Args) -> Result<PmuSource, Fail> {
    a.get("--pmu").map_or(Ok(PmuSource::Hardware), |p| PmuSource::parse(p).map_err(usage))
}

fn cluster_names(a: &Args) -> Option<Vec<String>> {
    a.get("--cluster-names").map(|s| s.split(',').map(str::to_string).collect())
}

fn cmd_govern(a: &Args) -> Result<i32, Fail> {
    let governor =
        a.get("--governor").ok_or_else(|| usage("govern needs --governor NAME (see `hetlabd governors`)"))?.to_string();
    let platform = Platform::builtin(a.get("--platform").unwrap_or(DEFAULT_PLATFORM)).map_err(usage)?;
    let model = match a.get("--model") {
        None | Some("lctes2020-fig4") => None,
        Some(path) => {
            // bounded like every other read (a model.json is kilobytes; /dev/zero is not one)
            let text = hetlab_linux::infile::read_text(
                std::path::Path::new(path),
                hetlab_linux::infile::INPUT_MAX_BYTES,
                true,
            )
            .map_err(|e| fail(format!("--model: {e}")))?;
            let m = AntiSnoopModel::from_json(&text).map_err(|e| fail(format!("--model {path} is {e}")))?;
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
    let duration_us = a.real("--duration")?.map(|s| positive_seconds_us("--duration", s)).transpose().map_err(usage)?;
    let mut backend = BackendConfig::new(roots(a), platform);
    backend.pmu = pmu(a)?;
    backend.cluster_names = cluster_names(a);
    backend.skip_quiet_threads = !a.flag("--read-all-threads");
    let cfg = GovernConfig {
        governor,
        tunables,
        model,
        dry_run: a.flag("--dry-run"),
        counters,
        backend,
        duration_us,
        log_samples: a.flag("--verbose"),
    };
    let mut stop = SignalStop::until_exit().map_err(fail)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    let o = daemon::govern(&cfg, &mut stop, &mut out, &mut err).map_err(fail)?;
    let restored = if o.restored.is_empty() { String::new() } else { format!("; restored {}", o.restored.join("; ")) };
    note!("hetlabd: stopped ({}) after {} samples, {} frequency writes{restored}", o.stop_reason, o.samples, o.writes);
    Ok(0)
}

fn cmd_chase(a: &Args) -> Result<i32, Fail> {
    let mut opts = ChaseOptions { cpu: a.whole_as("--cpu")?, ..ChaseOptions::default() };
    opts.freq_khz = a.whole_as("--freq-khz")?;
    if let Some(t) = a.real("--min-time")? {
        opts.min_time_s = t;
    }
    if let Some(n) = a.whole("--iterations")? {
        opts.iterations = n;
    }
    if let Some(s) = a.whole("--seed")? {
        opts.seed = s;
    }
    // every LIST's items are checked (no empty or repeated item), as the Python CLI checks them
    a.items("--sizes")?;
    let sizes = match a.whole_list("--elements")? {
        Some(e) => e,
        None => chase::elements_of(
            &chase::parse_sizes(a.get("--sizes").unwrap_or(DEFAULT_SIZES))
                .map_err(|e| usage(format!("--sizes: {e}")))?,
        ),
    };
    let patterns = a
        .items("--pattern")?
        .unwrap_or_else(|| DEFAULT_PATTERNS.split(',').collect())
        .into_iter()
        .map(|p| Pattern::parse(p).map_err(usage))
        .collect::<Result<Vec<_>, _>>()?;
    let points = chase::sweep(&sizes, &patterns, &opts).map_err(fail)?;
    if a.flag("--json") {
        outln!("{}", chase::report(&opts, &points));
    } else {
        out!("{}", chase::text_report(&opts, &points));
    }
    Ok(0)
}

fn cmd_pingpong(a: &Args) -> Result<i32, Fail> {
    let mut opts = PingpongOptions::default();
    if let Some(n) = a.whole("--round-trips")? {
        opts.round_trips = n;
    }
    if let Some(n) = a.whole_as("--repeats")? {
        opts.repeats = n;
    }
    a.items("--cpus")?;
    let chosen = pingpong::choose_cpus(a.get("--cpus")).map_err(usage)?;
    let m = pingpong::matrix(&chosen, &opts).map_err(usage)?;
    if a.flag("--json") {
        outln!("{}", pingpong::json_report(&chosen, &opts, &m));
    } else {
        out!("{}", pingpong::text_report(&chosen, &opts, &m));
    }
    Ok(0)
}

fn cmd_characterize(a: &Args) -> Result<i32, Fail> {
    let out = PathBuf::from(a.get("--out").ok_or_else(|| usage("characterize needs --out FILE.csv"))?);
    let mut cfg = SweepConfig::builtin(a.get("--platform").unwrap_or(DEFAULT_PLATFORM)).map_err(usage)?;
    cfg.roots = roots(a);
    cfg.pmu = pmu(a)?;
    if let Some(p) = a.items("--patterns")? {
        cfg.sweep.patterns = p.into_iter().map(str::to_string).collect();
    }
    if let Some(s) = a.whole_list("--sizes")? {
        cfg.sweep.sizes = s;
    }
    if let Some(r) = a.whole_as("--reps")? {
        cfg.sweep.reps = r;
    }
    if let Some(r) = a.real("--run-s")? {
        cfg.sweep.run_s = r;
    }
    if let Some(s) = a.whole("--seed")? {
        cfg.sweep.seed = s;
    }
    if let Some(o) = a.get("--active-opp") {
        cfg.sweep.active_opp = ActiveOpp::parse(o).map_err(usage)?;
    }
    cfg.period_us = a.whole("--period-us")?;
    // --big-khz, --little-khz: named after the dataset's frequency columns
    for cluster in FREQ_CLUSTERS {
        let flag = format!("--{cluster}-khz");
        if let Some(l) = a.whole_list(&flag)? {
            cfg.only_khz.push((cluster.to_string(), l));
        }
    }
    cfg.allow_missing_counters = a.flag("--allow-missing-counters");
    cfg.cluster_names = cluster_names(a);
    for item in a.items("--chase-cpu")?.unwrap_or_default() {
        let (c, n) = item
            .split_once('=')
            .ok_or_else(|| usage(format!("--chase-cpu expects CLUSTER=CPU, e.g. little=0,big=4; got '{item}'")))?;
        let cpu = parse_cpu_list(n)
            .ok()
            .filter(|l| l.len() == 1 && !n.contains('-'))
            .ok_or_else(|| usage(format!("--chase-cpu {c}: '{n}' is not a CPU number (below {MAX_CPU_NUMBER})")))?;
        if cfg.chase_cpus.iter().any(|(k, _)| k == c) {
            return Err(usage(format!("--chase-cpu names cluster {c} twice; give one CPU per cluster")));
        }
        cfg.chase_cpus.push((c.to_string(), cpu[0]));
    }
    let mut stop = SignalStop::until_exit().map_err(fail)?;
    let names: Vec<String> = cfg.platform.clusters.iter().map(|c| c.name.clone()).collect();
    // `-` is stdout, a device or FIFO is written in place, a file is written beside OUT and
    // renamed over it when complete; a link is refused as root (see hetlab_linux::outfile)
    let partial = out.with_extension("csv.partial");
    let mut output = Output::open(&out).map_err(fail)?;
    let what = output.describe();
    let mut file = csv_writer(&mut output);
    let mut pipe_closed = false;
    let mut write_failed = |e: std::io::Error| {
        pipe_closed |= e.kind() == std::io::ErrorKind::BrokenPipe;
        format!("writing {what}: {e}")
    };
    // the header goes out with the first rows: a refusal (not root, no cpufreq) leaves no
    // partial output on stdout or a FIFO
    let header: Vec<String> = schema(&names).into_iter().map(|(name, _)| name.to_string()).collect();
    let mut header_written = false;
    let mut on_rows = |rows: &Dataset| -> Result<(), String> {
        if !std::mem::replace(&mut header_written, true) {
            file.write_record(&header).map_err(|e| write_failed(e.into()))?;
        }
        rows.write_csv_rows(&mut file).map_err(|e| write_failed(e.into()))?;
        file.flush().map_err(&mut write_failed)
    };
    let mut err = std::io::stderr();
    let result = characterize::characterize(&cfg, &mut stop, &mut on_rows, &mut err);
    let s = match result {
        // the reader of `--out -` is gone (`| head`) and the settings are back: stop quietly
        Err(e) if pipe_closed && e.ends_with("(policy settings restored)") => {
            return Err(Fail { msg: String::new(), code: 141 })
        }
        r => r.map_err(fail)?,
    };
    drop(file);
    if let Some(sig) = &s.stopped_by {
        // kept under a name that says it is incomplete (rename replaces, never follows, a link)
        let kept = output.keep_partial(&partial).map_err(fail)?;
        let place = kept.map_or(what.clone(), |p| p.display().to_string());
        note!(
            "hetlabd: stopped by {sig} after {} runs; the rows so far are in {place} (restored {})",
            s.runs,
            s.restored.join("; ")
        );
        return Ok(1);
    }
    output.commit().map_err(fail)?;
    let place = if out.as_os_str() == "-" { "standard output".to_string() } else { out.display().to_string() };
    note!("hetlabd: {} runs, {} rows written to {place}; restored {}", s.runs, s.rows, s.restored.join("; "));
    Ok(0)
}

fn cmd_restore(a: &Args) -> Result<i32, Fail> {
    let mut sysfs_root = Roots::default();
    if let Some(s) = a.get("--sysfs-root") {
        sysfs_root.sysfs = s.into();
    }
    let dir = sysfs_root.run_dir().map_err(fail)?;
    let state = dir.join(STATE_FILE);
    if std::fs::symlink_metadata(&state).is_err() {
        note!("hetlabd: nothing to restore: {} does not exist", state.display());
        return Ok(0);
    }
    let _lock = RunLock::acquire(&dir).map_err(fail)?;
    let saved = read_state_lines(&state).map_err(fail)?;
    let policies = hetlab_linux::sysfs::discover(&sysfs_root).map_err(fail)?;
    // a running hetlabd on these policies (whatever path it reached them by) owns them: not while it runs
    let _policy_locks = PolicyLocks::acquire(&policies).map_err(fail)?;
    check_saved(&saved, &policies).map_err(|e| fail(format!("{}: {e}; nothing written", state.display())))?;
    // every line was checked above: only now is anything written
    let saved: Vec<_> = saved.into_iter().map(|(_, s)| s).collect();
    let mut errors = Vec::new();
    for s in &saved {
        errors.extend(s.restore());
    }
    if !errors.is_empty() {
        return Err(fail(format!("restoring from {} failed: {}", state.display(), errors.join("; "))));
    }
    std::fs::remove_file(&state).map_err(|e| fail(format!("restored, but cannot remove {}: {e}", state.display())))?;
    note!("hetlabd: restored {}", saved.iter().map(|s| s.describe()).collect::<Vec<_>>().join("; "));
    Ok(0)
}

fn cmd_governors(a: &Args) -> Result<i32, Fail> {
    let platform = Platform::builtin(a.get("--platform").unwrap_or(DEFAULT_PLATFORM)).map_err(usage)?;
    let govs = hetlab_core::governor::registry::list(platform.tick_us());
    if a.flag("--json") {
        outln!("{}", serde_json::to_string_pretty(&govs).map_err(|e| fail(e.to_string()))?);
        return Ok(0);
    }
    for g in govs {
        outln!("{}: {}", g.name, g.summary);
        for t in g.tunables {
            let d = match t.default {
                TunableDefault::Value(v) => format!("{v}"),
                TunableDefault::Policy(p) => p.to_string(),
            };
            outln!("    {:22} default {} {}  {}", t.name, d, t.unit, t.help);
        }
    }
    Ok(0)
}

/// Runs one hetlabd command line (`argv` without the program name) and returns the exit code.
/// `prog` names the program in error lines.
pub fn run(prog: &str, argv: &[String]) -> i32 {
    let Some(name) = argv.first() else {
        let _ = write!(std::io::stderr(), "{MAIN_HELP}");
        return 2;
    };
    let r = match name.as_str() {
        "-h" | "--help" | "help" => write!(std::io::stdout(), "{MAIN_HELP}").map(|()| 0).map_err(stdout_failed),
        "-V" | "--version" => {
            writeln!(std::io::stdout(), "hetlabd {}", env!("CARGO_PKG_VERSION")).map(|()| 0).map_err(stdout_failed)
        }
        other => match flags::command(other) {
            None => Err(usage(format!(
                "unknown command '{other}'; commands: {} (see --help)",
                flags::commands().iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
            ))),
            Some(cmd) => match Args::parse(cmd, &argv[1..]) {
                Err(f) => Err(f),
                Ok(Parsed::Help(text)) => write!(std::io::stdout(), "{text}").map(|()| 0).map_err(stdout_failed),
                Ok(Parsed::Run(a)) => match a.cmd.name {
                    "govern" => cmd_govern(&a),
                    "chase" => cmd_chase(&a),
                    "pingpong" => cmd_pingpong(&a),
                    "characterize" => cmd_characterize(&a),
                    "restore" => cmd_restore(&a),
                    "governors" => cmd_governors(&a),
                    other => unreachable!("no runner for declared command {other}"),
                },
            },
        },
    };
    let r = r.and_then(|code| std::io::stdout().flush().map(|()| code).map_err(stdout_failed));
    match r {
        Ok(code) => code,
        Err(f) => {
            if !f.msg.is_empty() {
                note!("{prog}: error: {}", f.msg);
            }
            f.code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn help_is_an_outcome_not_an_exit() {
        let cmd = flags::command("chase").unwrap();
        match Args::parse(cmd, &argv(&["--sizes", "4K", "--help"])) {
            Ok(Parsed::Help(text)) => assert!(text.starts_with("usage: hetlabd chase") && text.contains("--min-time")),
            _ => panic!("--help gives the help text"),
        }
        assert_eq!(run("hetlabd", &argv(&["govern", "-h"])), 0);
    }

    #[test]
    fn options_are_checked_against_their_declarations() {
        let parse = |args: &[&str]| Args::parse(flags::command("govern").unwrap(), &argv(args));
        let Ok(Parsed::Run(a)) = parse(&["-v", "--tunable", "a=1", "--tunable=b=2", "--governor", "x"]) else {
            panic!()
        };
        assert!(a.flag("--verbose") && !a.flag("--dry-run"));
        assert_eq!(a.all("--tunable"), ["a=1", "b=2"]);
        assert_eq!(a.get("--governor"), Some("x"));
        for (args, msg) in [
            (&["--governer", "x"][..], "unknown option '--governer'; see --help"),
            (&["--dry-run=yes"], "--dry-run takes no value"),
            (&["--model"], "--model needs a value"),
        ] {
            match parse(args) {
                Err(f) => assert_eq!((f.msg.as_str(), f.code), (msg, 2)),
                Ok(_) => panic!("{args:?} is refused"),
            }
        }
    }
}
