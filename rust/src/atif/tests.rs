use super::*;
use serde_json::json;

/// An edit of a valid document and the field the check must then name.
type Case = (Box<dyn FnOnce(&mut Value)>, &'static str);

fn valid() -> Value {
    json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "r1",
        "trajectory_id": "r1",
        "agent": {"name": "osmosis-rollout-sdk", "version": "0.3.0", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "be brief"},
            {"step_id": 2, "source": "user", "message": "2+2?", "timestamp": "2025-10-16T14:30:00Z"},
            {
                "step_id": 3, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "add", "arguments": {"a": 2}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "4"}]},
                "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0, "logprobs": [-0.5, 0]},
                "llm_call_count": 1, "reasoning_effort": 0.5
            },
            {"step_id": 4, "source": "agent", "message": [{"type": "text", "text": "4"}]}
        ],
        "final_metrics": {"total_prompt_tokens": 10, "total_steps": 4},
        "extra": {"osmosis": {"rollout_id": "r1", "request_extra_fields": {"row_index": 3, "run_index": 1}}}
    })
}

/// The error for `valid()` after `edit`.
fn error_after(edit: impl FnOnce(&mut Value)) -> AtifError {
    let mut document = valid();
    edit(&mut document);
    check_value(&document).expect_err("the edited document was accepted")
}

#[test]
fn a_full_document_is_valid_and_names_its_rollout_row_and_run() {
    let summary = check_value(&valid()).unwrap();
    assert_eq!(summary.rollout_id.as_deref(), Some("r1"));
    assert_eq!((summary.row_index, summary.run_index), (Some(3), Some(1)));
}

#[test]
fn identity_falls_back_to_session_then_the_trajectory_id_prefix() {
    let mut document = valid();
    document["extra"] = json!({});
    document["session_id"] = json!("s");
    assert_eq!(rollout_identity(&document), Some("s"));
    document.as_object_mut().unwrap().remove("session_id");
    document["trajectory_id"] = json!("abc/0");
    assert_eq!(rollout_identity(&document), Some("abc"));
    document["trajectory_id"] = json!("abc");
    assert_eq!(
        rollout_identity(&document),
        None,
        "a bare trajectory_id names no rollout"
    );
}

#[test]
fn types_are_never_coerced() {
    let cases: Vec<Case> = vec![
        (
            Box::new(|d| d["steps"][0]["step_id"] = json!(1.0)),
            "steps[0].step_id",
        ),
        (
            Box::new(|d| d["steps"][0]["step_id"] = json!(true)),
            "steps[0].step_id",
        ),
        (
            Box::new(|d| d["agent"]["version"] = json!(3)),
            "agent.version",
        ),
        (
            Box::new(|d| d["steps"][2]["metrics"]["prompt_tokens"] = json!("10")),
            "steps[2].metrics.prompt_tokens",
        ),
        (
            Box::new(|d| d["steps"][2]["metrics"]["cost_usd"] = json!(false)),
            "steps[2].metrics.cost_usd",
        ),
        (
            Box::new(|d| d["steps"][2]["metrics"]["logprobs"][1] = json!(null)),
            "steps[2].metrics.logprobs[1]",
        ),
        (
            Box::new(|d| d["steps"][2]["tool_calls"][0]["arguments"] = json!("{\"a\": 2}")),
            "steps[2].tool_calls[0].arguments",
        ),
        (
            Box::new(|d| d["steps"][1]["message"] = json!(null)),
            "steps[1].message",
        ),
        (
            Box::new(|d| d["final_metrics"]["total_steps"] = json!(-1)),
            "final_metrics.total_steps",
        ),
        (
            Box::new(|d| d["steps"][2]["is_copied_context"] = json!(1)),
            "steps[2].is_copied_context",
        ),
        (Box::new(|d| d["extra"] = json!([])), "extra"),
    ];
    for (edit, field) in cases {
        assert_eq!(error_after(edit).field, field);
    }
}

#[test]
fn unknown_fields_are_refused_except_inside_extra() {
    let error = error_after(|d| d["messages"] = json!([]));
    assert_eq!(error.field, "messages");
    assert!(
        error.message.contains("not a field of ATIF Trajectory"),
        "{error}"
    );
    assert_eq!(
        error_after(|d| d["steps"][0]["role"] = json!("system")).field,
        "steps[0].role"
    );
    assert_eq!(
        error_after(|d| d["agent"]["model"] = json!("m")).field,
        "agent.model"
    );
    let mut free = valid();
    free["extra"]["anything"] = json!({"nested": [1, "x", null]});
    free["steps"][0]["extra"] = json!({"original_role": "developer"});
    assert!(check_value(&free).is_ok());
}

