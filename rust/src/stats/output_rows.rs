//! The `rows` of `osmosis eval`'s `-o` file, laid out straight from its results log: each record's public
//! run (`osmosis_ai.eval.summary._public_run`) grouped into rows in the order of
//! `osmosis_ai.eval.summary.iter_rows`, and written as `osmosis_ai._files.write_json_streamed` writes the
//! items of a list (`json_block`'s indented ASCII text, four spaces deeper), whole rows a piece.
//!
//! A record this writer cannot put byte for byte as the Python writer would (a line that is not one JSON
//! object, a field of an unexpected type, a float past the range both writers agree on) gives
//! [`Piece::Unrendered`]: the caller then writes the whole file the Python way, which also reports any
//! error the same way.

use crate::atif::json_text::{indented_ascii, new_line};
use crate::atif::json_tree::{Json, Obj};
use crate::stats::{blank, object_members, LentLines};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, BufRead};

/// About how much text a piece holds (whole rows: a piece never ends inside a value).
const PIECE: usize = 1 << 16;

/// One step of the writer.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// The next rows' text: each row's separator (`[\n    ` before the first, `,\n    ` before the
    /// others) and the row.
    Text(Vec<u8>),
    /// Every row is written.
    End,
    /// A record the writer cannot write as the Python writer would; nothing more comes.
    Unrendered,
}

/// A run's key in its row: `(model_tag or "", run_index)`, sorted as Python sorts the tuples.
type RunKey = (String, i64);

/// A record line's members the rows read ([`FIELDS`]), or `None` when it is not one JSON object.
pub type Members<'l> = Option<[Option<Json<'l>>; FIELDS.len()]>;

/// Where [`FIELDS`] puts a member of a record line.
pub fn field_place(key: &str) -> Option<usize> {
    FIELDS.iter().position(|field| *field == key)
}

/// The rows laid out from a results log's lines, handed one at a time (line 1, the header, is skipped:
/// the caller checked it): by the pull reader [`OutputRows`], or by the result model's own pass over the
/// log (`crate::stats::rows_spool`).
pub struct RowsLayout {
    runs_per_row: usize,
    with_tags: bool,
    /// Rows mentioned and not yet written, each run's text by its key.
    pending: HashMap<i64, BTreeMap<RunKey, Vec<u8>>>,
    /// The rows of `pending` in the order the log first mentions them.
    order: VecDeque<i64>,
    /// About how much memory `pending` holds (its texts and a fixed cost per run).
    waiting: usize,
    line_no: usize,
    /// The log is read (its end, or a line a crash cut short, which is never read): what is left of
    /// `pending` comes next.
    pub read_all: bool,
    /// Rows written so far.
    pub rows: usize,
}

impl RowsLayout {
    pub fn new(runs_per_row: usize, with_tags: bool) -> Self {
        RowsLayout {
            runs_per_row,
            with_tags,
            pending: HashMap::new(),
            order: VecDeque::new(),
            waiting: 0,
            line_no: 0,
            read_all: false,
            rows: 0,
        }
    }

