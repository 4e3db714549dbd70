//! Bindings of the rubric records' check (`osmosis_ai.rubric.records` is its one user).

use crate::error::CoreError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scan_chat_records, m)?)?;
    Ok(())
}

/// `(records, unsure)`: the non-blank lines of a chat JSONL file, and, packed as native 64-bit integers,
/// `(line, record index, byte offset)` of each line the core's check could not vouch for (Python reads
/// those). Reads without the GIL.
#[pyfunction]
fn scan_chat_records(py: Python<'_>, path: PathBuf) -> PyResult<(u64, Bound<'_, PyBytes>)> {
    let scan = py
        .detach(|| crate::rubric::scan_chat_records(&path))
        .map_err(|e| CoreError::io(&path, e))?;
    let packed: Vec<u8> = scan
        .unsure
        .iter()
        .flat_map(|&(line, index, offset)| [line, index, offset])
        .flat_map(u64::to_ne_bytes)
        .collect();
    Ok((scan.records, PyBytes::new(py, &packed)))
}
