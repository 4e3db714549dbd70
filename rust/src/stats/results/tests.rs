use super::*;
use crate::error::CoreError;
use crate::stats::Summary;
use std::io::Write;

fn write(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("osmosis-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    path
}

fn never() -> bool {
    false
}

fn options() -> ResultsOptions {
    ResultsOptions {
        base: AggregatorOptions::default(),
        pass_threshold: None,
        n_runs: None,
        failed: None,
        model: false,
        per_row: false,
    }
}

fn summary(model: &ModelTally, name: &str) -> Summary {
    let tally = model.names.iter().find(|n| n.name == name).unwrap();
    tally.aggregator.finish().unwrap()
}

#[test]
fn bare_records_group_attempts_by_row_in_any_order() {
    let path = write(
        "log.jsonl",
        r#"{"row_index": 1, "run_index": 0, "scores": {"acc": 1.0, "len": 0.5}}
{"row_index": 0, "run_index": 1, "success": false, "scores": {}}
{"row_index": 0, "run_index": 0, "scores": {"acc": 1.0}}

{"row_index": 1, "run_index": 1, "scores": {"acc": 0.0, "len": null}}
{"row_index": 1, "run_index": 1, "scores": {"acc": 1.0, "len": 1.0}}
"#,
    );
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(out.layout, Layout::Records);
    let model = &out.models[0];
    let names: Vec<&str> = model.names.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["acc", "len"]);
    let acc = summary(model, "acc");
    // row 1: [1.0, 1.0] (the re-written attempt wins); row 0: [1.0, failed].
    assert_eq!((acc.rows, acc.count, acc.failed), (2, 4, 1));
    assert_eq!(acc.mean, Some(0.75));
    assert_eq!(acc.pass_at_k, vec![0.75]);
    let len = summary(model, "len");
    assert_eq!((len.failed, len.mean), (2, Some(0.375)));
    assert_eq!(model.runs, 4, "a re-written attempt is counted once");
}

#[test]
fn complete_rows_are_flushed_and_n_runs_pads() {
    let path = write(
        "pad.jsonl",
        "{\"row_index\": 0, \"run_index\": 0, \"scores\": {\"acc\": 1}}\n\
         {\"row_index\": 0, \"run_index\": 1, \"scores\": {\"acc\": 1}}\n\
         {\"row_index\": 1, \"run_index\": 0, \"scores\": {\"acc\": 1}}\n",
    );
    let out = summarize_results_file(
        &path,
        &ResultsOptions {
            n_runs: Some(2),
            ..options()
        },
        &mut never,
    )
    .unwrap();
    let s = summary(&out.models[0], "acc");
    assert_eq!((s.rows, s.padded, s.pass_at_k[0]), (2, 1, 0.75));
}

/// The run engine's log: a header, primary and baseline runs, a scorer that raised.
const EVAL_LOG: &str = r#"{"format": "osmosis-eval-log/1", "config": {"eval_fns": ["m:acc", "m:never"], "model": "x"}}
{"row_key": "a", "row_index": 0, "run_index": 0, "model_tag": "", "success": true, "scores": {"m:acc": 1.0}, "eval_errors": {"m:never": "ValueError: boom"}, "error": null, "tokens": 10}
{"row_key": "a", "row_index": 0, "run_index": 1, "model_tag": "", "success": true, "scores": {}, "eval_errors": {"m:acc": "KeyError: 'x'", "m:never": "ValueError: boom"}, "error": null, "tokens": 10}
{"row_key": "a", "row_index": 0, "run_index": 0, "model_tag": "baseline", "success": true, "scores": {"m:acc": 0.0}, "eval_errors": {"m:never": "ValueError: boom"}, "error": null, "tokens": 7}
{"row_key": "b", "row_index": 1, "run_index": 0, "model_tag": "", "success": false, "scores": {}, "error": "agent blew up", "tokens": 3}
{"row_key": "b", "row_index": 1, "run_index": 1, "model_tag": "", "success": true, "scores": {"m:acc": 1.0}, "eval_errors": {"m:never": "ValueError: boom"}, "error": null, "tokens": 10}
"#;

