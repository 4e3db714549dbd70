//! Streaming dataset readers: JSONL, JSON (a top-level array), CSV (header row) and Parquet.
//!
//! A [`DatasetReader`] hands out rows in batches, checked against a [`Contract`]; memory holds one batch
//! plus the format's read buffer, whatever the file's size. [`count_rows`] counts without parsing rows
//! where the format allows it, and [`validate_file`] checks every row and reports every problem (up to
//! a cap) instead of stopping at the first.

mod columns;
pub mod contract;
mod csv_records;
mod csv_source;
mod error;
mod json_array;
mod jsonl;
mod parquet_source;
mod prefetch;
mod read_buffer;
mod row_value;
mod scan;
mod shape;
pub(crate) use shape::Key;
pub mod tape;
mod text_width;
mod validate;
mod value_kind;

use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;
use tape::RowShape;

pub use columns::{Batch, ColumnBatch, ColumnValues, Utf8Bytes};
pub use contract::{Contract, FieldProblem};
pub use error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
pub use prefetch::{BatchSource, PrefetchReader};
pub use tape::{TapeBatch, TapeRow, Token};
pub use validate::{validate_file, ValidationReport};
pub(crate) use value_kind::python_space;
pub use value_kind::{Text, ValueKind};

/// The file formats we read, chosen by extension (case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Json,
    Csv,
    Parquet,
}

impl Format {
    pub fn from_path(path: &str) -> DatasetResult<Format> {
        let ext = Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match ext.as_str() {
            "jsonl" => Ok(Format::Jsonl),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "parquet" => Ok(Format::Parquet),
            _ => {
                let shown = if ext.is_empty() {
                    "(none)".to_owned()
                } else {
                    format!(".{ext}")
                };
                Err(DatasetError::new(
                    DatasetErrorKind::Unsupported,
                    path,
                    format!("unsupported file extension '{shown}'; expected .jsonl, .json, .csv or .parquet"),
                ))
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Parquet => "parquet",
        }
    }

    fn unit(self) -> PositionUnit {
        if self == Format::Parquet {
            PositionUnit::Row
        } else {
            PositionUnit::Line
        }
    }
}

/// A row as a source produced it, before the contract check.
pub(crate) struct RawRow {
    /// 1-based line (text formats) or row number (Parquet).
    pub line: u64,
    /// 0-based index among the file's rows.
    pub index: u64,
    pub value: Value,
}

/// A row written onto a tape: its position and its shape (an object's top-level entries are on the tape).
pub(crate) struct RowRead {
    pub line: u64,
    pub index: u64,
    pub shape: RowShape,
}

/// A format's row stream. A row that cannot be parsed is an `Err`; text sources go on with the next row,
/// sources that cannot resynchronise (a broken JSON array) end after it.
pub(crate) trait RowSource: Send {
    fn next_row(&mut self) -> DatasetResult<Option<RawRow>>;
    /// Writes the next row onto `tape`. Sources with a parser of their own override this; the default
    /// goes through [`RowSource::next_row`].
    fn read_row(&mut self, tape: &mut TapeBatch) -> DatasetResult<Option<RowRead>> {
        let Some(raw) = self.next_row()? else {
            return Ok(None);
        };
        let shape = tape.push_row_value(&raw.value);
        Ok(Some(RowRead {
            line: raw.line,
            index: raw.index,
            shape,
        }))
    }
    /// Skips up to `n` rows, parsing them no more than the format needs; returns how many it skipped.
    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64>;
}

/// Fails unless `path` names an existing file (a directory reads as an empty file on some systems).
fn check_file(path: &str) -> DatasetResult<()> {
    let meta = std::fs::metadata(path).map_err(|e| DatasetError::io(path, &e))?;
    if meta.is_dir() {
        return Err(DatasetError::new(
            DatasetErrorKind::IsDirectory,
            path,
            format!("{path} is a directory, not a dataset file"),
        ));
    }
    // A device or a pipe (a link to /dev/zero) has no end to stream to; only regular files are read.
    if !meta.is_file() {
        return Err(DatasetError::new(
            DatasetErrorKind::Io(std::io::ErrorKind::InvalidInput),
            path,
            format!(
                "{path} is not a regular file (a device, a pipe or a socket); datasets are files"
            ),
        ));
    }
    Ok(())
}

/// Opens the file's source, positioned at row `offset` as far as the format can skip without reading
/// rows (Parquet: whole row groups; the others: not at all).
fn open_source(path: &str, format: Format, offset: u64) -> DatasetResult<Source> {
    check_file(path)?;
    Ok(match format {
        Format::Jsonl => Source::Rows(Box::new(jsonl::JsonlSource::open(path)?)),
        Format::Json => Source::Rows(Box::new(json_array::JsonArraySource::open(path)?)),
        Format::Csv => Source::Rows(Box::new(csv_source::CsvSource::open(path)?)),
        Format::Parquet => {
            Source::Columns(Box::new(parquet_source::ParquetSource::open(path, offset)?))
        }
    })
}

/// A row that met the contract: its position and its fields (required eval columns lower-cased).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub line: u64,
    pub index: u64,
    pub fields: Map<String, Value>,
}

