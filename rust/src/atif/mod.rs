//! ATIF trajectory documents (the Agent Trajectory Interchange Format of the Harbor framework, which the
//! established package writes for every rollout): the strict check `osmosis eval upload` runs on every
//! trajectory it would send, and the rollout identity readers take from a document.
//!
//! [`check_bytes`] parses and checks one document and returns what the callers compare with their index:
//! the rollout it names (`extra.osmosis.rollout_id`, else `session_id`, else the part of `trajectory_id`
//! before its first `/`) and the row and run of `extra.osmosis.request_extra_fields`. The first problem
//! found is returned with the field at fault (`steps[2].tool_calls[0].arguments`).

mod build;
pub mod eval_run;
// Also the writer of `eval`'s `-o` rows (`crate::stats::output_rows`).
pub(crate) mod json_text;
pub(crate) mod json_tree;
mod schema;
mod timestamp;

pub use build::PRODUCER;
pub use schema::SCHEMA_VERSIONS;
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// The version this package writes (the established package's too).
pub const WRITTEN_VERSION: &str = "ATIF-v1.7";

/// Why a document is not valid ATIF: the field at fault (empty for the whole document) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtifError {
    pub field: String,
    pub message: String,
}

impl AtifError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        AtifError {
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn with_message(mut self, message: String) -> Self {
        self.message = message;
        self
    }
}

impl fmt::Display for AtifError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// What a valid document says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    /// The rollout the document names, if any.
    pub rollout_id: Option<String>,
    /// `extra.osmosis.request_extra_fields.row_index` / `.run_index`, when integers.
    pub row_index: Option<i64>,
    pub run_index: Option<i64>,
}

/// The outcome of checking one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileCheck {
    Valid(Summary),
    Invalid(AtifError),
    /// The file could not be read (`kind` is the I/O error's kind).
    Unreadable {
        kind: std::io::ErrorKind,
        message: String,
    },
}

/// Checks an already parsed document.
pub fn check_value(document: &Value) -> Result<Summary, AtifError> {
    schema::trajectory(document, "")?;
    Ok(summary(document))
}

/// Parses and checks one document (UTF-8 JSON text).
pub fn check_bytes(data: &[u8]) -> Result<Summary, AtifError> {
    let document: Value = serde_json::from_slice(data)
        .map_err(|e| AtifError::new("", format!("is not valid JSON ({e})")))?;
    if !document.is_object() {
        return Err(AtifError::new("", "must be a JSON object"));
    }
    check_value(&document)
}

/// Reads and checks one file.
pub fn check_file(path: &Path) -> FileCheck {
    match std::fs::read(path) {
        Ok(data) => match check_bytes(&data) {
            Ok(summary) => FileCheck::Valid(summary),
            Err(err) => FileCheck::Invalid(err),
        },
        Err(err) => FileCheck::Unreadable {
            kind: err.kind(),
            message: err.to_string(),
        },
    }
}

fn non_empty(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The rollout a document names, as the established readers and the platform's import resolve it: a bare
/// `trajectory_id` without `/` names none.
pub fn rollout_identity(document: &Value) -> Option<&str> {
    let osmosis = document.get("extra").and_then(|e| e.get("osmosis"));
    non_empty(osmosis.and_then(|o| o.get("rollout_id")))
        .or_else(|| non_empty(document.get("session_id")))
        .or_else(|| {
            let id = document.get("trajectory_id")?.as_str()?;
            let (prefix, _) = id.split_once('/')?;
            (!prefix.is_empty()).then_some(prefix)
        })
}

fn summary(document: &Value) -> Summary {
    let fields = document
        .get("extra")
        .and_then(|e| e.get("osmosis"))
        .and_then(|o| o.get("request_extra_fields"));
    // `as_i64` is None for floats and booleans: only integers name a row.
    let index = |key: &str| fields.and_then(|f| f.get(key)).and_then(Value::as_i64);
    Summary {
        rollout_id: rollout_identity(document).map(str::to_string),
        row_index: index("row_index"),
        run_index: index("run_index"),
    }
}

#[cfg(test)]
mod tests;
