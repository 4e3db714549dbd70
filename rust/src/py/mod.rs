//! The Python module `osmosis_ai._core`: the only place that names pyo3.

mod atif;
mod config;
mod dataset;
mod errors;
mod http_head;
mod json;
mod secrets;
mod signature;
mod stats;

mod rubric;

mod digest;

mod messages;

use pyo3::prelude::*;

// Dataset batches are many small allocations freed in bulk on the reader thread, where glibc's malloc
// spent more time than parsing. mimalloc serves the core's Rust allocations only, never Python's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    signature::register(m)?;
    stats::register(m)?;
    http_head::register(m)?;
    dataset::register(m)?;
    config::register(m)?;
    atif::register(m)?;
    secrets::register(m)?;
    rubric::register(m)?;
    digest::register(m)?;
    messages::register(m)?;
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
