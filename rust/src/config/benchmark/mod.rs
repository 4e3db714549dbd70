//! Benchmark configs (`configs/benchmark/*.toml`, `osmosis benchmark submit`): `[experiment] benchmark`,
//! `[tasks]`, one to eight `[[agents]]` with their `[agents.model]` and `[agents.env]`, `[execution]`,
//! `[verifier] required`, `[secrets] required` and `[env]`; unknown keys are reported everywhere.
//!
//! The platform injects a secret's value under the secret's own name, so a name that is also a literal
//! environment variable of an agent would be overwritten: those collisions are reported here, per agent,
//! as are the runner's reserved names and the harnesses' fixed key variables.

mod collisions;

use super::rules::did_you_mean;
use super::schema::{
    Kind, Rule, AGENTS, BENCHMARK_EXPERIMENT, ENV, EXECUTION, SECRETS, TASKS, VERIFIER,
};
use super::sections::{
    check_env, check_secrets, check_section, check_top_level, check_value, env_lines,
    section_table, NameList,
};
use super::values::{describe, in_file_order, lookup};
use super::Checker;
use collisions::{check_collisions, Agent};
use serde_json::{Map, Value};
use std::collections::HashMap;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

const MAX_AGENTS: usize = 8;
const MAX_NAMES: usize = 16;
/// `[agents.model]` per `type`: its keys, all required but `extra_headers`.
const MODEL_TYPES: [(&str, &[&str]); 3] = [
    ("provider", &["model", "api_key_secret"]),
    ("endpoint", &["base_url", "model", "api_key_secret"]),
    ("hosted", &["base_model", "lora_model_name"]),
];

/// A string value, reported when it is not one.
fn text(checker: &mut Checker<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> Option<String> {
    check_value(checker, key, Rule::Text, f64::INFINITY, value)
        .and_then(|v| v.as_str().map(str::to_string))
}

fn check_tasks(checker: &mut Checker<'_>, table: &DeTable<'_>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        let dotted = format!("{TASKS}.{name}");
        match name {
            "categories" | "task_names" => {
                let DeValue::Array(items) = value.get_ref() else {
                    let got = describe(checker, value);
                    checker.report(
                        value.span(),
                        &dotted,
                        format!("must be a list of names, got {got}"),
                    );
                    continue;
                };
                let mut names = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if let Some(text) = text(checker, &format!("{dotted}[{i}]"), item) {
                        names.push(Value::String(text));
                    }
                }
                out.insert(name.to_string(), Value::Array(names));
            }
            "task_set" => match value.get_ref().as_str() {
                // Only "parity": the platform runs every task for a task set it does not know.
                Some("parity") => {
                    out.insert(name.to_string(), Value::String("parity".into()));
                }
                _ => {
                    let got = describe(checker, value);
                    checker.report(
                        value.span(),
                        &dotted,
                        format!("must be \"parity\" (the only task set), got {got}"),
                    );
                }
            },
            _ => {
                let suggestion = did_you_mean(name, ["categories", "task_names", "task_set"]);
                checker.suggest(
                    key.span(),
                    &dotted,
                    "Unrecognized key",
                    suggestion.map(str::to_string),
                );
            }
        }
    }
    out
}

