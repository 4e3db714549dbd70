//! JSON values of the core → Python objects: the one conversion of `serde_json::Value`.

use crate::atif::json_tree::Json;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use serde_json::Value;

/// JSON data → the equivalent Python objects (dict, list, str, int, float, bool, None), as `json.loads`
/// and orjson give them (an integer literal is an int, any other number a float).
pub(crate) fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_bound_py_any(py),
            (None, Some(u)) => u.into_bound_py_any(py),
            _ => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py),
        },
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, value_to_py(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

/// [`value_to_py`] of the core's JSON tree that borrows its text (`atif::json_tree::Json`), without a
/// `Value` (and a copy of every string) between.
pub(crate) fn json_to_py<'py>(py: Python<'py>, value: &Json<'_>) -> PyResult<Bound<'py, PyAny>> {
    match value.resolved() {
        Json::Null | Json::Ref(_) => Ok(py.None().into_bound(py)),
        Json::Bool(b) => b.into_bound_py_any(py),
        Json::Int(i) => i.into_bound_py_any(py),
        Json::UInt(u) => u.into_bound_py_any(py),
        // A parsed float is finite (serde_json refuses other literals).
        Json::Float(f) => f.into_bound_py_any(py),
        Json::Str(s) => s.as_ref().into_bound_py_any(py),
        Json::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Json::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map.iter() {
                dict.set_item(key, json_to_py(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}
