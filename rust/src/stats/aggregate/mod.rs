//! A streaming aggregator: rows of attempt scores go in one at a time; the summary (mean, population
//! std, min, max, pass@k, pass^k, share of mixed rows) and intervals over rows come out.
//!
//! The summary is accumulated as rows arrive (running sums per k and threshold), so its memory does not
//! grow with the rows; the per-row numbers intervals and comparisons need are kept only with
//! `keep_rows` (see `rows.rs`).
//!
//! Three kinds of attempt: scored, failed (`None`: counts as 0.0 or is left out of the mean per
//! [`FailedPolicy`], never passes) and errored (the scorer raised: not an attempt for any statistic,
//! counted in `errors`). A row whose errors leave it fewer than k counting attempts is left out of
//! pass@k at that k.

mod rows;

use super::estimator::TableCache;
use super::exact_sum::squared_deviation_numerator;
pub use super::exact_sum::ExactSum;
use super::options::{AggregatorOptions, FailedPolicy, NonFinitePolicy, Summary, DEFAULT_KS};
use super::{CompensatedSum, Estimator, StatsError};
use rows::RowStore;

/// The running pass@k and pass^k sums of one k, over the rows with at least k counting attempts.
#[derive(Debug, Clone)]
struct KSums {
    k: u64,
    at: CompensatedSum,
    hat: CompensatedSum,
    /// Sums of the squared per-row values, for the spread over rows (intervals without kept rows).
    at_sq: CompensatedSum,
    hat_sq: CompensatedSum,
    rows: u64,
    at_table: TableCache,
    hat_table: TableCache,
}

impl KSums {
    fn new(k: u64) -> Self {
        Self {
            k,
            at: CompensatedSum::default(),
            hat: CompensatedSum::default(),
            at_sq: CompensatedSum::default(),
            hat_sq: CompensatedSum::default(),
            rows: 0,
            at_table: TableCache::new(Estimator::PassAtK, k),
            hat_table: TableCache::new(Estimator::PassHatK, k),
        }
    }
}

/// Sums over the rows of one k: the per-row pass@k and pass^k values and their squares.
#[derive(Debug, Clone, PartialEq)]
pub struct KSpread {
    pub k: u64,
    pub rows: u64,
    pub at: f64,
    pub at_sq: f64,
    pub hat: f64,
    pub hat_sq: f64,
}

/// What an interval over rows needs, kept as running sums (constant memory): for the mean score, a
/// ratio of per-row sums `s` over per-row scored attempts `w`; for pass@k, the per-row values.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub scored_rows: u64,
    pub count: u64,
    pub sum: f64,
    /// Σs², Σs·w and Σw² over scored rows, exact: the residuals around any mean follow without
    /// cancellation and without depending on the order of the rows.
    pub row_sum_sq: ExactSum,
    pub row_sum_count: ExactSum,
    pub row_count_sq: ExactSum,
    pub max_attempts: u64,
    pub ks: Vec<KSpread>,
    /// The range of the scores in the mean (`None` without any), and whether every one is 0 or 1:
    /// the mean is then a proportion and its interval must stay inside [0, 1].
    pub range: Option<(f64, f64)>,
    pub binary: bool,
}

impl Spread {
    /// Σ(s - m·w)² over scored rows, the squared residuals of the ratio estimator at mean `m`:
    /// Σs² - 2mΣsw + m²Σw² evaluated exactly, then rounded once.
    pub fn row_residual_squares(&self, mean: f64) -> f64 {
        let mut exact = self.row_sum_sq.clone();
        exact.add_scaled(&self.row_sum_count, -2.0 * mean);
        let mut scaled = ExactSum::default();
        scaled.add_scaled(&self.row_count_sq, mean);
        exact.add_scaled(&scaled, mean);
        exact.total().max(0.0)
    }
}

