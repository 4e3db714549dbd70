//! The validation pass: every row checked, every problem reported (up to a cap), nothing handed to Python.

use super::contract::{Contract, FieldProblem, ValueKind};
use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::jsonl::{is_blank, line_text, line_too_long, max_line_bytes, parse_error};
use super::parquet_source::ParquetSource;
use super::scan::{self, Scanned};
use super::shape::{self, Shape};
use super::{empty_file, open_source, Format, RowSource, Source};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// What a validation pass found.
#[derive(Debug, Clone)]
pub struct ValidationReport {
    pub path: String,
    pub format: Format,
    /// Rows in the file (blank lines not counted; a row that failed to parse counts).
    pub rows: u64,
    /// Column names in order of first appearance.
    pub columns: Vec<String>,
    /// The first `max_problems` problems, in file order.
    pub problems: Vec<DatasetError>,
    /// All problems found, including those past the cap.
    pub total_problems: u64,
    /// Rows with at least one problem.
    pub bad_rows: u64,
}

struct Collector {
    path: String,
    contract: Contract,
    unit: PositionUnit,
    max_problems: usize,
    report: ValidationReport,
}

impl Collector {
    fn empty_like(&self) -> Collector {
        Collector {
            path: self.path.clone(),
            contract: self.contract,
            unit: self.unit,
            max_problems: self.max_problems,
            report: ValidationReport {
                path: self.report.path.clone(),
                format: self.report.format,
                rows: 0,
                columns: Vec::new(),
                problems: Vec::new(),
                total_problems: 0,
                bad_rows: 0,
            },
        }
    }

    /// Appends the report of a later part of the file whose lines and rows were counted from its start.
    fn merge(&mut self, part: ValidationReport, line_offset: u64, row_offset: u64) {
        let columns = part.columns;
        self.note_columns(columns.iter().map(String::as_str));
        self.report.rows += part.rows;
        self.report.bad_rows += part.bad_rows;
        self.report.total_problems += part.total_problems - part.problems.len() as u64;
        for mut problem in part.problems {
            problem.line = problem.line.map(|l| l + line_offset);
            problem.row = problem.row.map(|r| r + row_offset);
            self.add(problem);
        }
    }

    fn add(&mut self, problem: DatasetError) {
        self.report.total_problems += 1;
        if self.report.problems.len() < self.max_problems {
            self.report.problems.push(problem);
        }
    }

    fn note_columns<'k>(&mut self, keys: impl Iterator<Item = &'k str>) {
        let columns = &mut self.report.columns;
        for (i, key) in keys.enumerate() {
            let key = self.contract.output_key(key).unwrap_or(key);
            let known =
                columns.get(i).is_some_and(|c| c == key) || columns.iter().any(|c| c == key);
            if !known {
                columns.push(key.to_owned());
            }
        }
    }

    fn row_problems(&mut self, line: u64, index: u64, problems: Vec<FieldProblem>) {
        self.report.rows += 1;
        if problems.is_empty() {
            return;
        }
        self.report.bad_rows += 1;
        for p in problems {
            let err = DatasetError::new(DatasetErrorKind::Validation, &self.path, p.message)
                .at(self.unit, line, Some(index))
                .field(p.field.as_deref());
            self.add(err);
        }
    }

    fn object(&mut self, line: u64, index: u64, entries: &[(&str, ValueKind)]) {
        self.note_columns(entries.iter().map(|(k, _)| *k));
        let problems = self.contract.check(entries);
        self.row_problems(line, index, problems);
    }

    fn other(&mut self, line: u64, index: u64, kind: ValueKind) {
        self.row_problems(line, index, vec![Contract::check_non_object(kind)]);
    }

    fn unparsable_row(&mut self, err: DatasetError) {
        self.report.rows += 1;
        self.report.bad_rows += 1;
        self.add(err);
    }
}

