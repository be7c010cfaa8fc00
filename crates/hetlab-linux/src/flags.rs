//! The options of the board commands (`govern`, `chase`, `pingpong`, `characterize`, `restore`,
//! `governors`), each declared once with its help text and its default. hetlabd parses and
//! documents its command lines from these declarations; the Python CLI (`hetlab chase`, `hetlab
//! govern`, `hetlab characterize`) builds its argparse parsers from the same ones, so both
//! programs take the same options with the same meaning.
//!
//! Defaults are not written here: they are read from the options' own homes (`Default` of
//! [`ChaseOptions`] and [`SweepOptions`], [`Roots`], ...).

use hetlab_core::governor::registry;
use hetlab_core::platform::DEFAULT_PLATFORM;
use hetlab_core::sweep::{SweepOptions, PATTERNS};

use crate::backend::PmuSource;
use crate::chase::{ChaseOptions, DEFAULT_PATTERNS, DEFAULT_SIZES};
use crate::cpus::MAX_CPU_NUMBER;
use crate::pingpong::PingpongOptions;
use crate::Roots;

/// Which part of a command an option belongs to (the Python CLI groups them so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Where the output goes.
    Output,
    /// The characterization plan: the same for the simulated sweep and the board's.
    Plan,
    /// The board: its files, counters and frequencies.
    Board,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Output => "output",
            Group::Plan => "plan",
            Group::Board => "board",
        }
    }
}

/// The values a numeric option (or each item of a numeric list) accepts. Declared with the
/// option and checked once, where its value is parsed: a value outside it is a one-line error
/// naming the option and the range, never a busy loop (a 0 µs period) or a wrapped number (a
/// duration of 1e300 s turned into 0, a seed that overflows into another run's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Whole numbers from .0 to .1.
    Whole(u64, u64),
    /// Finite numbers from .0 to .1 (seconds).
    Real(f64, f64),
}

impl Range {
    fn describe(self) -> String {
        match self {
            Range::Whole(lo, hi) => format!("a whole number from {lo} to {hi}"),
            Range::Real(lo, hi) => format!("a number from {lo} to {hi}"),
        }
    }
}

/// The longest run any option asks for: a year, in seconds (µs of it fit a u64 many times).
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;
/// The largest base seed of a sweep: run `i` uses `seed + i`, and 2^53 (exact as a float in
/// JSON, Parquet readers and pandas) plus any plan's run count stays far below u64::MAX.
pub const MAX_SWEEP_SEED: u64 = 1 << 53;
/// Dependent loads a chase may be asked for per chunk: 2^32 (seconds of work at any clock).
pub const MAX_CHASE_ITERATIONS: u64 = 1 << 32;
/// The most array elements a chase indexes (u32 indices).
pub const MAX_ELEMENTS: u64 = 1 << 32;
/// Frequencies are kHz in a u32; 100 GHz bounds any CPU.
pub const MAX_KHZ: u64 = 100_000_000;

/// One option.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// `--name`.
    pub long: &'static str,
    /// `-x`, if it has one.
    pub short: Option<&'static str>,
    /// Name of its value (`FILE`, `LIST`); `None` for a switch.
    pub value: Option<&'static str>,
    /// Given several times, every value counts (otherwise the last one).
    pub repeatable: bool,
    /// What it does; may span lines.
    pub help: String,
    /// The default, as it is shown; `None` when there is none.
    pub default: Option<String>,
    pub group: Group,
    /// For a numeric option (or list of numbers), the values it accepts.
    pub range: Option<Range>,
}

impl Flag {
    fn valued(long: &'static str, value: &'static str, help: impl Into<String>) -> Flag {
        Flag {
            long,
            short: None,
            value: Some(value),
            repeatable: false,
            help: help.into(),
            default: None,
            group: Group::Board,
            range: None,
        }
    }
    fn range(mut self, range: Range) -> Flag {
        self.range = Some(range);
        self
    }
    fn switch(long: &'static str, help: impl Into<String>) -> Flag {
        Flag { value: None, ..Flag::valued(long, "", help) }
    }
    fn default(mut self, value: impl ToString) -> Flag {
        self.default = Some(value.to_string());
        self
    }
    fn group(mut self, group: Group) -> Flag {
        self.group = group;
        self
    }
}

