//! What an aggregator is asked to do (policies, thresholds, k values) and what it returns.

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
    /// Keep a few numbers per row for intervals, comparisons and `mixed_rows`. Without it memory
    /// stays constant however many rows go in; the summary is the same either way.
    pub keep_rows: bool,
    /// With explicit `ks`: leave a row with fewer attempts than k out of pass@k at that k (the
    /// observed-only values of an incomplete log) instead of refusing it.
    pub skip_short_rows: bool,
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
            keep_rows: true,
            skip_short_rows: false,
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
    /// Attempts whose scorer raised: not a score at all, so absent from every statistic.
    pub errors: u64,
    pub mean: Option<f64>,
    /// Population variance (divide by N) and its square root.
    pub variance: Option<f64>,
    pub std: Option<f64>,
    /// Sample variance (divide by N - 1, Bessel's correction) and its square root: the unbiased
    /// estimate of the spread scores come from. None below two scores.
    pub sample_variance: Option<f64>,
    pub sample_std: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The fewest and most attempts of a row that count (after padding, without errored ones).
    pub min_attempts: u64,
    pub max_attempts: u64,
    pub pass_threshold: f64,
    pub ks: Vec<u64>,
    pub pass_at_k: Vec<f64>,
    pub pass_hat_k: Vec<f64>,
    /// Per k: the rows in its pass@k / pass^k. Fewer than `rows` when errors left a row with fewer
    /// than k attempts that count.
    pub pass_rows: Vec<u64>,
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
    /// Attempts with a score in these rows: 0 means nothing was scored, and every value is no
    /// statistic (a failed attempt the mean counts as 0.0 is no score).
    pub scored: u64,
}
