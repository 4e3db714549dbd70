//! `LogRecordFields`: the lines of a results log with only the chosen fields of each record built; and
//! `latest_run_offsets`, where the latest line of each (row, run) starts.

use super::super::json::value_to_py;
use crate::error::CoreError;
use crate::stats::{latest_lines, project_object};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Mutex;

/// `(line number, record)` for every complete, non-blank line of a results log: from line 2 on, a JSON
/// object line as a dict of only the given top-level `fields` it has; the header (line 1) and any line
/// that is not one valid JSON object as its raw bytes, for the caller to parse (and to report).
///
/// A last line without a newline is the write a crash interrupted: it ends the iteration unread.
/// With `dataset`, the file is a JSONL dataset instead: no header (line 1 is projected too), and a last
/// line without a newline is a line like the others.
#[pyclass(module = "osmosis_ai._core")]
pub struct LogRecordFields {
    path: PathBuf,
    reader: Mutex<BufReader<File>>,
    fields: Vec<String>,
    keys: Vec<Py<PyString>>,
    line_no: usize,
    buffer: Vec<u8>,
    done: bool,
    dataset: bool,
}

#[pymethods]
impl LogRecordFields {
    #[new]
    #[pyo3(signature = (path, fields, *, dataset = false))]
    fn new(py: Python<'_>, path: PathBuf, fields: Vec<String>, dataset: bool) -> PyResult<Self> {
        let file = File::open(&path).map_err(|e| CoreError::io(&path, e))?;
        let keys = fields
            .iter()
            .map(|f| PyString::intern(py, f).unbind())
            .collect();
        Ok(LogRecordFields {
            path,
            reader: Mutex::new(BufReader::with_capacity(1 << 16, file)),
            fields,
            keys,
            line_no: 0,
            buffer: Vec::with_capacity(4096),
            done: false,
            dataset,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        // `&mut self` already excludes other callers; the lock only makes the class `Sync`.
        let reader = self
            .reader
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        while !self.done {
            self.buffer.clear();
            reader
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| CoreError::io(&self.path, e))?;
            if self.buffer.last() != Some(&b'\n') {
                self.done = true; // the end, or (in a log) a line a crash cut short
                if !self.dataset || self.buffer.is_empty() {
                    break;
                }
            }
            self.line_no += 1;
            // Python's bytes.isspace: \x0b and \x0c are blank too.
            if self.buffer.iter().all(|b| b" \t\n\r\x0b\x0c".contains(b)) {
                continue;
            }
            let line = &self.buffer[..];
            let projected = if self.line_no > 1 || self.dataset {
                project_object(line, &self.fields)
            } else {
                None
            };
            let record = match projected {
                Some(found) => {
                    let dict = PyDict::new(py);
                    for (index, value) in &found {
                        dict.set_item(self.keys[*index].bind(py), value_to_py(py, value)?)?;
                    }
                    dict.into_any()
                }
                None => PyBytes::new(py, line).into_any(),
            };
            return Ok(Some(PyTuple::new(
                py,
                [self.line_no.into_pyobject(py)?.into_any(), record],
            )?));
        }
        Ok(None)
    }
}

/// `(header line, starts)`: the log's line 1 and, packed as native 64-bit integers, where the latest
/// line of each (row, run) starts, in row then run order; None when a line is not in the engine's form
/// (Python's pass reads that log). Reads without the GIL.
#[pyfunction]
#[pyo3(signature = (path, runs_per_row=None))]
pub fn latest_run_offsets<'py>(
    py: Python<'py>,
    path: PathBuf,
    runs_per_row: Option<u32>,
) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
    let found = py
        .detach(|| latest_lines(&path, runs_per_row))
        .map_err(|e| CoreError::io(&path, e))?;
    let Some(found) = found else {
        return Ok(None);
    };
    // Packed straight into the bytes object: no second copy of 8 bytes a run on the way.
    let starts = PyBytes::new_with(py, found.offsets.len() * 8, |packed| {
        for (slot, offset) in packed.chunks_exact_mut(8).zip(&found.offsets) {
            slot.copy_from_slice(&offset.to_ne_bytes());
        }
        Ok(())
    })?;
    Ok(Some((PyBytes::new(py, &found.header), starts)))
}