/// One command: its usage line, what it does, its options.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub name: &'static str,
    pub usage: &'static str,
    pub about: &'static str,
    pub flags: Vec<Flag>,
}

impl Command {
    pub fn flag(&self, long: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.long == long || f.short == Some(long))
    }

    /// `usage`, `about` and the options, as `--help` prints them.
    pub fn help(&self) -> String {
        let mut out = format!("usage: {}\n\n{}\noptions:\n", self.usage, self.about);
        for f in &self.flags {
            let names = match f.short {
                Some(s) => format!("{s}, {}", f.long),
                None => f.long.to_string(),
            };
            let head = match f.value {
                Some(v) => format!("  {names} {v}"),
                None => format!("  {names}"),
            };
            let text = f.help_text();
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default();
            if head.len() < HELP_COLUMN {
                out += &format!("{head:<HELP_COLUMN$}{first}\n");
            } else {
                out += &format!("{head}\n{:HELP_COLUMN$}{first}\n", "");
            }
            for l in lines {
                out += &format!("{:HELP_COLUMN$}{l}\n", "");
            }
        }
        out
    }
}

/// An option's value, parsed by [`Flag::value`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Whole(u64),
    Real(f64),
    WholeList(Vec<u64>),
    /// A list of words, checked ([`Flag::items`]) and kept as given.
    Text(String),
}

impl Flag {
    /// Whether [`Flag::value`] checks this option's value: a number (it has a range) or a `LIST`.
    pub fn checked(&self) -> bool {
        self.range.is_some() || self.value == Some("LIST")
    }

    /// `text` parsed as this option takes it: for a numeric option a comma-separated list of
    /// whole numbers (a `LIST`) or one whole or real number, within the declared range; for a
    /// `LIST` of words, its items checked ([`Flag::items`]). (hetlabd's parser calls
    /// [`Flag::whole`], [`Flag::real`], [`Flag::whole_list`] and [`Flag::items`] directly; the
    /// Python CLI reads every checked board option through here.)
    pub fn value(&self, text: &str) -> Result<Value, String> {
        match (self.range, self.value) {
            (Some(Range::Whole(..)), Some("LIST")) => self.whole_list(text).map(Value::WholeList),
            (Some(Range::Whole(..)), _) => self.whole(text).map(Value::Whole),
            (Some(Range::Real(..)), _) => self.real(text).map(Value::Real),
            (None, Some("LIST")) => self.items(text).map(|_| Value::Text(text.to_string())),
            (None, _) => panic!("{} takes no checked value", self.long),
        }
    }

    fn declared_range(&self) -> Range {
        self.range.unwrap_or_else(|| panic!("{} is not declared with a range", self.long))
    }

