//! The checks of each section, against the tables of `schema.rs`.

use super::rules::{
    did_you_mean, entrypoint_problem, is_commit_sha, is_env_name, is_secret_name,
    rollout_name_problem, RESERVED_ENV_PREFIX,
};
use super::schema::{Field, Kind, Rule, Section, ADVANCED, ENV, SECRETS};
use super::values::{
    describe, in_file_order, integer, lookup, number, table_to_json, to_json, Got,
};
use super::Checker;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Checks one value against its rule; returns its JSON form when it passes.
pub(super) fn check_value(
    checker: &mut Checker<'_>,
    key: &str,
    rule: Rule,
    max: f64,
    value: &Spanned<DeValue<'_>>,
) -> Option<Value> {
    let span = value.span();
    // Described only when a message needs it: most values pass.
    let got = Got(checker, value);
    let problem: Option<String> = match rule {
        Rule::Text
        | Rule::RolloutName
        | Rule::Entrypoint
        | Rule::Branch
        | Rule::CommitSha
        | Rule::SecretName => {
            let Some(text) = value.get_ref().as_str() else {
                checker.report(span, key, format!("must be a string, got {got}"));
                return None;
            };
            let problem = match rule {
                Rule::RolloutName => rollout_name_problem(text),
                Rule::Entrypoint => entrypoint_problem(text),
                Rule::Branch if text.is_empty() || text.chars().any(char::is_whitespace) => Some(
                    format!("must not be empty or contain whitespace, got {got}"),
                ),
                Rule::CommitSha if !is_commit_sha(text) => Some(format!(
                    "must be a hexadecimal commit SHA of 7 to 40 characters, got {got}"
                )),
                Rule::Text if text.trim().is_empty() => Some("must not be empty".to_string()),
                Rule::SecretName if !is_secret_name(text) => Some(format!(
                    "must be a secret name matching ^[A-Z][A-Z0-9_]*$, got {got}"
                )),
                _ => None,
            };
            if problem.is_none() {
                return Some(Value::String(text.to_string()));
            }
            problem
        }
        Rule::NonNegativeInt => match integer(value.get_ref()) {
            None => Some(format!("must be an integer, got {got}")),
            Some(Ok(i)) if i >= 0 && i as f64 <= max => return Some(Value::from(i)),
            Some(_) => Some(format!("must be an integer from 0 to {max}, got {got}")),
        },
        Rule::PositiveInt => match integer(value.get_ref()) {
            None => Some(format!("must be an integer, got {got}")),
            Some(Err(())) => Some(format!("must be an integer from 1 to {max}, got {got}")),
            Some(Ok(i)) if i < 1 => Some(format!("must be a positive integer (>= 1), got {got}")),
            Some(Ok(i)) if i as f64 > max => {
                Some(format!("must be an integer from 1 to {max}, got {got}"))
            }
            Some(Ok(i)) => return Some(Value::from(i)),
        },
        Rule::PositiveNumber
        | Rule::NonNegativeNumber
        | Rule::FiniteNumber
        | Rule::UnitInterval => {
            match number(value.get_ref()) {
                None => Some(format!("must be a number, got {got}")),
                Some(x) if !x.is_finite() => Some(format!("must be a finite number, got {got}")),
                Some(x) if x > max => {
                    let least = if rule == Rule::PositiveNumber {
                        "greater than 0"
                    } else {
                        "0 or greater"
                    };
                    Some(format!("must be {least} and at most {max}, got {got}"))
                }
                Some(x) => {
                    let bad = match rule {
                        Rule::PositiveNumber if x <= 0.0 => Some("must be greater than 0"),
                        Rule::NonNegativeNumber if x < 0.0 => Some("must be 0 or greater"),
                        Rule::UnitInterval if !(x > 0.0 && x <= 1.0) => {
                            Some("must be greater than 0 and at most 1")
                        }
                        _ => None,
                    };
                    match bad {
                        Some(text) => Some(format!("{text}, got {got}")),
                        // Integers stay integers in the payload (the platform sees what the user wrote).
                        None => return Some(to_json(checker, key, value)),
                    }
                }
            }
        }
    };
    if let Some(message) = problem {
        checker.report(span, key, message);
    }
    None
}

