//! Two results files compared on the rows they share: paired differences `B - A` with intervals (Student
//! t, or the paired bootstrap when chosen), McNemar's exact test on each row's first run, Holm's
//! adjustment over every statistic tested, and a verdict only when the interval, the adjusted p-value
//! and McNemar agree.
//!
//! Alignment: pass@k is compared for k up to the smaller declared n, each side's unbiased estimate
//! over all its runs; nothing is cut, and the difference in n is a warning.

use super::model::{self, model_ks, FunctionResult, Ordered};
use super::paired::{bootstrap_bounds, flips, t_difference, verdicts};
use super::warnings::{self, Warning};
use super::{summarize_results_file, ResultsOptions, ResultsSummary};
use crate::error::{CoreError, CoreResult};
use crate::stats::{holm, mcnemar_exact, Aggregator, StatsError};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// The schema name of a comparison's JSON form, and its version.
pub const SCHEMA: &str = "osmosis-result-comparison";
pub const SCHEMA_VERSION: u32 = 1;

/// Fewer paired rows than this give no bootstrap interval (resampling a handful of rows is surer
/// than the data).
pub const MIN_BOOTSTRAP_ROWS: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    T,
    Bootstrap,
}

impl Method {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "t" => Some(Self::T),
            "bootstrap" => Some(Self::Bootstrap),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::T => "t",
            Self::Bootstrap => "bootstrap",
        }
    }
}

#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub metric: Option<String>,
    pub allow_partial: bool,
    pub level: f64,
    pub method: Method,
    pub resamples: usize,
    pub seed: u64,
}

/// One side as its own file tells it (all its rows, its own n): nothing of it is cut.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub path: String,
    pub n_runs: Option<u64>,
    pub rows: u64,
    pub summary: FunctionResult,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// `B - A` over the matched rows; `None` when a side has no value (nothing of it scored), never 0.
    pub estimate: Option<f64>,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub level: f64,
    pub method: &'static str,
    /// The paired t-test's two-sided p-value, and after Holm's adjustment over every statistic.
    pub p_value: Option<f64>,
    pub p_holm: Option<f64>,
    /// "b_better", "a_better" or "no_clear_difference".
    pub verdict: &'static str,
    /// Why there is no interval (or no estimate), when there is none.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Flips {
    /// On each matched row's first run: passed in A only, in B only, in both, in neither.
    pub a_only: u64,
    pub b_only: u64,
    pub both: u64,
    pub neither: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub statistic: String,
    pub outcome: &'static str,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub version: u32,
    pub metric: String,
    /// "row_key" (row content) or "row_index".
    pub matched_by: &'static str,
    pub rows_matched: u64,
    pub ks: Vec<u64>,
    pub level: f64,
    pub method: &'static str,
    pub a: Side,
    pub b: Side,
    pub differences: Ordered<Difference>,
    pub flips: Flips,
    /// `None` when no matched row's first run counts on both sides (a side with nothing scored).
    pub mcnemar_p: Option<f64>,
    /// Statistics with a p-value (the size of Holm's family).
    pub tested: usize,
    pub verdict: Verdict,
    pub warnings: Vec<Warning>,
}

fn read(path: &Path, interrupted: &mut dyn FnMut() -> bool) -> CoreResult<ResultsSummary> {
    summarize_results_file(path, &ResultsOptions::file_model(), interrupted)
}

fn metric_index(summary: &ResultsSummary, path: &Path, metric: &str) -> Result<usize, StatsError> {
    let names: Vec<&str> = summary
        .models
        .first()
        .map(|m| m.names.iter().map(|n| n.name.as_str()).collect())
        .unwrap_or_default();
    names.iter().position(|n| *n == metric).ok_or_else(|| {
        let held = if names.is_empty() {
            "no scores".to_string()
        } else {
            names.join(", ")
        };
        StatsError::new(format!(
            "{}: no score named '{metric}'; it holds {held}",
            path.display()
        ))
        .field("metric")
    })
}

