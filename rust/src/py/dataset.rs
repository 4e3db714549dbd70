//! Bindings for the dataset readers: batches of rows as Python dicts, the row count, the validation pass.
//!
//! Parsing happens with the GIL released; only turning a parsed batch into Python objects holds it.

use crate::dataset::{
    count_rows as core_count_rows, validate_file, Batch, ColumnBatch, ColumnValues, Contract,
    DatasetErrorKind, DatasetReader, PositionUnit, PrefetchReader, Row, Utf8Bytes,
};
use crate::error::CoreError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyModule, PyString};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DatasetBatches>()?;
    m.add_function(wrap_pyfunction!(count_rows, m)?)?;
    m.add_function(wrap_pyfunction!(validate_dataset, m)?)?;
    Ok(())
}

fn parse_contract(name: &str) -> PyResult<Contract> {
    Contract::parse(name).ok_or_else(|| {
        CoreError::Protocol(format!(
            "unknown row contract '{name}' (expected eval, rubric or any)"
        ))
        .into()
    })
}

/// Python strings for the keys of the previous row, by position: rows of one file nearly always share
/// their keys and order, so most keys are a comparison instead of a new string. Objects nested under a
/// key (directly or in a list) get their own cache under that position, a few levels deep.
///
/// Short string values are cached by position the same way: categories, labels and tags repeat from
/// row to row, and a repeated value then costs a comparison instead of a new object.
#[derive(Default)]
struct KeyCache {
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

fn value_to_py<'py>(
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

fn object_to_py<'py>(
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
type Carried = Vec<(String, String, Py<PyString>)>;

fn rows_to_py<'py>(
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

type KeyObjects = (Arc<[String]>, Vec<Py<PyString>>);

/// Python objects a columnar source's batches have in common: the keys, and per column the last text
/// value of the previous batch or a key cache for nested values.
#[derive(Default)]
struct ColumnCache {
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

/// Whether two texts are the same: one address (a dictionary-encoded value handed out again), else
/// equal bytes. Texts of equal length are compared in full, which costs far less than decoding them
/// into a new `str`.
fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

/// The `str` objects of a text column. A cell with the same text as the one before it gets the same
/// object: a system prompt shared by every row is one string, not one per row. `carried` is the last
/// text of the previous batch, and is left holding this batch's.
fn text_column<'py>(
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
                PyString::new(py, text)
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

fn cell_to_py<'py>(
    py: Python<'py>,
    values: &ColumnValues,
    row: usize,
    nested: &mut KeyCache,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match values {
        ColumnValues::Text(cells) => match &cells[row] {
            Some(cell) => PyString::new(py, cell.as_str()).into_any(),
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
        ColumnValues::Json(cells) => {
            let nested = matches!(cells[row], Value::Object(_) | Value::Array(_)).then_some(nested);
            value_to_py(py, &cells[row], nested, 1)?
        }
    })
}

fn columns_to_py<'py>(
    py: Python<'py>,
    batch: &ColumnBatch,
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
            ColumnValues::Text(texts) => Ok(text_column(py, texts, &mut cache.texts[column])),
            _ => (0..batch.len())
                .map(|row| cell_to_py(py, values, row, &mut cache.nested[column]))
                .collect::<PyResult<Vec<_>>>(),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let mut columns: Vec<_> = cells.into_iter().map(Vec::into_iter).collect();
    let dicts = (0..batch.len())
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

/// Keeps Python's cyclic garbage collector off while one batch's objects are built, and puts it back
/// as it was after.
///
/// Building a batch allocates thousands of dicts and lists that are all alive at the end; the collector
/// would otherwise run several times per batch, walk them without freeing anything, and promote them
/// into ever larger older-generation passes (a quarter of a Parquet read's time). Deferred, it runs once
/// after the batch. No Python code runs while the batch is built (only dicts, lists, strings and numbers
/// are made, with the GIL held throughout), so no other code can see the collector off.
struct GcPause<'py> {
    gc: Option<Bound<'py, PyModule>>,
}

impl<'py> GcPause<'py> {
    fn start(py: Python<'py>) -> PyResult<Self> {
        let gc = py.import("gc")?;
        if !gc.call_method0("isenabled")?.is_truthy()? {
            return Ok(GcPause { gc: None });
        }
        gc.call_method0("disable")?;
        Ok(GcPause { gc: Some(gc) })
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.gc {
            // `gc.enable()` cannot fail short of a broken interpreter; there is no caller to tell.
            let _ = gc.call_method0("enable");
        }
    }
}

