//! A function's shape as plain data (parameters, kinds, annotations) and what an annotation must be.
//!
//! Python resolves what it can of each annotation; the few string spellings the contracts care about
//! (`str`, `dict`, `Optional[X]`, `X | None`, ...) are parsed here.

use serde::Deserialize;
use std::fmt;

/// How a parameter may be passed, mirroring `inspect.Parameter.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    PositionalOnly,
    PositionalOrKeyword,
    VarPositional,
    KeywordOnly,
    VarKeyword,
}

/// A parameter annotation after Python resolved what it could.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Annotation {
    /// No annotation at all.
    Missing,
    /// `typing.Any`.
    Any,
    /// A class, by canonical name (`str`, `dict`, `mymod.MyStr`), with the canonical names of its bases.
    Type {
        name: String,
        #[serde(default)]
        bases: Vec<String>,
    },
    /// A parametrised generic such as `dict[str, Any]`: its origin's canonical name and its text.
    Generic { origin: String, text: String },
    /// `Union[...]`, `Optional[...]` or `X | Y`.
    Union { members: Vec<Annotation> },
    /// A string annotation Python could not resolve (a forward reference); parsed here.
    Text { text: String },
    /// Anything else, by its text.
    Other { text: String },
}

impl Annotation {
    pub(crate) fn type_named(name: &str) -> Self {
        Annotation::Type {
            name: name.to_string(),
            bases: Vec::new(),
        }
    }

    /// Resolves an unresolved string annotation for the few spellings the contracts care about.
    pub(crate) fn normalized(&self) -> Annotation {
        match self {
            Annotation::Text { text } => parse_annotation_text(text),
            Annotation::Union { members } => Annotation::Union {
                members: members.iter().map(Annotation::normalized).collect(),
            },
            other => other.clone(),
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Annotation::Type { name, .. } if name == "None")
    }

    pub(crate) fn is_type(&self, wanted: &str) -> bool {
        matches!(self, Annotation::Type { name, .. } if name == wanted)
    }

    pub(crate) fn is_subtype_of(&self, wanted: &str) -> bool {
        matches!(self, Annotation::Type { name, bases } if name == wanted || bases.iter().any(|b| b == wanted))
    }

    /// The members of a union other than `None`, or the annotation itself.
    pub(crate) fn without_none(&self) -> Vec<&Annotation> {
        match self {
            Annotation::Union { members } => members.iter().filter(|m| !m.is_none()).collect(),
            other => vec![other],
        }
    }
}

impl fmt::Display for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Annotation::Missing => f.write_str("no annotation"),
            Annotation::Any => f.write_str("Any"),
            Annotation::Type { name, .. } => f.write_str(name),
            Annotation::Generic { text, .. } | Annotation::Other { text } => f.write_str(text),
            Annotation::Text { text } => write!(f, "'{text}'"),
            Annotation::Union { members } => {
                let parts: Vec<String> = members.iter().map(ToString::to_string).collect();
                f.write_str(&parts.join(" | "))
            }
        }
    }
}

/// Parses the string spellings of `str`, `dict`, `None`, `Optional[X]`, `Union[X, Y]` and `X | Y`.
fn parse_annotation_text(text: &str) -> Annotation {
    let text = text.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    let pipe_parts = split_top_level(text, '|');
    if pipe_parts.len() > 1 {
        return Annotation::Union {
            members: pipe_parts
                .iter()
                .map(|p| parse_annotation_text(p))
                .collect(),
        };
    }
    if let Some(inner) = strip_generic(text, &["Optional", "typing.Optional"]) {
        return Annotation::Union {
            members: vec![parse_annotation_text(inner), Annotation::type_named("None")],
        };
    }
    if let Some(inner) = strip_generic(text, &["Union", "typing.Union"]) {
        return Annotation::Union {
            members: split_top_level(inner, ',')
                .iter()
                .map(|p| parse_annotation_text(p))
                .collect(),
        };
    }
    match text {
        "str" | "builtins.str" => Annotation::type_named("str"),
        "dict" | "builtins.dict" => Annotation::type_named("dict"),
        "None" | "NoneType" => Annotation::type_named("None"),
        "Any" | "typing.Any" => Annotation::Any,
        _ => Annotation::Text {
            text: text.to_string(),
        },
    }
}

fn strip_generic<'a>(text: &'a str, heads: &[&str]) -> Option<&'a str> {
    heads.iter().find_map(|head| {
        text.strip_prefix(head)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.strip_suffix(']'))
    })
}

fn split_top_level(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts
}

/// One parameter of a function, as Python's `inspect` saw it.
#[derive(Debug, Clone, Deserialize)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub annotation: Annotation,
    pub has_default: bool,
}

impl Param {
    pub(crate) fn is_named(&self) -> bool {
        !matches!(self.kind, ParamKind::VarPositional | ParamKind::VarKeyword)
    }
}

/// A function described as plain data.
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionShape {
    pub name: String,
    pub params: Vec<Param>,
}

/// What an annotation must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Exactly `str` (the reward contract).
    StrExact,
    /// `str` or a subclass (the rubric contract).
    StrLike,
    /// `str`-like, or a union of one `str`-like type with `None`.
    StrOrNone,
    /// `dict`, or a union of `dict` with `None` (`dict | None`, `Optional[dict]`), as 0.2.17 accepts.
    DictOrOptional,
    Anything,
}

impl Expect {
    pub(crate) fn accepts(self, ann: &Annotation) -> bool {
        match self {
            Expect::StrExact => ann.is_type("str"),
            Expect::StrLike => ann.is_subtype_of("str"),
            Expect::StrOrNone => {
                let rest = ann.without_none();
                rest.len() == 1 && rest[0].is_subtype_of("str")
            }
            Expect::DictOrOptional => {
                let rest = ann.without_none();
                rest.len() == 1 && rest[0].is_type("dict")
            }
            Expect::Anything => true,
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Expect::StrExact | Expect::StrLike => "str",
            Expect::StrOrNone => "str or Optional[str]",
            Expect::DictOrOptional => "dict or dict | None",
            Expect::Anything => "anything",
        }
    }
}
