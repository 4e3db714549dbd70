//! The shape of a row's values, as much as the row contracts (`contract.rs`) need: every reader and the
//! fast validation pass reduce a value to a [`ValueKind`], so they cannot disagree on a verdict.

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The shape of a value, as much as the contracts need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Null,
    Bool,
    Int,
    Float,
    Str(Text),
    Array,
    Object { empty: bool },
}

/// What a string holds, as much as the contracts need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    /// `""`.
    Empty,
    /// Only whitespace.
    Blank,
    /// The JSON text of an object (a `metadata` cell of a CSV file).
    JsonObject {
        empty: bool,
    },
    Plain,
}

impl Text {
    /// Classifies `s`; only a string starting with `{` is parsed (to see whether it is a JSON object).
    pub fn of(s: &str) -> Text {
        match s.trim_start_matches(python_space).chars().next() {
            None if s.is_empty() => Text::Empty,
            None => Text::Blank,
            Some('{') => json_object(s).map_or(Text::Plain, |empty| Text::JsonObject { empty }),
            Some(_) => Text::Plain,
        }
    }

    /// Empty or only whitespace (what the `eval` and `rubric` contracts refuse).
    pub fn is_blank(self) -> bool {
        matches!(self, Text::Empty | Text::Blank)
    }
}

/// Python's `str.isspace` (the same set in every supported version; a test compares them): what a blank
/// text is to the contracts and to `eval rubric`'s check, as to Python's `str.strip`. Rust's own
/// `char::is_whitespace` leaves out \x1c-\x1f.
pub(crate) fn python_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\x0b'
            | '\x0c'
            | '\r'
            | '\x1c'..='\x20'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// `Some(empty)` when `s` is the JSON text of an object.
fn json_object(s: &str) -> Option<bool> {
    struct Probe;
    impl<'de> Visitor<'de> for Probe {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let empty = map.next_entry::<IgnoredAny, IgnoredAny>()?.is_none();
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(empty)
        }
    }
    let mut de = serde_json::Deserializer::from_str(s);
    let empty = (&mut de).deserialize_map(Probe).ok()?;
    de.end().ok().map(|()| empty)
}

impl ValueKind {
    pub fn of(value: &Value) -> ValueKind {
        match value {
            Value::Null => ValueKind::Null,
            Value::Bool(_) => ValueKind::Bool,
            Value::Number(n) if n.is_f64() => ValueKind::Float,
            Value::Number(_) => ValueKind::Int,
            Value::String(s) => ValueKind::Str(Text::of(s)),
            Value::Array(_) => ValueKind::Array,
            Value::Object(map) => ValueKind::Object {
                empty: map.is_empty(),
            },
        }
    }

    /// The Python type name a user sees for this value once loaded (`int`, `dict`, ...).
    pub fn python_name(self) -> &'static str {
        match self {
            ValueKind::Null => "NoneType",
            ValueKind::Bool => "bool",
            ValueKind::Int => "int",
            ValueKind::Float => "float",
            ValueKind::Str(_) => "str",
            ValueKind::Array => "list",
            ValueKind::Object { .. } => "dict",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_classified() {
        assert_eq!(Text::of(""), Text::Empty);
        assert_eq!(Text::of(" \t"), Text::Blank);
        // Blank to Python's str.strip, not to Rust's char::is_whitespace.
        assert_eq!(Text::of("\x1c\x1f\u{3000}"), Text::Blank);
        assert_eq!(
            Text::of(" {\"a\": [1]} "),
            Text::JsonObject { empty: false }
        );
        assert_eq!(Text::of("{}"), Text::JsonObject { empty: true });
        for plain in ["{oops", "{} x", "[1]", "hi"] {
            assert_eq!(Text::of(plain), Text::Plain, "{plain}");
        }
    }
}
