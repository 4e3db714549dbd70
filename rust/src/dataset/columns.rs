//! Rows held column by column, as a columnar format decodes them.
//!
//! Parquet hands out whole columns; turning them into one map per row (key strings, hashing, a value
//! per cell) only to walk those maps again when building Python dicts was most of the reader's work.
//! A [`ColumnBatch`] keeps the decoded columns as they are: text stays in the page buffers it was
//! decoded into (shared, not copied), numbers stay unboxed, and the keys exist once per batch.

use super::text_width::is_wide;
use super::value_kind::{Text, ValueKind};
use super::{Row, TapeBatch};
use parquet::data_type::ByteArray;
use serde_json::{Map, Number, Value};
use std::sync::Arc;

/// One column's values for the rows of a batch; `None` is null.
#[derive(Debug, Clone)]
pub enum ColumnValues {
    /// UTF-8 text; shares the decoded page's buffer.
    Text(Vec<Option<Utf8Bytes>>),
    Int(Vec<Option<i64>>),
    /// Finite floats only: a non-finite value is null, as JSON has no spelling for it.
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    /// Anything else (lists, structs, maps, logical types): one tape row per cell, laid out as the
    /// text formats' rows are, so that one converter turns both into Python objects.
    Nested(TapeBatch),
}

impl ColumnValues {
    pub fn len(&self) -> usize {
        match self {
            ColumnValues::Text(v) => v.len(),
            ColumnValues::Int(v) => v.len(),
            ColumnValues::Float(v) => v.len(),
            ColumnValues::Bool(v) => v.len(),
            ColumnValues::Nested(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text at `row`, when the column holds text and the cell is not null.
    pub fn text(&self, row: usize) -> Option<&str> {
        match self {
            ColumnValues::Text(v) => v[row].as_ref().map(text_of),
            _ => None,
        }
    }

    /// The shape of the cell at `row`, for the row contracts.
    pub fn kind(&self, row: usize) -> ValueKind {
        match self {
            ColumnValues::Text(v) => match &v[row] {
                None => ValueKind::Null,
                Some(bytes) => ValueKind::Str(Text::of(text_of(bytes))),
            },
            ColumnValues::Int(v) => v[row].map_or(ValueKind::Null, |_| ValueKind::Int),
            ColumnValues::Float(v) => v[row].map_or(ValueKind::Null, |_| ValueKind::Float),
            ColumnValues::Bool(v) => v[row].map_or(ValueKind::Null, |_| ValueKind::Bool),
            ColumnValues::Nested(v) => v.row_kind(row),
        }
    }

    /// The cell at `row` as a JSON value (a copy).
    pub fn value(&self, row: usize) -> Value {
        match self {
            ColumnValues::Text(v) => v[row]
                .as_ref()
                .map_or(Value::Null, |b| Value::String(text_of(b).to_owned())),
            ColumnValues::Int(v) => v[row].map_or(Value::Null, Value::from),
            ColumnValues::Float(v) => v[row]
                .and_then(Number::from_f64)
                .map_or(Value::Null, Value::Number),
            ColumnValues::Bool(v) => v[row].map_or(Value::Null, Value::Bool),
            ColumnValues::Nested(v) => v.row_value(row),
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            ColumnValues::Text(v) => v.truncate(len),
            ColumnValues::Int(v) => v.truncate(len),
            ColumnValues::Float(v) => v.truncate(len),
            ColumnValues::Bool(v) => v.truncate(len),
            ColumnValues::Nested(v) => v.rows.truncate(len),
        }
    }
}

/// Text in a decoded page's buffer, known to be UTF-8: the only constructor checks it.
#[derive(Debug, Clone)]
pub struct Utf8Bytes {
    bytes: ByteArray,
    wide: bool,
}

impl Utf8Bytes {
    /// The bytes as text, or back unchanged when they are not UTF-8.
    pub fn new(bytes: ByteArray) -> Result<Self, ByteArray> {
        let data = bytes.data();
        match simdutf8::basic::from_utf8(data) {
            Ok(_) => {
                // Measured here, on the reader's thread, so that building the `str` reads it once.
                let wide = is_wide(data);
                Ok(Utf8Bytes { bytes, wide })
            }
            Err(_) => Err(bytes),
        }
    }

    /// Characters past Latin-1 are dense in the text (`text_width`).
    pub fn is_wide(&self) -> bool {
        self.wide
    }

    pub fn as_str(&self) -> &str {
        let data = self.bytes.data();
        // Checked once in `new`; the text is read again for every Python string built from it, in
        // the hottest loop of a Parquet read, so it is not checked twice.
        debug_assert!(std::str::from_utf8(data).is_ok());
        #[allow(unsafe_code)]
        // SAFETY: `new` is the only constructor and it validated these bytes; `ByteArray` data is
        // immutable shared memory, so they cannot have changed since.
        unsafe {
            std::str::from_utf8_unchecked(data)
        }
    }
}

fn text_of(bytes: &Utf8Bytes) -> &str {
    bytes.as_str()
}

/// Consecutive rows of a file, column by column.
#[derive(Debug, Clone)]
pub struct ColumnBatch {
    /// Column names, in the file's order; shared by every batch of a file.
    pub keys: Arc<[String]>,
    pub columns: Vec<ColumnValues>,
    /// 0-based index of the first row in the file; the others follow without gaps.
    pub first_index: u64,
    len: usize,
}

impl ColumnBatch {
    /// A batch of `columns` (one per key, each of the same length).
    pub(crate) fn new(keys: Arc<[String]>, columns: Vec<ColumnValues>, first_index: u64) -> Self {
        let len = columns.first().map_or(0, ColumnValues::len);
        debug_assert_eq!(keys.len(), columns.len());
        debug_assert!(columns.iter().all(|c| c.len() == len));
        ColumnBatch {
            keys,
            columns,
            first_index,
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The (key, shape) pairs of row `row`, written into `entries` (cleared first).
    pub fn entries<'a>(&'a self, row: usize, entries: &mut Vec<(&'a str, ValueKind)>) {
        entries.clear();
        entries.extend(
            self.keys
                .iter()
                .zip(&self.columns)
                .map(|(key, column)| (key.as_str(), column.kind(row))),
        );
    }

    /// Row `row` as a map of JSON values (copies).
    pub fn row_map(&self, row: usize) -> Map<String, Value> {
        self.keys
            .iter()
            .zip(&self.columns)
            .map(|(key, column)| (key.clone(), column.value(row)))
            .collect()
    }

    /// Keeps only the first `len` rows.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.columns.iter_mut().for_each(|c| c.truncate(len));
            self.len = len;
        }
    }

    /// Uses other names for the columns (the contract's output names).
    pub(crate) fn with_keys(mut self, keys: Arc<[String]>) -> Self {
        debug_assert_eq!(keys.len(), self.keys.len());
        self.keys = keys;
        self
    }
}

/// Rows as a reader hands them out: a token tape (text formats) or column by column (Parquet).
#[derive(Debug, Clone)]
pub enum Batch {
    Tape(TapeBatch),
    Columns(ColumnBatch),
}

impl Default for Batch {
    fn default() -> Self {
        Batch::Tape(TapeBatch::default())
    }
}

impl Batch {
    pub fn len(&self) -> usize {
        match self {
            Batch::Tape(tape) => tape.len(),
            Batch::Columns(columns) => columns.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows as maps, whichever way they are held (copies the values of a columnar batch).
    pub fn into_rows(self) -> Vec<Row> {
        match self {
            Batch::Tape(tape) => (0..tape.len())
                .map(|r| Row {
                    line: tape.rows[r].line,
                    index: tape.rows[r].index,
                    fields: tape.row_fields(r),
                })
                .collect(),
            Batch::Columns(batch) => (0..batch.len())
                .map(|r| {
                    let index = batch.first_index + r as u64;
                    Row {
                        line: index + 1,
                        index,
                        fields: batch.row_map(r),
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Option<Utf8Bytes> {
        Some(Utf8Bytes::new(ByteArray::from(s)).unwrap())
    }

    fn batch() -> ColumnBatch {
        let keys: Arc<[String]> = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()].into();
        ColumnBatch::new(
            keys,
            vec![
                ColumnValues::Text(vec![text("x"), None, text("  "), text("z")]),
                ColumnValues::Int(vec![Some(1), Some(2), None, Some(4)]),
                ColumnValues::Float(vec![Some(0.5), None, Some(2.0), None]),
            ],
            10,
        )
    }

    #[test]
    fn kinds_and_values_per_cell() {
        let b = batch();
        assert_eq!(b.len(), 4);
        let mut entries = Vec::new();
        b.entries(2, &mut entries);
        assert_eq!(
            entries,
            [
                ("a", ValueKind::Str(Text::Blank)),
                ("b", ValueKind::Null),
                ("c", ValueKind::Float)
            ]
        );
        assert_eq!(
            Value::Object(b.row_map(0)),
            serde_json::json!({"a": "x", "b": 1, "c": 0.5})
        );
        assert_eq!(b.columns[0].text(3), Some("z"));
        assert_eq!(b.columns[0].text(1), None);
        assert!(Utf8Bytes::new(ByteArray::from(vec![0xffu8, b'a'])).is_err());
    }

    /// A column of nested cells, one tape row per cell.
    fn nested(cells: &[&str]) -> ColumnValues {
        let mut tape = TapeBatch::default();
        for (index, cell) in cells.iter().enumerate() {
            let value: Value = serde_json::from_str(cell).unwrap();
            let mark = tape.begin_row();
            tape.push_value(&value);
            tape.finish_row(mark, index as u64 + 1, index as u64);
        }
        ColumnValues::Nested(tape)
    }

    #[test]
    fn nested_cells_have_the_shape_value_and_json_size_of_their_value() {
        let cells = [
            r#"{"a": [1, "xy", null], "b": {}}"#,
            "{}",
            "[]",
            r#""  ""#,
            "2.5",
            "18446744073709551615",
            "null",
        ];
        let column = nested(&cells);
        assert_eq!(column.len(), cells.len());
        for (row, cell) in cells.iter().enumerate() {
            let value: Value = serde_json::from_str(cell).unwrap();
            assert_eq!(column.kind(row), ValueKind::of(&value), "{cell}");
            assert_eq!(column.value(row), value, "{cell}");
        }
        let ColumnValues::Nested(tape) = &column else {
            unreachable!()
        };
        // {"a": [1, "xy", null], "b": {}}: 2 + ("a": 1 + 4 + (2 + 9 + 5 + 9)) + ("b": 1 + 4 + 2).
        let sizes: Vec<_> = (0..cells.len()).map(|r| tape.row_json_size(r)).collect();
        assert_eq!(sizes, [39, 2, 2, 4, 8, 8, 8]);
        let mut column = column;
        column.truncate(2);
        assert_eq!(column.len(), 2);
        assert_eq!(column.value(1), serde_json::json!({}));
    }

    #[test]
    fn truncate_keeps_positions() {
        let mut b = batch();
        b.truncate(2);
        let rows = Batch::Columns(b).into_rows();
        let lines: Vec<_> = rows.iter().map(|r| (r.line, r.index)).collect();
        assert_eq!(lines, [(11, 10), (12, 11)]);
        assert_eq!(rows[1].fields["a"], Value::Null);
    }
}