/// Row labels by pairing key: the content key with its copy number (a dataset that repeats a row
/// holds it twice: the n-th copy pairs with the n-th), or the row index when a side lacks keys.
fn keys(summary: &ResultsSummary, by_content: bool) -> HashMap<String, u64> {
    let Some(model) = summary.models.first() else {
        return HashMap::new();
    };
    if !by_content {
        // Every row of a name is in its first-attempt table: its keys are the row labels.
        let labels = model.names.first().map(|n| n.first_attempt.keys());
        return labels
            .into_iter()
            .flatten()
            .map(|&l| (l.to_string(), l))
            .collect();
    }
    let mut labels: Vec<(&String, u64)> = model.row_keys.iter().map(|(l, k)| (k, *l)).collect();
    labels.sort_by_key(|(k, l)| ((*k).clone(), *l));
    let mut copies: HashMap<&String, u64> = HashMap::new();
    labels
        .into_iter()
        .map(|(key, label)| {
            let copy = copies.entry(key).or_insert(0);
            *copy += 1;
            (format!("{key}#{copy}"), label)
        })
        .collect()
}

fn side_n(summary: &ResultsSummary, aggregator: &Aggregator) -> Result<u64, StatsError> {
    match summary.options.n_runs.filter(|&n| n > 0) {
        Some(n) => Ok(n as u64),
        None => Ok(aggregator.finish()?.min_attempts.max(1)),
    }
}

