//! The ATIF document of one `osmosis eval run` record, built as `osmosis_ai.rollout.trajectory.build` builds
//! it (that module is the reference: every rule here is one of its rules, in its order, so the document's
//! keys come out in the same order). Python's truthiness and `dict` updates are mirrored on JSON values;
//! the document borrows the record's text (a conversation is copied once, when it is written).
//!
//! [`eval_run_document`] returns `None` for what it does not build byte for byte as Python would (a
//! message's own timestamp, a role or an id that is not text, a tool call's arguments that are not valid
//! JSON, integer sums past 64 bits): the caller then builds that document in Python.

use super::json_tree::{Json, Obj};
use std::borrow::Cow;

/// The established package's agent name (`PRODUCER` in Python).
pub const PRODUCER: &str = "osmosis-rollout-sdk";
const STAMP_KEYS: [&str; 3] = ["created_at", "timestamp", "completed_at"];
const USAGE_DETAILS: [&str; 4] = [
    "prompt_tokens_details",
    "input_tokens_details",
    "completion_tokens_details",
    "output_tokens_details",
];

static EMPTY: Obj<'static> = Obj::new();
static NO_ROLE: Json<'static> = Json::Str(Cow::Borrowed(""));

/// `mapping.get(key)`: a JSON null reads as missing.
fn get<'a>(map: &'a Obj<'a>, key: &str) -> Option<&'a Json<'a>> {
    map.get(key).filter(|v| !v.is_null())
}

/// `mapping.get(first) or mapping.get(second)`.
fn either<'a>(map: &'a Obj<'a>, first: &str, second: &str) -> Option<&'a Json<'a>> {
    match map.get(first) {
        Some(v) if v.truthy() => Some(v),
        _ => get(map, second),
    }
}

/// The conversation a record's trajectory is built from (`_conversation`), when it has one.
pub fn conversation<'a>(record: &'a Obj<'a>) -> Option<&'a Json<'a>> {
    if record.get("trajectory") == Some(&Json::Bool(false)) {
        return None;
    }
    either(record, "messages", "final_messages").filter(|v| v.truthy())
}

fn is_int(value: &Json<'_>) -> bool {
    value.as_i64().is_some()
}

fn is_number(value: &Json<'_>) -> bool {
    is_int(value) || value.is_float()
}

fn filled_object<'a>(value: Option<&'a Json<'a>>) -> Option<&'a Obj<'a>> {
    value.and_then(Json::as_object).filter(|m| !m.is_empty())
}

