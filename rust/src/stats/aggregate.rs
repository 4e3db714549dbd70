//! A streaming aggregator: rows of attempt scores go in one at a time; the summary (mean, population
//! std, min, max, pass@k, pass^k, share of mixed rows) and intervals over rows come out.
//!
//! Memory is a few numbers per row (attempts, passes per threshold, score sum), never the scores.

use super::estimator::TableCache;
use super::{CompensatedSum, Estimator, StatsError};
use std::collections::HashMap;

/// What a failed attempt (no score) contributes to mean / std / min / max. It never passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedPolicy {
    /// Counts as a score of 0.0: the established eval's rule.
    Zero,
    /// Left out of mean / std / min / max; still an attempt that did not pass.
    Exclude,
}

impl FailedPolicy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "zero" => Some(Self::Zero),
            "exclude" => Some(Self::Exclude),
            _ => None,
        }
    }
}

/// What a NaN or infinite score does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonFinitePolicy {
    /// Refused with an error naming the row and attempt.
    Error,
    /// Treated as a failed attempt.
    Fail,
}

impl NonFinitePolicy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "error" => Some(Self::Error),
            "fail" => Some(Self::Fail),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct AggregatorOptions {
    /// An attempt passes when its score is >= this.
    pub pass_threshold: f64,
    /// More thresholds for which the share of mixed rows is reported.
    pub extra_thresholds: Vec<f64>,
    /// The k values; `None` = 1, 3, 5, 10 up to the smallest row's attempts.
    pub ks: Option<Vec<i64>>,
    /// Attempts every row should have; missing ones count as failed (`n = max(len(row), n_runs)`).
    pub n_runs: Option<i64>,
    pub failed: FailedPolicy,
    pub nonfinite: NonFinitePolicy,
}

impl Default for AggregatorOptions {
    fn default() -> Self {
        Self {
            pass_threshold: 1.0,
            extra_thresholds: Vec::new(),
            ks: None,
            n_runs: None,
            failed: FailedPolicy::Zero,
            nonfinite: NonFinitePolicy::Error,
        }
    }
}

/// The k values of the established eval: 1, 3, 5, 10, stopping at the first k above n.
pub const DEFAULT_KS: [u64; 4] = [1, 3, 5, 10];

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub rows: u64,
    /// Scores that entered mean / std / min / max.
    pub count: u64,
    /// Attempts that failed (no score, or a non-finite one under `NonFinitePolicy::Fail`).
    pub failed: u64,
    /// Attempts added to reach `n_runs` (failures for pass@k, absent from the mean).
    pub padded: u64,
    pub mean: Option<f64>,
    /// Population standard deviation (divide by N).
    pub std: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_attempts: u64,
    pub max_attempts: u64,
    pub pass_threshold: f64,
    pub ks: Vec<u64>,
    pub pass_at_k: Vec<f64>,
    pub pass_hat_k: Vec<f64>,
    /// Per threshold: the share of rows with 0 < c < n (rows that give a group-relative update signal).
    pub mixed_fraction: Vec<(f64, f64)>,
}

/// Per-row columns of the statistics an interval can be asked for, ready for `Bootstrap` or
/// `normal_interval`: `mean` (score sums weighted by scored attempts), then pass@k and pass^k per k.
#[derive(Debug, Clone)]
pub struct IntervalColumns {
    pub names: Vec<String>,
    pub values: Vec<Vec<f64>>,
    pub weights: Vec<Option<Vec<f64>>>,
}

#[derive(Debug, Clone)]
pub struct Aggregator {
    thresholds: Vec<f64>,
    ks: Option<Vec<u64>>,
    n_runs: u64,
    failed_policy: FailedPolicy,
    nonfinite: NonFinitePolicy,
    count: u64,
    /// Welford's running mean and sum of squared deviations, for the std.
    mean: f64,
    m2: f64,
    /// The mean itself comes from a compensated sum: exact to the last bit for ordinary data.
    total: CompensatedSum,
    min: f64,
    max: f64,
    failed: u64,
    padded: u64,
    labels: Vec<u64>,
    row_n: Vec<u32>,
    row_sum: Vec<f64>,
    row_count: Vec<u32>,
    /// rows × thresholds, row-major.
    row_c: Vec<u32>,
}

