//! The unbiased pass@k estimator `1 - C(n-c, k) / C(n, k)` and pass^k `C(c, k) / C(n, k)`, computed as
//! short products of ratios (never a binomial coefficient), for one row or for arrays of rows.

use super::{CompensatedSum, StatsError};
use std::collections::HashMap;

/// Which estimator to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// pass@k: the probability that at least one of k attempts drawn without replacement passes.
    PassAtK,
    /// pass^k: the probability that all k attempts drawn without replacement pass.
    PassHatK,
}

impl Estimator {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "pass_at_k" => Some(Self::PassAtK),
            "pass_hat_k" => Some(Self::PassHatK),
            _ => None,
        }
    }

    fn label(self, k: u64) -> String {
        match self {
            Self::PassAtK => format!("pass@{k}"),
            Self::PassHatK => format!("pass^{k}"),
        }
    }
}

/// Checks `n`, `c` and `k` and returns them unsigned: `0 <= c <= n`, `1 <= k <= n`.
pub fn validate(n: i64, c: i64, k: i64) -> Result<(u64, u64, u64), StatsError> {
    if n < 0 {
        return Err(StatsError::new(format!("n (attempts) must be >= 0, got {n}")).field("n"));
    }
    if c < 0 {
        return Err(
            StatsError::new(format!("c (passing attempts) must be >= 0, got {c}")).field("c"),
        );
    }
    if k < 1 {
        return Err(StatsError::new(format!("k must be >= 1, got {k}")).field("k"));
    }
    if c > n {
        return Err(StatsError::new(format!(
            "c = {c} passing attempts is more than n = {n} attempts"
        ))
        .field("c"));
    }
    if k > n {
        return Err(StatsError::new(format!(
            "k = {k} is more than n = {n} attempts: an estimate for k needs at least k attempts per row"
        ))
        .field("k"));
    }
    Ok((n as u64, c as u64, k as u64))
}

/// pass@k for validated input.
fn at_k(n: u64, c: u64, k: u64) -> f64 {
    if c == 0 {
        return 0.0;
    }
    if n - c < k {
        return 1.0;
    }
    // C(n-c, k) / C(n, k) as whichever product is shorter: k factors or c factors.
    let ratio = if k <= c {
        product_of_ratios((0..k).map(|i| (n - c - i, n - i)))
    } else {
        product_of_ratios((0..c).map(|j| (n - k - j, n - j)))
    };
    1.0 - ratio
}

/// Exact integers below 2^53 as f64.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// `prod(num_i / den_i)`. Numerators and denominators are multiplied as exact integers while they
/// stay below 2^53 and divided once per such run, so small cases are correctly rounded (4/5 * 3/4 is
/// 0.6, not 0.6000000000000001) and large ones never overflow.
fn product_of_ratios(factors: impl Iterator<Item = (u64, u64)>) -> f64 {
    let (mut ratio, mut num, mut den) = (1.0f64, 1.0f64, 1.0f64);
    for (a, b) in factors {
        let (a, b) = (a as f64, b as f64);
        if num * a >= EXACT || den * b >= EXACT {
            ratio *= num / den;
            num = 1.0;
            den = 1.0;
        }
        num *= a;
        den *= b;
    }
    ratio * (num / den)
}

/// pass^k for validated input.
fn hat_k(n: u64, c: u64, k: u64) -> f64 {
    if c < k {
        return 0.0;
    }
    if c == n {
        return 1.0;
    }
    product_of_ratios((0..k).map(|i| (c - i, n - i)))
}

/// One estimate for validated input.
pub fn estimate(estimator: Estimator, n: u64, c: u64, k: u64) -> f64 {
    match estimator {
        Estimator::PassAtK => at_k(n, c, k),
        Estimator::PassHatK => hat_k(n, c, k),
    }
}

/// The unbiased pass@k of one row with `n` attempts of which `c` passed.
pub fn pass_at_k(n: i64, c: i64, k: i64) -> Result<f64, StatsError> {
    let (n, c, k) = validate(n, c, k)?;
    Ok(at_k(n, c, k))
}

/// pass^k of one row: the probability that k attempts drawn without replacement all pass.
pub fn pass_hat_k(n: i64, c: i64, k: i64) -> Result<f64, StatsError> {
    let (n, c, k) = validate(n, c, k)?;
    Ok(hat_k(n, c, k))
}

