//! Statistics over eval results: the unbiased pass@k and pass^k estimators, streaming aggregates and
//! confidence intervals over rows.
//!
//! Rows are prompts; a row's attempts are its runs. `n` is the number of attempts of a row and `c` the
//! number that passed. Everything here is plain Rust; `py/stats.rs` binds it.

mod advantage;
mod aggregate;
mod agreement;
mod bootstrap;
mod distributions;
mod estimator;
mod exact_sum;
mod mcnemar;
mod options;
pub mod output_rows;
mod results;
pub mod rows_spool;

pub use advantage::{advantage_sign_changes, advantage_signs, SignChanges};
pub use aggregate::{Aggregator, KSpread, Spread};
pub use agreement::{agreement, cohen_kappa, ranks, spearman, Agreement};
pub use bootstrap::{
    median, normal_difference, normal_interval, paired_difference, percentile, quantiles,
    rows_with_data, unit_bounds, Bootstrap, Interval, PairedDifference, Rng, Span,
};
pub use distributions::{holm, normal_quantile, t_quantile, t_two_sided_p, wilson};
pub use estimator::{
    estimate, estimate_many, estimate_many_iter, pass_at_k, pass_hat_k, validate, Counts,
    Estimator, ManyEstimate,
};
pub use mcnemar::{mcnemar_exact, McNemar};
pub use options::{
    AggregatorOptions, FailedPolicy, IntervalColumns, NonFinitePolicy, Summary, DEFAULT_KS,
};
#[cfg(feature = "python")]
pub(crate) use results::summarize_results_file_with;
pub(crate) use results::{
    blank, latest_run_head, object_members, Captured, Checked, LentLines, LineTap,
};
pub use results::{
    compare, latest_lines, log_index_base, model, model_intervals, paired_t_differences,
    project_object, summarize_results_file, Layout, LineReader, Meta, ModelTally, NameTally,
    ResultsOptions, ResultsSummary, LOG_FORMATS,
};

use std::fmt;

/// Statistics input out of range. `row` is the 0-based row index when one row is at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsError {
    pub message: String,
    pub row: Option<u64>,
    pub field: Option<&'static str>,
}

impl StatsError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            row: None,
            field: None,
        }
    }

    pub fn field(mut self, field: &'static str) -> Self {
        self.field = Some(field);
        self
    }

    /// Renumbers the row by `offset` (for input handled in chunks).
    pub fn shifted(mut self, offset: u64) -> Self {
        if let Some(row) = self.row {
            if let Some(rest) = self.message.strip_prefix(&format!("row {row}: ")) {
                self.message = format!("row {}: {rest}", row + offset);
            }
            self.row = Some(row + offset);
        }
        self
    }

    /// Prefixes the message with the row it happened in.
    pub fn at_row(mut self, row: u64) -> Self {
        self.message = format!("row {row}: {}", self.message);
        self.row = Some(row);
        self
    }
}

impl fmt::Display for StatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StatsError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_renumbers_the_row() {
        let e = StatsError::new("c = 5 is bad")
            .field("c")
            .at_row(3)
            .shifted(100);
        assert_eq!(
            (e.row, e.message.as_str()),
            (Some(103), "row 103: c = 5 is bad")
        );
        let e = StatsError::new("k must be >= 1").shifted(100);
        assert_eq!((e.row, e.message.as_str()), (None, "k must be >= 1"));
    }
}

/// Sum with Neumaier compensation: a million values in [0, 1] add up without visible drift.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CompensatedSum {
    sum: f64,
    compensation: f64,
}

impl CompensatedSum {
    pub(crate) fn add(&mut self, value: f64) {
        let t = self.sum + value;
        if self.sum.abs() >= value.abs() {
            self.compensation += (self.sum - t) + value;
        } else {
            self.compensation += (value - t) + self.sum;
        }
        self.sum = t;
    }

    pub(crate) fn total(&self) -> f64 {
        self.sum + self.compensation
    }
}
