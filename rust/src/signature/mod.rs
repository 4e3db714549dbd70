//! Signature contracts for reward, rubric and eval functions, as rule tables.
//!
//! Python describes a function as plain data ([`FunctionShape`]); this module checks it against the
//! contract its first parameter selects. One table per contract keeps every rule in one place, so the
//! decorators and the eval-function loader can never disagree.
//!
//! The decorators follow the established 0.2.15+ rule: the classic contract is enforced only when the
//! first parameter is named `solution_str`; any other signature is accepted (as the full-mode eval
//! contract when it fits, else unchecked).

mod shape;

use shape::Expect;
pub use shape::{Annotation, FunctionShape, Param, ParamKind};

/// Whether a parameter may, must or must not have a default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DefaultRule {
    Required,
    Forbidden,
    Free,
}

#[derive(Debug, Clone, Copy)]
struct ParamRule {
    name: &'static str,
    expect: Expect,
    default: DefaultRule,
}

/// How a contract's parameters are matched to the function's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Matching {
    /// The first `rules.len()` parameters, in order, by position (the decorators' contracts).
    Positional,
    /// Each rule's name must be accepted as a keyword (eval functions are called with keywords only).
    Keyword,
}

/// A contract a function can be checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Contract {
    /// `@osmosis_reward`: `(solution_str: str, ground_truth: str, extra_info: dict = None, ...)`.
    Reward,
    /// `@osmosis_rubric`: `(solution_str: str, ground_truth: str | None, extra_info, ...)`.
    Rubric,
    /// Simple-mode eval function, called as `fn(solution_str=, ground_truth=, extra_info=)`.
    EvalSimple,
    /// Full-mode eval function, called as `fn(messages=, ground_truth=, metadata=)`.
    EvalFull,
    /// A decorated function with any other signature: accepted without parameter checks.
    Custom,
}

struct ContractRules {
    matching: Matching,
    rules: &'static [ParamRule],
}

const fn rule(name: &'static str, expect: Expect, default: DefaultRule) -> ParamRule {
    ParamRule {
        name,
        expect,
        default,
    }
}

const REWARD_RULES: &[ParamRule] = &[
    rule("solution_str", Expect::StrExact, DefaultRule::Free),
    rule("ground_truth", Expect::StrExact, DefaultRule::Free),
    rule("extra_info", Expect::DictOrOptional, DefaultRule::Required),
];

const RUBRIC_RULES: &[ParamRule] = &[
    rule("solution_str", Expect::StrLike, DefaultRule::Forbidden),
    rule("ground_truth", Expect::StrOrNone, DefaultRule::Forbidden),
    rule("extra_info", Expect::Anything, DefaultRule::Free),
];

const EVAL_SIMPLE_RULES: &[ParamRule] = &[
    rule("solution_str", Expect::Anything, DefaultRule::Free),
    rule("ground_truth", Expect::Anything, DefaultRule::Free),
    rule("extra_info", Expect::Anything, DefaultRule::Free),
];

const EVAL_FULL_RULES: &[ParamRule] = &[
    rule("messages", Expect::Anything, DefaultRule::Free),
    rule("ground_truth", Expect::Anything, DefaultRule::Free),
    rule("metadata", Expect::Anything, DefaultRule::Free),
];

/// No rules: the established decorators accept any signature whose first parameter is not `solution_str`.
const CUSTOM_RULES: &[ParamRule] = &[];

impl Contract {
    pub fn name(self) -> &'static str {
        match self {
            Contract::Reward => "reward",
            Contract::Rubric => "rubric",
            Contract::EvalSimple => "eval_simple",
            Contract::EvalFull => "eval_full",
            Contract::Custom => "custom",
        }
    }

    fn table(self) -> ContractRules {
        let (matching, rules) = match self {
            Contract::Reward => (Matching::Positional, REWARD_RULES),
            Contract::Rubric => (Matching::Positional, RUBRIC_RULES),
            Contract::EvalSimple => (Matching::Keyword, EVAL_SIMPLE_RULES),
            Contract::EvalFull => (Matching::Keyword, EVAL_FULL_RULES),
            Contract::Custom => (Matching::Positional, CUSTOM_RULES),
        };
        ContractRules { matching, rules }
    }

    /// The name the first parameter must have under this contract (it selects the contract).
    pub fn first_param(self) -> Option<&'static str> {
        self.table().rules.first().map(|r| r.name)
    }
}

/// Who is asking: each family picks a contract by the function's first parameter name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Reward,
    Rubric,
    Eval,
}