/// The attempts per row: one number for every row, or one per row.
#[derive(Debug, Clone, Copy)]
pub enum Counts<'a> {
    Same(i64),
    PerRow(&'a [i64]),
}

/// The mean over rows (`None` without rows) and, when asked, each row's value.
#[derive(Debug, Clone, PartialEq)]
pub struct ManyEstimate {
    /// The sum over rows (compensated), for callers that combine chunks.
    pub sum: f64,
    pub mean: Option<f64>,
    pub values: Option<Vec<f64>>,
}

/// Precomputed estimates for c = 0..=n, so a million rows cost a million lookups. Tables are built
/// only where building is cheaper than what they save; the table of the last n is kept at hand so
/// rows with the same n as the previous one cost no hashing.
#[derive(Debug, Clone)]
pub(crate) struct TableCache {
    estimator: Estimator,
    k: u64,
    last_n: Option<u64>,
    last: Vec<f64>,
    tables: HashMap<u64, Vec<f64>>,
}

const TABLE_MAX_N: u64 = 1 << 16;
const TABLE_MAX_WORK: u64 = 1 << 24;

fn table_worth(n: u64, k: u64) -> bool {
    n <= TABLE_MAX_N && n.saturating_mul(k.min(n)) <= TABLE_MAX_WORK
}

fn build_table(estimator: Estimator, n: u64, k: u64) -> Vec<f64> {
    (0..=n).map(|c| estimate(estimator, n, c, k)).collect()
}

impl TableCache {
    pub(crate) fn new(estimator: Estimator, k: u64) -> Self {
        Self {
            estimator,
            k,
            last_n: None,
            last: Vec::new(),
            tables: HashMap::new(),
        }
    }

    /// The estimate for validated `(n, c)`, from a table when one is worth having.
    pub(crate) fn get(&mut self, n: u64, c: u64) -> f64 {
        if self.last_n == Some(n) {
            return self.last[c as usize];
        }
        if !table_worth(n, self.k) {
            return estimate(self.estimator, n, c, self.k);
        }
        let table = self
            .tables
            .remove(&n)
            .unwrap_or_else(|| build_table(self.estimator, n, self.k));
        let previous = std::mem::replace(&mut self.last, table);
        if let Some(previous_n) = self.last_n.replace(n) {
            self.tables.insert(previous_n, previous);
        }
        self.last[c as usize]
    }
}

/// Whether the histogram path applies: one valid n for every row and a table worth building.
/// Otherwise the general path runs (and reports k > n on the first row).
fn same_n_applies(n: Counts<'_>, k: i64) -> bool {
    matches!(n, Counts::Same(n) if n >= k && k >= 1 && table_worth(n as u64, k as u64))
}

/// One n for every row: a histogram of c gives the mean with one compare and one increment per row.
fn estimate_same_n(
    estimator: Estimator,
    n: i64,
    c: impl ExactSizeIterator<Item = i64>,
    k: i64,
    per_row: bool,
) -> Result<ManyEstimate, StatsError> {
    let rows = c.len();
    let nu = n as u64;
    let table = build_table(estimator, nu, k as u64);
    let mut histogram = vec![0u64; table.len()];
    let mut values = per_row.then(|| Vec::with_capacity(rows));
    for (row, ci) in c.enumerate() {
        // A negative c wraps to a huge unsigned value, so one comparison checks both bounds.
        if ci as u64 > nu {
            let err = validate(n, ci, k)
                .err()
                .unwrap_or_else(|| StatsError::new(format!("c = {ci} is out of range")));
            return Err(err.at_row(row as u64));
        }
        histogram[ci as usize] += 1;
        if let Some(v) = values.as_mut() {
            v.push(table[ci as usize]);
        }
    }
    let mut sum = CompensatedSum::default();
    for (count, value) in histogram.iter().zip(&table) {
        sum.add(*count as f64 * value);
    }
    let mean = (rows > 0).then(|| sum.total() / rows as f64);
    Ok(ManyEstimate {
        sum: sum.total(),
        mean,
        values,
    })
}

/// The estimator over rows of `(n, c)`: the mean and, with `per_row`, every row's value.
/// The first invalid row fails the call with its index.
pub fn estimate_many(
    estimator: Estimator,
    n: Counts<'_>,
    c: &[i64],
    k: i64,
    per_row: bool,
) -> Result<ManyEstimate, StatsError> {
    estimate_many_iter(estimator, n, c.iter().copied(), k, per_row)
}

