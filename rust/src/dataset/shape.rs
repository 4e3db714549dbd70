//! The shape of a JSON row without building it: top-level keys (borrowed from the input where no escape
//! forces a copy) and the [`ValueKind`] of each value. Nested values are syntax-checked and dropped.
//! This is what makes the validation pass cheap.

use super::value_kind::{Text, ValueKind};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// A top-level row: an object's (key, kind) pairs, or the kind of a non-object.
pub(crate) enum Shape<'a> {
    Object(Vec<(Cow<'a, str>, ValueKind)>),
    Other(ValueKind),
}

struct Kind(ValueKind);
/// An object key, borrowed from the line unless it holds escapes (serde's own `Cow<str>` always copies).
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = ValueKind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<ValueKind, E> {
        Ok(ValueKind::Bool)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<ValueKind, E> {
        Ok(ValueKind::Int)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<ValueKind, E> {
        Ok(ValueKind::Int)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<ValueKind, E> {
        Ok(ValueKind::Float)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<ValueKind, E> {
        Ok(ValueKind::Str(Text::of(s)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<ValueKind, E> {
        Ok(ValueKind::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<ValueKind, E> {
        Ok(ValueKind::Null)
    }
    // Nested values go through `Kind` (deserialize_any), not `IgnoredAny`: serde_json skips ignored
    // values without its recursion limit, so validation passed rows nested deeper than reading allows.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ValueKind, A::Error> {
        while seq.next_element::<Kind>()?.is_some() {}
        Ok(ValueKind::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ValueKind, A::Error> {
        let empty = map.next_entry::<IgnoredAny, Kind>()?.is_none();
        while map.next_entry::<IgnoredAny, Kind>()?.is_some() {}
        Ok(ValueKind::Object { empty })
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor).map(Kind)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape<'de>, A::Error> {
        let mut entries = Vec::with_capacity(8);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let Kind(kind) = map.next_value::<Kind>()?;
            entries.push((key, kind));
        }
        Ok(Shape::Object(entries))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Shape<'de>, E> {
        KindVisitor.visit_bool(v).map(Shape::Other)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Shape<'de>, E> {
        KindVisitor.visit_i64(v).map(Shape::Other)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Shape<'de>, E> {
        KindVisitor.visit_u64(v).map(Shape::Other)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Shape<'de>, E> {
        KindVisitor.visit_f64(v).map(Shape::Other)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Shape<'de>, E> {
        KindVisitor.visit_str(v).map(Shape::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Shape<'de>, E> {
        Ok(Shape::Other(ValueKind::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape<'de>, A::Error> {
        KindVisitor.visit_seq(seq).map(Shape::Other)
    }
}

impl<'de> Deserialize<'de> for Shape<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

/// The kind of one JSON value given as text (`None` if serde rejects it).
pub(crate) fn value_kind(text: &str) -> Option<ValueKind> {
    serde_json::from_str::<Kind>(text)
        .ok()
        .map(|Kind(kind)| kind)
}

/// Parses one JSON text into its shape.
pub(crate) fn parse(text: &str) -> Result<Shape<'_>, serde_json::Error> {
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_deeper_than_reading_allows_is_refused_here_too() {
        let deep = |n: usize| format!("{{\"a\": {}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(100)).is_ok());
        let reading: Result<serde_json::Value, _> = serde_json::from_str(&deep(200_000));
        let err = parse(&deep(200_000)).err().expect("too deep");
        assert!(err.to_string().contains("recursion limit"), "{err}");
        assert!(reading.is_err());
    }

    #[test]
    fn shape_of_an_object_row() {
        let Shape::Object(entries) =
            parse(r#"{"a": "x", "b\u0041": [1, {"c": 2}], "n": null, "s": " "}"#).unwrap()
        else {
            panic!("expected an object");
        };
        let keys: Vec<_> = entries.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["a", "bA", "n", "s"]);
        assert_eq!(entries[1].1, ValueKind::Array);
        assert_eq!(entries[2].1, ValueKind::Null);
        assert_eq!(entries[3].1, ValueKind::Str(Text::Blank));
        assert!(matches!(
            parse("[1]").unwrap(),
            Shape::Other(ValueKind::Array)
        ));
        assert!(parse(r#"{"a": [1,}"#).is_err());
    }
}
