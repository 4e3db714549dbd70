//! One attempt as every results layout describes it: parsed borrowing from the line ([`RawAttempt`]),
//! then resolved against the score names into a compact [`Attempt`] (a state per name, no strings
//! except scorer error messages).

use crate::stats::StatsError;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// What one attempt says about one score name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Score {
    Scored(f64),
    /// The run finished without a score under this name (`null`, absent, a judge's "unscored"): a
    /// failed attempt for the statistics.
    Unscored,
    /// The run itself errored (`success` false: the agent, the provider, a timeout): a failed attempt.
    RunFailed,
    /// The scorer raised (`eval_errors`): no attempt at all for this name's statistics.
    Errored,
    /// The item was skipped (an `eval run` grader removed the sample): no attempt at all.
    Skipped,
}

impl Score {
    /// How the aggregator sees it: a score, a failed attempt (`Some(None)`), or no attempt (`None`).
    pub(crate) fn attempt(self) -> Option<Option<f64>> {
        match self {
            Score::Scored(x) => Some(Some(x)),
            Score::Unscored | Score::RunFailed => Some(None),
            Score::Errored | Score::Skipped => None,
        }
    }
}

/// When and with what CPU the invocation that wrote a record had got so far (see `runs/log.py`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Stamp {
    pub invocation: u32,
    pub wall_ms: f64,
    pub cpu_ms: Option<f64>,
}

/// A resolved attempt: `scores[i]` is the state of the i-th score name. `tag` "" is the primary model.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    pub tag: String,
    pub row: u64,
    pub run: u64,
    pub success: bool,
    pub scores: Vec<Score>,
    /// (name index, message) of each scorer that raised.
    pub messages: Vec<(usize, String)>,
    pub tokens: u64,
    pub duration_ms: f64,
    /// The record's content key (kept only when rows are kept, for pairing two runs).
    pub row_key: Option<String>,
    /// `None` for records written before invocations were stamped.
    pub stamp: Option<Stamp>,
}

/// Text borrowed from the input when it has no escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// Any JSON value, kept only as far as the statistics care: a number, null, or what else it was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Raw {
    Number(f64),
    Null,
    /// The value's JSON text (strings, booleans) or its kind (arrays, objects), for messages.
    Other(String),
}

