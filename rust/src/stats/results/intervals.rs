//! The result model's intervals, from running sums (no per-row storage): Wilson's score interval for
//! pass rates (pass@k, pass^k) with a cluster-adjusted effective size, Student's t for the mean score
//! (Wilson when every score is 0 or 1; never outside [0, 1] when every score lies there).
//! An interval the data cannot support is not drawn as a point: its bounds are null and `note` says why.

use crate::stats::{normal_quantile, t_quantile, unit_bounds, wilson, Span, Spread};
use serde::Serialize;

/// One statistic with its interval; `low` / `high` are `None` when the data cannot give one (`note`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub estimate: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub level: f64,
    /// "wilson" (pass rates, and the mean of scores that are all 0 or 1) or "t" (the mean score).
    pub method: &'static str,
    /// Rows the statistic is over.
    pub rows: u64,
    /// Wilson: the binomial sample size the rows' spread is worth (between the rows and the attempts).
    pub effective_n: Option<f64>,
    pub note: Option<String>,
}

/// Below this a spread is rounding noise, not data.
const NO_SPREAD: f64 = 1e-12;

/// The interval of the mean score, a ratio of per-row score sums over per-row scored attempts, with
/// the linearised (cluster-robust) standard error: a row's attempts move together. Scores that are all
/// 0 or 1 make the mean a proportion: Wilson's interval at the effective size (a t interval on a few
/// such rows reaches below 0 and above 1). Otherwise Student's t, cut to [0, 1] when every score lies
/// there: no interval says more than the scores can be.
pub fn mean_interval(spread: &Spread, level: f64) -> Option<Estimate> {
    if spread.count == 0 {
        return None;
    }
    let rows = spread.scored_rows;
    let weight = spread.count as f64;
    let mean = spread.sum / weight;
    let mut estimate = Estimate {
        estimate: mean,
        low: None,
        high: None,
        level,
        method: if spread.binary { "wilson" } else { "t" },
        rows,
        effective_n: None,
        note: None,
    };
    if rows < 2 {
        estimate.note = Some(format!(
            "{rows} row with scores: no interval (it needs at least 2)"
        ));
        return Some(estimate);
    }
    let r = rows as f64;
    let squares = spread.row_residual_squares(mean);
    let se = (r / (r - 1.0) * squares).sqrt() / weight;
    if spread.binary {
        // The spread of per-row rates the standard error stands for: R·se² (see `effective_n`).
        let n = effective_n(rows, mean, r * se * se, weight);
        let (low, high) = wilson(mean, n, normal_quantile(0.5 + level / 2.0));
        estimate.low = Some(low);
        estimate.high = Some(high);
        estimate.effective_n = Some(n);
        return Some(estimate);
    }
    if se <= NO_SPREAD * mean.abs().max(1.0) {
        estimate.note = Some(format!(
            "every one of the {rows} rows has the same mean score: no spread to estimate an interval from"
        ));
        return Some(estimate);
    }
    let t = t_quantile(0.5 + level / 2.0, r - 1.0);
    let in_unit = matches!(spread.range, Some((min, max)) if min >= 0.0 && max <= 1.0);
    let (low, high) = unit_bounds(mean - t * se, mean + t * se, Span::unit_if(in_unit));
    estimate.low = Some(low);
    estimate.high = Some(high);
    Some(estimate)
}

/// The binomial sample size that per-row rates with this spread (`row_variance`, the variance of a
/// row's rate) are worth: `R p(1-p) / s²` (the Kish design effect applied to the attempts), kept
/// between the rows (attempts of a row perfectly correlated) and `most` (independent attempts). With
/// no spread to measure (every row passed, or none) it is the rows: the data cannot show that
/// attempts are independent.
fn effective_n(rows: u64, mean: f64, row_variance: f64, most: f64) -> f64 {
    let r = rows as f64;
    if rows < 2 || mean <= 0.0 || mean >= 1.0 {
        return r;
    }
    if row_variance <= NO_SPREAD {
        return most;
    }
    (r * mean * (1.0 - mean) / row_variance).clamp(r, most.max(r))
}

/// Wilson intervals of pass@k and pass^k per k, named `pass_at_<k>` / `pass_hat_<k>`.
pub fn pass_intervals(spread: &Spread, level: f64) -> Vec<(String, Estimate)> {
    let z = normal_quantile(0.5 + level / 2.0);
    let mut out = Vec::new();
    for k in &spread.ks {
        for (prefix, sum, sum_sq) in [("pass_at", k.at, k.at_sq), ("pass_hat", k.hat, k.hat_sq)] {
            let (rows, mean) = (k.rows as f64, (sum / k.rows as f64).clamp(0.0, 1.0));
            let variance = if k.rows < 2 {
                0.0
            } else {
                ((sum_sq - rows * mean * mean) / (rows - 1.0)).max(0.0)
            };
            let most = rows * spread.max_attempts.max(1) as f64;
            let n = effective_n(k.rows, mean, variance, most);
            let (low, high) = wilson(mean, n, z);
            out.push((
                format!("{prefix}_{}", k.k),
                Estimate {
                    estimate: mean,
                    low: Some(low),
                    high: Some(high),
                    level,
                    method: "wilson",
                    rows: k.rows,
                    effective_n: Some(n),
                    note: None,
                },
            ));
        }
    }
    out
}

