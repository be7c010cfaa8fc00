//! PyO3 bindings: the thin edge between the Rust model and the Python package `hetlab`.
//! Files are read by Python; their text comes here with the file name, so parse errors name it.

// pyo3 0.22's #[pyfunction] expansion converts PyErr into PyErr (a known false positive).
#![allow(clippy::useless_conversion)]

use hetlab_core::engine::{simulate as run_simulation, CpuIdle, SimConfig};
use hetlab_core::governor::registry;
use hetlab_core::platform::{Platform, BUILTIN_PLATFORMS};
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::write_ftrace;
use hetlab_core::tree::AntiSnoopModel;
use hetlab_core::workload::{Workload, BUILTIN_WORKLOADS};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod sweep;

pub(crate) fn err(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}

/// Parses a platform: a built-in name, or (origin, TOML text).
pub(crate) fn load_platform(name: Option<&str>, origin: &str, text: Option<&str>) -> PyResult<Platform> {
    match (name, text) {
        (_, Some(text)) => Platform::from_toml(origin, text).map_err(err),
        (Some(name), None) => Platform::builtin(name).map_err(err),
        (None, None) => Err(err("no platform given".into())),
    }
}

#[pyfunction]
#[pyo3(signature = (name=None, origin="", text=None))]
fn platform_summary(name: Option<&str>, origin: &str, text: Option<&str>) -> PyResult<String> {
    let p = load_platform(name, origin, text)?;
    let clusters: Vec<serde_json::Value> = p
        .clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            serde_json::json!({
                "name": c.name, "core_type": c.core_type, "cpus": c.cpus, "cci_port": c.cci_port,
                "l1d_bytes": p.core_type_of(i).l1d_bytes,
                "l2_bytes": c.l2_bytes, "opps_khz": c.freqs_khz(),
                "opps_uv": c.opps.iter().map(|o| o[1]).collect::<Vec<_>>(),
                "capacity": p.cpu_capacity(i),
                "snoop_response_cycles": p.snoop_response_cycles(i),
            })
        })
        .collect();
    Ok(serde_json::json!({"name": p.name, "description": p.description, "clusters": clusters}).to_string())
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

#[pyfunction]
fn builtin_workloads() -> Vec<String> {
    BUILTIN_WORKLOADS.iter().map(|(n, _)| n.to_string()).collect()
}

/// Governors with their tunables, as JSON.
#[pyfunction]
fn governors() -> String {
    let list: Vec<serde_json::Value> = registry::list()
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
    serde_json::Value::Array(list).to_string()
}

/// Checks a workload spec or file and returns its name and thread count.
#[pyfunction]
#[pyo3(signature = (spec, origin="", text=None))]
fn workload_summary(spec: &str, origin: &str, text: Option<&str>) -> PyResult<(String, usize)> {
    let w = load_workload(spec, origin, text)?;
    Ok((w.name.clone(), w.nthreads()))
}

fn load_workload(spec: &str, origin: &str, text: Option<&str>) -> PyResult<Workload> {
    match text {
        Some(text) => Workload::from_toml(origin, text).map_err(err),
        None => Workload::from_spec(spec).map_err(err),
    }
}

