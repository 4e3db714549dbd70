//! JSON rows straight into the tape.
//!
//! The parser answers only for input it fully understands. Anything else (a syntax error, a number
//! `serde_json` reads differently such as `-0` or an integer past 64 bits, a top-level key given twice,
//! deep nesting, a lone surrogate escape) is [`Parsed::Reject`], and the caller parses the row again
//! with `serde_json`, which gives the value or the exact message. So the two paths cannot disagree on
//! a row this one accepts (`tests/` checks the values against `serde_json` on generated rows).

use super::text::{decode_body, scan_body, Cut};
use super::{TapeBatch, Token};
use crate::dataset::text_width::is_wide;
use crate::dataset::value_kind::{Text, ValueKind};

/// What parsing one row gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// The row is on the tape; this many bytes were read (the value and the whitespace after it).
    Done(usize),
    /// The bytes ended inside the value: more of the file is needed (JSON arrays only).
    Incomplete,
    /// Not for this parser: nothing is left on the tape; parse the row with `serde_json`.
    Reject,
}

/// Nesting deeper than this goes to `serde_json` (its own limit is 128).
const MAX_DEPTH: usize = 100;

#[derive(Debug)]
enum Stop {
    Reject,
    Incomplete,
}

type Step<T> = Result<T, Stop>;

/// Parses the object row at the start of `bytes` onto `tape`. With `whole`, `bytes` is one JSONL
/// line: only whitespace may follow the value. Without, the row is an element of a JSON array and the
/// bytes may end inside it (`Incomplete`). A row that is not an object is left to `serde_json`, which
/// the contract check then names.
pub(crate) fn parse_row(bytes: &[u8], tape: &mut TapeBatch, whole: bool) -> Parsed {
    let mark = tape.mark();
    let mut p = Parser {
        b: bytes,
        i: 0,
        whole,
        tape,
    };
    let result = p.row();
    match result {
        Ok(()) => Parsed::Done(p.i),
        Err(stop) => {
            p.tape.rollback(mark);
            match stop {
                Stop::Reject => Parsed::Reject,
                Stop::Incomplete => Parsed::Incomplete,
            }
        }
    }
}

/// What a value was, as much as the contract and the caller need.
#[derive(Debug, Clone, Copy)]
enum Wrote {
    Scalar(ValueKind),
    Text(Token),
}

struct Parser<'a, 't> {
    b: &'a [u8],
    i: usize,
    whole: bool,
    tape: &'t mut TapeBatch,
}

