//! The result model's JSON form: the types `model.rs` fills in, serialised as they are (schema
//! [`SCHEMA`] version [`SCHEMA_VERSION`]). `osmosis_ai.results` mirrors them field for field.

use super::intervals::Estimate;
use super::probes::FunctionProbes;
use super::warnings::Warning;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

/// The schema name of the model's JSON form.
pub const SCHEMA: &str = "osmosis-result-summary";
/// Its version: a reader refuses a newer one. Fields are only ever added within a version.
pub const SCHEMA_VERSION: u32 = 1;

/// What one run was for one score name: `(JSON key, the word surfaces print)`.
pub const RUN_OUTCOMES: [(&str, &str); 4] = [
    ("errored", "errored"),
    ("unscored", "unscored"),
    ("passed", "passed"),
    ("not_passed", "did not pass"),
];

/// What one row was for one score name, in the order a row is sorted into them.
pub const ROW_OUTCOMES: [(&str, &str); 5] = [
    ("incomplete", "incomplete"),
    ("errored", "errored"),
    ("passed_every_attempt", "passed every attempt"),
    ("passed_some", "passed some"),
    ("passed_none", "passed none"),
];

/// A `{key: value}` JSON object from pairs, in their order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T: Serialize> Serialize for Ordered<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    pub path: String,
    /// "log", "records", "eval-json" or "rubric-json".
    pub layout: &'static str,
    /// The header's kind: "eval", "test", "rubric", "eval-run", "grade", "probe" (None: not said).
    pub kind: Option<String>,
}

/// Runs of one score name by outcome. `errored = errored_run + errored_function`;
/// `finished = scored + unscored + errored + skipped`; `scored = passed + not_passed`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunTally {
    pub planned: Option<u64>,
    pub finished: u64,
    pub missing: Option<u64>,
    pub scored: u64,
    pub passed: u64,
    pub not_passed: u64,
    pub unscored: u64,
    pub errored: u64,
    pub errored_run: u64,
    pub errored_function: u64,
    pub skipped: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowTally {
    pub passed_every_attempt: u64,
    pub passed_some: u64,
    pub passed_none: u64,
    pub errored: u64,
    pub incomplete: u64,
}

/// One row's own statistics for one score name (asked for with `per_row`): its runs by outcome, and
/// mean / variance (population) / std / min / max over its scored runs, None when none was scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowStatistics {
    /// The row, counted from 0.
    pub row: u64,
    pub finished: u64,
    pub scored: u64,
    pub passed: u64,
    pub unscored: u64,
    pub errored: u64,
    pub skipped: u64,
    pub mean: Option<f64>,
    pub variance: Option<f64>,
    pub std: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// One score name (eval function, rubric, grader, reward) of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionResult {
    pub name: String,
    pub runs: RunTally,
    pub rows: RowTally,
    /// Rows where the scorer raised at least once (they are also in `rows`, by category).
    pub rows_with_function_errors: u64,
    /// Scored runs (`eval run`'s metrics name).
    pub graded: u64,
    pub passed: u64,
    /// passed / (runs that count: finished less skipped and scorer errors); None when nothing was
    /// scored.
    pub pass_rate: Option<f64>,
    pub pass_threshold: f64,
    /// Scores in mean / std / min / max (under `failed_policy` "zero" errored and unscored runs are
    /// 0.0 there, the established rule); all four are None when no run was scored.
    pub count: u64,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub variance: Option<f64>,
    pub ks: Vec<u64>,
    /// Missing runs counted as did not pass (rows padded to n). Empty (n/a) when nothing was scored.
    pub pass_at_k: Ordered<f64>,
    pub pass_hat_k: Ordered<f64>,
    /// Per k: the rows in `pass_at_k` (fewer than the rows where scorer errors left a row fewer than k
    /// runs that count: such a row is left out at that k).
    pub pass_at_k_rows: Ordered<u64>,
    /// Over the runs present only: at k, the rows with at least k runs that count.
    pub pass_at_k_observed: Ordered<f64>,
    pub pass_hat_k_observed: Ordered<f64>,
    /// Per k of `ks`: the rows in the observed-only values (0: no row has k runs that count).
    pub observed_rows: Ordered<u64>,
    /// `mean` (t), `pass_at_<k>` and `pass_hat_<k>` (Wilson).
    pub intervals: Ordered<Estimate>,
    /// Share of rows with some but not every run passing.
    pub mixed_fraction: Option<f64>,
    /// The first messages of the scorer's errors.
    pub error_messages: Vec<String>,
    /// Each row's own statistics, by row, when asked for (None otherwise).
    pub per_row: Option<Vec<RowStatistics>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelResult {
    /// "primary", or the compared model's tag ("baseline", ...).
    pub model_tag: String,
    /// Rows with at least one run recorded.
    pub total_rows: u64,
    /// Rows the run set out to do, when known (else the rows recorded).
    pub planned_rows: u64,
    /// Runs recorded.
    pub total_runs: u64,
    pub planned_runs: Option<u64>,
    pub missing_runs: Option<u64>,
    /// Runs that errored themselves (the agent, the provider, a timeout).
    pub failed_runs: u64,
    /// Runs where at least one scorer raised.
    pub eval_error_runs: u64,
    pub total_tokens: u64,
    /// The runs' own durations added up (not wall time: runs overlap).
    pub run_time_ms: f64,
    pub functions: Vec<FunctionResult>,
    /// A probe log's findings per probed function (`reward probe`); empty for any other log.
    pub probes: Vec<FunctionProbes>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvocationResult {
    /// 0 for the invocation that started the log, then one per resume.
    pub index: u32,
    pub runs: u64,
    /// From the invocation's start to its last record.
    pub wall_ms: f64,
    /// The writing process's CPU over the same span (None when not recorded).
    pub cpu_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Durations {
    /// Wall time over every invocation (resumes added up); None when some run has no stamp.
    pub total_duration_ms: Option<f64>,
    pub cpu_ms: Option<f64>,
    /// The runs' own durations added up, over every model.
    pub run_time_ms: f64,
    pub invocations: Vec<InvocationResult>,
    /// Runs recorded without an invocation stamp.
    pub unrecorded_runs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultModel {
    pub schema: &'static str,
    pub version: u32,
    pub source: Source,
    pub config: Option<Value>,
    /// Runs per row the file declares (None: not declared).
    pub n_runs: Option<u64>,
    pub pass_threshold: f64,
    /// "zero" or "exclude": what an errored or unscored run is in mean / std / min / max.
    pub failed_policy: &'static str,
    pub level: f64,
    /// Primary model first.
    pub models: Vec<ModelResult>,
    pub durations: Durations,
    pub warnings: Vec<Warning>,
}
