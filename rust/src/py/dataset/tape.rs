//! A token tape (`dataset::tape`) → Python dicts.
//!
//! Every string is made from text already unescaped and checked, by `text::py_str` (which way into a
//! `str` costs least depends on how dense its wide characters are, which the token carries: see there). Keys and short
//! values repeat from row to row and come from the key cache (`rows.rs`); a long text equal to the
//! previous row's at the same key (a system prompt shared by every row) is that row's `str` again.

use super::rows::{KeyCache, CACHED_DEPTH, CACHED_VALUE_BYTES};
use super::text::py_str;
use crate::dataset::{TapeBatch, Token};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use std::ops::Range;

/// What the batches of one file share: the key cache, and per top-level position the previous row's
/// long text with its `str`.
#[derive(Default)]
pub(super) struct TapeCache {
    keys: KeyCache,
    long: LongTexts,
}

/// Per top-level position, the previous row's long text and its `str`.
type LongTexts = Vec<Option<(String, Py<PyString>)>>;

/// Positions past this many keep no long text (the cache stays bounded by the schema).
const LONG_POSITIONS: usize = 64;

/// Walks one batch's tokens.
struct Builder<'a, 'py> {
    py: Python<'py>,
    tape: &'a TapeBatch,
    at: usize,
}

/// Rows `rows` of the tape as a list of dicts.
pub(super) fn tape_to_py<'py>(
    py: Python<'py>,
    tape: &TapeBatch,
    rows: Range<usize>,
    cache: &mut TapeCache,
) -> PyResult<Bound<'py, PyList>> {
    let mut b = Builder { py, tape, at: 0 };
    let mut dicts = Vec::with_capacity(rows.len());
    let TapeCache { keys, long } = cache;
    for row in &tape.rows[rows] {
        // Every row of a batch is an object (the contract check saw to it).
        b.at = row.start + 1;
        dicts.push(b.object(Some(keys), 0, Some(long))?);
    }
    PyList::new(py, dicts)
}

/// The value of row `row` of a tape whose rows may be any value (the cells of a Parquet column of
/// nested data), its keys from `cache`.
pub(super) fn tape_value_to_py<'py>(
    py: Python<'py>,
    tape: &TapeBatch,
    row: usize,
    cache: &mut KeyCache,
) -> PyResult<Bound<'py, PyAny>> {
    let at = tape.rows[row].start;
    Builder { py, tape, at }.value(Some(cache), 1)
}

impl<'a, 'py> Builder<'a, 'py> {
    fn next(&mut self) -> Token {
        let token = self.tape.tokens[self.at];
        self.at += 1;
        token
    }

    fn text(&self, token: Token) -> &'a str {
        self.tape.text_of(token)
    }

    /// The `str` of a `Text` token.
    fn py_text(&self, token: Token) -> Bound<'py, PyString> {
        let wide = matches!(token, Token::Text { wide: true, .. });
        py_str(self.py, self.text(token), wide)
    }

    /// The long text at the cursor: the previous row's `str` when the text is the same.
    fn long_text(&mut self, long: &mut LongTexts, position: usize) -> Bound<'py, PyString> {
        let token = self.next();
        let text = self.text(token);
        if long.len() <= position {
            long.resize_with(position + 1, || None);
        }
        let slot = &mut long[position];
        if let Some((before, object)) = slot {
            if before.as_str() == text {
                return object.bind(self.py).clone();
            }
        }
        let object = self.py_text(token);
        match slot {
            Some((before, cached)) => {
                before.clear();
                before.push_str(text);
                *cached = object.clone().unbind();
            }
            None => *slot = Some((text.to_owned(), object.clone().unbind())),
        }
        object
    }

    fn value(&mut self, cache: Option<&mut KeyCache>, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match self.next() {
            Token::Null | Token::Key { .. } | Token::End => py.None().into_bound(py),
            Token::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
            Token::Int(i) => i.into_pyobject(py)?.into_any(),
            Token::UInt(u) => u.into_pyobject(py)?.into_any(),
            Token::Float(f) => PyFloat::new(py, f).into_any(),
            text @ Token::Text { .. } => self.py_text(text).into_any(),
            Token::Array => self.array(cache, depth)?.into_any(),
            Token::Object => self.object(cache, depth, None)?.into_any(),
        })
    }

    /// The entries up to the object's end; keys and short values come from `cache` by position, and
    /// at the top level (`long`) long texts from the previous row.
    fn object(
        &mut self,
        mut cache: Option<&mut KeyCache>,
        depth: usize,
        mut long: Option<&mut LongTexts>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(self.py);
        let mut position = 0;
        while let key @ Token::Key { .. } = self.tape.tokens[self.at] {
            self.at += 1;
            let name = self.text(key);
            let Some(cache) = cache.as_deref_mut() else {
                let value = self.value(None, depth + 1)?;
                dict.set_item(name, value)?;
                continue;
            };
            let name = cache.key(self.py, position, name);
            let value = match (self.tape.tokens[self.at], long.as_deref_mut()) {
                (text @ Token::Text { len, wide, .. }, _) if len <= CACHED_VALUE_BYTES => {
                    self.at += 1;
                    cache
                        .value(self.py, position, self.text(text), wide)
                        .into_any()
                }
                (Token::Text { .. }, Some(long)) if position < LONG_POSITIONS => {
                    self.long_text(long, position).into_any()
                }
                (Token::Object | Token::Array, _) if depth < CACHED_DEPTH => {
                    let nested = cache.nested(position);
                    self.value(nested, depth + 1)?
                }
                _ => self.value(None, depth + 1)?,
            };
            dict.set_item(name, value)?;
            position += 1;
        }
        self.at += 1;
        Ok(dict)
    }

    fn array(
        &mut self,
        mut cache: Option<&mut KeyCache>,
        depth: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut items = Vec::new();
        while self.tape.tokens[self.at] != Token::End {
            let item = match (self.tape.tokens[self.at], cache.as_deref_mut()) {
                (text @ Token::Text { wide, .. }, Some(cache)) => {
                    self.at += 1;
                    cache
                        .value(self.py, items.len(), self.text(text), wide)
                        .into_any()
                }
                (_, cache) => self.value(cache, depth)?,
            };
            items.push(item);
        }
        self.at += 1;
        PyList::new(self.py, items)
    }
}
