//! The real board (hetlab-linux): the pointer chase, the governor daemon and the board sweep as
//! typed functions, and the declarations of hetlabd's options, from which the Python CLI builds
//! its parsers. An option left `None` takes its default from its home in hetlab-linux (the
//! `Default` of its options struct, `Roots`, ...), which `--help` quotes.
//!
//! govern and the board sweep block SIGINT, SIGTERM, SIGHUP and SIGQUIT in the calling thread
//! and read them from a signalfd while they run ([`SignalStop`]), so a signal stops them and the
//! cpufreq settings are restored; the mask is given back when they return.

use std::path::PathBuf;

use hetlab_core::sweep::dataset::Dataset;
use hetlab_core::sweep::{ActiveOpp, SweepOptions};

use hetlab_linux::backend::{BackendConfig, CounterMode, PmuSource};
use hetlab_linux::characterize::{characterize, SweepConfig};
use hetlab_linux::chase::{self as native, ChaseOptions, Pattern, DEFAULT_PATTERNS, DEFAULT_SIZES};
use hetlab_linux::daemon::{self, GovernConfig};
use hetlab_linux::pingpong::{self as native_pingpong, PingpongOptions};
use hetlab_linux::stop::SignalStop;
use hetlab_linux::{flags, positive_seconds_us, Roots};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::platform::PlatformHandle;
use crate::{err, load_model};

/// A command's declaration: {"name", "usage", "about", "flags": [{"long", "short", "value",
/// "repeatable", "help", "default", "group"}]}; "help" is laid out as in `hetlabd --help`,
/// default included.
#[pyfunction]
pub fn board_command(py: Python<'_>, name: &str) -> PyResult<PyObject> {
    let cmd = flags::command(name).ok_or_else(|| err(format!("hetlabd has no command '{name}'")))?;
    let list = PyList::empty_bound(py);
    for f in &cmd.flags {
        let d = PyDict::new_bound(py);
        d.set_item("long", f.long)?;
        d.set_item("short", f.short)?;
        d.set_item("value", f.value)?;
        d.set_item("repeatable", f.repeatable)?;
        d.set_item("help", f.help_text())?;
        d.set_item("default", &f.default)?;
        d.set_item("group", f.group.name())?;
        // parse the value with `board_value` (its range or list rules are checked there)
        d.set_item("checked", f.checked())?;
        list.append(d)?;
    }
    let out = PyDict::new_bound(py);
    out.set_item("name", cmd.name)?;
    out.set_item("usage", cmd.usage)?;
    out.set_item("about", cmd.about)?;
    out.set_item("flags", list)?;
    Ok(out.into_any().unbind())
}

/// The value `text` of option `long` of hetlabd's command `name`, parsed and checked as hetlabd
/// does ([`flags::Flag::value`]): an int, a float, a list of ints for a numeric `LIST`, the text
/// of a `LIST` of words whose items passed; a value outside the option's declared range (or a
/// list with an empty or repeated item) is a ValueError with hetlabd's one-line message. The
/// Python CLI reads every checked board option through here, so each rule is declared once.
#[pyfunction]
pub fn board_value(py: Python<'_>, name: &str, long: &str, text: &str) -> PyResult<PyObject> {
    let cmd = flags::command(name).ok_or_else(|| err(format!("hetlabd has no command '{name}'")))?;
    let flag = cmd.flag(long).ok_or_else(|| err(format!("hetlabd {name} has no option {long}")))?;
    Ok(match flag.value(text).map_err(err)? {
        flags::Value::Whole(v) => v.into_py(py),
        flags::Value::Real(v) => v.into_py(py),
        flags::Value::WholeList(v) => v.into_py(py),
        flags::Value::Text(t) => t.into_py(py),
    })
}

/// Array sizes: a size list in bytes (`16K,64M`, `4K..64M`) or byte counts.
#[derive(FromPyObject)]
pub enum Sizes {
    Text(String),
    Bytes(Vec<usize>),
}