/// Every interval of the result model over one aggregator's rows: the mean score's (Student t) first,
/// then each pass rate's (Wilson). A subset of a file's rows (a group) is measured with these too.
pub fn model_intervals(spread: &Spread, level: f64) -> Vec<(String, Estimate)> {
    let mut out: Vec<(String, Estimate)> = mean_interval(spread, level)
        .map(|mean| ("mean".to_string(), mean))
        .into_iter()
        .collect();
    out.extend(pass_intervals(spread, level));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Aggregator, AggregatorOptions};

    fn spread(rows: &[Vec<Option<f64>>]) -> Spread {
        let mut a = Aggregator::new(AggregatorOptions::default()).unwrap();
        for (i, row) in rows.iter().enumerate() {
            a.push_row(row.iter().copied(), i as u64).unwrap();
        }
        a.spread()
    }

    #[test]
    fn five_passes_are_not_certain() {
        let s = spread(&vec![vec![Some(1.0)]; 5]);
        let iv = &pass_intervals(&s, 0.95)[0].1;
        assert_eq!(
            (iv.estimate, iv.high, iv.effective_n),
            (1.0, Some(1.0), Some(5.0))
        );
        assert!((iv.low.unwrap() - 0.565_517_535_216_825_4).abs() < 1e-12);
        // The mean of 0/1 scores is the same proportion: Wilson, not "no spread".
        let mean = mean_interval(&s, 0.95).unwrap();
        assert_eq!(
            (mean.method, mean.low, mean.high),
            ("wilson", iv.low, iv.high)
        );
    }

    #[test]
    fn identical_rows_have_no_spread_despite_rounding() {
        // The expanded Σs² - 2mΣsw + m²Σw² left ~1e-16 here, a 1e-8 interval around a constant.
        let row = vec![Some(0.25), Some(0.5), Some(1.0)];
        let mean = mean_interval(&spread(&[row.clone(), row]), 0.95).unwrap();
        assert!(mean.low.is_none() && mean.note.unwrap().contains("same mean score"));
    }

    #[test]
    fn correlated_attempts_count_as_fewer() {
        // Ten rows of four attempts: half pass every attempt, half none (attempts fully correlated).
        let rows: Vec<Vec<Option<f64>>> = (0..10)
            .map(|r| vec![Some(f64::from(u8::from(r % 2 == 0))); 4])
            .collect();
        let iv = &pass_intervals(&spread(&rows), 0.95)[0].1;
        assert_eq!(iv.effective_n, Some(10.0));
        // Every row 2 of 4: no spread between rows, worth the 40 attempts.
        let rows = vec![vec![Some(1.0), Some(0.0), Some(1.0), Some(0.0)]; 10];
        let iv = &pass_intervals(&spread(&rows), 0.95)[0].1;
        assert_eq!(iv.effective_n, Some(40.0));
    }

    #[test]
    fn the_mean_uses_t() {
        let s = spread(&[
            vec![Some(0.0)],
            vec![Some(2.0)],
            vec![Some(2.0)],
            vec![Some(2.0)],
        ]);
        let iv = mean_interval(&s, 0.95).unwrap();
        let se = 0.5; // sample std 1 over 4 rows
        let t = 3.182_446_305_284_263; // scipy.stats.t.ppf(0.975, 3)
        assert_eq!(iv.method, "t");
        assert!((iv.low.unwrap() - (1.5 - t * se)).abs() < 1e-12, "{iv:?}");
        assert!(mean_interval(&spread(&[vec![Some(0.5)]]), 0.95)
            .unwrap()
            .note
            .unwrap()
            .contains("1 row"));
        assert!(mean_interval(&spread(&[]), 0.95).is_none());
    }

    #[test]
    fn the_mean_of_0_1_scores_stays_inside_0_1() {
        // 3 of 4 passed: t gave [-0.046, 1.546]; Wilson over the 4 rows (statsmodels: 0.3006, 0.9544).
        let pass = |x: f64| vec![Some(x)];
        let s = spread(&[pass(0.0), pass(1.0), pass(1.0), pass(1.0)]);
        let iv = mean_interval(&s, 0.95).unwrap();
        assert_eq!((iv.method, iv.effective_n), ("wilson", Some(4.0)));
        assert!(
            (iv.low.unwrap() - 0.300_641_842_582_402).abs() < 1e-12,
            "{iv:?}"
        );
        assert!(
            (iv.high.unwrap() - 0.954_412_739_190_299_5).abs() < 1e-12,
            "{iv:?}"
        );
        // Scores in [0, 1] but not 0/1: Student's t, cut at the bounds.
        let s = spread(&[pass(0.0), pass(0.9), pass(1.0), pass(1.0)]);
        let iv = mean_interval(&s, 0.95).unwrap();
        assert_eq!((iv.method, iv.low, iv.high), ("t", Some(0.0), Some(1.0)));
    }
}