/// A batch of a row source stops growing once its text takes this many bytes (a thousand 2 KB rows),
/// so a file of long rows does not multiply the memory a batch takes; a Parquet chunk holds the rows of
/// its row group that take about as many bytes uncompressed.
const BATCH_TEXT_BYTES: usize = 2 << 20;

/// Used tapes kept for reuse: as many as can be in flight between the reader's thread and its caller
/// (two queued, one being converted, one being filled), so a steady read allocates nothing.
const SPARE_TAPES: usize = 4;

/// Where a reader's rows come from: a format's row stream, or Parquet's column chunks.
pub(crate) enum Source {
    Rows(Box<dyn RowSource>),
    Columns(Box<parquet_source::ParquetSource>),
}

impl Source {
    /// Skips up to `n` rows, parsing them no more than the format needs; returns how many it skipped
    /// (rows passed over when the source was opened count).
    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        match self {
            Source::Rows(source) => source.skip_rows(n),
            Source::Columns(source) => source.skip_rows(n),
        }
    }
}

/// An error that ended a batch, with the good rows read before it.
type Stopped = Box<(DatasetError, Batch)>;

/// Reads a dataset file in batches of checked rows, within an `offset` / `limit` window.
pub struct DatasetReader {
    path: String,
    format: Format,
    contract: Contract,
    source: Source,
    remaining: Option<u64>,
    rows_seen: u64,
    done: bool,
    /// An error met after some rows of a batch: those rows are handed out first, the error next.
    pending: Option<DatasetError>,
    /// The contract's names for a columnar source's columns, once known.
    column_keys: Option<Arc<[String]>>,
    /// Used tapes handed back, filled again instead of growing new ones.
    spare: Vec<TapeBatch>,
}

