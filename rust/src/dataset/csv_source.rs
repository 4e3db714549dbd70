//! CSV: a header row names the columns; every data row must have as many fields as the header.
//! Values are strings, as `csv.DictReader` gives them. Quoted fields may span lines (RFC 4180).

use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::{RawRow, RowSource};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::BufReader;

pub(crate) struct CsvSource {
    path: String,
    reader: csv::Reader<BufReader<File>>,
    header: Vec<String>,
    record: csv::ByteRecord,
    index: u64,
}

fn csv_error(path: &str, err: &csv::Error) -> DatasetError {
    if let csv::ErrorKind::Io(io) = err.kind() {
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
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(BufReader::with_capacity(1 << 20, file));
        let raw_header = reader
            .byte_headers()
            .map_err(|e| csv_error(path, &e))?
            .clone();
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
        })
    }

    /// Reads the next record; returns its line, or None at the end.
    fn read(&mut self) -> DatasetResult<Option<u64>> {
        // A file with no header at all yields an empty header and no rows.
        if self.header.is_empty() {
            return Ok(None);
        }
        let more = self
            .reader
            .read_byte_record(&mut self.record)
            .map_err(|e| csv_error(&self.path, &e))?;
        Ok(more.then(|| self.record.position().map_or(0, |p| p.line())))
    }
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
