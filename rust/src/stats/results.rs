//! Summaries straight from a results log: JSONL, one attempt per line,
//! `{"row_index": int, "run_index": int, "success": bool?, "scores": {name: number | null}?}`.
//!
//! Two streaming passes: the first finds every score name (so a name first seen late still counts the
//! earlier rows' attempts as failed), the second groups attempts by row and hands each row to one
//! aggregator per name. A row leaves memory as soon as it has `n_runs` attempts; rows that never get
//! there are added at the end in the order they first appeared. A later line for the same
//! `(row_index, run_index)` replaces the earlier one (a resumed run that re-wrote an attempt).

use super::{Aggregator, AggregatorOptions, StatsError};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// Why a results log could not be summarised.
#[derive(Debug)]
pub enum ResultsError {
    /// The file could not be opened or read.
    Io(io::Error),
    /// A line is not a valid record, or a score is out of range; the message names path and line.
    Stats(StatsError),
}

impl From<StatsError> for ResultsError {
    fn from(e: StatsError) -> Self {
        Self::Stats(e)
    }
}

#[derive(Deserialize)]
struct Record {
    row_index: u64,
    run_index: u64,
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    scores: Option<serde_json::Map<String, Value>>,
}

fn lines(path: &Path) -> Result<impl Iterator<Item = (usize, io::Result<String>)>, ResultsError> {
    let file = File::open(path).map_err(ResultsError::Io)?;
    Ok(BufReader::new(file)
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line)))
}

fn parse(path: &Path, line_no: usize, line: &str) -> Result<Record, StatsError> {
    serde_json::from_str(line).map_err(|e| {
        StatsError::new(format!(
            "{}:{line_no}: not a results record ({e}); expected {{\"row_index\": int, \"run_index\": int, \"scores\": {{name: number}}}}",
            path.display()
        ))
        .field("line")
    })
}

/// The score of `name` in a record: `None` for a failed attempt, a missing score or `null`.
fn score(
    path: &Path,
    line_no: usize,
    record: &Record,
    name: &str,
) -> Result<Option<f64>, StatsError> {
    if record.success == Some(false) {
        return Ok(None);
    }
    match record.scores.as_ref().and_then(|s| s.get(name)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(other) => Err(StatsError::new(format!(
            "{}:{line_no}: field 'scores.{name}': expected a number or null, got {other}",
            path.display()
        ))
        .field("scores")),
    }
}

struct PendingRow {
    /// run_index → one score per name.
    runs: BTreeMap<u64, Vec<Option<f64>>>,
}

