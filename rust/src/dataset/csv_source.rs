//! CSV: a header row names the columns; every data row must have as many fields as the header.
//! Values are strings, as `csv.DictReader` gives them. Quoted fields may span lines (RFC 4180). A record
//! longer than the line limit (`OSMOSIS_MAX_LINE_BYTES`: a stray quote makes the rest of the file one
//! field) is an error naming the line it starts on, before it fills memory.

use super::csv_records::{CsvRecords, Record};
use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::jsonl::max_line_bytes;
use super::tape::RowShape;
use super::value_kind::{Text, ValueKind};
use super::{RawRow, RowRead, RowSource, TapeBatch, Token};
use serde_json::{Map, Value};

pub(crate) struct CsvSource {
    path: String,
    records: CsvRecords,
    header: Vec<String>,
    record: Record,
    index: u64,
    limit: u64,
}

impl CsvSource {
    pub fn open(path: &str) -> DatasetResult<Self> {
        let limit = max_line_bytes();
        let mut records = CsvRecords::open(path)?;
        let mut raw_header = Record::default();
        let too_long = |line| record_too_long(path, line, None, limit);
        let mut header = Vec::new();
        // A file with no header at all yields an empty header and no rows.
        if records.next(&mut raw_header, limit, too_long)?.is_some() {
            for (i, name) in raw_header.fields().enumerate() {
                let name = simdutf8::basic::from_utf8(name).map_err(|_| {
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
        }
        Ok(CsvSource {
            path: path.to_owned(),
            records,
            header,
            record: Record::default(),
            index: 0,
            limit,
        })
    }

    /// Reads the next record; returns its line, or None at the end.
    fn read(&mut self) -> DatasetResult<Option<u64>> {
        if self.header.is_empty() {
            return Ok(None);
        }
        let (path, limit, index) = (&self.path, self.limit, self.index);
        let too_long = |line| record_too_long(path, line, Some(index), limit);
        self.records.next(&mut self.record, self.limit, too_long)
    }
}

fn record_too_long(path: &str, line: u64, row: Option<u64>, limit: u64) -> DatasetError {
    let message = format!(
        "the record starting on this line is longer than {limit} bytes \
         (an unclosed quote? set {} to allow longer records)",
        super::jsonl::MAX_LINE_ENV
    );
    DatasetError::new(DatasetErrorKind::Parse, path, message).at(PositionUnit::Line, line, row)
}

impl CsvSource {
    /// The next record's position, its field count checked against the header.
    fn next_record(&mut self) -> DatasetResult<Option<(u64, u64)>> {
        let Some(line) = self.read()? else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        if self.record.len() != self.header.len() {
            let message = format!(
                "row has {} fields but the header has {} columns",
                self.record.len(),
                self.header.len()
            );
            return Err(self.fail(line, index, message, None));
        }
        Ok(Some((line, index)))
    }

    fn fail(&self, line: u64, index: u64, message: String, field: Option<&str>) -> DatasetError {
        DatasetError::new(DatasetErrorKind::Parse, &self.path, message)
            .at(PositionUnit::Line, line, Some(index))
            .field(field)
    }

    /// The record's cells as text, with their column names.
    fn cells(&self, line: u64, index: u64) -> DatasetResult<Vec<(&str, &str)>> {
        self.header
            .iter()
            .zip(self.record.fields())
            .map(|(name, bytes)| {
                let text = simdutf8::basic::from_utf8(bytes).map_err(|_| {
                    self.fail(
                        line,
                        index,
                        format!("'{name}' is not valid UTF-8"),
                        Some(name),
                    )
                })?;
                Ok((name.as_str(), text))
            })
            .collect()
    }
}

impl RowSource for CsvSource {
    fn next_row(&mut self) -> DatasetResult<Option<RawRow>> {
        let Some((line, index)) = self.next_record()? else {
            return Ok(None);
        };
        let fields: Map<String, Value> = self
            .cells(line, index)?
            .into_iter()
            .map(|(name, text)| (name.to_owned(), Value::String(text.to_owned())))
            .collect();
        Ok(Some(RawRow {
            line,
            index,
            value: Value::Object(fields),
        }))
    }

    fn read_row(&mut self, tape: &mut TapeBatch) -> DatasetResult<Option<RowRead>> {
        let Some((line, index)) = self.next_record()? else {
            return Ok(None);
        };
        tape.tokens.push(Token::Object);
        for (name, text) in self.cells(line, index)? {
            tape.push_key(name);
            tape.note_entry(ValueKind::Str(Text::of(text)));
            tape.push_text(text);
        }
        tape.tokens.push(Token::End);
        Ok(Some(RowRead {
            line,
            index,
            shape: RowShape::Object,
        }))
    }

    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        let mut skipped = 0;
        // The index moves per record, so an error while skipping names the row it is on.
        while skipped < n && self.read()?.is_some() {
            skipped += 1;
            self.index += 1;
        }
        Ok(skipped)
    }
}