/// Where else a misplaced key belongs: another section of this kind, or of the other kind.
fn home_of(name: &str, kind: Kind, here: &str) -> Option<String> {
    for (k, label) in [(kind, ""), (kind.other(), " (of a ")] {
        for section in k.sections() {
            if section.name != here && section.fields.iter().any(|f| f.name == name) {
                return Some(if label.is_empty() {
                    format!("it belongs in [{}]", section.name)
                } else {
                    format!(
                        "it belongs in [{}]{label}{} config)",
                        section.name,
                        k.name()
                    )
                });
            }
        }
    }
    None
}

pub(super) fn check_section(
    checker: &mut Checker<'_>,
    kind: Kind,
    section: &Section,
    header: Range<usize>,
    table: &DeTable<'_>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        let dotted = format!("{}.{name}", section.name);
        match section.fields.iter().find(|f| f.name == name) {
            Some(field) => {
                checker.remember(value.span(), &dotted);
                if let Some(json) = check_value(checker, &dotted, field.rule, field.max, value) {
                    out.insert(name.to_string(), json);
                }
            }
            None => {
                let names = section.fields.iter().map(|f| f.name);
                let suggestion = did_you_mean(name, names).map(str::to_string);
                let message = match (&suggestion, home_of(name, kind, section.name)) {
                    (None, Some(home)) => format!("Unrecognized key: {home}"),
                    _ => "Unrecognized key".to_string(),
                };
                checker.suggest(key.span(), &dotted, message, suggestion);
            }
        }
    }
    for field in section.fields.iter().filter(|f: &&Field| f.required) {
        if lookup(table, field.name).is_none() {
            let dotted = format!("{}.{}", section.name, field.name);
            checker.report(
                header.clone(),
                &dotted,
                format!(
                    "missing required key '{}' in [{}]",
                    field.name, section.name
                ),
            );
        }
    }
    if section.name == "experiment" {
        if let (Some(_), Some((sha_key, _))) =
            (lookup(table, "branch"), lookup(table, "commit_sha"))
        {
            checker.report(
                sha_key.span(),
                "experiment",
                "provide either branch or commit_sha, not both",
            );
        }
    }
    out
}

/// `[env]` (or an agent's, whose keys start with `prefix`): names `^[A-Z_][A-Z0-9_]*$`, not
/// `_OSMOSIS_`-prefixed, string values.
pub(super) fn check_env(
    checker: &mut Checker<'_>,
    table: &DeTable<'_>,
    prefix: &str,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        let dotted = format!("{prefix}.{name}");
        if !is_env_name(name) {
            let upper = name.to_ascii_uppercase().replace(['-', ' ', '.'], "_");
            let suggestion = is_env_name(&upper).then_some(upper);
            checker.suggest(
                key.span(),
                &dotted,
                "name must match ^[A-Z_][A-Z0-9_]*$ (upper-case letters, digits and underscores)",
                suggestion,
            );
        } else if name.starts_with(RESERVED_ENV_PREFIX) {
            checker.report(
                key.span(),
                &dotted,
                "names starting with _OSMOSIS_ are reserved for the platform",
            );
        }
        match value.get_ref().as_str() {
            Some(text) => {
                out.insert(name.to_string(), Value::String(text.to_string()));
            }
            None => {
                let got = describe(checker, value);
                checker.report(
                    value.span(),
                    &dotted,
                    format!("must be a string (quote it), got {got}"),
                );
            }
        }
    }
    out
}