/// Compares two results files; see the module documentation.
pub fn compare_files(
    path_a: &Path,
    path_b: &Path,
    options: &CompareOptions,
    interrupted: &mut dyn FnMut() -> bool,
) -> CoreResult<Comparison> {
    if !(options.level > 0.0 && options.level < 1.0) {
        return Err(StatsError::new(format!(
            "level must be between 0 and 1, got {}",
            options.level
        ))
        .field("level")
        .into());
    }
    let sum_a = read(path_a, interrupted)?;
    let sum_b = read(path_b, interrupted)?;
    let metric = match &options.metric {
        Some(m) => m.clone(),
        None => sum_a
            .models
            .first()
            .and_then(|m| m.names.first())
            .map(|n| n.name.clone())
            .ok_or_else(|| {
                StatsError::new(format!("{}: no scores to compare", path_a.display()))
                    .field("metric")
            })?,
    };
    let (ia, ib) = (
        metric_index(&sum_a, path_a, &metric)?,
        metric_index(&sum_b, path_b, &metric)?,
    );
    let (ma, mb) = (&sum_a.models[0], &sum_b.models[0]);
    let (ta, tb) = (&ma.names[ia], &mb.names[ib]);
    let by_content = [ma, mb]
        .iter()
        .all(|m| m.rows > 0 && m.row_keys.len() as u64 == m.rows);
    let (keys_a, keys_b) = (keys(&sum_a, by_content), keys(&sum_b, by_content));
    let mut pairs: Vec<(u64, u64)> = keys_a
        .iter()
        .filter_map(|(k, la)| keys_b.get(k).map(|lb| (*la, *lb)))
        .collect();
    pairs.sort_unstable();
    let matched_by = if by_content { "row_key" } else { "row_index" };
    let matched = pairs.len() as u64;
    let (rows_a, rows_b) = (ma.rows, mb.rows);
    if !options.allow_partial && (matched != rows_a || matched != rows_b) {
        return Err(StatsError::new(format!(
            "{} and {} were run on different datasets: {matched} rows match by {} (A has {rows_a} rows, B has {rows_b}). \
             Compare runs of the same dataset, or allow a partial comparison (allow_partial=True, --allow-partial) of the {matched} shared rows.",
            path_a.display(), path_b.display(), if by_content { "content" } else { "row index" }
        )).field("rows").into());
    }
    if matched < 2 {
        return Err(StatsError::new(format!(
            "{} and {} share {matched} rows; a comparison needs at least 2",
            path_a.display(),
            path_b.display()
        ))
        .field("rows")
        .into());
    }
    let (n_a, n_b) = (
        side_n(&sum_a, &ta.aggregator)?,
        side_n(&sum_b, &tb.aggregator)?,
    );
    let ks = model_ks(n_a.min(n_b));
    let (ca, cb) = ta
        .aggregator
        .paired_columns_by(&tb.aggregator, &pairs, &ks)?;
    let mut list: Vec<(String, Difference)> = (0..ca.names.len())
        .map(|j| {
            (
                ca.names[j].clone(),
                t_difference(&ca, &cb, j, options.level),
            )
        })
        .collect();
    if options.method == Method::Bootstrap {
        let mut only: Vec<Difference> = list.iter().map(|(_, d)| d.clone()).collect();
        bootstrap_bounds(&ca, &cb, &mut only, options);
        for ((_, d), b) in list.iter_mut().zip(only) {
            d.method = b.method;
            (d.low, d.high) = (b.low, b.high);
            d.note = b.note.or(d.note.take());
        }
    }
    let tested: Vec<usize> = (0..list.len())
        .filter(|&j| list[j].1.p_value.is_some())
        .collect();
    let adjusted = holm(
        &tested
            .iter()
            .map(|&j| list[j].1.p_value.unwrap_or(1.0))
            .collect::<Vec<_>>(),
    );
    for (&j, p) in tested.iter().zip(adjusted) {
        list[j].1.p_holm = Some(p);
    }
    // A side with nothing scored on these rows has no pass or fail to flip (its errored runs are no 0s).
    let f = if ca.scored == 0 || cb.scored == 0 {
        Flips::default()
    } else {
        flips(&ta.first_attempt, &tb.first_attempt, &pairs)
    };
    let counted = f.a_only + f.b_only + f.both + f.neither;
    let mcnemar_p = (counted > 0).then(|| mcnemar_exact(f.a_only, f.b_only).p_value);
    let alpha = ((1.0 - options.level) * 1e9).round() / 1e9;
    let mut differences = Ordered(list);
    let verdict = verdicts(&mut differences, f, mcnemar_p, alpha);
    let mut out_warnings = Vec::new();
    if n_a != n_b {
        out_warnings.push(warnings::n_differs(n_a, n_b));
    }
    if matched != rows_a || matched != rows_b {
        out_warnings.push(warnings::rows_differ(rows_a, rows_b, matched, matched_by));
    }
    out_warnings.push(warnings::multiplicity(tested.len(), alpha));
    let level = options.level;
    let side = |summary: ResultsSummary,
                path: &Path,
                index: usize,
                label: &str,
                out: &mut Vec<Warning>|
     -> CoreResult<Side> {
        let n = summary.options.n_runs.filter(|&n| n > 0).map(|n| n as u64);
        let name = path.display().to_string();
        let built = model::build(summary, &name, level)?;
        out.extend(built.warnings.iter().map(|w| warnings::side(label, w)));
        let model = built
            .models
            .into_iter()
            .next()
            .ok_or_else(|| CoreError::Protocol("a side without a model".into()))?;
        Ok(Side {
            path: name,
            n_runs: n,
            rows: model.total_rows,
            summary: model
                .functions
                .into_iter()
                .nth(index)
                .ok_or_else(|| CoreError::Protocol("a side without its metric".into()))?,
        })
    };
    let a = side(sum_a, path_a, ia, "A", &mut out_warnings)?;
    let b = side(sum_b, path_b, ib, "B", &mut out_warnings)?;
    Ok(Comparison {
        schema: SCHEMA,
        version: SCHEMA_VERSION,
        metric,
        matched_by,
        rows_matched: matched,
        ks,
        level,
        method: options.method.name(),
        a,
        b,
        differences,
        flips: f,
        mcnemar_p,
        tested: tested.len(),
        verdict,
        warnings: out_warnings,
    })
}
