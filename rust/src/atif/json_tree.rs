//! A JSON value borrowing its text from the line it was read from: a results log record carries a whole
//! conversation, and the end of `eval run` copies its strings into a document once, when it writes it
//! (a `serde_json::Value` would allocate every string and every object's index on reading, then again
//! on every copy into the document). Objects keep their keys in order and take a repeated key's last
//! value at its first place, as a Python `dict` built by `json.loads` / `orjson.loads` does.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// One JSON value (an integer literal in 64 bits is `Int` / `UInt`, any other number `Float`).
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Obj<'a>),
    /// Another value, written as it is (a document's copy of a record's value, without copying it).
    Ref(&'a Json<'a>),
}

/// An object: its members in order, each key once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Obj<'a> {
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
}

/// Objects past this many members find a key through a map while they are read.
const INDEXED: usize = 32;

impl<'a> Obj<'a> {
    pub const fn new() -> Self {
        Obj {
            entries: Vec::new(),
        }
    }

    pub fn into_entries(self) -> impl Iterator<Item = (Cow<'a, str>, Json<'a>)> {
        self.entries.into_iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// `dict[key] = value`: a key already there keeps its place.
    pub fn insert(&mut self, key: impl Into<Cow<'a, str>>, value: impl Into<Json<'a>>) {
        let (key, value) = (key.into(), value.into());
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Appends a member of a key the object does not have (an object built of distinct keys, without a
    /// lookup per member).
    pub fn push(&mut self, key: impl Into<Cow<'a, str>>, value: impl Into<Json<'a>>) {
        let key = key.into();
        debug_assert!(self.get(&key).is_none(), "{key} is there already");
        self.entries.push((key, value.into()));
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<'a> Json<'a> {
    /// The value itself, past any `Ref`.
    pub fn resolved(&self) -> &Json<'a> {
        let mut value = self;
        while let Json::Ref(target) = value {
            value = target;
        }
        value
    }

    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object()?.get(key)
    }

    pub fn as_object(&self) -> Option<&Obj<'a>> {
        match self.resolved() {
            Json::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Json<'a>>> {
        match self.resolved() {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self.resolved() {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.resolved(), Json::Null)
    }

    /// An integer a 64-bit signed reader holds (Python's `_is_int`).
    pub fn as_i64(&self) -> Option<i64> {
        match self.resolved() {
            Json::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn is_float(&self) -> bool {
        matches!(self.resolved(), Json::Float(_))
    }

    /// Python's `bool(value)`.
    pub fn truthy(&self) -> bool {
        match self.resolved() {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Int(i) => *i != 0,
            Json::UInt(u) => *u != 0,
            Json::Float(f) => *f != 0.0,
            Json::Str(s) => !s.is_empty(),
            Json::Array(items) => !items.is_empty(),
            Json::Object(map) => !map.is_empty(),
            Json::Ref(target) => target.truthy(),
        }
    }

    /// The same value as a `serde_json::Value` (for the one conversion to Python objects).
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Int(i) => Value::from(*i),
            Json::UInt(u) => Value::from(*u),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(s) => Value::String(s.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect(),
            ),
            Json::Ref(target) => target.to_value(),
        }
    }

    /// The same value owning all its text.
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Int(i) => Json::Int(i),
            Json::UInt(u) => Json::UInt(u),
            Json::Float(f) => Json::Float(f),
            Json::Str(s) => Json::Str(Cow::Owned(s.into_owned())),
            Json::Array(items) => Json::Array(items.into_iter().map(Json::into_owned).collect()),
            Json::Object(map) => Json::Object(Obj {
                entries: map
                    .entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            }),
            Json::Ref(target) => target.clone().into_owned(),
        }
    }

    /// The value of one JSON text, or None when `text` is not valid JSON.
    pub fn parse(text: &'a str) -> Option<Json<'a>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = Json::deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(value)
    }
}

impl<'a> From<&'a str> for Json<'a> {
    fn from(s: &'a str) -> Self {
        Json::Str(Cow::Borrowed(s))
    }
}

impl From<String> for Json<'_> {
    fn from(s: String) -> Self {
        Json::Str(Cow::Owned(s))
    }
}

impl From<usize> for Json<'_> {
    fn from(n: usize) -> Self {
        i64::try_from(n).map_or(Json::UInt(n as u64), Json::Int)
    }
}

impl From<bool> for Json<'_> {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

impl<'a> From<Obj<'a>> for Json<'a> {
    fn from(map: Obj<'a>) -> Self {
        Json::Object(map)
    }
}

impl<'a> From<Vec<Json<'a>>> for Json<'a> {
    fn from(items: Vec<Json<'a>>) -> Self {
        Json::Array(items)
    }
}

impl<'a> FromIterator<(Cow<'a, str>, Json<'a>)> for Obj<'a> {
    fn from_iter<I: IntoIterator<Item = (Cow<'a, str>, Json<'a>)>>(iter: I) -> Self {
        let mut map = Obj::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Json<'de>, E> {
        Ok(Json::Int(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Json<'de>, E> {
        Ok(i64::try_from(u).map_or(Json::UInt(u), Json::Int))
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Json<'de>, E> {
        // serde_json reads `-0` as the float -0.0 where orjson reads the integer 0: such a line is the
        // Python builder's (the writers refuse -0.0 anyway).
        if f == 0.0 && f.is_sign_negative() {
            return Err(E::custom("a negative zero"));
        }
        Ok(Json::Float(f))
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s.to_string())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Json<'de>, M::Error> {
        let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        let mut index: HashMap<Cow<'de, str>, usize> = HashMap::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let value: Json<'de> = map.next_value()?;
            let at = if entries.len() < INDEXED {
                entries.iter().position(|(k, _)| *k == key)
            } else {
                if index.is_empty() {
                    index.extend(entries.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)));
                }
                index.get(&key).copied()
            };
            match at {
                Some(at) => entries[at].1 = value,
                None => {
                    if !index.is_empty() {
                        index.insert(key.clone(), entries.len());
                    }
                    entries.push((key, value));
                }
            }
        }
        Ok(Json::Object(Obj { entries }))
    }
}

/// An object key, borrowed from the text unless it holds escapes.
struct Key;

impl<'de> de::DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn repeated_keys_keep_their_first_place_and_last_value() {
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!(
            "{{\"a\":1,\"b\":2,\"a\":3,{},\"k5\":\"x\"}}",
            many.join(",")
        );
        let value = Json::parse(&text).unwrap();
        let map = value.as_object().unwrap();
        let keys: Vec<&str> = map.iter().map(|(k, _)| k).take(3).collect();
        assert_eq!(keys, ["a", "b", "k0"]);
        assert_eq!(map.get("a"), Some(&Json::Int(3)));
        assert_eq!(map.get("k5"), Some(&Json::from("x")));
        assert_eq!(map.len(), 42);
    }

    #[test]
    fn numbers_and_refusals() {
        let value = Json::parse(r#"[1, -2, 18446744073709551615, 1.5, 1e2, "a\nb"]"#).unwrap();
        let items = value.as_array().unwrap();
        assert_eq!(items[2], Json::UInt(u64::MAX));
        assert!(items[3].is_float() && items[4].is_float());
        assert_eq!(items[5].as_str(), Some("a\nb"));
        for bad in ["[1,]", "{\"a\":1} x", r#""\ud800""#, "NaN"] {
            assert!(Json::parse(bad).is_none(), "{bad}");
        }
    }
}
