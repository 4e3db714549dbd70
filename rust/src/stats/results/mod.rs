//! Summaries straight from a results file, in any layout the package writes (see `source.rs`): per
//! model, one aggregator per score name, plus run counters and the first scorer error messages.
//!
//! Two streaming passes: the first finds the layout, the header and every score name (so a name first
//! seen late still counts the earlier rows' attempts), the second groups attempts by row (`tally.rs`).
//!
//! Per score name an attempt is scored, failed (the run failed, or no score / `null`: a failed attempt
//! under the aggregator's `FailedPolicy`) or errored (named in `eval_errors`: the scorer raised, so the
//! attempt is in no statistic of that name and is counted as an error).

mod attempt;
pub mod compare;
mod document;
mod fields;
mod intervals;
mod latest;
pub mod model;
mod paired;
mod probes;
mod record_line;
mod schema;
mod source;
mod tally;
mod warnings;

pub use fields::project_object;
pub(crate) use fields::{object_members, Checked};
pub use intervals::model_intervals;
pub(crate) use latest::{blank, head as latest_run_head, LentLines};
pub use latest::{latest_lines, LineReader};
pub use paired::paired_t_differences;
pub(crate) use record_line::Captured;
pub(crate) use source::LineTap;
pub use source::{Layout, Meta};
pub use tally::{Invocation, ModelTally, NameTally, RowCounts, RunCounts};

use crate::error::{CoreError, CoreResult};
use crate::stats::{AggregatorOptions, FailedPolicy};
use attempt::{NewName, RawAttempt, RubricRun};
use std::path::Path;

/// The results log formats this version reads (the header's `format`), newest last.
pub const LOG_FORMATS: &[&str] = &["osmosis-eval-log/1", "osmosis-results/1"];

/// The number a log's `row_index` and `run_index` count from: the header's `index_base` (0 in every
/// log written since it was added); else 1 for a rubric log an earlier version of the package wrote
/// (its header names the `osmosis_version`: those numbered records and runs from 1), else 0 (eval logs,
/// and logs written by hand to the documented layout). Readers subtract it, so every log reads
/// numbered from 0, as eval logs and the established eval `-o` JSON are.
pub fn log_index_base(kind: Option<&str>, declared: Option<u64>, by_package: bool) -> u64 {
    declared.unwrap_or(u64::from(by_package && kind == Some("rubric")))
}

/// What the caller leaves to the file: `None` takes the file's own value (header config, `-o` JSON
/// config or rubric `number`), then the default.
#[derive(Debug, Clone)]
pub struct ResultsOptions {
    pub base: AggregatorOptions,
    pub pass_threshold: Option<f64>,
    pub n_runs: Option<i64>,
    /// `None`: "exclude" for rubric results (an unscored judgement is not a 0), else "zero".
    pub failed: Option<FailedPolicy>,
    /// Build the result model's inputs too: pass@k at every k up to the declared n (unless `ks` are
    /// given) and the observed-only values beside them.
    pub model: bool,
    /// Also each row's statistics per score name (`per_row` of the model): memory grows with the rows.
    pub per_row: bool,
}

impl ResultsOptions {
    /// Everything left to the file, the result model's inputs built (what a reader of a whole run asks).
    pub fn file_model() -> Self {
        Self {
            base: AggregatorOptions::default(),
            pass_threshold: None,
            n_runs: None,
            failed: None,
            model: true,
            per_row: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ResultsSummary {
    pub layout: Layout,
    pub meta: Meta,
    /// The options the file was summarised with, after filling in the file's own values.
    pub options: AggregatorOptions,
    /// Primary model first.
    pub models: Vec<ModelTally>,
    /// By invocation number: the runs each invocation wrote and how long it had run.
    pub invocations: std::collections::BTreeMap<u32, Invocation>,
    /// Runs whose record carries no invocation stamp.
    pub unstamped: u64,
}

fn push_name(names: &mut Vec<String>, name: &str) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_string());
    }
}

/// Pass 1: every score name, in the order first seen.
#[derive(Default)]
struct Names(Vec<String>);

impl source::Sink for Names {
    fn raw(&mut self, attempt: RawAttempt<'_>, _: u64, _: &dyn Fn() -> String) -> CoreResult<bool> {
        for name in attempt.names() {
            push_name(&mut self.0, name);
        }
        Ok(true)
    }

    fn rubric(&mut self, _: RubricRun, _: u64) -> CoreResult<bool> {
        Ok(true)
    }
}

/// Pass 2: attempts resolved against the names and grouped into the tally. With `stop_on_new_name`
/// a name outside the list stops the pass (the single-pass try); otherwise it cannot happen.
struct Grouping<'n> {
    names: &'n [String],
    tally: tally::Tally,
    stop_on_new_name: bool,
}

impl source::Sink for Grouping<'_> {
    fn raw(
        &mut self,
        attempt: RawAttempt<'_>,
        row: u64,
        where_: &dyn Fn() -> String,
    ) -> CoreResult<bool> {
        let keep_key = self.tally.keeps_rows();
        match attempt.resolve(row, self.names, where_, keep_key)? {
            Ok(attempt) => {
                self.tally.add(attempt)?;
                Ok(true)
            }
            Err(NewName) if self.stop_on_new_name => Ok(false),
            Err(NewName) => Err(CoreError::Protocol(format!(
                "{}: a score name appeared that the first pass did not see",
                where_()
            ))),
        }
    }

    fn rubric(&mut self, run: RubricRun, row: u64) -> CoreResult<bool> {
        self.tally.add(run.into_attempt(row))?;
        Ok(true)
    }
}

