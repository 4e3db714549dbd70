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
mod source;
mod tally;

pub use source::{Layout, Meta};
pub use tally::{ModelTally, NameTally};

use crate::error::CoreResult;
use crate::stats::{AggregatorOptions, FailedPolicy};
use std::path::Path;

/// The results log formats this version reads (the header's `format`), newest last.
pub const LOG_FORMATS: &[&str] = &["osmosis-eval-log/1", "osmosis-results/1"];

/// What the caller leaves to the file: `None` takes the file's own value (header config, `-o` JSON
/// config or rubric `number`), then the default.
#[derive(Debug, Clone)]
pub struct ResultsOptions {
    pub base: AggregatorOptions,
    pub pass_threshold: Option<f64>,
    pub n_runs: Option<i64>,
    /// `None`: "exclude" for rubric results (an unscored judgement is not a 0), else "zero".
    pub failed: Option<FailedPolicy>,
}

#[derive(Debug, Clone)]
pub struct ResultsSummary {
    pub layout: Layout,
    pub meta: Meta,
    /// The options the file was summarised with, after filling in the file's own values.
    pub options: AggregatorOptions,
    /// Primary model first.
    pub models: Vec<ModelTally>,
}

fn push_name(names: &mut Vec<String>, name: &str) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_string());
    }
}

/// Summarises a results file: see the module documentation.
pub fn summarize_results_file(path: &Path, options: &ResultsOptions) -> CoreResult<ResultsSummary> {
    let (mut layout, mut meta) = source::detect(path)?;
    let mut names: Vec<String> = Vec::new();
    let mut collect = |attempt: attempt::Attempt| -> CoreResult<()> {
        for name in attempt.names() {
            push_name(&mut names, name);
        }
        Ok(())
    };
    if matches!(layout, Layout::Log | Layout::Records) {
        source::for_each_line_attempt(path, layout, &mut collect)?;
    } else {
        meta = source::for_each_document_attempt(path, None, &mut collect)?;
        if meta.kind.as_deref() == Some("rubric") {
            layout = Layout::RubricJson;
        }
    }
    let mut ordered = Vec::new();
    for name in meta.declared.iter().chain(&names) {
        push_name(&mut ordered, name);
    }
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
    let mut tally = tally::Tally::new(ordered, resolved.clone())?;
    let mut add = |attempt: attempt::Attempt| -> CoreResult<()> { Ok(tally.add(attempt)?) };
    if matches!(layout, Layout::Log | Layout::Records) {
        source::for_each_line_attempt(path, layout, &mut add)?;
    } else {
        let rubric_name = meta.declared.first().cloned();
        source::for_each_document_attempt(path, rubric_name, &mut add)?;
    }
    Ok(ResultsSummary {
        layout,
        meta,
        options: resolved,
        models: tally.finish()?,
    })
}

#[cfg(test)]
mod tests;
