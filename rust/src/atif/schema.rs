//! The strict ATIF v1.0-v1.7 schema, rule by rule, as the established package checks a document before it
//! uploads it (pydantic, strict mode, unknown fields forbidden, no NaN or infinity): JSON types are never
//! coerced (`1.0` is not an integer, `"3"` is not a number, `true` is neither), every object of the format
//! refuses fields it does not define (its `extra` objects hold anything), and the cross-field rules hold:
//! step ids count from 1, agent-only fields stay on agent steps, observation results name a tool call of
//! their own step, embedded subagent trajectories have unique ids.

use super::timestamp;
use super::AtifError;
use serde_json::{Map, Value};
use std::collections::HashSet;

pub const SCHEMA_VERSIONS: [&str; 8] = [
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
];
const SOURCES: [&str; 3] = ["system", "user", "agent"];
const MEDIA_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Step fields only an agent step may carry.
const AGENT_ONLY: [&str; 5] = [
    "model_name",
    "reasoning_effort",
    "reasoning_content",
    "tool_calls",
    "metrics",
];

type Checked<T = ()> = Result<T, AtifError>;

fn fail<T>(path: &str, message: impl Into<String>) -> Checked<T> {
    Err(AtifError::new(path, message))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A short description of a JSON value for messages (`number 1.5`, `a list`, ...).
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            let short: String = s.chars().take(37).collect();
            format!("'{short}...'")
        }
        Value::String(s) => format!("'{s}'"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// The object at `path`, its fields limited to `allowed`.
fn object<'v>(
    value: &'v Value,
    path: &str,
    name: &str,
    allowed: &[&str],
) -> Checked<&'v Map<String, Value>> {
    let Value::Object(map) = value else {
        return fail(
            path,
            format!("must be an object (ATIF {name}), got {}", describe(value)),
        );
    };
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return fail(
            &join(path, key),
            format!(
                "is not a field of ATIF {name} (its fields: {})",
                allowed.join(", ")
            ),
        );
    }
    Ok(map)
}

/// The field's value, `None` when absent or null.
fn optional<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    map.get(key).filter(|v| !v.is_null())
}

fn required<'v>(map: &'v Map<String, Value>, path: &str, key: &str) -> Checked<&'v Value> {
    match map.get(key) {
        None => fail(&join(path, key), "is required"),
        Some(Value::Null) => fail(&join(path, key), "is required (null given)"),
        Some(value) => Ok(value),
    }
}

fn text<'v>(value: &'v Value, path: &str) -> Checked<&'v str> {
    value.as_str().map_or_else(
        || fail(path, format!("must be a string, got {}", describe(value))),
        Ok,
    )
}

fn integer(value: &Value, path: &str, minimum: i64) -> Checked<i64> {
    let found = match value {
        Value::Number(n) if n.is_i64() => n.as_i64(),
        // Beyond i64: still an integer, and above every minimum used here.
        Value::Number(n) if n.is_u64() => Some(i64::MAX),
        _ => None,
    };
    let Some(n) = found else {
        return fail(path, format!("must be an integer, got {}", describe(value)));
    };
    if n < minimum {
        return fail(path, format!("must be {minimum} or more, got {n}"));
    }
    Ok(n)
}

fn number(value: &Value, path: &str) -> Checked {
    // serde_json never yields NaN or infinity (they are not JSON), so every number here is finite.
    if value.is_number() {
        Ok(())
    } else {
        fail(path, format!("must be a number, got {}", describe(value)))
    }
}

fn one_of(value: &Value, path: &str, choices: &[&str]) -> Checked {
    match value.as_str() {
        Some(s) if choices.contains(&s) => Ok(()),
        _ => {
            let listed: Vec<String> = choices.iter().map(|c| format!("'{c}'")).collect();
            fail(
                path,
                format!(
                    "must be one of {}, got {}",
                    listed.join(", "),
                    describe(value)
                ),
            )
        }
    }
}

fn list<'v>(value: &'v Value, path: &str) -> Checked<&'v [Value]> {
    value.as_array().map_or_else(
        || fail(path, format!("must be a list, got {}", describe(value))),
        |a| Ok(a.as_slice()),
    )
}

fn dict(value: &Value, path: &str) -> Checked {
    if value.is_object() {
        Ok(())
    } else {
        fail(path, format!("must be an object, got {}", describe(value)))
    }
}