impl Parser<'_, '_> {
    /// The bytes ran out: the end of a JSONL line is final, an array element may go on.
    fn out(&self) -> Stop {
        if self.whole {
            Stop::Reject
        } else {
            Stop::Incomplete
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Step<u8> {
        self.b.get(self.i).copied().ok_or_else(|| self.out())
    }

    fn row(&mut self) -> Step<()> {
        self.ws();
        if self.peek()? != b'{' {
            return Err(Stop::Reject);
        }
        self.i += 1;
        self.tape.tokens.push(Token::Object);
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
        } else {
            loop {
                let key = self.key()?;
                let kind = match self.value(1)? {
                    Wrote::Scalar(kind) => kind,
                    Wrote::Text(token) => self.tape.text_kind(token),
                };
                self.tape.note_entry_at(key, kind);
                if self.next_entry(b'}')? {
                    break;
                }
            }
        }
        self.tape.tokens.push(Token::End);
        if self.tape.has_repeated_key() {
            return Err(Stop::Reject);
        }
        self.ws();
        if self.whole && self.i != self.b.len() {
            return Err(Stop::Reject);
        }
        Ok(())
    }

    /// After a container's item: true past its closing bracket, false past a comma.
    fn next_entry(&mut self, close: u8) -> Step<bool> {
        self.ws();
        let b = self.peek()?;
        self.i += 1;
        if b == close {
            return Ok(true);
        }
        if b != b',' {
            return Err(Stop::Reject);
        }
        self.ws();
        Ok(false)
    }

    /// An object key and its colon; returns the index of its `Key` token.
    fn key(&mut self) -> Step<usize> {
        if self.peek()? != b'"' {
            return Err(Stop::Reject);
        }
        let body_start = self.i + 1;
        let at = self.tape.tokens.len();
        let (start, len, _) = self.body(body_start)?;
        self.tape.tokens.push(Token::Key { start, len });
        self.ws();
        if self.peek()? != b':' {
            return Err(Stop::Reject);
        }
        self.i += 1;
        self.ws();
        Ok(at)
    }

    /// Appends the decoded string body at `start` to the tape's text; returns where it is there and
    /// whether it is wide (`text_width`), and moves past the closing quote.
    fn body(&mut self, start: usize) -> Step<(usize, usize, bool)> {
        let scan = scan_body(&self.b[start..]).map_err(|cut| match cut {
            Cut::End => self.out(),
            Cut::Invalid => Stop::Reject,
        })?;
        let text = &mut self.tape.text;
        let at = text.len();
        let wide = if scan.escaped {
            decode_body(scan.text, text).ok_or(Stop::Reject)?;
            is_wide(&text.as_bytes()[at..])
        } else {
            text.push_str(scan.text);
            scan.wide
        };
        self.i = start + scan.text.len() + 1;
        Ok((at, text.len() - at, wide))
    }

    fn string(&mut self) -> Step<Token> {
        let (start, len, wide) = self.body(self.i + 1)?;
        let token = Token::Text { start, len, wide };
        self.tape.tokens.push(token);
        Ok(token)
    }

    fn value(&mut self, depth: usize) -> Step<Wrote> {
        let kind = match self.peek()? {
            b'"' => return self.string().map(Wrote::Text),
            b'{' => self.object(depth + 1)?,
            b'[' => self.array(depth + 1)?,
            b't' => self.literal(b"true", Token::Bool(true), ValueKind::Bool)?,
            b'f' => self.literal(b"false", Token::Bool(false), ValueKind::Bool)?,
            b'n' => self.literal(b"null", Token::Null, ValueKind::Null)?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return Err(Stop::Reject),
        };
        Ok(Wrote::Scalar(kind))
    }

    fn literal(&mut self, word: &[u8], token: Token, kind: ValueKind) -> Step<ValueKind> {
        let end = self.i + word.len();
        match self.b.get(self.i..end) {
            Some(found) if found == word => {
                self.i = end;
                self.tape.tokens.push(token);
                Ok(kind)
            }
            Some(_) => Err(Stop::Reject),
            None if word.starts_with(&self.b[self.i..]) => Err(self.out()),
            None => Err(Stop::Reject),
        }
    }

    fn object(&mut self, depth: usize) -> Step<ValueKind> {
        if depth > MAX_DEPTH {
            return Err(Stop::Reject);
        }
        self.i += 1;
        self.tape.tokens.push(Token::Object);
        self.ws();
        let empty = self.peek()? == b'}';
        if empty {
            self.i += 1;
        } else {
            loop {
                self.key()?;
                self.value(depth)?;
                if self.next_entry(b'}')? {
                    break;
                }
            }
        }
        self.tape.tokens.push(Token::End);
        Ok(ValueKind::Object { empty })
    }

    fn array(&mut self, depth: usize) -> Step<ValueKind> {
        if depth > MAX_DEPTH {
            return Err(Stop::Reject);
        }
        self.i += 1;
        self.tape.tokens.push(Token::Array);
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
        } else {
            loop {
                self.value(depth)?;
                if self.next_entry(b']')? {
                    break;
                }
            }
        }
        self.tape.tokens.push(Token::End);
        Ok(ValueKind::Array)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        self.i - start
    }

