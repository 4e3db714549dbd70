//! Eval, training and benchmark TOML configs (`configs/{eval,training,benchmark}/*.toml`): parse with spans,
//! check every section and field, and report every problem at once with its line and column.
//!
//! The result is plain data ([`Report`], serialisable to JSON): Python builds the typed models from it.
//! Structure rules follow the established SDK; value rules (positive counts, `0 < top_p <= 1`, ...) are
//! ours, so mistakes the platform would reject after upload are caught before it.

mod benchmark;
pub mod position;
pub mod rules;
pub mod schema;
mod sections;
mod values;

use position::LineIndex;
pub use schema::Kind;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml::de::DeTable;

/// One problem in a config file. `line`/`column` are 1-based; `key` is dotted (`experiment.rollout`,
/// `env.MY_VAR`, a bare section name, or empty for TOML syntax errors).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    pub line: usize,
    pub column: usize,
    pub key: String,
    pub message: String,
    /// What a misspelt key most likely meant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

/// The outcome of validating one file: every issue, and the normalised config when there are none.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub path: String,
    pub kind: &'static str,
    pub issues: Vec<Issue>,
    /// `{experiment, <kind sections>..., advanced, env, secrets}`; `None` unless `issues` is empty.
    pub config: Option<Value>,
    /// `line, column` of each checked value of the known sections (`experiment.rollout` -> `[3, 11]`), so
    /// later checks (the workspace: does that rollout exist?) can point at the line to fix.
    pub positions: BTreeMap<String, (usize, usize)>,
}

impl Report {
    pub fn is_valid(&self) -> bool {
        self.issues.is_empty()
    }
}

/// Collects issues against one document.
pub(crate) struct Checker<'t> {
    text: &'t str,
    index: LineIndex<'t>,
    /// Where the parsed body starts in `text` (after a byte-order mark); spans are relative to it.
    base: usize,
    issues: Vec<Issue>,
    positions: BTreeMap<String, (usize, usize)>,
}

impl<'t> Checker<'t> {
    fn new(text: &'t str) -> Self {
        Checker {
            text,
            index: LineIndex::new(text),
            base: 0,
            issues: Vec::new(),
            positions: BTreeMap::new(),
        }
    }

    pub(crate) fn remember(&mut self, span: Range<usize>, key: &str) {
        let position = self.index.position(self.base + span.start);
        self.positions.insert(key.to_string(), position);
    }

    pub(crate) fn report(&mut self, span: Range<usize>, key: &str, message: impl Into<String>) {
        self.suggest(span, key, message, None);
    }

    pub(crate) fn suggest(
        &mut self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
        suggestion: Option<String>,
    ) {
        let (line, column) = self.index.position(self.base + span.start);
        self.issues.push(Issue {
            line,
            column,
            key: key.to_string(),
            message: message.into(),
            suggestion,
        });
    }

    /// The source text of a span, shortened for messages.
    pub(crate) fn snippet(&self, span: Range<usize>) -> String {
        let raw = self
            .text
            .get(self.base + span.start..self.base + span.end)
            .unwrap_or("")
            .trim();
        let first_line = raw.lines().next().unwrap_or("");
        if first_line.chars().count() > 40 || first_line.len() < raw.len() {
            let short: String = first_line.chars().take(37).collect();
            format!("{short}...")
        } else {
            first_line.to_string()
        }
    }
}

/// Validates config text. `path` is only used to label the report.
pub fn validate_text(text: &str, path: &str, kind: Kind) -> Report {
    let mut checker = Checker::new(text);
    // A byte-order mark is not TOML, but editors add it; skip it without shifting columns much.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    checker.base = text.len() - body.len();
    let (document, errors) = DeTable::parse_recoverable(body);
    let mut config = None;
    if errors.is_empty() {
        let built = match kind {
            Kind::Benchmark => benchmark::check_document(&mut checker, document.get_ref()),
            _ => sections::check_document(&mut checker, document.get_ref(), kind),
        };
        if checker.issues.is_empty() {
            config = Some(built);
        }
    } else {
        for error in errors {
            let start = error.span().map_or(0, |s| s.start);
            checker.report(
                start..start,
                "",
                format!("invalid TOML: {}", error.message().trim()),
            );
        }
    }
    let positions = std::mem::take(&mut checker.positions);
    let mut issues = checker.issues;
    // Stable sort: issues on one position keep the order they were found in.
    issues.sort_by_key(|i| (i.line, i.column));
    Report {
        path: path.to_string(),
        kind: kind.name(),
        issues,
        config,
        positions,
    }
}

/// Reads and validates one file. I/O errors are returned as such; bad UTF-8 is an issue with a position.
pub fn validate_file(path: &Path, kind: Kind) -> std::io::Result<Report> {
    let bytes = std::fs::read(path)?;
    let label = path.display().to_string();
    match String::from_utf8(bytes) {
        Ok(text) => Ok(validate_text(&text, &label, kind)),
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(&err.as_bytes()[..valid]).into_owned();
            let mut checker = Checker::new(&text);
            checker.report(valid..valid, "", "invalid TOML: the file is not UTF-8 text");
            Ok(Report {
                path: label,
                kind: kind.name(),
                issues: checker.issues,
                config: None,
                positions: BTreeMap::new(),
            })
        }
    }
}

#[cfg(test)]
mod tests;
