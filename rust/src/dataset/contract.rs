//! The row contracts, in one place: what every dataset row must hold.
//!
//! - `Eval` (spec 7.4, used by `eval` / `test`): `system_prompt`, `user_prompt` and `ground_truth`, matched
//!   case-insensitively, each a non-null, non-blank string. Other columns are kept as metadata.
//! - `Rubric` (spec 6.3, `eval-rubric` records): `solution_str` a non-blank string on every record;
//!   `score_min` / `score_max` numbers when given; `metadata` / `extra_info` objects when given.
//! - `EvalRun` (anchor 0.3 §4.3, `eval run` on a local file): `system_prompt`, `user_prompt`, `ground_truth`
//!   (alias `label`) and `metadata`, names as written. A row with a `metadata` key needs nothing else but
//!   something to run (a prompt or non-empty metadata); any other row needs `user_prompt` and a label.
//!   Only null and "" are absent. Prompts are strings, as in `Eval` (anchor 0.3 used any value's text, so
//!   `"user_prompt": 123` ran as "123"; a number where a prompt belongs is a column mix-up); a label is a
//!   string or a number (graders compare its text). `metadata` is an object or a string holding one.
//! - `Any`: every row is a JSON object; nothing else is checked (`preview`).
//!
//! Checks run on [`ValueKind`]s, so the full reader (rows as `serde_json::Value`) and the fast validation
//! pass (rows parsed without building values) share this code and cannot disagree.

use super::value_kind::{Text, ValueKind};

/// Which contract rows are checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    Eval,
    Rubric,
    EvalRun,
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
            "eval_run" => Some(Contract::EvalRun),
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
            Contract::EvalRun => check_eval_run(entries),
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
        ValueKind::Str(text) if !text.is_blank() => return None,
        ValueKind::Str(_) => format!("'{field}' cannot be empty"),
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
            None | Some(ValueKind::Null | ValueKind::Object { .. }) => {}
            Some(other) => problems.push(FieldProblem::new(
                Some(name),
                format!("'{name}' must be an object, got {}", other.python_name()),
            )),
        }
    }
    problems
}

/// What a prompt-mode row of `eval run` lacks, in its messages.
const RUN_NEEDS: &str = "a row without a 'metadata' column needs one";

/// The value types `eval run` accepts for its text fields (null is absence, checked by the caller).
fn run_value_types(get: impl Fn(&str) -> Option<ValueKind>) -> Vec<FieldProblem> {
    let mut problems = Vec::new();
    for (name, numbers) in [
        ("system_prompt", false),
        ("user_prompt", false),
        ("ground_truth", true),
        ("label", true),
    ] {
        let what = if numbers {
            "a string or a number"
        } else {
            "a string"
        };
        match get(name) {
            None | Some(ValueKind::Null | ValueKind::Str(_)) => {}
            Some(ValueKind::Int | ValueKind::Float) if numbers => {}
            Some(other) => problems.push(FieldProblem::new(
                Some(name),
                format!("'{name}' must be {what}, got {}", other.python_name()),
            )),
        }
    }
    problems
}

fn check_eval_run(entries: &[(&str, ValueKind)]) -> Vec<FieldProblem> {
    let get = |name: &str| {
        entries
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, kind)| *kind)
    };
    let wrong_types = run_value_types(get);
    if !wrong_types.is_empty() {
        return wrong_types;
    }
    // §4.3: only null and "" are absent; other values are used as their text.
    let given = |name: &str| {
        get(name).is_some_and(|kind| !matches!(kind, ValueKind::Null | ValueKind::Str(Text::Empty)))
    };
    let Some(metadata) = get("metadata") else {
        let mut problems = Vec::new();
        if !given("user_prompt") {
            problems.push(run_absent("user_prompt", get("user_prompt")));
        }
        if !given("ground_truth") && !given("label") {
            problems.push(match (get("ground_truth"), get("label")) {
                (None, Some(label)) => run_absent("label", Some(label)),
                (truth, _) => run_absent("ground_truth", truth),
            });
        }
        return problems;
    };
    let has_metadata = match metadata {
        ValueKind::Null | ValueKind::Str(Text::Empty | Text::Blank) => false,
        ValueKind::Object { empty } | ValueKind::Str(Text::JsonObject { empty }) => !empty,
        ValueKind::Str(Text::Plain) => {
            let message = "'metadata' is a string that does not hold a JSON object";
            return vec![FieldProblem::new(Some("metadata"), message.to_owned())];
        }
        other => {
            let message = format!(
                "'metadata' must be a JSON object (or a string holding one), got {}",
                other.python_name()
            );
            return vec![FieldProblem::new(Some("metadata"), message)];
        }
    };
    if has_metadata || given("user_prompt") || given("system_prompt") {
        return Vec::new();
    }
    let message =
        "no 'user_prompt' or 'system_prompt', and no metadata: the row has nothing to run";
    vec![FieldProblem::new(Some("user_prompt"), message.to_owned())]
}