/// The options after filling in what the caller left to the file, and those of the observed-only
/// aggregators when the result model is built.
fn resolve(
    options: &ResultsOptions,
    meta: &Meta,
) -> (AggregatorOptions, Option<AggregatorOptions>) {
    let mut resolved = resolve_options(options, meta);
    if !options.model {
        return (resolved, None);
    }
    if resolved.ks.is_none() {
        if let Some(n) = resolved.n_runs.filter(|&n| n > 0) {
            resolved.ks = Some(
                model::model_ks(n as u64)
                    .into_iter()
                    .map(|k| k as i64)
                    .collect(),
            );
        }
    }
    let observed = AggregatorOptions {
        n_runs: None,
        keep_rows: false,
        skip_short_rows: true,
        ..resolved.clone()
    };
    (resolved, Some(observed))
}

/// The options after filling in what the caller left to the file.
fn resolve_options(options: &ResultsOptions, meta: &Meta) -> AggregatorOptions {
    let rubric = meta.kind.as_deref() == Some("rubric");
    let mut resolved = options.base.clone();
    resolved.pass_threshold = options
        .pass_threshold
        .or(meta.pass_threshold)
        .unwrap_or(1.0);
    resolved.n_runs = options.n_runs.or(meta.n_runs);
    resolved.failed = options.failed.unwrap_or(if rubric {
        FailedPolicy::Exclude
    } else {
        FailedPolicy::Zero
    });
    resolved
}

/// The threshold of a probe log's findings: its own, else the pass threshold.
fn probe_threshold(meta: &Meta, resolved: &AggregatorOptions) -> f64 {
    meta.probe_threshold.unwrap_or(resolved.pass_threshold)
}

fn summary(
    layout: Layout,
    meta: Meta,
    options: AggregatorOptions,
    tally: tally::Tally,
) -> CoreResult<ResultsSummary> {
    let invocations = tally.invocations.clone();
    let unstamped = tally.unstamped;
    Ok(ResultsSummary {
        layout,
        meta,
        options,
        models: tally.finish()?,
        invocations,
        unstamped,
    })
}

/// Summarises a results file: see the module documentation. `interrupted` is asked now and then
/// during the read; `true` stops it with `CoreError::Interrupted`.
pub fn summarize_results_file(
    path: &Path,
    options: &ResultsOptions,
    interrupted: &mut dyn FnMut() -> bool,
) -> CoreResult<ResultsSummary> {
    summarize_results_file_with(path, options, interrupted, None)
}

/// [`summarize_results_file`], handing `tap` every line of a line layout (log or records) as the pass
/// that completes reads it, with its one parse (a pass that stops early restarts the tap).
pub(crate) fn summarize_results_file_with(
    path: &Path,
    options: &ResultsOptions,
    interrupted: &mut dyn FnMut() -> bool,
    mut tap: Option<&mut dyn LineTap>,
) -> CoreResult<ResultsSummary> {
    let (mut layout, mut meta) = source::detect(path)?;
    // A log whose header declares its score names usually needs one pass: try that first.
    if layout == Layout::Log && !meta.declared.is_empty() {
        let names = meta.declared.clone();
        let (resolved, observed) = resolve(options, &meta);
        let mut grouping = Grouping {
            names: &names,
            tally: tally::Tally::new(names.clone(), resolved.clone(), observed)?
                .probing(&meta.probed, probe_threshold(&meta, &resolved))
                .per_row(options.per_row),
            stop_on_new_name: true,
        };
        let fed = tap.as_mut().map(|tap| &mut **tap as &mut dyn LineTap);
        if source::for_each_line_attempt(
            path,
            layout,
            meta.index_base,
            &mut grouping,
            interrupted,
            fed,
        )? {
            return summary(layout, meta, resolved, grouping.tally);
        }
        if let Some(tap) = tap.as_mut() {
            tap.restart();
        }
    }
    let mut seen = Names::default();
    if matches!(layout, Layout::Log | Layout::Records) {
        source::for_each_line_attempt(path, layout, meta.index_base, &mut seen, interrupted, None)?;
    } else {
        meta = document::for_each_document_attempt(path, &mut seen, interrupted)?;
        if meta.kind.as_deref() == Some("rubric") {
            layout = Layout::RubricJson;
        }
    }
    let mut names = Vec::new();
    for name in meta.declared.iter().chain(&seen.0) {
        push_name(&mut names, name);
    }
    if layout == Layout::RubricJson && names.is_empty() {
        names.push("score".to_string()); // a rubric document without its rubric_id
    }
    let (resolved, observed) = resolve(options, &meta);
    let mut grouping = Grouping {
        names: &names,
        tally: tally::Tally::new(names.clone(), resolved.clone(), observed)?
            .probing(&meta.probed, probe_threshold(&meta, &resolved))
            .per_row(options.per_row),
        stop_on_new_name: false,
    };
    if matches!(layout, Layout::Log | Layout::Records) {
        source::for_each_line_attempt(
            path,
            layout,
            meta.index_base,
            &mut grouping,
            interrupted,
            tap,
        )?;
    } else {
        document::for_each_document_attempt(path, &mut grouping, interrupted)?;
    }
    summary(layout, meta, resolved, grouping.tally)
}

#[cfg(test)]
mod tests;
