//! The one result model: everything a surface shows about a results file, computed once from its
//! summary (`ResultsSummary`, read with `ResultsOptions::model`) into the types of `schema.rs`.
//!
//! Vocabulary (one meaning per word, see [`RUN_OUTCOMES`] and [`ROW_OUTCOMES`]): a run *errored* (the
//! run itself, or the scorer raised: no score), was *unscored* (finished without a score), *passed*
//! (score >= the pass threshold) or *did not pass*. A row *passed every attempt*, *some* or *none*,
//! or is *errored* (a run errored) or *incomplete* (fewer runs recorded than the declared n).

use super::intervals::model_intervals;
pub use super::schema::{
    Durations, FunctionResult, InvocationResult, ModelResult, Ordered, ResultModel, RowTally,
    RunTally, Source, ROW_OUTCOMES, RUN_OUTCOMES, SCHEMA, SCHEMA_VERSION,
};
use super::warnings::{self, Warning};
use super::{Invocation, Layout, ModelTally, NameTally, ResultsSummary, RowCounts, RunCounts};
use crate::stats::{FailedPolicy, StatsError, Summary, DEFAULT_KS};

/// At most this many k values: past it they are spaced geometrically (1 and n always in).
const MAX_KS: u64 = 20;

/// The k values of the model for `n` runs per row: every k up to n, or, above 20, 20 geometrically
/// spaced ones plus the k values the established outputs name (eval's `-o`: 1, 3, 5, 10; `eval
/// run`'s metrics: the powers of two), so every surface renders its keys from the model.
pub fn model_ks(n: u64) -> Vec<u64> {
    if n <= MAX_KS {
        return (1..=n).collect();
    }
    let step = (n as f64).powf(1.0 / (MAX_KS - 1) as f64);
    let powers_of_two = (0..u64::BITS).map(|i| 1u64 << i).take_while(|&k| k <= n);
    let mut ks: Vec<u64> = (0..MAX_KS)
        .map(|i| (step.powi(i as i32).round() as u64).clamp(1, n))
        .chain([1, n])
        .chain(DEFAULT_KS.into_iter().filter(|&k| k <= n))
        .chain(powers_of_two)
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

fn by_k<T: Copy>(ks: &[u64], values: &[T]) -> Ordered<T> {
    Ordered(
        ks.iter()
            .map(|k| k.to_string())
            .zip(values.iter().copied())
            .collect(),
    )
}

fn policy_name(policy: FailedPolicy) -> &'static str {
    match policy {
        FailedPolicy::Zero => "zero",
        FailedPolicy::Exclude => "exclude",
    }
}

/// What one model's runs leave unknown: rows never started, and runs short of n in started rows.
struct Plan {
    n: Option<u64>,
    planned_rows: u64,
    unstarted_rows: u64,
}

impl Plan {
    fn runs(&self) -> Option<u64> {
        self.n.map(|n| n * self.planned_rows)
    }

    fn missing(&self, model: &ModelTally) -> Option<u64> {
        self.n
            .map(|n| model.missing_in_rows + self.unstarted_rows * n)
    }
}

fn run_tally(counts: &RunCounts, plan: &Plan, model: &ModelTally) -> RunTally {
    RunTally {
        planned: plan.runs(),
        finished: counts.finished,
        missing: plan.missing(model),
        scored: counts.scored,
        passed: counts.passed,
        not_passed: counts.scored - counts.passed,
        unscored: counts.unscored,
        errored: counts.errored_run + counts.errored_function,
        errored_run: counts.errored_run,
        errored_function: counts.errored_function,
        skipped: counts.skipped,
    }
}

fn row_tally(rows: &RowCounts, plan: &Plan) -> RowTally {
    RowTally {
        passed_every_attempt: rows.passed_every_attempt,
        passed_some: rows.passed_some,
        passed_none: rows.passed_none,
        errored: rows.errored,
        incomplete: rows.incomplete + plan.unstarted_rows,
    }
}

