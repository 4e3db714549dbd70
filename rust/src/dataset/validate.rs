//! The validation pass: every row checked, every problem reported (up to a cap), nothing handed to Python.

use super::contract::{Contract, FieldProblem, ValueKind};
use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::jsonl::{line_text, parse_error, Lines};
use super::shape::{self, Shape};
use super::{empty_file, open_source, Format};

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
        validate_rows(path, format, &mut c)?;
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
        let (part, lines) = result?;
        c.merge(part.report, line_offset, row_offset);
        line_offset += lines;
        row_offset = c.report.rows;
    }
    Ok(())
}

/// JSONL lines starting in `start..end`: shapes only, no values built. Returns the lines read.
fn validate_jsonl_range(path: &str, c: &mut Collector, start: u64, end: u64) -> DatasetResult<u64> {
    let mut lines = Lines::open_range(path, start, end)?;
    let mut index = 0u64;
    while let Some((line, bytes)) = lines.next_line()? {
        let text = match line_text(path, line, index, bytes) {
            Ok(text) => text,
            Err(err) => {
                c.unparsable_row(err);
                index += 1;
                continue;
            }
        };
        match shape::parse(text) {
            Ok(Shape::Object(owned)) => {
                let entries: Vec<(&str, ValueKind)> =
                    owned.iter().map(|(k, v)| (k.as_ref(), *v)).collect();
                c.object(line, index, &entries);
            }
            Ok(Shape::Other(kind)) => c.other(line, index, kind),
            Err(err) => c.unparsable_row(parse_error(path, line, index, &err)),
        }
        index += 1;
    }
    Ok(lines.lines_read())
}

/// JSON, CSV, Parquet: rows as values from the format's source.
fn validate_rows(path: &str, format: Format, c: &mut Collector) -> DatasetResult<()> {
    let mut source = open_source(path, format)?;
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
                let resumable = err.row.is_some() && format != Format::Parquet;
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

    fn report_with_chunks(path: &str, chunks: usize, max: usize) -> ValidationReport {
        let format = Format::Jsonl;
        let mut c = Collector {
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
        };
        let size = std::fs::metadata(path).unwrap().len();
        validate_jsonl(path, &mut c, size, chunks).unwrap();
        c.report
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