/// A `required = [names...]` section: `[secrets]`, and a benchmark's `[verifier]`.
pub(super) struct NameList {
    pub(super) section: &'static str,
    /// `required` must be written (eval and training `[secrets]`), else it defaults to empty.
    pub(super) needs_key: bool,
    pub(super) max: usize,
}

pub(super) const SECRET_NAMES: NameList = NameList {
    section: SECRETS,
    needs_key: true,
    max: usize::MAX,
};

/// `[secrets]` (or another [`NameList`]): exactly `required = [names...]`; names valid, unique, and not
/// also in `[env]`.
pub(super) fn check_secrets(
    checker: &mut Checker<'_>,
    header: Range<usize>,
    table: &DeTable<'_>,
    env: &HashMap<String, usize>,
    list: &NameList,
) -> Vec<Value> {
    let section = list.section;
    let mut names = Vec::new();
    for (key, _) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        if name != "required" {
            let suggestion = did_you_mean(name, ["required"]).map(str::to_string);
            checker.suggest(
                key.span(),
                &format!("{section}.{name}"),
                format!("Unrecognized key: [{section}] only supports 'required'"),
                suggestion,
            );
        }
    }
    let dotted = format!("{section}.required");
    let Some((_, required)) = lookup(table, "required") else {
        if list.needs_key {
            checker.report(
                header,
                &dotted,
                format!("missing 'required' in [{section}]; list the secret names, e.g. required = [\"OPENAI_API_KEY\"] (or required = [])"),
            );
        }
        return names;
    };
    let DeValue::Array(items) = required.get_ref() else {
        let got = describe(checker, required);
        checker.report(
            required.span(),
            &dotted,
            format!("must be a list of strings, e.g. required = [\"OPENAI_API_KEY\"], got {got}"),
        );
        return names;
    };
    if items.len() > list.max {
        checker.report(
            required.span(),
            &dotted,
            format!(
                "lists {} names; at most {} are allowed",
                items.len(),
                list.max
            ),
        );
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let key = format!("{section}.required[{i}]");
        let Some(name) = item.get_ref().as_str() else {
            let got = describe(checker, item);
            checker.report(
                item.span(),
                &key,
                format!("must be a string (a secret name), got {got}"),
            );
            continue;
        };
        if !is_secret_name(name) {
            let upper = name.to_ascii_uppercase().replace(['-', ' ', '.'], "_");
            let suggestion = is_secret_name(&upper).then_some(upper);
            checker.suggest(
                item.span(),
                &key,
                format!("secret name '{name}' must match ^[A-Z][A-Z0-9_]*$ (start with an upper-case letter)"),
                suggestion,
            );
        } else if let Some(first) = seen.get(name) {
            checker.report(
                item.span(),
                &key,
                format!("duplicate secret name '{name}' (first listed on line {first})"),
            );
        } else if let Some(env_line) = env.get(name) {
            checker.report(
                item.span(),
                &key,
                format!(
                    "'{name}' is also set in [env] (line {env_line}); each variable must come from exactly one place"
                ),
            );
        }
        if !seen.contains_key(name) {
            let line = checker.index.position(checker.base + item.span().start).0;
            seen.insert(name.to_string(), line);
            names.push(Value::String(name.to_string()));
        }
    }
    names
}

/// Reports every top-level key `kind` does not accept (with where it belongs, when that is known).
pub(super) fn check_top_level(checker: &mut Checker<'_>, root: &DeTable<'_>, kind: Kind) {
    let allowed = kind.top_level();
    for (key, value) in in_file_order(root) {
        let name = key.get_ref().as_ref();
        if allowed.contains(&name) {
            continue;
        }
        let is_table = matches!(value.get_ref(), DeValue::Table(_));
        let what = if is_table { "section" } else { "key" };
        if kind.other().top_level().contains(&name) {
            checker.report(
                key.span(),
                name,
                format!(
                    "Unrecognized section: [{name}] belongs in {} config, not in {} config",
                    kind.other().with_article(),
                    kind.with_article()
                ),
            );
        } else {
            let suggestion = did_you_mean(name, allowed.iter().copied()).map(str::to_string);
            let home = home_of(name, kind, "");
            let message = match (&suggestion, home) {
                (None, Some(home)) => format!("Unrecognized {what}: {home}"),
                _ => format!("Unrecognized {what}"),
            };
            checker.suggest(key.span(), name, message, suggestion);
        }
    }
}

