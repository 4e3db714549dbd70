//! The validation pass's fast path: one scan over a line's bytes that finds the top-level keys and the
//! kind of each value, building nothing (no strings, no numbers, no `serde_json` values).
//!
//! The scanner only answers for lines it fully understands. Anything unusual (an escaped key, a `\u`
//! surrogate escape, a string whose first non-whitespace character is an escape, a number serde
//! rejects, a nesting deeper than 64, a form feed, any syntax error) makes it answer
//! `None`, and the caller re-reads the line with the serde path, which gives the verdict and the exact
//! message. So the two paths cannot disagree on a row the scanner accepts.

use super::shape;
use super::value_kind::{Text, ValueKind};

/// What a line turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// Only whitespace.
    Blank,
    /// An object; its (key, kind) pairs are in the caller's vector.
    Object,
    /// A non-object value.
    Other(ValueKind),
}

/// Scans the line starting at `pos` in `text` (which holds whole lines). On success returns what the
/// line is and the offset just past its newline (or `text.len()` for a last line without one).
pub(crate) fn scan_line<'a>(
    text: &'a str,
    pos: usize,
    entries: &mut Vec<(&'a str, ValueKind)>,
) -> Option<(Scanned, usize)> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: pos,
    };
    s.ws();
    let scanned = match s.peek() {
        None => return Some((Scanned::Blank, s.i)),
        Some(b'\n') => return Some((Scanned::Blank, s.i + 1)),
        Some(b'{') => {
            s.top_object(text, entries)?;
            Scanned::Object
        }
        Some(_) => Scanned::Other(s.top_value(text)?),
    };
    s.ws();
    match s.peek() {
        None => Some((scanned, s.i)),
        Some(b'\n') => Some((scanned, s.i + 1)),
        Some(_) => None,
    }
}