/// The native pointer chase on this machine. Returns (the JSON report, the text table) of
/// `hetlabd chase --json` and `hetlabd chase`.
#[pyfunction]
#[pyo3(signature = (*, sizes=None, elements=None, patterns=None, cpu=None, min_time_s=None, iterations=None, freq_khz=None, seed=None))]
#[allow(clippy::too_many_arguments)]
pub fn chase(
    py: Python<'_>,
    sizes: Option<Sizes>,
    elements: Option<Vec<usize>>,
    patterns: Option<Vec<String>>,
    cpu: Option<usize>,
    min_time_s: Option<f64>,
    iterations: Option<u64>,
    freq_khz: Option<u32>,
    seed: Option<u64>,
) -> PyResult<(String, String)> {
    let d = ChaseOptions::default();
    let opts = ChaseOptions {
        cpu,
        min_time_s: min_time_s.unwrap_or(d.min_time_s),
        iterations: iterations.unwrap_or(d.iterations),
        freq_khz,
        seed: seed.unwrap_or(d.seed),
    };
    let elements = match (sizes, elements) {
        (Some(_), Some(_)) => return Err(err("give sizes (bytes) or elements, not both".into())),
        (None, Some(e)) => e,
        (Some(Sizes::Bytes(b)), None) => native::elements_of(&b),
        (Some(Sizes::Text(t)), None) => native::elements_of(&native::parse_sizes(&t).map_err(err)?),
        (None, None) => native::elements_of(&native::parse_sizes(DEFAULT_SIZES).map_err(err)?),
    };
    let patterns = patterns.unwrap_or_else(|| DEFAULT_PATTERNS.split(',').map(str::to_string).collect());
    let patterns = patterns.iter().map(|p| Pattern::parse(p)).collect::<Result<Vec<_>, _>>().map_err(err)?;
    let points = py.allow_threads(|| native::sweep(&elements, &patterns, &opts)).map_err(err)?;
    Ok((native::report(&opts, &points).to_string(), native::text_report(&opts, &points)))
}

/// The native inter-core latency matrix on this machine. Returns (the JSON report, the text
/// table) of `hetlabd pingpong --json` and `hetlabd pingpong`.
#[pyfunction]
#[pyo3(signature = (*, cpus=None, round_trips=None, repeats=None))]
pub fn pingpong(
    py: Python<'_>,
    cpus: Option<String>,
    round_trips: Option<u64>,
    repeats: Option<u32>,
) -> PyResult<(String, String)> {
    let d = PingpongOptions::default();
    let opts =
        PingpongOptions { round_trips: round_trips.unwrap_or(d.round_trips), repeats: repeats.unwrap_or(d.repeats) };
    let chosen = native_pingpong::choose_cpus(cpus.as_deref()).map_err(err)?;
    let m = py.allow_threads(|| native_pingpong::matrix(&chosen, &opts)).map_err(err)?;
    Ok((native_pingpong::json_report(&chosen, &opts, &m), native_pingpong::text_report(&chosen, &opts, &m)))
}

fn roots(sysfs_root: Option<PathBuf>, procfs_root: Option<PathBuf>) -> Roots {
    let d = Roots::default();
    Roots { sysfs: sysfs_root.unwrap_or(d.sysfs), procfs: procfs_root.unwrap_or(d.procfs) }
}

fn pmu(name: Option<&str>) -> PyResult<PmuSource> {
    name.map_or(Ok(PmuSource::Hardware), |p| PmuSource::parse(p).map_err(err))
}

/// Runs `governor` on every cpufreq policy until a signal or `duration_s` (the daemon of
/// `hetlabd govern`). Sample lines go to stdout, notes to stderr. Returns (why it stopped,
/// samples, frequency writes, the settings restored).
#[pyfunction]
#[pyo3(signature = (
    governor, *, model=None, tunables=None, dry_run=false, duration_s=None, verbose=false, counters=None, pmu=None,
    platform=None, cluster_names=None, sysfs_root=None, procfs_root=None, read_all_threads=false
))]
#[allow(clippy::too_many_arguments)]
pub fn govern(
    py: Python<'_>,
    governor: String,
    model: Option<&str>,
    tunables: Option<Vec<(String, f64)>>,
    dry_run: bool,
    duration_s: Option<f64>,
    verbose: bool,
    counters: Option<&str>,
    pmu: Option<&str>,
    platform: Option<&Bound<'_, PlatformHandle>>,
    cluster_names: Option<Vec<String>>,
    sysfs_root: Option<PathBuf>,
    procfs_root: Option<PathBuf>,
    read_all_threads: bool,
) -> PyResult<(String, u64, u64, Vec<String>)> {
    let platform = PlatformHandle::or_default(platform)?;
    let model = model.map(|json| load_model(json, &platform)).transpose()?;
    let mut backend = BackendConfig::new(roots(sysfs_root, procfs_root), platform);
    backend.pmu = self::pmu(pmu)?;
    backend.cluster_names = cluster_names;
    backend.skip_quiet_threads = !read_all_threads;
    let cfg = GovernConfig {
        governor,
        tunables: tunables.unwrap_or_default(),
        model,
        dry_run,
        counters: counters.map(CounterMode::parse).transpose().map_err(err)?,
        backend,
        duration_us: duration_s.map(|s| positive_seconds_us("--duration", s)).transpose().map_err(err)?,
        log_samples: verbose,
    };
    let o = py
        .allow_threads(|| {
            let mut stop = SignalStop::new()?;
            daemon::govern(&cfg, &mut stop, &mut std::io::stdout().lock(), &mut std::io::stderr())
        })
        .map_err(err)?;
    Ok((o.stop_reason, o.samples, o.writes, o.restored))
}

