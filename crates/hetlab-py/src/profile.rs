//! `hetlab profile`'s Rust side: which caches to simulate for a platform, the workload fitted to
//! what the simulator counted (`hetlab_core::measured`), and the model's miss ratios of a
//! workload's phase (`model::cache::miss_ratios`) for checking a profile against its measurements.

use hetlab_core::measured::{self, Counts, Request, Run, Slicing};
use hetlab_core::workload::PhaseKind;
use pyo3::prelude::*;

use crate::platform::PlatformHandle;
use crate::{err, load_workload};

/// The simulator runs a profile of `platform` takes: ((L1I), (L1D), (LL)) as (bytes, ways, line bytes).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn profile_plan(platform: &Bound<'_, PlatformHandle>) -> PyResult<Vec<([u64; 3], [u64; 3], [u64; 3])>> {
    Ok(measured::plan(&platform.get().platform).map_err(err)?.into_iter().map(|g| (g.l1i, g.l1d, g.ll)).collect())
}

/// The workload TOML fitted to simulator runs: `runs` are (LL bytes, parts), each part the
/// counters Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw in program order; one of `slices` and
/// `slice_instructions`.
#[pyfunction]
#[pyo3(signature = (*, platform, name, description, provenance, runs, slices=None, slice_instructions=None))]
#[allow(clippy::too_many_arguments)]
pub fn profile_workload(
    platform: &Bound<'_, PlatformHandle>,
    name: &str,
    description: &str,
    provenance: Vec<String>,
    runs: Vec<(u64, Vec<[f64; 9]>)>,
    slices: Option<usize>,
    slice_instructions: Option<f64>,
) -> PyResult<String> {
    let p = &platform.get().platform;
    let slicing = match (slices, slice_instructions) {
        (Some(n), None) => Slicing::Count(n),
        (None, Some(n)) => Slicing::Instructions(n),
        _ => return Err(err("give one of slices and slice_instructions".into())),
    };
    let runs: Vec<Run> = runs
        .into_iter()
        .map(|(ll_bytes, parts)| Run {
            ll_bytes,
            parts: parts
                .into_iter()
                .map(|c| Counts {
                    ir: c[0],
                    dr: c[1],
                    dw: c[2],
                    i1mr: c[3],
                    d1mr: c[4],
                    d1mw: c[5],
                    ilmr: c[6],
                    dlmr: c[7],
                    dlmw: c[8],
                })
                .collect(),
        })
        .collect();
    let req = Request { name, description, provenance: &provenance, runs: &runs, slicing };
    measured::workload_toml(p, &req).map_err(err)
}

/// The model's miss ratios per data reference (L1, L2 demand, L2 refills) of one work phase of a
/// workload on the core type of `cluster` of `platform` (None: the default platform), with `l2_bytes` of L2.
#[pyfunction]
#[pyo3(signature = (workload, *, origin="", text=None, platform=None, cluster=0, l2_bytes, task=0, phase=0))]
#[allow(clippy::too_many_arguments)]
pub fn phase_miss_ratios(
    workload: &str,
    origin: &str,
    text: Option<&str>,
    platform: Option<&Bound<'_, PlatformHandle>>,
    cluster: usize,
    l2_bytes: f64,
    task: usize,
    phase: usize,
) -> PyResult<(f64, f64, f64)> {
    let w = load_workload(workload, origin, text)?;
    let p = PlatformHandle::or_default(platform)?;
    if cluster >= p.clusters.len() {
        return Err(err(format!("platform '{}' has no cluster {cluster}", p.name)));
    }
    let ph = w
        .tasks
        .get(task)
        .and_then(|t| t.phases.get(phase))
        .ok_or_else(|| err(format!("workload '{}' has no task {task} phase {phase}", w.name)))?;
    if !matches!(
        ph.kind,
        PhaseKind::Compute { .. } | PhaseKind::Periodic { .. } | PhaseKind::Parallel { .. } | PhaseKind::Frames { .. }
    ) {
        return Err(err(format!("task {task} phase {phase} of '{}' does no work", w.name)));
    }
    // against a cache simulator's counts: the program alone, no system share, no translation
    let alone = hetlab_core::platform::CacheSharing::PROGRAM_ALONE;
    let m = hetlab_core::model::cache::miss_ratios(&ph.mem, p.core_type_of(cluster), l2_bytes, &alone);
    Ok((m.l1, m.l2, m.l2_refills))
}
