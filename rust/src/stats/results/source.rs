//! Reading attempts out of any results layout the package writes, streamed:
//!
//! * the results log (JSONL): a header `{"format": "osmosis-eval-log/1" | "osmosis-results/1",
//!   "kind"?, "config": {...}}`, then one run record per line;
//! * the bare JSONL of earlier versions: run records only;
//! * the eval `-o` JSON and the eval-rubric `-o` JSON (`document.rs`).

use super::attempt::{RawAttempt, RubricRun};
use super::record_line::{capture, Captured};
use super::{LentLines, LOG_FORMATS};
use crate::error::{CoreError, CoreResult};
use crate::stats::StatsError;
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Where the attempts of a file go. A `false` return stops the reading early.
pub(crate) trait Sink {
    fn raw(
        &mut self,
        attempt: RawAttempt<'_>,
        row: u64,
        where_: &dyn Fn() -> String,
    ) -> CoreResult<bool>;
    /// A run of an eval-rubric document, whose one score name is the rubric's.
    fn rubric(&mut self, run: RubricRun, row: u64) -> CoreResult<bool>;
}

/// A second reader of a log's lines, fed by the pass that reads its attempts so both share one read and
/// one parse of each line.
pub(crate) trait LineTap {
    /// Every line as read (`raw`, with its newline unless it is a last line without one), in order, and
    /// `captured`, the read of `raw` without the ASCII whitespace around it (`trim_ascii`): `None` when
    /// that is empty or not one JSON object.
    fn line(&mut self, raw: &[u8], captured: Option<&Captured<'_>>);
    /// The file is read again from its start (the pass that fed the lines so far stopped early).
    fn restart(&mut self);
}

/// Which layout a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The results log: header line, then records.
    Log,
    /// Records only (no header).
    Records,
    /// The eval `-o` JSON.
    EvalJson,
    /// The eval-rubric `-o` JSON.
    RubricJson,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Log => "log",
            Layout::Records => "records",
            Layout::EvalJson => "eval-json",
            Layout::RubricJson => "rubric-json",
        }
    }
}

/// What a file says about itself besides its attempts.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// `kind` of the log header (or of its config); "rubric" for the eval-rubric `-o` JSON.
    pub kind: Option<String>,
    /// The header's (or the `-o` JSON's) config.
    pub config: Option<Value>,
    /// Score names the file declares before any attempt (`eval_fns`, `rubric_id`).
    pub declared: Vec<String>,
    /// Attempts per row the file declares (`n_runs`, the rubric `number`).
    pub n_runs: Option<i64>,
    pub pass_threshold: Option<f64>,
    /// What the log's `row_index` / `run_index` count from (see [`super::log_index_base`]); readers
    /// subtract it.
    pub index_base: u64,
    /// Rows the run set out to do, when the file says (the log header's `planned.rows`, `eval run`'s
    /// `selected_source_rows`).
    pub planned_rows: Option<u64>,
    /// A probe log's probed functions (its `eval_fns`) and the threshold of its findings.
    pub probed: Vec<String>,
    pub probe_threshold: Option<f64>,
}

/// The rows of a compact selector such as `"0-2,5"` (4); `None` when it is not one.
fn selector_rows(text: &str) -> Option<u64> {
    let mut rows = 0u64;
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (low, high) = part.split_once('-').unwrap_or((part, part));
        let (low, high): (u64, u64) = (low.trim().parse().ok()?, high.trim().parse().ok()?);
        rows += high.checked_sub(low)? + 1;
    }
    Some(rows)
}

impl Meta {
    /// What a log header (a first line with a known `format`) says: its kind, config, declared n,
    /// planned rows and what its indices count from.
    pub fn of_header(first: &serde_json::Map<String, Value>) -> Self {
        let mut meta = Meta {
            kind: first
                .get("kind")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..Meta::default()
        };
        if let Some(config) = first.get("config") {
            meta.read_config(config);
            meta.config = Some(config.clone());
        }
        // What the run set out to do (`planned.rows`), recorded by this version: logs without it
        // count the rows they hold, and rows that never finished a run go uncounted.
        meta.planned_rows = first
            .get("planned")
            .and_then(|p| p.get("rows"))
            .and_then(Value::as_u64)
            .or(meta.planned_rows);
        let declared = first.get("index_base").and_then(Value::as_u64);
        let by_package = first.contains_key("osmosis_version");
        meta.index_base = super::log_index_base(meta.kind.as_deref(), declared, by_package);
        meta
    }