/// The characterization sweep on this board (`hetlabd characterize`). Returns (the rows as
/// numpy columns, runs done, the settings restored, the signal that stopped it or None).
#[pyfunction]
#[pyo3(signature = (
    platform, *, patterns, sizes, reps, run_s, seed, active_opp,
    period_us=None, freqs_khz=None, chase_cpus=None, pmu=None, sysfs_root=None, procfs_root=None,
    allow_missing_counters=false, cluster_names=None
))]
#[allow(clippy::too_many_arguments)]
pub fn characterize_board(
    py: Python<'_>,
    platform: &Bound<'_, PlatformHandle>,
    patterns: Vec<String>,
    sizes: Vec<usize>,
    reps: u32,
    run_s: f64,
    seed: u64,
    active_opp: &str,
    period_us: Option<u64>,
    freqs_khz: Option<Vec<(String, Vec<u32>)>>,
    chase_cpus: Option<Vec<(String, usize)>>,
    pmu: Option<&str>,
    sysfs_root: Option<PathBuf>,
    procfs_root: Option<PathBuf>,
    allow_missing_counters: bool,
    cluster_names: Option<Vec<String>>,
) -> PyResult<(PyObject, u64, Vec<String>, Option<String>)> {
    let handle = platform.get();
    let mut cfg = SweepConfig::new(handle.platform.clone(), handle.sha256());
    cfg.sweep =
        SweepOptions { patterns, sizes, reps, run_s, seed, active_opp: ActiveOpp::parse(active_opp).map_err(err)? };
    cfg.roots = roots(sysfs_root, procfs_root);
    cfg.pmu = self::pmu(pmu)?;
    cfg.period_us = period_us;
    cfg.only_khz = freqs_khz.unwrap_or_default();
    cfg.chase_cpus = chase_cpus.unwrap_or_default();
    cfg.allow_missing_counters = allow_missing_counters;
    cfg.cluster_names = cluster_names;
    let clusters: Vec<String> = cfg.platform.clusters.iter().map(|c| c.name.clone()).collect();
    let mut rows = Dataset::new(&clusters, "linux");
    let summary = py
        .allow_threads(|| {
            let mut stop = SignalStop::new()?;
            let mut on_rows = |run: &Dataset| {
                rows.append(run.clone());
                Ok(())
            };
            characterize(&cfg, &mut stop, &mut on_rows, &mut std::io::stderr())
        })
        .map_err(err)?;
    Ok((crate::sweep::columns(py, rows)?, summary.runs, summary.restored, summary.stopped_by))
}

/// A platform TOML for the board whose sysfs and procfs are at the given roots (default `/sys`,
/// `/proc`), over the built-in `template` (`hetlab_linux::board_platform`).
#[pyfunction]
#[pyo3(signature = (template, *, sysfs_root=None, procfs_root=None))]
pub fn platform_from_board(
    template: &str,
    sysfs_root: Option<PathBuf>,
    procfs_root: Option<PathBuf>,
) -> PyResult<String> {
    let defaults = Roots::default();
    let roots = Roots::new(sysfs_root.unwrap_or(defaults.sysfs), procfs_root.unwrap_or(defaults.procfs));
    hetlab_linux::board_platform::from_board(&roots, template).map_err(err)
}

/// A platform skeleton from a device-tree source file (`hetlab_linux::dt_platform`): (the
/// TOML text, what the tree did not give, what the reader skipped).
#[pyfunction]
pub fn platform_from_dt(path: PathBuf) -> PyResult<(String, Vec<String>, Vec<String>)> {
    let s = hetlab_linux::dt_platform::from_dt(&path).map_err(err)?;
    Ok((s.toml, s.missing, s.notes))
}
