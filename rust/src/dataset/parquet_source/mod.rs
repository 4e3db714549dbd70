//! Parquet: rows decoded one row group at a time, without Arrow, and handed out column by column
//! ([`ColumnBatch`]). Top-level primitive columns of the common kinds are read straight from their
//! column readers; anything else (lists, structs, maps, logical types) goes through the crate's record
//! reader, projected to those fields. An offset skips whole row groups using the footer, before any page
//! is read. Positions are 1-based row numbers.
//!
//! Values map to JSON: integers and floats as numbers, strings as strings, lists and structs as arrays
//! and objects, maps as objects (keys as text), dates as `YYYY-MM-DD`, timestamps as ISO-8601 UTC text,
//! decimals as exact decimal text, binary as UTF-8 text (invalid bytes replaced).

use super::columns::{ColumnBatch, ColumnValues, Utf8Bytes};
use super::error::{DatasetError, DatasetResult};
use super::jsonl::max_line_bytes;
use super::{TapeBatch, Token, BATCH_TEXT_BYTES};
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::column::reader::ColumnReader;
use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::record::reader::RowIter;
use parquet::record::Field;
use parquet::schema::types::{ColumnDescPtr, ColumnDescriptor, ColumnPath, Type};
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod errors;
mod values;

use errors::{guarded, oversized_cell, parquet_error};
use values::push_field;

/// Rows decoded per chunk when skipping inside a row group.
const SKIP_CHUNK: usize = 16 * 1024;

pub(crate) struct ParquetSource {
    path: String,
    /// Top-level field names in schema order.
    keys: Arc<[String]>,
    /// Where each top-level field comes from, in schema order.
    slots: Vec<Slot>,
    flat: FlatColumns,
    /// The record reader over the non-flat fields; `None` when every field is flat.
    rows: Option<RowIter<'static>>,
    /// Index of the next row to hand out (rows in row groups skipped at open count).
    index: u64,
}

#[derive(Clone, Copy)]
enum Slot {
    /// A top-level primitive column, by its place in `FlatColumns::columns`.
    Flat(usize),
    /// The next field of the record reader's (projected) row.
    Record,
}

/// The kinds of top-level primitive columns read without the record reader; each gives the same value
/// the record reader's `Field` would.
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
        // Writers that only set the newer logical type still mean text.
        let text = converted == ConvertedType::UTF8
            || matches!(column.logical_type(), Some(LogicalType::String));
        Some(match column.physical_type() {
            PhysicalType::BYTE_ARRAY if text => FlatKind::Str,
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
}

struct FlatColumns {
    file: Option<SerializedFileReader<File>>,
    columns: Vec<FlatColumn>,
    /// The next row group to open.
    group: usize,
    /// Rows of the open row group a chunk may hold: as many as take about [`BATCH_TEXT_BYTES`]
    /// uncompressed (the footer's size of the group over its rows), so long cells make short chunks.
    rows_per_chunk: usize,
    levels: Vec<i16>,
}

/// Rows of a row group that take about [`BATCH_TEXT_BYTES`] uncompressed (at least 1).
fn rows_within_bytes(group: &parquet::file::metadata::RowGroupMetaData) -> usize {
    let rows = u64::try_from(group.num_rows()).unwrap_or(0).max(1);
    let bytes = u64::try_from(group.total_byte_size()).unwrap_or(0).max(1);
    let fit = (BATCH_TEXT_BYTES as u64).saturating_mul(rows) / bytes;
    usize::try_from(fit).unwrap_or(usize::MAX).max(1)
}

impl FlatColumns {
    /// Decodes up to `max` rows of every flat column (fewer at the end of a row group, and fewer when its
    /// rows are long: see `rows_per_chunk`); `None` at the end of the file.
    fn read(&mut self, max: usize) -> Result<Option<Vec<ColumnValues>>, ParquetError> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        loop {
            let mut out = Vec::with_capacity(self.columns.len());
            let mut rows = None;
            let max = max.min(self.rows_per_chunk);
            for column in &mut self.columns {
                let Some(reader) = column.reader.as_mut() else {
                    break;
                };
                let values =
                    read_column(reader, column.kind, column.optional, &mut self.levels, max)?;
                if rows.is_some_and(|n| n != values.len()) {
                    return Err(ParquetError::General(
                        "columns of one row group hold different numbers of rows".to_owned(),
                    ));
                }
                rows = Some(values.len());
                out.push(values);
            }
            if rows.is_some_and(|n| n > 0) {
                return Ok(Some(out));
            }
            if self.group >= file.num_row_groups() {
                return Ok(None);
            }
            let group = file.get_row_group(self.group)?;
            self.rows_per_chunk = rows_within_bytes(group.metadata());
            self.group += 1;
            for column in &mut self.columns {
                column.reader = Some(group.get_column_reader(column.leaf)?);
            }
        }
    }
}

