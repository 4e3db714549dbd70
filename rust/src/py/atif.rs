//! Bindings for the ATIF check. Each outcome crosses as a tuple `(status, a, b, c)`:
//! `("valid", rollout_id, row_index, run_index)`, `("invalid", field, message, None)` or
//! `("unreadable", io_kind, message, None)`; `osmosis_ai.atif` turns them into typed results.
//! `EvalRunItems` and `write_trajectory` are the end of `eval run`: one results log line's document,
//! index line and fields, and its two trajectory files.

use super::errors::os_error_at;
use super::json::json_to_py;
use super::secrets::SecretMasker;
use crate::atif::eval_run::{
    write_document, write_trajectory as write_files, RunRecord, TrajectoryFolders, Written,
};
use crate::atif::{check_bytes, check_file, AtifError, FileCheck, Summary};
use crate::error::CoreError;
use crate::stats::LineReader;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyIterator, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Files checked per GIL release (Ctrl+C is noticed between chunks).
const CHUNK: usize = 256;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_atif, m)?)?;
    m.add_function(wrap_pyfunction!(check_atif_files, m)?)?;
    m.add_function(wrap_pyfunction!(write_trajectory, m)?)?;
    m.add_class::<EvalRunItems>()?;
    m.add("ATIF_VERSION", crate::atif::WRITTEN_VERSION)?;
    m.add(
        "EVAL_RUN_INDEX_KEYS",
        crate::atif::eval_run::INDEX_KEYS.to_vec(),
    )?;
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

/// The record fields the end of a run reads besides the files (counts, failed rows, carried checks).
const FIELDS: [&str; 9] = [
    "row_index",
    "run_index",
    "source_row_index",
    "rollout_id",
    "trajectory_filename",
    "status",
    "reward",
    "error_type",
    "error",
];

/// The end of one `eval run` invocation: the latest line of each item of its results log, one at a time.
#[pyclass(module = "osmosis_ai._core")]
pub struct EvalRunItems {
    path: PathBuf,
    reader: Mutex<LineReader>,
    starts: Py<PyIterator>,
    carried: Py<PyAny>,
    resumed: Py<PyAny>,
    model_name: Option<String>,
    version: String,
    keys: Vec<Py<PyString>>,
    /// Where documents are written (`rollout_trials/`, `trajectories/`), and the masker applied first.
    files: Option<TrajectoryFolders>,
    masker: Option<Py<SecretMasker>>,
}

#[pymethods]
impl EvalRunItems {
    #[new]
    #[pyo3(signature = (path, starts, carried, resumed, model_name, version, files=None, masker=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        starts: &Bound<'_, PyAny>,
        carried: Py<PyAny>,
        resumed: Py<PyAny>,
        model_name: Option<String>,
        version: String,
        files: Option<(String, String)>,
        masker: Option<Py<SecretMasker>>,
    ) -> PyResult<Self> {
        let reader = LineReader::open(&path).map_err(|e| CoreError::io(&path, e))?;
        let keys = FIELDS
            .iter()
            .map(|k| PyString::intern(py, k).unbind())
            .collect();
        Ok(EvalRunItems {
            path,
            reader: Mutex::new(reader),
            starts: starts.try_iter()?.unbind(),
            carried,
            resumed,
            model_name,
            version,
            keys,
            files: files.map(|(trials, folder)| TrajectoryFolders::new(trials, folder)),
            masker,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// `(offset, fields, conversation, document, index_line, written)` of the next latest line (`offset`:
    /// where it starts), or `(offset, None, False, None, None, False)` when it is not one JSON object.
    /// With `files`, a document the core made is written (masked) there (`written`), not returned.
    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(start) = self.starts.bind(py).clone().next().transpose()? else {
            return Ok(None);
        };
        // `&mut self` already excludes other callers; the lock only makes the class `Sync`.
        let reader = self.reader.get_mut().unwrap_or_else(|p| p.into_inner());
        let (offset, line) = reader
            .lend_at(start.extract()?)
            .map_err(|e| CoreError::io(&self.path, e))?;
        let offset = offset.into_bound_py_any(py)?;
        let Some(record) = RunRecord::parse(line) else {
            let nothing = [py.None().into_bound(py), false.into_bound_py_any(py)?];
            let items = [
                offset,
                nothing[0].clone(),
                nothing[1].clone(),
                nothing[0].clone(),
                nothing[0].clone(),
                nothing[1].clone(),
            ];
            return Ok(Some(PyTuple::new(py, items)?));
        };
        let (fields, rollout_id) = fields(py, &self.keys, &record)?;
        let listed = |set: &Py<PyAny>| -> PyResult<bool> {
            match &rollout_id {
                Some(id) => set.bind(py).contains(id),
                _ => Ok(false),
            }
        };
        let carried = listed(&self.carried)?;
        let resumed = listed(&self.resumed)?;
        let model = self.model_name.as_deref();
        let version = self.version.as_str();
        let files = self.files.as_ref();
        let masker = self.masker.as_ref().map(|m| m.get().inner());
        let (written, index_line) = py.detach(|| {
            let document = if carried {
                None
            } else {
                record.document(model, version)
            };
            let written = match (document, files) {
                (Some(document), Some(files)) => {
                    Some(write_document(&record, document, files, masker))
                }
                (document, _) => document.map(Written::Python),
            };
            (written, record.index_line(resumed))
        });
        let (document, written) = match written {
            Some(Written::Done) => (None, true),
            Some(Written::Python(document)) => (Some(document), false),
            Some(Written::Failed(path, err)) => return Err(os_error_at(py, &path, err)),
            None => (None, false),
        };
        let items = [
            offset,
            fields.into_any(),
            record.conversation.into_bound_py_any(py)?,
            document
                .map(|d| PyBytes::new(py, &d))
                .into_bound_py_any(py)?,
            index_line
                .map(|l| PyBytes::new(py, &l))
                .into_bound_py_any(py)?,
            written.into_bound_py_any(py)?,
        ];
        Ok(Some(PyTuple::new(py, items)?))
    }
}

/// The record's `FIELDS` as a dict (`keys`: their interned names), and its `rollout_id`.
fn fields<'py>(
    py: Python<'py>,
    keys: &[Py<PyString>],
    record: &RunRecord<'_>,
) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyAny>>)> {
    let fields = PyDict::new(py);
    let mut rollout_id = None;
    for (name, key) in FIELDS.iter().zip(keys) {
        let value = if *name == "trajectory_filename" && record.conversation {
            "trajectory.json".into_bound_py_any(py)?
        } else if let Some(value) = record.record.get(name) {
            json_to_py(py, value)?
        } else {
            continue;
        };
        if *name == "rollout_id" {
            rollout_id = Some(value.clone());
        }
        fields.set_item(key.bind(py), value)?;
    }
    Ok((fields, rollout_id))
}

/// Writes a trajectory to `<trial_dir>/trajectory.json` and hard-links `target` to it.
#[pyfunction]
fn write_trajectory(py: Python<'_>, trial_dir: &str, target: &str, data: &[u8]) -> PyResult<()> {
    let (trial_dir, target) = (Path::new(trial_dir), Path::new(target));
    py.detach(|| write_files(trial_dir, target, data))
        .map_err(|(path, e)| os_error_at(py, &path, e))
}
