//! Errors of the Parquet reader: the crate's errors with the file and row, its panics caught (and kept
//! off stderr), and cells over the size limit.

use crate::dataset::columns::{ColumnBatch, ColumnValues};
use crate::dataset::error::{DatasetError, DatasetErrorKind, PositionUnit};
use crate::dataset::jsonl::MAX_LINE_ENV;
use parquet::errors::ParquetError;
use std::cell::Cell;
use std::sync::Once;

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
/// The panic hook stays quiet for those panics: the error names the file and carries the panic's message.
pub(super) fn guarded<T>(
    call: impl FnOnce() -> Result<T, ParquetError>,
) -> Result<T, ParquetError> {
    quiet_hook_inside_guarded_calls();
    // Calls nest (opening a file opens its reader): the outer call's flag is put back after.
    let outer = GUARDED.replace(true);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
    GUARDED.set(outer);
    outcome.unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("no detail");
        Err(ParquetError::General(format!("corrupt data ({detail})")))
    })
}

thread_local! {
    /// Whether this thread is inside [`guarded`], whose panics become errors.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Wraps the process's panic hook, once: without this, the default hook prints "thread '...' panicked
/// at ..." (and a backtrace) to stderr before the clean error. A panic anywhere else reaches the
/// hook that was there before, unchanged.
fn quiet_hook_inside_guarded_calls() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.try_with(Cell::get).unwrap_or(false) {
                previous(info);
            }
        }));
    });
}

/// The first cell of `batch` larger than `limit` bytes (text as UTF-8, nested values as about their JSON
/// size), as an error naming its row and column. The limit is the readers' line limit
/// (`OSMOSIS_MAX_LINE_BYTES`): one cell must not hand a consumer more than one JSONL line could.
pub(super) fn oversized_cell(path: &str, batch: &ColumnBatch, limit: u64) -> Option<DatasetError> {
    for (key, column) in batch.keys.iter().zip(&batch.columns) {
        for row in 0..column.len() {
            let size = match column {
                ColumnValues::Text(_) => column.text(row).map_or(0, str::len),
                ColumnValues::Nested(cells) => cells.row_json_size(row),
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
