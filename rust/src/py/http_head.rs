//! Bindings of the answer-head reader (`osmosis_ai._http_head` is its one user).

use crate::http_head::parse_response_head;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(response_framing, m)?)?;
    Ok(())
}

/// The names model servers send on every answer, as interned strings (no allocation, hash kept).
fn name<'py>(py: Python<'py>, name: &str) -> Bound<'py, PyString> {
    match name {
        "content-type" => intern!(py, "content-type").clone(),
        "content-length" => intern!(py, "content-length").clone(),
        "date" => intern!(py, "date").clone(),
        "server" => intern!(py, "server").clone(),
        "connection" => intern!(py, "connection").clone(),
        "transfer-encoding" => intern!(py, "transfer-encoding").clone(),
        other => PyString::new(py, other),
    }
}

/// `(status, headers, content_length, chunked, keep_alive)`.
type Framing<'py> = (u32, Bound<'py, PyDict>, Option<u64>, bool, bool);

/// The framing of an answer head in the plain form, or None.
#[pyfunction]
fn response_framing<'py>(py: Python<'py>, head: &[u8]) -> PyResult<Option<Framing<'py>>> {
    let Some(parsed) = parse_response_head(head) else {
        return Ok(None);
    };
    let headers = PyDict::new(py);
    for (key, value) in &parsed.headers {
        headers.set_item(name(py, key), PyString::new(py, value))?;
    }
    Ok(Some((
        parsed.status,
        headers,
        parsed.content_length,
        parsed.chunked,
        parsed.keep_alive,
    )))
}
