//! Errors of the Parquet reader: the crate's errors with the file and row, its panics caught, and cells
//! over the size limit.

use crate::dataset::columns::{ColumnBatch, ColumnValues};
use crate::dataset::error::{DatasetError, DatasetErrorKind, PositionUnit};
use crate::dataset::jsonl::MAX_LINE_ENV;
use parquet::errors::ParquetError;
use serde_json::Value;

pub(super) fn parquet_error(path: &str, err: &ParquetError, row: Option<u64>) -> DatasetError {
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

/// Runs a call into the parquet crate, turning its panics into errors: it indexes by lengths read from
/// the file, so some corrupt files (found by rust/tests/fuzz_parsers.rs) panic instead of failing.
pub(super) fn guarded<T>(
    call: impl FnOnce() -> Result<T, ParquetError>,
) -> Result<T, ParquetError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("no detail");
        Err(ParquetError::General(format!("corrupt data ({detail})")))
    })
}

/// The first cell of `batch` larger than `limit` bytes (text as UTF-8, nested values as about their JSON
/// size), as an error naming its row and column. The limit is the readers' line limit
/// (`OSMOSIS_MAX_LINE_BYTES`): one cell must not hand a consumer more than one JSONL line could.
pub(super) fn oversized_cell(path: &str, batch: &ColumnBatch, limit: u64) -> Option<DatasetError> {
    for (key, column) in batch.keys.iter().zip(&batch.columns) {
        for row in 0..column.len() {
            let size = match column {
                ColumnValues::Text(_) => column.text(row).map_or(0, str::len),
                ColumnValues::Json(values) => json_size(&values[row]),
                _ => 0,
            };
            if size as u64 > limit {
                let index = batch.first_index + row as u64;
                let message = format!(
                    "'{key}' holds {size} bytes, over the limit of {limit} (set {MAX_LINE_ENV} to \
                     allow larger cells)"
                );
                let error = DatasetError::new(DatasetErrorKind::Parse, path, message);
                return Some(
                    error
                        .at(PositionUnit::Row, index + 1, Some(index))
                        .field(Some(key)),
                );
            }
        }
    }
    None
}

/// About the length of `value` as JSON, without writing it.
fn json_size(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(|v| json_size(v) + 1).sum::<usize>() + 2,
        Value::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
                + 2
        }
        _ => 8,
    }
}
