//! Attempts → one aggregator per (model, score name), grouping attempts by row whatever their order.
//!
//! A row leaves memory as soon as it has `n_runs` attempts; rows that never get there are added at the
//! end in the order they first appeared. A later attempt for the same `(model, row, run)` replaces the
//! earlier one (a resumed run that re-wrote an attempt), and is counted once.

use super::attempt::{Attempt, Score};
use crate::stats::{Aggregator, AggregatorOptions, StatsError};
use std::collections::{BTreeMap, HashMap};

/// How many scorer error messages are kept per score name.
pub const KEPT_MESSAGES: usize = 3;

/// The summary inputs of one score name of one model.
#[derive(Debug, Clone)]
pub struct NameTally {
    pub name: String,
    pub aggregator: Aggregator,
    /// The first messages of the scorer's errors, in file order.
    pub messages: Vec<String>,
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
    complete_at: Option<usize>,
    models: Vec<Model>,
    seq: u64,
}

impl Tally {
    pub fn new(names: Vec<String>, options: AggregatorOptions) -> Result<Self, StatsError> {
        Aggregator::new(options.clone())?;
        Ok(Self {
            complete_at: options.n_runs.filter(|&n| n > 0).map(|n| n as usize),
            names,
            options,
            models: Vec::new(),
            seq: 0,
        })
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
            },
            pending: HashMap::new(),
            order: BTreeMap::new(),
        });
        Ok(self.models.len() - 1)
    }

    pub fn add(&mut self, attempt: Attempt) -> Result<(), StatsError> {
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
            flush(&mut model.tally, row_index, row)?;
        }
        Ok(())
    }

    /// Adds the rows that never completed and returns the models, primary first.
    pub fn finish(mut self) -> Result<Vec<ModelTally>, StatsError> {
        for model in &mut self.models {
            for (_, row_index) in std::mem::take(&mut model.order) {
                if let Some(row) = model.pending.remove(&row_index) {
                    flush(&mut model.tally, row_index, row)?;
                }
            }
        }
        let mut out: Vec<ModelTally> = self.models.into_iter().map(|m| m.tally).collect();
        out.sort_by_key(|m| !m.tag.is_empty());
        Ok(out)
    }
}

/// One complete row into a model's counters and aggregators.
fn flush(tally: &mut ModelTally, row_index: u64, row: PendingRow) -> Result<(), StatsError> {
    let runs: Vec<Attempt> = row.runs.into_values().collect();
    for (i, name) in tally.names.iter_mut().enumerate() {
        let errors = runs
            .iter()
            .filter(|a| a.scores[i] == Score::Errored)
            .count();
        let attempts = runs.iter().filter_map(|a| match a.scores[i] {
            Score::Scored(x) => Some(Some(x)),
            Score::Failed => Some(None),
            Score::Errored => None,
        });
        name.aggregator
            .push_row_with_errors(attempts, errors as u32, row_index)?;
        for attempt in &runs {
            for (n, message) in &attempt.messages {
                if *n == i && name.messages.len() < KEPT_MESSAGES {
                    name.messages.push(message.clone());
                }
            }
        }
    }
    tally.rows += 1;
    for attempt in &runs {
        tally.runs += 1;
        tally.failed += u64::from(!attempt.success);
        tally.eval_error_runs += u64::from(!attempt.messages.is_empty());
        tally.tokens += attempt.tokens;
        tally.duration_ms += attempt.duration_ms;
    }
    Ok(())
}
