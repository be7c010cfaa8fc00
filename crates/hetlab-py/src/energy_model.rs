//! A platform's Energy Model as the kernel would build it ([`EnergyModel::of`]): its explicit
//! table where the platform file gives one, else the derivation from the OPPs. For
//! `hetlab platform export-em` and the tests that re-import it.

use hetlab_core::model::energy_model::EnergyModel;
use pyo3::prelude::*;

use crate::{err, load_platform};

/// The EM as JSON: one domain per cluster (`cluster` name, `cpus`, `capacity`) with its
/// `states` (`frequency_khz`, `performance`, `power_mw`, `cost`), ascending.
#[pyfunction]
#[pyo3(signature = (name=None, origin="", text=None))]
pub fn energy_model(name: Option<&str>, origin: &str, text: Option<&str>) -> PyResult<String> {
    let platform = load_platform(name, origin, text)?;
    let em = EnergyModel::of(&platform).map_err(err)?;
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
