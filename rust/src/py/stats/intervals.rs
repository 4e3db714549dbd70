//! Confidence intervals over rows: argument checks, the chunked bootstrap and `row_interval`.

use super::packed::decode_values;
use super::protocol;
use crate::error::CoreError;
use crate::stats::{normal_interval, rows_with_data, t_quantile, Bootstrap, Interval, StatsError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub(super) type IntervalTuple = (f64, f64, f64);
pub(super) type NamedIntervals = Vec<(String, Option<IntervalTuple>)>;

pub(super) fn as_tuple(interval: Option<Interval>) -> Option<IntervalTuple> {
    interval.map(|i| (i.estimate, i.low, i.high))
}

/// Student's t quantile of a two-sided `level` interval over `rows` rows (rows - 1 degrees of freedom):
/// the normal intervals of the aggregator's columns use it, each column at its own rows.
pub(super) fn t_for_rows(level: f64, rows: usize) -> f64 {
    t_quantile(0.5 + level / 2.0, (rows.max(2) - 1) as f64)
}

/// Runs a bootstrap in chunks, checking for Ctrl+C between them.
pub(super) fn run_bootstrap(
    py: Python<'_>,
    columns: Vec<&[f64]>,
    weights: Vec<Option<&[f64]>>,
    level: f64,
    resamples: usize,
    seed: u64,
) -> PyResult<Vec<Option<Interval>>> {
    let work_per_resample = columns.first().map_or(1, |c| c.len().max(1)) * (columns.len() + 1);
    let chunk = (4_000_000 / work_per_resample).max(1);
    let mut boot = Bootstrap::new(columns, weights, resamples, seed);
    while !boot.done() {
        py.detach(|| boot.step(chunk));
        py.check_signals()?;
    }
    Ok(boot.intervals(level))
}

pub(super) fn check_interval_args(method: &str, level: f64, resamples: usize) -> PyResult<()> {
    if !(level > 0.0 && level < 1.0) {
        return Err(CoreError::from(
            StatsError::new(format!("level must be between 0 and 1, got {level}")).field("level"),
        )
        .into());
    }
    match method {
        "normal" => Ok(()),
        "bootstrap" if resamples >= 1 => Ok(()),
        "bootstrap" => Err(CoreError::from(
            StatsError::new("resamples must be at least 1").field("resamples"),
        )
        .into()),
        other => Err(protocol(format!("unknown interval method '{other}'"))),
    }
}

/// An interval over rows for the mean of packed per-row values (optionally a ratio to packed weights).
#[pyfunction]
#[pyo3(signature = (values, code, method, level, z, resamples, seed, weights=None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn row_interval(
    py: Python<'_>,
    values: &Bound<'_, PyBytes>,
    code: &str,
    method: &str,
    level: f64,
    z: f64,
    resamples: usize,
    seed: u64,
    weights: Option<(Bound<'_, PyBytes>, String)>,
) -> PyResult<Option<IntervalTuple>> {
    // "t": Student's t at the rows that carry data (as the small-sample factor counts them).
    check_interval_args(
        if method == "t" { "normal" } else { method },
        level,
        resamples,
    )?;
    let (raw, raw_weights) = (
        values.as_bytes(),
        weights.as_ref().map(|(b, c)| (b.as_bytes(), c.as_str())),
    );
    let (values, weights) = py.detach(|| -> PyResult<_> {
        let values = decode_values(raw, code, "values")?;
        let weights = match raw_weights {
            Some((bytes, code)) => Some(decode_values(bytes, code, "weights")?),
            None => None,
        };
        Ok((values, weights))
    })?;
    if let Some(w) = &weights {
        if w.len() != values.len() {
            return Err(CoreError::from(
                StatsError::new(format!(
                    "weights has {} rows but values has {}",
                    w.len(),
                    values.len()
                ))
                .field("weights"),
            )
            .into());
        }
    }
    if method == "normal" || method == "t" {
        let q = if method == "t" {
            t_for_rows(level, rows_with_data(values.len(), weights.as_deref()))
        } else {
            z
        };
        let interval = py.detach(|| normal_interval(&values, weights.as_deref(), q));
        return Ok(as_tuple(interval));
    }
    let out = run_bootstrap(
        py,
        vec![&values],
        vec![weights.as_deref()],
        level,
        resamples,
        seed,
    )?;
    Ok(as_tuple(out[0]))
}