    /// Takes the log's next line (with its newline; without one, the log is read) and writes into `out`
    /// the rows it completes; `members` reads a record line. `false` at a record the writer cannot write
    /// as the Python writer would.
    pub fn line<'l>(
        &mut self,
        line: &[u8],
        members: impl FnOnce() -> Members<'l>,
        out: &mut Vec<u8>,
    ) -> bool {
        if self.read_all {
            return true;
        }
        if line.last() != Some(&b'\n') {
            self.read_all = true;
            return true;
        }
        self.line_no += 1;
        if self.line_no == 1 || blank(line) {
            return true;
        }
        let Some(run) = members().and_then(|found| public_run(found, self.with_tags)) else {
            return false;
        };
        self.take_run(run, out);
        true
    }

    /// Once the log is read: writes the next row left (incomplete, in the order first mentioned);
    /// `false` when none is left.
    pub fn next_left(&mut self, out: &mut Vec<u8>) -> bool {
        match self.order.pop_front() {
            Some(index) => {
                self.write_row(index, out);
                true
            }
            None => false,
        }
    }

    /// Adds a line's run; writes the rows it completes.
    fn take_run(&mut self, (row, key, text): (i64, RunKey, Vec<u8>), out: &mut Vec<u8>) {
        if self.runs_per_row <= 1 && self.order.is_empty() {
            // A row of one run with no row waiting before it: complete, and written as it comes.
            self.write_runs(row, [&text], out);
            return;
        }
        if !self.pending.contains_key(&row) {
            self.order.push_back(row);
        }
        let runs = self.pending.entry(row).or_default();
        self.waiting += run_cost(&text);
        if let Some(replaced) = runs.insert(key, text) {
            self.waiting -= run_cost(&replaced);
        }
        let complete = runs.len() >= self.runs_per_row;
        if !complete || self.order.front() != Some(&row) {
            return; // the oldest row still waits (this one is another, or incomplete)
        }
        while let Some(&oldest) = self.order.front() {
            if self.pending[&oldest].len() < self.runs_per_row {
                break;
            }
            self.order.pop_front();
            self.write_row(oldest, out);
        }
    }

    /// `{"row_index": index, "runs": [...]}` two levels deep, after its separator in the list.
    fn write_row(&mut self, index: i64, out: &mut Vec<u8>) {
        let runs = self.pending.remove(&index).unwrap_or_default();
        self.waiting -= runs.values().map(|text| run_cost(text)).sum::<usize>();
        self.write_runs(index, runs.values(), out);
    }

    /// About how many bytes the runs of rows not yet written hold.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// The row `index` of `runs` (their texts, in order), after its separator in the list.
    fn write_runs<'t>(
        &mut self,
        index: i64,
        runs: impl IntoIterator<Item = &'t Vec<u8>>,
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(if self.rows == 0 { b"[" } else { b"," });
        self.rows += 1;
        new_line(out, 2);
        out.push(b'{');
        new_line(out, 3);
        out.extend_from_slice(format!("\"row_index\": {index},").as_bytes());
        new_line(out, 3);
        out.extend_from_slice(b"\"runs\": [");
        // One run is written as it is; several in the order of their keys (BTreeMap's order).
        for (i, text) in runs.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            new_line(out, 4);
            out.extend_from_slice(text);
        }
        new_line(out, 3);
        out.push(b']');
        new_line(out, 2);
        out.push(b'}');
    }
}

/// What a waiting run holds: its text, its key and its places in the maps (about).
fn run_cost(text: &[u8]) -> usize {
    text.len() + 96
}

/// The writer over a results log's lines (line 1, the header, is skipped: the caller checked it).
pub struct OutputRows<R: BufRead> {
    lines: LentLines<R>,
    layout: RowsLayout,
    stopped: bool,
}

impl<R: BufRead> OutputRows<R> {
    pub fn new(reader: R, runs_per_row: usize, with_tags: bool) -> Self {
        OutputRows {
            lines: LentLines::new(reader),
            layout: RowsLayout::new(runs_per_row, with_tags),
            stopped: false,
        }
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.layout.rows
    }

    /// The next piece of the list's text.
    pub fn next_piece(&mut self) -> io::Result<Piece> {
        if self.stopped {
            return Ok(Piece::End);
        }
        let mut out = Vec::with_capacity(PIECE + 4096);
        while out.len() < PIECE {
            if self.layout.read_all {
                if !self.layout.next_left(&mut out) {
                    break;
                }
                continue;
            }
            let line = self.lines.next_line()?;
            let members = || object_members(line, field_place);
            if !self.layout.line(line, members, &mut out) {
                self.stopped = true;
                return Ok(Piece::Unrendered);
            }
        }
        if out.is_empty() {
            self.stopped = true;
            return Ok(Piece::End);
        }
        Ok(Piece::Text(out))
    }
}

