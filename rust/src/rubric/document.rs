//! The `records` of `osmosis eval rubric`'s `-o` document (0.3's layout), laid out from the dataset and
//! the results log as `osmosis_ai.rubric.document` does (`record_runs` with `names_only`, `record_row`,
//! `record_0_3`) and written as `osmosis_ai._files.write_json_streamed` writes a list's items (`json_block`'s
//! indented text with `ensure_ascii=False`, four spaces deeper), whole records a piece; with each piece
//! the console report of its records ([`super::console`]) and, over the pass, the judge health the
//! document's tail counts.
//!
//! A record this writer cannot put byte for byte as Python would (a dataset line or a log line it does
//! not read as Python does, a field of an unexpected type, a float past the range both writers agree on)
//! gives [`Piece::Unrendered`]: the caller then writes the whole file the Python way, which also reports
//! any error the same way.

use super::console::{number, python_str, record_text, Statistics};
pub use super::figures::Health;
use super::figures::{count, moments, statistics};
use crate::atif::json_text::{indented, new_line};
use crate::atif::json_tree::{Json, Obj};
use crate::dataset::python_space;
use crate::stats::{
    blank, latest_lines, latest_run_head, object_members, project_object, LineReader,
};
use serde::Deserialize;
use serde_json::Value;
use std::io::{self, BufRead};
use std::path::Path;

/// About how much document text a piece holds (whole records: a piece never ends inside a value).
const PIECE: usize = 1 << 16;

/// The per-run fields of the established results document, in its order (Python's
/// `osmosis_ai.rubric.engine.RUN_FIELDS` reads them as `_core.RUBRIC_RUN_FIELDS`).
pub const RUN_FIELDS: [&str; 18] = [
    "run_index",
    "status",
    "started_at",
    "completed_at",
    "duration_seconds",
    "score",
    "explanation",
    "preview",
    "error",
    "raw",
    "raw_score",
    "clamped",
    "unscored_reason",
    "error_kind",
    "attempts",
    "retries",
    "parse_failures",
    "usage",
];

/// The place of `key` in [`RUN_FIELDS`].
pub(super) fn run_field(key: &str) -> Option<usize> {
    Some(match key {
        "run_index" => 0,
        "status" => 1,
        "started_at" => 2,
        "completed_at" => 3,
        "duration_seconds" => 4,
        "score" => 5,
        "explanation" => 6,
        "preview" => 7,
        "error" => 8,
        "raw" => 9,
        "raw_score" => 10,
        "clamped" => 11,
        "unscored_reason" => 12,
        "error_kind" => 13,
        "attempts" => 14,
        "retries" => 15,
        "parse_failures" => 16,
        "usage" => 17,
        _ => return None,
    })
}

/// One step of the writer.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// The next records: their text in the list (each after its separator, `[\n    ` before the first
    /// and `,\n    ` before the others), their console report (records joined by newlines; empty
    /// without a report) and how many records they are.
    Records {
        text: Vec<u8>,
        report: String,
        records: usize,
    },
    /// Every record is written.
    End,
    /// A record the writer cannot write as Python would; nothing more comes.
    Unrendered,
}

/// The writer over a chat dataset's lines and the latest runs of its results log.
pub struct RubricDocument<D: BufRead> {
    dataset: D,
    log: Option<(LineReader, std::vec::IntoIter<u64>)>,
    report: bool,
    fields: Vec<String>,
    line: Vec<u8>,
    /// The next log line, read ahead (empty: none), and its row.
    ahead: Vec<u8>,
    ahead_row: i64,
    /// The current record's run lines (the first `taken`).
    runs: Vec<Vec<u8>>,
    taken: usize,
    unreadable: bool,
    stopped: bool,
    /// Records laid out so far (also those of a piece not handed out).
    pub records: usize,
    pub health: Health,
}

enum Step<T> {
    Next(T),
    End,
    Bad,
}