    pub(super) fn read_config(&mut self, config: &Value) {
        let Some(object) = config.as_object() else {
            return;
        };
        // A probe log's scores are keyed "<function>@<probe>": its function list names no score.
        let probe = self.kind.as_deref() == Some("probe");
        if let Some(names) = object.get("eval_fns").and_then(Value::as_array) {
            let names = names.iter().filter_map(Value::as_str).map(str::to_string);
            if probe {
                self.probed.extend(names);
                self.probe_threshold = object.get("threshold").and_then(Value::as_f64);
            } else {
                self.declared.extend(names);
            }
        }
        // `eval run`: the attempts per row are `n`, the rows its selection; a rubric log: `number`.
        self.n_runs = self
            .n_runs
            .or(object.get("n").and_then(Value::as_i64))
            .or(object.get("number").and_then(Value::as_i64));
        self.planned_rows = self.planned_rows.or(object
            .get("dataset")
            .and_then(|d| d.get("selected_source_rows"))
            .and_then(Value::as_str)
            .and_then(selector_rows));
        // `eval run` with a workflow's grader: its one score is the reward.
        if self.kind.as_deref() == Some("eval-run") && self.declared.is_empty() {
            self.declared.push("reward".to_string());
        }
        // `grade`: the grader's own threshold.
        self.pass_threshold = self.pass_threshold.or(object
            .get("grader")
            .and_then(|g| g.get("pass_threshold"))
            .and_then(Value::as_f64));
        if let Some(id) = object.get("rubric_id").and_then(Value::as_str) {
            self.declared.push(id.to_string());
        }
        if self.kind.is_none() {
            self.kind = object
                .get("kind")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        self.n_runs = self.n_runs.or(object.get("n_runs").and_then(Value::as_i64));
        self.pass_threshold = self
            .pass_threshold
            .or(object.get("pass_threshold").and_then(Value::as_f64));
        // `grade` and `reward probe` score each sample once: their n is 1 by construction.
        if matches!(self.kind.as_deref(), Some("grade" | "probe")) {
            self.n_runs = self.n_runs.or(Some(1));
        }
    }
}

pub(super) fn open(path: &Path) -> CoreResult<BufReader<File>> {
    File::open(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|e| CoreError::io(path, e))
}

fn record_error(path: &Path, line: usize, e: &serde_json::Error) -> CoreError {
    StatsError::new(format!(
        "{}:{line}: not a results record ({e}); expected {{\"row_index\": int, \"run_index\": int, \"scores\": {{name: number}}}}",
        path.display()
    ))
    .field("line")
    .into()
}

/// Finds the layout from the first non-empty line, and reads a log header.
pub fn detect(path: &Path) -> CoreResult<(Layout, Meta)> {
    let meta = Meta::default();
    for (i, line) in open(path)?.lines().enumerate() {
        let line = line.map_err(|e| CoreError::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        // A pretty-printed document's first line is not JSON on its own.
        let Ok(Value::Object(first)) = serde_json::from_str::<Value>(&line) else {
            return Ok((Layout::EvalJson, meta));
        };
        if let Some(format) = first.get("format") {
            if !format.as_str().is_some_and(|f| LOG_FORMATS.contains(&f)) {
                return Err(StatsError::new(format!(
                    "{}:{}: unknown results log format {format}; this version reads {}",
                    path.display(),
                    i + 1,
                    LOG_FORMATS.join(", ")
                ))
                .field("format")
                .into());
            }
            return Ok((Layout::Log, Meta::of_header(&first)));
        }
        if first.contains_key("row_index") {
            return Ok((Layout::Records, meta));
        }
        let layout = if first.contains_key("records") || first.contains_key("rubric_id") {
            Layout::RubricJson
        } else {
            Layout::EvalJson
        };
        return Ok((layout, meta));
    }
    // An empty file: no attempts, in the plain layout.
    Ok((Layout::Records, Meta::default()))
}

/// Lines (or rows of a document) between two calls of the caller's interruption check.
pub(super) const CHECK_EVERY: usize = 1 << 16;

/// Hands every attempt of a JSONL layout to `sink`, in file order, numbered from 0 (`base`, what the
/// log counts from, is subtracted); `Ok(false)` when the sink stopped. `interrupted` is asked every
/// [`CHECK_EVERY`] lines; `true` ends the read with `CoreError::Interrupted`. `tap`, when given, is handed
/// every line and its one parse, which serves the attempts too.
pub(crate) fn for_each_line_attempt(
    path: &Path,
    layout: Layout,
    base: u64,
    sink: &mut dyn Sink,
    interrupted: &mut dyn FnMut() -> bool,
    mut tap: Option<&mut dyn LineTap>,
) -> CoreResult<bool> {
    let mut header_pending = layout == Layout::Log;
    // Parsing borrows each line from the reader's buffer: a line costs no allocation or copy of its own.
    let mut lines = LentLines::new(open(path)?);
    let mut line_no = 0usize;
    loop {
        let buffer = lines.next_line().map_err(|e| CoreError::io(path, e))?;
        if buffer.is_empty() {
            return Ok(true);
        }
        line_no += 1;
        if line_no % CHECK_EVERY == 0 && interrupted() {
            return Err(CoreError::Interrupted);
        }
        let line = buffer.trim_ascii();
        let captured = match tap.as_deref_mut() {
            Some(tap) => {
                let captured = (!line.is_empty()).then(|| capture(line)).flatten();
                tap.line(buffer, captured.as_ref());
                captured
            }
            None => None,
        };
        if line.is_empty() {
            continue;
        }
        if header_pending {
            header_pending = false;
            continue;
        }
        // A line the shared read refused, or whose attempt it could not read, is parsed whole: the error
        // (if any) is then worded as ever.
        let mut record: RawAttempt<'_> = match captured.as_ref().map(Captured::attempt) {
            Some(Ok(record)) => record,
            _ => serde_json::from_slice(line).map_err(|e| record_error(path, line_no, &e))?,
        };
        record.run_index = record.run_index.saturating_sub(base);
        let Some(row) = record.row_index.map(|row| row.saturating_sub(base)) else {
            return Err(StatsError::new(format!(
                "{}:{line_no}: not a results record (missing field `row_index`); expected {{\"row_index\": int, \"run_index\": int, \"scores\": {{name: number}}}}",
                path.display()
            ))
            .field("row_index")
            .into());
        };
        let where_ = || format!("{}:{line_no}", path.display());
        if !sink.raw(record, row, &where_)? {
            return Ok(false);
        }
    }
}
