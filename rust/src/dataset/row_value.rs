//! A row as a `serde_json::Value`, refusing a top-level key given twice.
//!
//! serde_json keeps the last of two equal keys, so a row with `ground_truth` twice was read with the
//! second value while `dataset validate` (which sees every key) refused it: one file, two verdicts.
//! Nested objects keep serde_json's behaviour; the row contract concerns the top level.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// The parsed row; the error of a repeated top-level key names it.
pub(crate) struct RowValue(pub Value);

struct RowVisitor;

impl<'de> Visitor<'de> for RowVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value::<Value>()?;
            if fields.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "key '{key}' given twice in the same row"
                )));
            }
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

impl<'de> Deserialize<'de> for RowValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RowVisitor).map(RowValue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Value, serde_json::Error> {
        serde_json::from_str::<RowValue>(text).map(|r| r.0)
    }

    #[test]
    fn same_values_as_serde_json_and_a_repeated_top_level_key_refused() {
        for text in [
            r#"{"a": 1, "b": [1, {"c": null}], "d": "x"}"#,
            "[1, 2]",
            "3.5",
            r#""s""#,
            "null",
        ] {
            assert_eq!(
                parse(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
        }
        let err = parse(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap_err();
        assert!(err.to_string().contains("key 'a' given twice"), "{err}");
        // Nested objects are not the contract's business.
        assert!(parse(r#"{"a": {"x": 1, "x": 2}}"#).is_ok());
    }
}
