//! Bindings for the ATIF check. Each outcome crosses as a tuple `(status, a, b, c)`:
//! `("valid", rollout_id, row_index, run_index)`, `("invalid", field, message, None)` or
//! `("unreadable", io_kind, message, None)`; `osmosis_ai.atif` turns them into typed results.

use crate::atif::{check_bytes, check_file, AtifError, FileCheck, Summary};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3::IntoPyObjectExt;
use std::path::Path;

/// Files checked per GIL release (Ctrl+C is noticed between chunks).
const CHUNK: usize = 256;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_atif, m)?)?;
    m.add_function(wrap_pyfunction!(check_atif_files, m)?)?;
    m.add("ATIF_VERSION", crate::atif::WRITTEN_VERSION)?;
    Ok(())
}

fn io_kind(kind: std::io::ErrorKind) -> &'static str {
    match kind {
        std::io::ErrorKind::NotFound => "not_found",
        std::io::ErrorKind::PermissionDenied => "permission_denied",
        std::io::ErrorKind::IsADirectory => "is_a_directory",
        _ => "other",
    }
}

fn valid<'py>(py: Python<'py>, summary: Summary) -> PyResult<Bound<'py, PyTuple>> {
    let items = [
        "valid".into_bound_py_any(py)?,
        summary.rollout_id.into_bound_py_any(py)?,
        summary.row_index.into_bound_py_any(py)?,
        summary.run_index.into_bound_py_any(py)?,
    ];
    PyTuple::new(py, items)
}

fn invalid<'py>(py: Python<'py>, error: AtifError) -> PyResult<Bound<'py, PyTuple>> {
    let items = [
        "invalid".into_bound_py_any(py)?,
        error.field.into_bound_py_any(py)?,
        error.message.into_bound_py_any(py)?,
        py.None().into_bound(py),
    ];
    PyTuple::new(py, items)
}

fn file_outcome<'py>(py: Python<'py>, outcome: FileCheck) -> PyResult<Bound<'py, PyTuple>> {
    match outcome {
        FileCheck::Valid(summary) => valid(py, summary),
        FileCheck::Invalid(error) => invalid(py, error),
        FileCheck::Unreadable { kind, message } => {
            let items = [
                "unreadable".into_bound_py_any(py)?,
                io_kind(kind).into_bound_py_any(py)?,
                message.into_bound_py_any(py)?,
                py.None().into_bound(py),
            ];
            PyTuple::new(py, items)
        }
    }
}

/// Checks one ATIF document (JSON text as bytes) without holding the GIL.
#[pyfunction]
fn check_atif<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
    match py.detach(|| check_bytes(data)) {
        Ok(summary) => valid(py, summary),
        Err(error) => invalid(py, error),
    }
}

/// Reads and checks many ATIF files, in order, without holding the GIL.
#[pyfunction]
fn check_atif_files<'py>(py: Python<'py>, paths: Vec<String>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for chunk in paths.chunks(CHUNK) {
        let outcomes: Vec<FileCheck> =
            py.detach(|| chunk.iter().map(|p| check_file(Path::new(p))).collect());
        for outcome in outcomes {
            list.append(file_outcome(py, outcome)?)?;
        }
        py.check_signals()?;
    }
    Ok(list)
}
