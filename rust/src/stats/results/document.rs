//! Reading attempts out of the eval `-o` JSON (`config`, `summary`, `rows: [{row_index, runs: [...]}]`)
//! and the eval-rubric `-o` JSON (`rubric_id`, `number`, `records: [{record_index, runs: [...]}]`): one
//! document read with a streaming visitor so only one row is in memory at a time.

use super::attempt::{RawAttempt, RubricRun};
use super::source::{open, Meta, Sink, CHECK_EVERY};
use crate::error::{CoreError, CoreResult};
use crate::stats::StatsError;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::cell::RefCell;
use std::fmt;
use std::path::Path;

/// Where a document visit stands: what it learnt and the first error the sink raised.
struct DocState<'a> {
    path: &'a Path,
    meta: Meta,
    failure: Option<CoreError>,
    sink: &'a mut dyn Sink,
    interrupted: &'a mut dyn FnMut() -> bool,
    rows: usize,
    /// Which of `rows` / `records` (runs) and `results` (an `osmosis test` file: no runs) the document has.
    has_runs: bool,
    has_test_results: bool,
}

impl DocState<'_> {
    /// Counts a row; every [`CHECK_EVERY`] rows asks whether to stop.
    fn row<E: de::Error>(&mut self) -> Result<(), E> {
        self.rows += 1;
        if self.rows % CHECK_EVERY == 0 && (self.interrupted)() {
            self.failure = Some(CoreError::Interrupted);
            return Err(E::custom("interrupted"));
        }
        Ok(())
    }

    /// Keeps a sink error (it surfaces as a serde error, which adds the line) or an early stop.
    fn keep<E: de::Error>(&mut self, outcome: CoreResult<bool>) -> Result<(), E> {
        match outcome {
            Ok(true) => Ok(()),
            Ok(false) => {
                let stop = CoreError::Protocol("a document pass cannot stop early".into());
                self.failure = Some(stop);
                Err(E::custom("stopped"))
            }
            Err(e) => {
                let text = e.to_string();
                self.failure = Some(e);
                Err(E::custom(text))
            }
        }
    }
}

struct Document<'s, 'a>(&'s RefCell<DocState<'a>>);

#[derive(Deserialize)]
struct EvalRow<'a> {
    row_index: u64,
    #[serde(borrow, default)]
    runs: Vec<RawAttempt<'a>>,
}

#[derive(Deserialize)]
struct RubricRecord {
    record_index: u64,
    #[serde(default)]
    runs: Vec<RubricRun>,
}

/// The `rows` (eval) or `records` (rubric) array, one element at a time.
struct Rows<'s, 'a> {
    state: &'s RefCell<DocState<'a>>,
    rubric: bool,
}

impl<'de> DeserializeSeed<'de> for Rows<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.rubric {
            while let Some(record) = seq.next_element::<RubricRecord>()? {
                let mut state = self.state.borrow_mut();
                state.row()?;
                for mut run in record.runs {
                    // The established document numbers records and runs from 1; rows read from 0.
                    run.run_index = run.run_index.saturating_sub(1);
                    let outcome = state
                        .sink
                        .rubric(run, record.record_index.saturating_sub(1));
                    state.keep(outcome)?;
                }
            }
        } else {
            while let Some(row) = seq.next_element::<EvalRow<'de>>()? {
                let mut state = self.state.borrow_mut();
                state.row()?;
                let where_ = || format!("row_index {}", row.row_index);
                for run in row.runs {
                    let outcome = state.sink.raw(run, row.row_index, &where_);
                    state.keep(outcome)?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Document<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an eval or eval-rubric results object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "config" => {
                    let config: Value = map.next_value()?;
                    let mut state = self.0.borrow_mut();
                    state.meta.read_config(&config);
                    state.meta.config = Some(config);
                }
                "rubric_id" => {
                    let id: Option<String> = map.next_value()?;
                    let mut state = self.0.borrow_mut();
                    state.meta.kind = Some("rubric".into());
                    state.meta.declared.extend(id);
                }
                "number" => {
                    let number: Option<i64> = map.next_value()?;
                    self.0.borrow_mut().meta.n_runs = number;
                }
                "rows" | "records" => {
                    self.0.borrow_mut().has_runs = true;
                    map.next_value_seed(Rows {
                        state: self.0,
                        rubric: key == "records",
                    })?
                }
                "results" => {
                    self.0.borrow_mut().has_test_results = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Document<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// Streams a `-o` JSON document: hands `sink` every attempt and returns what the document declares.
pub(crate) fn for_each_document_attempt(
    path: &Path,
    sink: &mut dyn Sink,
    interrupted: &mut dyn FnMut() -> bool,
) -> CoreResult<Meta> {
    let state = RefCell::new(DocState {
        path,
        meta: Meta::default(),
        failure: None,
        sink,
        interrupted,
        rows: 0,
        has_runs: false,
        has_test_results: false,
    });
    let mut de = serde_json::Deserializer::from_reader(open(path)?);
    let result = Document(&state)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    let state = state.into_inner();
    if let Err(e) = result {
        // A sink error (a StatsError from the aggregator) keeps its own kind; a parse error names the
        // position serde reports.
        if let Some(failure) = state.failure {
            // A record's own error names its row; the file and the line (where the row ends) go first.
            return Err(match failure {
                CoreError::Stats(mut stats) => {
                    stats.message =
                        format!("{}:{}: {}", state.path.display(), e.line(), stats.message);
                    CoreError::Stats(stats)
                }
                other => other,
            });
        }
        if e.is_io() {
            return Err(CoreError::Io {
                path: state.path.display().to_string(),
                source: e.into(),
            });
        }
        return Err(StatsError::new(format!(
            "{}:{}: not an eval or eval-rubric results document ({e})",
            state.path.display(),
            e.line()
        ))
        .field("line")
        .into());
    }
    if state.has_test_results && !state.has_runs {
        // Read as an eval document it would be "0 rows": say what it is instead.
        return Err(StatsError::new(format!(
            "{}: an `osmosis test` results file (`summary` and `results`: one unscored run per row), \
             not a results log or an eval / eval-rubric results JSON; its numbers are in its `summary`. \
             For a report, run `osmosis eval` with --eval-fn and report its results log",
            state.path.display()
        ))
        .into());
    }
    Ok(state.meta)
}