fn metric_passes(key: &str, value: &Json<'_>) -> bool {
    let all = |test: fn(&Json<'_>) -> bool| value.as_array().is_some_and(|v| v.iter().all(test));
    match key {
        "prompt_tokens" | "completion_tokens" | "cached_tokens" => is_int(value),
        "cost_usd" => is_number(value),
        "prompt_token_ids" | "completion_token_ids" => all(is_int),
        "logprobs" => all(is_number),
        "extra" => filled_object(Some(value)).is_some(),
        _ => false,
    }
}

/// The ATIF Metrics fields of one call's numbers (`_call_metrics`).
fn call_metrics<'a>(entry: &'a Obj<'a>) -> Obj<'a> {
    let mut metrics = Obj::new();
    for (key, value) in entry.iter() {
        if metric_passes(key, value) {
            metrics.insert(key, Json::Ref(value));
        }
    }
    metrics
}

/// Compact JSON text of a value (`_json_text`), or None when the text writer cannot match orjson.
fn json_text(value: &Json<'_>) -> Option<String> {
    let mut out = Vec::new();
    super::json_text::compact(value, &mut out).then_some(())?;
    String::from_utf8(out).ok()
}

/// Message content as ATIF text (`_text`).
fn text<'a>(content: Option<&'a Json<'a>>) -> Option<Json<'a>> {
    match content {
        None | Some(Json::Null) => Some(Json::from("")),
        Some(s @ Json::Str(_)) => Some(Json::Ref(s)),
        Some(Json::Array(items)) => {
            let parts: Vec<&Obj<'a>> = items.iter().filter_map(Json::as_object).collect();
            let text_part = |p: &&Obj<'a>| p.get("type").and_then(Json::as_str) == Some("text");
            if parts.is_empty() || !parts.iter().all(text_part) {
                return json_text(content?).map(Json::from);
            }
            let mut joined = Vec::with_capacity(parts.len());
            for part in parts {
                joined.push(match part.get("text") {
                    None => "",
                    Some(Json::Null) => "None",
                    Some(Json::Str(s)) => s,
                    Some(_) => return None,
                });
            }
            Some(Json::from(joined.join("\n")))
        }
        Some(other) => json_text(other).map(Json::from),
    }
}

/// `str(value or default)` where the value must already be text (another type's `str()` is Python's).
fn label<'a>(value: Option<&'a Json<'a>>, default: String) -> Option<Json<'a>> {
    match value {
        Some(v) if v.truthy() => v.as_str().is_some().then_some(Json::Ref(v)),
        _ => Some(Json::from(default)),
    }
}

fn raw_only<'a>(raw: &'a Json<'a>) -> Json<'a> {
    let mut map = Obj::new();
    map.insert("_raw", Json::Ref(raw));
    map.into()
}

fn arguments<'a>(raw: Option<&'a Json<'a>>) -> Option<Json<'a>> {
    Some(match raw {
        Some(map @ Json::Object(_)) => Json::Ref(map),
        Some(text @ Json::Str(s)) if !s.is_empty() => match Json::parse(s) {
            Some(parsed @ Json::Object(_)) => parsed.into_owned(),
            Some(_) => raw_only(text),
            None => return None, // orjson's verdict on text this parser refuses is Python's to give
        },
        _ => Obj::new().into(),
    })
}

fn tool_calls<'a>(raw: &'a Json<'a>) -> Option<Vec<Json<'a>>> {
    let Some(items) = raw.as_array() else {
        return Some(Vec::new());
    };
    let mut calls = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Some(item) = item.as_object() else {
            continue;
        };
        let function = item
            .get("function")
            .and_then(Json::as_object)
            .unwrap_or(&EMPTY);
        let mut call = Obj::new();
        call.insert(
            "tool_call_id",
            label(item.get("id"), format!("call_{index}"))?,
        );
        call.insert(
            "function_name",
            label(function.get("name"), "unknown".into())?,
        );
        call.insert("arguments", arguments(function.get("arguments"))?);
        calls.push(call.into());
    }
    Some(calls)
}

/// A raw completion response kept under the message's `extra.response`.
fn response<'a>(message: &'a Obj<'a>) -> Option<&'a Obj<'a>> {
    message.get("extra")?.get("response")?.as_object()
}

fn usage_metrics<'a>(message: &'a Obj<'a>) -> Obj<'a> {
    let usage = match message.get("usage").and_then(Json::as_object) {
        Some(usage) => usage,
        None => match response(message)
            .and_then(|r| r.get("usage"))
            .and_then(Json::as_object)
        {
            Some(usage) => usage,
            None => return Obj::new(),
        },
    };
    let mut found = usage.clone();
    for (name, alias) in [
        ("prompt_tokens", "input_tokens"),
        ("completion_tokens", "output_tokens"),
    ] {
        if get(&found, name).is_none() {
            found.insert(name, usage.get(alias).cloned().unwrap_or(Json::Null));
        }
    }
    let details = either(usage, "prompt_tokens_details", "input_tokens_details");
    if get(&found, "cached_tokens").is_none() {
        if let Some(details) = details.and_then(Json::as_object) {
            found.insert(
                "cached_tokens",
                details.get("cached_tokens").cloned().unwrap_or(Json::Null),
            );
        }
    }
    let mut extra = Obj::new();
    for key in USAGE_DETAILS {
        if let Some(details) = filled_object(usage.get(key)) {
            extra.insert(key, Json::Object(details.clone()));
        }
    }
    found.insert("extra", extra);
    found
        .into_entries()
        .filter(|(key, value)| metric_passes(key, value))
        .collect()
}

/// The model of an agent message (`_model_name`); None inside when it names none.
fn model_name<'a>(message: &'a Obj<'a>) -> Option<Option<Json<'a>>> {
    let mut model = either(message, "model", "model_name");
    if !model.is_some_and(Json::truthy) {
        model = response(message).and_then(|r| get(r, "model"));
    }
    match model {
        Some(v) if v.truthy() => v.as_str().is_some().then_some(Some(Json::Ref(v))),
        _ => Some(None),
    }
}

fn source_of(role: &str) -> Option<&'static str> {
    match role {
        "system" | "developer" => Some("system"),
        "user" => Some("user"),
        "assistant" => Some("agent"),
        _ => None,
    }
}

