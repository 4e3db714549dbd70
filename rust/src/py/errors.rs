//! `CoreError` → the exception classes of `osmosis_ai.errors` and the builtin I/O errors: the one
//! mapping from the core's errors to Python's.

use crate::dataset::{DatasetError, DatasetErrorKind};
use crate::error::CoreError;
use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyKeyboardInterrupt, PyOSError, PyPermissionError,
    PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::io::ErrorKind;

/// Instantiates `osmosis_ai.errors.<class_name>(message, **kwargs)` as a `PyErr`.
fn osmosis_error<'py>(
    py: Python<'py>,
    class_name: &str,
    message: &str,
    kwargs: &[(&str, Bound<'py, PyAny>)],
) -> PyResult<PyErr> {
    let class = py.import("osmosis_ai.errors")?.getattr(class_name)?;
    let kw = PyDict::new(py);
    for (key, value) in kwargs {
        kw.set_item(key, value)?;
    }
    let instance = class.call((message,), Some(&kw))?;
    Ok(PyErr::from_value(instance))
}

/// `FileNotFoundError` / `PermissionError` / `OSError` by the failure's kind.
fn io_error(kind: ErrorKind, message: String) -> PyErr {
    match kind {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// The `OSError` Python's own `os` calls raise for `err` on `path`: `OSError(errno, strerror, path)`,
/// which Python turns into its subclass (`IsADirectoryError`, `FileNotFoundError`...) with `errno` and
/// `filename` set; an error without an errno as `CoreError::io` maps it.
pub fn os_error_at(py: Python<'_>, path: &std::path::Path, err: std::io::Error) -> PyErr {
    let Some(code) = err.raw_os_error() else {
        return CoreError::io(path, err).into();
    };
    match py
        .import("os")
        .and_then(|os| os.call_method1("strerror", (code,)))
    {
        Ok(text) => PyOSError::new_err((code, text.unbind(), path.display().to_string())),
        Err(e) => e,
    }
}

/// A dataset error: the I/O kinds as builtin errors, the rest as `Dataset*Error(path=, line=, ...)`.
fn dataset_error(py: Python<'_>, err: &DatasetError, message: String) -> PyResult<PyErr> {
    let class_name = match err.kind {
        DatasetErrorKind::NotFound => return Ok(io_error(ErrorKind::NotFound, message)),
        // `ErrorKind::IsADirectory` is newer than the crate's MSRV; the reader tells this case apart itself.
        DatasetErrorKind::IsDirectory => return Ok(PyIsADirectoryError::new_err(message)),
        DatasetErrorKind::Io(kind) => return Ok(io_error(kind, message)),
        DatasetErrorKind::Unsupported | DatasetErrorKind::Parse | DatasetErrorKind::Empty => {
            "DatasetParseError"
        }
        DatasetErrorKind::Validation => "DatasetValidationError",
    };
    osmosis_error(
        py,
        class_name,
        &message,
        &[
            ("path", err.path.as_str().into_pyobject(py)?.into_any()),
            ("line", err.line.into_pyobject(py)?.into_any()),
            ("row", err.row.into_pyobject(py)?.into_any()),
            ("field", err.field.as_deref().into_pyobject(py)?.into_any()),
        ],
    )
}

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        Python::attach(|py| {
            let message = err.to_string();
            let text = |s: Option<&str>| s.into_pyobject(py).map(Bound::into_any);
            let built = match &err {
                CoreError::Signature(v) => (|| {
                    osmosis_error(
                        py,
                        "SignatureError",
                        &message,
                        &[
                            ("function", text(Some(&v.function))?),
                            ("parameter", text(v.parameter.as_deref())?),
                            ("expected", text(Some(&v.expected))?),
                        ],
                    )
                })(),
                CoreError::Stats(e) => (|| {
                    let row = e.row.map(|r| r.to_string());
                    osmosis_error(
                        py,
                        "StatsError",
                        &message,
                        &[("row", text(row.as_deref())?), ("field", text(e.field)?)],
                    )
                })(),
                CoreError::Dataset(d) => dataset_error(py, d, message.clone()),
                CoreError::Io { source, .. } => Ok(io_error(source.kind(), message.clone())),
                CoreError::Interrupted => Ok(PyKeyboardInterrupt::new_err(message.clone())),
                CoreError::Protocol(_) => Ok(PyRuntimeError::new_err(message.clone())),
            };
            // If the errors module itself cannot be imported, still raise something that says what went wrong.
            built.unwrap_or_else(|import_err| {
                PyValueError::new_err(format!("{message} ({import_err})"))
            })
        })
    }
}

/// Runs a file read without the GIL, taking it back now and then to let Ctrl+C through: `read` asks
/// its argument between pieces of work and stops once it answers true; the signal's exception is what
/// the caller then gets.
pub(crate) fn without_gil<T: Send>(
    py: Python<'_>,
    read: impl FnOnce(&mut dyn FnMut() -> bool) -> Result<T, CoreError> + Send,
) -> PyResult<T> {
    let mut signal: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut interrupted = || {
            Python::attach(|py| py.check_signals()).map_or_else(
                |err| {
                    signal = Some(err);
                    true
                },
                |()| false,
            )
        };
        read(&mut interrupted)
    });
    if let Some(err) = signal {
        return Err(err);
    }
    Ok(result?)
}
