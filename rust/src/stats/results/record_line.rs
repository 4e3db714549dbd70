//! One read of a results log line serving both readers of the end of `osmosis eval`: the result model's
//! attempt ([`RawAttempt`]) and the `-o` rows' public run (`crate::stats::output_rows`). The line is read
//! through once, as strictly as the rows' reader reads it ([`Checked`]: the conversation a record carries is
//! checked, never built); the members either reader wants are kept as their raw text, and each reader
//! reads its own from there. A line this read refuses goes to each reader's own parse of the whole line
//! (which then says what is wrong with it, as before).

use super::attempt::RawAttempt;
use super::fields::{each_member, Checked};
use crate::atif::json_tree::Json;
use crate::stats::output_rows::FIELDS as ROW_FIELDS;
use serde::de::value::MapDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::OnceLock;

/// The names of the members kept: the attempt's fields (as its `Deserialize` names them), then the rows'
/// fields the attempt does not read. `.1` is how many of them are the attempt's.
fn kept() -> &'static (Vec<&'static str>, usize) {
    static KEPT: OnceLock<(Vec<&'static str>, usize)> = OnceLock::new();
    KEPT.get_or_init(|| {
        let mut names = attempt_fields().to_vec();
        let attempt = names.len();
        for field in ROW_FIELDS {
            if !names.contains(&field) {
                names.push(field);
            }
        }
        (names, attempt)
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
/// member read through by [`Checked`]) and serde's read of the whole line would not refuse a kept member
/// for its nesting ([`too_deep`]); `None` otherwise.
pub(crate) fn capture(line: &[u8]) -> Option<Captured<'_>> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let names = &kept().0;
    let mut members = Vec::with_capacity(16);
    each_member(
        text,
        |key| names.iter().position(|name| *name == key),
        |at, raw: &RawValue| members.push((at as u8, raw)),
    )?;
    if members.iter().any(|(_, raw)| too_deep(raw.get())) {
        return None;
    }
    Some(Captured { members })
}

/// Whether the member `raw` nests past what serde's read of the whole line allows. A kept member is read
/// again from its own text, with a fresh nesting budget (128) where inside the line one level is already
/// spent on the object itself: such a member is read as it would be inside the line, one level down (only
/// one long enough to nest that deep, two bytes a level, is read again).
fn too_deep(raw: &str) -> bool {
    const LINE_ALLOWS: usize = 127;
    if raw.len() < 2 * LINE_ALLOWS {
        return false;
    }
    let inside = format!("[{raw}]");
    Checked
        .deserialize(&mut serde_json::Deserializer::from_str(&inside))
        .is_err()
}

impl<'a> Captured<'a> {
    /// The attempt, read from its members as the derived `Deserialize` reads the line (an `Err` where
    /// that would fail: the caller then parses the whole line for the error's own words).
    pub(crate) fn attempt(&self) -> Result<RawAttempt<'a>, serde_json::Error> {
        let (names, attempt) = kept();
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
        let names = &kept().0;
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

    #[test]
    fn keeps_every_field_of_both_readers() {
        let (names, attempt) = kept();
        assert!(names[..*attempt].contains(&"scores"));
        assert!(names[..*attempt].contains(&"invocation_cpu_ms"));
        assert!(names.contains(&"error") && !names[..*attempt].contains(&"error"));
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

    #[test]
    fn a_member_nested_as_deep_as_the_line_allows_reads_as_the_whole_line_reads() {
        for depth in 120..=130 {
            for (member, inner) in [("scores", "1"), ("tokens", "1"), ("error", "{}")] {
                let value = format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth));
                let line = format!(r#"{{"row_index":1,"run_index":0,"{member}":{value}}}"#);
                let members = object_members::<9>(line.as_bytes(), place);
                let captured = capture(line.as_bytes());
                let got = captured.as_ref().and_then(|c| c.members::<9>(place));
                assert_eq!(got, members, "{member} {depth}");
                let whole = serde_json::from_str::<super::RawAttempt<'_>>(&line).is_ok();
                // The pass reads the whole line where the shared read is refused or fails.
                let once = matches!(captured.map(|c| c.attempt()), Some(Ok(_))) || whole;
                assert_eq!(once, whole, "{member} {depth}");
            }
        }
    }
}
