//! A columnar batch (Parquet, CSV) → Python dicts, with the keys and repeated texts shared across
//! rows and batches.

use super::rows::{same_text, KeyCache};
use super::tape::tape_value_to_py;
use super::text::py_str;
use crate::dataset::{ColumnBatch, ColumnValues, Utf8Bytes};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use std::ops::Range;
use std::sync::Arc;

pub(super) type KeyObjects = (Arc<[String]>, Vec<Py<PyString>>);

/// Python objects a columnar source's batches have in common: the keys, and per column the last text
/// value of the previous batch or a key cache for nested values.
#[derive(Default)]
pub(super) struct ColumnCache {
    /// The batches' key names and their Python strings.
    keys: Option<KeyObjects>,
    texts: Vec<Option<(String, Py<PyString>)>>,
    nested: Vec<KeyCache>,
}

impl ColumnCache {
    fn keys<'py>(&mut self, py: Python<'py>, keys: &Arc<[String]>) -> Vec<Bound<'py, PyString>> {
        let fresh = !matches!(&self.keys, Some((known, _)) if Arc::ptr_eq(known, keys));
        if fresh {
            let objects = keys.iter().map(|k| PyString::new(py, k).unbind()).collect();
            self.keys = Some((Arc::clone(keys), objects));
            self.texts = (0..keys.len()).map(|_| None).collect();
            self.nested = (0..keys.len()).map(|_| KeyCache::default()).collect();
        }
        let (_, objects) = self.keys.as_ref().expect("set above");
        objects.iter().map(|k| k.bind(py).clone()).collect()
    }
}

/// The `str` objects of a text column. A cell with the same text as the one before it gets the same
/// object: a system prompt shared by every row is one string, not one per row. `carried` is the last
/// text of the previous batch, and is left holding this batch's.
pub(super) fn text_column<'py>(
    py: Python<'py>,
    cells: &[Option<Utf8Bytes>],
    carried: &mut Option<(String, Py<PyString>)>,
) -> Vec<Bound<'py, PyAny>> {
    let mut out = Vec::with_capacity(cells.len());
    let mut previous: Option<(&str, Bound<'py, PyString>)> = carried
        .as_ref()
        .map(|(text, object)| (text.as_str(), object.bind(py).clone()));
    let mut fresh = false;
    for cell in cells {
        let Some(cell) = cell else {
            out.push(py.None().into_bound(py));
            continue;
        };
        let text = cell.as_str();
        let object = match &previous {
            Some((before, object)) if same_text(before, text) => object.clone(),
            _ => {
                fresh = true;
                py_str(py, text, cell.is_wide())
            }
        };
        out.push(object.clone().into_any());
        previous = Some((text, object));
    }
    if fresh {
        *carried = previous.map(|(text, object)| (text.to_owned(), object.unbind()));
    }
    out
}

pub(super) fn cell_to_py<'py>(
    py: Python<'py>,
    values: &ColumnValues,
    row: usize,
    nested: &mut KeyCache,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match values {
        ColumnValues::Text(cells) => match &cells[row] {
            Some(cell) => py_str(py, cell.as_str(), cell.is_wide()).into_any(),
            None => py.None().into_bound(py),
        },
        ColumnValues::Int(cells) => match cells[row] {
            Some(v) => v.into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        },
        ColumnValues::Float(cells) => match cells[row] {
            Some(v) => PyFloat::new(py, v).into_any(),
            None => py.None().into_bound(py),
        },
        ColumnValues::Bool(cells) => match cells[row] {
            Some(v) => PyBool::new(py, v).to_owned().into_any(),
            None => py.None().into_bound(py),
        },
        ColumnValues::Nested(cells) => tape_value_to_py(py, cells, row, nested)?,
    })
}

/// Rows `rows` of the batch as a list of dicts.
pub(super) fn columns_to_py<'py>(
    py: Python<'py>,
    batch: &ColumnBatch,
    rows: Range<usize>,
    cache: &mut ColumnCache,
) -> PyResult<Bound<'py, PyList>> {
    let keys = cache.keys(py, &batch.keys);
    // Column after column: each column's source bytes are read in order, and the objects of one
    // column sit together in memory, which the garbage collector's passes over them notice.
    let cells = batch
        .columns
        .iter()
        .enumerate()
        .map(|(column, values)| match values {
            ColumnValues::Text(texts) => Ok(text_column(
                py,
                &texts[rows.clone()],
                &mut cache.texts[column],
            )),
            _ => rows
                .clone()
                .map(|row| cell_to_py(py, values, row, &mut cache.nested[column]))
                .collect::<PyResult<Vec<_>>>(),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut columns: Vec<_> = cells.into_iter().map(Vec::into_iter).collect();
    let dicts = rows
        .map(|_| {
            let dict = PyDict::new(py);
            for (key, column) in keys.iter().zip(&mut columns) {
                dict.set_item(key, column.next().expect("one cell per row"))?;
            }
            Ok(dict)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, dicts)
}