    /// A number as JSON spells it; integers that fit 64 bits stay integers, like `serde_json`'s.
    fn number(&mut self) -> Step<ValueKind> {
        let start = self.i;
        let negative = self.b[self.i] == b'-';
        self.i += usize::from(negative);
        let int_start = self.i;
        let int_digits = self.digits();
        if int_digits == 0 || (int_digits > 1 && self.b[int_start] == b'0') {
            return Err(if self.i == self.b.len() {
                self.out()
            } else {
                Stop::Reject
            });
        }
        let mut integer = true;
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            integer = false;
            if self.digits() == 0 {
                return Err(if self.i == self.b.len() {
                    self.out()
                } else {
                    Stop::Reject
                });
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            integer = false;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(if self.i == self.b.len() {
                    self.out()
                } else {
                    Stop::Reject
                });
            }
        }
        // The number may go on in the next chunk of the file.
        if self.i == self.b.len() && !self.whole {
            return Err(Stop::Incomplete);
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).map_err(|_| Stop::Reject)?;
        let (token, kind) = if integer {
            (
                int_token(&self.b[int_start..self.i], negative)?,
                ValueKind::Int,
            )
        } else {
            let value: f64 = text.parse().map_err(|_| Stop::Reject)?;
            if !value.is_finite() {
                return Err(Stop::Reject);
            }
            (Token::Float(value), ValueKind::Float)
        };
        self.tape.tokens.push(token);
        Ok(kind)
    }
}

/// An integer's token; `serde_json` reads `-0` and integers past 64 bits as floats, so those go to it.
fn int_token(digits: &[u8], negative: bool) -> Step<Token> {
    let magnitude = digits.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    });
    let magnitude = magnitude.ok_or(Stop::Reject)?;
    if !negative {
        return Ok(match i64::try_from(magnitude) {
            Ok(i) => Token::Int(i),
            Err(_) => Token::UInt(magnitude),
        });
    }
    match magnitude {
        0 => Err(Stop::Reject),
        m if m <= 1u64 << 63 => Ok(Token::Int((m as i64).wrapping_neg())),
        _ => Err(Stop::Reject),
    }
}

impl TapeBatch {
    /// The contract's view of a top-level string: empty, blank, the JSON text of an object, or plain.
    fn text_kind(&self, token: Token) -> ValueKind {
        ValueKind::Str(Text::of(self.text_of(token)))
    }

