//! Bindings for `crate::stats`. Arrays come in as `(bytes, code)` pairs packed by `osmosis_ai.stats`
//! (the buffer protocol is not in the 3.10 limited API), scalars as ints; loops run without the GIL.

mod aggregator;
mod agreement;
mod intervals;
mod log_fields;
mod output_rows;
mod packed;
mod results;

use crate::error::CoreError;
use crate::stats::{estimate_many as core_estimate_many, estimate_many_iter, Counts, Estimator};
use packed::{check_packed, decode_counts, f64_bytes, fixed, Code, Column};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pass_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(pass_hat_k, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_many, m)?)?;
    m.add_function(wrap_pyfunction!(intervals::row_interval, m)?)?;
    m.add_function(wrap_pyfunction!(results::summarize_results_file, m)?)?;
    m.add_function(wrap_pyfunction!(results::result_model, m)?)?;
    m.add_function(wrap_pyfunction!(results::compare_results, m)?)?;
    m.add_function(wrap_pyfunction!(student_t_quantile, m)?)?;
    m.add_function(wrap_pyfunction!(wilson_interval, m)?)?;
    m.add_function(wrap_pyfunction!(holm_adjust, m)?)?;
    m.add_function(wrap_pyfunction!(agreement::advantage_sign_changes, m)?)?;
    m.add_function(wrap_pyfunction!(agreement::agreement, m)?)?;
    m.add_function(wrap_pyfunction!(mcnemar_exact, m)?)?;
    m.add_function(wrap_pyfunction!(median, m)?)?;
    m.add_function(wrap_pyfunction!(quantiles, m)?)?;
    m.add_function(wrap_pyfunction!(results_index_base, m)?)?;
    m.add_function(wrap_pyfunction!(results_declared_runs, m)?)?;
    m.add_class::<aggregator::StatsAggregator>()?;
    m.add_class::<log_fields::LogRecordFields>()?;
    m.add_function(wrap_pyfunction!(log_fields::latest_run_offsets, m)?)?;
    // The log formats the reader accepts, newest last: the writer takes its header's from here.
    m.add("RESULTS_LOG_FORMATS", crate::stats::LOG_FORMATS.to_vec())?;
    // The result model's schema and vocabulary: Python names them from here, never spells them again.
    use crate::stats::model;
    m.add("RESULT_SCHEMA", (model::SCHEMA, model::SCHEMA_VERSION))?;
    m.add(
        "COMPARISON_SCHEMA",
        (
            crate::stats::compare::SCHEMA,
            crate::stats::compare::SCHEMA_VERSION,
        ),
    )?;
    m.add("RUN_OUTCOMES", model::RUN_OUTCOMES.to_vec())?;
    m.add("ROW_OUTCOMES", model::ROW_OUTCOMES.to_vec())?;
    m.add_class::<output_rows::EvalOutputRows>()?;
    m.add(
        "EVAL_ROW_FIELDS",
        crate::stats::output_rows::FIELDS.to_vec(),
    )?;
    m.add_function(wrap_pyfunction!(output_rows::result_model_with_rows, m)?)?;
    Ok(())
}

pub(super) fn protocol(message: String) -> PyErr {
    CoreError::Protocol(message).into()
}

/// pass@k of one row: `1 - C(n-c, k) / C(n, k)`.
#[pyfunction]
fn pass_at_k(n: i64, c: i64, k: i64) -> PyResult<f64> {
    Ok(crate::stats::pass_at_k(n, c, k).map_err(CoreError::from)?)
}

/// McNemar's exact two-sided p-value for `b` first-only and `c` second-only passes.
#[pyfunction]
fn mcnemar_exact(py: Python<'_>, b: u64, c: u64) -> f64 {
    // A table of millions of discordant rows is a loop of that length: run it without the GIL.
    py.detach(|| crate::stats::mcnemar_exact(b, c).p_value)
}

/// What a results log's `row_index` / `run_index` count from, given its header's `kind`, `index_base`
/// and whether it names an `osmosis_version` (see `crate::stats::log_index_base`).
#[pyfunction]
#[pyo3(signature = (kind, index_base, by_package))]
fn results_index_base(kind: Option<&str>, index_base: Option<u64>, by_package: bool) -> u64 {
    crate::stats::log_index_base(kind, index_base, by_package)
}

/// The runs per row a results log header (its JSON text) declares, by the reader's rule (`None` when it
/// declares none): what `result_model` reports as `n_runs`, without reading the log's records.
#[pyfunction]
fn results_declared_runs(header: &str) -> PyResult<Option<u64>> {
    let value: serde_json::Value = serde_json::from_str(header)
        .map_err(|e| CoreError::Protocol(format!("results log header: {e}")))?;
    let Some(first) = value.as_object() else {
        return Ok(None);
    };
    let n = crate::stats::Meta::of_header(first).n_runs;
    Ok(n.filter(|&n| n > 0).map(|n| n as u64))
}

