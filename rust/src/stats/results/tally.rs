//! Attempts → one aggregator per (model, score name), grouping attempts by row whatever their order.
//!
//! A row leaves memory as soon as it has `n_runs` attempts; rows that never get there are added at the
//! end in the order they first appeared. A later attempt for the same `(model, row, run)` replaces the
//! earlier one (a resumed run that re-wrote an attempt), and is counted once.

use super::attempt::{Attempt, Score, Stamp};
use super::probes::ProbeTally;
use super::schema::RowStatistics;
use crate::stats::FailedPolicy;
use crate::stats::{Aggregator, AggregatorOptions, StatsError};
use std::collections::{BTreeMap, HashMap};

/// How many scorer error messages are kept per score name.
pub const KEPT_MESSAGES: usize = 3;

/// What the runs of one score name were (see the vocabulary in `model.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCounts {
    /// Runs recorded (a run re-written by a resume counts once).
    pub finished: u64,
    pub scored: u64,
    /// Scored at or above the pass threshold.
    pub passed: u64,
    pub unscored: u64,
    /// The run itself errored (agent, provider, timeout): no score.
    pub errored_run: u64,
    /// The scorer raised: no score.
    pub errored_function: u64,
    pub skipped: u64,
}

/// Rows by what their attempts did; every row is in exactly one category, tested in this order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowCounts {
    /// Fewer runs recorded than the declared n.
    pub incomplete: u64,
    /// At least one run errored (the run or the scorer).
    pub errored: u64,
    pub passed_every_attempt: u64,
    pub passed_some: u64,
    pub passed_none: u64,
    /// Rows where the scorer raised at least once (whatever their category).
    pub with_function_errors: u64,
}

/// The summary inputs of one score name of one model.
#[derive(Debug, Clone)]
pub struct NameTally {
    pub name: String,
    pub aggregator: Aggregator,
    /// The first messages of the scorer's errors, in file order.
    pub messages: Vec<String>,
    /// pass@k over the attempts present only (no padding): `Some` for the result model.
    pub observed: Option<Aggregator>,
    pub runs: RunCounts,
    pub rows: RowCounts,
    /// With kept rows: per row label, whether its first attempt (run 0) passed (`None`: no score).
    pub first_attempt: HashMap<u64, Option<bool>>,
    /// When asked for: each row's own statistics, in the order rows completed.
    pub per_row: Option<Vec<RowStatistics>>,
}

/// The runs one invocation of a command wrote, and how far its clocks had got.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Invocation {
    pub runs: u64,
    pub wall_ms: f64,
    /// `None` when a record of it did not say.
    pub cpu_ms: Option<f64>,
}

/// Everything summarised about one model (`tag` "" is the primary model).
#[derive(Debug, Clone)]
pub struct ModelTally {
    pub tag: String,
    pub rows: u64,
    pub runs: u64,
    /// Runs that failed (success false).
    pub failed: u64,
    /// Runs where at least one scorer raised.
    pub eval_error_runs: u64,
    pub tokens: u64,
    pub duration_ms: f64,
    pub names: Vec<NameTally>,
    /// With kept rows: each row label's content key, when the records carry one.
    pub row_keys: HashMap<u64, String>,
    /// Rows with fewer runs recorded than the declared n, and the runs they lack.
    pub short_rows: u64,
    pub missing_in_rows: u64,
    /// A probe log's findings (see `probes.rs`).
    pub probes: Option<ProbeTally>,
}

struct PendingRow {
    /// When the row was first seen, for the end-of-file order.
    seq: u64,
    runs: BTreeMap<u64, Attempt>,
}

struct Model {
    tally: ModelTally,
    pending: HashMap<u64, PendingRow>,
    /// seq → row, for the rows still pending.
    order: BTreeMap<u64, u64>,
}

pub struct Tally {
    names: Vec<String>,
    options: AggregatorOptions,
    /// The options of the observed-only aggregators, when the result model is built.
    observed: Option<AggregatorOptions>,
    complete_at: Option<usize>,
    models: Vec<Model>,
    seq: u64,
    /// By invocation number, over every model.
    pub invocations: BTreeMap<u32, Invocation>,
    /// Runs whose record carries no invocation stamp (written by an earlier version).
    pub unstamped: u64,
    /// A probe log's functions and threshold: each model gets a [`ProbeTally`].
    probing: Option<(Vec<String>, f64)>,
    per_row: bool,
}

impl Tally {
    pub fn new(
        names: Vec<String>,
        options: AggregatorOptions,
        observed: Option<AggregatorOptions>,
    ) -> Result<Self, StatsError> {
        Aggregator::new(options.clone())?;
        if let Some(o) = &observed {
            Aggregator::new(o.clone())?;
        }
        Ok(Self {
            complete_at: options.n_runs.filter(|&n| n > 0).map(|n| n as usize),
            names,
            options,
            observed,
            models: Vec::new(),
            seq: 0,
            invocations: BTreeMap::new(),
            unstamped: 0,
            probing: None,
            per_row: false,
        })
    }

