//! Parquet: rows decoded one row group at a time with the crate's record reader (no Arrow). An offset
//! skips whole row groups using the footer, before any page is read. Positions are 1-based row numbers.
//!
//! Values map to JSON: integers and floats as numbers, strings as strings, lists and structs as arrays
//! and objects, maps as objects (keys as text), dates as `YYYY-MM-DD`, timestamps as ISO-8601 UTC text,
//! decimals as exact decimal text, binary as UTF-8 text (invalid bytes replaced).

use super::error::{DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::{RawRow, RowSource};
use parquet::basic::{ConvertedType, Type as PhysicalType};
use parquet::column::reader::ColumnReader;
use parquet::data_type::{ByteArray, Decimal};
use parquet::errors::ParquetError;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::record::reader::RowIter;
use parquet::record::{Field, Row};
use parquet::schema::types::{ColumnDescPtr, ColumnDescriptor, ColumnPath, Type};
use serde_json::{Map, Number, Value};
use std::fs::File;
use std::sync::Arc;

fn parquet_error(path: &str, err: &ParquetError, row: Option<u64>) -> DatasetError {
    let out = DatasetError::new(
        DatasetErrorKind::Parse,
        path,
        format!("invalid Parquet: {err}"),
    );
    match row {
        Some(index) => out.at(PositionUnit::Row, index + 1, Some(index)),
        None => out,
    }
}

pub(crate) struct ParquetSource {
    path: String,
    /// Top-level fields in schema order: a flat column (by its place in `flat`) or the next field of the
    /// record reader's row.
    fields: Vec<(String, Slot)>,
    /// Top-level primitive columns of a kind read column by column (most of a dataset's bytes).
    flat: FlatColumns,
    /// Everything else (lists, structs, maps, logical types) through the record reader, projected to
    /// those fields; `None` when every field is flat.
    rows: Option<RowIter<'static>>,
    index: u64,
}

#[derive(Clone, Copy)]
enum Slot {
    Flat(usize),
    Record,
}

/// Rows of the flat columns are decoded this many at a time.
const FLAT_CHUNK: usize = 1024;

/// The kinds of top-level primitive columns read without the record reader; each maps to the same
/// JSON value the record reader's `Field` would.
#[derive(Clone, Copy)]
enum FlatKind {
    Str,
    Long,
    Int,
    Double,
    Float,
    Bool,
}

impl FlatKind {
    fn of(column: &ColumnDescriptor) -> Option<FlatKind> {
        let converted = column.converted_type();
        Some(match column.physical_type() {
            PhysicalType::BYTE_ARRAY if converted == ConvertedType::UTF8 => FlatKind::Str,
            PhysicalType::INT64
                if matches!(converted, ConvertedType::NONE | ConvertedType::INT_64) =>
            {
                FlatKind::Long
            }
            PhysicalType::INT32
                if matches!(converted, ConvertedType::NONE | ConvertedType::INT_32) =>
            {
                FlatKind::Int
            }
            PhysicalType::DOUBLE => FlatKind::Double,
            PhysicalType::FLOAT => FlatKind::Float,
            PhysicalType::BOOLEAN => FlatKind::Bool,
            _ => return None,
        })
    }
}

struct FlatColumn {
    /// Leaf index in the file schema.
    leaf: usize,
    kind: FlatKind,
    optional: bool,
    reader: Option<ColumnReader>,
    /// The decoded chunk, one value per row; taken out as rows are handed on.
    values: Vec<Value>,
}

struct FlatColumns {
    file: Option<SerializedFileReader<File>>,
    columns: Vec<FlatColumn>,
    /// The next row group to open, and the next row of the decoded chunk.
    group: usize,
    cursor: usize,
    levels: Vec<i16>,
}

impl FlatColumns {
    fn buffered(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// Decodes the next chunk of rows; false at the end of the file.
    fn refill(&mut self) -> Result<bool, ParquetError> {
        let Some(file) = &self.file else {
            return Ok(false);
        };
        self.cursor = 0;
        loop {
            let mut rows = None;
            for column in &mut self.columns {
                column.values.clear();
                let Some(reader) = column.reader.as_mut() else {
                    continue;
                };
                let read = read_chunk(
                    reader,
                    column.kind,
                    column.optional,
                    &mut self.levels,
                    &mut column.values,
                )?;
                if rows.is_some_and(|n| n != read) {
                    return Err(ParquetError::General(
                        "columns of one row group hold different numbers of rows".to_owned(),
                    ));
                }
                rows = Some(read);
            }
            if rows.is_some_and(|n| n > 0) {
                return Ok(true);
            }
            if self.group >= file.num_row_groups() {
                return Ok(false);
            }
            let group = file.get_row_group(self.group)?;
            self.group += 1;
            for column in &mut self.columns {
                column.reader = Some(group.get_column_reader(column.leaf)?);
            }
        }
    }
}

/// Reads up to `FLAT_CHUNK` rows of one column into `out` (nulls included); returns the rows read.
fn read_chunk(
    reader: &mut ColumnReader,
    kind: FlatKind,
    optional: bool,
    levels: &mut Vec<i16>,
    out: &mut Vec<Value>,
) -> Result<usize, ParquetError> {
    fn spread<T>(
        optional: bool,
        levels: &[i16],
        values: Vec<T>,
        out: &mut Vec<Value>,
        convert: impl Fn(T) -> Result<Value, ParquetError>,
    ) -> Result<(), ParquetError> {
        let mut values = values.into_iter();
        if !optional {
            for v in values {
                out.push(convert(v)?);
            }
            return Ok(());
        }
        for &level in levels {
            out.push(match level {
                0 => Value::Null,
                _ => convert(values.next().ok_or_else(|| {
                    ParquetError::General("fewer values than definition levels".to_owned())
                })?)?,
            });
        }
        Ok(())
    }
    macro_rules! read {
        ($reader:expr, $convert:expr) => {{
            levels.clear();
            let mut values = Vec::with_capacity(FLAT_CHUNK);
            let (rows, _, _) = $reader.read_records(
                FLAT_CHUNK,
                optional.then_some(&mut *levels),
                None,
                &mut values,
            )?;
            spread(optional, levels, values, out, $convert)?;
            rows
        }};
    }
    Ok(match (reader, kind) {
        (ColumnReader::ByteArrayColumnReader(r), FlatKind::Str) => read!(r, |v: ByteArray| {
            match simdutf8::basic::from_utf8(v.data()) {
                Ok(text) => Ok(Value::String(text.to_owned())),
                // The record reader's own message for the same bytes.
                Err(_) => Field::convert_byte_array(&utf8_descr(), v).map(|_| Value::Null),
            }
        }),
        (ColumnReader::Int64ColumnReader(r), FlatKind::Long) => {
            read!(r, |v: i64| Ok(Value::from(v)))
        }
        (ColumnReader::Int32ColumnReader(r), FlatKind::Int) => {
            read!(r, |v: i32| Ok(Value::from(v)))
        }
        (ColumnReader::DoubleColumnReader(r), FlatKind::Double) => read!(r, |v: f64| Ok(float(v))),
        (ColumnReader::FloatColumnReader(r), FlatKind::Float) => {
            read!(r, |v: f32| Ok(float(f64::from(v))))
        }
        (ColumnReader::BoolColumnReader(r), FlatKind::Bool) => {
            read!(r, |v: bool| Ok(Value::Bool(v)))
        }
        _ => {
            return Err(ParquetError::General(
                "column reader of an unexpected type".to_owned(),
            ))
        }
    })
}

/// A UTF8 column description, only to have the record reader word an invalid-UTF-8 error.
fn utf8_descr() -> ColumnDescPtr {
    let ty = Type::primitive_type_builder("value", PhysicalType::BYTE_ARRAY)
        .with_converted_type(ConvertedType::UTF8)
        .build()
        .expect("a valid primitive type");
    Arc::new(ColumnDescriptor::new(
        Arc::new(ty),
        0,
        0,
        ColumnPath::new(Vec::new()),
    ))
}

/// Opens the file keeping only the row groups from the one holding row `offset` (0-based).
fn open_reader(path: &str, offset: u64) -> DatasetResult<SerializedFileReader<File>> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
    let mut before = 0u64;
    let keep_from_offset = move |group: &parquet::file::metadata::RowGroupMetaData, _: usize| {
        before += group.num_rows().max(0) as u64;
        before > offset
    };
    let options = ReadOptionsBuilder::new()
        .with_predicate(Box::new(keep_from_offset))
        .build();
    SerializedFileReader::new_with_options(file, options).map_err(|e| parquet_error(path, &e, None))
}

impl ParquetSource {
    /// Opens the file positioned at the row group holding row `offset` (0-based).
    pub fn open(path: &str, offset: u64) -> DatasetResult<Self> {
        let reader = open_reader(path, offset)?;
        let meta = reader.metadata();
        let kept: u64 = meta
            .row_groups()
            .iter()
            .map(|g| g.num_rows().max(0) as u64)
            .sum();
        let skipped = (meta.file_metadata().num_rows().max(0) as u64).saturating_sub(kept);
        let schema = meta.file_metadata().schema_descr_ptr();
        let root = schema.root_schema();
        let mut flat_leaf = vec![None; root.get_fields().len()];
        for (leaf, column) in schema.columns().iter().enumerate() {
            let top = schema.get_column_root_idx(leaf);
            if root.get_fields()[top].is_primitive() && column.max_rep_level() == 0 {
                flat_leaf[top] =
                    FlatKind::of(column).map(|kind| (leaf, kind, column.max_def_level() > 0));
            }
        }
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        let mut record_fields = Vec::new();
        for (top, field) in root.get_fields().iter().enumerate() {
            let slot = match flat_leaf[top] {
                Some((leaf, kind, optional)) => {
                    columns.push(FlatColumn {
                        leaf,
                        kind,
                        optional,
                        reader: None,
                        values: Vec::new(),
                    });
                    Slot::Flat(columns.len() - 1)
                }
                None => {
                    record_fields.push(Arc::clone(field));
                    Slot::Record
                }
            };
            fields.push((field.name().to_owned(), slot));
        }
        let flat_file = if columns.is_empty() {
            None
        } else {
            Some(open_reader(path, offset)?)
        };
        let rows = if record_fields.is_empty() {
            None
        } else {
            let projection = Type::group_type_builder(root.name())
                .with_fields(record_fields)
                .build()
                .map_err(|e| parquet_error(path, &e, None))?;
            let rows = RowIter::from_file_into(Box::new(reader));
            Some(if columns.is_empty() {
                rows
            } else {
                rows.project(Some(projection))
                    .map_err(|e| parquet_error(path, &e, None))?
            })
        };
        Ok(ParquetSource {
            path: path.to_owned(),
            fields,
            flat: FlatColumns {
                file: flat_file,
                columns,
                group: 0,
                cursor: 0,
                levels: Vec::new(),
            },
            rows,
            index: skipped,
        })
    }

    /// The next row as (field, value) pairs in schema order, or `None` at the end.
    fn next_map(&mut self) -> Result<Option<Map<String, Value>>, ParquetError> {
        let has_flat = self.flat.file.is_some();
        if has_flat && self.flat.cursor >= self.flat.buffered() && !self.flat.refill()? {
            return Ok(None);
        }
        let record = match self.rows.as_mut() {
            None => None,
            Some(rows) => match rows.next() {
                None if has_flat => {
                    return Err(ParquetError::General(
                        "nested columns hold fewer rows than flat ones".to_owned(),
                    ))
                }
                None => return Ok(None),
                Some(row) => Some(row?),
            },
        };
        let mut nested = record.iter().flat_map(|row| row.get_column_iter());
        let at = self.flat.cursor;
        self.flat.cursor += 1;
        let mut map = Map::with_capacity(self.fields.len());
        for (name, slot) in &self.fields {
            let value = match *slot {
                Slot::Flat(c) => std::mem::take(&mut self.flat.columns[c].values[at]),
                Slot::Record => nested
                    .next()
                    .map_or(Value::Null, |(_, f)| field_to_value(f)),
            };
            map.insert(name.clone(), value);
        }
        Ok(Some(map))
    }
}

impl RowSource for ParquetSource {
    fn next_row(&mut self) -> DatasetResult<Option<RawRow>> {
        let index = self.index;
        match self.next_map() {
            Ok(None) => Ok(None),
            Err(err) => Err(parquet_error(&self.path, &err, Some(index))),
            Ok(Some(map)) => {
                self.index += 1;
                Ok(Some(RawRow {
                    line: index + 1,
                    index,
                    value: Value::Object(map),
                }))
            }
        }
    }

    /// `index` already counts the row groups skipped at open; only rows inside a group are decoded here.
    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        let already = self.index.min(n);
        let mut skipped = already;
        while skipped < n {
            match self.next_map() {
                Ok(None) => break,
                Err(err) => return Err(parquet_error(&self.path, &err, Some(self.index))),
                Ok(Some(_)) => {
                    self.index += 1;
                    skipped += 1;
                }
            }
        }
        Ok(skipped)
    }
}

