//! Python `str`s from dataset text: the one place the dataset bindings make a string of a value.
//!
//! CPython's UTF-8 decoder starts every string as one byte a character, widens it (a copy) at the
//! first character past U+00FF and again past U+FFFF, and decodes a character at a time into the wide
//! form. For text dense in such characters (CJK, emoji: chat rows) decoding to code points here and
//! handing them to `PyUnicode_FromWideChar` (a scan for the widest character, then one copy into a
//! `str` of the final kind) costs less: 4-8 % of a chat JSONL read, measured (README, bench_rows).
//! Other text (ASCII, Latin-1, mostly ASCII with a few CJK words) stays with the UTF-8 decoder, which
//! is faster for it (`PyUnicode_New` and a copy of the bytes are not in the stable ABI the wheel is
//! built for). Which text is dense the readers found as they read it (`dataset::text_width`): this
//! side does not read a text twice.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::cell::RefCell;

/// Shorter texts go to the UTF-8 decoder: the scan for wide characters would cost more than it saves.
const WIDE_MIN_BYTES: usize = 16;

/// C's `wchar_t` as CPython reads it: a code point, or on Windows a UTF-16 unit.
#[cfg(not(windows))]
type WideUnit = u32;
#[cfg(windows)]
type WideUnit = u16;

thread_local! {
    /// The wide form of the text being made, reused from string to string.
    static WIDE: RefCell<Vec<WideUnit>> = const { RefCell::new(Vec::new()) };
}

/// `text` as a Python `str`; `wide` when the reader found characters past Latin-1 dense in it.
pub(super) fn py_str<'py>(py: Python<'py>, text: &str, wide: bool) -> Bound<'py, PyString> {
    if wide && text.len() >= WIDE_MIN_BYTES {
        if let Some(object) = WIDE.with(|wide| wide_str(py, text, &mut wide.borrow_mut())) {
            return object;
        }
    }
    PyString::new(py, text)
}

/// `text` through `PyUnicode_FromWideChar`; `None` if that failed (the UTF-8 decoder then answers).
#[allow(unsafe_code)]
fn wide_str<'py>(
    py: Python<'py>,
    text: &str,
    wide: &mut Vec<WideUnit>,
) -> Option<Bound<'py, PyString>> {
    wide.clear();
    #[cfg(not(windows))]
    wide.extend(text.chars().map(u32::from));
    // CPython joins the surrogate pairs of a UTF-16 `wchar_t` string into one character.
    #[cfg(windows)]
    wide.extend(text.encode_utf16());
    let len = ffi::Py_ssize_t::try_from(wide.len()).ok()?;
    // SAFETY: `wide` holds `len` initialised units of `wchar_t`'s size; the call copies them and
    // returns a new reference to a `str`, or null with an exception set.
    unsafe {
        let object = ffi::PyUnicode_FromWideChar(wide.as_ptr().cast(), len);
        Bound::from_owned_ptr_or_err(py, object)
            .ok()
            .map(|object| object.cast_into_unchecked())
    }
}
