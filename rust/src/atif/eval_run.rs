//! What the end of `osmosis eval run` writes for one record of its results log, from the raw log line:
//! the ATIF document's bytes, the `index.jsonl` line, and the two files the document is written to.
//! Each gives `None` where Python must do it (`osmosis_ai.eval.run_dir` / `run_files` then parse the line
//! themselves), so the files stay byte for byte what the Python writers make.

use super::build::{conversation, eval_run_document};
use super::json_text::{compact, spaced_ascii};
use super::json_tree::{Json, Obj};
use crate::secrets::SecretMasker;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The fields of an index row, in its order (Python's writer reads them as `_core.EVAL_RUN_INDEX_KEYS`).
pub const INDEX_KEYS: [&str; 11] = [
    "row_index",
    "run_index",
    "source_row_index",
    "rollout_id",
    "trajectory_filename",
    "status",
    "reward",
    "tokens",
    "duration_ms",
    "error_type",
    "resumed",
];

/// One results log record of a run, borrowing its line's text.
pub struct RunRecord<'a> {
    pub record: Obj<'a>,
    /// Whether it has a conversation (so a trajectory file named `trajectory.json`).
    pub conversation: bool,
}

impl<'a> RunRecord<'a> {
    /// The record of a line, or None when the line is not one JSON object.
    pub fn parse(line: &'a [u8]) -> Option<RunRecord<'a>> {
        let text = simdutf8::basic::from_utf8(line).ok()?;
        match Json::parse(text)? {
            Json::Object(record) => {
                let conversation = conversation(&record).is_some();
                Some(RunRecord {
                    record,
                    conversation,
                })
            }
            _ => None,
        }
    }

    /// The record's `rollout_id` when it is text.
    pub fn rollout_id(&self) -> Option<&str> {
        self.record.get("rollout_id").and_then(Json::as_str)
    }

    /// `row_<row>_run_<run>` (Python's f-string of the indices) when both are integers.
    pub fn item_name(&self) -> Option<String> {
        let index = |key: &str| match self.record.get(key)? {
            Json::Int(n) => Some(n.to_string()),
            Json::UInt(n) => Some(n.to_string()),
            _ => None,
        };
        Some(format!(
            "row_{}_run_{}",
            index("row_index")?,
            index("run_index")?
        ))
    }

    /// The `index.jsonl` line (`json.dumps(row)` and a newline), `resumed` marking a carried result.
    pub fn index_line(&self, resumed: bool) -> Option<Vec<u8>> {
        let mut row = Obj::new();
        for key in INDEX_KEYS {
            let value = match key {
                "trajectory_filename" if self.conversation => Json::from("trajectory.json"),
                "resumed" if resumed => Json::Bool(true),
                _ => match self.record.get(key) {
                    Some(value) if !value.is_null() => value.clone(),
                    _ => continue,
                },
            };
            row.insert(key, value);
        }
        let mut out = Vec::with_capacity(256);
        spaced_ascii(&Json::Object(row), &mut out).then_some(())?;
        out.push(b'\n');
        Some(out)
    }

    /// The ATIF document's JSON text (`trajectory_json(trajectory_document(record))`).
    pub fn document(&self, model_name: Option<&'a str>, version: &'a str) -> Option<Vec<u8>> {
        if !self.conversation {
            return None;
        }
        let document = eval_run_document(&self.record, model_name, version)?;
        let mut out = Vec::with_capacity(4096);
        compact(&document, &mut out).then_some(out)
    }
}

/// Writes `data` to `<trials>/<rollout id>/trajectory.json` (making the folder) and links
/// `target` to it (replacing an earlier attempt's file; a copy where hard links fail). A failure comes
/// with the path of the step that failed (the folder, the trial file, or `target`).
pub fn write_trajectory(
    trial_dir: &Path,
    target: &Path,
    data: &[u8],
) -> Result<(), (PathBuf, io::Error)> {
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e: io::Error| (path, e)
    };
    match fs::create_dir(trial_dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err((trial_dir.into(), e)),
        _ => {}
    }
    let trial = trial_dir.join("trajectory.json");
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&trial)
        .map_err(at(&trial))?;
    file.write_all(data).map_err(at(&trial))?;
    drop(file);
    match fs::hard_link(&trial, target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(target).map_err(at(target))?;
            fs::hard_link(&trial, target)
                .or_else(|_| fs::copy(&trial, target).map(|_| ()))
                .map_err(at(target))
        }
        Err(_) => fs::copy(&trial, target).map(|_| ()).map_err(at(target)),
    }
}

/// What became of a document the core was asked to write.
pub enum Written {
    /// Both files are written.
    Done,
    /// Left to Python: its redaction hides a URL's user info, or the record's names are not plain.
    Python(Vec<u8>),
    /// A step failed, at this path.
    Failed(PathBuf, io::Error),
}

/// Writes a record's `document`, masked, to `<trials>/<rollout id>/trajectory.json` and
/// `<folder>/row_<r>_run_<k>.json` ([`write_trajectory`]), as `run_files.project_items` does with
/// `redact_bytes`; what only Python writes byte for byte comes back.
pub fn write_document(
    record: &RunRecord<'_>,
    document: Vec<u8>,
    (trials, folder): (&str, &str),
    masker: Option<&SecretMasker>,
) -> Written {
    let (Some(rollout_id), Some(name)) = (record.rollout_id(), record.item_name()) else {
        return Written::Python(document);
    };
    let masked = masker.and_then(|m| m.mask(&document));
    let data = masked.as_deref().unwrap_or(&document);
    // redact_bytes also rewrites the user info of URLs (`scheme://user:pass@host`).
    if memchr::memchr(b'@', data).is_some() && memchr::memmem::find(data, b"://").is_some() {
        return Written::Python(document);
    }
    let trial_dir = PathBuf::from(format!("{trials}/{rollout_id}"));
    let target = PathBuf::from(format!("{folder}/{name}.json"));
    match write_trajectory(&trial_dir, &target, data) {
        Ok(()) => Written::Done,
        Err((path, err)) => Written::Failed(path, err),
    }
}
