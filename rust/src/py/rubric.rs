//! Bindings of the rubric records' check (`osmosis_ai.rubric.records` is its one user) and of the writer
//! of `eval rubric`'s `-o` records (`osmosis_ai.rubric.document`).

use crate::error::CoreError;
use crate::rubric::document::{Piece, RubricDocument};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Mutex;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scan_chat_records, m)?)?;
    m.add_class::<RubricOutputRecords>()?;
    m.add(
        "RUBRIC_RUN_FIELDS",
        crate::rubric::document::RUN_FIELDS.to_vec(),
    )?;
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

/// Iterates the text of the `records` list of `eval rubric`'s `-o` document (0.3's layout) from the chat
/// dataset at `dataset` and the latest runs of the results log at `log` (None: no runs; a log numbered
/// from 0): `(text, report, records)` of whole records, each after its separator, with their console
/// report (empty without `report`); `None` (then nothing more) when a record cannot be written byte for
/// byte as Python would, and the caller writes the file its own way. `health()`: the judge health
/// counts of the records laid out.
#[pyclass(module = "osmosis_ai._core")]
pub struct RubricOutputRecords {
    path: PathBuf,
    inner: Mutex<RubricDocument<BufReader<File>>>,
}

type RecordsPiece<'py> = (Bound<'py, PyBytes>, Bound<'py, PyString>, usize);

#[pymethods]
impl RubricOutputRecords {
    #[new]
    #[pyo3(signature = (dataset, log, number, report))]
    fn new(dataset: PathBuf, log: Option<PathBuf>, number: u32, report: bool) -> PyResult<Self> {
        let file = File::open(&dataset).map_err(|e| CoreError::io(&dataset, e))?;
        let reader = BufReader::with_capacity(1 << 16, file);
        let inner = RubricDocument::new(reader, log.as_deref(), number, report)
            .map_err(|e| CoreError::io(log.as_deref().unwrap_or(&dataset), e))?;
        Ok(RubricOutputRecords {
            path: dataset,
            inner: Mutex::new(inner),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Option<RecordsPiece<'py>>>> {
        // `&mut self` already excludes other callers; the lock only makes the class `Sync`.
        let inner = self
            .inner
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let piece = py
            .detach(|| inner.next_piece())
            .map_err(|e| CoreError::io(&self.path, e))?;
        Ok(match piece {
            Piece::Records {
                text,
                report,
                records,
            } => Some(Some((
                PyBytes::new(py, &text),
                PyString::new(py, &report),
                records,
            ))),
            Piece::Unrendered => Some(None),
            Piece::End => None,
        })
    }

    /// `(runs, successes, unscored, errors, clamps, parse_failures, retries, attempts, prompt_tokens,
    /// completion_tokens, total_tokens)` of the runs of the records laid out.
    fn health(&mut self) -> [i64; 11] {
        let h = self
            .inner
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .health;
        [
            h.runs,
            h.successes,
            h.unscored,
            h.errors,
            h.clamps,
            h.parse_failures,
            h.retries,
            h.attempts,
            h.prompt_tokens,
            h.completion_tokens,
            h.total_tokens,
        ]
    }
}
