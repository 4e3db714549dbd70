//! One attempt as every results layout describes it, normalised: which model and row it belongs to,
//! whether the run succeeded, each score, and each scorer that raised.

use crate::stats::StatsError;
use serde::Deserialize;
use serde_json::{Map, Value};

/// What one attempt says about one score name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Score {
    Scored(f64),
    /// The run failed, or it has no score under this name: a failed attempt.
    Failed,
    /// The scorer raised (`eval_errors`): no attempt at all for this name's statistics.
    Errored,
}

/// A normalised attempt. `tag` is "" for the primary model.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attempt {
    pub tag: String,
    pub row: u64,
    pub run: u64,
    pub success: bool,
    pub scores: Vec<(String, Option<f64>)>,
    pub eval_errors: Vec<(String, String)>,
    pub tokens: u64,
    pub duration_ms: f64,
}

impl Attempt {
    /// The attempt's score for `name` (see [`Score`]): a failed run is failed whatever it holds.
    pub(crate) fn score(&self, name: &str) -> Score {
        if !self.success {
            return Score::Failed;
        }
        if self.eval_errors.iter().any(|(n, _)| n == name) {
            return Score::Errored;
        }
        match self.scores.iter().find(|(n, _)| n == name) {
            Some((_, Some(x))) => Score::Scored(*x),
            _ => Score::Failed,
        }
    }

    /// Every score and error name the attempt mentions.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.scores
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.eval_errors.iter().map(|(n, _)| n.as_str()))
    }
}

/// "" and "primary" both name the primary model (the log writes "", the `-o` JSON "primary").
pub(crate) fn canonical_tag(tag: Option<String>) -> String {
    match tag {
        Some(t) if t != "primary" => t,
        _ => String::new(),
    }
}

/// A run as the results log and the eval `-o` JSON write it (other keys are ignored).
#[derive(Deserialize)]
pub(crate) struct RunRecord {
    #[serde(default)]
    pub row_index: Option<u64>,
    pub run_index: u64,
    #[serde(default)]
    pub model_tag: Option<String>,
    #[serde(default)]
    pub success: Option<bool>,
    #[serde(default)]
    pub scores: Option<Map<String, Value>>,
    #[serde(default)]
    pub eval_errors: Option<Map<String, Value>>,
    #[serde(default)]
    pub tokens: Option<Value>,
    #[serde(default)]
    pub duration_ms: Option<Value>,
}

impl RunRecord {
    /// The attempt, or an error naming the offending score (`where_` says where the record is).
    pub(crate) fn into_attempt(
        self,
        row: u64,
        where_: &dyn Fn() -> String,
    ) -> Result<Attempt, StatsError> {
        let mut scores = Vec::new();
        for (name, value) in self.scores.unwrap_or_default() {
            let score = match value {
                Value::Null => None,
                Value::Number(n) => n.as_f64(),
                other => {
                    return Err(StatsError::new(format!(
                        "{}: field 'scores.{name}': expected a number or null, got {other}",
                        where_()
                    ))
                    .field("scores"))
                }
            };
            scores.push((name, score));
        }
        let eval_errors = self
            .eval_errors
            .unwrap_or_default()
            .into_iter()
            .map(|(name, message)| {
                let text = match message {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (name, text)
            })
            .collect();
        Ok(Attempt {
            tag: canonical_tag(self.model_tag),
            row,
            run: self.run_index,
            // The bare layout may leave `success` out: a record without it succeeded.
            success: self.success.unwrap_or(true),
            scores,
            eval_errors,
            tokens: self.tokens.as_ref().and_then(Value::as_u64).unwrap_or(0),
            duration_ms: self
                .duration_ms
                .as_ref()
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
        })
    }
}

/// A judged run of the eval-rubric `-o` JSON: `status` "success" with a `score`, else not scored.
#[derive(Deserialize)]
pub(crate) struct RubricRun {
    pub run_index: u64,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub score: Option<f64>,
    #[serde(default)]
    pub duration_seconds: Option<f64>,
    #[serde(default)]
    pub usage: Option<Map<String, Value>>,
}

impl RubricRun {
    pub(crate) fn into_attempt(self, row: u64, name: &str) -> Attempt {
        let success = self.status.as_deref() == Some("success") && self.score.is_some();
        let tokens = self
            .usage
            .as_ref()
            .and_then(|u| u.get("total_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Attempt {
            tag: String::new(),
            row,
            run: self.run_index,
            success,
            scores: vec![(name.to_string(), self.score.filter(|_| success))],
            eval_errors: Vec::new(),
            tokens,
            duration_ms: self.duration_seconds.unwrap_or(0.0) * 1000.0,
        }
    }
}