/// Runs one simulation. Returns (summary JSON, time series as a dict of columns, trace text
/// or None). `options` keys: seed, scheduler, governor, tunables [(name, value)], cluster,
/// freq [(cluster, kHz)], offline [cluster], model (JSON text or None), trace (bool),
/// time_limit_s.
#[pyfunction]
#[pyo3(signature = (platform_name, platform_origin, platform_text, workload_spec, workload_origin, workload_text, options))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    platform_name: Option<&str>,
    platform_origin: &str,
    platform_text: Option<&str>,
    workload_spec: &str,
    workload_origin: &str,
    workload_text: Option<&str>,
    options: &Bound<'_, PyDict>,
) -> PyResult<(String, PyObject, Option<String>)> {
    let platform = load_platform(platform_name, platform_origin, platform_text)?;
    let workload = load_workload(workload_spec, workload_origin, workload_text)?;
    let get = |k: &str| options.get_item(k).ok().flatten();
    let seed: u64 = get("seed").map(|v| v.extract()).transpose()?.unwrap_or(1);
    let scheduler =
        SchedPolicy::parse(&get("scheduler").map(|v| v.extract::<String>()).transpose()?.unwrap_or("pinned".into()))
            .map_err(err)?;
    let governor: String = get("governor").map(|v| v.extract()).transpose()?.unwrap_or("ondemand".into());
    let tunables: Vec<(String, f64)> = get("tunables").map(|v| v.extract()).transpose()?.unwrap_or_default();
    let cluster_of = |name: &str| {
        platform.cluster_index(name).ok_or_else(|| {
            err(format!(
                "unknown cluster '{name}'; {} has: {}",
                platform.name,
                platform.clusters.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    };
    let cluster = match get("cluster").map(|v| v.extract::<Option<String>>()).transpose()?.flatten() {
        Some(name) => Some(cluster_of(&name)?),
        None => None,
    };
    let mut fixed = Vec::new();
    for (name, khz) in get("freq").map(|v| v.extract::<Vec<(String, u32)>>()).transpose()?.unwrap_or_default() {
        fixed.push((cluster_of(&name)?, khz));
    }
    let mut offline = Vec::new();
    for name in get("offline").map(|v| v.extract::<Vec<String>>()).transpose()?.unwrap_or_default() {
        offline.push(cluster_of(&name)?);
    }
    let model = match get("model").map(|v| v.extract::<Option<String>>()).transpose()?.flatten() {
        None => None,
        Some(json) => {
            let m: AntiSnoopModel = serde_json::from_str(&json)
                .map_err(|e| err(format!("model file is not a hetlab model ({e}); train one with `hetlab train`")))?;
            m.check_for(&platform).map_err(err)?;
            Some(m)
        }
    };
    let cpuidle = CpuIdle::parse(&get("cpuidle").map(|v| v.extract::<String>()).transpose()?.unwrap_or("wfi".into()))
        .map_err(err)?;
    let trace: bool = get("trace").map(|v| v.extract()).transpose()?.unwrap_or(false);
    let time_limit_s: f64 = get("time_limit_s").map(|v| v.extract()).transpose()?.unwrap_or(3600.0);
    let governors = SimConfig::governor_plan(&platform, &governor, &tunables, cluster, &fixed).map_err(err)?;
    let config = SimConfig {
        seed,
        scheduler,
        governors,
        model,
        offline_clusters: offline,
        cluster,
        cpuidle,
        trace,
        time_limit_s,
    };

    let result = py.allow_threads(|| run_simulation(&platform, &workload, config)).map_err(err)?;
    let summary = serde_json::to_string(&result).map_err(|e| err(e.to_string()))?;
    // The time series as numpy arrays, one per column (moved, not copied element by element):
    // long runs have tens of thousands of samples.
    let series = PyDict::new_bound(py);
    let rows = &result.series;
    fn column<T: numpy::Element>(py: Python<'_>, v: Vec<T>) -> PyObject {
        v.into_pyarray_bound(py).into_any().unbind()
    }
    series.set_item("time_s", column(py, rows.iter().map(|r| r.time_s).collect()))?;
    series.set_item("cluster_index", column(py, rows.iter().map(|r| r.cluster as u32).collect()))?;
    series.set_item("freq_khz", column(py, rows.iter().map(|r| r.freq_khz).collect()))?;
    series.set_item("target_khz", column(py, rows.iter().map(|r| r.target_khz).collect()))?;
    series.set_item("load_pct", column(py, rows.iter().map(|r| r.load_pct).collect()))?;
    series.set_item("power_mw", column(py, rows.iter().map(|r| r.power_mw).collect()))?;
    series.set_item("temp_c", column(py, rows.iter().map(|r| r.temp_c).collect()))?;
    series.set_item("cci_congestion", column(py, rows.iter().map(|r| r.cci_congestion).collect()))?;
    series.set_item("memory_access", column(py, rows.iter().map(|r| r.memory_access).collect()))?;
    series.set_item("snoop_latency_ns", column(py, rows.iter().map(|r| r.snoop_latency_ns).collect()))?;
    series.set_item("period_s", column(py, rows.iter().map(|r| r.period_s).collect()))?;
    series.set_item("cci_cycles", column(py, rows.iter().map(|r| r.cci_cycles).collect()))?;
    // Raw counter deltas per cluster: `<counter>_<cluster>` columns.
    type Get = fn(&hetlab_core::counters::ClusterCounters) -> u64;
    let raw: [(&str, Get); 6] = [
        ("si_rrq_hs_any", |k| k.si_rrq_hs_any),
        ("si_rrq_stall_tt_full", |k| k.si_rrq_stall_tt_full),
        ("cpu_cycles", |k| k.cpu_cycles),
        ("inst_retired", |k| k.inst_retired),
        ("bus_access", |k| k.bus_access),
        ("l2d_cache_refill", |k| k.l2d_cache_refill),
    ];
    for (c, cluster_name) in platform.clusters.iter().map(|c| c.name.as_str()).enumerate() {
        for (counter, get) in raw {
            series.set_item(
                format!("{counter}_{cluster_name}"),
                column(py, rows.iter().map(|r| get(&r.counters[c])).collect()),
            )?;
        }
    }
    let trace_text = trace.then(|| {
        let mut out = String::new();
        write_ftrace(&result.trace, &result.trace_threads, platform.ncpus(), &mut out);
        out
    });
    Ok((summary, series.into_any().unbind(), trace_text))
}

/// Evaluates one tree of a model on counter ratios with the Rust evaluator the governor uses.
/// `counts[i]` holds one (numerator, denominator) pair per tree feature. Returns True where
/// the tree says "increase_frequency".
#[pyfunction]
fn tree_predict(model_json: &str, cluster: &str, counts: Vec<Vec<Vec<u64>>>) -> PyResult<Vec<bool>> {
    let model: AntiSnoopModel = serde_json::from_str(model_json).map_err(|e| err(format!("model: {e}")))?;
    let tree = model
        .tree_for(cluster)
        .ok_or_else(|| err(format!("model {} has no tree for cluster '{cluster}'", model.name)))?;
    tree.validate().map_err(|e| err(format!("model {}: tree for {cluster}: {e}", model.name)))?;
    counts
        .iter()
        .map(|c| {
            if c.len() != tree.features.len() || c.iter().any(|pair| pair.len() != 2) {
                return Err(err(format!("expected {} [numerator, denominator] pairs per vector", tree.features.len())));
            }
            let pairs: Vec<(u64, u64)> = c.iter().map(|p| (p[0], p[1])).collect();
            Ok(tree.predict_counts(&pairs) == hetlab_core::tree::INCREASE)
        })
        .collect()
}

/// Runs a hetlabd command line in this process (`hetlab chase`, `hetlab govern`,
/// `hetlab characterize --backend linux` use the board-side code of the static binary).
/// Returns the exit code; output goes to this process's stdout/stderr.
#[pyfunction]
fn hetlabd(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.allow_threads(|| hetlab_cli::run("hetlab", &argv))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(tree_predict, m)?)?;
    m.add_function(wrap_pyfunction!(hetlabd, m)?)?;
    m.add_function(wrap_pyfunction!(governors, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_platforms, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_platform_text, m)?)?;
    m.add_function(wrap_pyfunction!(platform_summary, m)?)?;
    m.add_function(wrap_pyfunction!(workload_summary, m)?)?;
    m.add_class::<sweep::SweepPlan>()?;
    m.add("SWEEP_DEFAULTS", sweep::defaults(m.py())?)?;
    m.add("DEFAULT_PLATFORM", hetlab_core::platform::DEFAULT_PLATFORM)?;
    Ok(())
}