#[test]
fn the_eval_log_is_summarised_per_model_with_errors_excluded() {
    let path = write("eval.jsonl", EVAL_LOG);
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(out.layout, Layout::Log);
    assert_eq!(out.meta.config.as_ref().unwrap()["model"], "x");
    let tags: Vec<&str> = out.models.iter().map(|m| m.tag.as_str()).collect();
    assert_eq!(tags, ["", "baseline"]);
    let primary = &out.models[0];
    assert_eq!(
        (
            primary.rows,
            primary.runs,
            primary.failed,
            primary.eval_error_runs,
            primary.tokens
        ),
        (2, 4, 1, 3, 33)
    );
    let acc = summary(primary, "m:acc");
    // row 0: [1.0, errored]; row 1: [failed (0.0), 1.0]. The raised run is in no statistic.
    assert_eq!((acc.errors, acc.failed, acc.count), (1, 1, 3));
    assert!((acc.mean.unwrap() - 2.0 / 3.0).abs() < 1e-15);
    assert_eq!(
        (acc.pass_at_k.clone(), acc.pass_rows.clone()),
        (vec![0.75], vec![2])
    );
    let acc_tally = primary.names.iter().find(|n| n.name == "m:acc").unwrap();
    assert_eq!(acc_tally.messages, ["KeyError: 'x'"]);
    // A declared function that raised on every run that reached it: only the failed run (a 0.0, the
    // established rule for failed runs) is left; row 0 has no attempt that counts, so no pass@1.
    let never = summary(primary, "m:never");
    assert_eq!((never.errors, never.count, never.mean), (3, 1, Some(0.0)));
    assert_eq!(
        (never.ks.clone(), never.pass_rows.clone()),
        (vec![1], vec![1])
    );
    let never_tally = primary.names.iter().find(|n| n.name == "m:never").unwrap();
    assert_eq!(never_tally.messages.len(), tally::KEPT_MESSAGES);
    let baseline = summary(&out.models[1], "m:acc");
    assert_eq!((baseline.rows, baseline.mean), (1, Some(0.0)));
}

#[test]
fn the_newer_format_name_and_rubric_logs_are_read() {
    let path = write(
        "rubric.jsonl",
        r#"{"format": "osmosis-results/1", "kind": "rubric", "config": {"rubric_id": "helpful"}}
{"row_index": 0, "run_index": 0, "success": true, "scores": {"helpful": 0.5}}
{"row_index": 0, "run_index": 1, "success": false, "scores": {}, "error": "judge gave no score"}
{"row_index": 1, "run_index": 0, "success": true, "scores": {"helpful": 1.0}}
"#,
    );
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(out.meta.kind.as_deref(), Some("rubric"));
    let s = summary(&out.models[0], "helpful");
    // Rubric results leave unscored judgements out of the mean (they are not zeros).
    assert_eq!((s.count, s.failed, s.mean), (2, 1, Some(0.75)));
    assert_eq!(out.meta.index_base, 0);

    // A rubric log an earlier version wrote (no index_base) counted rows and runs from 1: read from 0.
    let path = write(
        "rubric-old.jsonl",
        r#"{"format": "osmosis-results/1", "kind": "rubric", "config": {"rubric_id": "helpful"}, "osmosis_version": "0.3.0"}
{"row_index": 1, "run_index": 1, "success": true, "scores": {"helpful": 0.5}}
{"row_index": 1, "run_index": 2, "success": false, "scores": {}, "error": "judge gave no score"}
{"row_index": 2, "run_index": 1, "success": true, "scores": {"helpful": 1.0}}
"#,
    );
    let old = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(old.meta.index_base, 1);
    assert_eq!(summary(&old.models[0], "helpful"), s);
    let bases = [
        log_index_base(Some("eval"), None, true),
        log_index_base(Some("rubric"), Some(0), true),
        log_index_base(Some("rubric"), None, false),
    ];
    assert_eq!(bases, [0, 0, 0]);

    let path = write(
        "future.jsonl",
        "{\"format\": \"osmosis-results/9\", \"config\": {}}\n",
    );
    let err = summarize_results_file(&path, &options(), &mut never).unwrap_err();
    assert!(
        err.to_string()
            .contains("future.jsonl:1: unknown results log format \"osmosis-results/9\""),
        "{err}"
    );
}

#[test]
fn the_eval_output_json_is_read_with_its_config() {
    let path = write(
        "eval-out.json",
        r#"{
  "config": {"model": "x", "n_runs": 3, "pass_threshold": 0.5, "eval_fns": ["m:acc"]},
  "summary": {"total_rows": 2, "eval_fns": {"m:acc": {"mean": 0.0}}},
  "rows": [
    {"row_index": 0, "runs": [
      {"run_index": 0, "success": true, "scores": {"m:acc": 0.5}, "duration_ms": 2.0, "tokens": 4, "model_tag": "primary"},
      {"run_index": 1, "success": true, "scores": {}, "eval_errors": {"m:acc": "boom"}, "tokens": 4, "model_tag": "primary"},
      {"run_index": 0, "success": true, "scores": {"m:acc": 0.0}, "tokens": 1, "model_tag": "baseline"}
    ]},
    {"row_index": 1, "runs": [
      {"run_index": 0, "success": false, "scores": {}, "error": "x", "model_tag": "primary"}
    ]}
  ],
  "model_summaries": []
}"#,
    );
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(out.layout, Layout::EvalJson);
    assert_eq!(
        (out.options.n_runs, out.options.pass_threshold),
        (Some(3), 0.5)
    );
    let primary = &out.models[0];
    assert_eq!(
        (primary.tag.as_str(), primary.runs, primary.tokens),
        ("", 3, 8)
    );
    let s = summary(primary, "m:acc");
    // row 0: [0.5, errored, padded]; row 1: [failed, padded, padded].
    assert_eq!((s.errors, s.failed, s.padded, s.count), (1, 1, 3, 2));
    assert_eq!(s.mean, Some(0.25));
    assert_eq!(out.models[1].tag, "baseline");
}