/// Optional fields of one JSON type.
fn optional_texts(map: &Map<String, Value>, path: &str, keys: &[&str]) -> Checked {
    for key in keys {
        if let Some(value) = optional(map, key) {
            text(value, &join(path, key))?;
        }
    }
    Ok(())
}

fn optional_integers(map: &Map<String, Value>, path: &str, keys: &[&str], minimum: i64) -> Checked {
    for key in keys {
        if let Some(value) = optional(map, key) {
            integer(value, &join(path, key), minimum)?;
        }
    }
    Ok(())
}

/// An optional list field whose every item passes `check`.
fn optional_items(
    map: &Map<String, Value>,
    path: &str,
    key: &str,
    check: impl Fn(&Value, &str) -> Checked,
) -> Checked {
    let Some(items) = optional(map, key) else {
        return Ok(());
    };
    let at = join(path, key);
    for (index, item) in list(items, &at)?.iter().enumerate() {
        check(item, &format!("{at}[{index}]"))?;
    }
    Ok(())
}

fn optional_extra(map: &Map<String, Value>, path: &str) -> Checked {
    optional(map, "extra").map_or(Ok(()), |v| dict(v, &join(path, "extra")))
}

/// A whole trajectory (the document, or one of its embedded subagent trajectories).
pub fn trajectory(value: &Value, path: &str) -> Checked {
    let map = object(
        value,
        path,
        "Trajectory",
        &[
            "schema_version",
            "session_id",
            "trajectory_id",
            "agent",
            "steps",
            "notes",
            "final_metrics",
            "continued_trajectory_ref",
            "extra",
            "subagent_trajectories",
        ],
    )?;
    if let Some(version) = map.get("schema_version") {
        // Absent means the newest; null is not a version.
        one_of(version, &join(path, "schema_version"), &SCHEMA_VERSIONS)?;
    }
    optional_texts(
        map,
        path,
        &[
            "session_id",
            "trajectory_id",
            "notes",
            "continued_trajectory_ref",
        ],
    )?;
    agent(required(map, path, "agent")?, &join(path, "agent"))?;
    let steps_path = join(path, "steps");
    let steps = list(required(map, path, "steps")?, &steps_path)?;
    if steps.is_empty() {
        return fail(&steps_path, "must hold at least one step");
    }
    for (index, item) in steps.iter().enumerate() {
        step(item, &format!("{steps_path}[{index}]"), index)?;
    }
    if let Some(metrics) = optional(map, "final_metrics") {
        final_metrics(metrics, &join(path, "final_metrics"))?;
    }
    optional_extra(map, path)?;
    if let Some(children) = optional(map, "subagent_trajectories") {
        subagents(children, &join(path, "subagent_trajectories"))?;
    }
    Ok(())
}

fn subagents(value: &Value, path: &str) -> Checked {
    let mut seen = HashSet::new();
    for (index, child) in list(value, path)?.iter().enumerate() {
        let at = format!("{path}[{index}]");
        trajectory(child, &at)?;
        let Some(id) = child.get("trajectory_id").and_then(Value::as_str) else {
            return fail(
                &join(&at, "trajectory_id"),
                "is required for an embedded subagent trajectory",
            );
        };
        if !seen.insert(id) {
            return fail(
                &join(&at, "trajectory_id"),
                format!("'{id}' is used by an earlier subagent trajectory (ids must be unique)"),
            );
        }
    }
    Ok(())
}

fn agent(value: &Value, path: &str) -> Checked {
    let map = object(
        value,
        path,
        "Agent",
        &["name", "version", "model_name", "tool_definitions", "extra"],
    )?;
    text(required(map, path, "name")?, &join(path, "name"))?;
    text(required(map, path, "version")?, &join(path, "version"))?;
    optional_texts(map, path, &["model_name"])?;
    optional_items(map, path, "tool_definitions", dict)?;
    optional_extra(map, path)
}

fn final_metrics(value: &Value, path: &str) -> Checked {
    let map = object(
        value,
        path,
        "FinalMetrics",
        &[
            "total_prompt_tokens",
            "total_completion_tokens",
            "total_cached_tokens",
            "total_cost_usd",
            "total_steps",
            "extra",
        ],
    )?;
    optional_integers(
        map,
        path,
        &[
            "total_prompt_tokens",
            "total_completion_tokens",
            "total_cached_tokens",
        ],
        i64::MIN,
    )?;
    optional_integers(map, path, &["total_steps"], 0)?;
    if let Some(cost) = optional(map, "total_cost_usd") {
        number(cost, &join(path, "total_cost_usd"))?;
    }
    optional_extra(map, path)
}