fn check_model(
    checker: &mut Checker<'_>,
    prefix: &str,
    value: &Spanned<DeValue<'_>>,
    agent: &mut Agent,
) -> Value {
    let DeValue::Table(table) = value.get_ref() else {
        let got = describe(checker, value);
        checker.report(
            value.span(),
            prefix,
            format!("must be a table with a type, got {got}"),
        );
        return Value::Null;
    };
    let kind = lookup(table, "type").and_then(|(_, v)| v.get_ref().as_str().map(str::to_string));
    let Some((model_type, keys)) = MODEL_TYPES
        .iter()
        .find(|(t, _)| Some(*t) == kind.as_deref())
    else {
        let span = lookup(table, "type").map_or(value.span(), |(_, v)| v.span());
        checker.report(
            span,
            &format!("{prefix}.type"),
            "must be \"provider\", \"endpoint\" or \"hosted\"",
        );
        return Value::Null;
    };
    agent.model_type = Some(model_type.to_string());
    let mut out = Map::new();
    out.insert("type".into(), Value::String(model_type.to_string()));
    for (key, item) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        let dotted = format!("{prefix}.{name}");
        if name == "type" {
            continue;
        }
        if name == "extra_headers" && *model_type == "endpoint" {
            out.insert(name.into(), check_headers(checker, &dotted, item));
        } else if name == "api_key_secret" && keys.contains(&name) {
            if let Some(v) = check_value(checker, &dotted, Rule::SecretName, f64::INFINITY, item) {
                agent.model_secret = v.as_str().map(|s| (s.to_string(), item.span()));
                out.insert(name.into(), v);
            }
        } else if keys.contains(&name) {
            if let Some(v) = text(checker, &dotted, item) {
                out.insert(name.into(), Value::String(v));
            }
        } else {
            let suggestion = did_you_mean(name, keys.iter().copied()).map(str::to_string);
            let message = format!("Unrecognized key for a {model_type} model");
            checker.suggest(key.span(), &dotted, message, suggestion);
        }
    }
    for key in keys.iter().filter(|k| lookup(table, k).is_none()) {
        let message = format!("missing required key '{key}' for a {model_type} model");
        checker.report(value.span(), &format!("{prefix}.{key}"), message);
    }
    Value::Object(out)
}

fn check_headers(checker: &mut Checker<'_>, dotted: &str, value: &Spanned<DeValue<'_>>) -> Value {
    let DeValue::Table(table) = value.get_ref() else {
        let got = describe(checker, value);
        checker.report(
            value.span(),
            dotted,
            format!("must be a table of header names to strings, got {got}"),
        );
        return Value::Null;
    };
    let mut out = Map::new();
    for (key, item) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        if name.eq_ignore_ascii_case("authorization") {
            let message =
                "must not set Authorization; the endpoint's key comes from api_key_secret";
            checker.report(key.span(), &format!("{dotted}.{name}"), message);
        } else if let Some(v) = text(checker, &format!("{dotted}.{name}"), item) {
            out.insert(name.to_string(), Value::String(v));
        }
    }
    Value::Object(out)
}

fn check_agent(
    checker: &mut Checker<'_>,
    index: usize,
    item: &Spanned<DeValue<'_>>,
) -> (Value, Agent) {
    let prefix = format!("{AGENTS}[{index}]");
    let mut agent = Agent {
        harness: None,
        harness_secret: None,
        model_type: None,
        model_secret: None,
        env: Vec::new(),
        span: item.span(),
    };
    let DeValue::Table(table) = item.get_ref() else {
        let got = describe(checker, item);
        checker.report(
            item.span(),
            &prefix,
            format!("must be a table ([[agents]]), got {got}"),
        );
        return (Value::Null, agent);
    };
    let mut out = Map::new();
    for (key, value) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        let dotted = format!("{prefix}.{name}");
        match name {
            "harness" => {
                agent.harness = text(checker, &dotted, value);
                if let Some(h) = &agent.harness {
                    out.insert(name.into(), Value::String(h.clone()));
                }
            }
            "harness_api_key_secret" => {
                if let Some(v) =
                    check_value(checker, &dotted, Rule::SecretName, f64::INFINITY, value)
                {
                    agent.harness_secret = v.as_str().map(|s| (s.to_string(), value.span()));
                    out.insert(name.into(), v);
                }
            }
            "model" => {
                let model = check_model(checker, &dotted, value, &mut agent);
                out.insert(name.into(), model);
            }
            "env" => match value.get_ref() {
                DeValue::Table(env) => {
                    let checked = check_env(checker, env, &dotted);
                    agent.env = checked.keys().cloned().collect();
                    out.insert(name.into(), Value::Object(checked));
                }
                _ => {
                    let got = describe(checker, value);
                    checker.report(value.span(), &dotted, format!("must be a table, got {got}"));
                }
            },
            _ => {
                let keys = ["harness", "harness_api_key_secret", "model", "env"];
                let suggestion = did_you_mean(name, keys).map(str::to_string);
                checker.suggest(key.span(), &dotted, "Unrecognized key", suggestion);
            }
        }
    }
    if lookup(table, "model").is_none() {
        checker.report(
            item.span(),
            &format!("{prefix}.model"),
            "missing [agents.model] (provider, endpoint or hosted)",
        );
    }
    out.entry("env")
        .or_insert_with(|| Value::Object(Map::new()));
    (Value::Object(out), agent)
}

