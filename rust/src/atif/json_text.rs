//! JSON text exactly as the Python writers of the run files put it: [`compact`] as `orjson.dumps` writes a
//! trajectory document, [`spaced_ascii`] as `json.dumps` (default separators, ASCII escapes) writes an
//! index row, [`indented_ascii`] as `osmosis_ai._files.json_block` writes an `-o` file's value ([`indented`]
//! as it does with `ensure_ascii=False`, the rubric documents' text). All refuse (return `false`, having written part of the value) what they cannot write
//! byte for byte as those writers would: a float outside `[1e-4, 1e15)` (where `orjson` and Python's
//! `repr` switch to exponents, each its own way) or `-0.0`, so the caller falls back to the Python writer.

use super::json_tree::Json;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// How a writer separates items and which text it escapes; `indent`: each item on its own line, two
/// spaces deeper than its container (orjson's `OPT_INDENT_2`; an empty container stays `[]` / `{}`).
struct Style {
    item: &'static [u8],
    key: &'static [u8],
    ascii: bool,
    indent: bool,
}

const COMPACT: Style = Style {
    item: b",",
    key: b":",
    ascii: false,
    indent: false,
};
const SPACED_ASCII: Style = Style {
    item: b", ",
    key: b": ",
    ascii: true,
    indent: false,
};
const INDENTED_ASCII: Style = Style {
    item: b",",
    key: b": ",
    ascii: true,
    indent: true,
};
const INDENTED: Style = Style {
    item: b",",
    key: b": ",
    ascii: false,
    indent: true,
};

/// `value` as `orjson.dumps(value)`: no spaces, UTF-8 text, only `"`, `\` and control characters escaped.
pub fn compact(value: &Json<'_>, out: &mut Vec<u8>) -> bool {
    write_value(value, out, &COMPACT, 0)
}

/// `value` as `json.dumps(value)`: `", "` and `": "` between items, everything past ASCII `~` escaped.
pub fn spaced_ascii(value: &Json<'_>, out: &mut Vec<u8>) -> bool {
    write_value(value, out, &SPACED_ASCII, 0)
}

/// `value` as `json.dumps(value, indent=2)` with ASCII escapes (`json_block`'s text: orjson's indented
/// layout, then every character past `~` escaped), as if it were nested `depth` containers deep: its
/// lines after the first start with `2 * depth` more spaces.
pub fn indented_ascii(value: &Json<'_>, depth: usize, out: &mut Vec<u8>) -> bool {
    write_value(value, out, &INDENTED_ASCII, depth)
}

/// `value` as [`indented_ascii`] writes it but with text past ASCII as it is (UTF-8), as orjson's
/// `OPT_INDENT_2` writes it (`json_block(value, ensure_ascii=False)`).
pub fn indented(value: &Json<'_>, depth: usize, out: &mut Vec<u8>) -> bool {
    write_value(value, out, &INDENTED, depth)
}

/// Before an item of a container at `depth` (the item is one deeper): the separator after the previous
/// one, then, when indenting, a new line.
fn separate(out: &mut Vec<u8>, style: &Style, first: bool, depth: usize) {
    if !first {
        out.extend_from_slice(style.item);
    }
    if style.indent {
        new_line(out, depth + 1);
    }
}

pub(crate) fn new_line(out: &mut Vec<u8>, depth: usize) {
    out.push(b'\n');
    out.resize(out.len() + 2 * depth, b' ');
}

/// The closing bracket of a container at `depth` that had items.
fn close(out: &mut Vec<u8>, style: &Style, depth: usize, bracket: u8) {
    if style.indent {
        new_line(out, depth);
    }
    out.push(bracket);
}

