//! Whole-file streaming through the public dataset API (no Python).

use osmosis_core::dataset::{
    check_window, count_rows, validate_file, Contract, DatasetErrorKind, DatasetReader,
    PrefetchReader, Row,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::PathBuf;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let n = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!("osmosis-ds-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn eval_row(i: usize) -> Value {
    json!({"system_prompt": "s", "user_prompt": format!("u{i}"), "ground_truth": "g", "i": i})
}

fn read_all(path: &str, offset: u64, limit: Option<u64>, batch: usize) -> Vec<Row> {
    let mut reader = DatasetReader::open(path, Contract::Eval, offset, limit).unwrap();
    let mut rows = Vec::new();
    loop {
        let b = reader.next_batch(batch).unwrap();
        if b.is_empty() {
            return rows;
        }
        rows.extend(b.into_rows());
    }
}

fn jsonl_of(rows: &[Value]) -> Vec<u8> {
    rows.iter()
        .map(|r| format!("{r}\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn jsonl_lines_and_indices_skip_blank_lines() {
    let dir = TempDir::new("lines");
    let text = format!("\n{}\r\n\n   \n{}", eval_row(0), eval_row(1));
    let path = dir.write("a.jsonl", text.as_bytes());
    let rows = read_all(&path, 0, None, 1);
    assert_eq!(
        rows.iter().map(|r| (r.line, r.index)).collect::<Vec<_>>(),
        [(2, 0), (5, 1)]
    );
    assert_eq!(count_rows(&path).unwrap(), 2);
}

#[test]
fn csv_lines_count_the_header_with_either_line_ending() {
    let dir = TempDir::new("csvlines");
    for (name, end) in [("lf.csv", "\n"), ("crlf.csv", "\r\n")] {
        let text = [
            "system_prompt,user_prompt,ground_truth",
            "s,u0,g",
            "s,\"u\n1\",g",
            "s,u2,g",
            "",
        ]
        .join(end);
        let path = dir.write(name, text.as_bytes());
        let lines: Vec<_> = read_all(&path, 0, None, 2).iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 3, 5], "{name}");
    }
}

#[test]
fn eval_run_contract_names_the_line_and_field_of_a_selected_row() {
    let dir = TempDir::new("evalrun");
    let text = "user_prompt,ground_truth\r\nu,4\r\nu,\r\nu,5\r\n";
    let path = dir.write("d.csv", text.as_bytes());
    let mut reader = DatasetReader::open(&path, Contract::EvalRun, 0, None).unwrap();
    assert_eq!(reader.next_batch(10).unwrap().len(), 1);
    let err = reader.next_batch(10).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{path}, line 3 (row 1): 'ground_truth' cannot be empty; a row without a 'metadata' column needs one")
    );
    assert_eq!(err.field.as_deref(), Some("ground_truth"));
    // A window past the bad row never checks it.
    let mut reader = DatasetReader::open(&path, Contract::EvalRun, 2, None).unwrap();
    assert_eq!(reader.next_batch(10).unwrap().into_rows()[0].line, 4);
}

#[test]
fn json_array_streams_across_chunk_boundaries() {
    let dir = TempDir::new("json");
    // Elements larger than the 1 MiB read chunk, and many small ones around them.
    let mut rows: Vec<Value> = (0..2000).map(eval_row).collect();
    rows.insert(
        1000,
        json!({"system_prompt": "s", "user_prompt": "x".repeat(3 << 20), "ground_truth": "g"}),
    );
    let text = serde_json::to_string_pretty(&rows).unwrap();
    let path = dir.write("a.json", text.as_bytes());
    let read: Vec<Value> = read_all(&path, 0, None, 64)
        .into_iter()
        .map(|r| Value::Object(r.fields))
        .collect();
    assert_eq!(read, rows);
    let window = read_all(&path, 999, Some(3), 2);
    assert_eq!(
        window.iter().map(|r| r.index).collect::<Vec<_>>(),
        [999, 1000, 1001]
    );
    assert_eq!(count_rows(&path).unwrap(), 2001);
}

#[test]
fn a_bad_row_comes_after_the_good_rows_of_its_batch() {
    let dir = TempDir::new("pending");
    let mut text = jsonl_of(&[eval_row(0), eval_row(1)]);
    text.extend_from_slice(b"{\"system_prompt\": 1}\n");
    let path = dir.write("a.jsonl", &text);
    let mut reader = DatasetReader::open(&path, Contract::Eval, 0, None).unwrap();
    assert_eq!(reader.next_batch(10).unwrap().len(), 2);
    let err = reader.next_batch(10).unwrap_err();
    assert_eq!(
        (err.kind, err.line, err.row),
        (DatasetErrorKind::Validation, Some(3), Some(2))
    );
    assert!(reader.next_batch(10).unwrap().is_empty());
}

