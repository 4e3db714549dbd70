//! The result model built from whole results files: a resumed, incomplete eval log with errors, and two
//! logs compared.

use osmosis_core::stats::compare::{compare_files, CompareOptions, Method};
use osmosis_core::stats::model::build;
use osmosis_core::stats::{summarize_results_file, AggregatorOptions, ResultsOptions};
use serde_json::{json, Value};
use std::path::PathBuf;

fn write(name: &str, lines: &[Value]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("osmosis-result-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The `code` of every warning of a model or comparison, in order.
fn codes(value: &Value) -> Vec<&str> {
    let warnings = value["warnings"].as_array().unwrap();
    warnings
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

fn model(path: &std::path::Path) -> Value {
    let options = ResultsOptions {
        base: AggregatorOptions {
            keep_rows: false,
            ..AggregatorOptions::default()
        },
        pass_threshold: None,
        n_runs: None,
        failed: None,
        model: true,
        per_row: false,
    };
    let summary = summarize_results_file(path, &options, &mut || false).unwrap();
    serde_json::to_value(build(summary, "log", 0.95).unwrap()).unwrap()
}

/// Three invocations wrote a log of 4 rows x n = 2; row 3 never got its second run, and the second
/// function raised on row 0.
fn resumed_log() -> Vec<Value> {
    let mut lines = vec![json!({"format": "osmosis-results/1", "kind": "eval",
        "config": {"eval_fns": ["acc", "fmt"], "n_runs": 2}})];
    for row in 0..4u64 {
        for run in 0..2u64 {
            if row == 3 && run == 1 {
                continue;
            }
            let invocation = (row + run) % 3;
            let mut record = json!({"row_key": format!("k{row}"), "row_index": row, "run_index": run,
                "success": true, "scores": {"acc": f64::from(u8::from(row % 2 == 0)), "fmt": 1.0},
                "duration_ms": 1000.0, "tokens": 5,
                "invocation": invocation, "invocation_ms": 100.0 * (row + 1) as f64,
                "invocation_cpu_ms": 10.0 * (row + 1) as f64});
            if row == 0 {
                record["eval_errors"] = json!({"fmt": "ValueError: no"});
                record["scores"] = json!({"acc": 1.0});
            }
            lines.push(record);
        }
    }
    lines
}

#[test]
fn a_resumed_incomplete_log() {
    let m = model(&write("resumed.jsonl", &resumed_log()));
    assert_eq!(
        (m["schema"].as_str(), m["version"].as_u64()),
        (Some("osmosis-result-summary"), Some(1))
    );
    let primary = &m["models"][0];
    assert_eq!(
        (
            &primary["planned_runs"],
            &primary["missing_runs"],
            &primary["total_runs"]
        ),
        (&json!(8), &json!(1), &json!(7))
    );
    let acc = &primary["functions"][0];
    // Rows 0 and 2 pass every run, row 1 none, row 3 is incomplete.
    assert_eq!(
        acc["rows"],
        json!({"passed_every_attempt": 2, "passed_some": 0, "passed_none": 1,
        "errored": 0, "incomplete": 1})
    );
    // pass@2 counts row 3's missing run as did not pass; the observed value leaves row 3 out.
    assert_eq!(acc["pass_at_k"]["2"], json!(0.5));
    assert_eq!(acc["pass_at_k_observed"]["2"].as_f64().unwrap(), 2.0 / 3.0);
    assert_eq!(acc["observed_rows"]["2"], json!(3));
    let fmt = &primary["functions"][1];
    assert_eq!(
        (&fmt["runs"]["errored_function"], &fmt["rows"]["errored"]),
        (&json!(2), &json!(1))
    );
    let codes = codes(&m);
    assert_eq!(codes, ["incomplete", "function_errors"]);
    // Wall time is each invocation's last stamp, added up; run time is the runs' own durations.
    let d = &m["durations"];
    assert_eq!(d["invocations"].as_array().unwrap().len(), 3);
    let walls: f64 = d["invocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["wall_ms"].as_f64().unwrap())
        .sum();
    assert_eq!(d["total_duration_ms"].as_f64(), Some(walls));
    assert_eq!(d["run_time_ms"], json!(7000.0));
}

#[test]
fn nothing_scored_is_null_and_an_old_log_has_no_wall_time() {
    let mut lines =
        vec![json!({"format": "osmosis-eval-log/1", "config": {"eval_fns": ["acc"], "n_runs": 1}})];
    for row in 0..3 {
        lines.push(json!({"row_index": row, "run_index": 0, "success": false, "scores": {}, "error": "429"}));
    }
    let m = model(&write("failed.jsonl", &lines));
    let acc = &m["models"][0]["functions"][0];
    assert_eq!(
        (&acc["mean"], &acc["std"], &acc["min"], &acc["max"]),
        (&Value::Null, &Value::Null, &Value::Null, &Value::Null)
    );
    assert_eq!(
        (&acc["pass_rate"], &acc["runs"]["errored_run"]),
        (&Value::Null, &json!(3))
    );
    assert_eq!(acc["pass_at_k"], json!({}));
    assert_eq!(acc["intervals"], json!({}));
    assert_eq!(m["durations"]["total_duration_ms"], Value::Null);
    let codes = codes(&m);
    assert_eq!(
        codes,
        ["durations_unrecorded", "run_errors", "nothing_scored"]
    );
}

#[test]
fn compare_aligns_n_and_needs_agreement() {
    let log = |name: &str, n: u64, passing: bool| {
        let mut lines = vec![json!({"format": "osmosis-results/1", "kind": "eval",
            "config": {"eval_fns": ["acc"], "n_runs": n}})];
        for row in 0..2u64 {
            for run in 0..n {
                lines.push(
                    json!({"row_key": format!("k{row}"), "row_index": row, "run_index": run,
                    "success": true, "scores": {"acc": f64::from(u8::from(passing))}}),
                );
            }
        }
        write(name, &lines)
    };
    let options = CompareOptions {
        metric: None,
        allow_partial: false,
        level: 0.95,
        method: Method::T,
        resamples: 100,
        seed: 0,
    };
    let c = compare_files(
        &log("a.jsonl", 3, false),
        &log("b.jsonl", 2, true),
        &options,
        &mut || false,
    )
    .unwrap();
    let c = serde_json::to_value(c).unwrap();
    assert_eq!(c["ks"], json!([1, 2]));
    assert_eq!(c["differences"]["pass_at_1"]["estimate"], json!(1.0));
    assert_eq!(c["differences"]["pass_at_1"]["low"], Value::Null);
    assert_eq!(c["verdict"]["outcome"], json!("no_clear_difference"));
    assert_eq!(
        (c["a"]["n_runs"].as_u64(), c["b"]["n_runs"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(c["a"]["summary"]["ks"], json!([1, 2, 3]));
    let codes = codes(&c);
    assert_eq!(&codes[..2], ["n_differs", "multiplicity"]);
}
