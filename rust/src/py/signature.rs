//! Bindings for the signature rule tables.

use crate::error::CoreError;
use crate::signature::{check_family, Family, FunctionShape};
use pyo3::prelude::*;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_signature, m)?)?;
    Ok(())
}

/// Checks a function shape (JSON text) against the contract its family selects; returns the contract name.
#[pyfunction]
fn check_signature(shape_json: &str, family: &str) -> PyResult<&'static str> {
    let family = Family::parse(family)
        .ok_or_else(|| CoreError::Protocol(format!("unknown signature family '{family}'")))?;
    let shape: FunctionShape = serde_json::from_str(shape_json)
        .map_err(|e| CoreError::Protocol(format!("function shape: {e}")))?;
    let contract = check_family(&shape, family).map_err(CoreError::from)?;
    Ok(contract.name())
}
