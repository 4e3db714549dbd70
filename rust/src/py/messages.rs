//! Bindings of the copies a local rollout makes of a workflow's messages (`osmosis_ai.rollout.sample`).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flat_message_copies, m)?)?;
    Ok(())
}

/// Whether `value` is `None` or exactly a `str`, `int`, `float` or `bool` (what `plain_copy` keeps as it is).
fn scalar(value: &Bound<'_, PyAny>) -> bool {
    value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyFloat>()
        || value.is_exact_instance_of::<PyBool>()
}

/// Two new lists, each of a shallow copy of every message, when `messages` is a `list` of `dict`s with `str`
/// keys and scalar values only (so a shallow copy is `plain_copy`'s deep one); else `None`.
#[pyfunction]
fn flat_message_copies<'py>(
    messages: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>)>> {
    let Ok(list) = messages.cast_exact::<PyList>() else {
        return Ok(None);
    };
    // No Python code runs in here (exact dicts of exact str keys): the list cannot change under the loops.
    for message in list.iter() {
        let Ok(message) = message.cast_exact::<PyDict>() else {
            return Ok(None);
        };
        for (key, value) in message.iter() {
            if !key.is_exact_instance_of::<PyString>() || !scalar(&value) {
                return Ok(None);
            }
        }
    }
    Ok(Some((copied(list)?, copied(list)?)))
}

/// A new list of a shallow copy of each dict of `list` (checked to hold dicts only).
fn copied<'py>(list: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
    let copies = PyList::empty(list.py());
    for message in list.iter() {
        copies.append(message.cast_exact::<PyDict>()?.copy()?)?;
    }
    Ok(copies)
}
