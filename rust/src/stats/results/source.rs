//! Reading attempts out of any results layout the package writes, streamed:
//!
//! * the results log (JSONL): a header `{"format": "osmosis-eval-log/1" | "osmosis-results/1",
//!   "kind"?, "config": {...}}`, then one run record per line;
//! * the bare JSONL of earlier versions: run records only;
//! * the eval `-o` JSON (`config`, `summary`, `rows: [{row_index, runs: [...]}]`) and the eval-rubric
//!   `-o` JSON (`rubric_id`, `number`, `records: [{record_index, runs: [...]}]`), one document read
//!   with a streaming visitor so only one row is in memory at a time.

use super::attempt::{RawAttempt, RubricRun};
use super::record_line::{capture, Captured};
use super::{LentLines, LOG_FORMATS};
use crate::error::{CoreError, CoreResult};
use crate::stats::StatsError;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::cell::RefCell;
use std::fmt;
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

    fn read_config(&mut self, config: &Value) {
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

fn open(path: &Path) -> CoreResult<BufReader<File>> {
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
const CHECK_EVERY: usize = 1 << 16;

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

/// Where a document visit stands: what it learnt and the first error the sink raised.
struct DocState<'a> {
    path: &'a Path,
    meta: Meta,
    failure: Option<CoreError>,
    sink: &'a mut dyn Sink,
    interrupted: &'a mut dyn FnMut() -> bool,
    rows: usize,
    /// Which of `rows` / `records` (runs) and `results` (an `osmosis test` file: no runs) the document has.
    has_runs: bool,
    has_test_results: bool,
}

impl DocState<'_> {
    /// Counts a row; every [`CHECK_EVERY`] rows asks whether to stop.
    fn row<E: de::Error>(&mut self) -> Result<(), E> {
        self.rows += 1;
        if self.rows % CHECK_EVERY == 0 && (self.interrupted)() {
            self.failure = Some(CoreError::Interrupted);
            return Err(E::custom("interrupted"));
        }
        Ok(())
    }

    /// Keeps a sink error (it surfaces as a serde error, which adds the line) or an early stop.
    fn keep<E: de::Error>(&mut self, outcome: CoreResult<bool>) -> Result<(), E> {
        match outcome {
            Ok(true) => Ok(()),
            Ok(false) => {
                let stop = CoreError::Protocol("a document pass cannot stop early".into());
                self.failure = Some(stop);
                Err(E::custom("stopped"))
            }
            Err(e) => {
                let text = e.to_string();
                self.failure = Some(e);
                Err(E::custom(text))
            }
        }
    }
}

struct Document<'s, 'a>(&'s RefCell<DocState<'a>>);

#[derive(Deserialize)]
struct EvalRow<'a> {
    row_index: u64,
    #[serde(borrow, default)]
    runs: Vec<RawAttempt<'a>>,
}

#[derive(Deserialize)]
struct RubricRecord {
    record_index: u64,
    #[serde(default)]
    runs: Vec<RubricRun>,
}

/// The `rows` (eval) or `records` (rubric) array, one element at a time.
struct Rows<'s, 'a> {
    state: &'s RefCell<DocState<'a>>,
    rubric: bool,
}

impl<'de> DeserializeSeed<'de> for Rows<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.rubric {
            while let Some(record) = seq.next_element::<RubricRecord>()? {
                let mut state = self.state.borrow_mut();
                state.row()?;
                for mut run in record.runs {
                    // The established document numbers records and runs from 1; rows read from 0.
                    run.run_index = run.run_index.saturating_sub(1);
                    let outcome = state
                        .sink
                        .rubric(run, record.record_index.saturating_sub(1));
                    state.keep(outcome)?;
                }
            }
        } else {
            while let Some(row) = seq.next_element::<EvalRow<'de>>()? {
                let mut state = self.state.borrow_mut();
                state.row()?;
                let where_ = || format!("row_index {}", row.row_index);
                for run in row.runs {
                    let outcome = state.sink.raw(run, row.row_index, &where_);
                    state.keep(outcome)?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Document<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an eval or eval-rubric results object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "config" => {
                    let config: Value = map.next_value()?;
                    let mut state = self.0.borrow_mut();
                    state.meta.read_config(&config);
                    state.meta.config = Some(config);
                }
                "rubric_id" => {
                    let id: Option<String> = map.next_value()?;
                    let mut state = self.0.borrow_mut();
                    state.meta.kind = Some("rubric".into());
                    state.meta.declared.extend(id);
                }
                "number" => {
                    let number: Option<i64> = map.next_value()?;
                    self.0.borrow_mut().meta.n_runs = number;
                }
                "rows" | "records" => {
                    self.0.borrow_mut().has_runs = true;
                    map.next_value_seed(Rows {
                        state: self.0,
                        rubric: key == "records",
                    })?
                }
                "results" => {
                    self.0.borrow_mut().has_test_results = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Document<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// Streams a `-o` JSON document: hands `sink` every attempt and returns what the document declares.
pub(crate) fn for_each_document_attempt(
    path: &Path,
    sink: &mut dyn Sink,
    interrupted: &mut dyn FnMut() -> bool,
) -> CoreResult<Meta> {
    let state = RefCell::new(DocState {
        path,
        meta: Meta::default(),
        failure: None,
        sink,
        interrupted,
        rows: 0,
        has_runs: false,
        has_test_results: false,
    });
    let mut de = serde_json::Deserializer::from_reader(open(path)?);
    let result = Document(&state)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    let state = state.into_inner();
    if let Err(e) = result {
        // A sink error (a StatsError from the aggregator) keeps its own kind; a parse error names the
        // position serde reports.
        if let Some(failure) = state.failure {
            // A record's own error names its row; the file and the line (where the row ends) go first.
            return Err(match failure {
                CoreError::Stats(mut stats) => {
                    stats.message =
                        format!("{}:{}: {}", state.path.display(), e.line(), stats.message);
                    CoreError::Stats(stats)
                }
                other => other,
            });
        }
        if e.is_io() {
            return Err(CoreError::Io {
                path: state.path.display().to_string(),
                source: e.into(),
            });
        }
        return Err(StatsError::new(format!(
            "{}:{}: not an eval or eval-rubric results document ({e})",
            state.path.display(),
            e.line()
        ))
        .field("line")
        .into());
    }
    if state.has_test_results && !state.has_runs {
        // Read as an eval document it would be "0 rows": say what it is instead.
        return Err(StatsError::new(format!(
            "{}: an `osmosis test` results file (`summary` and `results`: one unscored run per row), \
             not a results log or an eval / eval-rubric results JSON; its numbers are in its `summary`. \
             For a report, run `osmosis eval` with --eval-fn and report its results log",
            state.path.display()
        ))
        .into());
    }
    Ok(state.meta)
}
