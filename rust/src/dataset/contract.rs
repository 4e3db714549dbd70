//! The row contracts, in one place: what every dataset row must hold.
//!
//! - `Eval` (spec 7.4, used by `eval` / `test`): `system_prompt`, `user_prompt` and `ground_truth`, matched
//!   case-insensitively, each a non-null, non-blank string. Other columns are kept as metadata.
//! - `Rubric` (spec 6.3, `eval-rubric` records): `solution_str` a non-blank string on every record;
//!   `score_min` / `score_max` numbers when given; `metadata` / `extra_info` objects when given.
//! - `Any`: every row is a JSON object; nothing else is checked (`preview`).
//!
//! Checks run on [`ValueKind`]s, so the full reader (rows as `serde_json::Value`) and the fast validation
//! pass (rows parsed without building values) share this code and cannot disagree.

use serde_json::Value;

/// The shape of a value, as much as the contracts need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Null,
    Bool,
    Int,
    Float,
    /// A string; `blank` when empty or only whitespace.
    Str {
        blank: bool,
    },
    Array,
    Object,
}

impl ValueKind {
    pub fn of(value: &Value) -> ValueKind {
        match value {
            Value::Null => ValueKind::Null,
            Value::Bool(_) => ValueKind::Bool,
            Value::Number(n) if n.is_f64() => ValueKind::Float,
            Value::Number(_) => ValueKind::Int,
            Value::String(s) => ValueKind::Str {
                blank: s.trim_start().is_empty(),
            },
            Value::Array(_) => ValueKind::Array,
            Value::Object(_) => ValueKind::Object,
        }
    }

    /// The Python type name a user sees for this value once loaded (`int`, `dict`, ...).
    pub fn python_name(self) -> &'static str {
        match self {
            ValueKind::Null => "NoneType",
            ValueKind::Bool => "bool",
            ValueKind::Int => "int",
            ValueKind::Float => "float",
            ValueKind::Str { .. } => "str",
            ValueKind::Array => "list",
            ValueKind::Object => "dict",
        }
    }
}

/// Which contract rows are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    Eval,
    Rubric,
    Any,
}

/// The eval contract's required columns, in the order messages list them.
pub const EVAL_REQUIRED: [&str; 3] = ["system_prompt", "user_prompt", "ground_truth"];

/// One broken rule of one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: Option<String>,
    pub message: String,
}

impl FieldProblem {
    fn new(field: Option<&str>, message: String) -> Self {
        FieldProblem {
            field: field.map(str::to_owned),
            message,
        }
    }
}

impl Contract {
    pub fn parse(name: &str) -> Option<Contract> {
        match name {
            "eval" => Some(Contract::Eval),
            "rubric" => Some(Contract::Rubric),
            "any" | "none" => Some(Contract::Any),
            _ => None,
        }
    }

    /// Checks a row that is not an object.
    pub fn check_non_object(kind: ValueKind) -> FieldProblem {
        FieldProblem::new(None, format!("Expected object, got {}", kind.python_name()))
    }

    /// Checks one object row given as (key, kind) pairs; returns its problems (empty when it is valid).
    pub fn check(self, entries: &[(&str, ValueKind)]) -> Vec<FieldProblem> {
        match self {
            Contract::Any => Vec::new(),
            Contract::Eval => check_eval(entries),
            Contract::Rubric => check_rubric(entries),
        }
    }

    /// The name a column has in the rows handed to users: required eval columns are lower-cased.
    pub fn output_key(self, key: &str) -> Option<&'static str> {
        if self != Contract::Eval {
            return None;
        }
        EVAL_REQUIRED
            .iter()
            .find(|name| name.eq_ignore_ascii_case(key))
            .copied()
    }
}

fn required_string(field: &str, kind: ValueKind) -> Option<FieldProblem> {
    let message = match kind {
        ValueKind::Str { blank: false } => return None,
        ValueKind::Str { blank: true } => format!("'{field}' cannot be empty"),
        ValueKind::Null => format!("'{field}' cannot be null"),
        other => format!("'{field}' must be a string, got {}", other.python_name()),
    };
    Some(FieldProblem::new(Some(field), message))
}

