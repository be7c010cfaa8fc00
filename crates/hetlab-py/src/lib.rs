//! PyO3 bindings: the thin edge between the Rust crates (hetlab-core, hetlab-linux) and the
//! Python package `hetlab`. Typed arguments cross it, never argv strings or option dicts: an
//! unknown keyword is a TypeError. Input files are read through [`read_input`] (hetlab-linux's
//! bounded reader); their text comes here with the file name, so parse errors name it.
//!
//! By topic: [`platform`] (a platform parsed once, the handle the other functions take),
//! [`simulate`] (one run), [`sweep`] (the characterization plan and its simulated chunks),
//! [`board`] (chase, govern and the board sweep), [`tree`] (the governor's tree evaluator),
//! [`energy_model`] (a platform's Energy Model, debugfs's in), [`profile`] (`hetlab profile`'s
//! cache geometry and fit); the catalogue (platforms, workloads, governors, schedulers) is here.

// pyo3 0.22's #[pyfunction] expansion converts PyErr into PyErr (a known false positive).
#![allow(clippy::useless_conversion)]

use hetlab_core::governor::registry;
use hetlab_core::platform::{Platform, BUILTIN_PLATFORMS};
use hetlab_core::tree::AntiSnoopModel;
use hetlab_core::workload::{Workload, BUILTIN_WORKLOADS};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod board;
mod energy_model;
mod platform;
mod profile;
mod simulate;
mod sweep;
mod tree;

/// Where the last panic in hetlab's Rust code happened (`file:line`), kept by [`quiet_panics`]
/// for the CLI's one-line report.
static LAST_PANIC_AT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Rust's default panic hook prints "thread '...' panicked at ..." and a backtrace note to
/// stderr before pyo3 raises `PanicException`: two lines before the CLI's one-line error. This
/// hook keeps the location, which the CLI adds to that line (`last_panic_at`), and prints Rust's
/// own report only with `RUST_BACKTRACE` set, for whoever debugs the panic.
fn quiet_panics() {
    let rust_report = std::panic::take_hook();
    let debugging = std::env::var_os("RUST_BACKTRACE").is_some();
    std::panic::set_hook(Box::new(move |info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        *LAST_PANIC_AT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = at;
        if debugging {
            rust_report(info);
        }
    }));
}

/// `file:line` of the last panic in hetlab's Rust code, if one happened.
#[pyfunction]
fn last_panic_at() -> Option<String> {
    LAST_PANIC_AT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
}

/// Panics with `message`: a real panic for the CLI's test of how one is reported.
#[pyfunction]
fn _panic_for_tests(message: &str) {
    panic!("{message}");
}

pub(crate) fn err(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}

/// An anti-snoop model from its JSON text, checked against `platform`.
pub(crate) fn load_model(json: &str, platform: &Platform) -> PyResult<AntiSnoopModel> {
    let m = AntiSnoopModel::from_json(json).map_err(|e| err(format!("model file is {e}")))?;
    m.check_for(platform).map_err(err)?;
    Ok(m)
}

#[pyfunction]
fn builtin_platforms() -> Vec<String> {
    BUILTIN_PLATFORMS.iter().map(|(n, _)| n.to_string()).collect()
}

/// The TOML text of a built-in platform (for provenance hashes).
#[pyfunction]
fn builtin_platform_text(name: &str) -> PyResult<String> {
    BUILTIN_PLATFORMS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| err(format!("unknown platform '{name}'")))
}

/// A built-in workload's TOML text (an experiment varies a parameter of it).
#[pyfunction]
fn builtin_workload_text(name: &str) -> PyResult<String> {
    BUILTIN_WORKLOADS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| err(format!("unknown workload '{name}'")))
}

#[pyfunction]
fn builtin_workloads() -> Vec<String> {
    BUILTIN_WORKLOADS.iter().map(|(n, _)| n.to_string()).collect()
}