#[test]
fn required_fields_and_choices() {
    assert_eq!(
        error_after(|d| {
            d.as_object_mut().unwrap().remove("agent");
        })
        .field,
        "agent"
    );
    assert_eq!(error_after(|d| d["steps"] = json!([])).field, "steps");
    assert_eq!(
        error_after(|d| d["schema_version"] = json!("ATIF-v2.0")).field,
        "schema_version"
    );
    assert_eq!(
        error_after(|d| d["schema_version"] = json!(null)).field,
        "schema_version"
    );
    let error = error_after(|d| d["steps"][1]["source"] = json!("assistant"));
    assert_eq!(
        error.to_string(),
        "steps[1].source: must be one of 'system', 'user', 'agent', got 'assistant'"
    );
    let mut unversioned = valid();
    unversioned
        .as_object_mut()
        .unwrap()
        .remove("schema_version");
    assert!(
        check_value(&unversioned).is_ok(),
        "an absent version means the newest"
    );
}

#[test]
fn cross_field_rules() {
    let error = error_after(|d| d["steps"][2]["step_id"] = json!(4));
    assert_eq!(
        error.to_string(),
        "steps[2].step_id: must be 3 (step ids count from 1 in order), got 4"
    );
    let error = error_after(|d| d["steps"][1]["metrics"] = json!({"prompt_tokens": 1}));
    assert_eq!(error.field, "steps[1].metrics");
    assert!(error.message.contains("only an agent step"), "{error}");
    let error =
        error_after(|d| d["steps"][2]["observation"]["results"][0]["source_call_id"] = json!("c9"));
    assert_eq!(
        error.field,
        "steps[2].observation.results[0].source_call_id"
    );
    assert_eq!(
        error_after(|d| d["steps"][2]["llm_call_count"] = json!(0)).field,
        "steps[2].metrics"
    );
    assert_eq!(
        error_after(|d| d["steps"][1]["timestamp"] = json!("yesterday")).field,
        "steps[1].timestamp"
    );
}

#[test]
fn content_parts_and_subagents() {
    let error = error_after(|d| d["steps"][3]["message"] = json!([{"type": "image", "text": "x"}]));
    assert_eq!(error.field, "steps[3].message[0].source");
    let mut image = valid();
    image["steps"][3]["message"] =
        json!([{"type": "image", "source": {"media_type": "image/png", "path": "a.png"}}]);
    assert!(check_value(&image).is_ok());
    let error = error_after(|d| {
        d["steps"][2]["observation"]["results"][0]["subagent_trajectory_ref"] =
            json!([{"session_id": "s"}])
    });
    assert_eq!(
        error.field,
        "steps[2].observation.results[0].subagent_trajectory_ref[0]"
    );
    let child = |id: &str| json!({"trajectory_id": id, "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "user", "message": ""}]});
    let mut nested = valid();
    nested["subagent_trajectories"] = json!([child("a"), child("b")]);
    assert!(check_value(&nested).is_ok());
    nested["subagent_trajectories"] = json!([child("a"), child("a")]);
    assert_eq!(
        check_value(&nested).unwrap_err().field,
        "subagent_trajectories[1].trajectory_id"
    );
    nested["subagent_trajectories"][1]["steps"][0]["source"] = json!("tool");
    assert_eq!(
        check_value(&nested).unwrap_err().field,
        "subagent_trajectories[1].steps[0].source"
    );
}

#[test]
fn bytes_that_are_not_a_json_object() {
    assert!(check_bytes(b"{")
        .unwrap_err()
        .message
        .starts_with("is not valid JSON"));
    assert_eq!(
        check_bytes(b"[]").unwrap_err().message,
        "must be a JSON object"
    );
    assert!(check_bytes(b"{\"x\": NaN}").is_err(), "NaN is not JSON");
    let text = serde_json::to_vec(&valid()).unwrap();
    assert_eq!(
        check_bytes(&text).unwrap().rollout_id.as_deref(),
        Some("r1")
    );
}