fn check_threshold(value: f64, name: &'static str) -> Result<(), StatsError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(StatsError::new(format!("{name} must be a finite number, got {value}")).field(name))
    }
}

impl Aggregator {
    pub fn new(options: AggregatorOptions) -> Result<Self, StatsError> {
        check_threshold(options.pass_threshold, "pass_threshold")?;
        let mut thresholds = vec![options.pass_threshold];
        for &t in &options.extra_thresholds {
            check_threshold(t, "thresholds")?;
            if !thresholds.contains(&t) {
                thresholds.push(t);
            }
        }
        let ks = match options.ks {
            None => None,
            Some(ks) => {
                if ks.is_empty() {
                    return Err(StatsError::new("ks must list at least one k").field("ks"));
                }
                let mut out = Vec::with_capacity(ks.len());
                for k in ks {
                    if k < 1 {
                        return Err(
                            StatsError::new(format!("every k must be >= 1, got {k}")).field("ks")
                        );
                    }
                    out.push(k as u64);
                }
                out.sort_unstable();
                out.dedup();
                Some(out)
            }
        };
        let n_runs = match options.n_runs {
            None => 0,
            Some(n) if (0..=i64::from(u32::MAX)).contains(&n) => n as u64,
            Some(n) => {
                return Err(StatsError::new(format!(
                    "n_runs must be between 0 and 2^32-1, got {n}"
                ))
                .field("n_runs"))
            }
        };
        Ok(Self {
            thresholds,
            ks,
            n_runs,
            failed_policy: options.failed,
            nonfinite: options.nonfinite,
            count: 0,
            total: CompensatedSum::default(),
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            failed: 0,
            padded: 0,
            labels: Vec::new(),
            row_n: Vec::new(),
            row_sum: Vec::new(),
            row_count: Vec::new(),
            row_c: Vec::new(),
        })
    }

    pub fn rows(&self) -> u64 {
        self.row_n.len() as u64
    }

    /// The label the next row gets when the caller gives none: its 0-based position.
    pub fn next_label(&self) -> u64 {
        self.rows()
    }

    /// Adds one row: its attempts' scores, `None` for a failed attempt. `label` names the row in errors.
    /// A row that is refused leaves the aggregator unchanged.
    pub fn push_row<I>(&mut self, scores: I, label: u64) -> Result<(), StatsError>
    where
        I: IntoIterator<Item = Option<f64>>,
        I::IntoIter: Clone,
    {
        let scores = scores.into_iter();
        let mut len = 0u64;
        for (attempt, score) in scores.clone().enumerate() {
            len += 1;
            if let Some(x) = score {
                if !x.is_finite() && self.nonfinite == NonFinitePolicy::Error {
                    return Err(StatsError::new(format!(
                        "attempt {attempt}: score is {x}; pass nonfinite=\"fail\" to count it as a failed attempt"
                    ))
                    .field("scores")
                    .at_row(label));
                }
            }
        }
        let n = len.max(self.n_runs);
        let n = u32::try_from(n).map_err(|_| {
            StatsError::new(format!(
                "{n} attempts is more than this aggregator supports"
            ))
            .at_row(label)
        })?;
        let width = self.thresholds.len();
        let base = self.row_c.len();
        self.row_c.resize(base + width, 0);
        let policy = self.failed_policy;
        // What an attempt adds to mean / std / min / max: its score, 0.0 or nothing.
        let included = move |score: Option<f64>| match (score, policy) {
            (Some(x), _) => Some(x),
            (None, FailedPolicy::Zero) => Some(0.0),
            (None, FailedPolicy::Exclude) => None,
        };
        let (mut sum, mut count) = (0.0f64, 0u32);
        for score in scores.clone() {
            let score = score.filter(|x| x.is_finite());
            match score {
                Some(x) => {
                    for (t, threshold) in self.thresholds.iter().enumerate() {
                        if x >= *threshold {
                            self.row_c[base + t] += 1;
                        }
                    }
                }
                None => self.failed += 1,
            }
            if let Some(x) = included(score) {
                self.min = self.min.min(x);
                self.max = self.max.max(x);
                sum += x;
                count += 1;
            }
        }
        if count > 0 {
            // The row's own mean and squared deviations, merged into the running ones
            // (Chan et al.): one division per row instead of one per score.
            let row_mean = sum / f64::from(count);
            let row_m2: f64 = scores
                .filter_map(|s| included(s.filter(|x| x.is_finite())))
                .map(|x| (x - row_mean) * (x - row_mean))
                .sum();
            let (before, added) = (self.count as f64, f64::from(count));
            let after = before + added;
            let delta = row_mean - self.mean;
            self.mean += delta * added / after;
            self.m2 += row_m2 + delta * delta * before * added / after;
            self.count += u64::from(count);
            self.total.add(sum);
        }
        self.padded += u64::from(n) - len;
        self.labels.push(label);
        self.row_n.push(n);
        self.row_sum.push(sum);
        self.row_count.push(count);
        Ok(())
    }