fn step(value: &Value, path: &str, index: usize) -> Checked {
    let map = object(
        value,
        path,
        "Step",
        &[
            "step_id",
            "timestamp",
            "source",
            "model_name",
            "reasoning_effort",
            "message",
            "reasoning_content",
            "tool_calls",
            "observation",
            "metrics",
            "is_copied_context",
            "llm_call_count",
            "extra",
        ],
    )?;
    let id_path = join(path, "step_id");
    let id = integer(required(map, path, "step_id")?, &id_path, 1)?;
    let expected = i64::try_from(index + 1).unwrap_or(i64::MAX);
    if id != expected {
        return fail(
            &id_path,
            format!("must be {expected} (step ids count from 1 in order), got {id}"),
        );
    }
    if let Some(stamp) = optional(map, "timestamp") {
        let at = join(path, "timestamp");
        if let Some(why) = timestamp::problem(text(stamp, &at)?) {
            return fail(
                &at,
                format!(
                    "is not an ISO 8601 date-time ({why}), got {}",
                    describe(stamp)
                ),
            );
        }
    }
    let source = required(map, path, "source")?;
    one_of(source, &join(path, "source"), &SOURCES)?;
    content(required(map, path, "message")?, &join(path, "message"))?;
    optional_texts(map, path, &["model_name", "reasoning_content"])?;
    if let Some(effort) = optional(map, "reasoning_effort") {
        if !effort.is_string() {
            number(effort, &join(path, "reasoning_effort")).map_err(|e| {
                e.with_message(format!(
                    "must be a string or a number, got {}",
                    describe(effort)
                ))
            })?;
        }
    }
    let calls = step_tool_calls(map, path)?;
    if let Some(observation) = optional(map, "observation") {
        observation_of(observation, &join(path, "observation"), &calls)?;
    }
    if let Some(metrics) = optional(map, "metrics") {
        step_metrics(metrics, &join(path, "metrics"))?;
    }
    if let Some(flag) = optional(map, "is_copied_context") {
        if !flag.is_boolean() {
            return fail(
                &join(path, "is_copied_context"),
                format!("must be true or false, got {}", describe(flag)),
            );
        }
    }
    let count = match optional(map, "llm_call_count") {
        Some(v) => Some(integer(v, &join(path, "llm_call_count"), 0)?),
        None => None,
    };
    optional_extra(map, path)?;
    step_rules(map, path, source.as_str().unwrap_or_default(), count)
}

/// The cross-field rules of one step.
fn step_rules(
    map: &Map<String, Value>,
    path: &str,
    source: &str,
    llm_calls: Option<i64>,
) -> Checked {
    if source != "agent" {
        if let Some(key) = AGENT_ONLY.iter().find(|k| optional(map, k).is_some()) {
            return fail(
                &join(path, key),
                format!("only an agent step may have it (this step's source is '{source}')"),
            );
        }
    } else if llm_calls == Some(0) {
        if let Some(key) = ["metrics", "reasoning_content"]
            .iter()
            .find(|k| optional(map, k).is_some())
        {
            return fail(&join(path, key), "must be absent when llm_call_count is 0");
        }
    }
    Ok(())
}

/// The step's tool calls, checked; their ids, for the observation's references.
fn step_tool_calls<'v>(map: &'v Map<String, Value>, path: &str) -> Checked<HashSet<&'v str>> {
    let mut ids = HashSet::new();
    let Some(calls) = optional(map, "tool_calls") else {
        return Ok(ids);
    };
    let at = join(path, "tool_calls");
    for (index, call) in list(calls, &at)?.iter().enumerate() {
        let call_path = format!("{at}[{index}]");
        let fields = object(
            call,
            &call_path,
            "ToolCall",
            &["tool_call_id", "function_name", "arguments", "extra"],
        )?;
        let id = text(
            required(fields, &call_path, "tool_call_id")?,
            &join(&call_path, "tool_call_id"),
        )?;
        text(
            required(fields, &call_path, "function_name")?,
            &join(&call_path, "function_name"),
        )?;
        dict(
            required(fields, &call_path, "arguments")?,
            &join(&call_path, "arguments"),
        )?;
        optional_extra(fields, &call_path)?;
        ids.insert(id);
    }
    Ok(ids)
}

