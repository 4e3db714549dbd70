//! Bindings of the secret masker (`osmosis_ai.redact` is its one user).

use crate::secrets::SecretMasker as Masker;
use pyo3::exceptions::PyUnicodeDecodeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SecretMasker>()?;
    Ok(())
}

/// The secrets a process knows, searched for in one call per text; built again when they change.
#[pyclass(frozen, module = "osmosis_ai._core")]
pub(super) struct SecretMasker {
    inner: Masker,
}

impl SecretMasker {
    /// The masker itself, for the core's own writers.
    pub(super) fn inner(&self) -> &Masker {
        &self.inner
    }
}

#[pymethods]
impl SecretMasker {
    #[new]
    fn new(secrets: Vec<String>) -> Self {
        Self {
            inner: Masker::new(&secrets),
        }
    }

    /// UTF-8 `data` with every secret replaced by `***`: the same object when none occurs.
    /// Raises UnicodeDecodeError when `data` is not UTF-8 (as `data.decode()` would).
    fn mask_bytes<'py>(&self, data: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyAny>> {
        let bytes = data.as_bytes();
        if simdutf8::basic::from_utf8(bytes).is_err() {
            let err = std::str::from_utf8(bytes).expect_err("simdutf8 and std agree on UTF-8");
            return Err(PyErr::from_value(
                PyUnicodeDecodeError::new_utf8(data.py(), bytes, err)?.into_any(),
            ));
        }
        Ok(match self.inner.mask(bytes) {
            Some(masked) => PyBytes::new(data.py(), &masked).into_any(),
            None => data.clone().into_any(),
        })
    }

    /// `text` with every secret replaced by `***`: the same object when none occurs. Raises
    /// UnicodeEncodeError for text with lone surrogates (the caller searches such text itself).
    fn mask_text<'py>(&self, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        let utf8 = text.to_str()?;
        Ok(match self.inner.mask(utf8.as_bytes()) {
            Some(masked) => {
                let masked = String::from_utf8(masked)
                    .expect("whole UTF-8 needles replaced by ASCII leave the text UTF-8");
                PyString::new(text.py(), &masked).into_any()
            }
            None => text.clone().into_any(),
        })
    }
}
