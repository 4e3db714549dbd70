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
        validate_jsonl(path, &mut c)?;
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

/// JSONL: shapes only, no values built.
fn validate_jsonl(path: &str, c: &mut Collector) -> DatasetResult<()> {
    super::check_file(path)?;
    let mut lines = Lines::open(path)?;
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
    Ok(())
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