/// The median of the scores (`None` for none).
#[pyfunction]
fn median(py: Python<'_>, values: Vec<f64>) -> Option<f64> {
    py.detach(|| crate::stats::median(&values))
}

/// The `qs` quantiles of packed values (`None` for none); a non-finite value or a q outside [0, 1] is an error.
#[pyfunction]
fn quantiles(
    py: Python<'_>,
    values: &Bound<'_, PyBytes>,
    code: &str,
    qs: Vec<f64>,
) -> PyResult<Option<Vec<f64>>> {
    if let Some(q) = qs.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        let message = format!("quantiles must be between 0 and 1, got {q}");
        return Err(CoreError::from(crate::stats::StatsError::new(message).field("qs")).into());
    }
    let raw = values.as_bytes();
    // Decoding refuses NaN and infinite values, naming the first.
    let values = py.detach(|| packed::decode_values(raw, code, "values"))?;
    Ok(py.detach(|| crate::stats::quantiles(&values, &qs)))
}

/// Student's t quantile: the `t` with `P(T <= t) = p`.
#[pyfunction]
fn student_t_quantile(p: f64, df: f64) -> PyResult<f64> {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return Err(protocol(format!(
            "t quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}"
        )));
    }
    Ok(crate::stats::t_quantile(p, df))
}

/// Wilson's score interval `(low, high)` for proportion `p` over `n` trials at normal quantile `z`.
#[pyfunction]
fn wilson_interval(p: f64, n: f64, z: f64) -> PyResult<(f64, f64)> {
    if !((0.0..=1.0).contains(&p) && n > 0.0 && z > 0.0) {
        return Err(protocol(format!(
            "wilson needs 0 <= p <= 1, n > 0, z > 0, got {p}, {n}, {z}"
        )));
    }
    Ok(crate::stats::wilson(p, n, z))
}

/// Holm's step-down adjusted p-values, in the order given.
#[pyfunction]
fn holm_adjust(p_values: Vec<f64>) -> Vec<f64> {
    crate::stats::holm(&p_values)
}

/// pass^k of one row: `C(c, k) / C(n, k)`.
#[pyfunction]
fn pass_hat_k(n: i64, c: i64, k: i64) -> PyResult<f64> {
    Ok(crate::stats::pass_hat_k(n, c, k).map_err(CoreError::from)?)
}

/// The estimator over rows: `(sum over rows, rows, per-row values as packed f64 or None)`.
/// `row_offset` numbers the rows in errors when the caller hands over one chunk of a larger input.
#[pyfunction]
#[pyo3(signature = (estimator, n, c, k, per_row=false, row_offset=0))]
fn estimate_many(
    py: Python<'_>,
    estimator: &str,
    n: Column<'_>,
    c: Column<'_>,
    k: i64,
    per_row: bool,
    row_offset: u64,
) -> PyResult<(f64, usize, Option<Py<PyBytes>>)> {
    let estimator = Estimator::parse(estimator)
        .ok_or_else(|| protocol(format!("unknown estimator '{estimator}'")))?;
    let Column::Packed(c_bytes, c_code) = c else {
        return Err(protocol("c must be packed".into()));
    };
    let c_raw = c_bytes.as_bytes();
    let n_raw = match &n {
        Column::Scalar(v) => Err(*v),
        Column::Packed(b, code) => Ok((b.as_bytes(), code.as_str())),
    };
    let (result, rows) = py.detach(|| -> PyResult<_> {
        let ns;
        let counts = match n_raw {
            Err(v) => Counts::Same(v),
            Ok((bytes, code)) => {
                ns = decode_counts(bytes, code, "n", row_offset)?;
                Counts::PerRow(&ns)
            }
        };
        let result = if check_packed(c_raw, &c_code)? == Code::I8 {
            // The common case (int64 arrays, lists) is read in place, without a decoded copy.
            let cs = c_raw.chunks_exact(8).map(|b| i64::from_ne_bytes(fixed(b)));
            estimate_many_iter(estimator, counts, cs, k, per_row)
        } else {
            let cs = decode_counts(c_raw, &c_code, "c", row_offset)?;
            core_estimate_many(estimator, counts, &cs, k, per_row)
        };
        let result = result.map_err(|e| CoreError::from(e.shifted(row_offset)))?;
        let rows = c_raw.len() / Code::parse(&c_code).map_or(1, Code::size);
        Ok((result, rows))
    })?;
    let values = result.values.map(|v| f64_bytes(py, &v)).transpose()?;
    Ok((result.sum, rows, values))
}
