//! Two results files compared on the rows they share: paired differences `B - A` with intervals (Student
//! t, or the paired bootstrap when chosen), McNemar's exact test on each row's first run, Holm's
//! adjustment over every statistic tested, and a verdict only when the interval, the adjusted p-value
//! and McNemar agree.
//!
//! Alignment: pass@k is compared for k up to the smaller declared n, each side's unbiased estimate
//! over all its runs; nothing is cut, and the difference in n is a warning.

use super::model::{self, model_ks, FunctionResult, Ordered};
use super::warnings::{self, Warning};
use super::{summarize_results_file, ResultsOptions, ResultsSummary};
use crate::error::{CoreError, CoreResult};
use crate::stats::{
    holm, mcnemar_exact, normal_difference, t_quantile, t_two_sided_p, Aggregator,
    AggregatorOptions, Bootstrap, IntervalColumns, StatsError,
};
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
    pub n: Option<u64>,
    pub rows: u64,
    pub summary: FunctionResult,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// `B - A` over the matched rows.
    pub estimate: f64,
    pub a: f64,
    pub b: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub level: f64,
    pub method: &'static str,
    /// The paired t-test's two-sided p-value, and after Holm's adjustment over every statistic.
    pub p_value: Option<f64>,
    pub p_holm: Option<f64>,
    /// "b_better", "a_better" or "no_clear_difference".
    pub verdict: &'static str,
    /// Why there is no interval, when there is none.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
    pub mcnemar_p: f64,
    /// Statistics with a p-value (the size of Holm's family).
    pub tested: usize,
    pub verdict: Verdict,
    pub warnings: Vec<Warning>,
}

