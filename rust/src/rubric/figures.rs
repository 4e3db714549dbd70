//! The figures of `eval rubric`'s records as its Python writer counts them: each record's statistics
//! (`osmosis_ai.rubric.engine.calculate_statistics`) and the judge health of the runs
//! (`JudgeHealth.add`).

use super::console::Statistics;
use crate::atif::json_tree::{Json, Obj};
use crate::stats::{Aggregator, AggregatorOptions, FailedPolicy, NonFinitePolicy};

/// `osmosis_ai.rubric.engine.JudgeHealth`'s counts of the runs written (`usage` as its three tokens).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    pub runs: i64,
    pub successes: i64,
    pub unscored: i64,
    pub errors: i64,
    pub clamps: i64,
    pub parse_failures: i64,
    pub retries: i64,
    pub attempts: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub total_tokens: i64,
}

/// `JudgeHealth.add(run)`; None where Python's arithmetic would not be plain integers.
pub fn count(health: &mut Health, run: &Obj<'_>) -> Option<()> {
    let status = run.get("status")?.as_str();
    health.runs += 1;
    health.successes += i64::from(status == Some("success"));
    health.unscored += i64::from(status == Some("unscored"));
    health.errors += i64::from(status == Some("error"));
    health.clamps += i64::from(run.get("clamped")?.truthy());
    // int(run.get(name) or 0)
    let int_or_zero = |name: &str| -> Option<i64> {
        let value = run.get(name)?;
        if !value.truthy() {
            return Some(0);
        }
        value.as_i64()
    };
    health.parse_failures += int_or_zero("parse_failures")?;
    health.retries += int_or_zero("retries")?;
    health.attempts += int_or_zero("attempts")?;
    let usage = run.get("usage")?;
    if usage.truthy() {
        // usage.get(name, 0) added as they are; a null total is prompt + completion.
        let usage = usage.as_object()?;
        let get = |name: &str| -> Option<Option<i64>> {
            match usage.get(name) {
                None => Some(Some(0)),
                Some(value) if value.is_null() => Some(None),
                Some(value) => value.as_i64().map(Some),
            }
        };
        let (prompt, completion) = (get("prompt_tokens")??, get("completion_tokens")??);
        health.prompt_tokens += prompt;
        health.completion_tokens += completion;
        health.total_tokens += get("total_tokens")?.unwrap_or(prompt + completion);
    }
    Some(())
}

/// `score_moments(scores)`: `(mean, variance, std, min, max)` by the aggregator Python asks (one score
/// without it, as Python's shortcut), `Some(None)` without a score; None when the aggregator refuses.
pub fn moments(scores: &[f64]) -> Option<Option<[f64; 5]>> {
    match scores {
        [] => Some(None),
        [score] if score.is_finite() => Some(Some([*score, 0.0, 0.0, *score, *score])),
        _ => {
            let options = AggregatorOptions {
                pass_threshold: 1.0,
                extra_thresholds: Vec::new(),
                ks: Some(vec![1]),
                n_runs: None,
                failed: FailedPolicy::Exclude,
                nonfinite: NonFinitePolicy::Error,
                keep_rows: false,
                skip_short_rows: false,
            };
            let mut aggregator = Aggregator::new(options).ok()?;
            for &score in scores {
                let label = aggregator.next_label();
                aggregator.push_row([Some(score)], label).ok()?;
            }
            let s = aggregator.finish().ok()?;
            Some(Some([s.mean?, s.variance?, s.std?, s.min?, s.max?]))
        }
    }
}

/// `established_statistics(...)` as the document writes it.
pub fn statistics(stats: &Statistics) -> Json<'static> {
    let mut obj = Obj::new();
    let names = ["average", "variance", "stdev", "min", "max"];
    for (i, name) in names.iter().enumerate() {
        obj.push(
            *name,
            stats.moments.map_or(Json::Null, |m| Json::Float(m[i])),
        );
    }
    let counts = [
        ("total_runs", stats.total_runs),
        ("success_count", stats.success_count),
        ("failure_count", stats.failure_count()),
        ("unscored_count", stats.unscored_count),
    ];
    for (name, value) in counts {
        obj.push(name, Json::Int(value as i64));
    }
    Json::Object(obj)
}