/// Reads up to `max` rows of one column (nulls included).
fn read_column(
    reader: &mut ColumnReader,
    kind: FlatKind,
    optional: bool,
    levels: &mut Vec<i16>,
    max: usize,
) -> Result<ColumnValues, ParquetError> {
    /// Places the non-null `values` at the rows whose definition level says present.
    fn spread<T, U>(
        optional: bool,
        levels: &[i16],
        values: Vec<T>,
        convert: impl Fn(T) -> Result<Option<U>, ParquetError>,
    ) -> Result<Vec<Option<U>>, ParquetError> {
        if !optional {
            return values.into_iter().map(convert).collect();
        }
        let mut values = values.into_iter();
        levels
            .iter()
            .map(|&level| match level {
                0 => Ok(None),
                _ => convert(values.next().ok_or_else(|| {
                    ParquetError::General("fewer values than definition levels".to_owned())
                })?),
            })
            .collect()
    }
    macro_rules! read {
        ($reader:expr, $variant:ident, $convert:expr) => {{
            levels.clear();
            let mut values = Vec::with_capacity(max);
            $reader.read_records(max, optional.then_some(&mut *levels), None, &mut values)?;
            ColumnValues::$variant(spread(optional, levels, values, $convert)?)
        }};
    }
    Ok(match (reader, kind) {
        (ColumnReader::ByteArrayColumnReader(r), FlatKind::Str) => {
            read!(r, Text, |v: ByteArray| {
                match Utf8Bytes::new(v) {
                    Ok(text) => Ok(Some(text)),
                    // The record reader's own message for the same bytes.
                    Err(v) => Field::convert_byte_array(&utf8_descr(), v).map(|_| None),
                }
            })
        }
        (ColumnReader::Int64ColumnReader(r), FlatKind::Long) => read!(r, Int, |v: i64| Ok(Some(v))),
        (ColumnReader::Int32ColumnReader(r), FlatKind::Int) => {
            read!(r, Int, |v: i32| Ok(Some(i64::from(v))))
        }
        (ColumnReader::DoubleColumnReader(r), FlatKind::Double) => {
            read!(r, Float, |v: f64| Ok(v.is_finite().then_some(v)))
        }
        (ColumnReader::FloatColumnReader(r), FlatKind::Float) => {
            read!(r, Float, |v: f32| Ok(v.is_finite().then_some(f64::from(v))))
        }
        (ColumnReader::BoolColumnReader(r), FlatKind::Bool) => {
            read!(r, Bool, |v: bool| Ok(Some(v)))
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

/// Opens the file keeping only the row groups from the one holding row `offset` (0-based); the rows of
/// the groups left out are added to `dropped`.
fn open_reader(
    path: &str,
    offset: u64,
    dropped: Arc<AtomicU64>,
) -> DatasetResult<SerializedFileReader<File>> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
    let mut before = 0u64;
    let keep_from_offset = move |group: &parquet::file::metadata::RowGroupMetaData, _: usize| {
        let rows = group.num_rows().max(0) as u64;
        before = before.saturating_add(rows);
        let keep = before > offset;
        if !keep {
            dropped.fetch_add(rows, Ordering::Relaxed);
        }
        keep
    };
    let options = ReadOptionsBuilder::new()
        .with_predicate(Box::new(keep_from_offset))
        .build();
    guarded(|| SerializedFileReader::new_with_options(file, options))
        .map_err(|e| parquet_error(path, &e, None))
}

impl ParquetSource {
    /// Opens the file positioned at the row group holding row `offset` (0-based).
    pub fn open(path: &str, offset: u64) -> DatasetResult<Self> {
        guarded(|| Ok(Self::open_unguarded(path, offset)))
            .unwrap_or_else(|e| Err(parquet_error(path, &e, None)))
    }

    fn open_unguarded(path: &str, offset: u64) -> DatasetResult<Self> {
        // The rows of the groups passed over, not the footer's total minus the kept groups: in a
        // corrupt file the two disagree, and row numbers must still start at the first kept row.
        let dropped = Arc::new(AtomicU64::new(0));
        let reader = open_reader(path, offset, Arc::clone(&dropped))?;
        let meta = reader.metadata();
        let skipped = dropped.load(Ordering::Relaxed);
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
        let mut keys = Vec::new();
        let mut slots = Vec::new();
        let mut columns = Vec::new();
        let mut record_fields = Vec::new();
        for (top, field) in root.get_fields().iter().enumerate() {
            slots.push(match flat_leaf[top] {
                Some((leaf, kind, optional)) => {
                    columns.push(FlatColumn {
                        leaf,
                        kind,
                        optional,
                        reader: None,
                    });
                    Slot::Flat(columns.len() - 1)
                }
                None => {
                    record_fields.push(Arc::clone(field));
                    Slot::Record
                }
            });
            keys.push(field.name().to_owned());
        }
        let flat_file = if columns.is_empty() {
            None
        } else {
            Some(open_reader(path, offset, Arc::new(AtomicU64::new(0)))?)
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
            keys: keys.into(),
            slots,
            flat: FlatColumns {
                file: flat_file,
                columns,
                group: 0,
                rows_per_chunk: usize::MAX,
                levels: Vec::new(),
            },
            rows,
            index: skipped,
        })
    }

    /// Up to `max` (at least 1) consecutive rows, column by column; fewer at the end of a row group,
    /// `None` at the end of the file.
    pub fn next_chunk(&mut self, max: usize) -> DatasetResult<Option<ColumnBatch>> {
        let index = self.index;
        match guarded(|| self.decode(max)) {
            Ok(Some(batch)) => {
                if let Some(err) = oversized_cell(&self.path, &batch, max_line_bytes()) {
                    return Err(err);
                }
                self.index += batch.len() as u64;
                Ok(Some(batch))
            }
            Ok(None) => Ok(None),
            Err(err) => Err(parquet_error(&self.path, &err, Some(index))),
        }
    }

    fn decode(&mut self, max: usize) -> Result<Option<ColumnBatch>, ParquetError> {
        let mut flat = match self.flat.read(max.max(1))? {
            Some(columns) => columns.into_iter().map(Some).collect(),
            None if self.flat.file.is_some() => return Ok(None),
            None => Vec::new(),
        };
        let rows = match flat.first() {
            Some(Some(column)) => column.len(),
            _ => max.max(1),
        };
        let records = self.read_records(rows, !flat.is_empty())?;
        if flat.is_empty() && records.first().map_or(true, TapeBatch::is_empty) {
            return Ok(None);
        }
        let mut records = records.into_iter();
        let columns = self
            .slots
            .iter()
            .map(|slot| match *slot {
                Slot::Flat(c) => flat[c].take().expect("each flat column is used once"),
                Slot::Record => ColumnValues::Nested(records.next().unwrap_or_default()),
            })
            .collect();
        Ok(Some(ColumnBatch::new(
            Arc::clone(&self.keys),
            columns,
            self.index,
        )))
    }

    /// The record reader's fields for the next `rows` rows, one tape per field (a tape row per cell);
    /// `exact` when flat columns already fixed how many rows there are.
    fn read_records(&mut self, rows: usize, exact: bool) -> Result<Vec<TapeBatch>, ParquetError> {
        let Some(iter) = self.rows.as_mut() else {
            return Ok(Vec::new());
        };
        let fields = self
            .slots
            .iter()
            .filter(|s| matches!(s, Slot::Record))
            .count();
        let mut out: Vec<TapeBatch> = (0..fields).map(|_| TapeBatch::default()).collect();
        for row in 0..rows {
            // Without flat columns to fix the count, a chunk of long rows ends at about
            // BATCH_TEXT_BYTES of text, as a row source's batch does.
            if !exact
                && row > 0
                && out.iter().map(TapeBatch::text_bytes).sum::<usize>() >= BATCH_TEXT_BYTES
            {
                break;
            }
            let row_fields = match iter.next() {
                Some(row) => row?,
                None if exact => {
                    return Err(ParquetError::General(
                        "nested columns hold fewer rows than flat ones".to_owned(),
                    ))
                }
                None => break,
            };
            let index = self.index + row as u64;
            let mut fields = row_fields.get_column_iter().map(|(_, f)| f);
            for cells in &mut out {
                let mark = cells.begin_row();
                match fields.next() {
                    Some(field) => push_field(cells, field),
                    None => cells.push_token(Token::Null),
                }
                cells.finish_row(mark, index + 1, index);
            }
        }
        Ok(out)
    }
}

impl ParquetSource {
    /// Skips up to `n` rows; rows in the row groups passed over at open count without being decoded.
    pub fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        let mut skipped = self.index.min(n);
        while skipped < n {
            let want = usize::try_from(n - skipped).unwrap_or(usize::MAX);
            match self.next_chunk(want.min(SKIP_CHUNK))? {
                None => break,
                Some(batch) => skipped += batch.len() as u64,
            }
        }
        Ok(skipped)
    }
}

/// The row count from the footer; no page is read.
pub(crate) fn count_rows(path: &str) -> DatasetResult<u64> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
    let reader =
        guarded(|| SerializedFileReader::new(file)).map_err(|e| parquet_error(path, &e, None))?;
    Ok(reader.metadata().file_metadata().num_rows().max(0) as u64)
}
