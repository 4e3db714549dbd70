//! TOML values as the checks see them: entries in file order, "what was given" descriptions for
//! messages, numbers, and the conversion to JSON for the platform payload.

use super::Checker;
use serde_json::{Map, Number, Value};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

pub(super) type Entry<'a, 'i> = (
    &'a Spanned<std::borrow::Cow<'i, str>>,
    &'a Spanned<DeValue<'i>>,
);

/// A table's entries in file order (the map itself is sorted by key).
pub(super) fn in_file_order<'a, 'i>(table: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut entries: Vec<Entry<'a, 'i>> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

pub(super) fn lookup<'a, 'i>(table: &'a DeTable<'i>, name: &str) -> Option<Entry<'a, 'i>> {
    table.get_key_value(name)
}

/// "integer 5", "string \"x\"", ...: what a value is, for "must be ..., got ..." messages.
pub(super) fn describe(checker: &Checker<'_>, value: &Spanned<DeValue<'_>>) -> String {
    let kind = match value.get_ref() {
        DeValue::String(_) => "string",
        DeValue::Integer(_) => "integer",
        DeValue::Float(_) => "float",
        DeValue::Boolean(_) => "boolean",
        DeValue::Datetime(_) => "datetime",
        DeValue::Array(_) => "array",
        DeValue::Table(_) => return "a table".to_string(),
    };
    format!("{kind} {}", checker.snippet(value.span()))
}

pub(super) fn integer(value: &DeValue<'_>) -> Option<Result<i64, ()>> {
    match value {
        DeValue::Integer(i) => Some(i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| ())),
        _ => None,
    }
}

pub(super) fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        DeValue::Integer(_) => integer(value).and_then(Result::ok).map(|i| i as f64),
        DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
        _ => None,
    }
}

/// Converts a value to JSON for the platform payload; reports what JSON cannot carry.
pub(super) fn to_json(checker: &mut Checker<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> Value {
    match value.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Integer(_) => match integer(value.get_ref()) {
            Some(Ok(i)) => Value::from(i),
            _ => {
                checker.report(value.span(), key, "integer does not fit in 64 bits");
                Value::Null
            }
        },
        DeValue::Float(_) => match number(value.get_ref()).and_then(Number::from_f64) {
            Some(n) => Value::Number(n),
            None => {
                let got = describe(checker, value);
                checker.report(
                    value.span(),
                    key,
                    format!("must be a finite number (JSON has no inf/nan), got {got}"),
                );
                Value::Null
            }
        },
        DeValue::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_json(checker, &format!("{key}[{i}]"), item))
                .collect(),
        ),
        DeValue::Table(table) => Value::Object(table_to_json(checker, key, table)),
    }
}

pub(super) fn table_to_json(
    checker: &mut Checker<'_>,
    key: &str,
    table: &DeTable<'_>,
) -> Map<String, Value> {
    let mut map = Map::new();
    for (k, v) in in_file_order(table) {
        let child = format!("{key}.{}", k.get_ref());
        map.insert(k.get_ref().to_string(), to_json(checker, &child, v));
    }
    map
}

/// Formats as [`describe`] does, on demand.
pub(super) struct Got<'a, 'c, 'i>(
    pub(super) &'a Checker<'c>,
    pub(super) &'a Spanned<DeValue<'i>>,
);

impl std::fmt::Display for Got<'_, '_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe(self.0, self.1))
    }
}
