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

/// `total += n` as Python's integers add; None past an `i64` (the caller hands the file back then).
fn add(total: &mut i64, n: i64) -> Option<()> {
    *total = total.checked_add(n)?;
    Some(())
}

/// `JudgeHealth.add(run)`; None where Python's arithmetic would not be plain `i64` integers.
pub fn count(health: &mut Health, run: &Obj<'_>) -> Option<()> {
    let status = run.get("status")?.as_str();
    add(&mut health.runs, 1)?;
    add(&mut health.successes, i64::from(status == Some("success")))?;
    add(&mut health.unscored, i64::from(status == Some("unscored")))?;
    add(&mut health.errors, i64::from(status == Some("error")))?;
    add(&mut health.clamps, i64::from(run.get("clamped")?.truthy()))?;
    // int(run.get(name) or 0)
    let int_or_zero = |name: &str| -> Option<i64> {
        let value = run.get(name)?;
        if !value.truthy() {
            return Some(0);
        }
        value.as_i64()
    };
    add(&mut health.parse_failures, int_or_zero("parse_failures")?)?;
    add(&mut health.retries, int_or_zero("retries")?)?;
    add(&mut health.attempts, int_or_zero("attempts")?)?;
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
        add(&mut health.prompt_tokens, prompt)?;
        add(&mut health.completion_tokens, completion)?;
        let total = match get("total_tokens")? {
            Some(total) => total,
            None => prompt.checked_add(completion)?,
        };
        add(&mut health.total_tokens, total)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A run as the layout builds it: every field present (null when the log has none).
    fn counted(health: &mut Health, attempts: &str, usage: &str) -> Option<()> {
        let run = format!(
            r#"{{"status":"success","clamped":false,"parse_failures":null,"retries":null,"attempts":{attempts},"usage":{usage}}}"#
        );
        let run = Json::parse(&run).unwrap();
        count(health, run.as_object().unwrap())
    }

    #[test]
    fn sums_past_an_i64_are_handed_back_not_wrapped() {
        let mut health = Health::default();
        let big = i64::MAX.to_string();
        assert_eq!(counted(&mut health, &big, "null"), Some(()));
        assert_eq!(health.attempts, i64::MAX);
        assert_eq!(counted(&mut health, &big, "null"), None);
        // a null total is prompt + completion, which must fit too
        let usage =
            format!(r#"{{"prompt_tokens":{big},"completion_tokens":1,"total_tokens":null}}"#);
        assert_eq!(counted(&mut Health::default(), "1", &usage), None);
        let usage = r#"{"prompt_tokens":2,"completion_tokens":1,"total_tokens":null}"#;
        let mut health = Health::default();
        assert_eq!(counted(&mut health, "1", usage), Some(()));
        assert_eq!(health.total_tokens, 3);
    }
}
