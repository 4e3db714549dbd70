//! One read of a results log line serving both readers of the end of `osmosis eval`: the result model's
//! attempt ([`RawAttempt`]) and the `-o` rows' public run (`crate::stats::output_rows`). The line is read
//! through once, as strictly as the rows' reader reads it ([`Checked`]: the conversation a record carries is
//! checked, never built); the members either reader wants are kept as their raw text, and each reader
//! reads its own from there. A line this read refuses goes to each reader's own parse of the whole line
//! (which then says what is wrong with it, as before).

use super::attempt::RawAttempt;
use super::fields::Checked;
use super::plain_scan::{kept_members, NameIndex};
use crate::atif::json_tree::Json;
use crate::dataset::Key;
use crate::stats::output_rows::FIELDS as ROW_FIELDS;
use serde::de::value::MapDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt;
use std::sync::OnceLock;

/// The names of the members kept: the attempt's fields (as its `Deserialize` names them), then the rows'
/// fields the attempt does not read. `.1` is how many of them are the attempt's.
fn kept() -> &'static (NameIndex, usize) {
    static KEPT: OnceLock<(NameIndex, usize)> = OnceLock::new();
    KEPT.get_or_init(|| {
        let mut names = attempt_fields().to_vec();
        let attempt = names.len();
        for field in ROW_FIELDS {
            if !names.contains(&field) {
                names.push(field);
            }
        }
        (NameIndex::new(names), attempt)
    })
}

/// The field names `RawAttempt`'s derived `Deserialize` matches: what it hands `deserialize_struct`.
fn attempt_fields() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = RawAttempt::deserialize(FieldNames(&mut fields));
    fields
}

/// A deserializer that only notes the fields a struct asks for (and reads nothing).
struct FieldNames<'f>(&'f mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only a struct's field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("only a struct's field names are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A line read once: the kept members in the line's order (a repeated key each time), by their place in
/// [`kept`], as raw text borrowed from the line.
pub(crate) struct Captured<'a> {
    members: Vec<(u8, &'a RawValue)>,
}

/// The kept members of `line` when it is one valid JSON object (UTF-8 checked in one pass, every other
/// member read through by [`Checked`]); `None` otherwise.
pub(crate) fn capture(line: &[u8]) -> Option<Captured<'_>> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    if let Ok(members) = kept_members(text, &kept().0) {
        return Some(Captured { members });
    }
    capture_by_serde(text)
}

/// [`capture`] where the fast scanner is unsure: serde's strict read of the whole line.
fn capture_by_serde(text: &str) -> Option<Captured<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let members = de.deserialize_map(Capture(&kept().0)).ok()?;
    de.end().ok()?;
    Some(Captured { members })
}

struct Capture<'k>(&'k NameIndex);

impl<'de> Visitor<'de> for Capture<'_> {
    type Value = Vec<(u8, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut found = Vec::with_capacity(16);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match self.0.find(key.as_bytes()) {
                Some(at) => found.push((at as u8, map.next_value::<&'de RawValue>()?)),
                None => map.next_value_seed(Checked)?,
            }
        }
        Ok(found)
    }
}

