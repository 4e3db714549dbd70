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

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
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
        // Python's bytes.strip: \x0b and \x0c are blank too.
        if !line.iter().all(|b| b" \t\n\r\x0b\x0c".contains(b)) {
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
    match Record::deserialize(&mut de) {
        Ok(record) => de.end().is_ok() && record.ok(),
        Err(_) => false,
    }
}

/// Python's `str.isspace` (the same set in every supported version; a test compares them).
fn python_space(c: char) -> bool {
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

fn not_blank(text: &str) -> bool {
    !text.chars().all(python_space)
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

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
        Ok(if not_blank(v) {
            Kind::Text
        } else {
            Kind::Blank
        })
    }
    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Kind::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Kind::Object)
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

fn set<T>(slot: &mut Option<T>, value: T, twice: &mut bool) {
    *twice |= slot.is_some();
    *slot = Some(value);
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RecordVisitor)
    }
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
        let mut r = Record::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let twice = &mut r.twice;
            match key.as_ref() {
                "messages" => set(&mut r.messages, map.next_value_seed(MessagesSeed)?, twice),
                "solution_str" => set(&mut r.solution_str, map.next_value()?, twice),
                "ground_truth" => set(&mut r.ground_truth, map.next_value()?, twice),
                "original_input" => set(&mut r.original_input, map.next_value()?, twice),
                "metadata" => set(&mut r.metadata, map.next_value()?, twice),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(r)
    }
}

/// What the messages say of the candidate text: the last assistant message's is not blank, there is no
/// such message (or `messages` is not a list: `solution_str` decides), or this check cannot tell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Candidate {
    Text,
    None,
    Unsure,
}

struct MessagesSeed;

impl<'de> DeserializeSeed<'de> for MessagesSeed {
    type Value = Candidate;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Candidate, D::Error> {
        d.deserialize_any(MessagesVisitor)
    }
}

struct MessagesVisitor;

