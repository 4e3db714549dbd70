//! The validation pass: every row checked, every problem reported (up to a cap), nothing handed to Python.

mod jsonl;

use super::contract::{Contract, FieldProblem};
use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::parquet_source::ParquetSource;
use super::value_kind::ValueKind;
use super::{empty_file, open_source, Format, RowSource, Source};
use jsonl::{validate_jsonl, MAX_THREADS, PARALLEL_MIN_BYTES};

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
    use super::jsonl::{check_line, BLOCK};
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