    /// `text` as a whole number within the declared range.
    pub fn whole(&self, text: &str) -> Result<u64, String> {
        let range = self.declared_range();
        let Range::Whole(lo, hi) = range else { panic!("{} is not a whole number", self.long) };
        match text.trim().parse::<u64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(format!("{} expects {}, got '{text}'", self.long, range.describe())),
        }
    }

    /// `text` as a finite number within the declared range.
    pub fn real(&self, text: &str) -> Result<f64, String> {
        let range = self.declared_range();
        let Range::Real(lo, hi) = range else { panic!("{} is not a real number", self.long) };
        match text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
            _ => Err(format!("{} expects {}, got '{text}'", self.long, range.describe())),
        }
    }

    /// A comma-separated list of whole numbers, each within the range; see [`Flag::items`].
    pub fn whole_list(&self, text: &str) -> Result<Vec<u64>, String> {
        let items = self.items(text)?;
        let values = items.iter().map(|i| self.whole(i)).collect::<Result<Vec<_>, _>>()?;
        if let Some(v) = values.iter().enumerate().find_map(|(i, v)| values[..i].contains(v).then_some(v)) {
            return Err(format!(
                "{} lists {v} twice; give each value once (a repeat would measure it twice)",
                self.long
            ));
        }
        Ok(values)
    }

    /// The items of a comma-separated list: none empty (`4096,,8192`, `,,,`: a typo that
    /// would otherwise fall back to the defaults), none repeated.
    pub fn items<'a>(&self, text: &'a str) -> Result<Vec<&'a str>, String> {
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        if items.iter().any(|i| i.is_empty()) {
            return Err(format!(
                "{} '{text}' has an empty item; separate the values by single commas, e.g. 4096,262144",
                self.long
            ));
        }
        if let Some(i) = items.iter().enumerate().find_map(|(k, i)| items[..k].contains(i).then_some(i)) {
            return Err(format!("{} lists '{i}' twice; give each value once", self.long));
        }
        Ok(items)
    }
}

/// Where option help starts in `--help`, and how wide it may run.
const HELP_COLUMN: usize = 24;
const HELP_WIDTH: usize = 100 - HELP_COLUMN;

impl Flag {
    /// The help with its default, lines wrapped to fit `--help` (lines that start with a space
    /// are laid out by hand and kept).
    pub fn help_text(&self) -> String {
        let mut text = self.help.clone();
        if let Some(d) = &self.default {
            text += &format!(" (default {d})");
        }
        let mut out = Vec::new();
        for line in text.lines() {
            if line.starts_with(' ') {
                out.push(line.to_string());
                continue;
            }
            let mut cur = String::new();
            for word in line.split(' ') {
                if !cur.is_empty() && cur.len() + 1 + word.len() > HELP_WIDTH {
                    out.push(std::mem::take(&mut cur));
                }
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur += word;
            }
            out.push(cur);
        }
        out.join("\n")
    }
}

/// The sysfs root's help: it also says where the lock and the saved settings live, which
/// follows from it ([`Roots::run_dir`]) and from no option of its own.
const SYSFS_ROOT_HELP: &str = "read/write DIR/devices/system/cpu/cpufreq/... instead of /sys/...;\n\
     hetlabd.lock and hetlabd.saved live in run/ beside DIR (/run for /sys or any mount of it)";

/// Options every command that touches the board's cpufreq policies takes.
fn board_flags() -> Vec<Flag> {
    let roots = Roots::default();
    vec![
        Flag::valued(
            "--pmu",
            "hardware|software",
            "hardware: the ARM core PMUs and the CCI-400 PMU found under\n\
             /sys/bus/event_source/devices. software: software events stand in for\n\
             them (testing on machines without the hardware; values are not snoops)",
        )
        .default(PmuSource::Hardware.name()),
        Flag::valued("--platform", "NAME", "platform description naming the clusters and CCI ports")
            .default(DEFAULT_PLATFORM),
        Flag::valued(
            "--cluster-names",
            "A,B",
            "name the policies (in CPU order) after these platform clusters instead\nof matching CPU lists",
        ),
        Flag::valued("--sysfs-root", "DIR", SYSFS_ROOT_HELP).default(roots.sysfs.display()),
        Flag::valued("--procfs-root", "DIR", "read DIR/stat, DIR/<pid>/comm instead of /proc/...")
            .default(roots.procfs.display()),
    ]
}

