//! The decision-tree evaluator the governor runs ([`DecisionTree::predict_counts`]), over many
//! samples at once: training's held-out accuracy and the tests' cross-checks use it, so there
//! is no second evaluator in Python.

use hetlab_core::tree::{AntiSnoopModel, INCREASE};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use crate::err;

/// Evaluates the tree managing `cluster` in a model (its JSON text, as the governor loads it).
/// `numerators[f]` and `denominators[f]` hold the counts of the tree's feature `f` (in the
/// tree's feature order), one per sample; a zero denominator reads as 0. Returns a bool array,
/// True where the tree says "increase_frequency".
#[pyfunction]
pub fn tree_predict<'py>(
    py: Python<'py>,
    model_json: &str,
    cluster: &str,
    numerators: Vec<PyReadonlyArray1<'py, u64>>,
    denominators: Vec<PyReadonlyArray1<'py, u64>>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let model = AntiSnoopModel::from_json(model_json).map_err(|e| err(format!("the model is {e}")))?;
    let tree = model
        .tree_for(cluster)
        .ok_or_else(|| err(format!("model {} has no tree for cluster '{cluster}'", model.name)))?;
    tree.validate().map_err(|e| err(format!("model {}: tree for {cluster}: {e}", model.name)))?;
    let features = tree.features.len();
    if numerators.len() != features || denominators.len() != features {
        return Err(err(format!(
            "the tree reads {features} features: give {features} numerator and denominator arrays, got {} and {}",
            numerators.len(),
            denominators.len()
        )));
    }
    let num: Vec<&[u64]> = numerators.iter().map(|a| a.as_slice()).collect::<Result<_, _>>()?;
    let den: Vec<&[u64]> = denominators.iter().map(|a| a.as_slice()).collect::<Result<_, _>>()?;
    let n = num.first().map_or(0, |a| a.len());
    if num.iter().chain(&den).any(|a| a.len() != n) {
        return Err(err("every numerator and denominator array needs one count per sample".into()));
    }
    let mut counts = vec![(0, 0); features];
    let increase: Vec<bool> = (0..n)
        .map(|i| {
            for (f, c) in counts.iter_mut().enumerate() {
                *c = (num[f][i], den[f][i]);
            }
            tree.predict_counts(&counts) == INCREASE
        })
        .collect();
    Ok(increase.into_pyarray_bound(py))
}

/// A built-in model as the JSON `hetlab train` writes (today one: `lctes2020-fig4`, the seed
/// paper's Figure 4 trees), so `hetlab show-model` and the exporters read it like a trained one.
#[pyfunction]
pub fn builtin_model_json(name: &str) -> PyResult<String> {
    let model = AntiSnoopModel::lctes2020_fig4();
    if name != model.name {
        return Err(err(format!("no built-in model '{name}': the built-in one is {}", model.name)));
    }
    serde_json::to_string_pretty(&model).map_err(|e| err(e.to_string()))
}

/// Checks a model's JSON text as the governor would load it: every tree's shape (no cycles,
/// depth at most `MAX_TREE_DEPTH`, finite thresholds, fixed-point shift in range). Raises
/// ValueError naming the first problem.
#[pyfunction]
pub fn check_model(model_json: &str) -> PyResult<()> {
    let model = AntiSnoopModel::from_json(model_json).map_err(|e| err(format!("the model is {e}")))?;
    for (cluster, tree) in &model.trees {
        tree.validate().map_err(|e| err(format!("tree for {cluster}: {e}")))?;
    }
    Ok(())
}

/// The model as the kernel module reads it (`hetlab export-model --kernel`; layout in
/// hetlab-core's `tree_blob`): raises ValueError naming what the module cannot take.
#[pyfunction]
pub fn kernel_model_blob<'py>(py: Python<'py>, model_json: &str) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let model = AntiSnoopModel::from_json(model_json).map_err(|e| err(format!("the model is {e}")))?;
    let blob = hetlab_core::tree_blob::kernel_blob(&model).map_err(err)?;
    Ok(pyo3::types::PyBytes::new_bound(py, &blob))
}