fn run_absent(field: &str, kind: Option<ValueKind>) -> FieldProblem {
    let what = match kind {
        None if field == "ground_truth" => "missing 'ground_truth' (or 'label')".to_owned(),
        None => format!("missing '{field}'"),
        Some(ValueKind::Null) => format!("'{field}' cannot be null"),
        Some(_) => format!("'{field}' cannot be empty"),
    };
    FieldProblem::new(Some(field), format!("{what}; {RUN_NEEDS}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: ValueKind = ValueKind::Str(Text::Plain);

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
            ("ground_truth", ValueKind::Str(Text::Blank)),
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

    fn run_messages(row: &[(&str, ValueKind)]) -> Vec<(Option<String>, String)> {
        Contract::EvalRun
            .check(row)
            .into_iter()
            .map(|p| (p.field, p.message))
            .collect()
    }

    #[test]
    fn eval_run_prompt_mode_needs_a_prompt_and_a_label() {
        let blank = ValueKind::Str(Text::Blank);
        assert!(run_messages(&[("user_prompt", blank), ("ground_truth", blank)]).is_empty());
        assert!(run_messages(&[("user_prompt", GOOD), ("label", ValueKind::Int)]).is_empty());
        let problems = run_messages(&[("user_prompt", ValueKind::Int), ("label", GOOD)]);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].1, "'user_prompt' must be a string, got int");
        let problems = run_messages(&[("user_prompt", GOOD), ("ground_truth", ValueKind::Array)]);
        assert_eq!(
            problems[0].1,
            "'ground_truth' must be a string or a number, got list"
        );
        let empty = ValueKind::Str(Text::Empty);
        let problems = run_messages(&[("user_prompt", ValueKind::Null), ("ground_truth", empty)]);
        let fields: Vec<_> = problems
            .iter()
            .map(|(f, _)| f.as_deref().unwrap())
            .collect();
        assert_eq!(fields, ["user_prompt", "ground_truth"]);
        assert_eq!(
            problems[1].1,
            "'ground_truth' cannot be empty; a row without a 'metadata' column needs one"
        );
        let problems = run_messages(&[("User_Prompt", GOOD), ("label", empty)]);
        assert_eq!(
            problems[0].1,
            "missing 'user_prompt'; a row without a 'metadata' column needs one"
        );
        assert_eq!(problems[1].0.as_deref(), Some("label"));
    }

    #[test]
    fn eval_run_metadata_mode() {
        let obj = |empty| ValueKind::Object { empty };
        assert!(run_messages(&[("metadata", obj(false))]).is_empty());
        assert!(run_messages(&[("metadata", ValueKind::Null), ("system_prompt", GOOD)]).is_empty());
        let text = ValueKind::Str(Text::JsonObject { empty: false });
        assert!(run_messages(&[("metadata", text)]).is_empty());
        for nothing in [obj(true), ValueKind::Str(Text::Blank), ValueKind::Null] {
            let problems = run_messages(&[
                ("metadata", nothing),
                ("user_prompt", ValueKind::Str(Text::Empty)),
            ]);
            assert!(problems[0].1.contains("nothing to run"), "{problems:?}");
        }
        let problems = run_messages(&[("metadata", ValueKind::Array), ("user_prompt", GOOD)]);
        assert_eq!(problems[0].0.as_deref(), Some("metadata"));
        assert!(problems[0].1.ends_with("got list"));
        let problems = run_messages(&[("metadata", ValueKind::Str(Text::Plain))]);
        assert!(problems[0].1.contains("does not hold a JSON object"));
    }
}