fn stamped(message: &Obj<'_>) -> bool {
    STAMP_KEYS.iter().any(|k| get(message, k).is_some())
        || message
            .get("extra")
            .and_then(Json::as_object)
            .is_some_and(|e| get(e, "timestamp").is_some())
}

/// One message as a step (`_step`), or None when Python must build it.
fn step<'a>(message: &'a Obj<'a>, role: &'a Json<'a>, step_id: usize) -> Option<Obj<'a>> {
    if stamped(message) {
        return None; // ISO 8601 times are Python's datetime's to write
    }
    let mut step = Obj::new();
    step.insert("step_id", step_id);
    let mut extra = Obj::new();
    let source = source_of(role.as_str().unwrap_or("")).unwrap_or_else(|| {
        extra.insert("original_role", Json::Ref(role));
        "user"
    });
    step.insert("source", source);
    step.insert("message", text(message.get("content"))?);
    let reasoning = match get(message, "reasoning_content") {
        None => None,
        Some(s @ Json::Str(_)) => Some(Json::Ref(s)),
        Some(other) => Some(Json::from(json_text(other)?)),
    };
    let calls = match message.get("tool_calls") {
        Some(raw) if raw.truthy() => tool_calls(raw)?,
        _ => Vec::new(),
    };
    if source == "agent" {
        if let Some(model) = model_name(message)? {
            step.insert("model_name", model);
        }
        if let Some(reasoning) = reasoning {
            step.insert("reasoning_content", reasoning);
        }
        if !calls.is_empty() {
            step.insert("tool_calls", calls);
        }
        let metrics = usage_metrics(message);
        if !metrics.is_empty() {
            step.insert("metrics", metrics);
            step.insert("llm_call_count", 1usize);
        }
    } else {
        if let Some(reasoning) = reasoning {
            extra.insert("reasoning_content", reasoning);
        }
        if !calls.is_empty() {
            extra.insert("tool_calls", calls);
        }
    }
    if !extra.is_empty() {
        step.insert("extra", extra);
    }
    Some(step)
}

fn is_agent(step: &Obj<'_>) -> bool {
    step.get("source").and_then(Json::as_str) == Some("agent")
}

fn calls_name(step: &Obj<'_>, id: &str) -> bool {
    let calls = step.get("tool_calls").and_then(Json::as_array);
    calls.is_some_and(|c| {
        c.iter()
            .any(|c| c.get("tool_call_id").and_then(Json::as_str) == Some(id))
    })
}

/// A tool result joins the observation of the agent step before it (`_observe`).
fn observe<'a>(steps: &mut Vec<Obj<'a>>, message: &'a Obj<'a>, role: &'a Json<'a>) -> Option<()> {
    let call_id = get(message, "tool_call_id");
    let content = text(message.get("content"))?;
    let target = steps.last_mut().filter(|s| is_agent(s));
    let mut result = Obj::new();
    match call_id {
        Some(id @ Json::Str(s)) if target.as_ref().is_some_and(|t| calls_name(t, s)) => {
            result.insert("source_call_id", Json::Ref(id));
            result.insert("content", content);
        }
        Some(other) => {
            result.insert("content", content);
            let mut extra = Obj::new();
            extra.insert("tool_call_id", Json::Ref(other));
            result.insert("extra", extra);
        }
        None => result.insert("content", content),
    }
    match target {
        Some(target) => {
            if target.get("observation").is_none() {
                let mut observation = Obj::new();
                observation.insert("results", Vec::new());
                target.insert("observation", observation);
            }
            match target.get_mut("observation")? {
                Json::Object(observation) => match observation.get_mut("results")? {
                    Json::Array(results) => results.push(result.into()),
                    _ => return None,
                },
                _ => return None,
            }
        }
        None => {
            let mut system = Obj::new();
            system.insert("step_id", steps.len() + 1);
            system.insert("source", "system");
            system.insert("message", "");
            let mut observation = Obj::new();
            observation.insert("results", vec![Json::from(result)]);
            system.insert("observation", observation);
            let mut extra = Obj::new();
            extra.insert("original_role", Json::Ref(role));
            system.insert("extra", extra);
            steps.push(system);
        }
    }
    Some(())
}

