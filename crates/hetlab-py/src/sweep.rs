//! The characterization sweep: its plan ([`hetlab_core::sweep::Plan`]) as a Python object that
//! runs the simulated chunks, and the dataset's columns as numpy arrays (text in dictionary form).

use std::collections::HashMap;
use std::sync::Arc;

use hetlab_core::platform::Platform;
use hetlab_core::sweep::dataset::{Dataset, Values};
use hetlab_core::sweep::{simulated, ActiveOpp, Plan, SweepOptions, FREQ_CLUSTERS, PATTERNS};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::err;
use crate::platform::PlatformHandle;

/// The sweep's defaults and vocabulary, for the Python API's signature.
pub fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = SweepOptions::default();
    let out = PyDict::new_bound(py);
    out.set_item("patterns", d.patterns)?;
    out.set_item("reps", d.reps)?;
    out.set_item("run_s", d.run_s)?;
    out.set_item("seed", d.seed)?;
    out.set_item("active_opp", d.active_opp.name())?;
    out.set_item("known_patterns", PATTERNS.to_vec())?;
    out.set_item("active_opps", ActiveOpp::NAMES.to_vec())?;
    out.set_item("freq_clusters", FREQ_CLUSTERS.to_vec())?;
    Ok(out)
}

/// The plan of a sweep on one platform: its chunks, and the simulated runs of each.
#[pyclass(frozen, module = "hetlab._core")]
pub struct SweepPlan {
    platform: Platform,
    plan: Plan,
}

#[pymethods]
impl SweepPlan {
    /// The plan on `platform`, whose text's SHA-256 each row records.
    #[new]
    #[pyo3(signature = (platform, *, patterns, sizes, reps, run_s, seed, active_opp))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        platform: &Bound<'_, PlatformHandle>,
        patterns: Vec<String>,
        sizes: Vec<usize>,
        reps: u32,
        run_s: f64,
        seed: u64,
        active_opp: &str,
    ) -> PyResult<SweepPlan> {
        let handle = platform.get();
        let options =
            SweepOptions { patterns, sizes, reps, run_s, seed, active_opp: ActiveOpp::parse(active_opp).map_err(err)? };
        let plan = Plan::every_opp(&handle.platform, &handle.sha256(), options).map_err(err)?;
        Ok(SweepPlan { platform: handle.platform.clone(), plan })
    }

    /// (active cluster, pattern, size in elements, runs) per chunk, in sweep order.
    #[getter]
    fn chunks(&self) -> Vec<(String, String, usize, u64)> {
        let p = &self.plan;
        p.chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (p.clusters[c.active].clone(), c.pattern.clone(), c.size_elements, p.chunk_runs(i)))
            .collect()
    }

    /// Array sizes swept, elements (the default ones filled in).
    #[getter]
    fn sizes(&self) -> Vec<usize> {
        self.plan.options.sizes.clone()
    }

    /// Simulates every run of chunk `index` on `workers` threads (default: one per CPU) and
    /// returns its rows as numpy columns, in dataset order. `progress(n)` is called with the
    /// number of runs finished since its last call (0 included), at least every 50 ms; if it
    /// raises, the chunk stops and the error is raised here. Ctrl-C stops the chunk within a run's time
    /// and raises KeyboardInterrupt.
    #[pyo3(signature = (index, *, workers=None, progress=None))]
    fn run_chunk(
        &self,
        py: Python<'_>,
        index: usize,
        workers: Option<usize>,
        progress: Option<PyObject>,
    ) -> PyResult<PyObject> {
        if index >= self.plan.chunks.len() {
            return Err(err(format!("chunk {index} is not in the plan ({} chunks)", self.plan.chunks.len())));
        }
        let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let mut raised: Option<PyErr> = None;
        let rows = py.allow_threads(|| {
            let mut tick = |finished: usize| {
                Python::with_gil(|py| {
                    let called = py.check_signals().and_then(|()| match &progress {
                        Some(f) => f.call1(py, (finished,)).map(drop),
                        None => Ok(()),
                    });
                    called.map_err(|e| raised = Some(e)).is_ok()
                })
            };
            simulated::run_chunk(&self.platform, &self.plan, index, workers, &mut tick)
        });
        if let Some(e) = raised {
            return Err(e);
        }
        match rows.map_err(err)? {
            Some(rows) => columns(py, rows),
            None => Err(err("the chunk stopped".into())),
        }
    }
}

/// The dataset as a dict of numpy columns, in column order. A text column comes as its
/// dictionary form, a tuple (codes: int32 array, values: list of str): a sweep repeats a few
/// names over hundreds of thousands of rows, and Arrow decodes that form without a Python
/// string per row (`hetlab.characterize._table`).
pub fn columns(py: Python<'_>, rows: Dataset) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    for (name, values) in rows.into_columns() {
        let array: PyObject = match values {
            Values::Int(v) => v.into_pyarray_bound(py).into_any().unbind(),
            Values::Float(v) => v.into_pyarray_bound(py).into_any().unbind(),
            Values::Text(v) => {
                let mut index: HashMap<Arc<str>, i32> = HashMap::new();
                let mut names: Vec<Arc<str>> = Vec::new();
                // rows of a run share one Arc (`Dataset::push_run`): a pointer check skips the hash
                let mut last: Option<(&Arc<str>, i32)> = None;
                let codes: Vec<i32> = v
                    .iter()
                    .map(|s| match last {
                        Some((prev, code)) if Arc::ptr_eq(prev, s) => code,
                        _ => {
                            let code = *index.entry(s.clone()).or_insert_with(|| {
                                names.push(s.clone());
                                (names.len() - 1) as i32
                            });
                            last = Some((s, code));
                            code
                        }
                    })
                    .collect();
                let names: Vec<&str> = names.iter().map(|s| &**s).collect();
                (codes.into_pyarray_bound(py), names).into_py(py)
            }
        };
        out.set_item(name, array)?;
    }
    Ok(out.into_any().unbind())
}