#[test]
fn the_rubric_output_json_is_read() {
    let path = write(
        "rubric-out.json",
        r#"{"generated_at": "t", "rubric_id": "helpful", "number": 2,
  "overall_statistics": {"average": 0.75},
  "records": [
    {"id": "a", "record_index": 1, "input_record": {"deep": [1, {"x": "y"}]},
     "runs": [{"run_index": 1, "status": "success", "score": 0.5, "duration_seconds": 0.5},
              {"run_index": 2, "status": "unscored", "score": null}]},
    {"id": "b", "record_index": 2,
     "runs": [{"run_index": 1, "status": "success", "score": 1.0},
              {"run_index": 2, "status": "error", "error": "HTTP 500"}]}
  ]}"#,
    );
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(out.layout, Layout::RubricJson);
    assert_eq!(out.options.failed, FailedPolicy::Exclude);
    let model = &out.models[0];
    assert_eq!((model.rows, model.runs, model.failed), (2, 4, 2));
    let s = summary(model, "helpful");
    assert_eq!(
        (s.count, s.failed, s.mean, s.min, s.max),
        (2, 2, Some(0.75), Some(0.5), Some(1.0))
    );
    assert_eq!(s.pass_at_k, vec![0.25]);
}

#[test]
fn errors_name_path_line_and_field() {
    let path = write(
        "bad.jsonl",
        "{\"row_index\": 0, \"run_index\": 0, \"scores\": {\"acc\": 1}}\n{\"row_index\": 0}\n",
    );
    let Err(CoreError::Stats(e)) = summarize_results_file(&path, &options(), &mut never) else {
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
    let Err(CoreError::Stats(e)) = summarize_results_file(&path, &options(), &mut never) else {
        panic!("expected a score error");
    };
    assert!(
        e.message
            .contains("type.jsonl:1: field 'scores.acc': expected a number or null, got \"high\""),
        "{e}"
    );

    let path = write(
        "type.json",
        "{\"rows\": [\n  {\"row_index\": 4, \"runs\": [{\"run_index\": 0, \"success\": true, \"scores\": {\"acc\": []}}]}\n]}",
    );
    let Err(CoreError::Stats(e)) = summarize_results_file(&path, &options(), &mut never) else {
        panic!("expected a score error");
    };
    assert!(e.message.contains("type.json:3:"), "{e}");
    assert!(e.message.contains("row_index 4: field 'scores.acc'"), "{e}");

    let missing = std::env::temp_dir().join("osmosis-results-missing/none.jsonl");
    assert!(matches!(
        summarize_results_file(&missing, &options(), &mut never),
        Err(CoreError::Io { .. })
    ));
}

#[test]
fn a_name_the_header_does_not_declare_is_still_counted_from_the_first_row() {
    // The one-pass read stops at `late` and the file is read again in two passes.
    let path = write(
        "late.jsonl",
        r#"{"format": "osmosis-eval-log/1", "config": {"eval_fns": ["acc"]}}
{"row_index": 0, "run_index": 0, "success": true, "scores": {"acc": 1.0}}
{"row_index": 1, "run_index": 0, "success": true, "scores": {"acc": 0.0, "late": 1.0}}
"#,
    );
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    let names: Vec<&str> = out.models[0]
        .names
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, ["acc", "late"]);
    let late = summary(&out.models[0], "late");
    assert_eq!((late.rows, late.failed, late.mean), (2, 1, Some(0.5)));
    assert_eq!(out.models[0].runs, 2);
}

#[test]
fn the_caller_can_interrupt_a_long_read() {
    let mut text = String::new();
    for row in 0..70_000 {
        text.push_str(&format!(
            "{{\"row_index\": {row}, \"run_index\": 0, \"scores\": {{\"a\": 1}}}}\n"
        ));
    }
    let path = write("long.jsonl", &text);
    let mut asked = 0;
    let mut stop = || {
        asked += 1;
        true
    };
    let err = summarize_results_file(&path, &options(), &mut stop).unwrap_err();
    assert!(matches!(err, CoreError::Interrupted), "{err}");
    assert_eq!(asked, 1);
}

#[test]
fn a_judged_runs_tokens_are_its_usage_total() {
    // The rubric commands write `usage` (its nested `raw` reply has a usage of its own: not read).
    let path = write(
        "rubric-usage.jsonl",
        r#"{"format": "osmosis-results/1", "kind": "rubric", "config": {"rubric_id": "r", "number": 1}}
{"row_index": 0, "run_index": 0, "success": true, "scores": {"r": 1.0}, "raw": {"usage": {"total_tokens": 5}}, "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}}
{"row_index": 1, "run_index": 0, "success": true, "scores": {"r": 0.0}, "usage": {"total_tokens": 100}}
{"row_index": 2, "run_index": 0, "success": true, "scores": {"r": 0.0}, "tokens": 7}
"#,
    );
    let out = summarize_results_file(&path, &options(), &mut never).unwrap();
    assert_eq!(out.models[0].tokens, 427);
}