impl<D: BufRead> RubricDocument<D> {
    /// The writer of `dataset`'s records with the runs of the results log at `log` (None: no runs), a log
    /// numbered from 0 whose header the caller checked; `number` runs a record. `report`: make each
    /// piece's console report too.
    pub fn new(dataset: D, log: Option<&Path>, number: u32, report: bool) -> io::Result<Self> {
        let mut unreadable = false;
        let log = match log {
            Some(path) => match latest_lines(path, Some(number))? {
                Some(found) => Some((LineReader::open(path)?, found.offsets.into_iter())),
                None => {
                    unreadable = true; // not in the engine's form: Python's pass reads it
                    None
                }
            },
            None => None,
        };
        Ok(RubricDocument {
            dataset,
            log,
            report,
            fields: vec!["id".into(), "conversation_id".into()],
            line: Vec::with_capacity(4096),
            ahead: Vec::with_capacity(4096),
            ahead_row: 0,
            runs: Vec::new(),
            taken: 0,
            unreadable,
            stopped: false,
            records: 0,
            health: Health::default(),
        })
    }

    /// The next piece of the list's text.
    pub fn next_piece(&mut self) -> io::Result<Piece> {
        if self.stopped {
            return Ok(Piece::End);
        }
        if self.unreadable {
            self.stopped = true;
            return Ok(Piece::Unrendered);
        }
        let mut text = Vec::with_capacity(PIECE + 8192);
        let mut report = String::new();
        let mut records = 0;
        while text.len() < PIECE {
            let label = match self.next_label()? {
                Step::Next(label) => label,
                Step::End => break,
                Step::Bad => return Ok(self.unrendered()),
            };
            match self.take_runs()? {
                Step::Next(()) => {}
                Step::End => unreachable!("take_runs ends no pass"),
                Step::Bad => return Ok(self.unrendered()),
            }
            if self.report && records > 0 {
                report.push('\n');
            }
            if self.write_record(&label, &mut text, &mut report).is_none() {
                return Ok(self.unrendered());
            }
            records += 1;
        }
        if records == 0 {
            self.stopped = true;
            return Ok(Piece::End);
        }
        Ok(Piece::Records {
            text,
            report,
            records,
        })
    }

    fn unrendered(&mut self) -> Piece {
        self.stopped = true;
        Piece::Unrendered
    }