    /// Also keep each row's statistics per score name.
    pub fn per_row(mut self, on: bool) -> Self {
        self.per_row = on;
        self
    }

    /// Also tally `reward probe`'s findings of these functions at this threshold.
    pub fn probing(mut self, functions: &[String], threshold: f64) -> Self {
        if !functions.is_empty() {
            self.probing = Some((functions.to_vec(), threshold));
        }
        self
    }

    /// Whether rows' content keys and first attempts are kept: for pairing two runs, so only when the
    /// result model keeps rows (a plain summary with intervals does not pay for them).
    pub fn keeps_rows(&self) -> bool {
        self.options.keep_rows && self.observed.is_some()
    }

    fn stamp(&mut self, stamp: Option<Stamp>) {
        let Some(stamp) = stamp else {
            self.unstamped += 1;
            return;
        };
        let entry = self.invocations.entry(stamp.invocation).or_default();
        if entry.runs == 0 {
            entry.cpu_ms = stamp.cpu_ms;
        }
        entry.runs += 1;
        entry.wall_ms = entry.wall_ms.max(stamp.wall_ms);
        entry.cpu_ms = match (entry.cpu_ms, stamp.cpu_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }

    fn model(&mut self, tag: &str) -> Result<usize, StatsError> {
        if let Some(i) = self.models.iter().position(|m| m.tally.tag == tag) {
            return Ok(i);
        }
        let names = self
            .names
            .iter()
            .map(|name| {
                Ok(NameTally {
                    name: name.clone(),
                    aggregator: Aggregator::new(self.options.clone())?,
                    messages: Vec::new(),
                    observed: self.observed.clone().map(Aggregator::new).transpose()?,
                    runs: RunCounts::default(),
                    rows: RowCounts::default(),
                    first_attempt: HashMap::new(),
                    per_row: self.per_row.then(Vec::new),
                })
            })
            .collect::<Result<Vec<_>, StatsError>>()?;
        self.models.push(Model {
            tally: ModelTally {
                tag: tag.to_string(),
                rows: 0,
                runs: 0,
                failed: 0,
                eval_error_runs: 0,
                tokens: 0,
                duration_ms: 0.0,
                names,
                row_keys: HashMap::new(),
                short_rows: 0,
                missing_in_rows: 0,
                probes: self.probing.as_ref().map(|(functions, threshold)| {
                    ProbeTally::new(functions, &self.names, *threshold)
                }),
            },
            pending: HashMap::new(),
            order: BTreeMap::new(),
        });
        Ok(self.models.len() - 1)
    }

    pub fn add(&mut self, attempt: Attempt) -> Result<(), StatsError> {
        self.stamp(attempt.stamp);
        let pairing = self.keeps_rows();
        let m = self.model(&attempt.tag)?;
        let seq = self.seq;
        let model = &mut self.models[m];
        let row_index = attempt.row;
        let row = model.pending.entry(row_index).or_insert_with(|| {
            model.order.insert(seq, row_index);
            PendingRow {
                seq,
                runs: BTreeMap::new(),
            }
        });
        if row.seq == seq {
            self.seq += 1;
        }
        row.runs.insert(attempt.run, attempt);
        if self.complete_at.is_some_and(|n| row.runs.len() >= n) {
            let row = model
                .pending
                .remove(&row_index)
                .expect("the row was just added");
            model.order.remove(&row.seq);
            flush(&mut model.tally, row_index, row, &self.options, pairing)?;
        }
        Ok(())
    }

    /// Adds the rows that never completed and returns the models, primary first.
    pub fn finish(mut self) -> Result<Vec<ModelTally>, StatsError> {
        let pairing = self.keeps_rows();
        for model in &mut self.models {
            for (_, row_index) in std::mem::take(&mut model.order) {
                if let Some(row) = model.pending.remove(&row_index) {
                    flush(&mut model.tally, row_index, row, &self.options, pairing)?;
                }
            }
        }
        let mut out: Vec<ModelTally> = self.models.into_iter().map(|m| m.tally).collect();
        out.sort_by_key(|m| !m.tag.is_empty());
        Ok(out)
    }
}

/// One row's own statistics of one score name: its runs by outcome, and mean / variance / std / min /
/// max over its scored runs (None without one), from the same aggregator as every summary.
fn row_statistics(
    row: u64,
    runs: &[Attempt],
    i: usize,
    counts: &RunCounts,
) -> Result<RowStatistics, StatsError> {
    let mut scores = Aggregator::new(AggregatorOptions {
        failed: FailedPolicy::Exclude,
        keep_rows: false,
        ..AggregatorOptions::default()
    })?;
    let scored = runs.iter().filter_map(|a| match a.scores[i] {
        Score::Scored(x) if x.is_finite() => Some(Some(x)),
        _ => None,
    });
    scores.push_row(scored, row)?;
    let s = scores.finish()?;
    Ok(RowStatistics {
        row,
        finished: counts.finished,
        scored: counts.scored,
        passed: counts.passed,
        unscored: counts.unscored,
        errored: counts.errored_run + counts.errored_function,
        skipped: counts.skipped,
        mean: s.mean,
        variance: s.variance,
        std: s.std,
        min: s.min,
        max: s.max,
    })
}

/// One row's runs of one score name into its run and row counts; returns the row's own run counts.
fn count_row(
    name: &mut NameTally,
    runs: &[Attempt],
    i: usize,
    options: &AggregatorOptions,
) -> RunCounts {
    let mut row = RunCounts::default();
    for attempt in runs {
        row.finished += 1;
        match attempt.scores[i] {
            Score::Scored(x) if x.is_finite() => {
                row.scored += 1;
                row.passed += u64::from(x >= options.pass_threshold);
            }
            Score::Scored(_) | Score::Unscored => row.unscored += 1,
            Score::RunFailed => row.errored_run += 1,
            Score::Errored => row.errored_function += 1,
            Score::Skipped => row.skipped += 1,
        }
    }
    let total = &mut name.runs;
    total.finished += row.finished;
    total.scored += row.scored;
    total.passed += row.passed;
    total.unscored += row.unscored;
    total.errored_run += row.errored_run;
    total.errored_function += row.errored_function;
    total.skipped += row.skipped;
    let declared = options.n_runs.filter(|&n| n > 0).map_or(0, |n| n as u64);
    let attempts = row.finished - row.skipped;
    let rows = &mut name.rows;
    rows.with_function_errors += u64::from(row.errored_function > 0);
    if row.finished < declared {
        rows.incomplete += 1;
    } else if row.errored_run + row.errored_function > 0 {
        rows.errored += 1;
    } else if attempts > 0 && row.passed == attempts {
        rows.passed_every_attempt += 1;
    } else if row.passed > 0 {
        rows.passed_some += 1;
    } else {
        rows.passed_none += 1;
    }
    row
}

/// One complete row into a model's counters and aggregators.
fn flush(
    tally: &mut ModelTally,
    row_index: u64,
    row: PendingRow,
    options: &AggregatorOptions,
    pairing: bool,
) -> Result<(), StatsError> {
    let runs: Vec<Attempt> = row.runs.into_values().collect();
    if pairing {
        if let Some(key) = runs.iter().find_map(|a| a.row_key.clone()) {
            tally.row_keys.insert(row_index, key);
        }
    }
    for (i, name) in tally.names.iter_mut().enumerate() {
        let errors = runs
            .iter()
            .filter(|a| a.scores[i].attempt().is_none())
            .count();
        let attempts = runs.iter().filter_map(|a| a.scores[i].attempt());
        name.aggregator
            .push_row_with_errors(attempts.clone(), errors as u32, row_index)?;
        if let Some(observed) = &mut name.observed {
            observed.push_row_with_errors(attempts, errors as u32, row_index)?;
        }
        let counts = count_row(name, &runs, i, options);
        if let Some(list) = &mut name.per_row {
            list.push(row_statistics(row_index, &runs, i, &counts)?);
        }
        if pairing {
            let first = runs
                .iter()
                .find(|a| a.run == 0)
                .and_then(|a| match a.scores[i] {
                    Score::Scored(x) if x.is_finite() => Some(x >= options.pass_threshold),
                    Score::Errored | Score::Skipped => None,
                    _ => Some(false),
                });
            name.first_attempt.insert(row_index, first);
        }
        for attempt in &runs {
            for (n, message) in &attempt.messages {
                if *n == i && name.messages.len() < KEPT_MESSAGES {
                    name.messages.push(message.clone());
                }
            }
        }
    }
    if let (Some(probes), Some(first)) = (&mut tally.probes, runs.first()) {
        probes.add_row(row_index, &first.scores);
    }
    tally.rows += 1;
    let declared = options.n_runs.filter(|&n| n > 0).map_or(0, |n| n as usize);
    if runs.len() < declared {
        tally.short_rows += 1;
        tally.missing_in_rows += (declared - runs.len()) as u64;
    }
    for attempt in &runs {
        tally.runs += 1;
        tally.failed += u64::from(!attempt.success);
        tally.eval_error_runs += u64::from(!attempt.messages.is_empty());
        tally.tokens += attempt.tokens;
        tally.duration_ms += attempt.duration_ms;
    }
    Ok(())
}
