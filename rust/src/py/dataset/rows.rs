//! The cache of Python strings that rows of one file share: keys and short values by position.

use super::text::py_str;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// Python strings for the keys of the previous row, by position: rows of one file nearly always share
/// their keys and order, so most keys are a comparison instead of a new string. Objects nested under a
/// key (directly or in a list) get their own cache under that position, a few levels deep.
///
/// Short string values are cached by position the same way: categories, labels and tags repeat from
/// row to row, and a repeated value then costs a comparison instead of a new object.
#[derive(Default)]
pub(super) struct KeyCache {
    keys: Vec<(String, Py<PyString>)>,
    nested: Vec<KeyCache>,
    values: Vec<Option<(String, Py<PyString>)>>,
}

/// String values up to this many bytes are cached.
pub(super) const CACHED_VALUE_BYTES: usize = 32;

/// Positions and depths past these build their keys afresh, which bounds the cache by the schema.
const CACHED_POSITIONS: usize = 64;
pub(super) const CACHED_DEPTH: usize = 4;

impl KeyCache {
    pub(super) fn key<'py>(
        &mut self,
        py: Python<'py>,
        position: usize,
        key: &str,
    ) -> Bound<'py, PyString> {
        if let Some((text, object)) = self.keys.get(position) {
            if text == key {
                return object.bind(py).clone();
            }
        }
        let object = PyString::new(py, key);
        if position < self.keys.len() {
            self.keys[position] = (key.to_owned(), object.clone().unbind());
        } else if position == self.keys.len() && position < CACHED_POSITIONS {
            self.keys.push((key.to_owned(), object.clone().unbind()));
        }
        object
    }

    /// A string value at `position`: the previous row's object when the text repeats. `wide` as
    /// `text::py_str` takes it.
    pub(super) fn value<'py>(
        &mut self,
        py: Python<'py>,
        position: usize,
        text: &str,
        wide: bool,
    ) -> Bound<'py, PyString> {
        if text.len() > CACHED_VALUE_BYTES || position >= CACHED_POSITIONS {
            return py_str(py, text, wide);
        }
        if self.values.len() <= position {
            self.values.resize_with(position + 1, || None);
        }
        let slot = &mut self.values[position];
        if let Some((cached, object)) = slot {
            if cached == text {
                return object.bind(py).clone();
            }
        }
        let object = py_str(py, text, wide);
        // The slot's buffer is reused: an id or a label that changes every row costs no allocation.
        match slot {
            Some((cached, held)) => {
                cached.clear();
                cached.push_str(text);
                *held = object.clone().unbind();
            }
            None => *slot = Some((text.to_owned(), object.clone().unbind())),
        }
        object
    }

    /// The cache for objects under `position`, if that position is cached.
    pub(super) fn nested(&mut self, position: usize) -> Option<&mut KeyCache> {
        if position >= self.keys.len() {
            return None;
        }
        if self.nested.len() <= position {
            self.nested.resize_with(position + 1, KeyCache::default);
        }
        Some(&mut self.nested[position])
    }
}

/// Whether two texts are the same: one address (a dictionary-encoded value handed out again), else
/// equal bytes. Texts of equal length are compared in full, which costs far less than decoding them
/// into a new `str`.
pub(super) fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}