fn steps<'a>(messages: &'a [Json<'a>]) -> Option<Vec<Obj<'a>>> {
    let mut steps = Vec::with_capacity(messages.len());
    for message in messages {
        let Some(message) = message.as_object() else {
            continue;
        };
        let role = match message.get("role") {
            None => &NO_ROLE,
            Some(role @ Json::Str(_)) => role,
            Some(_) => return None, // str() of another type is Python's
        };
        let name = role.as_str().unwrap_or("");
        if name == "tool" || name == "function" {
            observe(&mut steps, message, role)?;
            continue;
        }
        let content = message.get("content").filter(|c| matches!(c, Json::Str(_)));
        match (message.len(), content, source_of(name)) {
            (2, Some(content), Some(source)) => {
                let mut step = Obj::new();
                step.insert("step_id", steps.len() + 1);
                step.insert("source", source);
                step.insert("message", Json::Ref(content));
                steps.push(step);
            }
            _ => steps.push(step(message, role, steps.len() + 1)?),
        }
    }
    Some(steps)
}

/// Per-call metrics onto the agent steps in order when the counts match (`_attribute`); else the calls,
/// without their nulls, to keep aside.
fn attribute<'a>(steps: &mut [Obj<'a>], calls: &[&'a Obj<'a>]) -> Option<Vec<Json<'a>>> {
    let agent: Vec<&mut Obj<'a>> = steps.iter_mut().filter(|s| is_agent(s)).collect();
    if agent.len() != calls.len() {
        let kept = calls.iter().map(|c| {
            let mut fields = Obj::new();
            for (k, v) in c.iter().filter(|(_, v)| !v.is_null()) {
                fields.insert(k, Json::Ref(v));
            }
            Json::from(fields)
        });
        return Some(kept.collect());
    }
    for (step, call) in agent.into_iter().zip(calls) {
        let reported = call_metrics(call);
        if !reported.is_empty() {
            let mut metrics = step
                .get("metrics")
                .and_then(Json::as_object)
                .cloned()
                .unwrap_or_default();
            for (key, value) in reported.into_entries() {
                metrics.insert(key, value);
            }
            step.insert("metrics", metrics);
        }
        if let Some(model) = call
            .get("model_name")
            .filter(|m| m.as_str().is_some_and(|s| !s.is_empty()))
        {
            step.insert("model_name", Json::Ref(model));
        }
        step.insert("llm_call_count", 1usize);
    }
    None
}

/// A running total as Python keeps it: an int until a float joins it.
#[derive(Clone, Copy)]
enum Total {
    Int(i128),
    Float(f64),
}

impl Total {
    fn add(self, value: &Json<'_>) -> Total {
        let float = match value {
            Json::Float(f) => *f,
            _ => f64::NAN,
        };
        match (self, value.as_i64()) {
            (Total::Int(a), Some(b)) => Total::Int(a + i128::from(b)),
            (Total::Int(a), None) => Total::Float(a as f64 + float),
            (Total::Float(a), Some(b)) => Total::Float(a + b as f64),
            (Total::Float(a), None) => Total::Float(a + float),
        }
    }
}

fn total_name(key: &str) -> Option<&'static str> {
    match key {
        "prompt_tokens" => Some("total_prompt_tokens"),
        "completion_tokens" => Some("total_completion_tokens"),
        "cached_tokens" => Some("total_cached_tokens"),
        "cost_usd" => Some("total_cost_usd"),
        _ => None,
    }
}

/// Reported totals win; else the per-call metrics summed; always the step count (`_final_metrics`).
fn final_metrics<'a>(
    calls: &[&'a Obj<'a>],
    reported: Option<Obj<'a>>,
    step_count: usize,
) -> Option<Obj<'a>> {
    let mut totals = reported
        .filter(|r| r.iter().all(|(_, v)| is_int(v)))
        .unwrap_or_default();
    if totals.is_empty() {
        let mut sums: Vec<(&'static str, Total)> = Vec::new();
        for call in calls {
            for (key, value) in call.iter() {
                let Some(name) = total_name(key) else {
                    continue;
                };
                if !(is_int(value) || (key == "cost_usd" && is_number(value))) {
                    continue;
                }
                match sums.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, total)) => *total = total.add(value),
                    None => sums.push((name, Total::Int(0).add(value))),
                }
            }
        }
        for (name, total) in sums {
            let value = match total {
                Total::Int(i) => match i64::try_from(i) {
                    Ok(i) => Json::Int(i),
                    Err(_) => continue, // Python drops a sum past 64 bits too
                },
                Total::Float(f) if f.is_finite() => Json::Float(f),
                Total::Float(_) => return None,
            };
            totals.insert(name, value);
        }
    }
    totals.insert("total_steps", step_count);
    Some(totals)
}