/// [`estimate_many`] over any exact-size iterator of c (packed input is read without a copy).
pub fn estimate_many_iter(
    estimator: Estimator,
    n: Counts<'_>,
    c: impl ExactSizeIterator<Item = i64>,
    k: i64,
    per_row: bool,
) -> Result<ManyEstimate, StatsError> {
    let rows = c.len();
    if let Counts::PerRow(ns) = n {
        if ns.len() != rows {
            return Err(StatsError::new(format!(
                "n has {} rows but c has {rows}: give one n per row or a single n for all rows",
                ns.len(),
            ))
            .field("n"));
        }
    }
    if k < 1 {
        return Err(StatsError::new(format!("k must be >= 1, got {k}")).field("k"));
    }
    if let (true, Counts::Same(same)) = (same_n_applies(n, k), n) {
        return estimate_same_n(estimator, same, c, k, per_row);
    }
    let mut cache = TableCache::new(estimator, k as u64);
    let mut values = per_row.then(|| Vec::with_capacity(rows));
    let mut sum = CompensatedSum::default();
    for (row, ci) in c.enumerate() {
        let ni = match n {
            Counts::Same(v) => v,
            Counts::PerRow(ns) => ns[row],
        };
        let (nu, cu, ku) = validate(ni, ci, k).map_err(|e| {
            let e = if e.field == Some("k") {
                StatsError::new(format!(
                    "k = {k} is more than n = {ni} attempts: {} needs at least {k} attempts per row",
                    estimator.label(k as u64)
                ))
                .field("k")
            } else {
                e
            };
            e.at_row(row as u64)
        })?;
        debug_assert_eq!(ku, k as u64);
        let value = cache.get(nu, cu);
        sum.add(value);
        if let Some(v) = values.as_mut() {
            v.push(value);
        }
    }
    let mean = (rows > 0).then(|| sum.total() / rows as f64);
    Ok(ManyEstimate {
        sum: sum.total(),
        mean,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// C(a, b) as f64 through u128, exact for the small values tested here.
    fn comb(a: u64, b: u64) -> f64 {
        if b > a {
            return 0.0;
        }
        let mut r: u128 = 1;
        for i in 0..b as u128 {
            r = r * (a as u128 - i) / (i + 1);
        }
        r as f64
    }

    #[test]
    fn reference_values_of_the_established_eval() {
        assert!(close(pass_at_k(5, 2, 1).unwrap(), 0.4));
        assert!(close(pass_at_k(5, 2, 3).unwrap(), 0.9));
        assert!((pass_at_k(10, 7, 3).unwrap() - 0.991_666_666_666_666_6).abs() < 1e-12);
        assert_eq!(pass_at_k(3, 1, 3).unwrap(), 1.0);
    }

    #[test]
    fn both_estimators_match_binomials() {
        for n in 1..=30u64 {
            for c in 0..=n {
                for k in 1..=n {
                    let at = 1.0 - comb(n - c, k) / comb(n, k);
                    let hat = comb(c, k) / comb(n, k);
                    assert!((at_k(n, c, k) - at).abs() < 1e-12, "pass@k({n},{c},{k})");
                    assert!((hat_k(n, c, k) - hat).abs() < 1e-12, "pass^k({n},{c},{k})");
                }
            }
        }
    }

    #[test]
    fn small_cases_are_correctly_rounded() {
        assert_eq!(pass_hat_k(5, 4, 2).unwrap(), 0.6);
        assert_eq!(pass_at_k(5, 2, 3).unwrap(), 0.9);
        assert_eq!(pass_at_k(10, 7, 3).unwrap(), 1.0 - 1.0 / 120.0);
        // Long products fold into the ratio instead of overflowing.
        let v = pass_hat_k(100_000, 99_000, 5_000).unwrap();
        assert!(v > 0.0 && v < 1e-10, "{v}");
        assert!((pass_at_k(1_000_000, 1, 1).unwrap() - 1e-6).abs() < 1e-15);
    }

    #[test]
    fn edges() {
        assert_eq!(pass_at_k(10, 0, 10).unwrap(), 0.0);
        assert_eq!(pass_at_k(10, 10, 1).unwrap(), 1.0);
        assert_eq!(pass_hat_k(10, 10, 10).unwrap(), 1.0);
        assert_eq!(pass_hat_k(10, 9, 10).unwrap(), 0.0);
        assert_eq!(pass_hat_k(10, 0, 1).unwrap(), 0.0);
    }

    #[test]
    fn invalid_input_is_refused_with_the_field() {
        assert_eq!(pass_at_k(5, 0, 6).unwrap_err().field, Some("k"));
        assert_eq!(pass_at_k(5, 6, 1).unwrap_err().field, Some("c"));
        assert_eq!(pass_at_k(-1, 0, 1).unwrap_err().field, Some("n"));
        assert_eq!(pass_at_k(5, -1, 1).unwrap_err().field, Some("c"));
        assert_eq!(pass_hat_k(5, 1, 0).unwrap_err().field, Some("k"));
        // c = 0 with k > n is the case public helpers answer 1.0 to.
        assert!(pass_at_k(3, 0, 5).is_err());
        assert!(pass_at_k(0, 0, 1).is_err());
    }

    #[test]
    fn many_matches_one_by_one_and_names_the_bad_row() {
        let c = [0, 1, 2, 5, 10, 3];
        let got = estimate_many(Estimator::PassAtK, Counts::Same(10), &c, 3, true).unwrap();
        let expect: Vec<f64> = c.iter().map(|&ci| pass_at_k(10, ci, 3).unwrap()).collect();
        assert_eq!(got.values.unwrap(), expect);
        let mean = expect.iter().sum::<f64>() / expect.len() as f64;
        assert!(close(got.mean.unwrap(), mean));

        let ns = [4, 4, 2];
        let err = estimate_many(
            Estimator::PassAtK,
            Counts::PerRow(&ns),
            &[1, 1, 1],
            3,
            false,
        )
        .unwrap_err();
        assert_eq!(err.row, Some(2));
        assert!(
            err.message.starts_with("row 2: k = 3 is more than n = 2"),
            "{err}"
        );
        assert!(err.message.contains("pass@3"), "{err}");

        let err =
            estimate_many(Estimator::PassHatK, Counts::Same(5), &[1, 6], 1, false).unwrap_err();
        assert_eq!((err.row, err.field), (Some(1), Some("c")));

        let err =
            estimate_many(Estimator::PassAtK, Counts::PerRow(&[5]), &[1, 2], 1, false).unwrap_err();
        assert_eq!(err.field, Some("n"));
    }

    #[test]
    fn same_n_fast_path_and_per_row_path_agree() {
        let c: Vec<i64> = (0..1000).map(|i| (i * 7) % 11).collect();
        let ns: Vec<i64> = (0..1000)
            .map(|i| if i % 3 == 0 { 10 } else { 12 })
            .collect();
        for est in [Estimator::PassAtK, Estimator::PassHatK] {
            let fast = estimate_many(est, Counts::Same(10), &c, 4, true).unwrap();
            let slow = estimate_many(est, Counts::PerRow(&[10; 1000]), &c, 4, true).unwrap();
            assert_eq!(fast.values, slow.values);
            assert!((fast.mean.unwrap() - slow.mean.unwrap()).abs() < 1e-14);
            let mixed = estimate_many(est, Counts::PerRow(&ns), &c, 4, true).unwrap();
            let expect: Vec<f64> = ns
                .iter()
                .zip(&c)
                .map(|(&n, &ci)| estimate(est, n as u64, ci as u64, 4))
                .collect();
            assert_eq!(mixed.values.unwrap(), expect);
        }
        let err =
            estimate_many(Estimator::PassAtK, Counts::Same(10), &[1, -3], 2, false).unwrap_err();
        assert_eq!((err.row, err.field), (Some(1), Some("c")));
        let err =
            estimate_many(Estimator::PassAtK, Counts::Same(1), &[1, 1], 2, false).unwrap_err();
        assert_eq!((err.row, err.field), (Some(0), Some("k")));
    }

    #[test]
    fn many_without_rows_has_no_mean() {
        let got = estimate_many(Estimator::PassAtK, Counts::Same(5), &[], 1, true).unwrap();
        assert_eq!(got.mean, None);
        assert_eq!(got.values, Some(vec![]));
    }

    #[test]
    fn large_n_skips_the_table_and_agrees() {
        let n = (TABLE_MAX_N + 10) as i64;
        let got = estimate_many(Estimator::PassAtK, Counts::Same(n), &[1, n / 2], 2, true)
            .unwrap()
            .values
            .unwrap();
        assert_eq!(got[0], pass_at_k(n, 1, 2).unwrap());
        assert_eq!(got[1], pass_at_k(n, n / 2, 2).unwrap());
    }
}
