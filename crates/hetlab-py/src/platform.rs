//! A platform parsed once: the `Platform` handle Python holds (`hetlab.api.load_platform` makes
//! it from a name or a file at the API's edge) and passes to the binding functions (simulate, the
//! energy model, profile, govern, the sweeps), which take the parsed description instead of a
//! name or a file's text to parse again.

use hetlab_core::platform::{Platform, BUILTIN_PLATFORMS};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::err;

/// A parsed platform with the TOML text it came from (a built-in's or a file's).
#[pyclass(frozen, module = "hetlab._core", name = "Platform")]
pub struct PlatformHandle {
    pub(crate) platform: Platform,
    /// The built-in name it was loaded by; None for a file's text.
    builtin: Option<String>,
    /// Where the text came from (a file's path; "" for a built-in), as parse errors name it.
    origin: String,
    text: String,
}

impl PlatformHandle {
    /// The parsed platform of an optional handle: None is the default platform (the board
    /// functions' default, as hetlabd's).
    pub(crate) fn or_default(handle: Option<&Bound<'_, PlatformHandle>>) -> PyResult<Platform> {
        match handle {
            Some(h) => Ok(h.get().platform.clone()),
            None => Platform::builtin(hetlab_core::platform::DEFAULT_PLATFORM).map_err(err),
        }
    }
}

#[pymethods]
impl PlatformHandle {
    /// A built-in platform by `name`, or the TOML `text` of a platform file read from `origin`.
    #[new]
    #[pyo3(signature = (name=None, origin="", text=None))]
    fn new(name: Option<&str>, origin: &str, text: Option<&str>) -> PyResult<Self> {
        match (name, text) {
            (_, Some(text)) => Ok(PlatformHandle {
                platform: Platform::from_toml(origin, text).map_err(err)?,
                builtin: None,
                origin: origin.to_string(),
                text: text.to_string(),
            }),
            (Some(name), None) => {
                let platform = Platform::builtin(name).map_err(err)?;
                let text = BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == name).map_or("", |(_, t)| *t);
                Ok(PlatformHandle {
                    platform,
                    builtin: Some(name.to_string()),
                    origin: String::new(),
                    text: text.into(),
                })
            }
            (None, None) => Err(err("no platform given".into())),
        }
    }

    /// The platform's own name (its file's `name`).
    #[getter]
    fn name(&self) -> &str {
        &self.platform.name
    }

    /// The TOML text it was parsed from.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    /// The SHA-256 of that text, as hex (the dataset's `platform_sha256`, the reproductions'
    /// provenance).
    #[getter]
    pub(crate) fn sha256(&self) -> String {
        hetlab_linux::sha256::hex(self.text.as_bytes())
    }

    /// The cache line of the platform's core types, bytes (what a count of lines moved, DRAM's
    /// or between cores, is in); a ValueError when the core types' lines differ.
    #[getter]
    fn line_bytes(&self) -> PyResult<u64> {
        let types = &self.platform.core_types;
        let first = types.first().map_or(0, |t| t.line_bytes);
        if types.iter().any(|t| t.line_bytes != first) {
            let each: Vec<String> = types.iter().map(|t| format!("{} {} B", t.name, t.line_bytes)).collect();
            return Err(err(format!(
                "the core types of platform {} have different cache lines ({}): no one line size",
                self.platform.name,
                each.join(", ")
            )));
        }
        Ok(first)
    }

    /// The platform as JSON: name, description and per cluster its core type, CPUs, CCI port,
    /// caches, OPPs, capacity and the model's snoop and line-transfer latencies.
    fn summary(&self) -> String {
        let p = &self.platform;
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
                    "snoop_response_cycles": hetlab_core::model::cci::snoop_response_cycles(p, i),
                    // a line moved into a core of this cluster from a core of each cluster, both at
                    // their top OPPs (what hetlabd pingpong measures on the board)
                    "line_transfer_ns_from": (0..p.clusters.len())
                        .map(|o| hetlab_core::model::coherence::platform_transfer_ns(p, o, i))
                        .collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({"name": p.name, "description": p.description, "clusters": clusters}).to_string()
    }

    fn __repr__(&self) -> String {
        match &self.builtin {
            Some(name) => format!("Platform('{name}')"),
            None => format!("Platform(origin='{}')", self.origin),
        }
    }

    /// Pickled as its source (an executor's worker parses it again).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let me = slf.get();
        let args = match &me.builtin {
            Some(name) => (Some(name.as_str()), "", None::<&str>).into_py(py),
            None => (None::<&str>, me.origin.as_str(), Some(me.text.as_str())).into_py(py),
        };
        Ok(PyTuple::new_bound(py, [slf.get_type().into_any().unbind(), args]))
    }
}