fn govern() -> Command {
    let names: Vec<&str> = registry::GOVERNORS.iter().map(|g| g.name).collect();
    let mut flags = vec![
        Flag::valued("--governor", "NAME", format!("{} (see `hetlabd governors`)", names.join(", "))),
        Flag::valued(
            "--model",
            "FILE",
            "anti-snoop's trees (a model.json from `hetlab train`); default: the\n\
             paper's Figure 4 trees (lctes2020-fig4)",
        ),
        Flag {
            repeatable: true,
            ..Flag::valued(
                "--tunable",
                "NAME=VALUE",
                "a governor tunable by its sysfs name, e.g. sampling_rate=20000 (µs),\nup_threshold=80; repeatable",
            )
        },
        Flag::switch(
            "--dry-run",
            "decide but write nothing (no governor switch, no setspeed); prints every\ndecision; root not needed",
        ),
        Flag::valued("--duration", "SECONDS", "stop after this long (a normal exit; settings restored)")
            .range(Range::Real(0.001, MAX_SECONDS)),
        Flag {
            short: Some("-v"),
            ..Flag::switch(
                "--verbose",
                "print every sample (time, load, current and target kHz, anti-snoop's\nfeatures) on stdout",
            )
        },
        Flag::valued(
            "--counters",
            "MODE",
            "which PMCs anti-snoop reads (other governors read none unless given):\n  \
             per-cpu          one group per CPU, all tasks (default; cost grows\n                   \
             with CPUs, not threads)\n  \
             cgroup=DIR       one group per CPU for the tasks of a cgroup\n  \
             pid=P[,P]        per-thread counters for every thread of processes\n  \
             tid=T[,T]        per-thread counters for these threads\n  \
             off              none: anti-snoop then decides on load only\n\
             If a hardware event is missing, the governor runs load-only.",
        ),
        Flag::switch(
            "--read-all-threads",
            "pid=/tid= counters: read every thread's group each sample (default: only\n\
             the threads that may have run since their last read, told from the\n\
             perf user page; the start-up line says which)",
        ),
    ];
    flags.extend(board_flags());
    Command {
        name: "govern",
        usage: "hetlabd govern --governor NAME [options]",
        about: "\
Runs NAME on every cpufreq policy until SIGINT/SIGTERM (or --duration): switches the policies to
the userspace governor, and every sampling period builds the governor's view from /proc/stat,
sysfs and the PMCs and writes scaling_setspeed (only frequencies from the policy's list, only
when they change). Each policy's scaling_governor, scaling_min_freq and scaling_max_freq are
saved first (also to /run/hetlabd.saved, the run directory of the sysfs root) and restored on
normal exit, on SIGINT, SIGTERM, SIGHUP and SIGQUIT, and on any error.

It refuses to start when: not root (unless --dry-run); there are no cpufreq policies; a policy
has no userspace governor; another hetlabd holds /run/hetlabd.lock or the policies; auto-cpufreq,
power-profiles-daemon, tuned, thermald or cpufreqd is running; or a killed hetlabd left
/run/hetlabd.saved (run `hetlabd restore`).
",
        flags,
    }
}

fn chase() -> Command {
    let d = ChaseOptions::default();
    Command {
        name: "chase",
        usage: "hetlabd chase [options]",
        about: "\
ccbench 'caches' semantics (reimplemented): 4-byte elements; random = one element per 256-byte
block in random order within each 4 KB page, pages in ascending order; sequential; stride-K (K
words). One warm-up lap, then chunks of --iterations dependent loads until --min-time has
passed (CLOCK_MONOTONIC). Prints ns per access, and cycles per access given --freq-khz.
",
        flags: vec![
            Flag::valued("--cpu", "N", "pin the benchmark thread to CPU N (sched_setaffinity)")
                .range(Range::Whole(0, MAX_CPU_NUMBER as u64 - 1)),
            Flag::valued("--sizes", "LIST", "array sizes in bytes: 16K,64M,4096 or a doubling range 4K..64M")
                .default(DEFAULT_SIZES),
            Flag::valued(
                "--elements",
                "LIST",
                "array sizes in 4-byte elements instead (ccbench's N), e.g. 4096,16777216",
            )
            .range(Range::Whole(1, MAX_ELEMENTS)),
            Flag::valued("--pattern", "LIST", "random, sequential, stride-K (comma-separated)")
                .default(DEFAULT_PATTERNS),
            Flag::valued("--min-time", "SECONDS", "minimum measured time per point (ccbench uses 1.0)")
                .default(d.min_time_s)
                .range(Range::Real(0.0, 3600.0)),
            Flag::valued("--iterations", "N", "dependent loads per timed chunk")
                .default(d.iterations)
                .range(Range::Whole(1, MAX_CHASE_ITERATIONS)),
            Flag::valued("--freq-khz", "KHZ", "the CPU's frequency, for cycles per access")
                .range(Range::Whole(1, MAX_KHZ)),
            Flag::valued("--seed", "N", "seed of the random order").default(d.seed).range(Range::Whole(0, u64::MAX)),
            Flag::switch("--json", "JSON instead of a table"),
        ],
    }
}

