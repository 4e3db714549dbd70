//! `StatsAggregator`, the streaming aggregator behind `osmosis_ai.stats.Aggregator`, and the parsing of
//! its options.

use super::intervals::{
    as_tuple, check_interval_args, run_bootstrap, t_for_rows, IntervalTuple, NamedIntervals,
};
use super::packed::check_packed;
use super::protocol;
use crate::error::CoreError;
use crate::stats::{
    normal_interval, paired_difference, rows_with_data, Aggregator, AggregatorOptions, Bootstrap,
    FailedPolicy, Interval, NonFinitePolicy, StatsError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

pub(super) fn parse_failed(failed: &str) -> PyResult<FailedPolicy> {
    FailedPolicy::parse(failed).ok_or_else(|| {
        CoreError::from(
            StatsError::new(format!(
                "failed must be \"zero\" or \"exclude\", got {failed:?}"
            ))
            .field("failed"),
        )
        .into()
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn aggregator_options(
    pass_threshold: f64,
    thresholds: Vec<f64>,
    ks: Option<Vec<i64>>,
    n_runs: Option<i64>,
    failed: &str,
    nonfinite: &str,
    keep_rows: bool,
) -> PyResult<AggregatorOptions> {
    let failed = parse_failed(failed)?;
    let nonfinite = NonFinitePolicy::parse(nonfinite).ok_or_else(|| {
        CoreError::from(
            StatsError::new(format!(
                "nonfinite must be \"error\" or \"fail\", got {nonfinite:?}"
            ))
            .field("nonfinite"),
        )
    })?;
    Ok(AggregatorOptions {
        pass_threshold,
        extra_thresholds: thresholds,
        ks,
        n_runs,
        failed,
        nonfinite,
        keep_rows,
        skip_short_rows: false,
    })
}

/// The streaming aggregator behind `osmosis_ai.stats.Aggregator`.
#[pyclass(module = "osmosis_ai._core")]
pub struct StatsAggregator {
    pub(super) inner: Aggregator,
}

#[pymethods]
impl StatsAggregator {
    #[new]
    #[pyo3(signature = (pass_threshold=1.0, thresholds=Vec::new(), ks=None, n_runs=None, failed="zero", nonfinite="error", keep_rows=true))]
    fn new(
        pass_threshold: f64,
        thresholds: Vec<f64>,
        ks: Option<Vec<i64>>,
        n_runs: Option<i64>,
        failed: &str,
        nonfinite: &str,
        keep_rows: bool,
    ) -> PyResult<Self> {
        let options = aggregator_options(
            pass_threshold,
            thresholds,
            ks,
            n_runs,
            failed,
            nonfinite,
            keep_rows,
        )?;
        let inner = Aggregator::new(options).map_err(CoreError::from)?;
        Ok(Self { inner })
    }

    /// Adds one row of attempt scores (`None` = failed attempt) and `errors` attempts whose scorer raised.
    #[pyo3(signature = (scores, row_index=None, errors=0))]
    fn push(
        &mut self,
        scores: Vec<Option<f64>>,
        row_index: Option<u64>,
        errors: u32,
    ) -> PyResult<()> {
        let label = row_index.unwrap_or_else(|| self.inner.next_label());
        self.inner
            .push_row_with_errors(scores.iter().copied(), errors, label)
            .map_err(CoreError::from)?;
        Ok(())
    }

    /// Adds `rows` rows of `cols` attempts from a packed row-major matrix of scores.
    fn push_matrix(
        &mut self,
        py: Python<'_>,
        data: &Bound<'_, PyBytes>,
        code: &str,
        rows: usize,
        cols: usize,
    ) -> PyResult<()> {
        let raw = data.as_bytes();
        let code = check_packed(raw, code)?;
        let size = code.size();
        if raw.len() != rows * cols * size {
            return Err(protocol(format!(
                "{} bytes do not hold a {rows} x {cols} matrix of {code:?}",
                raw.len()
            )));
        }
        let inner = &mut self.inner;
        py.detach(|| -> Result<(), StatsError> {
            if cols == 0 {
                for _ in 0..rows {
                    let label = inner.next_label();
                    inner.push_row(std::iter::empty(), label)?;
                }
                return Ok(());
            }
            let mut buffer = Vec::with_capacity(cols);
            for row in raw.chunks_exact(cols * size) {
                let label = inner.next_label();
                buffer.clear();
                buffer.extend(row.chunks_exact(size).map(|c| Some(code.read(c))));
                inner.push_row(buffer.iter().copied(), label)?;
            }
            Ok(())
        })
        .map_err(CoreError::from)?;
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.inner.rows() as usize
    }

    /// Row indices with 0 < c < n at `threshold` (one given at construction), or a `StatsError`.
    fn mixed_rows(&self, threshold: f64) -> PyResult<Vec<u64>> {
        let rows = self.inner.mixed_rows(threshold).map_err(CoreError::from)?;
        rows.ok_or_else(|| {
            CoreError::from(
                StatsError::new(format!(
                    "threshold {threshold} is not tracked; give it as pass_threshold or in thresholds"
                ))
                .field("threshold"),
            )
            .into()
        })
    }

    /// The summary as a dict (see `osmosis_ai.stats.Summary`).
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &self.inner;
        let s = py.detach(|| inner.finish()).map_err(CoreError::from)?;
        let d = PyDict::new(py);
        d.set_item("rows", s.rows)?;
        d.set_item("count", s.count)?;
        d.set_item("failed", s.failed)?;
        d.set_item("padded", s.padded)?;
        d.set_item("errors", s.errors)?;
        d.set_item("mean", s.mean)?;
        d.set_item("variance", s.variance)?;
        d.set_item("std", s.std)?;
        d.set_item("sample_variance", s.sample_variance)?;
        d.set_item("sample_std", s.sample_std)?;
        d.set_item("min", s.min)?;
        d.set_item("max", s.max)?;
        d.set_item("min_attempts", s.min_attempts)?;
        d.set_item("max_attempts", s.max_attempts)?;
        d.set_item("pass_threshold", s.pass_threshold)?;
        d.set_item("ks", s.ks)?;
        d.set_item("pass_at_k", s.pass_at_k)?;
        d.set_item("pass_hat_k", s.pass_hat_k)?;
        d.set_item("pass_rows", s.pass_rows)?;
        d.set_item("mixed_fraction", s.mixed_fraction)?;
        Ok(d)
    }

    /// The result model's intervals over these rows, as JSON `{name: {estimate, low, high, level,
    /// method, rows, effective_n, note}}`: the mean score's (Student t) and each pass rate's (Wilson).
    fn model_intervals(&self, level: f64) -> PyResult<String> {
        check_interval_args("normal", level, 1)?;
        let intervals = crate::stats::model_intervals(&self.inner.spread(), level);
        serde_json::to_string(&crate::stats::model::Ordered(intervals))
            .map_err(|e| CoreError::Protocol(e.to_string()).into())
    }

    /// The comparison model's paired differences `other - self` (Student t) over the rows both hold,
    /// matched by row index, for the mean and pass@k / pass^k at `ks`, as JSON `{name: {estimate, a, b,
    /// low, high, level, method, p_value, p_holm, verdict, note}}`.
    fn paired_differences(
        &self,
        py: Python<'_>,
        other: PyRef<'_, StatsAggregator>,
        ks: Vec<u64>,
        level: f64,
    ) -> PyResult<String> {
        check_interval_args("normal", level, 1)?;
        let (mine, theirs) = (&self.inner, &other.inner);
        let differences = py
            .detach(|| crate::stats::paired_t_differences(mine, theirs, &ks, level))
            .map_err(CoreError::from)?;
        serde_json::to_string(&differences).map_err(|e| CoreError::Protocol(e.to_string()).into())
    }

    /// Paired intervals of `self - other` over the rows both hold (matched by row index), for `mean`
    /// and pass@k / pass^k at `ks`: `(paired rows, [(name, (estimate, low, high) | None)])`. "normal" is
    /// `estimate ± t·se` (Student's t, rows - 1 degrees of freedom), kept inside [-1, 1] when both sides'
    /// rows lie in [0, 1].
    #[pyo3(signature = (other, ks, method, level, resamples, seed))]
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &self,
        py: Python<'_>,
        other: PyRef<'_, StatsAggregator>,
        ks: Vec<u64>,
        method: &str,
        level: f64,
        resamples: usize,
        seed: u64,
    ) -> PyResult<(usize, NamedIntervals)> {
        check_interval_args(method, level, resamples)?;
        let (mine, theirs) = (&self.inner, &other.inner);
        let (a, b) = py
            .detach(|| mine.paired_columns(theirs, &ks))
            .map_err(CoreError::from)?;
        let rows = a.values.first().map_or(0, Vec::len);
        let width = a.values.len();
        let intervals: Vec<Option<Interval>> = if method == "normal" {
            py.detach(|| {
                (0..width)
                    .map(|j| {
                        let (wa, wb) = (a.weights[j].as_deref(), b.weights[j].as_deref());
                        paired_difference(&a.values[j], wa, &b.values[j], wb)
                            .map(|d| d.interval(t_for_rows(level, d.rows)))
                    })
                    .collect()
            })
        } else {
            let columns: Vec<&[f64]> = a
                .values
                .iter()
                .chain(&b.values)
                .map(Vec::as_slice)
                .collect();
            let weights = a
                .weights
                .iter()
                .chain(&b.weights)
                .map(Option::as_deref)
                .collect();
            let work = rows.max(1) * (columns.len() + 1);
            let mut boot = Bootstrap::new(columns, weights, resamples, seed);
            while !boot.done() {
                py.detach(|| boot.step((4_000_000 / work).max(1)));
                py.check_signals()?;
            }
            let pairs: Vec<(usize, usize)> = (0..width).map(|j| (j, width + j)).collect();
            boot.difference_intervals(&pairs, level)
        };
        Ok((
            rows,
            a.names
                .into_iter()
                .zip(intervals.into_iter().map(as_tuple))
                .collect(),
        ))
    }

    /// Intervals over rows for `mean` and pass@k / pass^k at `ks`: `[(name, (estimate, low, high) | None)]`.
    /// "normal" is `estimate ± t·se` (Student's t at rows - 1 degrees of freedom, the rows of each column
    /// that carry data), kept inside [0, 1] when every row's value lies there.
    #[pyo3(signature = (ks, method, level, resamples, seed))]
    fn intervals(
        &self,
        py: Python<'_>,
        ks: Vec<u64>,
        method: &str,
        level: f64,
        resamples: usize,
        seed: u64,
    ) -> PyResult<Vec<(String, Option<IntervalTuple>)>> {
        check_interval_args(method, level, resamples)?;
        let inner = &self.inner;
        let cols = py
            .detach(|| inner.interval_columns(&ks))
            .map_err(CoreError::from)?;
        let intervals = if method == "normal" {
            py.detach(|| {
                cols.values
                    .iter()
                    .zip(&cols.weights)
                    .map(|(v, w)| {
                        let t = t_for_rows(level, rows_with_data(v.len(), w.as_deref()));
                        normal_interval(v, w.as_deref(), t)
                    })
                    .collect()
            })
        } else {
            let columns = cols.values.iter().map(Vec::as_slice).collect();
            let weights = cols.weights.iter().map(Option::as_deref).collect();
            run_bootstrap(py, columns, weights, level, resamples, seed)?
        };
        Ok(cols
            .names
            .into_iter()
            .zip(intervals.into_iter().map(as_tuple))
            .collect())
    }
}