#[derive(Debug, Clone)]
pub struct Aggregator {
    thresholds: Vec<f64>,
    /// Whether the ks were asked for (a row with fewer attempts is then an error).
    explicit_ks: bool,
    sums: Vec<KSums>,
    n_runs: u64,
    failed_policy: FailedPolicy,
    nonfinite: NonFinitePolicy,
    count: u64,
    /// Σx and Σx² of the included scores, exact: the mean and variance are the same bits in any
    /// order of the runs (a Ray run's log against a local run's).
    sum: ExactSum,
    sum_sq: ExactSum,
    min: f64,
    max: f64,
    failed: u64,
    padded: u64,
    errors: u64,
    rows: u64,
    min_n: u64,
    max_n: u64,
    /// The fewest attempts of a row counting errored ones: what the default ks stop at.
    min_nominal: u64,
    /// The first row with fewer attempts than an explicit k: `(label, k, attempts)`.
    short_row: Option<(u64, u64, u64)>,
    /// Leave a row with fewer attempts than an explicit k out at that k instead of refusing it.
    skip_short_rows: bool,
    /// The spread of the mean score over rows, for its interval: see [`Spread::row_residual_squares`].
    row_sum_sq: ExactSum,
    row_sum_count: ExactSum,
    row_count_sq: ExactSum,
    /// Rows with at least one score in the mean.
    scored_rows: u64,
    /// Scores in the mean that are neither 0 nor 1.
    non_binary: u64,
    /// Per threshold: rows with 0 < c < n.
    mixed: Vec<u64>,
    store: Option<RowStore>,
    /// A row's pass counts per threshold, reused so a row costs no allocation.
    scratch: Vec<u32>,
}

fn check_threshold(value: f64, name: &'static str) -> Result<(), StatsError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(StatsError::new(format!("{name} must be a finite number, got {value}")).field(name))
    }
}

fn parse_ks(ks: Option<Vec<i64>>) -> Result<Option<Vec<u64>>, StatsError> {
    let Some(ks) = ks else { return Ok(None) };
    if ks.is_empty() {
        return Err(StatsError::new("ks must list at least one k").field("ks"));
    }
    let mut out = Vec::with_capacity(ks.len());
    for k in ks {
        if k < 1 {
            return Err(StatsError::new(format!("every k must be >= 1, got {k}")).field("ks"));
        }
        out.push(k as u64);
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some(out))
}

fn k_name(estimator: Estimator, k: u64) -> String {
    match estimator {
        Estimator::PassAtK => format!("pass@{k}"),
        Estimator::PassHatK => format!("pass^{k}"),
    }
}