    /// The k values in use: the ones asked for, or 1, 3, 5, 10 up to the smallest row.
    pub fn ks(&self) -> Vec<u64> {
        match &self.ks {
            Some(ks) => ks.clone(),
            None => {
                let min_n = self.row_n.iter().copied().min().map_or(0, u64::from);
                DEFAULT_KS
                    .iter()
                    .copied()
                    .take_while(|&k| k <= min_n)
                    .collect()
            }
        }
    }

    /// Each row's estimate at the pass threshold.
    pub fn row_estimates(&self, estimator: Estimator, k: u64) -> Result<Vec<f64>, StatsError> {
        let width = self.thresholds.len();
        let mut cache = TableCache::new(estimator, k);
        let mut out = Vec::with_capacity(self.row_n.len());
        for (row, &n) in self.row_n.iter().enumerate() {
            let n = u64::from(n);
            if k > n {
                let name = match estimator {
                    Estimator::PassAtK => format!("pass@{k}"),
                    Estimator::PassHatK => format!("pass^{k}"),
                };
                return Err(StatsError::new(format!(
                    "{name} needs at least {k} attempts per row, this row has {n} (give n_runs to count missing attempts as failures, or smaller ks)"
                ))
                .field("ks")
                .at_row(self.labels[row]));
            }
            out.push(cache.get(n, u64::from(self.row_c[row * width])));
        }
        Ok(out)
    }

    fn mean_over_rows(values: &[f64]) -> f64 {
        let mut sum = CompensatedSum::default();
        values.iter().for_each(|v| sum.add(*v));
        sum.total() / values.len() as f64
    }

    pub fn finish(&self) -> Result<Summary, StatsError> {
        let rows = self.row_n.len();
        // Without rows there is no pass@k for any k, asked for or not.
        let ks = if rows == 0 { Vec::new() } else { self.ks() };
        let (mut pass_at_k, mut pass_hat_k) = (Vec::new(), Vec::new());
        if rows > 0 {
            for &k in &ks {
                pass_at_k.push(Self::mean_over_rows(
                    &self.row_estimates(Estimator::PassAtK, k)?,
                ));
                pass_hat_k.push(Self::mean_over_rows(
                    &self.row_estimates(Estimator::PassHatK, k)?,
                ));
            }
        }
        let width = self.thresholds.len();
        let mixed_fraction = self
            .thresholds
            .iter()
            .enumerate()
            .map(|(t, &threshold)| {
                let mixed = (0..rows)
                    .filter(|&r| {
                        let c = self.row_c[r * width + t];
                        c > 0 && c < self.row_n[r]
                    })
                    .count();
                let share = if rows == 0 {
                    0.0
                } else {
                    mixed as f64 / rows as f64
                };
                (threshold, share)
            })
            .collect();
        let scored = self.count > 0;
        Ok(Summary {
            rows: rows as u64,
            count: self.count,
            failed: self.failed,
            padded: self.padded,
            mean: scored.then(|| self.total.total() / self.count as f64),
            std: scored.then(|| (self.m2 / self.count as f64).max(0.0).sqrt()),
            min: scored.then_some(self.min),
            max: scored.then_some(self.max),
            min_attempts: self.row_n.iter().copied().min().map_or(0, u64::from),
            max_attempts: self.row_n.iter().copied().max().map_or(0, u64::from),
            pass_threshold: self.thresholds[0],
            ks,
            pass_at_k,
            pass_hat_k,
            mixed_fraction,
        })
    }