fn check_agents(checker: &mut Checker<'_>, root: &DeTable<'_>) -> (Vec<Value>, Vec<Agent>) {
    let Some((key, value)) = lookup(root, AGENTS) else {
        checker.report(
            0..0,
            AGENTS,
            "missing [[agents]]: a benchmark run needs one to eight agents",
        );
        return (Vec::new(), Vec::new());
    };
    let DeValue::Array(items) = value.get_ref() else {
        let got = describe(checker, value);
        checker.report(
            key.span(),
            AGENTS,
            format!("must be an array of tables ([[agents]]), got {got}"),
        );
        return (Vec::new(), Vec::new());
    };
    if items.is_empty() || items.len() > MAX_AGENTS {
        let message = format!(
            "has {} agents; a benchmark run takes 1 to {MAX_AGENTS}",
            items.len()
        );
        checker.report(key.span(), AGENTS, message);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| check_agent(checker, i, item))
        .unzip()
}

fn names(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Checks a benchmark document; returns the normalised config (meaningful only when no issue was reported).
pub(super) fn check_document(checker: &mut Checker<'_>, root: &DeTable<'_>) -> Value {
    check_top_level(checker, root, Kind::Benchmark);
    let mut out = Map::new();
    let experiment = match section_table(checker, root, BENCHMARK_EXPERIMENT.name) {
        Some((header, table)) => check_section(
            checker,
            Kind::Benchmark,
            &BENCHMARK_EXPERIMENT,
            header,
            table,
        ),
        None => {
            if lookup(root, BENCHMARK_EXPERIMENT.name).is_none() {
                checker.report(
                    0..0,
                    "experiment",
                    "missing [experiment] section (benchmark = \"<key>\")",
                );
            }
            Map::new()
        }
    };
    out.insert("experiment".into(), Value::Object(experiment));
    let tasks =
        section_table(checker, root, TASKS).map_or_else(Map::new, |(_, t)| check_tasks(checker, t));
    out.insert(TASKS.into(), Value::Object(tasks));
    let (execution, judge) = match section_table(checker, root, EXECUTION.name) {
        Some((header, table)) => {
            let judge = lookup(table, "judge_api_key_secret")
                .and_then(|(_, v)| v.get_ref().as_str().map(|s| (s.to_string(), v.span())));
            (
                check_section(checker, Kind::Benchmark, &EXECUTION, header, table),
                judge,
            )
        }
        None => (Map::new(), None),
    };
    out.insert(EXECUTION.name.into(), Value::Object(execution));
    let (env, lines) = match section_table(checker, root, ENV) {
        Some((_, table)) => (check_env(checker, table, ENV), env_lines(checker, table)),
        None => (Map::new(), HashMap::new()),
    };
    let mut lists = Map::new();
    for section in [VERIFIER, SECRETS] {
        let list = NameList {
            section,
            needs_key: false,
            max: MAX_NAMES,
        };
        let checked = section_table(checker, root, section).map_or_else(Vec::new, |(header, t)| {
            check_secrets(checker, header, t, &lines, &list)
        });
        lists.insert(section.into(), Value::Array(checked));
    }
    let (agents, seen) = check_agents(checker, root);
    let global: Vec<String> = env.keys().cloned().collect();
    let verifier = names(lists[VERIFIER].as_array().map_or(&[][..], Vec::as_slice));
    check_collisions(checker, &seen, &global, judge, &verifier);
    out.insert(AGENTS.into(), Value::Array(agents));
    out.insert(ENV.into(), Value::Object(env));
    out.extend(lists);
    Value::Object(out)
}
