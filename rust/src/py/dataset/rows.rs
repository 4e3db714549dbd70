//! Parsed rows (JSON values) → Python dicts, with the keys and short texts of the previous row reused.

use crate::dataset::Row;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde_json::{Map, Value};

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
const CACHED_VALUE_BYTES: usize = 32;

/// Positions and depths past these build their keys afresh, which bounds the cache by the schema.
const CACHED_POSITIONS: usize = 64;
const CACHED_DEPTH: usize = 4;

impl KeyCache {
    fn key<'py>(&mut self, py: Python<'py>, position: usize, key: &str) -> Bound<'py, PyString> {
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

    /// A string value at `position`: the previous row's object when the text repeats.
    fn value<'py>(&mut self, py: Python<'py>, position: usize, text: &str) -> Bound<'py, PyString> {
        if text.len() > CACHED_VALUE_BYTES || position >= CACHED_POSITIONS {
            return PyString::new(py, text);
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
        let object = PyString::new(py, text);
        *slot = Some((text.to_owned(), object.clone().unbind()));
        object
    }

    /// The cache for objects under `position`, if that position is cached.
    fn nested(&mut self, position: usize) -> Option<&mut KeyCache> {
        if position >= self.keys.len() {
            return None;
        }
        if self.nested.len() <= position {
            self.nested.resize_with(position + 1, KeyCache::default);
        }
        Some(&mut self.nested[position])
    }
}

pub(super) fn value_to_py<'py>(
    py: Python<'py>,
    value: &Value,
    cache: Option<&mut KeyCache>,
    depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let mut cache = cache;
            let items = items
                .iter()
                .enumerate()
                .map(|(i, item)| match (item, cache.as_deref_mut()) {
                    (Value::String(s), Some(cache)) => Ok(cache.value(py, i, s).into_any()),
                    (_, cache) => value_to_py(py, item, cache, depth),
                })
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => object_to_py(py, map, cache, depth, None)?.into_any(),
    })
}

/// A row already built: its parsed fields and its dict.
type Built<'a, 'py> = (&'a Map<String, Value>, &'a Bound<'py, PyDict>);

pub(super) fn object_to_py<'py>(
    py: Python<'py>,
    map: &Map<String, Value>,
    mut cache: Option<&mut KeyCache>,
    depth: usize,
    previous: Option<Built<'_, 'py>>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    // The previous row's fields walked alongside this row's: rows of a file nearly always share their
    // key order, so the same position usually holds the same key.
    let mut before = previous.map(|(fields, built)| (fields.iter(), built));
    for (position, (name, value)) in map.iter().enumerate() {
        let above = before
            .as_mut()
            .and_then(|(fields, built)| Some((fields.next()?, *built)));
        match cache.as_deref_mut() {
            Some(cache) => {
                let key = cache.key(py, position, name);
                if let Value::String(text) = value {
                    let repeated = match above {
                        Some(((above_name, Value::String(above_text)), built))
                            if text.len() > CACHED_VALUE_BYTES
                                && above_name == name
                                && same_text(above_text, text) =>
                        {
                            built.get_item(&key).ok().flatten()
                        }
                        _ => None,
                    };
                    match repeated {
                        Some(object) => dict.set_item(key, object)?,
                        None => dict.set_item(key, cache.value(py, position, text))?,
                    }
                    continue;
                }
                let nested = if depth < CACHED_DEPTH
                    && matches!(value, Value::Object(_) | Value::Array(_))
                {
                    cache.nested(position)
                } else {
                    None
                };
                dict.set_item(key, value_to_py(py, value, nested, depth + 1)?)?;
            }
            None => dict.set_item(name, value_to_py(py, value, None, depth + 1)?)?,
        }
    }
    Ok(dict)
}

/// The long texts of the last row of the previous batch: (key, text, its `str`).
pub(super) type Carried = Vec<(String, String, Py<PyString>)>;

pub(super) fn rows_to_py<'py>(
    py: Python<'py>,
    rows: &[Row],
    cache: &mut KeyCache,
    carried: &mut Carried,
) -> PyResult<Bound<'py, PyList>> {
    let mut dicts: Vec<Bound<'py, PyDict>> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        // A long text equal to the row before's at the same key (a system prompt shared by every row,
        // say) reuses that row's `str`; comparing costs far less than decoding it again.
        let previous = i.checked_sub(1).map(|p| (&rows[p].fields, &dicts[p]));
        let dict = object_to_py(py, &row.fields, Some(cache), 0, previous)?;
        if i == 0 {
            // The first row's "row before" ended the previous batch.
            for (name, text, object) in carried.iter() {
                if matches!(row.fields.get(name), Some(Value::String(t)) if same_text(t, text)) {
                    dict.set_item(name, object.bind(py))?;
                }
            }
        }
        dicts.push(dict);
    }
    if let (Some(last), Some(dict)) = (rows.last(), dicts.last()) {
        carried.clear();
        for (name, value) in &last.fields {
            if let Value::String(text) = value {
                if text.len() > CACHED_VALUE_BYTES {
                    if let Some(object) = dict.get_item(name)? {
                        let object = object.cast_into::<PyString>()?.unbind();
                        carried.push((name.clone(), text.clone(), object));
                    }
                }
            }
        }
    }
    PyList::new(py, dicts)
}

/// Whether two texts are the same: one address (a dictionary-encoded value handed out again), else
/// equal bytes. Texts of equal length are compared in full, which costs far less than decoding them
/// into a new `str`.
pub(super) fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}
