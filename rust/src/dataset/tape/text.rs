//! JSON string bodies: finding their end, and their text with the escapes decoded.

use crate::dataset::text_width::{is_wide, may_be_wide};

/// What the scan of a JSON string body found.
#[derive(Debug, Clone, Copy)]
pub(super) struct Body<'a> {
    /// The text up to the closing quote (escapes not decoded).
    pub text: &'a str,
    pub escaped: bool,
    /// Characters past Latin-1 are dense in `text` (`text_width`); false when `escaped`, whose
    /// decoded text the caller measures instead.
    pub wide: bool,
}

/// Bytes looked at one by one before a string's end is searched for with vector loads.
const SHORT: usize = 24;

/// Why a string body's scan stopped without a body the fast path takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// The bytes ran out first (the string may go on in the next chunk).
    End,
    /// A raw control character or bytes that are not UTF-8 (the full parser words the error).
    Invalid,
}

/// Scans a string body starting at `bytes[0]` (just past the opening quote): its end, whether it holds
/// escapes, and that it is UTF-8 without raw control characters (which JSON forbids in strings).
pub(super) fn scan_body(bytes: &[u8]) -> Result<Body<'_>, Cut> {
    // Keys, ids and labels end within a few bytes: a byte loop beats setting up the vector search.
    for (i, &b) in bytes.iter().take(SHORT).enumerate() {
        match b {
            b'"' => {
                return Ok(Body {
                    text: ascii_text(&bytes[..i]),
                    escaped: false,
                    wide: false,
                })
            }
            b'\\' | 0..=0x1F | 0x80.. => break,
            _ => {}
        }
    }
    let (mut from, mut escaped) = (0, false);
    let end = loop {
        let at = from + memchr::memchr2(b'"', b'\\', &bytes[from..]).ok_or(Cut::End)?;
        if bytes[at] == b'"' {
            break at;
        }
        escaped = true;
        // The escaped byte is skipped whole: `\"` does not end the string. A `\u` escape's digits
        // are plain ASCII and scanned like text.
        from = at + 2;
        if from > bytes.len() {
            return Err(Cut::End);
        }
    };
    let body = &bytes[..end];
    // Whole-body minimum and maximum (no early exit) are one vector loop; a control character is rare.
    let (low, high) = body.iter().fold((0xFF, 0), |(low, high): (u8, u8), &b| {
        (low.min(b), high.max(b))
    });
    if low < 0x20 {
        return Err(Cut::Invalid);
    }
    let text = if high < 0x80 {
        ascii_text(body)
    } else {
        simdutf8::basic::from_utf8(body).map_err(|_| Cut::Invalid)?
    };
    let wide = !escaped && may_be_wide(high) && is_wide(body);
    Ok(Body {
        text,
        escaped,
        wide,
    })
}

/// Bytes known to be ASCII, as text. Most strings of a dataset are ASCII and short (keys, ids,
/// labels); checking them again costs more than scanning them did.
#[allow(unsafe_code)]
fn ascii_text(bytes: &[u8]) -> &str {
    debug_assert!(bytes.is_ascii());
    // SAFETY: the only caller found every byte below 0x80, and ASCII is UTF-8.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// Appends a string body (UTF-8, escapes as JSON writes them) to `out` with its escapes decoded;
/// `None` for an escape JSON does not allow and for a surrogate without its pair.
pub(super) fn decode_body(body: &str, out: &mut String) -> Option<()> {
    let mut rest = body;
    while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(&rest[..at]);
        let (c, used) = unescape(&rest.as_bytes()[at..])?;
        out.push(c);
        rest = rest.get(at + used..)?;
    }
    out.push_str(rest);
    Some(())
}

fn hex4(bytes: &[u8]) -> Option<u32> {
    let digits = bytes.get(..4)?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = char::from(d).to_digit(16)?;
        Some(acc << 4 | v)
    })
}

/// The character of the escape at `bytes[0]` (a backslash) and the bytes it spans.
fn unescape(bytes: &[u8]) -> Option<(char, usize)> {
    let c = match *bytes.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let first = hex4(bytes.get(2..)?)?;
            if !(0xD800..=0xDBFF).contains(&first) {
                // A trailing surrogate alone is not a character: `from_u32` refuses it.
                return Some((char::from_u32(first)?, 6));
            }
            if bytes.get(6..8)? != b"\\u" {
                return None;
            }
            let second = hex4(bytes.get(8..)?)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return None;
            }
            let c = char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))?;
            return Some((c, 12));
        }
        _ => return None,
    };
    Some((c, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(body: &str) -> Option<String> {
        let mut out = String::from("kept:");
        decode_body(body, &mut out)?;
        Some(out)
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(
            decoded(r#"a\nb\t\"q\"\\\/\u00e9 é"#).unwrap(),
            "kept:a\nb\t\"q\"\\/é é"
        );
        assert_eq!(decoded(r"x\u6570\ud83d\ude00").unwrap(), "kept:x数😀");
        for bad in [
            r"\ud83d",
            r"\ude00",
            r"\x",
            r"\u12g4",
            r"\ud83d\u0041",
            "end\\",
        ] {
            assert_eq!(decoded(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_scan_finds_the_closing_quote_past_escaped_ones() {
        let text = format!("{}\\\"{}\" tail", "a".repeat(20), "é".repeat(9));
        let body = scan_body(text.as_bytes()).unwrap();
        assert_eq!(&text[body.text.len()..], "\" tail");
        assert!(body.escaped);
        assert!(!scan_body(b"plain\"").unwrap().escaped);
        assert_eq!(scan_body(b"no end").unwrap_err(), Cut::End);
        assert_eq!(scan_body(b"ends in \\").unwrap_err(), Cut::End);
        assert_eq!(scan_body(b"tab\there\"").unwrap_err(), Cut::Invalid);
        assert_eq!(scan_body(b"bad \xff utf-8\"").unwrap_err(), Cut::Invalid);
    }
}