    /// Whether the row just written gives a top-level key twice (`serde_json`'s reader refuses that).
    fn has_repeated_key(&self) -> bool {
        let key = |i: usize| self.text_of(self.tokens[self.entries[i].0]);
        let n = self.entries.len();
        if n <= 16 {
            return (1..n).any(|i| (0..i).any(|j| key(i) == key(j)));
        }
        let mut sorted: Vec<&str> = (0..n).map(key).collect();
        sorted.sort_unstable();
        sorted.windows(2).any(|pair| pair[0] == pair[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::row_value::RowValue;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// What the fast parser makes of `line`: the row's value, or None when it leaves the row to serde.
    fn fast(line: &str, whole: bool) -> Option<Value> {
        fast_bytes(line.as_bytes(), whole)
    }

    fn fast_bytes(line: &[u8], whole: bool) -> Option<Value> {
        let mut tape = TapeBatch::default();
        let mark = tape.begin_row();
        match parse_row(line, &mut tape, whole) {
            Parsed::Done(used) => {
                assert!(whole || used <= line.len());
                tape.finish_row(mark, 1, 0);
                Some(tape.row_value(0))
            }
            _ => {
                assert!(tape.tokens.is_empty() && tape.text.is_empty());
                None
            }
        }
    }

    fn serde(line: &str) -> Option<Value> {
        serde_json::from_str::<RowValue>(line).ok().map(|v| v.0)
    }

    /// Every non-ASCII character as a `\u` escape (surrogate pairs above the BMP).
    fn ascii_escaped(value: &Value) -> String {
        let mut out = String::new();
        for c in value.to_string().chars() {
            if c.is_ascii() {
                out.push(c);
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
        out
    }

    #[test]
    fn rows_read_as_serde_reads_them() {
        let row = json!({
            "id": "row-1", "n": -12, "big": 18446744073709551615u64, "f": 0.1, "e": 1.5e300,
            "ok": true, "none": null, "nested": {"a": [1, 2.5, "x", {"b": []}], "c": {}},
            "text": "caf\u{e9} \u{6570}\u{5b66} \u{1F600} tab\t quote\" back\\ nul\u{0}",
        });
        for line in [
            row.to_string(),
            ascii_escaped(&row),
            serde_json::to_string_pretty(&row).unwrap(),
        ] {
            assert_eq!(fast(&line, true), serde(&line), "{line}");
            assert!(fast(&line, true).is_some());
        }
    }

    #[test]
    fn what_serde_reads_differently_is_left_to_it() {
        for line in [
            r#"{"a": -0}"#,
            r#"{"a": 18446744073709551616}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": "\ud800"}"#,
            r#"[1]"#,
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": .5}"#,
            r#"{"a": +1}"#,
            r#"{"a": tru}"#,
            r#"{"a": 1,}"#,
            r#"{"a": 1} x"#,
            "{\"a\": \"\u{1}\"}",
            r#"{"a": "\x"}"#,
            r#"{"a" 1}"#,
            r#"{a: 1}"#,
            "{\"a\": 1}\u{a0}",
        ] {
            assert_eq!(fast(line, true), None, "{line}");
        }
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(120), "]".repeat(120));
        assert_eq!(fast(&deep, true), None);
    }

    #[test]
    fn an_array_element_cut_by_the_buffer_asks_for_more() {
        let mut tape = TapeBatch::default();
        let element = br#"{"a": "some text", "b": [1, 2, {"c": null}]}"#;
        for cut in 1..element.len() {
            assert_eq!(
                parse_row(&element[..cut], &mut tape, false),
                Parsed::Incomplete,
                "{cut}"
            );
            assert!(tape.tokens.is_empty());
        }
        let mut longer = element.to_vec();
        longer.extend_from_slice(b" ,\n{}");
        assert_eq!(
            parse_row(&longer, &mut tape, false),
            Parsed::Done(element.len() + 1)
        );
    }

    fn value_strategy() -> impl Strategy<Value = Value> {
        let text = prop::collection::vec(
            prop::sample::select(vec![
                'a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\u{1}', '\u{7f}', '\u{85}', '\u{a0}',
                'é', 'ÿ', 'Ā', '数', '\u{ffff}', '😀', '{', '}',
            ]),
            0..40,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            text.clone().prop_map(Value::String),
        ];
        let value = leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-zé数 ]{0,6}", inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        });
        prop::collection::vec(("[a-zA-Z_é]{1,8}", value), 0..8)
            .prop_map(|entries| Value::Object(entries.into_iter().collect()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn generated_rows_read_as_serde_reads_them(row in value_strategy()) {
            for line in [row.to_string(), ascii_escaped(&row)] {
                prop_assert_eq!(fast(&line, true), serde(&line));
            }
        }

        #[test]
        fn broken_rows_are_never_read_differently(
            row in value_strategy(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(
                b"{}[]\",:\\ 0-e.tnu\x01\xc3\xa9".to_vec())), 1..4),
        ) {
            let mut bytes = row.to_string().into_bytes();
            for (at, op, byte) in edits {
                let i = at.index(bytes.len() + 1);
                match op {
                    0 => bytes.insert(i, byte),
                    1 if i < bytes.len() => { bytes.remove(i); }
                    _ if i < bytes.len() => bytes[i] = byte,
                    _ => {}
                }
            }
            match std::str::from_utf8(&bytes) {
                Ok(line) => {
                    if let Some(value) = fast(line, true) {
                        prop_assert_eq!(Some(value), serde(line));
                    }
                }
                // The fast parser checks every non-ASCII string it reads, so it never takes these.
                Err(_) => prop_assert_eq!(fast_bytes(&bytes, true), None),
            }
        }
    }
}
