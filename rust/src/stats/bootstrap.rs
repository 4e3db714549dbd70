//! Confidence intervals over rows: the percentile bootstrap (seeded, reproducible on every platform)
//! and the normal approximation.
//!
//! A statistic is a ratio of sums over rows, `sum(values) / sum(weights)`: with unit weights it is the
//! mean over rows (pass@k), with weights = attempts per row it is the mean over all attempts (the mean
//! score). Resampling whole rows keeps the attempts of one prompt together, which is what makes the
//! interval honest when attempts of one prompt are correlated.

use super::CompensatedSum;

/// A point estimate with the bounds of its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// xoshiro256** seeded through splitmix64: small, fast, and the same stream on every platform.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Self {
            s: [next(), next(), next(), next()],
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..bound` (`bound > 0`), without modulo bias (Lemire's method).
    pub fn below(&mut self, bound: u64) -> u64 {
        let mut m = u128::from(self.next_u64()) * u128::from(bound);
        if (m as u64) < bound {
            let threshold = bound.wrapping_neg() % bound;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(bound);
            }
        }
        (m >> 64) as u64
    }
}

fn ratio(values: &[f64], weights: Option<&[f64]>) -> f64 {
    let mut num = CompensatedSum::default();
    values.iter().for_each(|v| num.add(*v));
    let den = match weights {
        Some(w) => {
            let mut d = CompensatedSum::default();
            w.iter().for_each(|v| d.add(*v));
            d.total()
        }
        None => values.len() as f64,
    };
    num.total() / den
}

/// Where a statistic over rows can lie, so where its interval may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// Anywhere (values not all in [0, 1]).
    Unbounded,
    /// In [0, 1]: a mean (or ratio) of per-row values that all lie there (pass rates, such scores).
    Unit,
    /// In [-1, 1]: the paired difference of two such means.
    UnitDifference,
}

impl Span {
    /// [`Span::Unit`] when `in_unit`, else [`Span::Unbounded`].
    pub fn unit_if(in_unit: bool) -> Self {
        if in_unit {
            Span::Unit
        } else {
            Span::Unbounded
        }
    }
}

/// Bounds cut to what the statistic can be (see [`Span`]): an interval reaching past what the values
/// allow (a t interval on a few rows does) is surer of nothing, only wrong about the range.
pub fn unit_bounds(low: f64, high: f64, span: Span) -> (f64, f64) {
    let (min, max) = match span {
        Span::Unbounded => return (low, high),
        Span::Unit => (0.0, 1.0),
        Span::UnitDifference => (-1.0, 1.0),
    };
    (low.max(min), high.min(max))
}

/// Whether every row's value (over its weight, when weighted) lies in [0, 1]; rows of no weight say
/// nothing.
fn rows_in_unit(values: &[f64], weights: Option<&[f64]>) -> bool {
    values.iter().enumerate().all(|(i, v)| {
        let w = weights.map_or(1.0, |w| w[i]);
        w == 0.0 || (0.0..=1.0).contains(&(v / w))
    })
}

/// The rows of a column that carry data: those of nonzero weight (a pass@k column weighs a row with
/// fewer than k attempts that count 0, the mean a row without a scored attempt), every row when
/// unweighted. Both the small-sample factor `R/(R-1)` and Student's t degrees of freedom `R - 1` count
/// these rows: a row of weight 0 is no observation.
pub fn rows_with_data(rows: usize, weights: Option<&[f64]>) -> usize {
    weights.map_or(rows, |w| w.iter().filter(|&&x| x != 0.0).count())
}

/// The normal-approximation interval `estimate ± z·se` of a ratio over rows, with the cluster-robust
/// (linearised) standard error. With unit weights this is the textbook `mean ± z·s/√R`, R the
/// [`rows_with_data`]. When every row's value lies in [0, 1], so do the bounds (see [`unit_bounds`]).
/// `None` with fewer than two rows that carry data or a zero total weight.
pub fn normal_interval(values: &[f64], weights: Option<&[f64]>, z: f64) -> Option<Interval> {
    let rows = rows_with_data(values.len(), weights);
    if rows < 2 {
        return None;
    }
    let estimate = ratio(values, weights);
    if !estimate.is_finite() {
        return None;
    }
    let total_weight = weights.map_or(values.len() as f64, |w| w.iter().sum());
    let mut squares = CompensatedSum::default();
    for (i, v) in values.iter().enumerate() {
        let w = weights.map_or(1.0, |w| w[i]);
        let r = v - estimate * w;
        squares.add(r * r);
    }
    let r = rows as f64;
    let se = (r / (r - 1.0) * squares.total()).sqrt() / total_weight;
    let (low, high) = unit_bounds(
        estimate - z * se,
        estimate + z * se,
        Span::unit_if(rows_in_unit(values, weights)),
    );
    Some(Interval {
        estimate,
        low,
        high,
    })
}

/// `ratio(a) - ratio(b)` over paired rows (row i of `a` and of `b` are the same prompt) with its
/// linearised standard error; with unit weights `se` is the paired `sd(d)/√R` of the per-row differences
/// d. When every row of both sides lies in [0, 1] the difference lies in [-1, 1] (`span`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedDifference {
    pub estimate: f64,
    pub se: f64,
    pub span: Span,
    /// The paired rows that carry data (nonzero weight on either side): the `R` of the small-sample
    /// factor, and `R - 1` Student's t degrees of freedom.
    pub rows: usize,
}

impl PairedDifference {
    /// `estimate ± q·se`, kept inside the span (see [`unit_bounds`]).
    pub fn interval(&self, q: f64) -> Interval {
        let (low, high) = unit_bounds(
            self.estimate - q * self.se,
            self.estimate + q * self.se,
            self.span,
        );
        Interval {
            estimate: self.estimate,
            low,
            high,
        }
    }
}

/// The paired difference `ratio(a) - ratio(b)` and its standard error (see [`PairedDifference`]);
/// `None` with fewer than two rows that carry data, rows that do not pair, or a side without weight.
pub fn paired_difference(
    a: &[f64],
    a_weights: Option<&[f64]>,
    b: &[f64],
    b_weights: Option<&[f64]>,
) -> Option<PairedDifference> {
    let rows = a.len();
    if b.len() != rows {
        return None;
    }
    let weight = |w: Option<&[f64]>, i: usize| w.map_or(1.0, |w| w[i]);
    let with_data = (0..rows)
        .filter(|&i| weight(a_weights, i) != 0.0 || weight(b_weights, i) != 0.0)
        .count();
    if with_data < 2 {
        return None;
    }
    let (ma, mb) = (ratio(a, a_weights), ratio(b, b_weights));
    let ta = a_weights.map_or(rows as f64, |w| w.iter().sum());
    let tb = b_weights.map_or(rows as f64, |w| w.iter().sum());
    if !(ma.is_finite() && mb.is_finite()) {
        return None;
    }
    let mut squares = CompensatedSum::default();
    for i in 0..rows {
        let wa = a_weights.map_or(1.0, |w| w[i]);
        let wb = b_weights.map_or(1.0, |w| w[i]);
        let d = (a[i] - ma * wa) / ta - (b[i] - mb * wb) / tb;
        squares.add(d * d);
    }
    let r = with_data as f64;
    let in_unit = rows_in_unit(a, a_weights) && rows_in_unit(b, b_weights);
    Some(PairedDifference {
        estimate: ma - mb,
        se: (r / (r - 1.0) * squares.total()).sqrt(),
        span: if in_unit {
            Span::UnitDifference
        } else {
            Span::Unbounded
        },
        rows: with_data,
    })
}

/// The interval `estimate ± q·se` of a [`paired_difference`] (`q` a normal or Student t quantile).
pub fn normal_difference(
    a: &[f64],
    a_weights: Option<&[f64]>,
    b: &[f64],
    b_weights: Option<&[f64]>,
    q: f64,
) -> Option<Interval> {
    paired_difference(a, a_weights, b, b_weights).map(|d| d.interval(q))
}

/// The `q` quantile of sorted data with linear interpolation (numpy's default).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (pos - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The median (the mean of the two middle values for an even count); `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(percentile(&sorted, 0.5))
}

