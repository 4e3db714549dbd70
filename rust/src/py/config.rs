//! Bindings for the config validator. Reports cross as plain dicts and lists; Python builds the models.

use super::json::value_to_py;
use crate::config::{validate_file, validate_text, Kind, Report};
use crate::error::CoreError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;

/// Files validated per GIL release.
const CHUNK: usize = 256;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_config_text, m)?)?;
    m.add_function(wrap_pyfunction!(validate_config_files, m)?)?;
    Ok(())
}

fn parse_kind(kind: &str) -> Result<Kind, CoreError> {
    Kind::parse(kind).ok_or_else(|| CoreError::Protocol(format!("unknown config kind '{kind}'")))
}

/// One file's outcome: its report, or why it could not be read.
enum Outcome {
    Report(Report),
    Unreadable {
        path: String,
        kind: &'static str,
        message: String,
    },
}

fn file_outcome(path: &str, kind: Kind) -> Outcome {
    match validate_file(Path::new(path), kind) {
        Ok(report) => Outcome::Report(report),
        Err(err) => Outcome::Unreadable {
            path: path.to_string(),
            kind: match err.kind() {
                std::io::ErrorKind::NotFound => "not_found",
                std::io::ErrorKind::PermissionDenied => "permission_denied",
                std::io::ErrorKind::IsADirectory => "is_a_directory",
                _ => "other",
            },
            message: err.to_string(),
        },
    }
}

/// `{path, kind, issues, config, positions}` or `{path, io_error: {kind, message}}`.
fn outcome_to_py<'py>(py: Python<'py>, outcome: &Outcome) -> PyResult<Bound<'py, PyAny>> {
    let dict = PyDict::new(py);
    match outcome {
        Outcome::Unreadable {
            path,
            kind,
            message,
        } => {
            dict.set_item("path", path)?;
            let error = PyDict::new(py);
            error.set_item("kind", kind)?;
            error.set_item("message", message)?;
            dict.set_item("io_error", error)?;
        }
        Outcome::Report(report) => {
            dict.set_item("path", &report.path)?;
            dict.set_item("kind", report.kind)?;
            let issues = PyList::empty(py);
            for issue in &report.issues {
                let item = PyDict::new(py);
                item.set_item("line", issue.line)?;
                item.set_item("column", issue.column)?;
                item.set_item("key", &issue.key)?;
                item.set_item("message", &issue.message)?;
                if let Some(suggestion) = &issue.suggestion {
                    item.set_item("suggestion", suggestion)?;
                }
                issues.append(item)?;
            }
            dict.set_item("issues", issues)?;
            match &report.config {
                Some(config) => dict.set_item("config", value_to_py(py, config)?)?,
                None => dict.set_item("config", py.None())?,
            }
            let positions = PyDict::new(py);
            for (key, (line, column)) in &report.positions {
                positions.set_item(key, (line, column))?;
            }
            dict.set_item("positions", positions)?;
        }
    }
    Ok(dict.into_any())
}

/// Validates files on up to `available_parallelism` threads, keeping the input order.
fn validate_parallel(paths: &[String], kinds: &[Kind]) -> Vec<Outcome> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads <= 1 || paths.len() < 16 {
        return paths
            .iter()
            .zip(kinds)
            .map(|(p, k)| file_outcome(p, *k))
            .collect();
    }
    let per_thread = paths.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = paths
            .chunks(per_thread)
            .zip(kinds.chunks(per_thread))
            .map(|(ps, ks)| {
                let handle = scope.spawn(move || {
                    ps.iter()
                        .zip(ks)
                        .map(|(p, k)| file_outcome(p, *k))
                        .collect::<Vec<_>>()
                });
                (ps, handle)
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(ps, handle)| {
                // A panic would be a validator bug: report it per file instead of losing the batch.
                handle.join().unwrap_or_else(|_| {
                    ps.iter()
                        .map(|p| Outcome::Unreadable {
                            path: p.clone(),
                            kind: "other",
                            message: "internal error: the config validator panicked".into(),
                        })
                        .collect()
                })
            })
            .collect()
    })
}

/// Validates config text (`kind` is "eval" or "training"); returns the report as a dict.
#[pyfunction]
fn validate_config_text<'py>(
    py: Python<'py>,
    text: &str,
    path: &str,
    kind: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let kind = parse_kind(kind)?;
    let report = py.detach(|| validate_text(text, path, kind));
    outcome_to_py(py, &Outcome::Report(report))
}

/// Reads and validates many files (`kinds[i]` for `paths[i]`) without holding the GIL.
#[pyfunction]
fn validate_config_files<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    kinds: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    if paths.len() != kinds.len() {
        return Err(CoreError::Protocol("paths and kinds differ in length".into()).into());
    }
    let kinds = kinds
        .iter()
        .map(|k| parse_kind(k))
        .collect::<Result<Vec<_>, _>>()?;
    let list = PyList::empty(py);
    // Chunks keep Ctrl+C responsive on long lists: signals are checked between them.
    for (chunk_paths, chunk_kinds) in paths.chunks(CHUNK).zip(kinds.chunks(CHUNK)) {
        let outcomes = py.detach(|| validate_parallel(chunk_paths, chunk_kinds));
        for outcome in &outcomes {
            list.append(outcome_to_py(py, outcome)?)?;
        }
        py.check_signals()?;
    }
    Ok(list)
}