    /// The label of the dataset's next record (`RecordSource.chat_labels`).
    fn next_label(&mut self) -> io::Result<Step<String>> {
        loop {
            self.line.clear();
            if self.dataset.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(Step::End);
            }
            if !blank(&self.line) {
                break;
            }
        }
        let Some(found) = project_object(&self.line, &self.fields) else {
            return Ok(Step::Bad);
        };
        // data.get("id", data.get("conversation_id")), a repeated key's last value.
        let named = |field| found.iter().rev().find(|(at, _)| *at == field);
        let value = named(0).or_else(|| named(1)).map(|(_, value)| value);
        let text = match value {
            None | Some(Value::Null) => String::new(),
            // A label is `str()` of the value, as the console report's values are (a null is no label).
            Some(value) => match Json::deserialize(value).ok().as_ref().and_then(python_str) {
                Some(text) => text.trim_matches(python_space).to_string(),
                None => return Ok(Step::Bad),
            },
        };
        let index = self.records + 1;
        Ok(Step::Next(if text.is_empty() {
            format!("record[{index}]")
        } else {
            text
        }))
    }

    /// Reads the current record's latest runs (the log's lines of its row, in run order).
    fn take_runs(&mut self) -> io::Result<Step<()>> {
        self.taken = 0;
        let row = self.records as i64;
        let Some((reader, offsets)) = self.log.as_mut() else {
            return Ok(Step::Next(()));
        };
        loop {
            if self.ahead.is_empty() {
                let Some(offset) = offsets.next() else {
                    return Ok(Step::Next(()));
                };
                reader.line_at(offset, &mut self.ahead)?;
                if self.ahead.is_empty() {
                    return Ok(Step::Next(()));
                }
                match latest_run_head(&self.ahead) {
                    Some((at, _)) => self.ahead_row = at,
                    None => return Ok(Step::Bad),
                }
            }
            if self.ahead_row > row {
                return Ok(Step::Next(()));
            }
            if self.ahead_row == row {
                if self.taken == self.runs.len() {
                    self.runs.push(Vec::new());
                }
                std::mem::swap(&mut self.runs[self.taken], &mut self.ahead);
                self.taken += 1;
            }
            self.ahead.clear();
        }
    }

    /// Lays out the current record (its label, its runs read) after its separator; None when it cannot.
    fn write_record(&mut self, label: &str, out: &mut Vec<u8>, report: &mut String) -> Option<()> {
        let row = self.records as i64;
        let mut parsed = Vec::with_capacity(self.taken);
        for line in &self.runs[..self.taken] {
            let record = RunLine::parse(line)?;
            // The row the record says (a repeated key's last) is the one the line's head gave.
            (record.row.as_ref()?.as_i64()? == row).then_some(())?;
            parsed.push(record);
        }
        let mut runs: Vec<Obj<'_>> = Vec::with_capacity(parsed.len());
        for record in &parsed {
            let found = &record.fields;
            let mut run = Obj::new();
            run.push(
                "run_index",
                Json::Int(found[0].as_ref()?.as_i64()?.checked_add(1)?),
            );
            for (name, value) in RUN_FIELDS.iter().zip(found).skip(1) {
                run.push(*name, value.as_ref().map_or(Json::Null, Json::Ref));
            }
            runs.push(run);
        }
        let mut health = self.health;
        let (mut scores, mut values, mut explanations, mut errors) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut unscored = 0;
        for run in &runs {
            count(&mut health, run)?;
            let status = run.get("status")?;
            let score = run.get("score")?;
            if status.as_str() == Some("success") && !score.is_null() {
                values.push(number(score)?);
                scores.push(score.clone());
                explanations.push(
                    Some(run.get("explanation")?)
                        .filter(|e| e.truthy())
                        .map_or(Json::from(""), |e| e.clone()),
                );
            } else {
                unscored += usize::from(status.as_str() == Some("unscored"));
                let error = ["error", "unscored_reason"]
                    .iter()
                    .filter_map(|name| run.get(name))
                    .find(|value| value.truthy())
                    .unwrap_or(status);
                errors.push(error.clone());
            }
        }
        let stats = Statistics {
            moments: moments(&values)?,
            total_runs: runs.len(),
            success_count: values.len(),
            unscored_count: unscored,
        };
        if self.report {
            record_text(label, &runs, &stats, report)?;
        }
        let index = Json::Int(row + 1);
        let mut record = Obj::new();
        record.push("index", index.clone());
        record.push("label", Json::from(label));
        record.push("scores", Json::Array(scores));
        record.push("explanations", Json::Array(explanations));
        record.push("errors", Json::Array(errors));
        record.push("statistics", statistics(&stats));
        record.push("record_index", index);
        record.push(
            "runs",
            Json::Array(runs.into_iter().map(Json::Object).collect()),
        );
        out.extend_from_slice(if self.records == 0 { b"[" } else { b"," });
        new_line(out, 2);
        indented(&Json::Object(record), 2, out).then_some(())?;
        self.health = health;
        self.records += 1;
        Some(())
    }
}

/// The members of a log line the document shows: its [`RUN_FIELDS`] by their place there and its
/// `row_index`, each a repeated key's last value (as the line's `Json` object has it); the other members
/// are read through as strictly (a line either reader refuses is refused) and not built.
pub(super) struct RunLine<'a> {
    pub(super) fields: [Option<Json<'a>>; RUN_FIELDS.len()],
    pub(super) row: Option<Json<'a>>,
}

impl<'a> RunLine<'a> {
    /// The line's members, or None when it is not one JSON object.
    pub(super) fn parse(line: &'a [u8]) -> Option<RunLine<'a>> {
        const ROW: usize = RUN_FIELDS.len();
        let place = |key: &str| run_field(key).or((key == "row_index").then_some(ROW));
        let [fields @ .., row] = object_members::<{ ROW + 1 }>(line, place)?;
        Some(RunLine { fields, row })
    }
}
