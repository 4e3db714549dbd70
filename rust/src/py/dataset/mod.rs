//! Bindings for the dataset readers: batches of rows as Python dicts, the row count, the validation pass.
//!
//! Parsing happens with the GIL released; only turning a parsed batch into Python objects holds it.
mod columns;
mod rows;
mod tape;
mod text;

use crate::dataset::{
    check_window, count_rows as core_count_rows, validate_file, Batch, BatchSource, Contract,
    DatasetErrorKind, DatasetReader, PositionUnit, READ_ROWS,
};
use crate::error::CoreError;
use crate::py::errors::without_gil;
use columns::{columns_to_py, ColumnCache};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyModule};
use std::sync::Mutex;
use tape::{tape_to_py, TapeCache};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DatasetBatches>()?;
    m.add_function(wrap_pyfunction!(count_rows, m)?)?;
    m.add_function(wrap_pyfunction!(validate_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(check_rows, m)?)?;
    Ok(())
}

fn parse_contract(name: &str) -> PyResult<Contract> {
    Contract::parse(name).ok_or_else(|| {
        CoreError::Protocol(format!(
            "unknown row contract '{name}' (expected eval, rubric, eval_run or any)"
        ))
        .into()
    })
}
/// Keeps Python's cyclic garbage collector off while one batch's objects are built, and puts it back
/// as it was after.
///
/// Building a batch allocates thousands of dicts and lists that are all alive at the end; the collector
/// would otherwise run several times per batch, walk them without freeing anything, and promote them
/// into ever larger older-generation passes (a quarter of a Parquet read's time). Deferred, it runs once
/// after the batch. No Python code runs while the batch is built (only dicts, lists, strings and numbers
/// are made, with the GIL held throughout), so no other code can see the collector off.
struct GcPause<'py> {
    gc: Option<Bound<'py, PyModule>>,
}

impl<'py> GcPause<'py> {
    /// Pauses the collector for a list of `rows` rows, when that is enough rows to matter.
    fn start(py: Python<'py>, rows: usize) -> PyResult<Self> {
        if rows < PAUSE_GC_ROWS {
            return Ok(GcPause { gc: None });
        }
        let gc = py.import("gc")?;
        if !gc.call_method0("isenabled")?.is_truthy()? {
            return Ok(GcPause { gc: None });
        }
        gc.call_method0("disable")?;
        Ok(GcPause { gc: Some(gc) })
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.gc {
            // `gc.enable()` cannot fail short of a broken interpreter; there is no caller to tell.
            let _ = gc.call_method0("enable");
        }
    }
}

/// Rows read per batch for lists of `batch_size` rows: at least [`READ_ROWS`], and a whole number of
/// lists, so that only the end of a batch (a Parquet row group, a text batch's byte budget) cuts a
/// list short.
fn read_size(batch_size: usize) -> usize {
    batch_size.saturating_mul(READ_ROWS.div_ceil(batch_size))
}

/// Lists of at least this many rows are built with the cyclic collector paused (see [`GcPause`]).
const PAUSE_GC_ROWS: usize = 128;

/// An iterator over batches (lists of dicts) of the rows of a dataset file.
///
/// Usable from any Python thread (an asyncio runner may iterate it from a worker thread).
#[pyclass(module = "osmosis_ai._core")]
pub struct DatasetBatches {
    reader: Mutex<BatchSource>,
    format: &'static str,
    cache: TapeCache,
    columns: ColumnCache,
    /// Rows per list handed out.
    batch_size: usize,
    /// The parsed batch being handed out, and its next row. Lists are cut from it so that a small
    /// `batch_size` keeps the Python objects alive at once few (a thousand 2 KB rows made and freed
    /// together cost more in fresh memory pages than in building them) without a parse per list.
    current: Option<(Batch, usize)>,
}

