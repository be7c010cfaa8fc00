//! A platform's Energy Model as the kernel would build it ([`EnergyModel::of`]): its explicit
//! table where the platform file gives one, else the derivation from the OPPs. For
//! `hetlab platform export-em` and the tests that re-import it.

use hetlab_core::sched::energy_model::EnergyModel;
use pyo3::prelude::*;

use crate::err;
use crate::platform::PlatformHandle;

/// `platform`'s EM as JSON: one domain per cluster (`cluster` name, `cpus`, `capacity`) with its
/// `states` (`frequency_khz`, `performance`, `power_mw`, `cost`), ascending.
#[pyfunction]
pub fn energy_model(platform: &Bound<'_, PlatformHandle>) -> PyResult<String> {
    let platform = &platform.get().platform;
    let em = EnergyModel::of(platform).map_err(err)?;
    let domains: Vec<serde_json::Value> = em
        .domains
        .iter()
        .map(|d| {
            let states: Vec<serde_json::Value> = d
                .states
                .iter()
                .map(|s| {
                    serde_json::json!({"frequency_khz": s.frequency_khz, "performance": s.performance,
                        "power_mw": s.power_mw, "cost": s.cost})
                })
                .collect();
            serde_json::json!({"cluster": platform.clusters[d.cluster].name, "cpus": d.cpus,
                "capacity": d.capacity, "states": states})
        })
        .collect();
    Ok(serde_json::json!({"platform": platform.name, "domains": domains}).to_string())
}

/// The energy model a tree laid out like `/sys/kernel/debug/energy_model` shows
/// (`hetlab_linux::em_debugfs`: every attribute read as sysfs is, bounded, never blocking):
/// `[{"cpus": [..], "ps": [{"frequency_khz", "power_mw"}], "units"}]` (units `milliWatts`, a
/// tree in µW read back as mW, or `bogoWatts`, as the kernel marks them), domains by first CPU, states
/// ascending. A ValueError names the file and the value it could not take.
#[pyfunction]
pub fn read_debugfs_energy_model(py: Python<'_>, root: std::path::PathBuf) -> PyResult<PyObject> {
    let domains = hetlab_linux::em_debugfs::read(&root).map_err(err)?;
    let out = pyo3::types::PyList::empty_bound(py);
    for d in domains {
        let states = pyo3::types::PyList::empty_bound(py);
        for s in d.ps {
            let st = pyo3::types::PyDict::new_bound(py);
            st.set_item("frequency_khz", s.frequency_khz)?;
            st.set_item("power_mw", s.power_mw)?;
            states.append(st)?;
        }
        let dom = pyo3::types::PyDict::new_bound(py);
        dom.set_item("cpus", d.cpus)?;
        dom.set_item("ps", states)?;
        let units = match d.units {
            hetlab_core::platform::EmUnits::MilliWatts => "milliWatts",
            hetlab_core::platform::EmUnits::BogoWatts => "bogoWatts",
        };
        dom.set_item("units", units)?;
        out.append(dom)?;
    }
    Ok(out.into_any().unbind())
}

/// A kernel CPU list ("0-3,6", "0 1 2") as CPU numbers (`hetlab_linux::cpus::parse_cpu_list`).
#[pyfunction]
pub fn parse_cpu_list(text: &str) -> PyResult<Vec<usize>> {
    hetlab_linux::cpus::parse_cpu_list(text).map_err(err)
}

/// CPU numbers as the kernel prints a CPU list (`%*pbl`: "0-3,6").
#[pyfunction]
pub fn format_cpu_list(mut cpus: Vec<usize>) -> String {
    cpus.sort_unstable();
    cpus.dedup();
    hetlab_linux::cpus::format_cpu_list(&cpus)
}
