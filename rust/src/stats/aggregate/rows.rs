//! The per-row numbers an aggregator keeps with `keep_rows` (attempts, passes per threshold, score
//! sum), and what is computed from them: per-row estimates, interval columns, paired columns, the
//! mixed rows. A few numbers per row, never the scores.

use super::{short_row_error, Aggregator};
use crate::stats::estimator::TableCache;
use crate::stats::options::IntervalColumns;
use crate::stats::{Estimator, StatsError};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub(super) struct RowStore {
    width: usize,
    labels: Vec<u64>,
    /// Attempts that count (after padding, without errored ones).
    n: Vec<u32>,
    errors: Vec<u32>,
    sum: Vec<f64>,
    count: Vec<u32>,
    /// Attempts with a score (not failed, not errored): `count` also holds failed ones counted as 0.0.
    scored: Vec<u32>,
    /// rows × thresholds, row-major.
    c: Vec<u32>,
}

impl RowStore {
    pub(super) fn new(width: usize) -> Self {
        Self {
            width,
            labels: Vec::new(),
            n: Vec::new(),
            errors: Vec::new(),
            sum: Vec::new(),
            count: Vec::new(),
            scored: Vec::new(),
            c: Vec::new(),
        }
    }

    /// `n + errors` was checked to fit in u32 by the caller.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push(
        &mut self,
        label: u64,
        n: u64,
        errors: u64,
        sum: f64,
        count: u32,
        scored: u32,
        c: &[u32],
    ) {
        self.labels.push(label);
        self.n.push(n as u32);
        self.errors.push(errors as u32);
        self.sum.push(sum);
        self.count.push(count);
        self.scored.push(scored);
        self.c.extend_from_slice(c);
    }

    fn len(&self) -> usize {
        self.labels.len()
    }

    fn c_at(&self, row: usize, t: usize) -> u32 {
        self.c[row * self.width + t]
    }
}

impl Aggregator {
    /// Each row's estimate at the pass threshold, and whether the row is in it: a row whose errors
    /// left fewer than k attempts that count is not (its value is then 0.0).
    pub fn row_estimates(
        &self,
        estimator: Estimator,
        k: u64,
    ) -> Result<(Vec<f64>, Vec<bool>), StatsError> {
        let store = self.store()?;
        let mut cache = TableCache::new(estimator, k);
        let mut values = Vec::with_capacity(store.len());
        let mut included = Vec::with_capacity(store.len());
        for row in 0..store.len() {
            let n = u64::from(store.n[row]);
            let nominal = n + u64::from(store.errors[row]);
            if k > nominal {
                return Err(short_row_error(estimator, store.labels[row], k, nominal));
            }
            let inside = k <= n;
            values.push(if inside {
                cache.get(n, u64::from(store.c_at(row, 0)))
            } else {
                0.0
            });
            included.push(inside);
        }
        Ok((values, included))
    }

    /// The labels of rows whose pass count at `threshold` (one the aggregator tracks) is strictly
    /// between 0 and their attempts: the prompts worth keeping for group-relative RL training.
    /// `Ok(None)` when the threshold is not tracked.
    pub fn mixed_rows(&self, threshold: f64) -> Result<Option<Vec<u64>>, StatsError> {
        let store = self.store()?;
        let Some(t) = self.thresholds.iter().position(|&x| x == threshold) else {
            return Ok(None);
        };
        Ok(Some(
            (0..store.len())
                .filter(|&r| {
                    let c = store.c_at(r, t);
                    c > 0 && c < store.n[r]
                })
                .map(|r| store.labels[r])
                .collect(),
        ))
    }

    /// Row label → position; a label pushed twice is an error (pairing would be ambiguous).
    fn label_positions(&self) -> Result<HashMap<u64, usize>, StatsError> {
        let store = self.store()?;
        let mut positions = HashMap::with_capacity(store.len());
        for (i, &label) in store.labels.iter().enumerate() {
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
        let labels: Vec<(u64, u64)> = self.store()?.labels.iter().map(|&l| (l, l)).collect();
        self.paired_columns_by(other, &labels, ks)
    }

    /// As [`Self::paired_columns`], for the given `(label here, label there)` pairs, in their order;
    /// a pair whose label either side lacks is left out.
    pub fn paired_columns_by(
        &self,
        other: &Aggregator,
        labels: &[(u64, u64)],
        ks: &[u64],
    ) -> Result<(IntervalColumns, IntervalColumns), StatsError> {
        let ours_at = self.label_positions()?;
        let theirs_at = other.label_positions()?;
        let pairs: Vec<(usize, usize)> = labels
            .iter()
            .filter_map(|(a, b)| Some((*ours_at.get(a)?, *theirs_at.get(b)?)))
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
                scored: 0,
            }
        };
        let (mut ours, mut theirs) = (
            select(self.interval_columns(ks)?, 0),
            select(other.interval_columns(ks)?, 1),
        );
        let (our_store, their_store) = (self.store()?, other.store()?);
        ours.scored = pairs.iter().map(|p| u64::from(our_store.scored[p.0])).sum();
        theirs.scored = pairs
            .iter()
            .map(|p| u64::from(their_store.scored[p.1]))
            .sum();
        Ok((ours, theirs))
    }

    /// Per-row columns for intervals over rows: `mean`, then `pass_at_{k}` and `pass_hat_{k}` for `ks`.
    /// A pass column gets weights (1 in, 0 out) only when errors left some row out of it.
    pub fn interval_columns(&self, ks: &[u64]) -> Result<IntervalColumns, StatsError> {
        let store = self.store()?;
        let mut names = vec!["mean".to_string()];
        let mut values = vec![store.sum.clone()];
        let mut weights = vec![Some(store.count.iter().map(|&c| f64::from(c)).collect())];
        for &k in ks {
            if k < 1 {
                return Err(StatsError::new(format!("every k must be >= 1, got {k}")).field("ks"));
            }
            for (estimator, prefix) in [
                (Estimator::PassAtK, "pass_at"),
                (Estimator::PassHatK, "pass_hat"),
            ] {
                let (column, included) = self.row_estimates(estimator, k)?;
                names.push(format!("{prefix}_{k}"));
                values.push(column);
                weights.push(
                    included
                        .contains(&false)
                        .then(|| included.iter().map(|&i| f64::from(u8::from(i))).collect()),
                );
            }
        }
        Ok(IntervalColumns {
            names,
            values,
            weights,
            scored: store.scored.iter().map(|&s| u64::from(s)).sum(),
        })
    }
}
