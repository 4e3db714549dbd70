//! `CoreError` → the exception classes of `osmosis_ai.errors`, in one place.

use crate::error::CoreError;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Instantiates `osmosis_ai.errors.<class_name>(message, **kwargs)` as a `PyErr`.
fn osmosis_error(
    py: Python<'_>,
    class_name: &str,
    message: &str,
    kwargs: &[(&str, Option<&str>)],
) -> PyResult<PyErr> {
    let class = py.import("osmosis_ai.errors")?.getattr(class_name)?;
    let kw = PyDict::new(py);
    for (key, value) in kwargs {
        kw.set_item(key, value)?;
    }
    let instance = class.call((message,), Some(&kw))?;
    Ok(PyErr::from_value(instance))
}

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        Python::attach(|py| {
            let message = err.to_string();
            let built = match &err {
                CoreError::Signature(v) => osmosis_error(
                    py,
                    "SignatureError",
                    &message,
                    &[
                        ("function", Some(&v.function)),
                        ("parameter", v.parameter.as_deref()),
                        ("expected", Some(&v.expected)),
                    ],
                ),
                CoreError::Stats(e) => {
                    let row = e.row.map(|r| r.to_string());
                    osmosis_error(
                        py,
                        "StatsError",
                        &message,
                        &[("row", row.as_deref()), ("field", e.field)],
                    )
                }
                CoreError::Dataset(d) => super::dataset::dataset_error_to_py(py, d),
                CoreError::Protocol(_) => Ok(PyRuntimeError::new_err(message.clone())),
            };
            // If the errors module itself cannot be imported, still raise something that says what went wrong.
            built.unwrap_or_else(|import_err| {
                PyValueError::new_err(format!("{message} ({import_err})"))
            })
        })
    }
}