/// Checks every row of `path` against `contract`; keeps the first `max_problems` problems.
///
/// Errors only when the file cannot be read at all (missing, unreadable, unsupported, a corrupt Parquet
/// footer); everything wrong inside the file is a problem in the report.
pub fn validate_file(
    path: &str,
    contract: Contract,
    max_problems: usize,
) -> DatasetResult<ValidationReport> {
    let format = Format::from_path(path)?;
    let mut c = Collector {
        path: path.to_owned(),
        contract,
        unit: format.unit(),
        max_problems,
        report: ValidationReport {
            path: path.to_owned(),
            format,
            rows: 0,
            columns: Vec::new(),
            problems: Vec::new(),
            total_problems: 0,
            bad_rows: 0,
        },
    };
    if format == Format::Jsonl {
        super::check_file(path)?;
        let size = std::fs::metadata(path)
            .map_err(|e| DatasetError::io(path, &e))?
            .len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS);
        let chunks = if size < PARALLEL_MIN_BYTES {
            1
        } else {
            threads
        };
        validate_jsonl(path, &mut c, size, chunks)?;
    } else {
        match open_source(path, format, 0)? {
            Source::Rows(source) => validate_rows(source, &mut c)?,
            Source::Columns(source) => validate_parquet(*source, &mut c)?,
        }
    }
    if c.report.rows == 0 && c.report.total_problems == 0 {
        c.add(empty_file(path, format));
    }
    Ok(c.report)
}

fn is_fatal(err: &DatasetError) -> bool {
    matches!(
        err.kind,
        DatasetErrorKind::NotFound | DatasetErrorKind::Io(_)
    )
}

/// Files smaller than this are checked on one thread.
const PARALLEL_MIN_BYTES: u64 = 16 << 20;
const MAX_THREADS: usize = 4;

/// JSONL in `chunks` byte ranges checked on as many threads, merged in file order.
fn validate_jsonl(path: &str, c: &mut Collector, size: u64, chunks: usize) -> DatasetResult<()> {
    if chunks <= 1 {
        validate_jsonl_range(path, c, 0, u64::MAX)?;
        return Ok(());
    }
    let bounds: Vec<u64> = (0..=chunks as u64)
        .map(|k| size * k / chunks as u64)
        .collect();
    let results: Vec<DatasetResult<(Collector, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let (start, end) = (w[0], if w[1] == size { u64::MAX } else { w[1] });
                let mut part = c.empty_like();
                scope.spawn(move || {
                    let lines = validate_jsonl_range(path, &mut part, start, end)?;
                    Ok((part, lines))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("validation thread panicked"))
            .collect()
    });
    let (mut line_offset, mut row_offset) = (0u64, 0u64);
    for result in results {
        // A range's error counts lines from the range's start, like its problems before the merge.
        let (part, lines) = result.map_err(|mut e| {
            e.line = e.line.map(|l| l + line_offset);
            e
        })?;
        c.merge(part.report, line_offset, row_offset);
        line_offset += lines;
        row_offset = c.report.rows;
    }
    Ok(())
}

/// Bytes read at a time by a validation thread; a block stays in cache between the UTF-8 check and the
/// scan. A longer line grows the buffer.
const BLOCK: usize = 256 << 10;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// JSONL lines starting in `start..end`: shapes only, no values built. Returns the lines read.
///
/// The file is read in blocks of whole lines; each block gets one UTF-8 check, then the fast scanner
/// ([`scan::scan_line`]) runs over it. A line the scanner does not vouch for, or every line of a block
/// that is not UTF-8, goes through the serde path ([`check_line`]), which owns every message.
fn validate_jsonl_range(path: &str, c: &mut Collector, start: u64, end: u64) -> DatasetResult<u64> {
    let io = |e: std::io::Error| DatasetError::io(path, &e);
    let mut file = File::open(path).map_err(io)?;
    // File offset of `buf[0]`. A range after the first starts one byte early and drops the tail of the
    // line that began before it (just its newline if one ends at `start - 1`).
    let mut base = start.saturating_sub(1);
    if start > 0 {
        file.seek(SeekFrom::Start(base)).map_err(io)?;
    }
    let mut skip_partial = start > 0;
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0usize;
    let (mut line, mut index) = (0u64, 0u64);
    loop {
        let eof = fill(&mut file, &mut buf, &mut filled).map_err(io)?;
        let data = &buf[..filled];
        let whole = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', data) {
                Some(p) => p + 1,
                None => {
                    // A line longer than the buffer: grow it and read on, up to the line-length limit
                    // (checked per block: a shorter limit than one block is enforced by the readers).
                    let limit = max_line_bytes();
                    if filled as u64 > limit {
                        return Err(line_too_long(path, line + 1, limit));
                    }
                    buf.resize(buf.len() * 2, 0);
                    continue;
                }
            }
        };
        let mut pos = 0;
        if skip_partial {
            match memchr::memchr(b'\n', &data[..whole]) {
                Some(p) => {
                    pos = p + 1;
                    skip_partial = false;
                }
                None => pos = whole,
            }
        }
        let stop = usize::try_from(end.saturating_sub(base)).unwrap_or(usize::MAX);
        let block = Block {
            path,
            data: &data[..whole],
            stop,
            bom_possible: start == 0,
        };
        let done = block.check(c, pos, &mut line, &mut index);
        buf.copy_within(whole..filled, 0);
        filled -= whole;
        base += whole as u64;
        if eof || done {
            return Ok(line);
        }
    }
}