/// The record's `llm_calls` when it has any (a list of objects), `Some(empty)` when it has none.
fn llm_calls<'a>(record: &'a Obj<'a>) -> Option<Vec<&'a Obj<'a>>> {
    match record.get("llm_calls") {
        Some(calls) if calls.truthy() => calls.as_array()?.iter().map(Json::as_object).collect(),
        _ => Some(Vec::new()),
    }
}

/// `extra.osmosis`'s fields from the record, in order (those not null).
fn context<'a>(record: &'a Obj<'a>) -> Option<Vec<(&'static str, Json<'a>)>> {
    let extra_fields = match get(record, "request_extra_fields") {
        Some(fields) => Json::Ref(fields),
        None => {
            let mut fields = Obj::new();
            fields.insert("row_index", Json::Ref(record.get("row_index")?));
            fields.insert("run_index", Json::Ref(record.get("run_index")?));
            fields.into()
        }
    };
    let metrics = record.get("metrics").filter(|m| m.truthy()).map(Json::Ref);
    let field = |key: &str| record.get(key).map(Json::Ref);
    let pairs = [
        ("label", field("label")),
        ("reward", field("reward")),
        ("sample_metrics", metrics),
        ("request_metadata", field("request_metadata")),
        ("request_extra_fields", Some(extra_fields)),
        ("status", field("status")),
        ("error_type", field("error_type")),
    ];
    Some(
        pairs
            .into_iter()
            .filter_map(|(k, v)| v.filter(|v| !v.is_null()).map(|v| (k, v)))
            .collect(),
    )
}

/// The totals a 0.2 agent loop's record reports (`prompt_tokens`, `completion_tokens`) when it has no calls.
fn reported_totals<'a>(record: &'a Obj<'a>, calls: &[&'a Obj<'a>]) -> Option<Obj<'a>> {
    if !calls.is_empty() {
        return None;
    }
    let prompt = get(record, "prompt_tokens")?;
    let completion = record
        .get("completion_tokens")
        .filter(|v| v.truthy())
        .cloned()
        .unwrap_or(Json::Int(0));
    let mut totals = Obj::new();
    totals.insert("total_prompt_tokens", Json::Ref(prompt));
    totals.insert("total_completion_tokens", completion);
    Some(totals)
}

/// The ATIF document of a record with a conversation (`trajectory_document`), or None when Python must
/// build it.
pub fn eval_run_document<'a>(
    record: &'a Obj<'a>,
    model_name: Option<&'a str>,
    version: &'a str,
) -> Option<Json<'a>> {
    let messages = conversation(record)?.as_array()?;
    let rollout_id = record
        .get("rollout_id")
        .filter(|id| id.as_str().is_some())?;
    let calls = llm_calls(record)?;
    let context = context(record)?;
    let mut steps = steps(messages)?;
    if steps.is_empty() {
        return None;
    }
    let unmatched = if calls.is_empty() {
        None
    } else {
        attribute(&mut steps, &calls)
    };
    let final_metrics = final_metrics(&calls, reported_totals(record, &calls), steps.len())?;
    let mut agent = Obj::new();
    agent.insert("name", PRODUCER);
    agent.insert("version", version);
    if let Some(model) = model_name.filter(|m| !m.is_empty()) {
        agent.insert("model_name", model);
    }
    let mut osmosis = Obj::new();
    osmosis.insert("rollout_id", Json::Ref(rollout_id));
    for (key, value) in context {
        osmosis.insert(key, value);
    }
    if let Some(unmatched) = unmatched.filter(|u| !u.is_empty()) {
        osmosis.insert("unmatched_llm_call_metrics", unmatched);
    }
    let mut document = Obj::new();
    document.insert("schema_version", super::WRITTEN_VERSION);
    document.insert("session_id", Json::Ref(rollout_id));
    document.insert("trajectory_id", Json::Ref(rollout_id));
    document.insert("agent", agent);
    document.insert(
        "steps",
        steps.into_iter().map(Json::from).collect::<Vec<_>>(),
    );
    document.insert("final_metrics", final_metrics);
    let mut extra = Obj::new();
    extra.insert("osmosis", osmosis);
    document.insert("extra", extra);
    Some(document.into())
}
