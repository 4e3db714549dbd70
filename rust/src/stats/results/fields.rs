//! Chosen top-level fields of one JSON object line, the rest of the line checked but never built.
//!
//! A results log record carries the whole conversation of its run; a reader that wants only a few of its
//! fields (the `-o` rows want the scores, not the messages) skips the rest here instead of building every
//! string of it.

use crate::atif::json_tree::Json;
use crate::dataset::Key;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// The members of the one JSON object `line` whose keys `place` puts somewhere (its place, below `N`), each
/// a repeated key's last value, borrowed from the line as the core's [`Json`]; every other member is read
/// through as strictly ([`Checked`]) and not built. `None` when `line` is not one valid JSON object.
pub(crate) fn object_members<const N: usize>(
    line: &[u8],
    place: impl Fn(&str) -> Option<usize>,
) -> Option<[Option<Json<'_>>; N]> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let mut found: [Option<Json<'_>>; N] = std::array::from_fn(|_| None);
    each_member(text, place, |at, value| found[at] = Some(value))?;
    Some(found)
}

/// Reads the one JSON object `text` member by member: each whose key `place` puts somewhere is read as a
/// `V` and handed to `keep` with its place, in the line's order (a repeated key each time); every other
/// member is read through as strictly ([`Checked`]) and not built. `None` when `text` is not one valid
/// JSON object (or a kept member is not a `V`).
pub(crate) fn each_member<'de, V: Deserialize<'de>>(
    text: &'de str,
    place: impl Fn(&str) -> Option<usize>,
    keep: impl FnMut(usize, V),
) -> Option<()> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Members {
        place,
        keep,
        value: PhantomData,
    })
    .ok()?;
    de.end().ok()
}

struct Members<F, K, V> {
    place: F,
    keep: K,
    value: PhantomData<V>,
}

impl<'de, F, K, V> Visitor<'de> for Members<F, K, V>
where
    F: Fn(&str) -> Option<usize>,
    K: FnMut(usize, V),
    V: Deserialize<'de>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(mut self, mut map: M) -> Result<(), M::Error> {
        // Keys through the one object-key reader (borrowed unless escaped).
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match (self.place)(&key) {
                Some(at) => (self.keep)(at, map.next_value()?),
                None => map.next_value_seed(Checked)?,
            }
        }
        Ok(())
    }
}

/// `(index into fields, value)` of each of `fields` the object `line` has, in the line's order (a key
/// written twice gives both: the later wins where they are put into a map). `None` when `line` is not
/// one valid JSON object (a caller reads such a line its own way, to say what is wrong with it).
///
/// Example: `project_object(br#"{"a":1,"b":[2]}"#, &["b".into()])` is `Some(vec![(0, json!([2]))])`.
pub fn project_object(line: &[u8], fields: &[String]) -> Option<Vec<(usize, Value)>> {
    // Skipping a string does not check its UTF-8; the whole line's check is one fast pass.
    let line = simdutf8::basic::from_utf8(line).ok()?;
    let mut de = serde_json::Deserializer::from_str(line);
    let found = Projection { fields }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    // serde_json reads `-0` as the float -0.0 where orjson reads the integer 0: the caller's reader
    // tells them apart.
    if found.iter().any(|(_, value)| has_negative_zero(value)) {
        return None;
    }
    Some(found)
}

fn has_negative_zero(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()),
        Value::Array(items) => items.iter().any(has_negative_zero),
        Value::Object(map) => map.values().any(has_negative_zero),
        _ => false,
    }
}

struct Projection<'f> {
    fields: &'f [String],
}

impl<'de> DeserializeSeed<'de> for Projection<'_> {
    type Value = Vec<(usize, Value)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Projection<'_> {
    type Value = Vec<(usize, Value)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut found = Vec::with_capacity(self.fields.len());
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match self.fields.iter().position(|field| *field == key) {
                Some(index) => found.push((index, map.next_value::<Value>()?)),
                None => map.next_value_seed(Checked)?,
            }
        }
        Ok(found)
    }
}

/// A value read through and dropped, as strictly as one that is kept: unlike serde's `IgnoredAny`, its
/// strings are decoded, so a lone surrogate escape is refused as orjson refuses it. Nothing is built
/// (a string without escapes is borrowed from the line).
pub(crate) struct Checked;

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Checked)?.is_some() {}
        Ok(())
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while map.next_key_seed(Checked)?.is_some() {
            map.next_value_seed(Checked)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::project_object;
    use serde_json::json;

    fn fields(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn keeps_the_chosen_fields_in_line_order() {
        let line = br#"{"a":1,"msgs":[{"content":"x \" ] }"}],"b":{"s":0.5},"c":null}"#;
        let got = project_object(line, &fields(&["c", "b"])).unwrap();
        assert_eq!(got, vec![(1, json!({"s": 0.5})), (0, json!(null))]);
    }

    #[test]
    fn escaped_keys_and_repeats() {
        let got = project_object(br#"{"\u0061":1,"a":2}"#, &fields(&["a"])).unwrap();
        assert_eq!(got, vec![(0, json!(1)), (0, json!(2))]);
    }

    #[test]
    fn refuses_what_is_not_one_object() {
        let names = fields(&["a"]);
        for line in [
            &b"[1]"[..],
            b"5",
            br#"{"a":1"#,
            br#"{"a":1} x"#,
            br#"{"b":[1,}"#,
            b"{\"b\":\"\xff\"}",
            b"{\"b\":\"a\x01b\"}",
            br#"{"b":"\ud800"}"#,
            br#"{"b":"\q"}"#,
            br#"{"b":"\ud800\u0041"}"#,
            br#"{"b":1e400}"#,
        ] {
            assert_eq!(
                project_object(line, &names),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert_eq!(
            project_object(b" {\"a\":1}\n", &names),
            Some(vec![(0, json!(1))])
        );
    }
}