/// Reads until `buf` is full or the file ends; true at the end of the file.
fn fill(file: &mut File, buf: &mut [u8], filled: &mut usize) -> std::io::Result<bool> {
    while *filled < buf.len() {
        match file.read(&mut buf[*filled..]) {
            Ok(0) => return Ok(true),
            Ok(n) => *filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// Whole lines of a range's block; lines starting at or past `stop` belong to the next range.
struct Block<'b> {
    path: &'b str,
    data: &'b [u8],
    stop: usize,
    bom_possible: bool,
}

impl Block<'_> {
    /// Checks the lines from `pos`; true once a line at or past `stop` is reached.
    fn check(&self, c: &mut Collector, mut pos: usize, line: &mut u64, index: &mut u64) -> bool {
        let Ok(text) = simdutf8::basic::from_utf8(&self.data[pos..]) else {
            return self.check_slowly(c, pos, line, index);
        };
        let base = pos;
        let mut entries = Vec::with_capacity(16);
        let mut at = 0;
        while at < text.len() {
            if base + at >= self.stop {
                return true;
            }
            *line += 1;
            let from = if *line == 1 && self.bom_possible && text[at..].starts_with('\u{feff}') {
                at + BOM.len()
            } else {
                at
            };
            entries.clear();
            match scan::scan_line(text, from, &mut entries) {
                Some((Scanned::Blank, next)) => at = next,
                Some((Scanned::Object, next)) => {
                    c.object(*line, *index, &entries);
                    *index += 1;
                    at = next;
                }
                Some((Scanned::Other(kind), next)) => {
                    c.other(*line, *index, kind);
                    *index += 1;
                    at = next;
                }
                None => {
                    let next = line_end(text.as_bytes(), at);
                    check_line(self.path, c, *line, index, &text.as_bytes()[from..next]);
                    at = next;
                }
            }
        }
        pos = base + at;
        pos >= self.stop
    }

    /// A block that is not all UTF-8: every line through the serde path.
    fn check_slowly(
        &self,
        c: &mut Collector,
        mut pos: usize,
        line: &mut u64,
        index: &mut u64,
    ) -> bool {
        while pos < self.data.len() {
            if pos >= self.stop {
                return true;
            }
            *line += 1;
            let next = line_end(self.data, pos);
            let mut bytes = &self.data[pos..next];
            if *line == 1 && self.bom_possible {
                bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
            }
            check_line(self.path, c, *line, index, bytes);
            pos = next;
        }
        pos >= self.stop
    }
}

/// The offset just past the newline ending the line at `pos` (or the end of `data`).
fn line_end(data: &[u8], pos: usize) -> usize {
    memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |p| pos + p + 1)
}

