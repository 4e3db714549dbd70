//! Errors of the Parquet reader: the crate's errors with the file and row, and its panics caught.

use crate::dataset::error::{DatasetError, DatasetErrorKind, PositionUnit};
use parquet::errors::ParquetError;

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