#[pymethods]
impl DatasetBatches {
    #[new]
    #[pyo3(signature = (path, contract = "eval", offset = 0, limit = None, batch_size = 1024, read_ahead = true))]
    fn new(
        py: Python<'_>,
        path: &str,
        contract: &str,
        offset: u64,
        limit: Option<u64>,
        batch_size: usize,
        read_ahead: bool,
    ) -> PyResult<Self> {
        let contract = parse_contract(contract)?;
        if batch_size == 0 {
            return Err(CoreError::Protocol("batch_size must be at least 1".to_owned()).into());
        }
        let reader = py
            .detach(|| DatasetReader::open(path, contract, offset, limit))
            .map_err(CoreError::from)?;
        let format = reader.format().name();
        let reader = BatchSource::start(reader, read_size(batch_size), read_ahead)?;
        Ok(DatasetBatches {
            reader: Mutex::new(reader),
            format,
            cache: TapeCache::default(),
            columns: ColumnCache::default(),
            batch_size,
            current: None,
        })
    }

    /// The file format read: "jsonl", "json", "csv" or "parquet".
    #[getter]
    fn format(&self) -> &'static str {
        self.format
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        // `&mut self` already excludes other callers; the lock only makes the class `Sync`.
        let reader = self
            .reader
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            if let Some((batch, next)) = &mut self.current {
                if *next < batch.len() {
                    let rows = *next..batch.len().min(*next + self.batch_size);
                    *next = rows.end;
                    let _pause = GcPause::start(py, rows.len())?;
                    return Ok(Some(match batch {
                        Batch::Tape(tape) => tape_to_py(py, tape, rows, &mut self.cache)?,
                        Batch::Columns(columns) => {
                            columns_to_py(py, columns, rows, &mut self.columns)?
                        }
                    }));
                }
            }
            if let Some((used, _)) = self.current.take() {
                // Freeing or reusing a parsed batch is the reader thread's work.
                reader.recycle(used);
            }
            let batch = py.detach(|| reader.next_batch()).map_err(CoreError::from)?;
            if batch.is_empty() {
                return Ok(None);
            }
            self.current = Some((batch, 0));
        }
    }
}

/// The number of rows in a dataset file (footer metadata for Parquet, a newline scan for JSONL).
#[pyfunction]
fn count_rows(py: Python<'_>, path: &str) -> PyResult<u64> {
    Ok(py
        .detach(|| core_count_rows(path))
        .map_err(CoreError::from)?)
}

/// The rows of a window (as `DatasetBatches`) checked against the contract without building any;
/// returns their number, or raises the error iterating them would raise first.
#[pyfunction]
#[pyo3(signature = (path, contract = "eval", offset = 0, limit = None))]
fn check_rows(
    py: Python<'_>,
    path: &str,
    contract: &str,
    offset: u64,
    limit: Option<u64>,
) -> PyResult<u64> {
    let contract = parse_contract(contract)?;
    without_gil(py, |interrupted| {
        Ok(check_window(path, contract, offset, limit, interrupted)?)
    })
}

/// Checks every row; returns a dict with rows, columns, problems (dicts) and counts.
#[pyfunction]
#[pyo3(signature = (path, contract = "eval", max_problems = 100))]
fn validate_dataset<'py>(
    py: Python<'py>,
    path: &str,
    contract: &str,
    max_problems: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let contract = parse_contract(contract)?;
    let report = py
        .detach(|| validate_file(path, contract, max_problems))
        .map_err(CoreError::from)?;
    let out = PyDict::new(py);
    out.set_item("path", &report.path)?;
    out.set_item("format", report.format.name())?;
    out.set_item("rows", report.rows)?;
    out.set_item("columns", &report.columns)?;
    out.set_item("total_problems", report.total_problems)?;
    out.set_item("bad_rows", report.bad_rows)?;
    let problems = PyList::empty(py);
    for p in &report.problems {
        let d = PyDict::new(py);
        d.set_item("line", p.line)?;
        d.set_item(
            "unit",
            if p.unit == PositionUnit::Row {
                "row"
            } else {
                "line"
            },
        )?;
        d.set_item("row", p.row)?;
        d.set_item("field", p.field.as_deref())?;
        d.set_item("message", &p.message)?;
        d.set_item("location", p.location())?;
        d.set_item(
            "kind",
            match p.kind {
                DatasetErrorKind::Validation => "validation",
                DatasetErrorKind::Empty => "empty",
                _ => "parse",
            },
        )?;
        problems.append(d)?;
    }
    out.set_item("problems", problems)?;
    Ok(out)
}
