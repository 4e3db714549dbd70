//! Masking of the secrets a process knows in UTF-8 text: the search behind `osmosis_ai.redact`.
//!
//! Each secret is a `memchr::memmem` finder built once (when the set of secrets changes), so a text is
//! searched with SIMD per secret instead of Python's `str.find`, and nothing is copied or decoded when no
//! secret occurs (nearly every results log line). The result is byte for byte what Python's
//! `for s in secrets: text = text.replace(s, "***")` gives: secrets in the order given (longest first),
//! each replaced everywhere, left to right, without overlaps, in the text the earlier ones left. On UTF-8
//! bytes that is the same as on the decoded text: a valid needle matches only at character boundaries.

use memchr::memmem::Finder;

/// What a secret is replaced by.
pub const MASK: &[u8] = b"***";

/// The secrets a process knows, ready to search for.
pub struct SecretMasker {
    finders: Vec<Finder<'static>>,
}

impl SecretMasker {
    /// A masker of `secrets`, applied in the order given; empty secrets are skipped (they match nowhere
    /// in Python's sense of a replacement worth making, and everywhere in a search).
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        let finders = secrets
            .into_iter()
            .filter(|secret| !secret.as_ref().is_empty())
            .map(|secret| Finder::new(secret.as_ref()).into_owned())
            .collect();
        Self { finders }
    }

    /// `text` with every secret replaced by [`MASK`], or `None` when none occurs in it.
    pub fn mask(&self, text: &[u8]) -> Option<Vec<u8>> {
        let mut masked: Option<Vec<u8>> = None;
        for finder in &self.finders {
            let current = masked.as_deref().unwrap_or(text);
            if let Some(first) = finder.find(current) {
                masked = Some(replace_all(current, finder, first));
            }
        }
        masked
    }
}

/// `text` with each occurrence of the finder's needle from `first` on replaced by [`MASK`].
fn replace_all(text: &[u8], finder: &Finder<'_>, first: usize) -> Vec<u8> {
    let width = finder.needle().len();
    let mut out = Vec::with_capacity(text.len());
    let mut from = 0;
    let mut at = first;
    loop {
        out.extend_from_slice(&text[from..at]);
        out.extend_from_slice(MASK);
        from = at + width;
        match finder.find(&text[from..]) {
            Some(next) => at = from + next,
            None => break,
        }
    }
    out.extend_from_slice(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Python's `str.replace` loop, the reference.
    fn replaced(text: &str, secrets: &[&str]) -> String {
        secrets
            .iter()
            .filter(|s| !s.is_empty())
            .fold(text.to_owned(), |t, s| t.replace(s, "***"))
    }

    fn masked(text: &str, secrets: &[&str]) -> String {
        let masker = SecretMasker::new(secrets);
        match masker.mask(text.as_bytes()) {
            Some(bytes) => String::from_utf8(bytes).expect("masking keeps UTF-8 valid"),
            None => text.to_owned(),
        }
    }

    #[test]
    fn nothing_found_is_none() {
        assert!(SecretMasker::new(["sk-1234"])
            .mask(b"no key here")
            .is_none());
        assert!(SecretMasker::new(Vec::<&str>::new())
            .mask(b"anything")
            .is_none());
    }

    #[test]
    fn every_occurrence_masked_in_order() {
        assert_eq!(
            masked("a sk-1234 b sk-1234sk-1234", &["sk-1234"]),
            "a *** b ******"
        );
        // Longest first: the longer secret is masked whole, then the shorter where it remains.
        assert_eq!(
            masked("sk-12345 sk-1234", &["sk-12345", "sk-1234"]),
            "*** ***"
        );
        // A later secret sees the text the earlier ones left (as the Python loop does).
        assert_eq!(masked("ab**cd", &["**cd", "ab***"]), "***");
        assert_eq!(masked("aaaa aaaaa", &["aaaa"]), "*** ***a");
        assert_eq!(masked("clé=é-secret-é fin", &["é-secret-é"]), "clé=*** fin");
    }

    proptest! {
        #[test]
        fn same_as_the_python_loop(
            text in "[abc*é-]{0,40}",
            secrets in proptest::collection::vec("[abc*é-]{1,5}", 0..4),
        ) {
            let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
            prop_assert_eq!(masked(&text, &secrets), replaced(&text, &secrets));
        }
    }
}
