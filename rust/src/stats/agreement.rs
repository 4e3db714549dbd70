//! Agreement of a judge with human labels: mean absolute error, bias, Spearman's rho and Cohen's kappa.

use super::{CompensatedSum, StatsError};

/// How a judge's scores agree with gold labels of the same records.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    pub count: usize,
    /// Mean of `|judge - gold|`.
    pub mae: f64,
    /// Mean of `judge - gold`: positive when the judge is more generous than the labels.
    pub bias: f64,
    /// Spearman's rank correlation (average ranks for ties); None when either side is constant.
    pub spearman: Option<f64>,
    /// Cohen's kappa of `score >= threshold` on both sides; None when chance agreement is 1.
    pub kappa: Option<f64>,
}

fn check(judge: &[f64], gold: &[f64]) -> Result<(), StatsError> {
    if judge.len() != gold.len() {
        return Err(StatsError::new(format!(
            "{} judge scores but {} gold labels",
            judge.len(),
            gold.len()
        )));
    }
    if judge.is_empty() {
        return Err(StatsError::new(
            "no records with both a judge score and a gold label",
        ));
    }
    for (i, (a, b)) in judge.iter().zip(gold).enumerate() {
        if !a.is_finite() || !b.is_finite() {
            return Err(
                StatsError::new(format!("score {a} or label {b} is not finite")).at_row(i as u64),
            );
        }
    }
    Ok(())
}

/// 1-based ranks, ties sharing the average of their positions.
pub fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        order[i..=j].iter().for_each(|&k| out[k] = rank);
        i = j + 1;
    }
    out
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        cov += (x - ma) * (y - mb);
        va += (x - ma) * (x - ma);
        vb += (y - mb) * (y - mb);
    }
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// Spearman's rho of two equally long score lists.
pub fn spearman(a: &[f64], b: &[f64]) -> Result<Option<f64>, StatsError> {
    check(a, b)?;
    Ok(pearson(&ranks(a), &ranks(b)))
}

/// Cohen's kappa of two pass/fail labellings.
pub fn cohen_kappa(a: &[bool], b: &[bool]) -> Option<f64> {
    let n = a.len() as f64;
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let observed = a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / n;
    let pa = a.iter().filter(|&&x| x).count() as f64 / n;
    let pb = b.iter().filter(|&&x| x).count() as f64 / n;
    let chance = pa * pb + (1.0 - pa) * (1.0 - pb);
    (chance < 1.0).then(|| (observed - chance) / (1.0 - chance))
}

/// Every agreement figure of judge scores against gold labels (`threshold` for kappa's pass/fail).
pub fn agreement(judge: &[f64], gold: &[f64], threshold: f64) -> Result<Agreement, StatsError> {
    check(judge, gold)?;
    let (mut abs, mut signed) = (CompensatedSum::default(), CompensatedSum::default());
    for (a, b) in judge.iter().zip(gold) {
        abs.add((a - b).abs());
        signed.add(a - b);
    }
    let n = judge.len() as f64;
    let pass = |v: &[f64]| v.iter().map(|&x| x >= threshold).collect::<Vec<_>>();
    Ok(Agreement {
        count: judge.len(),
        mae: abs.total() / n,
        bias: signed.total() / n,
        spearman: pearson(&ranks(judge), &ranks(gold)),
        kappa: cohen_kappa(&pass(judge), &pass(gold)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn figures_by_hand() {
        let a = agreement(&[0.9, 0.2, 0.6, 0.4], &[1.0, 0.0, 1.0, 0.0], 0.5).unwrap();
        assert!((a.mae - 0.275).abs() < 1e-12);
        assert!((a.bias - 0.025).abs() < 1e-12);
        // Gold ranks 3.5 1.5 3.5 1.5 vs judge ranks 4 1 3 2: rho = 4 / sqrt(4 * 5).
        assert!((a.spearman.unwrap() - 4.0 / 20f64.sqrt()).abs() < 1e-12);
        assert_eq!(a.kappa, Some(1.0));
    }

    #[test]
    fn kappa_of_chance_agreement() {
        // Observed 0.5; each side passes half: chance 0.5, kappa 0.
        let k = cohen_kappa(&[true, true, false, false], &[true, false, true, false]);
        assert_eq!(k, Some(0.0));
        assert_eq!(cohen_kappa(&[true, true], &[true, true]), None);
    }

    #[test]
    fn constant_side_has_no_correlation_and_bad_input_errors() {
        assert_eq!(spearman(&[1.0, 1.0], &[0.0, 1.0]).unwrap(), None);
        assert!(agreement(&[], &[], 0.5).is_err());
        assert!(agreement(&[1.0], &[1.0, 2.0], 0.5).is_err());
        assert_eq!(
            agreement(&[1.0, f64::NAN], &[1.0, 1.0], 0.5)
                .unwrap_err()
                .row,
            Some(1)
        );
    }
}
