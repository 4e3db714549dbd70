//! Arrays packed by `osmosis_ai.stats` as `(bytes, code)` pairs (the buffer protocol is not in the
//! 3.10 limited API): the type codes, and decoding into counts and values with row-naming errors.

use super::protocol;
use crate::error::CoreError;
use crate::stats::StatsError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// An integer column: one value for every row, or packed native-endian values with their type code.
#[derive(FromPyObject)]
pub(super) enum Column<'py> {
    Scalar(i64),
    Packed(Bound<'py, PyBytes>, String),
}

/// The type of packed values, parsed once per array (not once per value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Code {
    I1,
    U1,
    I2,
    U2,
    I4,
    U4,
    F4,
    I8,
    U8,
    F8,
}

impl Code {
    pub(super) fn parse(code: &str) -> Option<Self> {
        Some(match code {
            "i1" => Self::I1,
            "u1" | "b1" => Self::U1,
            "i2" => Self::I2,
            "u2" => Self::U2,
            "i4" => Self::I4,
            "u4" => Self::U4,
            "f4" => Self::F4,
            "i8" => Self::I8,
            "u8" => Self::U8,
            "f8" => Self::F8,
            _ => return None,
        })
    }

    pub(super) fn size(self) -> usize {
        match self {
            Self::I1 | Self::U1 => 1,
            Self::I2 | Self::U2 => 2,
            Self::I4 | Self::U4 | Self::F4 => 4,
            Self::I8 | Self::U8 | Self::F8 => 8,
        }
    }

    /// Reads one packed value as f64 (integers above 2^53 round; `decode_counts` reads those exactly).
    /// `chunk` holds exactly `self.size()` bytes.
    pub(super) fn read(self, chunk: &[u8]) -> f64 {
        match self {
            Self::I1 => f64::from(chunk[0] as i8),
            Self::U1 => f64::from(chunk[0]),
            Self::I2 => f64::from(i16::from_ne_bytes(fixed(chunk))),
            Self::U2 => f64::from(u16::from_ne_bytes(fixed(chunk))),
            Self::I4 => f64::from(i32::from_ne_bytes(fixed(chunk))),
            Self::U4 => f64::from(u32::from_ne_bytes(fixed(chunk))),
            Self::F4 => f64::from(f32::from_ne_bytes(fixed(chunk))),
            Self::I8 => i64::from_ne_bytes(fixed(chunk)) as f64,
            Self::U8 => u64::from_ne_bytes(fixed(chunk)) as f64,
            Self::F8 => f64::from_ne_bytes(fixed(chunk)),
        }
    }
}

/// The first `N` bytes as an array: a fixed-size copy the compiler turns into one load.
pub(super) fn fixed<const N: usize>(chunk: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&chunk[..N]);
    out
}

pub(super) fn check_packed(bytes: &[u8], code: &str) -> PyResult<Code> {
    let parsed =
        Code::parse(code).ok_or_else(|| protocol(format!("unknown array code '{code}'")))?;
    if bytes.len() % parsed.size() != 0 {
        return Err(protocol(format!(
            "{} bytes is not a whole number of '{code}' items",
            bytes.len()
        )));
    }
    Ok(parsed)
}

/// Packed counts → i64, refusing values that are not whole numbers or do not fit.
pub(super) fn decode_counts(
    bytes: &[u8],
    code: &str,
    field: &'static str,
    row_offset: u64,
) -> Result<Vec<i64>, PyErr> {
    let code = check_packed(bytes, code)?;
    let chunks = bytes.chunks_exact(code.size());
    let bad = |row: usize, shown: String| -> PyErr {
        CoreError::from(
            StatsError::new(format!(
                "{field} = {shown} is not a whole number of attempts"
            ))
            .field(field)
            .at_row(row as u64 + row_offset),
        )
        .into()
    };
    match code {
        Code::I8 => Ok(chunks.map(|c| i64::from_ne_bytes(fixed(c))).collect()),
        Code::U8 => chunks
            .enumerate()
            .map(|(row, c)| {
                let v = u64::from_ne_bytes(fixed(c));
                i64::try_from(v).map_err(|_| bad(row, v.to_string()))
            })
            .collect(),
        Code::F4 | Code::F8 => chunks
            .enumerate()
            .map(|(row, c)| {
                let v = code.read(c);
                if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(v as i64)
                } else {
                    Err(bad(row, v.to_string()))
                }
            })
            .collect(),
        _ => Ok(chunks.map(|c| code.read(c) as i64).collect()),
    }
}

/// Packed values → f64, refusing NaN and infinities with the row.
pub(super) fn decode_values(
    bytes: &[u8],
    code: &str,
    field: &'static str,
) -> Result<Vec<f64>, PyErr> {
    let code = check_packed(bytes, code)?;
    bytes
        .chunks_exact(code.size())
        .enumerate()
        .map(|(row, c)| {
            let v = code.read(c);
            if v.is_finite() {
                Ok(v)
            } else {
                Err(CoreError::from(
                    StatsError::new(format!(
                        "{field} is {v}; only finite values can be averaged"
                    ))
                    .field(field)
                    .at_row(row as u64),
                )
                .into())
            }
        })
        .collect()
}

pub(super) fn f64_bytes(py: Python<'_>, values: &[f64]) -> PyResult<Py<PyBytes>> {
    let bytes = PyBytes::new_with(py, values.len() * 8, |buf| {
        for (out, v) in buf.chunks_exact_mut(8).zip(values) {
            out.copy_from_slice(&v.to_ne_bytes());
        }
        Ok(())
    })?;
    Ok(bytes.unbind())
}
