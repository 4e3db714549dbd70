//! How wide a text's characters run, found by the readers where they already walk its bytes (a JSON
//! string's scan, a CSV cell, a Parquet value's UTF-8 check), so that the Python side picks its way of
//! building a `str` without reading the text again.
//!
//! CPython's UTF-8 decoder copies ASCII runs several bytes at a time and widens its buffer once per
//! character kind it meets; building from code points (`PyUnicode_FromWideChar`) costs the same for
//! every character. So the decoder wins on ASCII, Latin-1 and mostly-ASCII text with a few CJK words,
//! and loses only where characters past Latin-1 are dense (chat text in CJK, emoji). Measured on
//! ~1.6 KB texts (2026-11-27): code points cost 2-3x the decoder at one such character in 30-60 bytes,
//! about the same at one in 6-7, and 5-18 % less at one in 4-5 with emoji.

/// A UTF-8 byte from this one on starts a character past U+00FF (continuation bytes are below it).
const PAST_LATIN1_LEAD: u8 = 0xC4;

/// A text is wide when it holds at least one character past Latin-1 per this many bytes.
const BYTES_PER_WIDE_CHAR: usize = 6;

/// Bytes counted per byte-wide sum: a multiple of the vector width, below 256.
const COUNT_RUN: usize = 128;

/// Whether characters past Latin-1 are dense in `bytes` (UTF-8): at least one per
/// [`BYTES_PER_WIDE_CHAR`] bytes.
pub fn is_wide(bytes: &[u8]) -> bool {
    // Counted in byte-wide sums over runs too short to overflow them: vector loops without an early
    // exit, about as fast as the text's maximum (a count straight into `usize` is not vectorised and
    // cost 20 times as much, measured).
    let past: usize = bytes
        .chunks(COUNT_RUN)
        .map(|run| {
            let n = run
                .iter()
                .fold(0u8, |n, &b| n + u8::from(b >= PAST_LATIN1_LEAD));
            usize::from(n)
        })
        .sum();
    past > 0 && past * BYTES_PER_WIDE_CHAR >= bytes.len()
}

/// Whether `high`, the largest byte of a text, rules out a character past Latin-1 (no need to count).
pub fn may_be_wide(high: u8) -> bool {
    high >= PAST_LATIN1_LEAD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_characters_past_latin1_make_a_text_wide() {
        assert!(!is_wide(b""));
        assert!(!is_wide("plain ASCII text of some length".as_bytes()));
        assert!(!is_wide("résumé naïve café déjà vu".as_bytes()));
        assert!(!is_wide(
            "the model should answer 数学 and cite the passage".as_bytes()
        ));
        assert!(is_wide("数学 问题 你好 😀 hello".as_bytes()));
        assert!(is_wide("🚀".as_bytes()));
        // One character past Latin-1 in exactly six bytes is wide; in seven it is not.
        assert!(is_wide("ab数c".as_bytes()));
        assert!(!is_wide("ab数cd".as_bytes()));
        assert!(may_be_wide(0xE6) && !may_be_wide(0xC3) && !may_be_wide(b'a'));
    }
}