#[test]
fn prefetch_reader_yields_the_same_rows_and_stops_early_cleanly() {
    let dir = TempDir::new("prefetch");
    let rows: Vec<Value> = (0..5000).map(eval_row).collect();
    let path = dir.write("a.jsonl", &jsonl_of(&rows));
    let reader = DatasetReader::open(&path, Contract::Eval, 10, None).unwrap();
    let mut prefetch = PrefetchReader::start(reader, 128).unwrap();
    let mut n = 10;
    loop {
        let batch = prefetch.next_batch().unwrap();
        if batch.is_empty() {
            break;
        }
        for row in batch.clone().into_rows() {
            assert_eq!(Value::Object(row.fields), rows[n]);
            n += 1;
        }
        prefetch.recycle(batch);
    }
    assert_eq!(n, 5000);
    // Dropped after one batch: the worker must end, not hang.
    let reader = DatasetReader::open(&path, Contract::Eval, 0, None).unwrap();
    let mut early = PrefetchReader::start(reader, 16).unwrap();
    assert_eq!(early.next_batch().unwrap().len(), 16);
    drop(early);
}

#[test]
fn a_window_check_stops_at_the_first_batch_boundary_after_an_interruption() {
    let dir = TempDir::new("check-stop");
    let rows: Vec<Value> = (0..3000).map(eval_row).collect();
    let path = dir.write("rows.jsonl", &jsonl_of(&rows));
    let mut asked = 0;
    let mut never = || {
        asked += 1;
        false
    };
    assert_eq!(
        check_window(&path, Contract::Eval, 0, None, &mut never).unwrap(),
        3000
    );
    assert_eq!(asked, 3);
    // Ctrl+C seen after the first batch: the rest of the file is not read.
    let mut at_once = || true;
    assert_eq!(
        check_window(&path, Contract::Eval, 0, None, &mut at_once).unwrap(),
        1024
    );
}

#[test]
fn validation_collects_problems_in_file_order_with_a_cap() {
    let dir = TempDir::new("validate");
    let mut text = Vec::new();
    for i in 0..50 {
        let line = if i % 10 == 3 {
            json!({"user_prompt": "u"})
        } else {
            eval_row(i)
        };
        text.extend_from_slice(format!("{line}\n").as_bytes());
    }
    let path = dir.write("a.jsonl", &text);
    let report = validate_file(&path, Contract::Eval, 2).unwrap();
    assert_eq!(
        (report.rows, report.bad_rows, report.total_problems),
        (50, 5, 5)
    );
    assert_eq!(
        report.problems.iter().map(|p| p.line).collect::<Vec<_>>(),
        [Some(4), Some(14)]
    );
    assert_eq!(
        report.columns,
        ["system_prompt", "user_prompt", "ground_truth", "i"]
    );
}

#[test]
fn missing_and_unsupported_files() {
    let err = DatasetReader::open("/definitely/not/here.jsonl", Contract::Eval, 0, None)
        .err()
        .unwrap();
    assert_eq!(err.kind, DatasetErrorKind::NotFound);
    assert_eq!(
        err.to_string(),
        "Dataset file not found: /definitely/not/here.jsonl"
    );
    let err = count_rows("data.xlsx").unwrap_err();
    assert_eq!(err.kind, DatasetErrorKind::Unsupported);
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,5}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn dataset() -> impl Strategy<Value = Vec<Value>> {
    // Not blank to Python's str.strip (which also strips \x1c-\x1f, unlike regex's \s).
    let required = "[^\\s\\x1c-\\x1f]{1,8}( .{0,10})?";
    prop::collection::vec(
        (required, required, required, prop::option::of(json_value())).prop_map(
            |(s, u, g, extra)| {
                let mut row = json!({"system_prompt": s, "user_prompt": u, "ground_truth": g});
                if let Some(extra) = extra {
                    row["extra"] = extra;
                }
                row
            },
        ),
        1..20,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn reading_returns_exactly_what_was_written(rows in dataset(), batch in 1usize..6, pretty in any::<bool>()) {
        let dir = TempDir::new("prop");
        let jsonl = dir.write("p.jsonl", &jsonl_of(&rows));
        let text = if pretty { serde_json::to_string_pretty(&rows) } else { serde_json::to_string(&rows) };
        let json = dir.write("p.json", text.unwrap().as_bytes());
        for path in [jsonl, json] {
            let read: Vec<Value> = read_all(&path, 0, None, batch).into_iter().map(|r| Value::Object(r.fields)).collect();
            prop_assert_eq!(&read, &rows);
            prop_assert_eq!(count_rows(&path).unwrap(), rows.len() as u64);
            prop_assert_eq!(validate_file(&path, Contract::Eval, 10).unwrap().total_problems, 0);
        }
    }
}