fn write_value(value: &Json<'_>, out: &mut Vec<u8>, style: &Style, depth: usize) -> bool {
    match value.resolved() {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        // itoa, not `write!`: the formatting machinery cost more than the rest of an index line's numbers.
        Json::Int(i) => out.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes()),
        Json::UInt(u) => out.extend_from_slice(itoa::Buffer::new().format(*u).as_bytes()),
        Json::Float(f) => return float(*f, out),
        Json::Str(s) => string(s, out, style.ascii),
        Json::Ref(target) => return write_value(target, out, style, depth),
        Json::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                separate(out, style, i == 0, depth);
                if !write_value(item, out, style, depth + 1) {
                    return false;
                }
            }
            if items.is_empty() {
                out.push(b']');
            } else {
                close(out, style, depth, b']');
            }
        }
        Json::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                separate(out, style, i == 0, depth);
                string(key, out, style.ascii);
                out.extend_from_slice(style.key);
                if !write_value(item, out, style, depth + 1) {
                    return false;
                }
            }
            if map.is_empty() {
                out.push(b'}');
            } else {
                close(out, style, depth, b'}');
            }
        }
    }
    true
}

/// A float both Python's `repr` and orjson write without an exponent: the shortest digits that read back
/// to it, a tie between two going to the even one (Ryu's choice too; Rust's `Display` rounds ties up),
/// with `.0` when they are a whole number.
fn float(f: f64, out: &mut Vec<u8>) -> bool {
    let magnitude = f.abs();
    if f.is_sign_negative() && f == 0.0 {
        return false;
    }
    if f != 0.0 && !(1e-4..1e15).contains(&magnitude) {
        return false;
    }
    // serde_json writes floats with Ryu, which in this range gives the fixed form Python's repr gives.
    serde_json::to_writer(out, &f).is_ok()
}

fn string(s: &str, out: &mut Vec<u8>, ascii: bool) {
    out.push(b'"');
    let mut rest = s;
    loop {
        let plain = plain_len(rest.as_bytes(), ascii);
        out.extend_from_slice(&rest.as_bytes()[..plain]);
        // The plain bytes are ASCII (or whole characters, without `ascii`): `plain` is a char boundary.
        let Some(c) = rest[plain..].chars().next() else {
            break;
        };
        escape_char(c, out);
        rest = &rest[plain + c.len_utf8()..];
    }
    out.push(b'"');
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` (8 bytes of text, the first in the low byte) that needs an
/// escape: `"`, `\`, a control character, and with `ascii` anything past `~`. Exact for the lowest
/// such byte, which is all the caller reads (a borrow or carry only runs upward, into later bytes).
fn escapes(word: u64, ascii: bool) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let mut hits =
        control | zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')));
    if ascii {
        hits |= word.wrapping_add(ONES) | word; // 0x7f becomes 0x80; 0x80 and past have it already
    }
    hits & HIGH
}

/// How many bytes at the start of `bytes` need no escape, 8 at a time (the scan of a long text).
fn plain_len(bytes: &[u8], ascii: bool) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let hits = escapes(
            u64::from_le_bytes(word.try_into().unwrap_or_default()),
            ascii,
        );
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let tail = words.remainder();
    at + tail
        .iter()
        .position(|&b| needs_escape(b) || (ascii && b > b'~'))
        .unwrap_or(tail.len())
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

fn escape_char(c: char, out: &mut Vec<u8>) {
    let short: &[u8] = match c {
        '"' => b"\\\"",
        '\\' => b"\\\\",
        '\n' => b"\\n",
        '\r' => b"\\r",
        '\t' => b"\\t",
        '\u{8}' => b"\\b",
        '\u{c}' => b"\\f",
        _ => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                unicode_escape(*unit, out);
            }
            return;
        }
    };
    out.extend_from_slice(short);
}

