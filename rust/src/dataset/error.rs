//! `DatasetError`: what went wrong with a dataset file, and where.

use std::fmt;
use std::io;

/// The class of a dataset problem; `py/errors.rs` maps each to a Python exception class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetErrorKind {
    /// The file does not exist.
    NotFound,
    /// The path names a directory.
    IsDirectory,
    /// The file could not be opened or read (permissions, a directory, a device error).
    Io(io::ErrorKind),
    /// The extension is not one we read.
    Unsupported,
    /// The bytes are not valid JSON / CSV / Parquet, or not UTF-8.
    Parse,
    /// A row breaks the row contract.
    Validation,
    /// The file holds no rows at all.
    Empty,
}

/// Whether a position counts physical lines (text formats) or rows (Parquet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionUnit {
    Line,
    Row,
}

/// One dataset problem: the file, the 1-based line (or Parquet row), the 0-based row index, the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetError {
    pub kind: DatasetErrorKind,
    pub path: String,
    /// 1-based physical line of the row (text formats) or 1-based row number (Parquet).
    pub line: Option<u64>,
    pub unit: PositionUnit,
    /// 0-based index of the row among the file's rows (blank lines do not count).
    pub row: Option<u64>,
    pub field: Option<String>,
    pub message: String,
}

impl DatasetError {
    pub fn new(kind: DatasetErrorKind, path: &str, message: impl Into<String>) -> Self {
        DatasetError {
            kind,
            path: path.to_owned(),
            line: None,
            unit: PositionUnit::Line,
            row: None,
            field: None,
            message: message.into(),
        }
    }

    pub fn at(mut self, unit: PositionUnit, line: u64, row: Option<u64>) -> Self {
        self.unit = unit;
        self.line = Some(line);
        self.row = row;
        self
    }

    pub fn field(mut self, field: Option<&str>) -> Self {
        self.field = field.map(str::to_owned);
        self
    }

    /// Maps an I/O error while opening or reading `path`.
    pub fn io(path: &str, err: &io::Error) -> Self {
        match err.kind() {
            io::ErrorKind::NotFound => DatasetError::new(
                DatasetErrorKind::NotFound,
                path,
                format!("Dataset file not found: {path}"),
            ),
            kind => DatasetError::new(
                DatasetErrorKind::Io(kind),
                path,
                format!("cannot read {path}: {err}"),
            ),
        }
    }

    /// `path, line 7 (row 5)` or `path, row 12` or `path`.
    pub fn location(&self) -> String {
        match (self.line, self.unit, self.row) {
            (Some(line), PositionUnit::Line, Some(row)) => {
                format!("{}, line {line} (row {row})", self.path)
            }
            (Some(line), PositionUnit::Line, None) => format!("{}, line {line}", self.path),
            (Some(line), PositionUnit::Row, _) => format!("{}, row {line}", self.path),
            (None, _, _) => self.path.clone(),
        }
    }
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DatasetErrorKind::NotFound
            | DatasetErrorKind::IsDirectory
            | DatasetErrorKind::Io(_) => f.write_str(&self.message),
            _ => write!(f, "{}: {}", self.location(), self.message),
        }
    }
}

impl std::error::Error for DatasetError {}

pub type DatasetResult<T> = Result<T, DatasetError>;

/// serde_json's message without its " at line L column C" tail (its positions are relative to the row).
pub(crate) fn json_error_text(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}