/// The row count from the footer; no page is read.
pub(crate) fn count_rows(path: &str) -> DatasetResult<u64> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| parquet_error(path, &e, None))?;
    Ok(reader.metadata().file_metadata().num_rows().max(0) as u64)
}

fn row_to_map(row: &Row) -> Map<String, Value> {
    row.get_column_iter()
        .map(|(name, field)| (name.clone(), field_to_value(field)))
        .collect()
}

fn float(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn field_to_value(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Byte(v) => Value::from(*v),
        Field::Short(v) => Value::from(*v),
        Field::Int(v) => Value::from(*v),
        Field::Long(v) => Value::from(*v),
        Field::UByte(v) => Value::from(*v),
        Field::UShort(v) => Value::from(*v),
        Field::UInt(v) => Value::from(*v),
        Field::ULong(v) => Value::from(*v),
        Field::Float16(v) => float(f64::from(*v)),
        Field::Float(v) => float(f64::from(*v)),
        Field::Double(v) => float(*v),
        Field::Decimal(d) => Value::String(decimal_text(d)),
        Field::Str(s) => Value::String(s.clone()),
        Field::Bytes(b) => Value::String(String::from_utf8_lossy(b.data()).into_owned()),
        Field::Date(days) => Value::String(date_text(i64::from(*days))),
        Field::TimestampMillis(ms) => Value::String(timestamp_text(*ms, 1_000)),
        Field::TimestampMicros(us) => Value::String(timestamp_text(*us, 1_000_000)),
        Field::Group(row) => Value::Object(row_to_map(row)),
        Field::ListInternal(list) => {
            Value::Array(list.elements().iter().map(field_to_value).collect())
        }
        Field::MapInternal(map) => Value::Object(
            map.entries()
                .iter()
                .map(|(k, v)| {
                    let key = match field_to_value(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, field_to_value(v))
                })
                .collect(),
        ),
    }
}

