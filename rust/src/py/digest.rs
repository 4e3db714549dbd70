//! Bindings of the BLAKE2b digests (`osmosis_ai.runs.log`'s row keys and dataset fingerprints).

use crate::digest::{hasher, hex_digest, MAX_DIGEST_SIZE};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blake2b_hexdigest, m)?)?;
    m.add_class::<Blake2b>()?;
    Ok(())
}

fn checked(digest_size: usize) -> PyResult<usize> {
    if (1..=MAX_DIGEST_SIZE).contains(&digest_size) {
        Ok(digest_size)
    } else {
        Err(PyValueError::new_err(format!(
            "digest_size must be between 1 and {MAX_DIGEST_SIZE} bytes, got {digest_size}"
        )))
    }
}

/// `hashlib.blake2b(data, digest_size=digest_size).hexdigest()`.
#[pyfunction]
fn blake2b_hexdigest(data: &[u8], digest_size: usize) -> PyResult<String> {
    Ok(hex_digest(data, checked(digest_size)?))
}

/// `hashlib.blake2b(digest_size=...)`'s `update` and `hexdigest`, for data read in blocks.
#[pyclass(module = "osmosis_ai._core")]
struct Blake2b {
    state: blake2b_simd::State,
}

#[pymethods]
impl Blake2b {
    #[new]
    fn new(digest_size: usize) -> PyResult<Self> {
        Ok(Self {
            state: hasher(checked(digest_size)?),
        })
    }

    /// Hashes `data` in, the GIL released (a block of a file is large).
    fn update(&mut self, py: Python<'_>, data: &[u8]) {
        let state = &mut self.state;
        py.detach(|| {
            state.update(data);
        });
    }

    fn hexdigest(&self) -> String {
        self.state.finalize().to_hex().to_string()
    }
}
