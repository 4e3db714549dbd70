//! Bindings for `crate::stats::{advantage, agreement}`: plain lists in, plain tuples and dicts out.

use crate::error::CoreError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `(groups, groups_changed, runs_changed, changed group indices)` between two scorings of the same runs.
#[pyfunction]
pub(super) fn advantage_sign_changes(
    py: Python<'_>,
    old: Vec<f64>,
    new: Vec<f64>,
    lengths: Vec<usize>,
) -> PyResult<(usize, usize, usize, Vec<usize>)> {
    let c = py
        .detach(|| crate::stats::advantage_sign_changes(&old, &new, &lengths))
        .map_err(CoreError::from)?;
    Ok((c.groups, c.groups_changed, c.runs_changed, c.changed))
}

/// `{count, mae, bias, spearman, kappa}` of judge scores against gold labels.
#[pyfunction]
pub(super) fn agreement<'py>(
    py: Python<'py>,
    judge: Vec<f64>,
    gold: Vec<f64>,
    threshold: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let a = py
        .detach(|| crate::stats::agreement(&judge, &gold, threshold))
        .map_err(CoreError::from)?;
    let d = PyDict::new(py);
    d.set_item("count", a.count)?;
    d.set_item("mae", a.mae)?;
    d.set_item("bias", a.bias)?;
    d.set_item("spearman", a.spearman)?;
    d.set_item("kappa", a.kappa)?;
    Ok(d)
}