impl DatasetReader {
    /// Opens `path`; `offset` rows are skipped unchecked, then at most `limit` rows are read.
    pub fn open(
        path: &str,
        contract: Contract,
        offset: u64,
        limit: Option<u64>,
    ) -> DatasetResult<Self> {
        let format = Format::from_path(path)?;
        let mut source = open_source(path, format, offset)?;
        let skipped = source.skip_rows(offset)?;
        Ok(DatasetReader {
            path: path.to_owned(),
            format,
            contract,
            source,
            remaining: limit,
            rows_seen: skipped,
            done: false,
            pending: None,
            column_keys: None,
            spare: Vec::new(),
        })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Up to `max` rows; an empty batch means the window is exhausted. The first bad row ends the
    /// stream: the good rows before it come first, then the error. A columnar batch may hold fewer
    /// than `max` rows (it ends with its row group).
    pub fn next_batch(&mut self, max: usize) -> DatasetResult<Batch> {
        if let Some(err) = self.pending.take() {
            return Err(err);
        }
        let result = match self.source {
            Source::Rows(_) => {
                let mut tape = self
                    .spare
                    .pop()
                    .unwrap_or_else(|| TapeBatch::for_rows(BATCH_TEXT_BYTES));
                self.fill(&mut tape, max).map(|()| Batch::Tape(tape))
            }
            Source::Columns(_) => self.next_columns(max),
        };
        match result {
            Ok(batch) => Ok(batch),
            Err(stopped) => {
                let (err, partial) = *stopped;
                self.done = true;
                if partial.is_empty() {
                    Err(err)
                } else {
                    self.pending = Some(err);
                    Ok(partial)
                }
            }
        }
    }

    /// Takes back a batch the caller is done with, to fill its buffers again (a tape grows to a
    /// batch's size once instead of once per batch).
    pub fn recycle(&mut self, batch: Batch) {
        if let Batch::Tape(mut tape) = batch {
            // A batch of one huge row keeps its memory no longer than it is used.
            if tape.text.capacity() <= 2 * BATCH_TEXT_BYTES && self.spare.len() < SPARE_TAPES {
                tape.clear();
                self.spare.push(tape);
            }
        }
    }

    /// Reads rows onto `tape` until it holds `max` rows or [`BATCH_TEXT_BYTES`] of text.
    fn fill(&mut self, tape: &mut TapeBatch, max: usize) -> Result<(), Stopped> {
        let Source::Rows(source) = &mut self.source else {
            unreachable!("fill reads row sources only")
        };
        let fail =
            |err, tape: &mut TapeBatch| Err(Box::new((err, Batch::Tape(std::mem::take(tape)))));
        while tape.len() < max && tape.text_bytes() < BATCH_TEXT_BYTES && !self.done {
            if self.remaining == Some(0) {
                self.done = true;
                break;
            }
            let mark = tape.begin_row();
            let read = match source.read_row(tape) {
                Ok(Some(read)) => read,
                Ok(None) => {
                    self.done = true;
                    if self.rows_seen == 0 {
                        return fail(empty_file(&self.path, self.format), tape);
                    }
                    break;
                }
                Err(err) => {
                    tape.rollback(mark);
                    return fail(err, tape);
                }
            };
            self.rows_seen += 1;
            if let Some(left) = self.remaining.as_mut() {
                *left -= 1;
            }
            if let Err(err) = check_row(&self.path, self.format, self.contract, tape, &read) {
                tape.rollback(mark);
                return fail(err, tape);
            }
            tape.apply_output_keys(self.contract);
            tape.finish_row(mark, read.line, read.index);
        }
        Ok(())
    }

    /// The next chunk of a columnar source, each row checked against the contract.
    fn next_columns(&mut self, max: usize) -> Result<Batch, Stopped> {
        let Source::Columns(source) = &mut self.source else {
            unreachable!("next_columns reads columnar sources only")
        };
        let want = self.remaining.map_or(max, |left| {
            max.min(usize::try_from(left).unwrap_or(usize::MAX))
        });
        if self.done || want == 0 {
            self.done = true;
            return Ok(Batch::default());
        }
        let mut batch = match source.next_chunk(want) {
            Ok(Some(batch)) => batch,
            Ok(None) => {
                self.done = true;
                if self.rows_seen == 0 {
                    return Err(Box::new((
                        empty_file(&self.path, self.format),
                        Batch::default(),
                    )));
                }
                return Ok(Batch::default());
            }
            Err(err) => return Err(Box::new((err, Batch::default()))),
        };
        let keys = self
            .column_keys
            .get_or_insert_with(|| output_keys(self.contract, &batch.keys));
        let problem = first_problem(self.contract, &batch);
        let good = problem.as_ref().map_or(batch.len(), |(row, _)| *row);
        self.rows_seen += batch.len() as u64;
        if let Some(left) = self.remaining.as_mut() {
            *left -= good as u64;
        }
        let first_index = batch.first_index;
        batch.truncate(good);
        let batch = Batch::Columns(batch.with_keys(Arc::clone(keys)));
        match problem {
            None => Ok(batch),
            Some((row, p)) => {
                let index = first_index + row as u64;
                let err = DatasetError::new(DatasetErrorKind::Validation, &self.path, p.message)
                    .at(PositionUnit::Row, index + 1, Some(index))
                    .field(p.field.as_deref());
                Err(Box::new((err, batch)))
            }
        }
    }
}

/// The first row of `batch` that breaks the contract (its batch position), with its first problem.
fn first_problem(contract: Contract, batch: &ColumnBatch) -> Option<(usize, FieldProblem)> {
    if contract == Contract::Any {
        return None;
    }
    let mut entries = Vec::with_capacity(batch.keys.len());
    (0..batch.len()).find_map(|row| {
        batch.entries(row, &mut entries);
        contract
            .check(&entries)
            .into_iter()
            .next()
            .map(|p| (row, p))
    })
}

/// The names rows are handed out with: the contract's for its required columns, the file's otherwise.
fn output_keys(contract: Contract, keys: &[String]) -> Arc<[String]> {
    keys.iter()
        .map(|k| {
            contract
                .output_key(k)
                .map_or_else(|| k.clone(), str::to_owned)
        })
        .collect()
}

/// Checks the row just written onto `tape` against the contract.
fn check_row(
    path: &str,
    format: Format,
    contract: Contract,
    tape: &TapeBatch,
    read: &RowRead,
) -> DatasetResult<()> {
    let problem = match read.shape {
        RowShape::Other(kind) => Some(Contract::check_non_object(kind)),
        RowShape::Object => contract.check(&tape.entries()).into_iter().next(),
    };
    match problem {
        None => Ok(()),
        Some(p) => Err(
            DatasetError::new(DatasetErrorKind::Validation, path, p.message)
                .at(format.unit(), read.line, Some(read.index))
                .field(p.field.as_deref()),
        ),
    }
}

fn empty_file(path: &str, format: Format) -> DatasetError {
    let what = match format {
        Format::Jsonl => "no JSON records found (the file is empty or has only blank lines)",
        Format::Json => "no rows found (the JSON array is empty)",
        Format::Csv => "no rows found (the CSV file has no data rows below its header)",
        Format::Parquet => "no rows found (the Parquet file has zero rows)",
    };
    DatasetError::new(DatasetErrorKind::Empty, path, what)
}

/// Rows a reader parses per batch, whatever the size of the lists handed out: a thread hand-off and a
/// recycled buffer per batch cost little over this many rows. (Parquet read 32 rows per batch when
/// lists were 32 rows: a hand-off per list, which under load cost more than building the rows.) The
/// check of a window reads batches of the same size, so it meets a bad row where reading would.
pub const READ_ROWS: usize = 1024;

/// Reads the rows of a window (as [`DatasetReader::open`]) through the contract check, building nothing;
/// returns how many there are, or the error reading them would meet first. One batch is alive at a time.
/// `interrupted` is asked after each batch: when it answers true the count so far is returned.
pub fn check_window(
    path: &str,
    contract: Contract,
    offset: u64,
    limit: Option<u64>,
    interrupted: &mut dyn FnMut() -> bool,
) -> DatasetResult<u64> {
    let mut reader = DatasetReader::open(path, contract, offset, limit)?;
    let mut rows = 0;
    loop {
        let batch = reader.next_batch(READ_ROWS)?;
        if batch.is_empty() {
            return Ok(rows);
        }
        rows += batch.len() as u64;
        reader.recycle(batch);
        if interrupted() {
            return Ok(rows);
        }
    }
}

/// The number of rows in the file: non-blank lines for JSONL (no parsing), the footer for Parquet,
/// a syntax-only pass for JSON and CSV.
pub fn count_rows(path: &str) -> DatasetResult<u64> {
    let format = Format::from_path(path)?;
    match format {
        Format::Jsonl => {
            check_file(path)?;
            jsonl::count_rows(path)
        }
        Format::Parquet => {
            check_file(path)?;
            parquet_source::count_rows(path)
        }
        Format::Json | Format::Csv => open_source(path, format, 0)?.skip_rows(u64::MAX),
    }
}