/// Containers nested deeper than this go to the serde path.
const MAX_DEPTH: u32 = 64;

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// JSON whitespace inside a line (a newline ends the line instead).
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.i += 1)
    }

    fn top_object(&mut self, text: &'a str, entries: &mut Vec<(&'a str, ValueKind)>) -> Option<()> {
        self.i += 1;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let (start, end, escaped) = self.string()?;
            if escaped {
                return None;
            }
            let key = text.get(start..end)?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            entries.push((key, self.top_value(text)?));
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A value directly under the row: its kind as `ValueKind::of` would give it once parsed.
    fn top_value(&mut self, text: &str) -> Option<ValueKind> {
        match self.peek()? {
            b'"' => {
                let (start, end, _) = self.string()?;
                let content = text.get(start..end)?;
                // Classified as the unescaped text would be, unless an escape (which may or may not
                // stand for whitespace) or a `{` (JSON text to parse) comes first: those are left to serde.
                match content.trim_start().chars().next() {
                    Some('\\' | '{') => None,
                    _ => Some(ValueKind::Str(Text::of(content))),
                }
            }
            b'{' => {
                let start = self.i;
                self.i += 1;
                self.ws();
                let empty = self.peek()? == b'}';
                self.i = start;
                self.container().map(|()| ValueKind::Object { empty })
            }
            b'[' => self.container().map(|()| ValueKind::Array),
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                let simple_int = self.number()?;
                if simple_int {
                    Some(ValueKind::Int)
                } else {
                    // A fraction, an exponent, a long integer or -0: serde decides (and may reject).
                    shape::value_kind(text.get(start..self.i)?)
                }
            }
            _ => self.literal(),
        }
    }

    fn literal(&mut self) -> Option<ValueKind> {
        let rest = &self.b[self.i..];
        let (len, kind) = if rest.starts_with(b"true") {
            (4, ValueKind::Bool)
        } else if rest.starts_with(b"false") {
            (5, ValueKind::Bool)
        } else if rest.starts_with(b"null") {
            (4, ValueKind::Null)
        } else {
            return None;
        };
        self.i += len;
        Some(kind)
    }

    /// A string starting at the opening quote: its content's range and whether it holds an escape.
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        let start = self.i + 1;
        let mut j = start;
        let mut escaped = false;
        loop {
            j = find_special(self.b, j);
            match *self.b.get(j)? {
                b'"' => {
                    self.i = j + 1;
                    return Some((start, j, escaped));
                }
                b'\\' => {
                    escaped = true;
                    j += match *self.b.get(j + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        b'u' => {
                            let hex = std::str::from_utf8(self.b.get(j + 2..j + 6)?).ok()?;
                            if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                                return None;
                            }
                            let unit = u16::from_str_radix(hex, 16).ok()?;
                            // Surrogate pairs (and lone halves) are left to serde.
                            if (0xD800..0xE000).contains(&unit) {
                                return None;
                            }
                            6
                        }
                        _ => return None,
                    };
                }
                // A raw control character (a newline included): not valid inside a string.
                _ => return None,
            }
        }
    }

    /// A number per the JSON grammar; true when it is a plain integer that surely fits an `i64`
    /// (at most 18 digits, not `-0`).
    fn number(&mut self) -> Option<bool> {
        let negative = self.eat(b'-').is_some();
        let digits_start = self.i;
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_digits = self.i - digits_start;
        let mut simple = int_digits <= 18 && !(negative && self.b[digits_start] == b'0');
        if self.eat(b'.').is_some() {
            simple = false;
            self.require_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            simple = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.require_digits()?;
        }
        Some(simple)
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn require_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    /// Skips a nested array or object, checking its syntax; nesting is tracked in a bit stack
    /// (1 = object).
    fn container(&mut self) -> Option<()> {
        let mut stack: u64 = 0;
        let mut depth: u32 = 0;
        loop {
            // At the start of a value.
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    let object = open == b'{';
                    stack = (stack << 1) | u64::from(object);
                    depth += 1;
                    self.i += 1;
                    self.ws();
                    let close = if object { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.i += 1;
                        stack >>= 1;
                        depth -= 1;
                    } else {
                        if object {
                            self.key()?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    self.string()?;
                }
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                }
                _ => {
                    self.literal()?;
                }
            }
            // After a value: close containers until one continues with a comma.
            loop {
                if depth == 0 {
                    return Some(());
                }
                self.ws();
                let object = stack & 1 == 1;
                match self.peek()? {
                    b',' => {
                        self.i += 1;
                        self.ws();
                        if object {
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return None,
                }
                self.i += 1;
                stack >>= 1;
                depth -= 1;
            }
        }
    }

    /// A nested object's key and its colon, leaving the position at the value.
    fn key(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.string()?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(())
    }
}

/// The first index at or after `from` holding a quote, a backslash or a control character
/// (`b.len()` if none). Blocks of 32 bytes are tested without branches so the compiler vectorises
/// the test; most of a row's bytes are string content this skips.
fn find_special(b: &[u8], from: usize) -> usize {
    const BLOCK: usize = 32;
    let mut i = from;
    while let Some(block) = b.get(i..i + BLOCK) {
        let hit = block.iter().fold(false, |hit, &c| {
            hit | (c == b'"') | (c == b'\\') | (c < 0x20)
        });
        if hit {
            break;
        }
        i += BLOCK;
    }
    b[i.min(b.len())..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map_or(b.len(), |p| i + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Entries = Vec<(String, ValueKind)>;

    fn scan(text: &str) -> Option<(Scanned, Entries, usize)> {
        let mut entries = Vec::new();
        let (scanned, end) = scan_line(text, 0, &mut entries)?;
        let owned = entries.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Some((scanned, owned, end))
    }

    /// The serde path's verdict on one line, in the scanner's terms.
    fn serde_verdict(line: &str) -> Result<(Scanned, Entries), ()> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        if line.bytes().all(|b| b.is_ascii_whitespace()) {
            return Ok((Scanned::Blank, Vec::new()));
        }
        match shape::parse(line).map_err(|_| ())? {
            shape::Shape::Object(e) => Ok((
                Scanned::Object,
                e.into_iter().map(|(k, v)| (k.into_owned(), v)).collect(),
            )),
            shape::Shape::Other(kind) => Ok((Scanned::Other(kind), Vec::new())),
        }
    }

    /// Where the scanner answers, it must agree with serde; where serde rejects, it must not answer.
    fn agrees(line: &str) -> bool {
        let fast = scan(line);
        match (fast, serde_verdict(line)) {
            (None, _) => true,
            (Some((s, e, end)), Ok((s2, e2))) => {
                assert_eq!((s, &e), (s2, &e2), "{line:?}");
                assert!(end == line.len(), "{line:?}: end {end}");
                true
            }
            (Some(_), Err(())) => panic!("scanner accepted what serde rejects: {line:?}"),
        }
    }

    #[test]
    fn reads_keys_and_kinds() {
        let line =
            "{\"a\": \"x\", \"b\":[1,{\"c\":[]},\"]\"], \"n\":null, \"s\":\"  \", \"i\":-12,\
                    \"f\":1.5e3, \"o\":{}, \"t\":true}\r\n";
        let (scanned, entries, end) = scan(line).unwrap();
        assert_eq!(scanned, Scanned::Object);
        assert_eq!(end, line.len());
        let kinds: Vec<_> = entries.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            kinds,
            [
                ValueKind::Str(Text::Plain),
                ValueKind::Array,
                ValueKind::Null,
                ValueKind::Str(Text::Blank),
                ValueKind::Int,
                ValueKind::Float,
                ValueKind::Object { empty: true },
                ValueKind::Bool
            ]
        );
        assert!(agrees(line));
        // A string that may hold JSON text is left to serde, which parses it.
        assert!(scan("{\"m\": \" {}\", \"o\": { \"x\": 1}}").is_none());
        assert!(agrees("{\"m\": \" {}\", \"o\": { \"x\": 1}}"));
    }

    #[test]
    fn hands_unusual_lines_to_serde() {
        for line in [
            r#"{"a\u0041": 1}"#,
            r#"{"a": "\ud83d\ude00"}"#,
            r#"{"a": "\n x"}"#,
            "\x0c{}",
            r#"{"a": 1e400}"#,
        ] {
            assert!(scan(line).is_none(), "{line:?}");
            assert!(agrees(line));
        }
    }

    #[test]
    fn never_accepts_what_serde_rejects() {
        let long = format!("{{\"k\": \"{}\", \"z\": [1, 2]}}", "é".repeat(100));
        let cases = [
            "{",
            "{}",
            "[]",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{\"a\":01}",
            "{\"a\":-}",
            "{\"a\":1.}",
            "{\"a\":1e}",
            "{\"a\":-0}",
            "{\"a\":1e400}",
            "{\"a\":12345678901234567890, \"b\": -9223372036854775809}",
            "{\"a\":[1 2]}",
            "{\"a\":{\"b\"}}",
            "{\"a\":{\"b\":1,}}",
            "{\"a\":[}",
            "{\"a\":[{]}]}",
            "{\"a\":\"\t\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\\u12G4\"}",
            "{\"a\":tru}",
            "{\"a\":nulll}",
            "{\"a\":1} x",
            "{\"a\":1}{}",
            "  \"s\"  ",
            "12",
            "-3.5",
            "true",
            "null",
            "   ",
            "",
            "{\"a\": \"\u{3000}\", \"b\": \"\u{3000}x\"}",
            "{\"a\":[[[[[]]]]], \"b\": {\"c\": {\"d\": [true, false, null, \"\\\"\"]}}}",
            &long,
        ];
        for line in cases {
            assert!(agrees(line));
            let mut with_newline = line.to_owned();
            with_newline.push('\n');
            assert!(agrees(&with_newline));
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(70), "]".repeat(70));
        assert!(scan(&deep).is_none() && agrees(&deep));
    }

    #[test]
    fn finds_specials_past_whole_blocks() {
        let mut bytes = vec![b'a'; 100];
        assert_eq!(find_special(&bytes, 0), 100);
        bytes[70] = b'\\';
        assert_eq!(find_special(&bytes, 3), 70);
        bytes[40] = 0x1f;
        assert_eq!(find_special(&bytes, 0), 40);
        assert_eq!(find_special(&bytes, 100), 100);
    }
}
