//! Bindings for the config validator. Reports cross as JSON text; Python builds the models.

use crate::config::{validate_file, validate_text, Kind, Report};
use crate::error::CoreError;
use pyo3::prelude::*;
use std::path::Path;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_config_text, m)?)?;
    m.add_function(wrap_pyfunction!(validate_config_files, m)?)?;
    Ok(())
}

fn parse_kind(kind: &str) -> Result<Kind, CoreError> {
    Kind::parse(kind).ok_or_else(|| CoreError::Protocol(format!("unknown config kind '{kind}'")))
}

fn to_json(report: &Report) -> String {
    serde_json::to_string(report).unwrap_or_else(|e| format!("{{\"encode_error\":\"{e}\"}}"))
}

/// One file's report as JSON; an I/O failure becomes `{"path", "io_error": {"kind", "message"}}`.
fn file_report_json(path: &str, kind: Kind) -> String {
    match validate_file(Path::new(path), kind) {
        Ok(report) => to_json(&report),
        Err(err) => {
            let kind = match err.kind() {
                std::io::ErrorKind::NotFound => "not_found",
                std::io::ErrorKind::PermissionDenied => "permission_denied",
                std::io::ErrorKind::IsADirectory => "is_a_directory",
                _ => "other",
            };
            serde_json::json!({"path": path, "io_error": {"kind": kind, "message": err.to_string()}})
                .to_string()
        }
    }
}

/// Validates config text (`kind` is "eval" or "training"); returns the report as JSON.
#[pyfunction]
fn validate_config_text(py: Python<'_>, text: &str, path: &str, kind: &str) -> PyResult<String> {
    let kind = parse_kind(kind)?;
    let text = text.to_owned();
    let path = path.to_owned();
    Ok(py.detach(move || to_json(&validate_text(&text, &path, kind))))
}

/// Reads and validates many files (`kinds[i]` for `paths[i]`) without holding the GIL.
#[pyfunction]
fn validate_config_files(
    py: Python<'_>,
    paths: Vec<String>,
    kinds: Vec<String>,
) -> PyResult<Vec<String>> {
    if paths.len() != kinds.len() {
        return Err(CoreError::Protocol("paths and kinds differ in length".into()).into());
    }
    let kinds = kinds
        .iter()
        .map(|k| parse_kind(k))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(py.detach(move || {
        paths
            .iter()
            .zip(kinds)
            .map(|(path, kind)| file_report_json(path, kind))
            .collect()
    }))
}