/// A record's row index, run key and public run text (four levels deep), or None.
fn public_run(
    members: [Option<Json<'_>>; FIELDS.len()],
    with_tags: bool,
) -> Option<(i64, RunKey, Vec<u8>)> {
    let [row, run_index, model_tag, success, scores, duration, tokens, error, eval_errors] =
        members;
    let row = row?.as_i64()?;
    let run_index = run_index?;
    let model_tag = model_tag.filter(Json::truthy);
    let tag = match &model_tag {
        Some(tag) => tag.as_str()?,
        None => "",
    };
    let key = (tag.to_string(), run_index.as_i64()?);
    let mut run = Obj::new();
    run.insert("run_index", run_index);
    run.insert("success", success?);
    let no_scores = || Json::Object(Obj::new());
    run.insert(
        "scores",
        scores.filter(Json::truthy).unwrap_or_else(no_scores),
    );
    run.insert("duration_ms", duration.unwrap_or(Json::Float(0.0)));
    run.insert("tokens", tokens.unwrap_or(Json::Int(0)));
    for (name, value) in [("error", error), ("eval_errors", eval_errors)] {
        if let Some(value) = value.filter(Json::truthy) {
            run.insert(name, value);
        }
    }
    if with_tags {
        run.insert("model_tag", model_tag.unwrap_or(Json::from("primary")));
    }
    let mut out = Vec::with_capacity(256);
    indented_ascii(&Json::Object(run), 4, &mut out).then_some((row, key, out))
}

/// The record fields a public run is made of, in the order [`public_run`] takes them (Python's reader of the rows
/// reads them as `_core.EVAL_ROW_FIELDS`).
pub const FIELDS: [&str; 9] = [
    "row_index",
    "run_index",
    "model_tag",
    "success",
    "scores",
    "duration_ms",
    "tokens",
    "error",
    "eval_errors",
];

#[cfg(test)]
mod tests {
    use super::{OutputRows, Piece};

    fn pieces(log: &str, runs_per_row: usize, with_tags: bool) -> (String, usize) {
        let mut rows = OutputRows::new(log.as_bytes(), runs_per_row, with_tags);
        let mut text = String::new();
        loop {
            match rows.next_piece().unwrap() {
                Piece::Text(t) => text.push_str(std::str::from_utf8(&t).unwrap()),
                Piece::End => return (text, rows.rows()),
                Piece::Unrendered => return ("UNRENDERED".into(), rows.rows()),
            }
        }
    }

    #[test]
    fn rows_in_first_mention_order_runs_sorted() {
        let log = concat!(
            "{\"format\":\"osmosis-results/1\"}\n",
            "{\"row_index\":1,\"run_index\":1,\"success\":true,\"scores\":{\"f\":1.0},\"duration_ms\":2.5,\"tokens\":3}\n",
            "\n",
            "{\"row_index\":0,\"run_index\":0,\"success\":false,\"scores\":null,\"error\":\"bad \\u00e9\"}\n",
            "{\"row_index\":1,\"run_index\":0,\"success\":true,\"scores\":{},\"eval_errors\":{}}\n",
            "{\"row_index\":2,\"run_index\":0,\"success\":true}",
        );
        let (text, rows) = pieces(log, 2, false);
        assert_eq!(rows, 2); // the torn last line is never read
        let expected = concat!(
            "[\n    {\n      \"row_index\": 1,\n      \"runs\": [\n",
            "        {\n          \"run_index\": 0,\n          \"success\": true,\n          \"scores\": {},\n",
            "          \"duration_ms\": 0.0,\n          \"tokens\": 0\n        },\n",
            "        {\n          \"run_index\": 1,\n          \"success\": true,\n          \"scores\": {\n",
            "            \"f\": 1.0\n          },\n          \"duration_ms\": 2.5,\n          \"tokens\": 3\n        }\n",
            "      ]\n    }",
            ",\n    {\n      \"row_index\": 0,\n      \"runs\": [\n",
            "        {\n          \"run_index\": 0,\n          \"success\": false,\n          \"scores\": {},\n",
            "          \"duration_ms\": 0.0,\n          \"tokens\": 0,\n          \"error\": \"bad \\u00e9\"\n        }\n",
            "      ]\n    }",
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn hands_back_what_it_cannot_write() {
        for line in [
            "[1]",
            "{\"row_index\":1.0,\"run_index\":0,\"success\":true}",
            "{\"row_index\":1,\"run_index\":0}",
            "{\"row_index\":1,\"run_index\":0,\"success\":true,\"duration_ms\":1e-7}",
            "{\"row_index\":1,\"run_index\":0,\"success\":true,\"model_tag\":5}",
        ] {
            let log = format!("{{}}\n{line}\n");
            assert_eq!(pieces(&log, 1, true).0, "UNRENDERED", "{line}");
        }
    }
}