impl Family {
    pub fn parse(text: &str) -> Option<Family> {
        match text {
            "reward" => Some(Family::Reward),
            "rubric" => Some(Family::Rubric),
            "eval" => Some(Family::Eval),
            _ => None,
        }
    }

    /// The contracts of this family; the first is the classic one named in errors.
    fn contracts(self) -> &'static [Contract] {
        match self {
            Family::Reward => &[Contract::Reward, Contract::EvalFull, Contract::Custom],
            Family::Rubric => &[Contract::Rubric, Contract::EvalFull, Contract::Custom],
            Family::Eval => &[Contract::EvalSimple, Contract::EvalFull],
        }
    }
}

/// Why a function breaks its contract. `Display` is the message users see.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SignatureViolation {
    pub function: String,
    pub parameter: Option<String>,
    pub expected: String,
    pub message: String,
}

const ORDINALS: [&str; 3] = ["First", "Second", "Third"];

fn ordinal(i: usize) -> String {
    ORDINALS
        .get(i)
        .map_or_else(|| format!("Parameter #{}", i + 1), |s| (*s).to_string())
}

fn violation(
    shape: &FunctionShape,
    parameter: Option<&str>,
    expected: impl Into<String>,
    detail: String,
) -> SignatureViolation {
    SignatureViolation {
        function: shape.name.clone(),
        parameter: parameter.map(str::to_string),
        expected: expected.into(),
        message: format!("Function '{}': {detail}", shape.name),
    }
}

/// Checks `shape` against the contract its family selects; returns that contract.
///
/// The first parameter's name selects a contract. For the decorators, only the classic one
/// (`solution_str` first) is enforced; any other signature is the full-mode eval contract when it
/// fits and [`Contract::Custom`] otherwise, never an error.
pub fn check_family(shape: &FunctionShape, family: Family) -> Result<Contract, SignatureViolation> {
    let contracts = family.contracts();
    let first = shape.params.first().filter(|p| p.is_named());
    let chosen = first.and_then(|p| {
        contracts
            .iter()
            .find(|c| c.first_param() == Some(p.name.as_str()))
    });
    if let Some(contract) = chosen {
        if *contract == contracts[0] || matches!(family, Family::Eval) {
            return check_contract(shape, *contract).map(|()| *contract);
        }
    }
    if !matches!(family, Family::Eval) {
        let fits = contracts[1..]
            .iter()
            .find(|c| check_contract(shape, **c).is_ok());
        return Ok(fits.copied().unwrap_or(Contract::Custom));
    }
    let names: Vec<String> = contracts
        .iter()
        .filter_map(|c| c.first_param())
        .map(|n| format!("'{n}'"))
        .collect();
    let expected = names.join(" or ");
    let got = first.map_or_else(|| "no parameters".to_string(), |p| format!("'{}'", p.name));
    let detail = if shape.params.is_empty() {
        format!("must have at least 3 parameters, got 0 (the first named {expected})")
    } else {
        format!("First parameter must be named {expected}, got {got}")
    };
    Err(violation(
        shape,
        first.map(|p| p.name.as_str()),
        expected,
        detail,
    ))
}

/// Checks `shape` against one contract's rule table.
pub fn check_contract(shape: &FunctionShape, contract: Contract) -> Result<(), SignatureViolation> {
    let table = contract.table();
    match table.matching {
        Matching::Positional => check_positional(shape, table.rules),
        Matching::Keyword => check_keywords(shape, table.rules),
    }
}

fn check_positional(shape: &FunctionShape, rules: &[ParamRule]) -> Result<(), SignatureViolation> {
    let named: Vec<&Param> = shape
        .params
        .iter()
        .filter(|p| p.is_named() && p.kind != ParamKind::KeywordOnly)
        .collect();
    if named.len() < rules.len() {
        let detail = format!(
            "must have at least {} parameters, got {} (expected {})",
            rules.len(),
            named.len(),
            rules.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
        );
        return Err(violation(
            shape,
            None,
            format!("{} parameters", rules.len()),
            detail,
        ));
    }
    for (i, (param, rule)) in named.iter().zip(rules).enumerate() {
        check_param(shape, i, param, rule)?;
    }
    Ok(())
}