/// The line of each `[env]` name, for "also set in [env] (line n)" messages.
pub(super) fn env_lines(checker: &Checker<'_>, table: &DeTable<'_>) -> HashMap<String, usize> {
    table
        .iter()
        .map(|(key, _)| {
            let line = checker.index.position(checker.base + key.span().start).0;
            (key.get_ref().to_string(), line)
        })
        .collect()
}

/// Checks a whole document; returns the normalised config (meaningful only when no issue was reported).
pub(super) fn check_document(checker: &mut Checker<'_>, root: &DeTable<'_>, kind: Kind) -> Value {
    let mut out = Map::new();
    check_top_level(checker, root, kind);

    for section in kind.sections() {
        let table = section_table(checker, root, section.name);
        let map = match table {
            Some((header, table)) => check_section(checker, kind, section, header, table),
            None => {
                if section.name == "experiment" && lookup(root, "experiment").is_none() {
                    checker.report(
                        0..0,
                        "experiment",
                        "missing [experiment] section (rollout, entrypoint, model_path, dataset)",
                    );
                }
                // A training config without its training section is most likely an eval config in the
                // wrong folder, or a section name misspelt: not a run on the platform's defaults.
                if section.name == "training" && lookup(root, "training").is_none() {
                    checker.report(
                        0..0,
                        "training",
                        "missing [training] section (lr, total_epochs, ...); write `[training]` alone to take the platform's defaults",
                    );
                }
                Map::new()
            }
        };
        out.insert(section.name.to_string(), Value::Object(map));
    }

    let advanced = match section_table(checker, root, ADVANCED) {
        Some((_, table)) => table_to_json(checker, ADVANCED, table),
        None => Map::new(),
    };
    out.insert(ADVANCED.to_string(), Value::Object(advanced));

    let mut lines = HashMap::new();
    let env = match section_table(checker, root, ENV) {
        Some((_, table)) => {
            lines = env_lines(checker, table);
            check_env(checker, table, ENV)
        }
        None => Map::new(),
    };
    out.insert(ENV.to_string(), Value::Object(env));

    let secrets = match section_table(checker, root, SECRETS) {
        Some((header, table)) => check_secrets(checker, header, table, &lines, &SECRET_NAMES),
        None => {
            if kind.requires_secrets() && lookup(root, SECRETS).is_none() {
                checker.report(
                    0..0,
                    SECRETS,
                    "missing [secrets] section (eval configs need one; write `[secrets]` then `required = []` if no secret is needed)",
                );
            }
            Vec::new()
        }
    };
    out.insert(SECRETS.to_string(), Value::Array(secrets));
    Value::Object(out)
}

/// A top-level section as a table, reporting it when present but not a table.
pub(super) fn section_table<'a, 'i>(
    checker: &mut Checker<'_>,
    root: &'a DeTable<'i>,
    name: &str,
) -> Option<(Range<usize>, &'a DeTable<'i>)> {
    let (key, value) = lookup(root, name)?;
    match value.get_ref() {
        DeValue::Table(table) => {
            // A `[name]` header spans the header; a dotted or inline definition spans its value.
            let span = if value.span().is_empty() {
                key.span()
            } else {
                value.span()
            };
            Some((span, table))
        }
        _ => {
            let got = describe(checker, value);
            checker.report(
                value.span(),
                name,
                format!("[{name}] must be a table, got {got}"),
            );
            None
        }
    }
}
