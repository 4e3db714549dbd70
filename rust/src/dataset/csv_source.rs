//! CSV: a header row names the columns; every data row must have as many fields as the header.
//! Values are strings, as `csv.DictReader` gives them. Quoted fields may span lines (RFC 4180). A record
//! longer than the line limit (`OSMOSIS_MAX_LINE_BYTES`: a stray quote makes the rest of the file one
//! field) is an error naming the line it starts on, before it fills memory.

use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::jsonl::max_line_bytes;
use super::{RawRow, RowSource};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes the CSV reader may have read past the record it is parsing (its own buffer).
const CSV_BUFFER: u64 = 64 << 10;

/// The file, failing a read once the record being parsed has grown past the limit.
struct Bounded {
    inner: BufReader<File>,
    read: u64,
    /// Where the record being parsed starts (bytes), set by the source after each record.
    record_start: Arc<AtomicU64>,
    limit: u64,
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read - self.record_start.load(Ordering::Relaxed) > self.limit + CSV_BUFFER {
            return Err(io::Error::new(io::ErrorKind::InvalidData, RecordTooLong));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[derive(Debug)]
struct RecordTooLong;

impl std::fmt::Display for RecordTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("record too long")
    }
}

impl std::error::Error for RecordTooLong {}

pub(crate) struct CsvSource {
    path: String,
    reader: csv::Reader<Bounded>,
    header: Vec<String>,
    record: csv::ByteRecord,
    index: u64,
    record_start: Arc<AtomicU64>,
    limit: u64,
    /// Added to the csv crate's line numbers: 1 in a CRLF file, whose record positions are taken before
    /// the `\n` of the previous terminator is counted (BurntSushi/rust-csv#395).
    line_lag: u64,
}

fn csv_error(path: &str, err: &csv::Error) -> DatasetError {
    if let csv::ErrorKind::Io(io) = err.kind() {
        if io.get_ref().is_some_and(|e| e.is::<RecordTooLong>()) {
            return DatasetError::new(DatasetErrorKind::Parse, path, "record too long");
        }
        return DatasetError::io(path, io);
    }
    let line = err.position().map(|p| p.line());
    let mut out = DatasetError::new(DatasetErrorKind::Parse, path, format!("invalid CSV: {err}"));
    if let Some(line) = line {
        out = out.at(PositionUnit::Line, line, None);
    }
    out
}

impl CsvSource {
    pub fn open(path: &str) -> DatasetResult<Self> {
        let file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
        let record_start = Arc::new(AtomicU64::new(0));
        let limit = max_line_bytes();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .buffer_capacity(CSV_BUFFER as usize)
            .from_reader(Bounded {
                inner: BufReader::with_capacity(1 << 20, file),
                read: 0,
                record_start: Arc::clone(&record_start),
                limit,
            });
        let raw_header = reader
            .byte_headers()
            .map_err(|e| too_long(path, &e, 1, None, limit))?
            .clone();
        record_start.store(reader.position().byte(), Ordering::Relaxed);
        // Past a one-line header ended by "\n" the crate is on line 2; ended by "\r\n", still on line 1.
        let line_lag = u64::from(reader.position().line() == 1);
        let mut header = Vec::with_capacity(raw_header.len());
        for (i, name) in raw_header.iter().enumerate() {
            let name = std::str::from_utf8(name).map_err(|_| {
                DatasetError::new(
                    DatasetErrorKind::Parse,
                    path,
                    format!("header column {} is not valid UTF-8", i + 1),
                )
                .at(PositionUnit::Line, 1, None)
            })?;
            if header.iter().any(|h| h == name) {
                return Err(DatasetError::new(
                    DatasetErrorKind::Parse,
                    path,
                    format!("the header names column '{name}' twice"),
                )
                .at(PositionUnit::Line, 1, None)
                .field(Some(name)));
            }
            header.push(name.to_owned());
        }
        Ok(CsvSource {
            path: path.to_owned(),
            reader,
            header,
            record: csv::ByteRecord::new(),
            index: 0,
            record_start,
            limit,
            line_lag,
        })
    }

    /// Reads the next record; returns its line, or None at the end.
    fn read(&mut self) -> DatasetResult<Option<u64>> {
        // A file with no header at all yields an empty header and no rows.
        if self.header.is_empty() {
            return Ok(None);
        }
        let line = self.reader.position().line() + self.line_lag;
        let more = self
            .reader
            .read_byte_record(&mut self.record)
            .map_err(|e| too_long(&self.path, &e, line, Some(self.index), self.limit))?;
        self.record_start
            .store(self.reader.position().byte(), Ordering::Relaxed);
        // The read guard allows a buffer's worth more; the record itself is held to the limit.
        if more && self.record.as_slice().len() as u64 > self.limit {
            return Err(record_too_long(
                &self.path,
                line,
                Some(self.index),
                self.limit,
            ));
        }
        Ok(more.then(|| self.record.position().map_or(0, |p| p.line()) + self.line_lag))
    }
}

/// [`csv_error`], with the line limit's message and the record's first line when the record was too long.
fn too_long(path: &str, err: &csv::Error, line: u64, row: Option<u64>, limit: u64) -> DatasetError {
    let out = csv_error(path, err);
    if out.message != "record too long" {
        return out;
    }
    record_too_long(path, line, row, limit)
}

fn record_too_long(path: &str, line: u64, row: Option<u64>, limit: u64) -> DatasetError {
    let message = format!(
        "the record starting on this line is longer than {limit} bytes \
         (an unclosed quote? set {} to allow longer records)",
        super::jsonl::MAX_LINE_ENV
    );
    DatasetError::new(DatasetErrorKind::Parse, path, message).at(PositionUnit::Line, line, row)
}

impl RowSource for CsvSource {
    fn next_row(&mut self) -> DatasetResult<Option<RawRow>> {
        let Some(line) = self.read()? else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        let fail = |message: String, field: Option<&str>| {
            DatasetError::new(DatasetErrorKind::Parse, &self.path, message)
                .at(PositionUnit::Line, line, Some(index))
                .field(field)
        };
        if self.record.len() != self.header.len() {
            return Err(fail(
                format!(
                    "row has {} fields but the header has {} columns",
                    self.record.len(),
                    self.header.len()
                ),
                None,
            ));
        }
        let mut fields = Map::with_capacity(self.header.len());
        for (name, bytes) in self.header.iter().zip(self.record.iter()) {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| fail(format!("'{name}' is not valid UTF-8"), Some(name)))?;
            fields.insert(name.clone(), Value::String(text.to_owned()));
        }
        Ok(Some(RawRow {
            line,
            index,
            value: Value::Object(fields),
        }))
    }

    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        let mut skipped = 0;
        while skipped < n && self.read()?.is_some() {
            skipped += 1;
        }
        self.index += skipped;
        Ok(skipped)
    }
}