fn unicode_escape(unit: u16, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xf)]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::json_tree::Json;
    use super::{compact, indented_ascii, spaced_ascii};
    use serde_json::json;

    fn both(value: serde_json::Value) -> (String, String) {
        let text = value.to_string();
        let value = Json::parse(&text).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(compact(&value, &mut a) && spaced_ascii(&value, &mut b));
        (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap())
    }

    #[test]
    fn writes_as_orjson_and_json_dumps_do() {
        let (c, s) =
            both(json!({"a": [1, 2.5, true, null], "é\"\\": "x\n\u{1}\u{7f}😀/", "f": 100.0}));
        assert_eq!(
            c,
            "{\"a\":[1,2.5,true,null],\"é\\\"\\\\\":\"x\\n\\u0001\u{7f}😀/\",\"f\":100.0}"
        );
        assert_eq!(
            s,
            "{\"a\": [1, 2.5, true, null], \"\\u00e9\\\"\\\\\": \"x\\n\\u0001\\u007f\\ud83d\\ude00/\", \"f\": 100.0}"
        );
        // 855125 / 65536 = 13.0481719970703125 exactly: 17 digits tie, the even one is written.
        let tie = 855125.0 / 65536.0;
        assert_eq!(
            both(json!([
                0.0001,
                0.1,
                1e14,
                0.0,
                18446744073709551615u64,
                tie
            ]))
            .0,
            "[0.0001,0.1,100000000000000.0,0.0,18446744073709551615,13.048171997070312]"
        );
    }

    #[test]
    fn indents_as_json_block_does_empty_containers_inline() {
        let value = Json::parse(r#"{"a": [1, {}], "b": {"é": []}, "c": {"d": null}}"#).unwrap();
        let mut out = Vec::new();
        assert!(indented_ascii(&value, 1, &mut out));
        let expected = "{\n    \"a\": [\n      1,\n      {}\n    ],\n    \"b\": {\n      \"\\u00e9\": []\n    },\n    \"c\": {\n      \"d\": null\n    }\n  }";
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn long_text_escapes_wherever_it_needs_to() {
        for at in 0..20 {
            let mut text = "abcdefghijklmnopqrstuvwxyz".to_string();
            text.insert(at, '"');
            text.insert(at / 2, '\u{1}');
            let (c, _) = both(serde_json::Value::String(text.clone()));
            assert_eq!(c, serde_json::to_string(&text).unwrap(), "{text}");
        }
    }

    #[test]
    fn long_text_past_ascii_escapes_whole_characters_across_blocks() {
        // The reference: json.dumps's escapes, a character at a time.
        let reference = |text: &str| {
            let mut out = String::from("\"");
            for c in text.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    ' '..='~' => out.push(c),
                    _ => {
                        for unit in c.encode_utf16(&mut [0; 2]) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                }
            }
            out + "\""
        };
        for at in 25..40 {
            let mut text = "a".repeat(at);
            text.push_str("é😀\u{7f}\"x\n中");
            text.push_str(&"b".repeat(40));
            let (_, spaced) = both(serde_json::Value::String(text.clone()));
            assert_eq!(spaced, reference(&text), "{text}");
        }
    }

    #[test]
    fn every_character_at_every_place_of_a_word_escapes_as_one_at_a_time() {
        // The reference: each character on its own, as the writers escape it.
        let reference = |text: &str, ascii: bool| {
            let mut out = vec![b'"'];
            for c in text.chars() {
                let plain = !(c < ' ' || c == '"' || c == '\\' || (ascii && c > '~'));
                if plain {
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                } else {
                    super::escape_char(c, &mut out);
                }
            }
            out.push(b'"');
            out
        };
        let odd = (0u8..0x80)
            .map(char::from)
            .chain(['é', '\u{80}', '\u{ff}', '中', '😀']);
        for c in odd {
            // Texts of 0 to 17 plain bytes: the short ones never fill a word.
            for (len, at) in (0..18).flat_map(|len| (0..=len).map(move |at| (len, at))) {
                let mut text: String = "abcdefghijklmnopq"[..len].into();
                text.insert(at, c);
                text.push(c); // a second one in the tail past the last whole word
                for ascii in [false, true] {
                    let mut out = Vec::new();
                    super::string(&text, &mut out, ascii);
                    assert_eq!(out, reference(&text, ascii), "{text:?} ascii {ascii}");
                }
            }
        }
    }

    #[test]
    fn refuses_floats_the_writers_put_differently() {
        for f in [1e-5, 1e15, 1e300, -0.0] {
            assert!(!compact(&Json::Float(f), &mut Vec::new()), "{f}");
            assert!(
                !spaced_ascii(&Json::Array(vec![Json::Float(f)]), &mut Vec::new()),
                "{f}"
            );
        }
    }
}