/// One line (BOM already dropped, line break still on) through the serde path.
fn check_line(path: &str, c: &mut Collector, line: u64, index: &mut u64, bytes: &[u8]) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if is_blank(bytes) {
        return;
    }
    let row = *index;
    *index += 1;
    let text = match line_text(path, line, row, bytes) {
        Ok(text) => text,
        Err(err) => return c.unparsable_row(err),
    };
    match shape::parse(text) {
        Ok(Shape::Object(owned)) => {
            let entries: Vec<(&str, ValueKind)> =
                owned.iter().map(|(k, v)| (k.as_ref(), *v)).collect();
            c.object(line, row, &entries);
        }
        Ok(Shape::Other(kind)) => c.other(line, row, kind),
        Err(err) => c.unparsable_row(parse_error(path, line, row, &err)),
    }
}

/// Rows decoded per chunk by the Parquet pass.
const PARQUET_CHUNK: usize = 4096;

/// Parquet: each row's cells checked where they were decoded, column by column, with no row built.
/// A file that cannot be decoded past some row ends the pass there (the format cannot resynchronise).
fn validate_parquet(mut source: ParquetSource, c: &mut Collector) -> DatasetResult<()> {
    loop {
        match source.next_chunk(PARQUET_CHUNK) {
            Ok(None) => return Ok(()),
            Ok(Some(batch)) => {
                let mut entries = Vec::with_capacity(batch.keys.len());
                for row in 0..batch.len() {
                    batch.entries(row, &mut entries);
                    let index = batch.first_index + row as u64;
                    c.object(index + 1, index, &entries);
                }
            }
            Err(err) if is_fatal(&err) => return Err(err),
            Err(err) => {
                if err.row.is_some() {
                    c.unparsable_row(err);
                } else {
                    c.add(err);
                }
                return Ok(());
            }
        }
    }
}