fn pingpong() -> Command {
    let d = PingpongOptions::default();
    Command {
        name: "pingpong",
        usage: "hetlabd pingpong [options]",
        about: "\
Inter-core latency (Sandra's test, seed 004): a cache line bounced between two threads pinned to
two CPUs, for every ordered pair. Prints the matrix of ns per one-way transfer (a row per ping
CPU, a column per pong CPU), the fastest of --repeats measurements of --round-trips each.
",
        flags: vec![
            Flag::valued("--cpus", "LIST", "CPUs to measure, e.g. 0-3,4,7 (default: every CPU this process may use)"),
            Flag::valued("--round-trips", "N", "timed round trips per measurement")
                .default(d.round_trips)
                .range(Range::Whole(1, crate::pingpong::MAX_ROUND_TRIPS)),
            Flag::valued("--repeats", "N", "measurements per pair; the fastest counts")
                .default(d.repeats)
                .range(Range::Whole(1, crate::pingpong::MAX_REPEATS.into())),
            Flag::switch("--json", "JSON instead of a table"),
        ],
    }
}

/// The sweep plan's options (also the simulated sweep's, in `hetlab characterize`).
fn plan_flags() -> Vec<Flag> {
    let d = SweepOptions::default();
    vec![
        Flag::valued("--patterns", "LIST", format!("comma-separated, some of {}", PATTERNS.join(", ")))
            .default("all three"),
        Flag::valued(
            "--sizes",
            "LIST",
            "comma-separated array sizes in 4-byte elements (default: half and\ntwice every L1 and L2 of the platform)",
        )
        .range(Range::Whole(1, MAX_ELEMENTS)),
        Flag::valued("--reps", "N", "repetitions per configuration, at least 2 (the labels come from a t-test)")
            .default(d.reps)
            .range(Range::Whole(2, 1000)),
        Flag::valued("--run-s", "SECONDS", "run length with both clusters at their top OPP")
            .default(d.run_s)
            .range(Range::Real(0.001, 3600.0)),
        Flag::valued("--seed", "N", "base seed: run i uses seed + i (the simulation's, or the chase's chain)")
            .default(d.seed)
            .range(Range::Whole(0, MAX_SWEEP_SEED)),
        Flag::valued(
            "--active-opp",
            "all|top",
            "all: every pair of frequencies; top: the active cluster at its highest\n\
             frequency, only the idle cluster swept (the layout the paper's Figure 4\n\
             sample counts imply; 13-19x fewer runs)",
        )
        .default(d.active_opp.name()),
    ]
    .into_iter()
    .map(|f| f.group(Group::Plan))
    .collect()
}