impl<'de> Visitor<'de> for MessagesVisitor {
    type Value = Candidate;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Candidate, E> {
        Ok(Candidate::None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Candidate, E> {
        Ok(Candidate::None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Candidate, E> {
        Ok(Candidate::None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Candidate, E> {
        Ok(Candidate::None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Candidate, E> {
        Ok(Candidate::None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Candidate, E> {
        Ok(Candidate::None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Candidate, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Candidate::None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Candidate, A::Error> {
        // The last assistant message decides (Python reads them from the end).
        let mut last = Candidate::None;
        while let Some(message) = seq.next_element::<Message>()? {
            if let Some(verdict) = message.candidate() {
                last = verdict;
            }
        }
        Ok(last)
    }
}

/// One element of `messages`: `None` unless it is an object whose `role` is `assistant`.
#[derive(Default)]
struct Message {
    role: Option<bool>,
    content: Option<Content>,
    twice: bool,
    object: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Content {
    Text,
    Unsure,
}

impl Message {
    fn candidate(&self) -> Option<Candidate> {
        if !self.object {
            return None;
        }
        if self.twice {
            return Some(Candidate::Unsure);
        }
        if self.role != Some(true) {
            return None;
        }
        Some(match self.content {
            Some(Content::Text) => Candidate::Text,
            _ => Candidate::Unsure,
        })
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Message, E> {
        Ok(Message::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Message, E> {
        Ok(Message::default())
    }
    fn visit_bool<E>(self, _: bool) -> Result<Message, E> {
        Ok(Message::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Message, E> {
        Ok(Message::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Message, E> {
        Ok(Message::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Message, E> {
        Ok(Message::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Message, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Message::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let mut m = Message {
            object: true,
            ..Message::default()
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "role" => {
                    let role: RoleIsAssistant = map.next_value()?;
                    set(&mut m.role, role.0, &mut m.twice);
                }
                "content" => {
                    let content = map.next_value_seed(ContentSeed)?;
                    set(&mut m.content, content, &mut m.twice);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(m)
    }
}

/// Whether a value is the string `assistant`.
struct RoleIsAssistant(bool);

impl<'de> Deserialize<'de> for RoleIsAssistant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let kind = d.deserialize_any(EqualsVisitor("assistant"))?;
        Ok(RoleIsAssistant(kind))
    }
}

/// Whether a value is the given string (any other value, of any type, is not).
struct EqualsVisitor(&'static str);

impl<'de> Visitor<'de> for EqualsVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

/// An assistant message's content: certainly not blank (a string, or the joined `text` of its text
/// parts: one part not blank is enough), or anything else (Python then decides).
struct ContentSeed;

impl<'de> DeserializeSeed<'de> for ContentSeed {
    type Value = Content;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Content, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<Content, E> {
        Ok(if not_blank(v) {
            Content::Text
        } else {
            Content::Unsure
        })
    }
    fn visit_unit<E>(self) -> Result<Content, E> {
        Ok(Content::Unsure)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Content, E> {
        Ok(Content::Unsure)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Content, E> {
        Ok(Content::Unsure)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Content, E> {
        Ok(Content::Unsure)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Content, E> {
        Ok(Content::Unsure)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::Unsure)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut found = Content::Unsure;
        while let Some(part) = seq.next_element::<Part>()? {
            if part.0 {
                found = Content::Text;
            }
        }
        Ok(found)
    }
}

/// Whether a content part is certainly `{"type": "text", "text": <not blank>}` (no key given twice).
struct Part(bool);

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PartVisitor)
    }
}

struct PartVisitor;

impl<'de> Visitor<'de> for PartVisitor {
    type Value = Part;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Part, E> {
        Ok(Part(false))
    }
    fn visit_str<E>(self, _: &str) -> Result<Part, E> {
        Ok(Part(false))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Part, E> {
        Ok(Part(false))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Part, E> {
        Ok(Part(false))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Part, E> {
        Ok(Part(false))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Part, E> {
        Ok(Part(false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Part, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Part(false))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
        let (mut is_text, mut text, mut twice) = (None, None, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "type" => {
                    let value = map.next_value_seed(EqualsSeed("text"))?;
                    set(&mut is_text, value, &mut twice);
                }
                "text" => {
                    let value: Kind = map.next_value()?;
                    set(&mut text, value, &mut twice);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Part(
            !twice && is_text == Some(true) && text == Some(Kind::Text),
        ))
    }
}

struct EqualsSeed(&'static str);

impl<'de> DeserializeSeed<'de> for EqualsSeed {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(EqualsVisitor(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> bool {
        chat_line_ok(line.as_bytes())
    }

    #[test]
    fn vouches_for_plain_chat_records() {
        assert!(ok(
            r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}"#
        ));
        assert!(ok(
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":" hi"}]}]}"#
        ));
        assert!(ok(
            r#"{"solution_str":"x","ground_truth":null,"original_input":"i","metadata":{"a":1}}"#
        ));
        assert!(ok("{\"messages\":[],\"solution_str\":\"\u{3000}x\"}\r\n"));
        assert!(ok(r#"{"messages":"not a list","solution_str":"x"}"#));
    }

    #[test]
    fn hands_back_what_python_decides() {
        for line in [
            r#"{"messages":[{"role":"assistant","content":"a"},{"role":"assistant","content":" "}]}"#,
            r#"{"messages":[{"role":"assistant","content":"\u3000\u0085"}]}"#,
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":""}]}],"solution_str":"x"}"#,
            r#"{"messages":[{"role":"assistant","content":"a","role":"user"}]}"#,
            r#"{"solution_str":"x","solution_str":""}"#,
            r#"{"solution_str":""}"#,
            r#"{"solution_str":"x","ground_truth":1}"#,
            r#"{"solution_str":"x","original_input":[]}"#,
            r#"{"solution_str":"x","metadata":"m"}"#,
            r#"{"solution_str":"x","n":NaN}"#,
            r#"{"solution_str":"x"} x"#,
            r#"["solution_str"]"#,
            "\u{feff}{\"solution_str\":\"x\"}",
            "{\"solution_str\":\"x\"",
        ] {
            assert!(!ok(line), "{line}");
        }
        assert!(!chat_line_ok(b"{\"solution_str\":\"\xff\"}"));
    }

    #[test]
    fn python_space_is_str_isspace() {
        // Python: [c for c in range(0x110000) if chr(c).isspace()]
        let expected: Vec<u32> = [
            0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000,
            0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
            0x2029, 0x202f, 0x205f, 0x3000,
        ]
        .to_vec();
        let found: Vec<u32> = (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|&c| python_space(c))
            .map(u32::from)
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn scan_counts_records_and_hands_back_lines() {
        let dir = std::env::temp_dir().join(format!("osmosis-chat-scan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rows.jsonl");
        let text =
            "{\"solution_str\":\"a\"}\n \x0b\n{\"solution_str\":\"\"}\n{\"solution_str\":\"b\"}";
        std::fs::write(&path, text).unwrap();
        let scan = scan_chat_records(&path).unwrap();
        assert_eq!(scan.records, 3);
        assert_eq!(scan.unsure, vec![(3, 2, 24)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
