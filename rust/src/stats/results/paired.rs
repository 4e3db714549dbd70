//! The statistics of a comparison: each paired difference with its interval and p-value, the
//! first-run flips for McNemar, and the verdicts.

use super::compare::{CompareOptions, Difference, Flips, Verdict, MIN_BOOTSTRAP_ROWS};
use super::model::Ordered;
use crate::stats::{
    paired_difference, t_quantile, t_two_sided_p, Aggregator, Bootstrap, IntervalColumns,
    StatsError,
};
use std::collections::HashMap;

pub(super) fn flips(
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

/// Why a side gives no value on these rows, or `None` when both do: nothing of a side scored (its
/// failed runs count 0.0 in its mean, which is no score).
fn unscored_note(a: &IntervalColumns, b: &IntervalColumns, rows: usize) -> Option<String> {
    let who = match (a.scored == 0, b.scored == 0) {
        (true, true) => "neither A nor B",
        (true, false) => "A",
        (false, true) => "B",
        (false, false) => return None,
    };
    Some(format!(
        "{who} has no scored run on the {rows} matched rows (every run errored or recorded no score): no difference"
    ))
}

/// The paired difference `B - A` of column `j`, with its t interval and p-value. The interval is
/// kept inside what the difference can be ([-1, 1] when both sides' rows lie in [0, 1]): a t interval on
/// a few rows reaches past it. The p-value is the t-test's; neither moves a verdict (a bound cut at -1 or
/// 1 keeps its side of 0). A side with nothing scored has no value and the difference none (null, never 0).
pub(super) fn t_difference(
    a: &IntervalColumns,
    b: &IntervalColumns,
    j: usize,
    level: f64,
) -> Difference {
    let (wa, wb) = (a.weights[j].as_deref(), b.weights[j].as_deref());
    let rows = a.values[j].len();
    let ratio = |c: &IntervalColumns, w: Option<&[f64]>| {
        let value = c.values[j].iter().sum::<f64>() / w.map_or(rows as f64, |w| w.iter().sum());
        (c.scored > 0 && value.is_finite()).then_some(value)
    };
    let (va, vb) = (ratio(a, wa), ratio(b, wb));
    let mut out = Difference {
        estimate: va.zip(vb).map(|(va, vb)| vb - va),
        a: va,
        b: vb,
        low: None,
        high: None,
        level,
        method: "t",
        p_value: None,
        p_holm: None,
        verdict: "no_clear_difference",
        note: unscored_note(a, b, rows),
    };
    if out.note.is_some() {
        return out;
    }
    if out.estimate.is_none() {
        let who = if va.is_none() { "A" } else { "B" };
        out.note = Some(format!(
            "{who} has no matched row with enough runs that count for this statistic: no value"
        ));
        return out;
    }
    let Some(paired) = paired_difference(&b.values[j], wb, &a.values[j], wa) else {
        out.note = Some(format!(
            "{rows} matched rows with scores on both sides: no interval"
        ));
        return out;
    };
    let se = paired.se;
    if se.is_nan() || se <= 1e-12 * paired.estimate.abs().max(1.0) {
        out.note = Some(format!(
            "the {rows} matched rows all differ by the same amount: no spread to estimate an interval from"
        ));
        return out;
    }
    let df = paired.rows as f64 - 1.0;
    let interval = paired.interval(t_quantile(0.5 + level / 2.0, df));
    out.low = Some(interval.low);
    out.high = Some(interval.high);
    out.p_value = Some(t_two_sided_p(paired.estimate / se, df));
    out
}

/// Every paired difference `B - A` of two aggregators (Student t, as a comparison's) over the rows both
/// hold, matched by row label: the mean and pass@k / pass^k at `ks`. A subset of a comparison's rows (a
/// group) is described by these: no Holm adjustment and no verdict (`p_holm` None), as nothing is
/// tested.
pub fn paired_t_differences(
    a: &Aggregator,
    b: &Aggregator,
    ks: &[u64],
    level: f64,
) -> Result<Ordered<Difference>, StatsError> {
    let (ca, cb) = a.paired_columns(b, ks)?;
    Ok(Ordered(
        (0..ca.names.len())
            .map(|j| (ca.names[j].clone(), t_difference(&ca, &cb, j, level)))
            .collect(),
    ))
}

pub(super) fn bootstrap_bounds(
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
        if rows < MIN_BOOTSTRAP_ROWS && d.estimate.is_some() {
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
        if d.estimate.is_none() {
            continue; // nothing of a side scored: its note says so, and no resample changes that
        }
        match iv {
            Some(iv) if iv.high - iv.low > 1e-12 => (d.low, d.high) = (Some(iv.low), Some(iv.high)),
            _ => {
                d.note = Some("every resample gave the same difference: no spread to estimate an interval from".into());
            }
        }
    }
}

/// Sets each difference's verdict; returns the verdict of `primary`.
pub(super) fn verdicts(
    differences: &mut Ordered<Difference>,
    flips: Flips,
    mcnemar_p: Option<f64>,
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

fn verdict_of(
    d: &Difference,
    flips: Flips,
    mcnemar_p: Option<f64>,
    alpha: f64,
) -> (&'static str, String) {
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
    let Some(mcnemar_p) = mcnemar_p else {
        return (
            "no_clear_difference",
            "McNemar's test has no matched row whose first run counts on both sides".into(),
        );
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