fn check_eval(entries: &[(&str, ValueKind)]) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    let mut missing = Vec::new();
    for required in EVAL_REQUIRED {
        let mut found = entries
            .iter()
            .filter(|(key, _)| key.eq_ignore_ascii_case(required));
        match (found.next(), found.next()) {
            (None, _) => missing.push(required),
            (Some((first, _)), Some((second, _))) => problems.push(FieldProblem::new(
                Some(required),
                format!("'{required}' given twice, as '{first}' and '{second}' (names are case-insensitive)"),
            )),
            (Some((_, kind)), None) => problems.extend(required_string(required, *kind)),
        }
    }
    if !missing.is_empty() {
        let list = missing
            .iter()
            .map(|m| format!("'{m}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let field = (missing.len() == 1).then_some(missing[0]);
        problems.insert(
            0,
            FieldProblem::new(field, format!("Missing required columns: [{list}]")),
        );
    }
    problems
}

fn check_rubric(entries: &[(&str, ValueKind)]) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    let get = |name: &str| {
        entries
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, kind)| *kind)
    };
    match get("solution_str") {
        None => problems.push(FieldProblem::new(
            Some("solution_str"),
            "Missing required field 'solution_str' (a non-empty string)".to_owned(),
        )),
        Some(kind) => problems.extend(required_string("solution_str", kind)),
    }
    for name in ["score_min", "score_max"] {
        match get(name) {
            None | Some(ValueKind::Null | ValueKind::Int | ValueKind::Float) => {}
            Some(other) => problems.push(FieldProblem::new(
                Some(name),
                format!("'{name}' must be a number, got {}", other.python_name()),
            )),
        }
    }
    for name in ["metadata", "extra_info"] {
        match get(name) {
            None | Some(ValueKind::Null | ValueKind::Object) => {}
            Some(other) => problems.push(FieldProblem::new(
                Some(name),
                format!("'{name}' must be an object, got {}", other.python_name()),
            )),
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: ValueKind = ValueKind::Str { blank: false };

    #[test]
    fn eval_accepts_any_case_and_extra_columns() {
        let row = [
            ("System_Prompt", GOOD),
            ("USER_PROMPT", GOOD),
            ("ground_truth", GOOD),
            ("x", ValueKind::Int),
        ];
        assert!(Contract::Eval.check(&row).is_empty());
        assert_eq!(
            Contract::Eval.output_key("USER_PROMPT"),
            Some("user_prompt")
        );
        assert_eq!(Contract::Eval.output_key("x"), None);
    }

    #[test]
    fn eval_reports_each_broken_field() {
        let row = [
            ("system_prompt", ValueKind::Null),
            ("user_prompt", ValueKind::Int),
            ("ground_truth", ValueKind::Str { blank: true }),
        ];
        let messages: Vec<_> = Contract::Eval
            .check(&row)
            .into_iter()
            .map(|p| p.message)
            .collect();
        assert_eq!(
            messages,
            [
                "'system_prompt' cannot be null",
                "'user_prompt' must be a string, got int",
                "'ground_truth' cannot be empty"
            ]
        );
    }

    #[test]
    fn eval_lists_missing_columns_first() {
        let problems = Contract::Eval.check(&[("user_prompt", GOOD)]);
        assert_eq!(
            problems[0].message,
            "Missing required columns: ['system_prompt', 'ground_truth']"
        );
        assert_eq!(problems.len(), 1);
        let problems = Contract::Eval.check(&[("user_prompt", GOOD), ("system_prompt", GOOD)]);
        assert_eq!(problems[0].field.as_deref(), Some("ground_truth"));
    }

    #[test]
    fn eval_rejects_a_column_given_twice() {
        let row = [
            ("system_prompt", GOOD),
            ("user_prompt", GOOD),
            ("User_Prompt", GOOD),
            ("ground_truth", GOOD),
        ];
        let problems = Contract::Eval.check(&row);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("given twice"), "{problems:?}");
    }

    #[test]
    fn rubric_contract() {
        assert!(Contract::Rubric
            .check(&[("solution_str", GOOD), ("score_min", ValueKind::Int)])
            .is_empty());
        let problems = Contract::Rubric.check(&[
            ("score_max", ValueKind::Bool),
            ("metadata", ValueKind::Array),
        ]);
        let fields: Vec<_> = problems
            .iter()
            .map(|p| p.field.as_deref().unwrap())
            .collect();
        assert_eq!(fields, ["solution_str", "score_max", "metadata"]);
    }

    #[test]
    fn non_objects_are_named_by_python_type() {
        assert_eq!(
            Contract::check_non_object(ValueKind::Array).message,
            "Expected object, got list"
        );
    }
}