fn check_param(
    shape: &FunctionShape,
    index: usize,
    param: &Param,
    rule: &ParamRule,
) -> Result<(), SignatureViolation> {
    let position = ordinal(index);
    if param.name != rule.name {
        let detail = format!(
            "{position} parameter must be named '{}', got '{}'",
            rule.name, param.name
        );
        return Err(violation(
            shape,
            Some(&param.name),
            format!("named '{}'", rule.name),
            detail,
        ));
    }
    let annotation = param.annotation.normalized();
    if !rule.expect.accepts(&annotation) {
        let detail = format!(
            "{position} parameter '{}' must be annotated as {}, got {annotation}",
            rule.name,
            rule.expect.describe()
        );
        return Err(violation(
            shape,
            Some(rule.name),
            rule.expect.describe(),
            detail,
        ));
    }
    match (rule.default, param.has_default) {
        (DefaultRule::Required, false) => {
            let detail = format!(
                "{position} parameter '{}' must have a default value (usually None)",
                rule.name
            );
            Err(violation(shape, Some(rule.name), "a default value", detail))
        }
        (DefaultRule::Forbidden, true) => {
            let detail = format!(
                "{position} parameter '{}' cannot have a default value",
                rule.name
            );
            Err(violation(
                shape,
                Some(rule.name),
                "no default value",
                detail,
            ))
        }
        _ => Ok(()),
    }
}