    /// The labels of rows whose pass count at `threshold` (one the aggregator tracks) is strictly
    /// between 0 and their attempts: the prompts worth keeping for group-relative RL training.
    /// `None` when the threshold is not tracked.
    pub fn mixed_rows(&self, threshold: f64) -> Option<Vec<u64>> {
        let t = self.thresholds.iter().position(|&x| x == threshold)?;
        let width = self.thresholds.len();
        Some(
            (0..self.row_n.len())
                .filter(|&r| {
                    let c = self.row_c[r * width + t];
                    c > 0 && c < self.row_n[r]
                })
                .map(|r| self.labels[r])
                .collect(),
        )
    }

    /// Row label → position; a label pushed twice is an error (pairing would be ambiguous).
    fn label_positions(&self) -> Result<HashMap<u64, usize>, StatsError> {
        let mut positions = HashMap::with_capacity(self.labels.len());
        for (i, &label) in self.labels.iter().enumerate() {
            if positions.insert(label, i).is_some() {
                return Err(StatsError::new(
                    "pushed twice; rows are paired by row_index, which must be unique",
                )
                .field("row_index")
                .at_row(label));
            }
        }
        Ok(positions)
    }

    /// The columns of [`Self::interval_columns`] for the rows both aggregators hold (matched by row
    /// label), `self`'s first, in `self`'s row order. Returns the two sides.
    pub fn paired_columns(
        &self,
        other: &Aggregator,
        ks: &[u64],
    ) -> Result<(IntervalColumns, IntervalColumns), StatsError> {
        self.label_positions()?;
        let theirs_at = other.label_positions()?;
        let pairs: Vec<(usize, usize)> = self
            .labels
            .iter()
            .enumerate()
            .filter_map(|(i, label)| theirs_at.get(label).map(|&j| (i, j)))
            .collect();
        let select = |cols: IntervalColumns, side: usize| -> IntervalColumns {
            let pick = |v: &Vec<f64>| -> Vec<f64> {
                pairs
                    .iter()
                    .map(|p| v[if side == 0 { p.0 } else { p.1 }])
                    .collect()
            };
            IntervalColumns {
                values: cols.values.iter().map(pick).collect(),
                weights: cols.weights.iter().map(|w| w.as_ref().map(pick)).collect(),
                names: cols.names,
            }
        };
        Ok((
            select(self.interval_columns(ks)?, 0),
            select(other.interval_columns(ks)?, 1),
        ))
    }