impl<'a> Captured<'a> {
    /// The attempt, read from its members as the derived `Deserialize` reads the line (an `Err` where
    /// that would fail: the caller then parses the whole line for the error's own words).
    pub(crate) fn attempt(&self) -> Result<RawAttempt<'a>, serde_json::Error> {
        let (index, attempt) = kept();
        let names = index.names();
        let members = self
            .members
            .iter()
            .filter(|(at, _)| usize::from(*at) < *attempt)
            .map(|&(at, raw)| (names[usize::from(at)], raw));
        RawAttempt::deserialize(MapDeserializer::<_, serde_json::Error>::new(members))
    }

    /// What `object_members` gives for the same line: the members `place` puts somewhere, each a
    /// repeated key's last value, as the core's [`Json`]; every other kept member checked as strictly.
    pub(crate) fn members<const N: usize>(
        &self,
        place: impl Fn(&str) -> Option<usize>,
    ) -> Option<[Option<Json<'a>>; N]> {
        let names = kept().0.names();
        let mut found: [Option<Json<'a>>; N] = std::array::from_fn(|_| None);
        for &(at, raw) in &self.members {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            match place(names[usize::from(at)]) {
                Some(to) => found[to] = Some(Json::deserialize(&mut de).ok()?),
                None => Checked.deserialize(&mut de).ok()?,
            }
        }
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::{capture, kept};
    use crate::stats::object_members;
    use crate::stats::output_rows::FIELDS;

    fn place(key: &str) -> Option<usize> {
        FIELDS.iter().position(|field| *field == key)
    }

    /// What the fast scanner vouches for, serde's strict read accepts too, with the same members.
    fn agrees(text: &str) {
        if let Ok(fast) = super::kept_members(text, &kept().0) {
            let serde = super::capture_by_serde(text).unwrap_or_else(|| panic!("{text:?}"));
            let raw = |m: &[(u8, &serde_json::value::RawValue)]| {
                m.iter()
                    .map(|(at, raw)| (*at, raw.get().to_string()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(raw(&fast), raw(&serde.members), "{text:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        #[test]
        fn the_fast_scanner_vouches_only_for_what_serde_reads_alike(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", ":", ",", " ", "\t", "\n", "\x0c", "\"row_index\"", "\"scores\"",
                "\"a\"", "\"f\":1", "\"b\\u00e9\"", "\"\\ud800\"", "\"x\ty\"", "\"\\q\"", "\"\\\"\"",
                "1", "-0", "01", "-", "1.5", "1e400", "123456789012345678901", "true", "nul", "null",
                "\"\\u12\"", "\"\\u00zz\"", "\"\\/\"",
            ]), 0..10),
        ) {
            let text = format!("{{{}", pieces.concat());
            agrees(&text);
            agrees(&format!("{{\"row_index\":1,\"m\":{}}}", pieces.concat()));
        }
    }

    #[test]
    fn the_fast_scanner_reads_an_engine_line() {
        let line = r#"{"row_key":"76","row_index":0,"run_index":0,"model_tag":"","success":true,"scores":{"f":0.0},"error":null,"final_messages":[{"role":"user","content":"a\n\"q\" \u00e9"}],"duration_ms":5.48,"tokens":60,"num_llm_calls":1,"invocation":0,"invocation_ms":12.52}"#;
        assert!(super::kept_members(line, &kept().0).is_ok());
        agrees(line);
        for unsure in [
            r#"{"a":1.5}"#,
            r#"{"a":"\ud800"}"#,
            "{\"a\":\"\t\"}",
            r#"{"\u0061":1}"#,
        ] {
            assert!(super::kept_members(unsure, &kept().0).is_err(), "{unsure}");
        }
    }

    #[test]
    fn keeps_every_field_of_both_readers() {
        let (index, attempt) = kept();
        let names = index.names();
        assert!(names[..*attempt].contains(&"scores"));
        assert!(names[..*attempt].contains(&"invocation_cpu_ms"));
        assert!(names.contains(&"error") && !names[..*attempt].contains(&"error"));
        for (place, name) in names.iter().enumerate() {
            assert_eq!(index.find(name.as_bytes()), Some(place), "{name}");
        }
        for other in ["final_messages", "", "rows", "score", "run_indexx"] {
            assert_eq!(index.find(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn reads_as_each_reader_reads_the_whole_line() {
        for line in [
            &br#"{"row_index":1,"run_index":0,"success":true,"scores":{"f":0.5},"msgs":[{"c":"x \" ]"}],"tokens":3}"#[..],
            br#"{"row_index":1,"run_index":0,"scores":{"f":1},"scores":{"g":2},"error":"e\u00e9"}"#,
            br#"{"row\u005findex":2,"run_index":1,"model_tag":"b","status":"unscored","invocation":3}"#,
            br#"{"row_index":1,"run_index":0,"success":"yes"}"#,
            br#"{"row_index":1,"run_index":0,"b":"\ud800"}"#,
            br#"{"row_index":1,"run_index":0,"tokens":1e400}"#,
            br#"{"row_index":1,"run_index":0,"row_key":"\ud800"}"#,
            br#"{"row_index":1,"run_index":0} x"#,
            br#"[1, 0]"#,
            b"{\"row_index\":1,\"run_index\":0,\"b\":\"\xff\"}",
        ] {
            let text = String::from_utf8_lossy(line);
            let whole: Result<super::RawAttempt<'_>, _> = serde_json::from_slice(line);
            let captured = capture(line);
            let members = object_members::<9>(line, place);
            match &captured {
                Some(c) => {
                    assert_eq!(c.members::<9>(place), members, "{text}");
                    match (c.attempt(), &whole) {
                        (Ok(a), Ok(b)) => {
                            assert_eq!(a.row_index, b.row_index, "{text}");
                            assert_eq!(a.run_index, b.run_index, "{text}");
                            assert_eq!(a.names().collect::<Vec<_>>(), b.names().collect::<Vec<_>>());
                            assert_eq!(a.invocation, b.invocation, "{text}");
                        }
                        (Err(_), Err(_)) => {}
                        (a, b) => panic!("{text}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
                    }
                }
                None => assert_eq!(members, None, "{text}"),
            }
        }
    }
}
