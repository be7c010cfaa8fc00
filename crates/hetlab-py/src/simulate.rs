//! One simulation: typed keyword arguments in, the JSON summary, the time series as numpy
//! columns, the trace text (with its LISA platform info) and the threads' run intervals out. The defaults live in the Python API's signature
//! (`hetlab.simulate`), which always passes every argument.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use hetlab_core::engine::{simulate as run_simulation, CpuIdle, SimConfig};
use hetlab_core::kernel::boot::BootOptions;
use hetlab_core::kernel::perf_sampling::PerfSampling;
use hetlab_core::sched::switching::SwitchingMode;
use hetlab_core::sched::SchedPolicy;
use hetlab_core::trace::ftrace::{write_ftrace, TraceFormat};
use hetlab_core::trace::intervals::run_intervals;
use hetlab_core::trace::lisa::{write_lisa_plat_info, LisaEmDomain, LisaExtras};
use hetlab_core::trace::perfetto::write_perfetto;

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::platform::PlatformHandle;
use crate::{err, load_model, load_workload};

/// The trace format that is Perfetto's protobuf (`TRACE_FORMATS` lists it after the text ones).
pub(crate) const PERFETTO: &str = "perfetto";

/// What LISA's platform info takes from the model: rt-app's calibration per CPU and the kernel's
/// energy model (none where the kernel would refuse it).
fn lisa_extras(platform: &hetlab_core::platform::Platform) -> LisaExtras {
    let energy_model = hetlab_core::sched::energy_model::EnergyModel::of(platform)
        .map(|em| {
            em.domains
                .into_iter()
                .map(|d| LisaEmDomain {
                    cluster: d.cluster,
                    cpus: d.cpus,
                    capacity: d.capacity,
                    states: d.states.iter().map(|s| (s.frequency_khz, s.power_mw)).collect(),
                })
                .collect()
        })
        .unwrap_or_default();
    LisaExtras { rtapp_calib_ns: hetlab_core::rtapp::calibration::per_cpu(platform), energy_model }
}

/// How often a simulation running for Python looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// A Python callable told the simulated time reached (s), and where the engine publishes it.
struct Progress<'a> {
    callback: &'a PyObject,
    reached_us: &'a AtomicU64,
}

/// Runs `job` (a simulation that watches `stop`) off the GIL on a thread of its own, while this
/// thread checks Python's signals every [`SIGNAL_CHECK`]: Ctrl-C in the main thread sets
/// `stop`, and its KeyboardInterrupt is raised here once the job has left. With `progress`, its
/// callback hears the simulated time reached at the same pace (an exception it raises stops
/// the run like Ctrl-C).
fn stoppable<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    progress: Option<Progress<'_>>,
    job: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let mut raised = None;
    let out = py.allow_threads(|| {
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel();
            scope.spawn(move || tx.send(job()));
            loop {
                match rx.recv_timeout(SIGNAL_CHECK) {
                    Ok(out) => return Some(out),
                    Err(RecvTimeoutError::Timeout) if raised.is_none() => {
                        let checked = Python::with_gil(|py| {
                            py.check_signals()?;
                            if let Some(p) = &progress {
                                let reached_s = f64::from_bits(p.reached_us.load(Ordering::Relaxed)) * 1e-6;
                                p.callback.call1(py, (reached_s,))?;
                            }
                            Ok::<_, PyErr>(())
                        });
                        if let Err(e) = checked {
                            raised = Some(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    // the job panicked: the scope raises its panic on leaving
                    Err(RecvTimeoutError::Disconnected) => return None,
                }
            }
        })
    });
    match (raised, out) {
        (Some(e), _) => Err(e),
        (None, Some(out)) => Ok(out),
        (None, None) => Err(err("the simulation thread ended without a result".into())),
    }
}

/// What `simulate` returns: summary JSON, time series, trace text, LISA platform info, run
/// intervals, rt-app's per-thread logs (thread name, text).
type Simulated = (String, PyObject, Option<PyObject>, Option<String>, Option<PyObject>, Vec<(String, String)>);