fn observation_of(value: &Value, path: &str, call_ids: &HashSet<&str>) -> Checked {
    let map = object(value, path, "Observation", &["results"])?;
    let at = join(path, "results");
    for (index, item) in list(required(map, path, "results")?, &at)?
        .iter()
        .enumerate()
    {
        let result_path = format!("{at}[{index}]");
        let fields = object(
            item,
            &result_path,
            "ObservationResult",
            &[
                "source_call_id",
                "content",
                "subagent_trajectory_ref",
                "extra",
            ],
        )?;
        if let Some(id) = optional(fields, "source_call_id") {
            let id_path = join(&result_path, "source_call_id");
            let id = text(id, &id_path)?;
            if !call_ids.contains(id) {
                return fail(
                    &id_path,
                    format!("'{id}' is not the tool_call_id of a tool call of this step"),
                );
            }
        }
        if let Some(body) = optional(fields, "content") {
            content(body, &join(&result_path, "content"))?;
        }
        if let Some(refs) = optional(fields, "subagent_trajectory_ref") {
            subagent_refs(refs, &join(&result_path, "subagent_trajectory_ref"))?;
        }
        optional_extra(fields, &result_path)?;
    }
    Ok(())
}

fn subagent_refs(value: &Value, path: &str) -> Checked {
    for (index, item) in list(value, path)?.iter().enumerate() {
        let at = format!("{path}[{index}]");
        let map = object(
            item,
            &at,
            "SubagentTrajectoryRef",
            &["trajectory_id", "session_id", "trajectory_path", "extra"],
        )?;
        optional_texts(
            map,
            &at,
            &["trajectory_id", "session_id", "trajectory_path"],
        )?;
        optional_extra(map, &at)?;
        if optional(map, "trajectory_id").is_none() && optional(map, "trajectory_path").is_none() {
            return fail(
                &at,
                "must set trajectory_id or trajectory_path (a session_id alone does not resolve)",
            );
        }
    }
    Ok(())
}

fn step_metrics(value: &Value, path: &str) -> Checked {
    let map = object(
        value,
        path,
        "Metrics",
        &[
            "prompt_tokens",
            "completion_tokens",
            "cached_tokens",
            "cost_usd",
            "prompt_token_ids",
            "completion_token_ids",
            "logprobs",
            "extra",
        ],
    )?;
    optional_integers(
        map,
        path,
        &["prompt_tokens", "completion_tokens", "cached_tokens"],
        i64::MIN,
    )?;
    if let Some(cost) = optional(map, "cost_usd") {
        number(cost, &join(path, "cost_usd"))?;
    }
    for key in ["prompt_token_ids", "completion_token_ids"] {
        optional_items(map, path, key, |id, at| {
            integer(id, at, i64::MIN).map(|_| ())
        })?;
    }
    optional_items(map, path, "logprobs", number)?;
    optional_extra(map, path)
}

/// A message or observation content: a string, or a list of text and image parts.
fn content(value: &Value, path: &str) -> Checked {
    if value.is_string() {
        return Ok(());
    }
    let Value::Array(parts) = value else {
        return fail(
            path,
            format!(
                "must be a string or a list of content parts, got {}",
                describe(value)
            ),
        );
    };
    for (index, part) in parts.iter().enumerate() {
        let at = format!("{path}[{index}]");
        let map = object(part, &at, "ContentPart", &["type", "text", "source"])?;
        let kind = required(map, &at, "type")?;
        one_of(kind, &join(&at, "type"), &["text", "image"])?;
        let (needed, refused) = if kind == "text" {
            ("text", "source")
        } else {
            ("source", "text")
        };
        if optional(map, needed).is_none() {
            return fail(
                &join(&at, needed),
                format!("is required when type is '{}'", kind.as_str().unwrap_or("")),
            );
        }
        if optional(map, refused).is_some() {
            return fail(
                &join(&at, refused),
                format!(
                    "is not allowed when type is '{}'",
                    kind.as_str().unwrap_or("")
                ),
            );
        }
        match map.get("text") {
            Some(t) if !t.is_null() => {
                text(t, &join(&at, "text"))?;
            }
            _ => image_source(&map["source"], &join(&at, "source"))?,
        }
    }
    Ok(())
}

fn image_source(value: &Value, path: &str) -> Checked {
    let map = object(value, path, "ImageSource", &["media_type", "path"])?;
    one_of(
        required(map, path, "media_type")?,
        &join(path, "media_type"),
        &MEDIA_TYPES,
    )?;
    text(required(map, path, "path")?, &join(path, "path"))?;
    Ok(())
}
