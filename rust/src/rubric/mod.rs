//! The check of `eval rubric`'s chat records before a session (`RecordSource.scan` in Python), without
//! building a Python object of them: each line is parsed here, and only a line this check cannot vouch
//! for goes back to Python's reader, which accepts it or raises the error naming its file, line and field.
//!
//! A chat record is a JSON object whose candidate text is the last `assistant` message's content (a
//! string, or the `text` of its `{"type": "text"}` parts), else a `solution_str` string, either not blank
//! by Python's `str.strip`; `ground_truth` and `original_input` strings or null, `metadata` an object or
//! null. A line is vouched for only when all of that holds for certain: anything else (invalid JSON,
//! what serde_json and Python's readers may read apart, a duplicate key that matters, a check that fails)
//! is handed back.

mod console;
pub mod document;
mod figures;

use crate::dataset::python_space;
use crate::stats::{blank, Checked};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// What a scan of a chat JSONL file found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ChatScan {
    /// Non-blank lines: each is a record (or an error Python raises).
    pub records: u64,
    /// `(line from 1, record index from 1, byte offset)` of each line this check did not vouch for.
    pub unsure: Vec<(u64, u64, u64)>,
}

/// Scans the chat records of a JSONL file (lines split at `\n`, as Python's binary line iteration does).
pub fn scan_chat_records(path: &Path) -> io::Result<ChatScan> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut scan = ChatScan::default();
    let mut line = Vec::with_capacity(4096);
    let (mut number, mut offset) = (0u64, 0u64);
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(scan);
        }
        number += 1;
        if !blank(&line) {
            scan.records += 1;
            if !chat_line_ok(&line) {
                scan.unsure.push((number, scan.records, offset));
            }
        }
        offset += read as u64;
    }
}

/// Whether a line is certainly a valid chat record (see the module's description).
pub fn chat_line_ok(line: &[u8]) -> bool {
    let Ok(text) = simdutf8::basic::from_utf8(line) else {
        return false;
    };
    let mut de = serde_json::Deserializer::from_str(text);
    match de.deserialize_any(RecordVisitor) {
        Ok(Some(record)) => de.end().is_ok() && record.ok(),
        _ => false,
    }
}

fn not_blank(text: &str) -> bool {
    !text.chars().all(python_space)
}

fn set<T>(slot: &mut Option<T>, value: T, twice: &mut bool) {
    *twice |= slot.is_some();
    *slot = Some(value);
}

/// Visit methods of a visitor that answers `$value` for the kinds of value named (`scalars`: booleans
/// and numbers, with `expecting`; `seq` and `map` are read through, unlooked at).
macro_rules! answer {
    ($value:expr; $($part:ident),*) => { $(answer!(@ $part $value);)* };
    (@ scalars $value:expr) => {
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
    (@ unit $value:expr) => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
    (@ str $value:expr) => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
    (@ seq $value:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element_seed(Checked)?.is_some() {}
            Ok($value)
        }
    };
    (@ map $value:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_key_seed(Checked)?.is_some() {
                map.next_value_seed(Checked)?;
            }
            Ok($value)
        }
    };
}

/// `Deserialize` of `$type` by `deserialize_any` with the visitor `$visitor`.
macro_rules! by_visitor {
    ($type:ty, $visitor:ident) => {
        struct $visitor;

        impl<'de> Deserialize<'de> for $type {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any($visitor)
            }
        }
    };
}

/// A field's value as far as a check needs it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    /// A string that is not blank.
    Text,
    /// A blank string.
    Blank,
    Object,
    Other,
}

by_visitor!(Kind, KindVisitor);

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;
    answer!(Kind::Other; scalars, seq);
    answer!(Kind::Null; unit);
    answer!(Kind::Object; map);
    fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
        Ok(if not_blank(v) {
            Kind::Text
        } else {
            Kind::Blank
        })
    }
}

/// The top-level fields a chat record's check reads; `twice`: one of them given twice (Python's readers
/// keep the last, this check does not try to).
#[derive(Default)]
struct Record {
    messages: Option<Candidate>,
    solution_str: Option<Kind>,
    ground_truth: Option<Kind>,
    original_input: Option<Kind>,
    metadata: Option<Kind>,
    twice: bool,
}