/// Summarises a results log into one aggregator per score name, in the order names first appear.
pub fn aggregate_results_file(
    path: &Path,
    options: &AggregatorOptions,
) -> Result<Vec<(String, Aggregator)>, ResultsError> {
    let mut names: Vec<String> = Vec::new();
    for (line_no, line) in lines(path)? {
        let line = line.map_err(ResultsError::Io)?;
        if line.trim().is_empty() {
            continue;
        }
        let record = parse(path, line_no, &line)?;
        if let Some(scores) = &record.scores {
            for name in scores.keys() {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
    }
    let mut aggregators = names
        .iter()
        .map(|name| Ok((name.clone(), Aggregator::new(options.clone())?)))
        .collect::<Result<Vec<_>, StatsError>>()?;
    let complete_at = options.n_runs.filter(|&n| n > 0).map(|n| n as usize);
    let mut pending: HashMap<u64, PendingRow> = HashMap::new();
    let mut order: Vec<u64> = Vec::new();
    let flush = |aggregators: &mut Vec<(String, Aggregator)>,
                 row_index: u64,
                 row: PendingRow|
     -> Result<(), StatsError> {
        for (j, (_, aggregator)) in aggregators.iter_mut().enumerate() {
            aggregator.push_row(row.runs.values().map(|scores| scores[j]), row_index)?;
        }
        Ok(())
    };
    for (line_no, line) in lines(path)? {
        let line = line.map_err(ResultsError::Io)?;
        if line.trim().is_empty() {
            continue;
        }
        let record = parse(path, line_no, &line)?;
        let scores = names
            .iter()
            .map(|name| score(path, line_no, &record, name))
            .collect::<Result<Vec<_>, _>>()?;
        let row = pending.entry(record.row_index).or_insert_with(|| {
            order.push(record.row_index);
            PendingRow {
                runs: BTreeMap::new(),
            }
        });
        row.runs.insert(record.run_index, scores);
        if complete_at.is_some_and(|n| row.runs.len() >= n) {
            if let Some(row) = pending.remove(&record.row_index) {
                flush(&mut aggregators, record.row_index, row)?;
            }
        }
    }
    for row_index in order {
        if let Some(row) = pending.remove(&row_index) {
            flush(&mut aggregators, row_index, row)?;
        }
    }
    Ok(aggregators)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("osmosis-stats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let mut f = File::create(&path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        path
    }

    #[test]
    fn groups_attempts_by_row_in_any_order() {
        let path = write(
            "log.jsonl",
            r#"{"row_index": 1, "run_index": 0, "scores": {"acc": 1.0, "len": 0.5}}
{"row_index": 0, "run_index": 1, "success": false, "scores": {}}
{"row_index": 0, "run_index": 0, "scores": {"acc": 1.0}}

{"row_index": 1, "run_index": 1, "scores": {"acc": 0.0, "len": null}}
{"row_index": 1, "run_index": 1, "scores": {"acc": 1.0, "len": 1.0}}
"#,
        );
        let out = aggregate_results_file(&path, &AggregatorOptions::default()).unwrap();
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["acc", "len"]);
        let acc = out[0].1.finish().unwrap();
        // row 1: [1.0, 1.0] (the re-written attempt wins); row 0: [1.0, failed].
        assert_eq!((acc.rows, acc.count, acc.failed), (2, 4, 1));
        assert_eq!(acc.mean, Some(0.75));
        assert_eq!(acc.pass_at_k, vec![0.75]);
        let len = out[1].1.finish().unwrap();
        assert_eq!((len.failed, len.mean), (2, Some(0.375)));
    }

    #[test]
    fn complete_rows_are_flushed_and_n_runs_pads() {
        let path = write(
            "pad.jsonl",
            "{\"row_index\": 0, \"run_index\": 0, \"scores\": {\"acc\": 1}}\n\
             {\"row_index\": 0, \"run_index\": 1, \"scores\": {\"acc\": 1}}\n\
             {\"row_index\": 1, \"run_index\": 0, \"scores\": {\"acc\": 1}}\n",
        );
        let options = AggregatorOptions {
            n_runs: Some(2),
            ..Default::default()
        };
        let out = aggregate_results_file(&path, &options).unwrap();
        let s = out[0].1.finish().unwrap();
        assert_eq!((s.rows, s.padded, s.pass_at_k[0]), (2, 1, 0.75));
    }

    #[test]
    fn errors_name_path_line_and_field() {
        let path = write(
            "bad.jsonl",
            "{\"row_index\": 0, \"run_index\": 0, \"scores\": {\"acc\": 1}}\n{\"row_index\": 0}\n",
        );
        let Err(ResultsError::Stats(e)) =
            aggregate_results_file(&path, &AggregatorOptions::default())
        else {
            panic!("expected a record error");
        };
        assert!(
            e.message.contains("bad.jsonl:2: not a results record"),
            "{e}"
        );
        assert!(e.message.contains("run_index"), "{e}");

        let path = write(
            "type.jsonl",
            "{\"row_index\": 0, \"run_index\": 0, \"scores\": {\"acc\": \"high\"}}\n",
        );
        let Err(ResultsError::Stats(e)) =
            aggregate_results_file(&path, &AggregatorOptions::default())
        else {
            panic!("expected a score error");
        };
        assert!(
            e.message.contains(
                "type.jsonl:1: field 'scores.acc': expected a number or null, got \"high\""
            ),
            "{e}"
        );
        let missing = std::env::temp_dir().join("osmosis-stats-missing/none.jsonl");
        assert!(matches!(
            aggregate_results_file(&missing, &AggregatorOptions::default()),
            Err(ResultsError::Io(_))
        ));
    }
}