fn check_keywords(shape: &FunctionShape, rules: &[ParamRule]) -> Result<(), SignatureViolation> {
    let has_var_keyword = shape.params.iter().any(|p| p.kind == ParamKind::VarKeyword);
    let all_names: Vec<&str> = rules.iter().map(|r| r.name).collect();
    for rule in rules {
        let found = shape
            .params
            .iter()
            .find(|p| p.name == rule.name && p.is_named());
        match found {
            Some(p) if p.kind == ParamKind::PositionalOnly => {
                let detail = format!(
                    "parameter '{}' is positional-only, but eval functions are called with keyword arguments",
                    rule.name
                );
                return Err(violation(
                    shape,
                    Some(rule.name),
                    "a keyword parameter",
                    detail,
                ));
            }
            Some(_) => {}
            None if has_var_keyword => {}
            None => {
                let detail = format!(
                    "must accept a keyword argument '{}' (eval functions are called as fn({}))",
                    rule.name,
                    all_names
                        .iter()
                        .map(|n| format!("{n}=..."))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return Err(violation(
                    shape,
                    Some(rule.name),
                    format!("parameter '{}'", rule.name),
                    detail,
                ));
            }
        }
    }
    let unfillable = shape
        .params
        .iter()
        .find(|p| p.is_named() && !p.has_default && !all_names.contains(&p.name.as_str()));
    if let Some(p) = unfillable {
        let detail = format!(
            "parameter '{}' has no default, but only {} are passed",
            p.name,
            all_names.join(", ")
        );
        return Err(violation(shape, Some(&p.name), "a default value", detail));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(name: &str) -> Annotation {
        Annotation::type_named(name)
    }

    fn p(name: &str, annotation: Annotation, has_default: bool) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::PositionalOrKeyword,
            annotation,
            has_default,
        }
    }

    fn shape(params: Vec<Param>) -> FunctionShape {
        FunctionShape {
            name: "f".into(),
            params,
        }
    }

    fn reward_ok() -> Vec<Param> {
        vec![
            p("solution_str", ty("str"), false),
            p("ground_truth", ty("str"), false),
            p("extra_info", ty("dict"), true),
        ]
    }

    #[test]
    fn reward_accepts_the_classic_signature() {
        assert_eq!(
            check_family(&shape(reward_ok()), Family::Reward),
            Ok(Contract::Reward)
        );
    }

    #[test]
    fn reward_requires_a_default_on_extra_info() {
        let mut params = reward_ok();
        params[2].has_default = false;
        let err = check_family(&shape(params), Family::Reward).unwrap_err();
        assert_eq!(err.parameter.as_deref(), Some("extra_info"));
        assert!(
            err.message.contains("must have a default value"),
            "{}",
            err.message
        );
    }

    #[test]
    fn reward_rejects_optional_ground_truth_but_rubric_accepts_it() {
        let optional = Annotation::Union {
            members: vec![ty("str"), ty("None")],
        };
        let mut params = reward_ok();
        params[1].annotation = optional.clone();
        let err = check_family(&shape(params), Family::Reward).unwrap_err();
        assert!(
            err.message
                .contains("must be annotated as str, got str | None"),
            "{}",
            err.message
        );

        let rubric = vec![
            p("solution_str", ty("str"), false),
            p("ground_truth", optional, false),
            p("extra_info", Annotation::Missing, false),
        ];
        assert_eq!(
            check_family(&shape(rubric), Family::Rubric),
            Ok(Contract::Rubric)
        );
    }

    #[test]
    fn string_annotations_are_understood() {
        let params = vec![
            p(
                "solution_str",
                Annotation::Text { text: "str".into() },
                false,
            ),
            p(
                "ground_truth",
                Annotation::Text {
                    text: "Optional[str]".into(),
                },
                false,
            ),
            p(
                "extra_info",
                Annotation::Text {
                    text: "dict | None".into(),
                },
                true,
            ),
        ];
        assert_eq!(
            check_family(&shape(params), Family::Rubric),
            Ok(Contract::Rubric)
        );
    }

    #[test]
    fn too_few_parameters_is_reported_with_counts() {
        let err = check_family(&shape(reward_ok()[..2].to_vec()), Family::Reward).unwrap_err();
        assert!(
            err.message.contains("at least 3 parameters, got 2"),
            "{}",
            err.message
        );
    }

    #[test]
    fn first_parameter_selects_the_contract() {
        let full = vec![
            p("messages", Annotation::Missing, false),
            p("ground_truth", Annotation::Missing, false),
            p("metadata", Annotation::Missing, true),
        ];
        assert_eq!(
            check_family(&shape(full), Family::Eval),
            Ok(Contract::EvalFull)
        );
        let other = vec![
            p("text", ty("str"), false),
            p("gt", ty("str"), false),
            p("x", ty("dict"), true),
        ];
        let err = check_family(&shape(other), Family::Eval).unwrap_err();
        assert!(
            err.message
                .contains("'solution_str' or 'messages', got 'text'"),
            "{}",
            err.message
        );
    }

    #[test]
    fn keyword_contract_needs_every_name_or_var_keyword() {
        let missing = vec![
            p("solution_str", Annotation::Missing, false),
            p("ground_truth", Annotation::Missing, false),
        ];
        let err = check_contract(&shape(missing.clone()), Contract::EvalSimple).unwrap_err();
        assert_eq!(err.parameter.as_deref(), Some("extra_info"));
        let mut with_kwargs = missing;
        with_kwargs.push(Param {
            name: "kwargs".into(),
            kind: ParamKind::VarKeyword,
            annotation: Annotation::Missing,
            has_default: false,
        });
        assert!(check_contract(&shape(with_kwargs), Contract::EvalSimple).is_ok());
    }

    #[test]
    fn rubric_accepts_any_extra_info_annotation_as_0_2_17_does() {
        let params = vec![
            p("solution_str", ty("str"), false),
            p("ground_truth", ty("str"), false),
            p("extra_info", ty("str"), false),
        ];
        assert_eq!(
            check_family(&shape(params), Family::Rubric),
            Ok(Contract::Rubric)
        );
    }

    #[test]
    fn reward_accepts_optional_dict_extra_info_but_not_optional_str() {
        for annotation in [
            Annotation::Union {
                members: vec![ty("dict"), ty("None")],
            },
            Annotation::Text {
                text: "Optional[dict]".into(),
            },
            Annotation::Text {
                text: "Union[dict, None]".into(),
            },
        ] {
            let mut params = reward_ok();
            params[2].annotation = annotation;
            assert_eq!(
                check_family(&shape(params), Family::Reward),
                Ok(Contract::Reward)
            );
        }
        let mut params = reward_ok();
        params[2].annotation = Annotation::Union {
            members: vec![ty("str"), ty("None")],
        };
        let err = check_family(&shape(params), Family::Reward).unwrap_err();
        assert!(
            err.message.contains("must be annotated as dict"),
            "{}",
            err.message
        );
    }

    #[test]
    fn decorators_accept_any_signature_not_starting_with_solution_str() {
        let state = vec![
            p("state", ty("dict"), false),
            p("action", ty("dict"), false),
            p("metadata", ty("dict"), true),
        ];
        for family in [Family::Reward, Family::Rubric] {
            assert_eq!(
                check_family(&shape(state.clone()), family),
                Ok(Contract::Custom)
            );
            assert_eq!(check_family(&shape(vec![]), family), Ok(Contract::Custom));
        }
        let full = vec![
            p("messages", Annotation::Missing, false),
            p("ground_truth", Annotation::Missing, false),
            p("metadata", Annotation::Missing, true),
        ];
        assert_eq!(
            check_family(&shape(full.clone()), Family::Reward),
            Ok(Contract::EvalFull)
        );
        assert_eq!(
            check_family(&shape(full[..2].to_vec()), Family::Reward),
            Ok(Contract::Custom)
        );
        assert!(check_family(&shape(state), Family::Eval).is_err());
    }
}
