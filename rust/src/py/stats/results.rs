//! `summarize_results_file`: a results file in any layout → per model, run counters and one
//! `StatsAggregator` per score name (see `crate::stats::results`).

use super::aggregator::{aggregator_options, parse_failed, StatsAggregator};
use crate::error::CoreError;
use crate::py::errors::without_gil;
use crate::stats::{ModelTally, ResultsOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

type NameEntry = (String, StatsAggregator, Vec<String>);
type ModelEntry<'py> = (String, Bound<'py, PyDict>, Vec<NameEntry>);

fn model_entry(py: Python<'_>, model: ModelTally) -> PyResult<ModelEntry<'_>> {
    let counters = PyDict::new(py);
    counters.set_item("rows", model.rows)?;
    counters.set_item("runs", model.runs)?;
    counters.set_item("failed", model.failed)?;
    counters.set_item("eval_error_runs", model.eval_error_runs)?;
    counters.set_item("tokens", model.tokens)?;
    counters.set_item("duration_ms", model.duration_ms)?;
    let names = model
        .names
        .into_iter()
        .map(|n| {
            (
                n.name,
                StatsAggregator {
                    inner: n.aggregator,
                },
                n.messages,
            )
        })
        .collect();
    Ok((model.tag, counters, names))
}

/// `{layout, kind, config_json, pass_threshold, n_runs, failed, models: [(tag, counters,
/// [(name, aggregator, first error messages)])]}`; `None` options are taken from the file.
#[pyfunction]
#[pyo3(signature = (path, pass_threshold=None, thresholds=Vec::new(), ks=None, n_runs=None, failed=None, nonfinite="error", keep_rows=true))]
#[allow(clippy::too_many_arguments)]
pub(super) fn summarize_results_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    pass_threshold: Option<f64>,
    thresholds: Vec<f64>,
    ks: Option<Vec<i64>>,
    n_runs: Option<i64>,
    failed: Option<&str>,
    nonfinite: &str,
    keep_rows: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let base = aggregator_options(
        pass_threshold.unwrap_or(1.0),
        thresholds,
        ks,
        n_runs,
        failed.unwrap_or("zero"),
        nonfinite,
        keep_rows,
    )?;
    // Validates the options before reading anything.
    crate::stats::Aggregator::new(base.clone()).map_err(CoreError::from)?;
    let options = ResultsOptions {
        base,
        pass_threshold,
        n_runs,
        failed: failed.map(parse_failed).transpose()?,
        model: false,
        per_row: false,
    };
    let summary = without_gil(py, |interrupted| {
        crate::stats::summarize_results_file(&path, &options, interrupted)
    })?;
    let out = PyDict::new(py);
    out.set_item("layout", summary.layout.name())?;
    out.set_item("kind", summary.meta.kind.as_deref())?;
    let config = summary.meta.config.as_ref().map(|c| c.to_string());
    out.set_item("config_json", config)?;
    out.set_item("pass_threshold", summary.options.pass_threshold)?;
    out.set_item("n_runs", summary.options.n_runs)?;
    let failed = match summary.options.failed {
        crate::stats::FailedPolicy::Zero => "zero",
        crate::stats::FailedPolicy::Exclude => "exclude",
    };
    out.set_item("failed", failed)?;
    let models = summary
        .models
        .into_iter()
        .map(|m| model_entry(py, m))
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("models", models)?;
    Ok(out)
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| CoreError::Protocol(e.to_string()).into())
}

/// The options of a result model pass (`result_model`, `result_model_with_rows`); `None` options are
/// taken from the file.
pub(super) fn model_options(
    pass_threshold: Option<f64>,
    n_runs: Option<i64>,
    failed: Option<&str>,
    per_row: bool,
) -> PyResult<ResultsOptions> {
    let base = aggregator_options(1.0, Vec::new(), None, None, "zero", "fail", false)?;
    Ok(ResultsOptions {
        base,
        pass_threshold,
        n_runs,
        failed: failed.map(parse_failed).transpose()?,
        model: true,
        per_row,
    })
}

/// The result model of a results file as JSON (schema `osmosis-result-summary`); `None` options are
/// taken from the file.
#[pyfunction]
#[pyo3(signature = (path, pass_threshold=None, n_runs=None, failed=None, level=0.95, per_row=false))]
pub(super) fn result_model(
    py: Python<'_>,
    path: PathBuf,
    pass_threshold: Option<f64>,
    n_runs: Option<i64>,
    failed: Option<&str>,
    level: f64,
    per_row: bool,
) -> PyResult<String> {
    let options = model_options(pass_threshold, n_runs, failed, per_row)?;
    let name = path.display().to_string();
    let model = without_gil(py, |interrupted| {
        let summary = crate::stats::summarize_results_file(&path, &options, interrupted)?;
        Ok(crate::stats::model::build(summary, &name, level)?)
    })?;
    to_json(&model)
}

/// Two results files compared as JSON (schema `osmosis-result-comparison`).
#[pyfunction]
#[pyo3(signature = (a, b, metric=None, allow_partial=false, level=0.95, method="t", resamples=1000, seed=0))]
#[allow(clippy::too_many_arguments)]
pub(super) fn compare_results(
    py: Python<'_>,
    a: PathBuf,
    b: PathBuf,
    metric: Option<String>,
    allow_partial: bool,
    level: f64,
    method: &str,
    resamples: usize,
    seed: u64,
) -> PyResult<String> {
    use crate::stats::compare::{compare_files, CompareOptions, Method};
    let method = Method::parse(method).ok_or_else(|| {
        CoreError::from(
            crate::stats::StatsError::new(format!(
                "method must be \"t\" or \"bootstrap\", got {method:?}"
            ))
            .field("method"),
        )
    })?;
    let options = CompareOptions {
        metric,
        allow_partial,
        level,
        method,
        resamples,
        seed,
    };
    let comparison = without_gil(py, |interrupted| {
        compare_files(&a, &b, &options, interrupted)
    })?;
    to_json(&comparison)
}