/// The `qs` quantiles of `values` (each q in [0, 1]; linear between order statistics, numpy's default),
/// `None` for no values. NaN values are an error for the caller to report; infinities sort to the ends.
pub fn quantiles(values: &[f64], qs: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(qs.iter().map(|&q| percentile(&sorted, q)).collect())
}

/// A percentile bootstrap over rows for several statistics at once (same resampled rows for each, so
/// their intervals are consistent). Runs in steps so a caller can check for interrupts in between;
/// the result does not depend on the step sizes.
pub struct Bootstrap<'a> {
    columns: Vec<&'a [f64]>,
    weights: Vec<Option<&'a [f64]>>,
    rng: Rng,
    draws: Vec<Vec<f64>>,
    resamples: usize,
    index: Vec<usize>,
}

impl<'a> Bootstrap<'a> {
    /// `columns[j]` are the per-row values of statistic j and `weights[j]` its optional per-row weights.
    /// Every column has the same number of rows.
    pub fn new(
        columns: Vec<&'a [f64]>,
        weights: Vec<Option<&'a [f64]>>,
        resamples: usize,
        seed: u64,
    ) -> Self {
        assert_eq!(columns.len(), weights.len());
        let draws = vec![Vec::with_capacity(resamples); columns.len()];
        Self {
            columns,
            weights,
            rng: Rng::new(seed),
            draws,
            resamples,
            index: Vec::new(),
        }
    }

    fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.len())
    }

    pub fn done(&self) -> bool {
        let drawn = self.draws.first().map(Vec::len);
        self.rows() == 0 || drawn.is_none() || drawn >= Some(self.resamples)
    }

    /// Runs up to `max_resamples` more resamples.
    pub fn step(&mut self, max_resamples: usize) {
        let rows = self.rows();
        for _ in 0..max_resamples {
            if self.done() {
                return;
            }
            self.index.clear();
            for _ in 0..rows {
                self.index.push(self.rng.below(rows as u64) as usize);
            }
            for (j, column) in self.columns.iter().enumerate() {
                let mut num = 0.0f64;
                let mut den = 0.0f64;
                match self.weights[j] {
                    Some(w) => {
                        for &i in &self.index {
                            num += column[i];
                            den += w[i];
                        }
                    }
                    None => {
                        for &i in &self.index {
                            num += column[i];
                        }
                        den = rows as f64;
                    }
                }
                self.draws[j].push(num / den);
            }
        }
    }

    /// Percentile intervals of `statistic(first) - statistic(second)` for each `(first, second)` pair
    /// of columns, from the same resampled rows (a paired bootstrap).
    pub fn difference_intervals(
        mut self,
        pairs: &[(usize, usize)],
        level: f64,
    ) -> Vec<Option<Interval>> {
        while !self.done() {
            self.step(usize::MAX);
        }
        let alpha = (1.0 - level) / 2.0;
        pairs
            .iter()
            .map(|&(i, j)| {
                if self.rows() < 2 {
                    return None;
                }
                let estimate = ratio(self.columns[i], self.weights[i])
                    - ratio(self.columns[j], self.weights[j]);
                let mut diffs: Vec<f64> = self.draws[i]
                    .iter()
                    .zip(&self.draws[j])
                    .map(|(x, y)| x - y)
                    .filter(|d| d.is_finite())
                    .collect();
                if diffs.is_empty() || !estimate.is_finite() {
                    return None;
                }
                diffs.sort_by(f64::total_cmp);
                Some(Interval {
                    estimate,
                    low: percentile(&diffs, alpha),
                    high: percentile(&diffs, 1.0 - alpha),
                })
            })
            .collect()
    }

    /// The percentile intervals at `level` (e.g. 0.95), one per column; `None` for a column whose
    /// statistic is undefined (fewer than two rows, or no weight in any resample).
    pub fn intervals(mut self, level: f64) -> Vec<Option<Interval>> {
        while !self.done() {
            self.step(usize::MAX);
        }
        let alpha = (1.0 - level) / 2.0;
        let mut out = Vec::with_capacity(self.columns.len());
        for (j, draws) in self.draws.iter_mut().enumerate() {
            // One row has no spread to resample: no interval, as with the normal approximation.
            let estimate = if self.columns[j].len() < 2 {
                f64::NAN
            } else {
                ratio(self.columns[j], self.weights[j])
            };
            // A resample without any weight has no statistic; it is left out.
            draws.retain(|d| d.is_finite());
            if draws.is_empty() || !estimate.is_finite() {
                out.push(None);
                continue;
            }
            draws.sort_by(f64::total_cmp);
            out.push(Some(Interval {
                estimate,
                low: percentile(draws, alpha),
                high: percentile(draws, 1.0 - alpha),
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z95: f64 = 1.959_963_984_540_054;

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        // numpy.quantile([1, 2, 3, 4, 10], [0, 0.5, 0.95, 1]) == [1, 3, 8.8, 10]
        let q = quantiles(&[10.0, 1.0, 4.0, 3.0, 2.0], &[0.0, 0.5, 0.95, 1.0]).unwrap();
        let expected = [1.0, 3.0, 8.8, 10.0];
        assert!(
            q.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-12),
            "{q:?}"
        );
        assert_eq!(quantiles(&[], &[0.5]), None);
        assert_eq!(quantiles(&[7.0], &[0.0, 0.99]), Some(vec![7.0, 7.0]));
    }

    #[test]
    fn rng_stream_is_fixed() {
        // Pinned so a change of generator (which would change every published interval) is noticed.
        let mut rng = Rng::new(0);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        // From an independent implementation of splitmix64 + xoshiro256**.
        assert_eq!(
            first,
            [
                11_091_344_671_253_066_420,
                13_793_997_310_169_335_082,
                1_900_383_378_846_508_768
            ]
        );
        assert_ne!(Rng::new(1).next_u64(), first[0]);
        let mut rng = Rng::new(7);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[rng.below(3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn normal_interval_unit_weights_is_the_textbook_one() {
        let v = [0.0, 2.0, 2.0, 0.0, 2.0];
        let iv = normal_interval(&v, None, Z95).unwrap();
        let mean: f64 = 1.2;
        let s2 = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 4.0;
        let half = Z95 * (s2 / 5.0).sqrt();
        assert!((iv.estimate - mean).abs() < 1e-15);
        assert!((iv.low - (mean - half)).abs() < 1e-12 && (iv.high - (mean + half)).abs() < 1e-12);
        assert!(normal_interval(&[1.0], None, Z95).is_none());
    }

    #[test]
    fn rows_of_weight_zero_are_no_rows_of_the_normal_interval_or_the_paired_difference() {
        // Two empty rows beside three with data: the same interval and standard error as the three alone.
        let (v, w) = ([2.0, 5.0, 0.0, 3.5, 0.0], [1.0, 1.0, 0.0, 1.0, 0.0]);
        let with_empty = normal_interval(&v, Some(&w), Z95).unwrap();
        let alone = normal_interval(&[2.0, 5.0, 3.5], None, Z95).unwrap();
        assert!(
            (with_empty.low - alone.low).abs() < 1e-12
                && (with_empty.high - alone.high).abs() < 1e-12
        );
        assert_eq!(rows_with_data(5, Some(&w)), 3);
        let b = [1.0, 1.0, 0.0, 2.0, 0.0];
        let d = paired_difference(&v, Some(&w), &b, Some(&w)).unwrap();
        let direct = paired_difference(&[2.0, 5.0, 3.5], None, &[1.0, 1.0, 2.0], None).unwrap();
        assert_eq!(d.rows, 3);
        assert!((d.se - direct.se).abs() < 1e-12, "{d:?} {direct:?}");
        // One row with data is no interval.
        assert!(normal_interval(&[2.0, 0.0], Some(&[1.0, 0.0]), Z95).is_none());
    }

    #[test]
    fn normal_interval_of_values_in_0_1_stays_there() {
        // Pass/fail rows: 0.6 ± 0.48 reached 1.08.
        let iv = normal_interval(&[0.0, 1.0, 1.0, 0.0, 1.0], None, Z95).unwrap();
        assert!(
            (iv.low - 0.6 + 0.48).abs() < 0.01 && iv.high == 1.0,
            "{iv:?}"
        );
        // Score sums over attempts: each row's mean is in [0, 1].
        let iv = normal_interval(&[0.0, 2.0, 0.0], Some(&[2.0, 2.0, 2.0]), Z95).unwrap();
        assert_eq!(iv.low, 0.0);
    }

    #[test]
    fn weighted_ratio_equals_unweighted_when_weights_are_equal() {
        let sums = [2.0, 3.0, 0.0, 4.0];
        let w = [4.0; 4];
        let means: Vec<f64> = sums.iter().map(|s| s / 4.0).collect();
        let a = normal_interval(&sums, Some(&w), Z95).unwrap();
        let b = normal_interval(&means, None, Z95).unwrap();
        assert!((a.estimate - b.estimate).abs() < 1e-15);
        assert!((a.low - b.low).abs() < 1e-12 && (a.high - b.high).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_seeded_and_step_size_does_not_matter() {
        let v: Vec<f64> = (0..50).map(|i| f64::from(i % 3 == 0)).collect();
        let one = Bootstrap::new(vec![&v], vec![None], 500, 42).intervals(0.95);
        let mut stepped = Bootstrap::new(vec![&v], vec![None], 500, 42);
        stepped.step(7);
        stepped.step(100);
        assert_eq!(one, stepped.intervals(0.95));
        let other = Bootstrap::new(vec![&v], vec![None], 500, 43).intervals(0.95);
        assert_ne!(one, other);
        let iv = one[0].unwrap();
        assert!(iv.low < iv.estimate && iv.estimate < iv.high);
        // Close to the normal interval for a mean of 50 Bernoulli rows.
        let normal = normal_interval(&v, None, Z95).unwrap();
        assert!((iv.low - normal.low).abs() < 0.05 && (iv.high - normal.high).abs() < 0.05);
    }

    #[test]
    fn bootstrap_of_constant_rows_is_a_point() {
        let v = [1.0; 10];
        let iv = Bootstrap::new(vec![&v], vec![None], 100, 1).intervals(0.9)[0].unwrap();
        assert_eq!((iv.low, iv.estimate, iv.high), (1.0, 1.0, 1.0));
        let empty: [f64; 0] = [];
        assert_eq!(
            Bootstrap::new(vec![&empty], vec![None], 100, 1).intervals(0.9),
            vec![None]
        );
        assert_eq!(
            Bootstrap::new(vec![&[0.5]], vec![None], 100, 1).intervals(0.9),
            vec![None]
        );
    }

    #[test]
    fn paired_difference_intervals() {
        let a = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0];
        let b = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let paired = normal_difference(&a, None, &b, None, Z95).unwrap();
        let direct = normal_interval(&d, None, Z95).unwrap();
        assert!((paired.estimate - direct.estimate).abs() < 1e-15);
        assert!(
            (paired.low - direct.low).abs() < 1e-12 && (paired.high - direct.high).abs() < 1e-12
        );

        let boot = Bootstrap::new(vec![&a, &b], vec![None, None], 400, 9);
        let diff = boot.difference_intervals(&[(0, 1)], 0.95)[0].unwrap();
        let same_rows = Bootstrap::new(vec![&d], vec![None], 400, 9).intervals(0.95)[0].unwrap();
        // Same seed, same resampled rows: the paired bootstrap is the bootstrap of the differences.
        assert!(
            (diff.low - same_rows.low).abs() < 1e-12 && (diff.high - same_rows.high).abs() < 1e-12
        );
        assert!(normal_difference(&[1.0], None, &[0.0], None, Z95).is_none());
    }

    #[test]
    fn paired_difference_of_unit_rows_stays_in_minus_one_one() {
        // d = [1, 1, 0]: mean 2/3, se 1/3; with t(2) = 4.303 the bounds were -0.77 and +2.10.
        let (a, b) = ([1.0, 1.0, 0.0], [0.0, 0.0, 0.0]);
        let d = paired_difference(&a, None, &b, None).unwrap();
        assert_eq!(d.span, Span::UnitDifference);
        let iv = d.interval(4.302652729911275);
        assert!(
            (iv.low + 0.767_550_9).abs() < 1e-6 && iv.high == 1.0,
            "{iv:?}"
        );
        // Score sums over attempts, each row's mean in [0, 1]: the same span.
        let w = [2.0; 3];
        let d = paired_difference(&[2.0, 2.0, 0.0], Some(&w), &[0.0; 3], Some(&w)).unwrap();
        assert_eq!((d.span, d.interval(4.3).high), (Span::UnitDifference, 1.0));
        // Scores past 1: nothing is cut.
        let d = paired_difference(&[5.0, 5.0, 0.0], None, &b, None).unwrap();
        assert_eq!(d.span, Span::Unbounded);
        assert!(d.interval(4.3).high > 10.0);
        assert_eq!(unit_bounds(-3.0, 3.0, Span::Unit), (0.0, 1.0));
    }

    #[test]
    fn percentile_interpolates() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&s, 0.0), 1.0);
        assert_eq!(percentile(&s, 1.0), 4.0);
        assert!((percentile(&s, 0.5) - 2.5).abs() < 1e-15);
    }

    #[test]
    fn median_of_odd_even_and_no_values() {
        assert_eq!(median(&[0.75, 0.25, 0.5]), Some(0.5));
        assert_eq!(median(&[1.0, 0.0, 0.5, 0.25]), Some(0.375));
        assert_eq!(median(&[]), None);
    }
}