impl Record {
    fn ok(&self) -> bool {
        let text_or_null =
            |k: Option<Kind>| matches!(k, None | Some(Kind::Null | Kind::Text | Kind::Blank));
        let candidate = match self.messages.unwrap_or(Candidate::None) {
            Candidate::Text => true,
            Candidate::None => self.solution_str == Some(Kind::Text),
            Candidate::Unsure => false,
        };
        !self.twice
            && candidate
            && text_or_null(self.ground_truth)
            && text_or_null(self.original_input)
            && matches!(self.metadata, None | Some(Kind::Null | Kind::Object))
    }
}

/// A line's record; `None` for a line that is not an object (Python reports it).
struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Option<Record>;
    answer!(None; scalars, unit, str, seq);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut r = Record::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let twice = &mut r.twice;
            match key.as_ref() {
                "messages" => set(&mut r.messages, map.next_value()?, twice),
                "solution_str" => set(&mut r.solution_str, map.next_value()?, twice),
                "ground_truth" => set(&mut r.ground_truth, map.next_value()?, twice),
                "original_input" => set(&mut r.original_input, map.next_value()?, twice),
                "metadata" => set(&mut r.metadata, map.next_value()?, twice),
                _ => {
                    map.next_value_seed(Checked)?;
                }
            }
        }
        Ok(Some(r))
    }
}

/// What `messages` says of the candidate text: the last assistant message's is not blank, there is no
/// such message (or `messages` is not a list: `solution_str` decides), or this check cannot tell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Candidate {
    Text,
    None,
    Unsure,
}

by_visitor!(Candidate, MessagesVisitor);

impl<'de> Visitor<'de> for MessagesVisitor {
    type Value = Candidate;
    answer!(Candidate::None; scalars, unit, str, map);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Candidate, A::Error> {
        // The last assistant message decides (Python reads them from the end).
        let mut last = Candidate::None;
        while let Some(Message(said)) = seq.next_element()? {
            last = said.unwrap_or(last);
        }
        Ok(last)
    }
}

/// One element of `messages`: what it says of the candidate when it is an object whose `role` is
/// `assistant` (or that gives `role` or `content` twice), else nothing.
struct Message(Option<Candidate>);

by_visitor!(Message, MessageVisitor);

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;
    answer!(Message(None); scalars, unit, str, seq);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let (mut assistant, mut content, mut twice) = (None, None, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "role" => set(
                    &mut assistant,
                    map.next_value_seed(Is("assistant"))?,
                    &mut twice,
                ),
                "content" => set(&mut content, map.next_value::<Content>()?.0, &mut twice),
                _ => {
                    map.next_value_seed(Checked)?;
                }
            }
        }
        Ok(Message(match (twice, assistant, content) {
            (true, _, _) => Some(Candidate::Unsure),
            (false, Some(true), Some(true)) => Some(Candidate::Text),
            (false, Some(true), _) => Some(Candidate::Unsure),
            _ => None,
        }))
    }
}

/// Whether a value is the string `.0`.
struct Is(&'static str);

impl<'de> DeserializeSeed<'de> for Is {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Is {
    type Value = bool;
    answer!(false; scalars, unit, seq, map);
    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

/// Whether an assistant message's content is certainly not blank: a string, or the joined `text` of its
/// text parts (one part not blank is enough). Anything else: Python decides.
struct Content(bool);

by_visitor!(Content, ContentVisitor);

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;
    answer!(Content(false); scalars, unit, map);
    fn visit_str<E>(self, v: &str) -> Result<Content, E> {
        Ok(Content(not_blank(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut found = false;
        while let Some(Part(text)) = seq.next_element()? {
            found |= text;
        }
        Ok(Content(found))
    }
}

/// Whether a content part is certainly `{"type": "text", "text": <not blank>}` (no key given twice).
struct Part(bool);

by_visitor!(Part, PartVisitor);

impl<'de> Visitor<'de> for PartVisitor {
    type Value = Part;
    answer!(Part(false); scalars, unit, str, seq);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
        let (mut kind, mut text, mut twice) = (None, None, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => set(&mut kind, map.next_value_seed(Is("text"))?, &mut twice),
                "text" => set(&mut text, map.next_value::<Kind>()?, &mut twice),
                _ => {
                    map.next_value_seed(Checked)?;
                }
            }
        }
        Ok(Part(
            !twice && kind == Some(true) && text == Some(Kind::Text),
        ))
    }
}

#[cfg(test)]
mod tests;