/// Governors with their tunables, as JSON. Of what is listed here only the ranges (left out)
/// depend on the platform's tick, so the default platform's listing serves every platform.
#[pyfunction]
fn governors() -> PyResult<String> {
    let tick_us = Platform::builtin(hetlab_core::platform::DEFAULT_PLATFORM).map_err(err)?.tick_us();
    let list: Vec<serde_json::Value> = registry::list(tick_us)
        .into_iter()
        .map(|g| {
            serde_json::json!({
                "name": g.name, "summary": g.summary,
                "tunables": g.tunables.iter().map(|t| serde_json::json!({
                    "name": t.name, "default": t.default, "unit": t.unit, "help": t.help,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(serde_json::Value::Array(list).to_string())
}

/// Placement policies with their tunables, as JSON (the shape of `governors`).
#[pyfunction]
fn schedulers() -> String {
    let list: Vec<serde_json::Value> = hetlab_core::sched::registry::list()
        .into_iter()
        .map(|s| {
            serde_json::json!({
                "name": s.name, "summary": s.summary,
                "tunables": s.tunables.iter().map(|t| serde_json::json!({
                    "name": t.name, "default": t.default, "unit": t.unit, "help": t.help,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The big.LITTLE switching modes (name, summary), as JSON.
#[pyfunction]
fn switching_modes() -> String {
    let list: Vec<serde_json::Value> = hetlab_core::sched::switching::SwitchingMode::ALL
        .iter()
        .map(|&m| serde_json::json!({"name": m.name(), "summary": m.summary()}))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Checks a workload spec or file and returns its name and thread count.
#[pyfunction]
#[pyo3(signature = (spec, origin="", text=None))]
fn workload_summary(spec: &str, origin: &str, text: Option<&str>) -> PyResult<(String, usize)> {
    let w = load_workload(spec, origin, text)?;
    Ok((w.name.clone(), w.nthreads()))
}

pub(crate) fn load_workload(spec: &str, origin: &str, text: Option<&str>) -> PyResult<Workload> {
    match text {
        // rt-app's JSON (`hetlab_core::rtapp`), else hetlab's TOML
        Some(text) if origin.ends_with(".json") => hetlab_core::rtapp::from_rtapp_json(origin, text).map_err(err),
        Some(text) => Workload::from_toml(origin, text).map_err(err),
        None => Workload::from_spec(spec).map_err(err),
    }
}

/// What rt-app would read past in an rt-app file (`hetlab_core::rtapp::read_rtapp_json`): its
/// warnings, one line each, and its logs' file name prefix (`global.log_basename`; None when
/// rt-app writes no logs).
#[pyfunction]
fn rtapp_file_notes(origin: &str, text: &str) -> PyResult<(Vec<String>, Option<String>)> {
    let file = hetlab_core::rtapp::read_rtapp_json(origin, text).map_err(err)?;
    Ok((file.warnings, file.log_basename))
}

/// The text of an input file (a platform, workload or rt-app file, a model, a report) read as
/// `hetlab_linux::infile` reads: a regular file (a FIFO or a device is refused at once, never
/// waited on nor read without end), at most `INPUT_MAX_BYTES`, UTF-8. A ValueError gives the
/// reason; the caller names the file and what it is for.
#[pyfunction]
fn read_input(path: std::path::PathBuf) -> PyResult<String> {
    use hetlab_linux::infile::{read_bounded, ReadError, INPUT_MAX_BYTES};
    read_bounded(&path, INPUT_MAX_BYTES, true).map_err(|e| match e {
        // the OS's words, as Python's strerror gives them (no "(os error 2)")
        ReadError::Io(io) => {
            let text = io.to_string();
            err(text.split(" (os error").next().unwrap_or(&text).to_string())
        }
        refused => err(refused.reason()),
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    quiet_panics();
    m.add_function(wrap_pyfunction!(last_panic_at, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("PAPER_CCBENCH_SIZES", hetlab_core::sweep::PAPER_SIZES.to_vec())?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(tree::tree_predict, m)?)?;
    m.add_function(wrap_pyfunction!(tree::builtin_model_json, m)?)?;
    m.add_function(wrap_pyfunction!(tree::check_model, m)?)?;
    m.add_function(wrap_pyfunction!(tree::kernel_model_blob, m)?)?;
    m.add_function(wrap_pyfunction!(read_input, m)?)?;
    m.add_function(wrap_pyfunction!(rtapp_file_notes, m)?)?;
    m.add_function(wrap_pyfunction!(board::board_command, m)?)?;
    m.add_function(wrap_pyfunction!(board::board_value, m)?)?;
    m.add_function(wrap_pyfunction!(board::chase, m)?)?;
    m.add_function(wrap_pyfunction!(board::pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(board::govern, m)?)?;
    m.add_function(wrap_pyfunction!(board::characterize_board, m)?)?;
    m.add_function(wrap_pyfunction!(board::platform_from_board, m)?)?;
    m.add_function(wrap_pyfunction!(board::platform_from_dt, m)?)?;
    m.add_function(wrap_pyfunction!(governors, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(switching_modes, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_platforms, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_platform_text, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_workload_text, m)?)?;
    m.add_function(wrap_pyfunction!(energy_model::energy_model, m)?)?;
    m.add_function(wrap_pyfunction!(energy_model::read_debugfs_energy_model, m)?)?;
    m.add_function(wrap_pyfunction!(energy_model::parse_cpu_list, m)?)?;
    m.add_function(wrap_pyfunction!(energy_model::format_cpu_list, m)?)?;
    m.add_function(wrap_pyfunction!(workload_summary, m)?)?;
    m.add_function(wrap_pyfunction!(profile::profile_plan, m)?)?;
    m.add_function(wrap_pyfunction!(profile::profile_workload, m)?)?;
    m.add_function(wrap_pyfunction!(profile::phase_miss_ratios, m)?)?;
    m.add_class::<platform::PlatformHandle>()?;
    m.add_class::<sweep::SweepPlan>()?;
    m.add("SWEEP_DEFAULTS", sweep::defaults(m.py())?)?;
    m.add("DEFAULT_PLATFORM", hetlab_core::platform::DEFAULT_PLATFORM)?;
    m.add("MAX_FIXED_POINT_SHIFT", hetlab_core::tree::MAX_FIXED_POINT_SHIFT)?;
    m.add("MAX_TREE_DEPTH", hetlab_core::tree::MAX_TREE_DEPTH)?;
    m.add("DEFAULT_FIXED_POINT_SHIFT", hetlab_core::tree::DEFAULT_FIXED_POINT_SHIFT)?;
    m.add("TREE_FEATURES", hetlab_core::tree::FEATURES.to_vec())?;
    m.add("TREE_CLASSES", hetlab_core::tree::CLASSES.to_vec())?;
    m.add("MAX_THREADS", hetlab_core::workload::MAX_THREADS)?;
    m.add("MAX_CPUS", hetlab_core::platform::MAX_CPUS)?;
    m.add("MAX_INSTRUCTIONS", hetlab_core::workload::MAX_INSTRUCTIONS)?;
    m.add("MAX_PHASE_US", hetlab_core::workload::MAX_PHASE_US)?;
    m.add("MAX_WORKING_SET_BYTES", hetlab_core::workload::MAX_WORKING_SET_BYTES)?;
    m.add("CCBENCH_MAX_ELEMENTS", hetlab_core::workload::CCBENCH_MAX_ELEMENTS)?;
    m.add("MAX_TIME_LIMIT_S", hetlab_core::engine::MAX_TIME_LIMIT_S)?;
    m.add("MAX_RESOLVE_TOLERANCE", hetlab_core::engine::MAX_RESOLVE_TOLERANCE)?;
    m.add("MAX_CPU_DMA_LATENCY_US", hetlab_core::engine::MAX_CPU_DMA_LATENCY_US)?;
    let mut formats = hetlab_core::trace::ftrace::TraceFormat::NAMES.to_vec();
    formats.push(simulate::PERFETTO);
    m.add("TRACE_FORMATS", formats)?;
    Ok(())
}