/// Exact decimal text of a big-endian two's-complement unscaled value.
fn decimal_text(d: &Decimal) -> String {
    let bytes = d.data();
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut value: i128 = if negative { -1 } else { 0 };
    for b in bytes.iter().rev().take(16).rev() {
        value = (value << 8) | i128::from(*b);
    }
    let digits = value.unsigned_abs().to_string();
    let scale = d.scale().max(0) as usize;
    let sign = if value < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Civil date of a day count since 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn date_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

fn timestamp_text(ticks: i64, per_second: i64) -> String {
    let seconds = ticks.div_euclid(per_second);
    let fraction = ticks.rem_euclid(per_second);
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (h, mi, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let width = if per_second == 1_000 { 3 } else { 6 };
    format!(
        "{}T{h:02}:{mi:02}:{s:02}.{fraction:0width$}Z",
        date_text(days)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(19_723), "2024-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(timestamp_text(1_500, 1_000), "1970-01-01T00:00:01.500Z");
        assert_eq!(timestamp_text(-1, 1_000_000), "1969-12-31T23:59:59.999999Z");
    }

    #[test]
    fn decimals_keep_every_digit() {
        let d = Decimal::from_i32(-12_345, 9, 2);
        assert_eq!(decimal_text(&d), "-123.45");
        let d = Decimal::from_i64(5, 18, 3);
        assert_eq!(decimal_text(&d), "0.005");
    }
}
