//! The Python module `osmosis_ai._core`: the only place that names pyo3.

mod config;
mod dataset;
mod errors;
mod signature;
mod stats;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    signature::register(m)?;
    stats::register(m)?;
    dataset::register(m)?;
    config::register(m)?;
    Ok(())
}

/// "release" or "debug": benches refuse to measure a debug build.
#[pyfunction]
fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}