fn characterize() -> Command {
    let mut flags =
        vec![Flag::valued("--out", "FILE.csv", "CSV output (one header line, then the rows as each run ends); - for\nstandard output, a FIFO or device is written in place")
            .group(Group::Output)];
    flags.extend(plan_flags());
    flags.extend([
        Flag::valued(
            "--period-us",
            "US",
            "counter sampling period, µs (default: ondemand's sampling rate for the policy)",
        )
        .range(Range::Whole(100, 10_000_000)),
        Flag::valued("--big-khz", "LIST", "only these big-cluster frequencies, kHz (default: all)")
            .range(Range::Whole(1, MAX_KHZ)),
        Flag::valued("--little-khz", "LIST", "only these LITTLE-cluster frequencies, kHz (default: all)")
            .range(Range::Whole(1, MAX_KHZ)),
        Flag::valued(
            "--chase-cpu",
            "C=N[,..]",
            "CPU running the chase per cluster, e.g. little=0,big=4 (default: the\ncluster's first online CPU)",
        ),
        Flag::switch("--allow-missing-counters", "sweep even if the CCI or core PMU is missing (those columns are 0)"),
    ]);
    flags.extend(board_flags());
    Command {
        name: "characterize",
        usage: "hetlabd characterize --out FILE.csv [options]",
        about: "\
The training sweep on this board: for each active cluster, pattern and size, and every pair of
(big, LITTLE) frequencies, repeated: both policies fixed with the userspace governor, the chase
pinned to a CPU of the active cluster, and every sampling period one row with the CCI-400 port
counters and the chase thread's core counters. Rows have exactly the columns of the simulated
sweep (docs/dataset.md); `hetlab characterize --backend linux` writes them as Parquet.
Governor, min and max are saved first and restored at the end, on a signal and on any error.
Needs root.
",
        flags,
    }
}

fn restore() -> Command {
    Command {
        name: "restore",
        usage: "hetlabd restore [--sysfs-root DIR]",
        about: "\
Writes back the governor, min and max saved in /run/hetlabd.saved (run/hetlabd.saved beside the
sysfs root) by a hetlabd that was killed (SIGKILL, power loss) before it could restore them, then
deletes the file. Every saved line must name a cpufreq policy found under the sysfs root (each
policy once), a governor it lists and frequencies within its limits (a setspeed from its
frequency list); every line is checked before anything is written, and one that fails is named
and nothing is written.
",
        flags: vec![
            Flag::valued("--sysfs-root", "DIR", SYSFS_ROOT_HELP).default(crate::Roots::default().sysfs.display())
        ],
    }
}

fn governors() -> Command {
    Command {
        name: "governors",
        usage: "hetlabd governors [--platform NAME] [--json]",
        about: "Lists the governors and their tunables (kernel sysfs names and units).\n",
        flags: vec![
            Flag::valued("--platform", "NAME", "the platform whose scheduler tick (CONFIG_HZ) bounds sampling_rate")
                .default(DEFAULT_PLATFORM),
            Flag::switch("--json", "JSON instead of a list"),
        ],
    }
}

/// Every board command, in the order `hetlabd --help` lists them.
pub fn commands() -> Vec<Command> {
    vec![govern(), chase(), pingpong(), characterize(), restore(), governors()]
}

