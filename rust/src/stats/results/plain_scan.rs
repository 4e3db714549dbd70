//! The fast way through a results log line for [`super::record_line::capture`]: the line's top-level
//! members found by a scanner whose strings are skipped by SIMD search, each member the caller keeps read
//! as serde's raw value (its extent is serde's), every other one checked here. The check accepts only what
//! serde_json's strict read ([`super::fields::Checked`]) surely accepts too: plain strings (no control
//! character, escapes other than surrogates), integers of at most 18 digits, `true` / `false` / `null`,
//! arrays and objects not nested too deep. Anything else is [`Unsure`], and the caller reads the line
//! with serde, which then accepts it or says what is wrong with it.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The line holds something this scanner leaves to serde.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unsure;

type Scanned<T> = Result<T, Unsure>;

/// Nesting this scanner reads (serde_json's own limit is 128).
const MAX_DEPTH: usize = 64;

/// Where a few names are in their list, found by a small hash of the key (a line has some twenty keys).
pub(crate) struct NameIndex {
    names: Vec<&'static str>,
    /// `SLOTS` places, each a name's place in `names` plus one (0: empty), probed linearly.
    slots: [u8; SLOTS],
}

const SLOTS: usize = 64;

fn slot(key: &[u8]) -> usize {
    let first = key.first().copied().unwrap_or(0) as usize;
    let last = key.last().copied().unwrap_or(0) as usize;
    (key.len() * 7 + first * 3 + last * 5) % SLOTS
}

impl NameIndex {
    /// The index of `names` (fewer than `SLOTS` / 2 of them).
    pub(crate) fn new(names: Vec<&'static str>) -> Self {
        assert!(names.len() < SLOTS / 2, "too many names for the index");
        let mut slots = [0u8; SLOTS];
        for (place, name) in names.iter().enumerate() {
            let mut at = slot(name.as_bytes());
            while slots[at] != 0 {
                at = (at + 1) % SLOTS;
            }
            slots[at] = place as u8 + 1;
        }
        NameIndex { names, slots }
    }

    pub(crate) fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// The place of `key` in the names.
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        let mut at = slot(key);
        loop {
            let place = usize::from(self.slots[at].checked_sub(1)?);
            if self.names[place].as_bytes() == key {
                return Some(place);
            }
            at = (at + 1) % SLOTS;
        }
    }
}

/// The members of the JSON object `text` whose (unescaped) key `kept` has, by their place there, in the
/// line's order, raw; `Unsure` where the scanner cannot vouch for the whole line.
pub(crate) fn kept_members<'a>(
    text: &'a str,
    kept: &NameIndex,
) -> Scanned<Vec<(u8, &'a RawValue)>> {
    let mut scan = Scan {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut found = Vec::with_capacity(16);
    scan.space();
    scan.byte(b'{')?;
    scan.space();
    if scan.peek() == Some(b'}') {
        scan.at += 1;
    } else {
        loop {
            let key = scan.key()?;
            scan.space();
            scan.byte(b':')?;
            scan.space();
            match kept.find(key) {
                Some(place) => found.push((place as u8, scan.raw()?)),
                None => scan.value(1)?,
            }
            scan.space();
            match scan.next()? {
                b',' => scan.space(),
                b'}' => break,
                _ => return Err(Unsure),
            }
        }
    }
    scan.space();
    if scan.at != scan.bytes.len() {
        return Err(Unsure);
    }
    Ok(found)
}

struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Scanned<u8> {
        let byte = self.peek().ok_or(Unsure)?;
        self.at += 1;
        Ok(byte)
    }

    fn byte(&mut self, expected: u8) -> Scanned<()> {
        (self.next()? == expected).then_some(()).ok_or(Unsure)
    }

    /// JSON's whitespace (not the form feed or vertical tab).
    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// An object key without escapes: its bytes.
    fn key(&mut self) -> Scanned<&'a [u8]> {
        let start = self.at + 1;
        self.string()?;
        let key = &self.bytes[start..self.at - 1];
        if key.contains(&b'\\') {
            return Err(Unsure);
        }
        Ok(key)
    }

    /// The next value as serde reads it raw (its extent and its own lenient check: the reader of the kept
    /// member checks it strictly).
    fn raw(&mut self) -> Scanned<&'a RawValue> {
        let rest = &self.text[self.at..];
        let mut de = serde_json::Deserializer::from_str(rest);
        let raw = <&RawValue>::deserialize(&mut de).map_err(|_| Unsure)?;
        self.at += raw.get().len();
        Ok(raw)
    }

    fn value(&mut self, depth: usize) -> Scanned<()> {
        match self.peek().ok_or(Unsure)? {
            b'"' => self.string(),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => Err(Unsure),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Scanned<()> {
        if !self.bytes[self.at..].starts_with(word) {
            return Err(Unsure);
        }
        self.at += word.len();
        Ok(())
    }

    /// `-?(0|[1-9][0-9]{0,17})` not followed by a fraction or exponent.
    fn integer(&mut self) -> Scanned<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let digits = self.bytes[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let leading_zero = digits > 1 && self.bytes[self.at] == b'0';
        if digits == 0 || digits > 18 || leading_zero {
            return Err(Unsure);
        }
        self.at += digits;
        match self.peek() {
            Some(b'.' | b'e' | b'E') => Err(Unsure),
            _ => Ok(()),
        }
    }

    /// A string (at its quote) with no control character and no surrogate escape.
    fn string(&mut self) -> Scanned<()> {
        self.byte(b'"')?;
        loop {
            let rest = &self.bytes[self.at..];
            let stop = memchr::memchr2(b'"', b'\\', rest).ok_or(Unsure)?;
            // The smallest byte before the stop: one pass the compiler vectorises.
            if rest[..stop].iter().fold(u8::MAX, |least, &b| least.min(b)) < 0x20 {
                return Err(Unsure);
            }
            self.at += stop + 1;
            if rest[stop] == b'"' {
                return Ok(());
            }
            match self.next()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let hex = self.bytes.get(self.at..self.at + 4).ok_or(Unsure)?;
                    let hex = std::str::from_utf8(hex).map_err(|_| Unsure)?;
                    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(Unsure);
                    }
                    let unit = u16::from_str_radix(hex, 16).map_err(|_| Unsure)?;
                    if (0xD800..=0xDFFF).contains(&unit) {
                        return Err(Unsure);
                    }
                    self.at += 4;
                }
                _ => return Err(Unsure),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Scanned<()> {
        if depth > MAX_DEPTH {
            return Err(Unsure);
        }
        self.byte(b'[')?;
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.value(depth)?;
            self.space();
            match self.next()? {
                b',' => self.space(),
                b']' => return Ok(()),
                _ => return Err(Unsure),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Scanned<()> {
        if depth > MAX_DEPTH {
            return Err(Unsure);
        }
        self.byte(b'{')?;
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.string()?;
            self.space();
            self.byte(b':')?;
            self.space();
            self.value(depth)?;
            self.space();
            match self.next()? {
                b',' => self.space(),
                b'}' => return Ok(()),
                _ => return Err(Unsure),
            }
        }
    }
}