/// An iterator over batches (lists of dicts) of the rows of a dataset file.
///
/// Usable from any Python thread (an asyncio runner may iterate it from a worker thread).
#[pyclass(module = "osmosis_ai._core")]
pub struct DatasetBatches {
    reader: Mutex<PrefetchReader>,
    format: &'static str,
    cache: KeyCache,
    carried: Carried,
    columns: ColumnCache,
}

#[pymethods]
impl DatasetBatches {
    #[new]
    #[pyo3(signature = (path, contract = "eval", offset = 0, limit = None, batch_size = 1024))]
    fn new(
        py: Python<'_>,
        path: &str,
        contract: &str,
        offset: u64,
        limit: Option<u64>,
        batch_size: usize,
    ) -> PyResult<Self> {
        let contract = parse_contract(contract)?;
        if batch_size == 0 {
            return Err(CoreError::Protocol("batch_size must be at least 1".to_owned()).into());
        }
        let reader = py
            .detach(|| DatasetReader::open(path, contract, offset, limit))
            .map_err(CoreError::from)?;
        let format = reader.format().name();
        let reader = PrefetchReader::start(reader, batch_size)?;
        Ok(DatasetBatches {
            reader: Mutex::new(reader),
            format,
            cache: KeyCache::default(),
            carried: Carried::new(),
            columns: ColumnCache::default(),
        })
    }

    /// The file format read: "jsonl", "json", "csv" or "parquet".
    #[getter]
    fn format(&self) -> &'static str {
        self.format
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        // `&mut self` already excludes other callers; the lock only makes the class `Sync`.
        let reader = self
            .reader
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let batch = py.detach(|| reader.next_batch()).map_err(CoreError::from)?;
        if batch.is_empty() {
            return Ok(None);
        }
        let list = {
            let _pause = GcPause::start(py)?;
            match &batch {
                Batch::Rows(rows) => rows_to_py(py, rows, &mut self.cache, &mut self.carried)?,
                Batch::Columns(columns) => columns_to_py(py, columns, &mut self.columns)?,
            }
        };
        // Freeing a batch of parsed rows is real work: the reader thread does it.
        reader.recycle(batch);
        Ok(Some(list))
    }
}

/// The number of rows in a dataset file (footer metadata for Parquet, a newline scan for JSONL).
#[pyfunction]
fn count_rows(py: Python<'_>, path: &str) -> PyResult<u64> {
    Ok(py
        .detach(|| core_count_rows(path))
        .map_err(CoreError::from)?)
}

/// Checks every row; returns a dict with rows, columns, problems (dicts) and counts.
#[pyfunction]
#[pyo3(signature = (path, contract = "eval", max_problems = 100))]
fn validate_dataset<'py>(
    py: Python<'py>,
    path: &str,
    contract: &str,
    max_problems: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let contract = parse_contract(contract)?;
    let report = py
        .detach(|| validate_file(path, contract, max_problems))
        .map_err(CoreError::from)?;
    let out = PyDict::new(py);
    out.set_item("path", &report.path)?;
    out.set_item("format", report.format.name())?;
    out.set_item("rows", report.rows)?;
    out.set_item("columns", &report.columns)?;
    out.set_item("total_problems", report.total_problems)?;
    out.set_item("bad_rows", report.bad_rows)?;
    let problems = PyList::empty(py);
    for p in &report.problems {
        let d = PyDict::new(py);
        d.set_item("line", p.line)?;
        d.set_item(
            "unit",
            if p.unit == PositionUnit::Row {
                "row"
            } else {
                "line"
            },
        )?;
        d.set_item("row", p.row)?;
        d.set_item("field", p.field.as_deref())?;
        d.set_item("message", &p.message)?;
        d.set_item("location", p.location())?;
        d.set_item(
            "kind",
            match p.kind {
                DatasetErrorKind::Validation => "validation",
                DatasetErrorKind::Empty => "empty",
                _ => "parse",
            },
        )?;
        problems.append(d)?;
    }
    out.set_item("problems", problems)?;
    Ok(out)
}