pub fn command(name: &str) -> Option<Command> {
    commands().into_iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_is_declared_once_with_help() {
        for c in commands() {
            let mut seen = std::collections::BTreeSet::new();
            for f in &c.flags {
                assert!(f.long.starts_with("--") && !f.help.is_empty(), "{} {}", c.name, f.long);
                assert!(seen.insert(f.long), "{} declares {} twice", c.name, f.long);
                assert!(f.value.is_some() || f.default.is_none(), "a switch has no default");
            }
            let help = c.help();
            assert!(c.flags.iter().all(|f| help.contains(f.long)), "{help}");
        }
    }

    #[test]
    fn every_numeric_option_has_a_range_and_values_outside_it_are_one_line_errors() {
        let valued_numbers = ["--duration", "--cpu", "--min-time", "--iterations", "--freq-khz", "--seed"];
        for c in commands() {
            for f in &c.flags {
                if valued_numbers.contains(&f.long) || matches!(f.value, Some("N" | "US" | "SECONDS" | "KHZ")) {
                    assert!(f.range.is_some(), "{} {} has no range", c.name, f.long);
                }
            }
        }
        let ch = command("characterize").unwrap();
        let period = ch.flag("--period-us").unwrap();
        assert_eq!(period.whole("5000"), Ok(5000));
        for bad in ["0", "-1", "99999999999999999999", "1e3", ""] {
            let e = period.whole(bad).unwrap_err();
            assert!(e.starts_with("--period-us expects a whole number from 100 to") && !e.contains('\n'), "{e}");
        }
        let seed = ch.flag("--seed").unwrap();
        assert!(seed.whole(&(u64::MAX - 1).to_string()).unwrap_err().contains("from 0 to 9007199254740992"));
        let dur = command("govern").unwrap().flag("--duration").unwrap().clone();
        for bad in ["1e300", "0", "nan", "inf", "-5"] {
            assert!(dur.real(bad).unwrap_err().starts_with("--duration expects a number from"), "{bad}");
        }
        assert_eq!(dur.real("2.5"), Ok(2.5));
        let rt = command("pingpong").unwrap().flag("--round-trips").unwrap().clone();
        assert!(rt.whole("18446744073709551615").is_err());
        let sizes = ch.flag("--sizes").unwrap();
        assert_eq!(sizes.whole_list("4096, 8192"), Ok(vec![4096, 8192]));
        assert!(sizes.whole_list(",,,").unwrap_err().contains("empty item"));
        assert!(sizes.whole_list("4096,,8192").unwrap_err().contains("empty item"));
        assert!(sizes.whole_list("4096,4096").unwrap_err().contains("twice"));
        assert!(sizes.whole_list("4096,04096").unwrap_err().contains("lists 4096 twice"));
        assert!(sizes.whole_list("0").unwrap_err().contains("from 1 to"));
    }

    #[test]
    fn value_parses_each_option_as_hetlabd_does() {
        let ch = command("characterize").unwrap();
        assert_eq!(ch.flag("--sizes").unwrap().value("4096,8192"), Ok(Value::WholeList(vec![4096, 8192])));
        assert_eq!(ch.flag("--seed").unwrap().value("7"), Ok(Value::Whole(7)));
        assert_eq!(ch.flag("--run-s").unwrap().value("0.5"), Ok(Value::Real(0.5)));
        assert_eq!(
            ch.flag("--patterns").unwrap().value("random,sequential"),
            Ok(Value::Text("random,sequential".into()))
        );
        assert!(ch.flag("--patterns").unwrap().value("random,,sequential").unwrap_err().contains("empty item"));
        assert!(ch.flag("--sizes").unwrap().value("4096,4096").unwrap_err().contains("twice"));
        assert!(!ch.flag("--platform").unwrap().checked() && ch.flag("--patterns").unwrap().checked());
    }

    #[test]
    fn help_quotes_the_defaults_of_the_options_themselves() {
        let chase = command("chase").unwrap().help();
        assert!(
            chase.contains("  --min-time SECONDS    minimum measured time per point (ccbench uses 1.0) (default 0.2)"),
            "{chase}"
        );
        assert!(chase.contains(&format!("(default {})", 1 << 20)), "{chase}");
        let c = command("characterize").unwrap();
        assert_eq!(c.flag("--reps").unwrap().default.as_deref(), Some("5"));
        assert!(c.flag("--run-dir").is_none(), "the run directory follows from the sysfs root");
        assert!(c.flag("--sysfs-root").unwrap().help.contains("(/run for /sys or any mount of it)"));
        assert_eq!(c.flag("--pmu").unwrap().group, Group::Board);
        assert_eq!(c.flag("--active-opp").unwrap().group, Group::Plan);
        assert!(command("govern").unwrap().flag("--governor").unwrap().help.contains("anti-snoop"));
        assert_eq!(command("govern").unwrap().flag("-v").unwrap().long, "--verbose");
        // one option per frequency column of the dataset, named after it
        for cluster in hetlab_core::sweep::FREQ_CLUSTERS {
            assert!(c.flag(&format!("--{cluster}-khz")).is_some(), "{cluster}");
        }
    }
}