/// JSON, CSV: rows as values from the format's source.
fn validate_rows(mut source: Box<dyn RowSource>, c: &mut Collector) -> DatasetResult<()> {
    loop {
        match source.next_row() {
            Ok(None) => return Ok(()),
            Ok(Some(raw)) => match &raw.value {
                serde_json::Value::Object(map) => {
                    let entries: Vec<(&str, ValueKind)> = map
                        .iter()
                        .map(|(k, v)| (k.as_str(), ValueKind::of(v)))
                        .collect();
                    c.object(raw.line, raw.index, &entries);
                }
                other => c.other(raw.line, raw.index, ValueKind::of(other)),
            },
            Err(err) if is_fatal(&err) => return Err(err),
            Err(err) => {
                let resumable = err.row.is_some();
                if err.row.is_some() {
                    c.unparsable_row(err);
                } else {
                    c.add(err);
                }
                if !resumable {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn collector(path: &str, max: usize) -> Collector {
        let format = Format::Jsonl;
        Collector {
            path: path.to_owned(),
            contract: Contract::Eval,
            unit: format.unit(),
            max_problems: max,
            report: ValidationReport {
                path: path.to_owned(),
                format,
                rows: 0,
                columns: Vec::new(),
                problems: Vec::new(),
                total_problems: 0,
                bad_rows: 0,
            },
        }
    }

    fn report_with_chunks(path: &str, chunks: usize, max: usize) -> ValidationReport {
        let mut c = collector(path, max);
        let size = std::fs::metadata(path).unwrap().len();
        validate_jsonl(path, &mut c, size, chunks).unwrap();
        c.report
    }

    /// The serde path alone over every line, as validation ran before the scanner.
    fn report_line_by_line(path: &str) -> ValidationReport {
        let mut c = collector(path, 1000);
        let mut lines = super::super::jsonl::Lines::open(path).unwrap();
        let mut index = 0;
        while let Some((line, bytes)) = lines.next_line().unwrap() {
            check_line(path, &mut c, line, &mut index, bytes);
        }
        c.report
    }

    #[test]
    fn scanner_agrees_with_serde_across_blocks() {
        let mut text = String::new();
        let pad = "é数 ".repeat(9000);
        for i in 0..3000 {
            let line = match i % 17 {
                0 => format!(r#"{{"system_prompt": "{pad}", "user_prompt": "u\n", "ground_truth": "g"}}"#),
                1 => r#"{"SYSTEM_PROMPT": " ", "user_prompt": "\u00e9", "ground_truth": 3.5e2, "m": {"a": [1, {}]}}"#.to_owned(),
                2 => r#"{"system_prompt": "s", "user_prompt": "\ud83d\ude00", "ground_truth": "\t"}"#.to_owned(),
                3 => r#"{"system_prompt": "s", "user_prompt": "u", "ground_truth": "g",}"#.to_owned(),
                4 => "\x0c\r".to_owned(),
                5 => r#"{"system\u005fprompt": "s", "user_prompt": "u", "ground_truth": "g"}"#.to_owned(),
                6 => "[1, 2]".to_owned(),
                7 => "{\"system_prompt\": \"\u{3000}\", \"user_prompt\": \"\tx\", \"ground_truth\": \"g\"}".to_owned(),
                _ => format!(
                    r#"{{"system_prompt": "s{i}", "user_prompt": "{}", "ground_truth": "g", "n": -{i}}}"#,
                    "ü".repeat(i % 400)
                ),
            };
            text.push_str(&line);
            text.push_str(if i % 5 == 0 { "\r\n" } else { "\n" });
        }
        let long = "x".repeat(3 * BLOCK);
        text.push_str(&format!(
            r#"{{"system_prompt": "{long}", "user_prompt": 1}}"#
        ));
        text.push_str("\n\n  \n");
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(b"{\"system_prompt\": \"\xff\"}\n");
        bytes.extend_from_slice(
            br#"{"system_prompt": "s", "user_prompt": "u", "ground_truth": "g"}"#,
        );
        let path = std::env::temp_dir().join(format!("osmosis-scan-{}.jsonl", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let path = path.to_str().unwrap();
        let reference = report_line_by_line(path);
        assert!(
            reference.total_problems > 500,
            "{}",
            reference.total_problems
        );
        for chunks in 1..5 {
            let fast = report_with_chunks(path, chunks, 1000);
            assert_eq!(fast.rows, reference.rows, "chunks={chunks}");
            assert_eq!(fast.bad_rows, reference.bad_rows);
            assert_eq!(fast.total_problems, reference.total_problems);
            assert_eq!(fast.problems, reference.problems, "chunks={chunks}");
            assert_eq!(fast.columns, reference.columns);
        }
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn parallel_ranges_agree_with_one_thread() {
        let mut text = String::from("\u{feff}");
        for i in 0..400 {
            match i % 23 {
                0 => text.push_str("\r\n"),
                5 => text.push_str("{bad json\n"),
                7 => writeln!(
                    text,
                    r#"{{"system_prompt": "s", "user_prompt": {i}, "ground_truth": "g"}}"#
                )
                .unwrap(),
                11 => writeln!(
                    text,
                    r#"{{"system_prompt": "s", "user_prompt": "u", "X{i}": 1}}"#
                )
                .unwrap(),
                13 => text.push_str("   \n"),
                _ => writeln!(
                    text,
                    r#"{{"system_prompt": "s", "user_prompt": "{}", "ground_truth": "g"}}"#,
                    "u".repeat(i * 7 % 300)
                )
                .unwrap(),
            }
        }
        text.push_str(r#"{"system_prompt": "s", "user_prompt": "last", "ground_truth": 1}"#);
        let path =
            std::env::temp_dir().join(format!("osmosis-validate-{}.jsonl", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let path = path.to_str().unwrap();
        let one = report_with_chunks(path, 1, 1000);
        assert!(one.total_problems > 40, "{}", one.total_problems);
        for chunks in 2..8 {
            let many = report_with_chunks(path, chunks, 1000);
            assert_eq!(many.rows, one.rows, "chunks={chunks}");
            assert_eq!(many.bad_rows, one.bad_rows);
            assert_eq!(many.total_problems, one.total_problems);
            assert_eq!(many.problems, one.problems, "chunks={chunks}");
            assert_eq!(many.columns, one.columns);
            let capped = report_with_chunks(path, chunks, 5);
            assert_eq!(capped.problems, one.problems[..5]);
            assert_eq!(capped.total_problems, one.total_problems);
        }
        std::fs::remove_file(path).unwrap();
    }
}
