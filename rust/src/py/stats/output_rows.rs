//! `EvalOutputRows`: the `rows` of `osmosis eval`'s `-o` file laid out from its results log, in pieces
//! (see `crate::stats::output_rows`); `result_model_with_rows`: the result model with those rows laid out
//! in the same pass over the log (see `crate::stats::rows_spool`).

use super::results::{model_options, to_json};
use crate::error::CoreError;
use crate::py::errors::without_gil;
use crate::stats::output_rows::{OutputRows, Piece};
use crate::stats::rows_spool::{SpooledPieces, SpooledRows};
use crate::stats::Layout;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where the pieces come from.
enum Source {
    /// Read from the log as they are asked for.
    Log(OutputRows<BufReader<File>>),
    /// Laid out by the result model's pass.
    Spooled(SpooledPieces),
}

impl Source {
    fn next_piece(&mut self) -> io::Result<Piece> {
        match self {
            Source::Log(rows) => rows.next_piece(),
            Source::Spooled(pieces) => pieces.next_piece(),
        }
    }

    fn rows(&self) -> usize {
        match self {
            Source::Log(rows) => rows.rows(),
            Source::Spooled(pieces) => pieces.rows,
        }
    }
}

/// Iterates the text of the `rows` list of a results log's `-o` file: bytes of whole rows, each after its
/// separator; `None` (then nothing more) when a record cannot be written byte for byte as
/// `osmosis_ai.eval.summary.iter_rows` and `json_block` would, and the caller writes the file its own way.
/// `rows`: how many rows the pieces so far hold.
#[pyclass(module = "osmosis_ai._core")]
pub struct EvalOutputRows {
    path: PathBuf,
    rows: Mutex<Source>,
}

#[pymethods]
impl EvalOutputRows {
    #[new]
    #[pyo3(signature = (path, runs_per_row, with_tags))]
    fn new(path: PathBuf, runs_per_row: usize, with_tags: bool) -> PyResult<Self> {
        let file = File::open(&path).map_err(|e| CoreError::io(&path, e))?;
        let reader = BufReader::with_capacity(1 << 16, file);
        let rows = OutputRows::new(reader, runs_per_row, with_tags);
        Ok(EvalOutputRows {
            path,
            rows: Mutex::new(Source::Log(rows)),
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
            .rows()
    }
}

/// `result_model`'s JSON and, laid out in the same pass, the log's `-o` rows (`EvalOutputRows`); `None`
/// for the rows when the file is not a results log numbered from 0 or they could not be held (the caller
/// then reads them from the log).
#[pyfunction]
#[pyo3(signature = (path, runs_per_row, with_tags, pass_threshold=None, n_runs=None, failed=None, level=0.95))]
#[allow(clippy::too_many_arguments)]
pub(super) fn result_model_with_rows(
    py: Python<'_>,
    path: PathBuf,
    runs_per_row: usize,
    with_tags: bool,
    pass_threshold: Option<f64>,
    n_runs: Option<i64>,
    failed: Option<&str>,
    level: f64,
) -> PyResult<(String, Option<EvalOutputRows>)> {
    let options = model_options(pass_threshold, n_runs, failed, false)?;
    let name = path.display().to_string();
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut spooled = SpooledRows::new(dir, runs_per_row, with_tags);
    let (model, pieces) = without_gil(py, |interrupted| {
        let summary = crate::stats::summarize_results_file_with(
            &path,
            &options,
            interrupted,
            Some(&mut spooled),
        )?;
        let numbered_from_0 = summary.layout == Layout::Log && summary.meta.index_base == 0;
        let pieces = spooled.finish().filter(|_| numbered_from_0);
        Ok((crate::stats::model::build(summary, &name, level)?, pieces))
    })?;
    let json = to_json(&model)?;
    let rows = pieces.map(|pieces| EvalOutputRows {
        path,
        rows: Mutex::new(Source::Spooled(pieces)),
    });
    Ok((json, rows))
}