    /// Per-row columns for intervals over rows: `mean`, then `pass_at_{k}` and `pass_hat_{k}` for `ks`.
    pub fn interval_columns(&self, ks: &[u64]) -> Result<IntervalColumns, StatsError> {
        let mut names = vec!["mean".to_string()];
        let mut values = vec![self.row_sum.clone()];
        let mut weights = vec![Some(self.row_count.iter().map(|&c| f64::from(c)).collect())];
        for &k in ks {
            if k < 1 {
                return Err(StatsError::new(format!("every k must be >= 1, got {k}")).field("ks"));
            }
            names.push(format!("pass_at_{k}"));
            values.push(self.row_estimates(Estimator::PassAtK, k)?);
            weights.push(None);
            names.push(format!("pass_hat_{k}"));
            values.push(self.row_estimates(Estimator::PassHatK, k)?);
            weights.push(None);
        }
        Ok(IntervalColumns {
            names,
            values,
            weights,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{pass_at_k, pass_hat_k};

    fn agg(options: AggregatorOptions) -> Aggregator {
        Aggregator::new(options).unwrap()
    }

    fn push(a: &mut Aggregator, row: &[Option<f64>]) {
        let label = a.next_label();
        a.push_row(row.iter().copied(), label).unwrap();
    }

    #[test]
    fn summary_of_the_established_eval() {
        let mut a = agg(AggregatorOptions::default());
        push(&mut a, &[Some(1.0), Some(0.0), Some(1.0), Some(0.5)]);
        push(&mut a, &[Some(0.0), None, Some(0.0), Some(1.0)]);
        let s = a.finish().unwrap();
        let all = [1.0, 0.0, 1.0, 0.5, 0.0, 0.0, 0.0, 1.0];
        let mean = all.iter().sum::<f64>() / 8.0;
        let std = (all.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 8.0).sqrt();
        assert_eq!((s.rows, s.count, s.failed, s.padded), (2, 8, 1, 0));
        assert!((s.mean.unwrap() - mean).abs() < 1e-15);
        assert!((s.std.unwrap() - std).abs() < 1e-15);
        assert_eq!((s.min, s.max), (Some(0.0), Some(1.0)));
        assert_eq!(s.ks, vec![1, 3]);
        let p3 = (pass_at_k(4, 2, 3).unwrap() + pass_at_k(4, 1, 3).unwrap()) / 2.0;
        assert!((s.pass_at_k[1] - p3).abs() < 1e-15);
        let h3 = (pass_hat_k(4, 2, 3).unwrap() + pass_hat_k(4, 1, 3).unwrap()) / 2.0;
        assert!((s.pass_hat_k[1] - h3).abs() < 1e-15);
        assert_eq!(s.mixed_fraction, vec![(1.0, 1.0)]);
    }

    #[test]
    fn failed_attempts_excluded_from_the_mean_still_fail() {
        let mut a = agg(AggregatorOptions {
            failed: FailedPolicy::Exclude,
            ..Default::default()
        });
        push(&mut a, &[Some(1.0), None]);
        let s = a.finish().unwrap();
        assert_eq!((s.count, s.failed, s.mean), (1, 1, Some(1.0)));
        assert_eq!(s.pass_at_k, vec![0.5]);
    }

    #[test]
    fn n_runs_pads_missing_attempts_as_failures() {
        let mut a = agg(AggregatorOptions {
            n_runs: Some(5),
            ..Default::default()
        });
        push(&mut a, &[Some(1.0), Some(1.0)]);
        let s = a.finish().unwrap();
        assert_eq!((s.padded, s.count, s.min_attempts), (3, 2, 5));
        assert_eq!(s.ks, vec![1, 3, 5]);
        assert!((s.pass_at_k[0] - 0.4).abs() < 1e-15);
        assert!((s.pass_at_k[1] - 0.9).abs() < 1e-15);
    }

    #[test]
    fn nan_is_refused_naming_the_row_or_counted_as_failure() {
        let mut a = agg(AggregatorOptions::default());
        push(&mut a, &[Some(1.0)]);
        let err = a.push_row([Some(0.5), Some(f64::NAN)], 17).unwrap_err();
        assert_eq!(err.row, Some(17));
        assert!(
            err.message.starts_with("row 17: attempt 1: score is NaN"),
            "{err}"
        );
        assert_eq!(a.rows(), 1, "a refused row leaves no trace");
        assert_eq!(a.finish().unwrap().count, 1);

        let mut a = agg(AggregatorOptions {
            nonfinite: NonFinitePolicy::Fail,
            ..Default::default()
        });
        push(&mut a, &[Some(f64::INFINITY), Some(1.0)]);
        let s = a.finish().unwrap();
        assert_eq!((s.failed, s.count, s.mean), (1, 2, Some(0.5)));
    }

    #[test]
    fn explicit_k_above_a_row_names_the_row() {
        let mut a = agg(AggregatorOptions {
            ks: Some(vec![3]),
            ..Default::default()
        });
        a.push_row([Some(1.0); 3], 0).unwrap();
        a.push_row([Some(1.0); 2], 41).unwrap();
        let err = a.finish().unwrap_err();
        assert_eq!(err.row, Some(41));
        assert!(
            err.message.contains("pass@3 needs at least 3 attempts"),
            "{err}"
        );
    }

    #[test]
    fn mixed_share_per_threshold() {
        let mut a = agg(AggregatorOptions {
            extra_thresholds: vec![0.5, 1.0],
            ..Default::default()
        });
        push(&mut a, &[Some(1.0), Some(0.6)]);
        push(&mut a, &[Some(0.0), Some(0.0)]);
        push(&mut a, &[Some(0.7), Some(0.2)]);
        push(&mut a, &[Some(1.0), Some(1.0)]);
        let s = a.finish().unwrap();
        assert_eq!(s.mixed_fraction, vec![(1.0, 0.25), (0.5, 0.25)]);
        assert_eq!(a.mixed_rows(1.0), Some(vec![0]));
        assert_eq!(a.mixed_rows(0.5), Some(vec![2]));
        assert_eq!(a.mixed_rows(0.7), None);
    }

    #[test]
    fn empty_and_bad_options() {
        let s = agg(AggregatorOptions::default()).finish().unwrap();
        assert_eq!((s.rows, s.mean, s.ks.len()), (0, None, 0));
        assert!(Aggregator::new(AggregatorOptions {
            pass_threshold: f64::NAN,
            ..Default::default()
        })
        .is_err());
        assert!(Aggregator::new(AggregatorOptions {
            ks: Some(vec![0]),
            ..Default::default()
        })
        .is_err());
        assert!(Aggregator::new(AggregatorOptions {
            n_runs: Some(-1),
            ..Default::default()
        })
        .is_err());
    }

    #[test]
    fn paired_columns_match_rows_by_label() {
        let mut a = agg(AggregatorOptions::default());
        a.push_row([Some(1.0), Some(0.0)], 5).unwrap();
        a.push_row([Some(1.0), Some(1.0)], 6).unwrap();
        a.push_row([Some(0.0), Some(0.0)], 7).unwrap();
        let mut b = agg(AggregatorOptions::default());
        b.push_row([Some(0.0), Some(0.0)], 7).unwrap();
        b.push_row([Some(1.0), Some(1.0)], 5).unwrap();
        let (x, y) = a.paired_columns(&b, &[1]).unwrap();
        assert_eq!(x.values[0], vec![1.0, 0.0]);
        assert_eq!(y.values[0], vec![2.0, 0.0]);
        assert_eq!(y.names, ["mean", "pass_at_1", "pass_hat_1"]);
        b.push_row([Some(1.0), Some(1.0)], 5).unwrap();
        let err = a.paired_columns(&b, &[1]).unwrap_err();
        assert_eq!((err.row, err.field), (Some(5), Some("row_index")));
    }

    #[test]
    fn interval_columns_line_up() {
        let mut a = agg(AggregatorOptions::default());
        push(&mut a, &[Some(1.0), Some(0.0)]);
        push(&mut a, &[Some(1.0), Some(1.0)]);
        let cols = a.interval_columns(&[1, 2]).unwrap();
        assert_eq!(
            cols.names,
            ["mean", "pass_at_1", "pass_hat_1", "pass_at_2", "pass_hat_2"]
        );
        assert_eq!(cols.values[0], vec![1.0, 2.0]);
        assert_eq!(cols.weights[0], Some(vec![2.0, 2.0]));
        assert_eq!(cols.values[3], vec![1.0, 1.0]);
        assert_eq!(cols.values[4], vec![0.0, 1.0]);
    }
}