fn function_result(
    mut tally: NameTally,
    plan: &Plan,
    model: &ModelTally,
    level: f64,
) -> Result<FunctionResult, StatsError> {
    // Rows that never started are n runs that did not pass, as the runs missing from started rows.
    if plan.n.is_some() {
        for i in 0..plan.unstarted_rows {
            tally
                .aggregator
                .push_row(std::iter::empty(), u64::MAX - i)?;
        }
    }
    let s: Summary = tally.aggregator.finish()?;
    let observed = match &tally.observed {
        Some(a) => a.finish()?,
        None => s.clone(),
    };
    let spread = tally.aggregator.spread();
    let intervals = model_intervals(&spread, level);
    let runs = run_tally(&tally.runs, plan, model);
    let counting = runs.finished - runs.skipped - runs.errored_function;
    let scored = runs.scored > 0;
    Ok(FunctionResult {
        rows: row_tally(&tally.rows, plan),
        rows_with_function_errors: tally.rows.with_function_errors,
        graded: runs.scored,
        passed: runs.passed,
        pass_rate: (scored && counting > 0).then(|| runs.passed as f64 / counting as f64),
        pass_threshold: s.pass_threshold,
        count: s.count,
        // Under the "zero" policy errored runs are 0.0 scores; with no real score that is no mean.
        mean: s.mean.filter(|_| scored),
        std: s.std.filter(|_| scored),
        min: s.min.filter(|_| scored),
        max: s.max.filter(|_| scored),
        variance: s.variance.filter(|_| scored),
        // Nothing scored: no pass rate at all (n/a), not a 0 made of errors.
        pass_at_k: by_k(&s.ks, if scored { &s.pass_at_k } else { &[] }),
        pass_hat_k: by_k(&s.ks, if scored { &s.pass_hat_k } else { &[] }),
        pass_at_k_rows: by_k(&s.ks, &s.pass_rows),
        pass_at_k_observed: by_k(&observed.ks, if scored { &observed.pass_at_k } else { &[] }),
        pass_hat_k_observed: by_k(
            &observed.ks,
            if scored { &observed.pass_hat_k } else { &[] },
        ),
        // Every k of the model, 0 where no row has k runs that count (that k has no observed value).
        observed_rows: Ordered(
            s.ks.iter()
                .map(|k| {
                    let at = observed.ks.iter().position(|o| o == k);
                    (k.to_string(), at.map_or(0, |i| observed.pass_rows[i]))
                })
                .collect(),
        ),
        ks: s.ks,
        intervals: Ordered(if scored { intervals } else { Vec::new() }),
        mixed_fraction: s.mixed_fraction.first().map(|m| m.1).filter(|_| s.rows > 0),
        error_messages: tally.messages,
        per_row: tally.per_row.map(|mut rows| {
            rows.sort_by_key(|r| r.row);
            rows
        }),
        name: tally.name,
        runs,
    })
}

fn model_warnings(model: &ModelResult, plan: &Plan, short_rows: u64, out: &mut Vec<Warning>) {
    let tag = model.model_tag.as_str();
    if let (Some(missing), Some(planned), Some(n)) =
        (model.missing_runs, model.planned_runs, plan.n)
    {
        if missing > 0 {
            let rows = warnings::ShortRows {
                unstarted: plan.unstarted_rows,
                short: short_rows,
            };
            out.push(warnings::incomplete(tag, missing, planned, rows, n));
        }
    }
    if model.failed_runs > 0 {
        out.push(warnings::run_errors(
            tag,
            model.failed_runs,
            model.total_runs,
        ));
    }
    for f in &model.functions {
        if f.runs.scored == 0 && f.runs.finished > 0 {
            out.push(warnings::nothing_scored(
                tag,
                &f.name,
                f.runs.errored,
                f.runs.unscored,
            ));
        }
        if f.runs.errored_function > 0 {
            out.push(warnings::function_errors(
                tag,
                &f.name,
                f.runs.errored_function,
                f.rows_with_function_errors,
            ));
        }
    }
}

fn durations(
    invocations: &std::collections::BTreeMap<u32, Invocation>,
    unstamped: u64,
    run_time_ms: f64,
) -> Durations {
    let list: Vec<InvocationResult> = invocations
        .iter()
        .map(|(&index, inv)| InvocationResult {
            index,
            runs: inv.runs,
            wall_ms: inv.wall_ms,
            cpu_ms: inv.cpu_ms,
        })
        .collect();
    let known = unstamped == 0 && !list.is_empty();
    let cpu: Option<f64> = list.iter().map(|i| i.cpu_ms).sum();
    Durations {
        total_duration_ms: known.then(|| list.iter().map(|i| i.wall_ms).sum()),
        cpu_ms: cpu.filter(|_| known),
        run_time_ms,
        invocations: list,
        unrecorded_runs: unstamped,
    }
}

