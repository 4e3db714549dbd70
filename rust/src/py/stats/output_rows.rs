//! `EvalOutputRows`: the `rows` of `osmosis eval`'s `-o` file laid out from its results log, in pieces
//! (see `crate::stats::output_rows`).

use crate::error::CoreError;
use crate::stats::output_rows::{OutputRows, Piece};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Mutex;

/// Iterates the text of the `rows` list of a results log's `-o` file: bytes of whole rows, each after its
/// separator; `None` (then nothing more) when a record cannot be written byte for byte as
/// `osmosis_ai.eval.summary.iter_rows` and `json_block` would, and the caller writes the file its own way.
/// `rows`: how many rows the pieces so far hold.
#[pyclass(module = "osmosis_ai._core")]
pub struct EvalOutputRows {
    path: PathBuf,
    rows: Mutex<OutputRows<BufReader<File>>>,
}

#[pymethods]
impl EvalOutputRows {
    #[new]
    #[pyo3(signature = (path, runs_per_row, with_tags))]
    fn new(path: PathBuf, runs_per_row: usize, with_tags: bool) -> PyResult<Self> {
        let file = File::open(&path).map_err(|e| CoreError::io(&path, e))?;
        let reader = BufReader::with_capacity(1 << 16, file);
        Ok(EvalOutputRows {
            path,
            rows: Mutex::new(OutputRows::new(reader, runs_per_row, with_tags)),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Option<Bound<'py, PyBytes>>>> {
        // `&mut self` already excludes other callers; the lock only makes the class `Sync`.
        let rows = self
            .rows
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let piece = py
            .detach(|| rows.next_piece())
            .map_err(|e| CoreError::io(&self.path, e))?;
        Ok(match piece {
            Piece::Text(text) => Some(Some(PyBytes::new(py, &text))),
            Piece::Unrendered => Some(None),
            Piece::End => None,
        })
    }

    #[getter]
    fn rows(&mut self) -> usize {
        self.rows
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .rows
    }
}