impl Raw {
    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Raw::Number(x) => Some(*x),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
                Ok(Raw::Number(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
                Ok(Raw::Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
                Ok(Raw::Number(v as f64))
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
                Ok(Raw::Other(v.to_string()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw::Other(serde_json::Value::from(v).to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Raw::Other("an array".into()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Raw::Other("an object".into()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON object's entries in file order, keys borrowed where possible.
#[derive(Debug, Clone)]
pub(crate) struct Pairs<'a, T>(pub Vec<(Text<'a>, T)>);

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for Pairs<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a, T>(std::marker::PhantomData<(&'a (), T)>);
        impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for V<'a, T> {
            type Value = Pairs<'a, T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Pairs(Vec::new()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<Text<'a>, T>()? {
                    out.push(entry);
                }
                Ok(Pairs(out))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A run as the results log and the eval `-o` JSON write it (other keys are skipped unparsed).
#[derive(Deserialize)]
pub(crate) struct RawAttempt<'a> {
    #[serde(default)]
    pub row_index: Option<u64>,
    pub run_index: u64,
    #[serde(borrow, default)]
    pub model_tag: Option<Text<'a>>,
    #[serde(default)]
    pub success: Option<bool>,
    #[serde(borrow, default)]
    pub scores: Option<Pairs<'a, Raw>>,
    #[serde(borrow, default)]
    pub eval_errors: Option<Pairs<'a, Raw>>,
    #[serde(default)]
    pub tokens: Option<Raw>,
    /// A judged run's tokens (the rubric commands write `usage`, not `tokens`).
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub duration_ms: Option<Raw>,
    #[serde(borrow, default)]
    pub row_key: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub status: Option<Text<'a>>,
    #[serde(default)]
    pub invocation: Option<u32>,
    #[serde(default)]
    pub invocation_ms: Option<f64>,
    #[serde(default)]
    pub invocation_cpu_ms: Option<f64>,
}

/// The token counts of a run's `usage` (other keys are skipped unparsed).
#[derive(Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub total_tokens: Option<Raw>,
}

/// Resolving a raw attempt found a score name outside the list it was resolved against.
pub(crate) struct NewName;

impl RawAttempt<'_> {
    /// Every score and error name the attempt mentions.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        let scores = self.scores.iter().flat_map(|p| p.0.iter());
        let errors = self.eval_errors.iter().flat_map(|p| p.0.iter());
        scores.chain(errors).map(|(name, _)| name.0.as_ref())
    }

    /// What a name without a score of its own is in this record: skipped, errored or unscored.
    fn default_score(&self, success: bool) -> Score {
        match self.status.as_ref().map(|s| s.0.as_ref()) {
            Some("skipped") => Score::Skipped,
            Some("unscored") => Score::Unscored,
            _ if success => Score::Unscored,
            _ => Score::RunFailed,
        }
    }

    /// The compact attempt for `names`; `Ok(Err(NewName))` when it mentions a name not in `names`.
    /// `where_` says where the record is, for the error of a score that is not a number. `keep_key`
    /// keeps the row's content key (for pairing).
    pub(crate) fn resolve(
        self,
        row: u64,
        names: &[String],
        where_: &dyn Fn() -> String,
        keep_key: bool,
    ) -> Result<Result<Attempt, NewName>, StatsError> {
        // The bare layout may leave `success` out: a record without it succeeded.
        let success = self.success.unwrap_or(true);
        let fallback = self.default_score(success);
        let mut scores = vec![fallback; names.len()];
        let position = |name: &str| names.iter().position(|n| n == name);
        for (name, value) in self.scores.map(|p| p.0).unwrap_or_default() {
            let Some(i) = position(&name.0) else {
                return Ok(Err(NewName));
            };
            let score = match value {
                Raw::Number(x) => Score::Scored(x),
                Raw::Null => Score::Unscored,
                Raw::Other(other) => {
                    return Err(StatsError::new(format!(
                        "{}: field 'scores.{}': expected a number or null, got {other}",
                        where_(),
                        name.0
                    ))
                    .field("scores"))
                }
            };
            // A failed or skipped run is that whatever it holds.
            if success && fallback != Score::Skipped {
                scores[i] = score;
            }
        }
        let mut messages = Vec::new();
        for (name, message) in self.eval_errors.map(|p| p.0).unwrap_or_default() {
            let Some(i) = position(&name.0) else {
                return Ok(Err(NewName));
            };
            if success && fallback != Score::Skipped {
                scores[i] = Score::Errored;
                let text = match message {
                    Raw::Other(s) => serde_json::from_str::<String>(&s).unwrap_or(s),
                    Raw::Number(x) => x.to_string(),
                    Raw::Null => "null".to_string(),
                };
                messages.push((i, text));
            }
        }
        Ok(Ok(Attempt {
            tag: match self.model_tag {
                Some(Text(t)) if t != "primary" => t.into_owned(),
                _ => String::new(),
            },
            row,
            run: self.run_index,
            success,
            scores,
            messages,
            tokens: self
                .tokens
                .or(self.usage.and_then(|u| u.total_tokens))
                .and_then(|t| t.number())
                .filter(|t| *t >= 0.0)
                .map_or(0, |t| t as u64),
            duration_ms: self.duration_ms.and_then(|d| d.number()).unwrap_or(0.0),
            row_key: self
                .row_key
                .filter(|_| keep_key)
                .map(|Text(k)| k.into_owned()),
            stamp: match (self.invocation, self.invocation_ms) {
                (Some(invocation), Some(wall_ms)) => Some(Stamp {
                    invocation,
                    wall_ms,
                    cpu_ms: self.invocation_cpu_ms,
                }),
                _ => None,
            },
        }))
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
    pub usage: Option<serde_json::Map<String, serde_json::Value>>,
}

impl RubricRun {
    /// The attempt for a document whose only score name is the rubric's.
    pub(crate) fn into_attempt(self, row: u64) -> Attempt {
        let success = self.status.as_deref() == Some("success") && self.score.is_some();
        let unscored = matches!(self.status.as_deref(), Some("success" | "unscored"));
        let tokens = self
            .usage
            .as_ref()
            .and_then(|u| u.get("total_tokens"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        Attempt {
            tag: String::new(),
            row,
            run: self.run_index,
            success,
            scores: vec![match self.score {
                Some(x) if success => Score::Scored(x),
                _ if unscored => Score::Unscored,
                _ => Score::RunFailed,
            }],
            messages: Vec::new(),
            tokens,
            duration_ms: self.duration_seconds.unwrap_or(0.0) * 1000.0,
            row_key: None,
            stamp: None,
        }
    }
}