/// Builds the model from a summary read with `ResultsOptions::model`; `level` is the intervals'.
pub fn build(summary: ResultsSummary, path: &str, level: f64) -> Result<ResultModel, StatsError> {
    if !(level > 0.0 && level < 1.0) {
        return Err(
            StatsError::new(format!("level must be between 0 and 1, got {level}")).field("level"),
        );
    }
    let n = summary.options.n_runs.filter(|&n| n > 0).map(|n| n as u64);
    let mut warnings_out = Vec::new();
    let mut models = Vec::new();
    let mut run_time_ms = 0.0;
    let mut fewest = u64::MAX;
    for mut tally in summary.models {
        let planned_rows = tally.rows.max(summary.meta.planned_rows.unwrap_or(0));
        let plan = Plan {
            n,
            planned_rows,
            unstarted_rows: planned_rows - tally.rows,
        };
        let names = std::mem::take(&mut tally.names);
        let mut functions = Vec::with_capacity(names.len());
        for name in names {
            fewest = fewest.min(name.aggregator.finish()?.min_attempts);
            functions.push(function_result(name, &plan, &tally, level)?);
        }
        run_time_ms += tally.duration_ms;
        let model = ModelResult {
            model_tag: if tally.tag.is_empty() {
                "primary".into()
            } else {
                tally.tag.clone()
            },
            total_rows: tally.rows,
            planned_rows,
            total_runs: tally.runs,
            planned_runs: plan.runs(),
            missing_runs: plan.missing(&tally),
            failed_runs: tally.failed,
            eval_error_runs: tally.eval_error_runs,
            total_tokens: tally.tokens,
            run_time_ms: tally.duration_ms,
            functions,
            probes: tally.probes.take().map(|p| p.finish()).unwrap_or_default(),
        };
        model_warnings(&model, &plan, tally.short_rows, &mut warnings_out);
        models.push(model);
    }
    let planned_rows = summary.meta.planned_rows.unwrap_or(0);
    if let (true, Some(n), true) = (models.is_empty(), n, planned_rows > 0) {
        // Stopped before any run finished: every planned run is missing, and the warning says so.
        let rows = warnings::ShortRows {
            unstarted: planned_rows,
            short: 0,
        };
        warnings_out.push(warnings::incomplete(
            "primary",
            n * planned_rows,
            n * planned_rows,
            rows,
            n,
        ));
    }
    let mut out = Vec::new();
    if n.is_none() && !models.is_empty() {
        out.push(warnings::n_undeclared(if fewest == u64::MAX {
            0
        } else {
            fewest
        }));
    }
    if summary.unstamped > 0 {
        out.push(warnings::durations_unrecorded(summary.unstamped));
    }
    out.extend(warnings_out);
    Ok(ResultModel {
        schema: SCHEMA,
        version: SCHEMA_VERSION,
        source: Source {
            path: path.to_string(),
            layout: summary.layout.name(),
            kind: summary
                .meta
                .kind
                .clone()
                .or_else(|| (summary.layout == Layout::EvalJson).then(|| "eval".to_string())),
        },
        config: summary.meta.config,
        n_runs: n,
        pass_threshold: summary.options.pass_threshold,
        failed_policy: policy_name(summary.options.failed),
        level,
        models,
        durations: durations(&summary.invocations, summary.unstamped, run_time_ms),
        warnings: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_cover_every_k_up_to_twenty_then_thin_out() {
        assert_eq!(model_ks(1), vec![1]);
        assert_eq!(model_ks(4), vec![1, 2, 3, 4]);
        let many = model_ks(1000);
        assert!(many.len() <= 20 + 4 + 10 && many[0] == 1 && *many.last().unwrap() == 1000);
        for k in [2, 3, 4, 5, 8, 10, 16, 512] {
            assert!(many.contains(&k), "k = {k}: an established key");
        }
        assert!(many.windows(2).all(|w| w[0] < w[1]));
    }
}