fn read(path: &Path, interrupted: &mut dyn FnMut() -> bool) -> CoreResult<ResultsSummary> {
    let options = ResultsOptions {
        base: AggregatorOptions::default(),
        pass_threshold: None,
        n_runs: None,
        failed: None,
        model: true,
    };
    summarize_results_file(path, &options, interrupted)
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

fn flips(
    a: &HashMap<u64, Option<bool>>,
    b: &HashMap<u64, Option<bool>>,
    pairs: &[(u64, u64)],
) -> Flips {
    let mut f = Flips {
        a_only: 0,
        b_only: 0,
        both: 0,
        neither: 0,
    };
    for (la, lb) in pairs {
        match (a.get(la).copied().flatten(), b.get(lb).copied().flatten()) {
            (Some(true), Some(false)) => f.a_only += 1,
            (Some(false), Some(true)) => f.b_only += 1,
            (Some(true), Some(true)) => f.both += 1,
            (Some(false), Some(false)) => f.neither += 1,
            _ => {}
        }
    }
    f
}

/// The paired difference `B - A` of column `j`, with its t interval and p-value.
fn t_difference(a: &IntervalColumns, b: &IntervalColumns, j: usize, level: f64) -> Difference {
    let (wa, wb) = (a.weights[j].as_deref(), b.weights[j].as_deref());
    let rows = a.values[j].len();
    let ratio = |v: &[f64], w: Option<&[f64]>| {
        v.iter().sum::<f64>() / w.map_or(rows as f64, |w| w.iter().sum())
    };
    let (va, vb) = (ratio(&a.values[j], wa), ratio(&b.values[j], wb));
    let mut out = Difference {
        estimate: vb - va,
        a: va,
        b: vb,
        low: None,
        high: None,
        level,
        method: "t",
        p_value: None,
        p_holm: None,
        verdict: "no_clear_difference",
        note: None,
    };
    let Some(unit) = normal_difference(&b.values[j], wb, &a.values[j], wa, 1.0) else {
        out.note = Some(format!(
            "{rows} matched rows with scores on both sides: no interval"
        ));
        return out;
    };
    let se = unit.high - unit.estimate;
    if se.is_nan() || se <= 1e-12 * unit.estimate.abs().max(1.0) {
        out.note = Some(format!(
            "the {rows} matched rows all differ by the same amount: no spread to estimate an interval from"
        ));
        return out;
    }
    let df = rows as f64 - 1.0;
    let t = t_quantile(0.5 + level / 2.0, df);
    out.low = Some(unit.estimate - t * se);
    out.high = Some(unit.estimate + t * se);
    out.p_value = Some(t_two_sided_p(unit.estimate / se, df));
    out
}

fn bootstrap_bounds(
    a: &IntervalColumns,
    b: &IntervalColumns,
    differences: &mut [Difference],
    options: &CompareOptions,
) {
    let rows = a.values.first().map_or(0, Vec::len);
    for d in differences.iter_mut() {
        d.method = "bootstrap";
        d.low = None;
        d.high = None;
        if rows < MIN_BOOTSTRAP_ROWS {
            d.note = Some(format!(
                "{rows} matched rows: the bootstrap needs at least {MIN_BOOTSTRAP_ROWS} (choose the t interval)"
            ));
        }
    }
    if rows < MIN_BOOTSTRAP_ROWS {
        return;
    }
    let width = a.values.len();
    let columns: Vec<&[f64]> = b
        .values
        .iter()
        .chain(&a.values)
        .map(Vec::as_slice)
        .collect();
    let weights: Vec<Option<&[f64]>> = b
        .weights
        .iter()
        .chain(&a.weights)
        .map(|w| w.as_deref())
        .collect();
    let pairs: Vec<(usize, usize)> = (0..width).map(|j| (j, j + width)).collect();
    let boot = Bootstrap::new(columns, weights, options.resamples, options.seed);
    for (d, iv) in differences
        .iter_mut()
        .zip(boot.difference_intervals(&pairs, options.level))
    {
        match iv {
            Some(iv) if iv.high - iv.low > 1e-12 => (d.low, d.high) = (Some(iv.low), Some(iv.high)),
            _ => {
                d.note = Some("every resample gave the same difference: no spread to estimate an interval from".into());
            }
        }
    }
}

/// Sets each difference's verdict; returns the verdict of `primary`.
fn verdicts(
    differences: &mut Ordered<Difference>,
    flips: Flips,
    mcnemar_p: f64,
    alpha: f64,
) -> Verdict {
    let primary = if differences.0.iter().any(|(n, _)| n == "pass_at_1") {
        "pass_at_1"
    } else {
        "mean"
    };
    let mut chosen = None;
    for (name, d) in &mut differences.0 {
        let (outcome, reason) = verdict_of(d, flips, mcnemar_p, alpha);
        d.verdict = outcome;
        if name == primary {
            chosen = Some(Verdict {
                statistic: name.clone(),
                outcome,
                reason,
            });
        }
    }
    chosen.unwrap_or_else(|| Verdict {
        statistic: primary.into(),
        outcome: "no_clear_difference",
        reason: "nothing was compared".into(),
    })
}

fn verdict_of(d: &Difference, flips: Flips, mcnemar_p: f64, alpha: f64) -> (&'static str, String) {
    let (Some(low), Some(high), Some(p)) = (d.low, d.high, d.p_holm) else {
        let why = d.note.clone().unwrap_or_else(|| "no interval".into());
        return ("no_clear_difference", why);
    };
    let direction = if low > 0.0 {
        "b_better"
    } else if high < 0.0 {
        "a_better"
    } else {
        return (
            "no_clear_difference",
            format!("the interval [{low:+.4}, {high:+.4}] includes 0"),
        );
    };
    if p >= alpha {
        return (
            "no_clear_difference",
            format!("the Holm-adjusted p-value {p:.4} is not below {alpha}"),
        );
    }
    let agrees = if direction == "b_better" {
        flips.b_only > flips.a_only
    } else {
        flips.a_only > flips.b_only
    };
    if mcnemar_p >= alpha || !agrees {
        return (
            "no_clear_difference",
            format!(
                "McNemar's test does not agree (p = {mcnemar_p:.4}; {} rows passed only in A, {} only in B)",
                flips.a_only, flips.b_only
            ),
        );
    }
    let better = if direction == "b_better" { "B" } else { "A" };
    (direction, format!("{better} is better: the interval excludes 0, Holm-adjusted p = {p:.4}, McNemar p = {mcnemar_p:.4}"))
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
    let f = flips(&ta.first_attempt, &tb.first_attempt, &pairs);
    let mcnemar_p = mcnemar_exact(f.a_only, f.b_only).p_value;
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
            n,
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