/// Runs one simulation of `platform` (a parsed [`PlatformHandle`]). Returns (summary JSON, time
/// series as a dict of numpy columns (empty unless `series`: memory stays constant on long runs), trace
/// text (bytes for `perfetto`) or None, the platform as LISA's PlatformInfo YAML or None; both
/// only with `trace`, the trace format's name (`ftrace` or `trace-cmd`,
/// `hetlab_core::trace::ftrace::TraceFormat`, or `perfetto`, `hetlab_core::trace::perfetto`);
/// the run intervals as numpy columns `tid`, `cpu`, `start_s`, `end_s` or None, only with
/// `intervals`).
/// `model` is a model's JSON text (None: the paper's Figure 4 trees); `freq` pins clusters'
/// frequencies, kHz; `sched_tunables` are the placement policy's knobs (sysfs name, value);
/// `switching` is `gts`, `iks` or `cluster-switching` (`sched::switching`); `perf_cpus` (empty: off) and `perf_period` are `perf record -e instructions -C <cpus> -c
/// <period>` running beside the workload; `cpu_dma_latency_us` is the PM QoS cpu_dma_latency
/// request, µs (None: none); `dsu_khz` holds a DynamIQ platform's DSU clock at one of its OPPs
/// (None: its `[dsu]` governor); `resolve_tolerance` is `SimConfig::resolve_tolerance` (0:
/// exact); `kernel` are RCU's boot options
/// (`rcu_nocbs=0-1,rcu_fast_no_hz`, "" for none); `progress`, a callable, hears the simulated
/// time reached (s) every 50 ms of wall time; an unknown keyword is a TypeError.
#[pyfunction]
#[pyo3(signature = (
    platform, workload_spec, workload_origin, workload_text, *,
    seed, scheduler, sched_tunables, switching, governor, tunables, cluster, freq, offline, model, cpuidle,
    cpu_dma_latency_us, perf_cpus, perf_period, kernel, start_temp_c, trace, intervals, series, time_limit_s, progress=None,
    rtapp_logs=false, dsu_khz=None, resolve_tolerance=0.0
))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    platform: &Bound<'_, PlatformHandle>,
    workload_spec: &str,
    workload_origin: &str,
    workload_text: Option<&str>,
    seed: u64,
    scheduler: &str,
    sched_tunables: Vec<(String, f64)>,
    switching: &str,
    governor: &str,
    tunables: Vec<(String, f64)>,
    cluster: Option<&str>,
    freq: Vec<(String, u32)>,
    offline: Vec<String>,
    model: Option<&str>,
    cpuidle: &str,
    cpu_dma_latency_us: Option<u32>,
    perf_cpus: Vec<usize>,
    perf_period: u64,
    kernel: &str,
    start_temp_c: Vec<f64>,
    trace: Option<&str>,
    intervals: bool,
    series: bool,
    time_limit_s: f64,
    progress: Option<PyObject>,
    rtapp_logs: bool,
    dsu_khz: Option<u32>,
    resolve_tolerance: f64,
) -> PyResult<Simulated> {
    // "perfetto": the native protobuf trace; else a text layout
    let perfetto = trace == Some(PERFETTO);
    let trace = trace.filter(|_| !perfetto).map(TraceFormat::parse).transpose().map_err(err)?;
    let traced = trace.is_some() || perfetto;
    let platform = &platform.get().platform;
    let workload = load_workload(workload_spec, workload_origin, workload_text)?;
    let cluster_of = |name: &str| {
        platform.cluster_index(name).ok_or_else(|| {
            err(format!(
                "unknown cluster '{name}'; {} has: {}",
                platform.name,
                platform.clusters.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    };
    let cluster = cluster.map(cluster_of).transpose()?;
    let fixed = freq.iter().map(|(name, khz)| Ok((cluster_of(name)?, *khz))).collect::<PyResult<Vec<_>>>()?;
    let offline = offline.iter().map(|name| cluster_of(name)).collect::<PyResult<Vec<_>>>()?;
    let model = model.map(|json| load_model(json, platform)).transpose()?;
    let stop = Arc::new(AtomicBool::new(false));
    let reached_us = Arc::new(AtomicU64::new(0f64.to_bits()));
    let config = SimConfig {
        seed,
        scheduler: SchedPolicy::parse(scheduler).map_err(err)?,
        sched_tunables,
        switching: SwitchingMode::parse(switching).map_err(err)?,
        governors: SimConfig::governor_plan(platform, governor, &tunables, cluster, &fixed).map_err(err)?,
        model,
        offline_clusters: offline,
        cluster,
        cpuidle: CpuIdle::parse(cpuidle).map_err(err)?,
        cpu_dma_latency_us,
        dsu_khz,
        resolve_tolerance,
        kernel_threads: Vec::new(),
        perf_sampling: (!perf_cpus.is_empty())
            .then_some(PerfSampling { cpus: perf_cpus, period_instructions: perf_period }),
        kernel: BootOptions::parse(kernel, platform.ncpus()).map_err(err)?,
        start_temp_c,
        trace: traced || intervals, // the intervals are read from the sched_switch events
        rtapp_logs,
        series,
        time_limit_s,
        stop: Some(stop.clone()),
        progress_us: progress.is_some().then(|| reached_us.clone()),
        max_events_without_progress: hetlab_core::engine::MAX_EVENTS_WITHOUT_PROGRESS,
    };

    let progress = progress.as_ref().map(|callback| Progress { callback, reached_us: &reached_us });
    let result = stoppable(py, &stop, progress, || run_simulation(platform, &workload, config))?.map_err(err)?;
    let summary = serde_json::to_string(&result).map_err(|e| err(e.to_string()))?;
    // The time series as numpy columns, only when asked: an empty dict otherwise, so that a
    // run without one never loads numpy (~50 ms of a short command's start).
    let series = if series { series_columns(py, platform, &result.series)? } else { PyDict::new_bound(py) };
    let trace_out = if perfetto {
        let bytes = write_perfetto(&result.trace, &result.trace_threads, platform.ncpus(), &result.workload);
        Some(PyBytes::new_bound(py, &bytes).into_any().unbind())
    } else {
        trace.map(|format| {
            let mut out = String::new();
            write_ftrace(&result.trace, &result.trace_threads, platform.ncpus(), format, &mut out);
            out.into_py(py)
        })
    };
    let plat_info_text = traced.then(|| {
        let mut out = String::new();
        write_lisa_plat_info(platform, &lisa_extras(platform), &mut out);
        out
    });
    let intervals = if intervals {
        let rows = run_intervals(&result.trace, result.time_s * 1e6);
        let columns = PyDict::new_bound(py);
        columns.set_item("tid", column(py, rows.iter().map(|r| r.tid).collect()))?;
        columns.set_item("cpu", column(py, rows.iter().map(|r| r.cpu as u32).collect()))?;
        columns.set_item("start_s", column(py, rows.iter().map(|r| r.start_us * 1e-6).collect()))?;
        columns.set_item("end_s", column(py, rows.iter().map(|r| r.end_us * 1e-6).collect()))?;
        Some(columns.into_any().unbind())
    } else {
        None
    };
    let logs = result.rtapp_logs.iter().map(|log| (log.thread.clone(), log.text())).collect();
    Ok((summary, series.into_any().unbind(), trace_out, plat_info_text, intervals, logs))
}

/// A numpy column from a vector (moved, not copied element by element).
fn column<T: numpy::Element>(py: Python<'_>, v: Vec<T>) -> PyObject {
    v.into_pyarray_bound(py).into_any().unbind()
}

/// The time series as numpy arrays, one per column: long runs have tens of thousands of samples.
fn series_columns<'py>(
    py: Python<'py>,
    platform: &hetlab_core::platform::Platform,
    rows: &[hetlab_core::result::SampleRow],
) -> PyResult<Bound<'py, PyDict>> {
    let series = PyDict::new_bound(py);
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
    Ok(series)
}
