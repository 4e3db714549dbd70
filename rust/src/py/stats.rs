//! Bindings for `crate::stats`. Arrays come in as `(bytes, code)` pairs packed by `osmosis_ai.stats`
//! (the buffer protocol is not in the 3.10 limited API), scalars as ints; loops run without the GIL.

use crate::error::CoreError;
use crate::stats::{
    estimate_many as core_estimate_many, estimate_many_iter, normal_difference, normal_interval,
    Aggregator, AggregatorOptions, Bootstrap, Counts, Estimator, FailedPolicy, Interval,
    NonFinitePolicy, ResultsError, StatsError,
};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pass_at_k, m)?)?;
    m.add_function(wrap_pyfunction!(pass_hat_k, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_many, m)?)?;
    m.add_function(wrap_pyfunction!(row_interval, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate_results_file, m)?)?;
    m.add_class::<StatsAggregator>()?;
    Ok(())
}

/// An integer column: one value for every row, or packed native-endian values with their type code.
#[derive(FromPyObject)]
enum Column<'py> {
    Scalar(i64),
    Packed(Bound<'py, PyBytes>, String),
}

fn protocol(message: String) -> PyErr {
    CoreError::Protocol(message).into()
}

/// The type of packed values, parsed once per array (not once per value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
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
    fn parse(code: &str) -> Option<Self> {
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

    fn size(self) -> usize {
        match self {
            Self::I1 | Self::U1 => 1,
            Self::I2 | Self::U2 => 2,
            Self::I4 | Self::U4 | Self::F4 => 4,
            Self::I8 | Self::U8 | Self::F8 => 8,
        }
    }

    /// Reads one packed value as f64 (integers above 2^53 round; `decode_counts` reads those exactly).
    /// `chunk` holds exactly `self.size()` bytes.
    fn read(self, chunk: &[u8]) -> f64 {
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
fn fixed<const N: usize>(chunk: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&chunk[..N]);
    out
}

fn check_packed(bytes: &[u8], code: &str) -> PyResult<Code> {
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
fn decode_counts(
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
fn decode_values(bytes: &[u8], code: &str, field: &'static str) -> Result<Vec<f64>, PyErr> {
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

/// pass@k of one row: `1 - C(n-c, k) / C(n, k)`.
#[pyfunction]
fn pass_at_k(n: i64, c: i64, k: i64) -> PyResult<f64> {
    Ok(crate::stats::pass_at_k(n, c, k).map_err(CoreError::from)?)
}

/// pass^k of one row: `C(c, k) / C(n, k)`.
#[pyfunction]
fn pass_hat_k(n: i64, c: i64, k: i64) -> PyResult<f64> {
    Ok(crate::stats::pass_hat_k(n, c, k).map_err(CoreError::from)?)
}

fn f64_bytes(py: Python<'_>, values: &[f64]) -> PyResult<Py<PyBytes>> {
    let bytes = PyBytes::new_with(py, values.len() * 8, |buf| {
        for (out, v) in buf.chunks_exact_mut(8).zip(values) {
            out.copy_from_slice(&v.to_ne_bytes());
        }
        Ok(())
    })?;
    Ok(bytes.unbind())
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

type IntervalTuple = (f64, f64, f64);
type NamedIntervals = Vec<(String, Option<IntervalTuple>)>;

fn as_tuple(interval: Option<Interval>) -> Option<IntervalTuple> {
    interval.map(|i| (i.estimate, i.low, i.high))
}

/// Runs a bootstrap in chunks, checking for Ctrl+C between them.
fn run_bootstrap(
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

fn check_interval_args(method: &str, level: f64, resamples: usize) -> PyResult<()> {
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
fn row_interval(
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
    check_interval_args(method, level, resamples)?;
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
    if method == "normal" {
        let interval = py.detach(|| normal_interval(&values, weights.as_deref(), z));
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

fn aggregator_options(
    pass_threshold: f64,
    thresholds: Vec<f64>,
    ks: Option<Vec<i64>>,
    n_runs: Option<i64>,
    failed: &str,
    nonfinite: &str,
) -> PyResult<AggregatorOptions> {
    let failed = FailedPolicy::parse(failed).ok_or_else(|| {
        CoreError::from(
            StatsError::new(format!(
                "failed must be \"zero\" or \"exclude\", got {failed:?}"
            ))
            .field("failed"),
        )
    })?;
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
    })
}

/// One aggregator per score name of a results log (JSONL), in the order names first appear.
#[pyfunction]
#[pyo3(signature = (path, pass_threshold=1.0, thresholds=Vec::new(), ks=None, n_runs=None, failed="zero", nonfinite="error"))]
#[allow(clippy::too_many_arguments)]
fn aggregate_results_file(
    py: Python<'_>,
    path: PathBuf,
    pass_threshold: f64,
    thresholds: Vec<f64>,
    ks: Option<Vec<i64>>,
    n_runs: Option<i64>,
    failed: &str,
    nonfinite: &str,
) -> PyResult<Vec<(String, StatsAggregator)>> {
    let options = aggregator_options(pass_threshold, thresholds, ks, n_runs, failed, nonfinite)?;
    // Validates the options before reading anything.
    Aggregator::new(options.clone()).map_err(CoreError::from)?;
    let result = py.detach(|| crate::stats::aggregate_results_file(&path, &options));
    match result {
        Ok(aggregators) => Ok(aggregators
            .into_iter()
            .map(|(name, inner)| (name, StatsAggregator { inner }))
            .collect()),
        Err(ResultsError::Stats(e)) => Err(CoreError::from(e).into()),
        Err(ResultsError::Io(e)) => {
            let message = format!("{}: {e}", path.display());
            Err(match e.kind() {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
                _ => PyOSError::new_err(message),
            })
        }
    }
}

/// The streaming aggregator behind `osmosis_ai.stats.Aggregator`.
#[pyclass(module = "osmosis_ai._core")]
pub struct StatsAggregator {
    inner: Aggregator,
}

#[pymethods]
impl StatsAggregator {
    #[new]
    #[pyo3(signature = (pass_threshold=1.0, thresholds=Vec::new(), ks=None, n_runs=None, failed="zero", nonfinite="error"))]
    fn new(
        pass_threshold: f64,
        thresholds: Vec<f64>,
        ks: Option<Vec<i64>>,
        n_runs: Option<i64>,
        failed: &str,
        nonfinite: &str,
    ) -> PyResult<Self> {
        let options =
            aggregator_options(pass_threshold, thresholds, ks, n_runs, failed, nonfinite)?;
        let inner = Aggregator::new(options).map_err(CoreError::from)?;
        Ok(Self { inner })
    }

    /// Adds one row of attempt scores (`None` = failed attempt).
    #[pyo3(signature = (scores, row_index=None))]
    fn push(&mut self, scores: Vec<Option<f64>>, row_index: Option<u64>) -> PyResult<()> {
        let label = row_index.unwrap_or_else(|| self.inner.next_label());
        self.inner
            .push_row(scores.iter().copied(), label)
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
        self.inner.mixed_rows(threshold).ok_or_else(|| {
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
        d.set_item("mean", s.mean)?;
        d.set_item("std", s.std)?;
        d.set_item("min", s.min)?;
        d.set_item("max", s.max)?;
        d.set_item("min_attempts", s.min_attempts)?;
        d.set_item("max_attempts", s.max_attempts)?;
        d.set_item("pass_threshold", s.pass_threshold)?;
        d.set_item("ks", s.ks)?;
        d.set_item("pass_at_k", s.pass_at_k)?;
        d.set_item("pass_hat_k", s.pass_hat_k)?;
        d.set_item("mixed_fraction", s.mixed_fraction)?;
        Ok(d)
    }

    /// Paired intervals of `self - other` over the rows both hold (matched by row index), for `mean`
    /// and pass@k / pass^k at `ks`: `(paired rows, [(name, (estimate, low, high) | None)])`.
    #[pyo3(signature = (other, ks, method, level, z, resamples, seed))]
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &self,
        py: Python<'_>,
        other: PyRef<'_, StatsAggregator>,
        ks: Vec<u64>,
        method: &str,
        level: f64,
        z: f64,
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
                        normal_difference(
                            &a.values[j],
                            a.weights[j].as_deref(),
                            &b.values[j],
                            b.weights[j].as_deref(),
                            z,
                        )
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
    #[pyo3(signature = (ks, method, level, z, resamples, seed))]
    #[allow(clippy::too_many_arguments)]
    fn intervals(
        &self,
        py: Python<'_>,
        ks: Vec<u64>,
        method: &str,
        level: f64,
        z: f64,
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
                    .map(|(v, w)| normal_interval(v, w.as_deref(), z))
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