/// The error for a row with fewer attempts than an asked-for k.
fn short_row_error(estimator: Estimator, label: u64, k: u64, n: u64) -> StatsError {
    StatsError::new(format!(
        "{} needs at least {k} attempts per row, this row has {n} (give n_runs to count missing attempts as failures, or smaller ks)",
        k_name(estimator, k)
    ))
    .field("ks")
    .at_row(label)
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
        let ks = parse_ks(options.ks)?;
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
        let explicit_ks = ks.is_some();
        let sums = ks
            .unwrap_or_else(|| DEFAULT_KS.to_vec())
            .into_iter()
            .map(KSums::new)
            .collect();
        let store = options.keep_rows.then(|| RowStore::new(thresholds.len()));
        Ok(Self {
            mixed: vec![0; thresholds.len()],
            thresholds,
            explicit_ks,
            sums,
            n_runs,
            failed_policy: options.failed,
            nonfinite: options.nonfinite,
            count: 0,
            sum: ExactSum::default(),
            sum_sq: ExactSum::default(),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            failed: 0,
            padded: 0,
            errors: 0,
            rows: 0,
            min_n: u64::MAX,
            max_n: 0,
            min_nominal: u64::MAX,
            short_row: None,
            skip_short_rows: options.skip_short_rows,
            row_sum_sq: ExactSum::default(),
            row_sum_count: ExactSum::default(),
            row_count_sq: ExactSum::default(),
            scored_rows: 0,
            non_binary: 0,
            store,
            scratch: Vec::new(),
        })
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The label the next row gets when the caller gives none: its 0-based position.
    pub fn next_label(&self) -> u64 {
        self.rows
    }

    /// Adds one row: its attempts' scores, `None` for a failed attempt. `label` names the row in errors.
    /// A row that is refused leaves the aggregator unchanged.
    pub fn push_row<I>(&mut self, scores: I, label: u64) -> Result<(), StatsError>
    where
        I: IntoIterator<Item = Option<f64>>,
        I::IntoIter: Clone,
    {
        self.push_row_with_errors(scores, 0, label)
    }

    /// As [`Self::push_row`], plus `errors` attempts whose scorer raised: they are no attempt for any
    /// statistic (and are not padded back by `n_runs`), only counted.
    pub fn push_row_with_errors<I>(
        &mut self,
        scores: I,
        errors: u32,
        label: u64,
    ) -> Result<(), StatsError>
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
        let errors = u64::from(errors);
        let n = len.max(self.n_runs.saturating_sub(errors));
        if u32::try_from(n + errors).is_err() {
            return Err(StatsError::new(format!(
                "{} attempts is more than this aggregator supports",
                n + errors
            ))
            .at_row(label));
        }
        let mut c = std::mem::take(&mut self.scratch);
        c.clear();
        c.resize(self.thresholds.len(), 0);
        let policy = self.failed_policy;
        // What an attempt adds to mean / std / min / max: its score, 0.0 or nothing.
        let included = move |score: Option<f64>| match (score, policy) {
            (Some(x), _) => Some(x),
            (None, FailedPolicy::Zero) => Some(0.0),
            (None, FailedPolicy::Exclude) => None,
        };
        let (mut sum, mut count, mut scored) = (0.0f64, 0u32, 0u32);
        for score in scores {
            let score = score.filter(|x| x.is_finite());
            match score {
                Some(x) => {
                    scored += 1;
                    for (t, threshold) in self.thresholds.iter().enumerate() {
                        if x >= *threshold {
                            c[t] += 1;
                        }
                    }
                }
                None => self.failed += 1,
            }
            if let Some(x) = included(score) {
                self.min = self.min.min(x);
                self.max = self.max.max(x);
                self.non_binary += u64::from(x != 0.0 && x != 1.0);
                sum += x;
                count += 1;
                self.sum.add(x);
                self.sum_sq.add_product(x, x);
            }
        }
        if count > 0 {
            let w = f64::from(count);
            self.count += u64::from(count);
            self.row_sum_sq.add_product(sum, sum);
            self.row_sum_count.add_product(sum, w);
            self.row_count_sq.add_product(w, w);
            self.scored_rows += 1;
        }
        self.add_counts(label, n, errors, &c);
        self.padded += n - len;
        self.errors += errors;
        if let Some(store) = &mut self.store {
            store.push(label, n, errors, sum, count, scored, &c);
        }
        self.scratch = c;
        Ok(())
    }

    /// Adds a row's pass counts to the running pass@k / pass^k sums and mixed-row counts.
    fn add_counts(&mut self, label: u64, n: u64, errors: u64, c: &[u32]) {
        let nominal = n + errors;
        self.rows += 1;
        self.min_n = self.min_n.min(n);
        self.max_n = self.max_n.max(n);
        self.min_nominal = self.min_nominal.min(nominal);
        for sums in &mut self.sums {
            if sums.k > nominal {
                if self.explicit_ks && !self.skip_short_rows && self.short_row.is_none() {
                    self.short_row = Some((label, sums.k, nominal));
                }
                continue;
            }
            if sums.k > n {
                continue; // errors left too few attempts that count: not in pass@k at this k
            }
            let passed = u64::from(c[0]);
            let (at, hat) = (sums.at_table.get(n, passed), sums.hat_table.get(n, passed));
            sums.at.add(at);
            sums.hat.add(hat);
            sums.at_sq.add(at * at);
            sums.hat_sq.add(hat * hat);
            sums.rows += 1;
        }
        for (t, &ct) in c.iter().enumerate() {
            if ct > 0 && u64::from(ct) < n {
                self.mixed[t] += 1;
            }
        }
    }

    /// The k values in use: the ones asked for, or 1, 3, 5, 10 up to the smallest row.
    pub fn ks(&self) -> Vec<u64> {
        if self.explicit_ks {
            return self.sums.iter().map(|s| s.k).collect();
        }
        let min_nominal = if self.rows == 0 { 0 } else { self.min_nominal };
        DEFAULT_KS
            .iter()
            .copied()
            .take_while(|&k| k <= min_nominal)
            .collect()
    }

    pub fn finish(&self) -> Result<Summary, StatsError> {
        let rows = self.rows;
        if let Some((label, k, n)) = self.short_row {
            return Err(short_row_error(Estimator::PassAtK, label, k, n));
        }
        // Without rows there is no pass@k for any k, asked for or not; nor for a k no row reaches.
        let ks = if rows == 0 { Vec::new() } else { self.ks() };
        let (mut used, mut pass_at_k, mut pass_hat_k, mut pass_rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for sums in self.sums.iter().filter(|s| ks.contains(&s.k) && s.rows > 0) {
            used.push(sums.k);
            pass_at_k.push(sums.at.total() / sums.rows as f64);
            pass_hat_k.push(sums.hat.total() / sums.rows as f64);
            pass_rows.push(sums.rows);
        }
        let mixed_fraction = self
            .thresholds
            .iter()
            .zip(&self.mixed)
            .map(|(&threshold, &mixed)| {
                let share = if rows == 0 {
                    0.0
                } else {
                    mixed as f64 / rows as f64
                };
                (threshold, share)
            })
            .collect();
        let scored = self.count > 0;
        let squares = squared_deviation_numerator(&self.sum, &self.sum_sq, self.count);
        let n = self.count as f64;
        let variance = squares / (n * n);
        let sample_variance = (self.count > 1).then(|| squares / (n * (n - 1.0)));
        Ok(Summary {
            rows,
            count: self.count,
            failed: self.failed,
            padded: self.padded,
            errors: self.errors,
            mean: scored.then(|| self.sum.total() / self.count as f64),
            variance: scored.then_some(variance),
            std: scored.then(|| variance.sqrt()),
            sample_variance,
            sample_std: sample_variance.map(f64::sqrt),
            min: scored.then_some(self.min),
            max: scored.then_some(self.max),
            min_attempts: if rows == 0 { 0 } else { self.min_n },
            max_attempts: self.max_n,
            pass_threshold: self.thresholds[0],
            ks: used,
            pass_at_k,
            pass_hat_k,
            pass_rows,
            mixed_fraction,
        })
    }

    /// The running sums intervals over rows are computed from (see [`Spread`]), for the ks of
    /// [`Self::finish`].
    pub fn spread(&self) -> Spread {
        let ks = if self.rows == 0 {
            Vec::new()
        } else {
            self.ks()
        };
        Spread {
            scored_rows: self.scored_rows,
            count: self.count,
            sum: self.sum.total(),
            row_sum_sq: self.row_sum_sq.clone(),
            row_sum_count: self.row_sum_count.clone(),
            row_count_sq: self.row_count_sq.clone(),
            max_attempts: self.max_n,
            ks: self
                .sums
                .iter()
                .filter(|s| ks.contains(&s.k) && s.rows > 0)
                .map(|s| KSpread {
                    k: s.k,
                    rows: s.rows,
                    at: s.at.total(),
                    at_sq: s.at_sq.total(),
                    hat: s.hat.total(),
                    hat_sq: s.hat_sq.total(),
                })
                .collect(),
            range: (self.count > 0).then_some((self.min, self.max)),
            binary: self.non_binary == 0,
        }
    }

    /// The per-row numbers, or an error saying they were not kept.
    fn store(&self) -> Result<&RowStore, StatsError> {
        self.store.as_ref().ok_or_else(|| {
            StatsError::new(
                "this aggregator was built without keep_rows; it has no per-row numbers",
            )
            .field("keep_rows")
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
    fn sample_variance_divides_by_n_minus_one() {
        let mut a = agg(AggregatorOptions::default());
        push(&mut a, &[Some(0.0), Some(0.0), Some(1.0)]);
        let s = a.finish().unwrap();
        // Squared deviations sum to 2/3: population 2/9, sample 1/3 (a third more at n = 3).
        assert!((s.variance.unwrap() - 2.0 / 9.0).abs() < 1e-15);
        assert!((s.sample_variance.unwrap() - 1.0 / 3.0).abs() < 1e-15);
        assert!((s.sample_std.unwrap() - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
        let mut one = agg(AggregatorOptions::default());
        push(&mut one, &[Some(0.5)]);
        let s = one.finish().unwrap();
        assert_eq!(
            (s.variance, s.sample_variance, s.sample_std),
            (Some(0.0), None, None)
        );
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
        assert_eq!(a.mixed_rows(1.0).unwrap(), Some(vec![0]));
        assert_eq!(a.mixed_rows(0.5).unwrap(), Some(vec![2]));
        assert_eq!(a.mixed_rows(0.7).unwrap(), None);
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

    #[test]
    fn errored_attempts_are_in_no_statistic() {
        // Five runs per row; row 0's scorer raised once. Every scored run passed.
        let mut a = agg(AggregatorOptions {
            n_runs: Some(5),
            ..Default::default()
        });
        a.push_row_with_errors([Some(1.0); 4], 1, 0).unwrap();
        a.push_row([Some(1.0); 5], 1).unwrap();
        let s = a.finish().unwrap();
        assert_eq!((s.errors, s.failed, s.padded, s.count), (1, 0, 0, 9));
        assert_eq!((s.mean, s.min, s.max), (Some(1.0), Some(1.0), Some(1.0)));
        // The default ks still go up to the runs asked for; row 0 has 4 attempts that count, so it
        // is in pass@1 and pass@3 but not pass@5.
        assert_eq!(s.ks, vec![1, 3, 5]);
        assert_eq!(s.pass_at_k, vec![1.0, 1.0, 1.0]);
        assert_eq!(s.pass_rows, vec![2, 2, 1]);
        let cols = a.interval_columns(&[5]).unwrap();
        assert_eq!(cols.weights[1], Some(vec![0.0, 1.0]));
        assert_eq!(cols.weights[0], Some(vec![4.0, 5.0]));

        // A function that raised on every run of a row leaves the row out of pass@k entirely.
        let mut a = agg(AggregatorOptions::default());
        a.push_row_with_errors(std::iter::empty(), 2, 0).unwrap();
        a.push_row([Some(0.0), Some(1.0)], 1).unwrap();
        let s = a.finish().unwrap();
        assert_eq!((s.rows, s.errors, s.mean), (2, 2, Some(0.5)));
        assert_eq!((s.pass_at_k, s.pass_rows), (vec![0.5], vec![1]));
        // Versus the old rule (a raising run as a failed 0.0): errors are not failures.
        let mut b = agg(AggregatorOptions::default());
        b.push_row([None, None], 0).unwrap();
        b.push_row([Some(0.0), Some(1.0)], 1).unwrap();
        assert_eq!(b.finish().unwrap().mean, Some(0.25));
    }

    #[test]
    fn without_rows_kept_the_summary_is_the_same() {
        let rows: Vec<Vec<Option<f64>>> = (0..200)
            .map(|r| {
                (0..4)
                    .map(|i| ((r * 7 + i * 3) % 5 != 0).then_some(((r + i) % 3) as f64 / 2.0))
                    .collect()
            })
            .collect();
        let options = AggregatorOptions {
            extra_thresholds: vec![0.5],
            n_runs: Some(5),
            ..Default::default()
        };
        let mut kept = agg(options.clone());
        let mut lean = agg(AggregatorOptions {
            keep_rows: false,
            ..options
        });
        for (i, row) in rows.iter().enumerate() {
            kept.push_row_with_errors(row.iter().copied(), (i % 2) as u32, i as u64)
                .unwrap();
            lean.push_row_with_errors(row.iter().copied(), (i % 2) as u32, i as u64)
                .unwrap();
        }
        assert_eq!(kept.finish().unwrap(), lean.finish().unwrap());
        // The per-row means agree with the running ones.
        let (values, included) = kept.row_estimates(Estimator::PassAtK, 3).unwrap();
        let inside: Vec<f64> = values
            .iter()
            .zip(&included)
            .filter(|(_, &i)| i)
            .map(|(v, _)| *v)
            .collect();
        let mean = inside.iter().sum::<f64>() / inside.len() as f64;
        assert!((kept.finish().unwrap().pass_at_k[1] - mean).abs() < 1e-12);
        let err = lean.interval_columns(&[1]).unwrap_err();
        assert_eq!(err.field, Some("keep_rows"));
    }
}
