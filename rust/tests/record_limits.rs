//! The line limit (`OSMOSIS_MAX_LINE_BYTES`, set small for this test binary) bounds every format: a CSV
//! record, a JSON array element and a Parquet cell over it are errors naming the line or row and field.

mod common;

use osmosis_core::dataset::{count_rows, validate_file, Contract, DatasetError, DatasetReader};
use std::path::{Path, PathBuf};

const LIMIT: usize = 4096;

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    // Readers take the limit once per process; every test sets the same value before its first read.
    std::env::set_var("OSMOSIS_MAX_LINE_BYTES", LIMIT.to_string());
    let dir = std::env::temp_dir().join(format!("osmosis-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Every row until the first error: (rows read, the error).
fn read(path: &Path) -> (usize, Option<DatasetError>) {
    let mut reader = DatasetReader::open(path.to_str().unwrap(), Contract::Any, 0, None).unwrap();
    let mut rows = 0;
    loop {
        match reader.next_batch(100) {
            Ok(batch) if batch.is_empty() => return (rows, None),
            Ok(batch) => rows += batch.len(),
            Err(err) => return (rows, Some(err)),
        }
    }
}

#[test]
fn a_csv_record_over_the_limit_names_the_line_it_starts_on() {
    let ok = "y".repeat(LIMIT - 100);
    let mut text = format!("a,b\n1,2\n3,\"{ok}\"\n5,\"an unclosed quote\n");
    for _ in 0..200 {
        text.push_str("and the rest of the file is one field\n");
    }
    let path = file("unclosed.csv", text.as_bytes());
    let (rows, err) = read(&path);
    let err = err.expect("an error");
    assert_eq!(rows, 2, "the rows before it are read");
    assert_eq!((err.line, err.row), (Some(4), Some(2)), "{err}");
    assert!(err.message.contains("longer than 4096 bytes"), "{err}");
    // Far past the reader's buffer: refused while it is read, not after.
    let text = format!("a,b\n1,\"{}\n", "x\n".repeat(1 << 20));
    let err = read(&file("huge.csv", text.as_bytes()))
        .1
        .expect("an error");
    assert_eq!((err.line, err.row), (Some(2), Some(0)), "{err}");
    assert!(err.message.contains("longer than 4096 bytes"), "{err}");
}

/// The validator and the row counter stop at a record over the limit (its end cannot be found: before,
/// the validator asked for the same record again forever), naming the row it is on.
#[test]
fn validating_or_counting_a_csv_ends_at_a_record_over_the_limit() {
    let text = format!("a,b\n1,2\n3,\"an unclosed quote\n{}", "x".repeat(2 * LIMIT));
    let path = file("unclosed-validate.csv", text.as_bytes());
    let path = path.to_str().unwrap();
    let report = validate_file(path, Contract::Any, 10).unwrap();
    assert_eq!((report.rows, report.bad_rows), (2, 1), "{report:?}");
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert_eq!(report.problems[0].row, Some(1), "{report:?}");
    let err = count_rows(path).expect_err("an error");
    assert_eq!((err.line, err.row), (Some(3), Some(1)), "{err}");
}

#[test]
fn a_json_element_over_the_limit_names_its_line() {
    let big = "z".repeat(LIMIT + 10);
    let text = format!("[\n{{\"a\": 1}},\n{{\"a\": \"{big}\"}},\n{{\"a\": 3}}\n]\n");
    let (rows, err) = read(&file("big.json", text.as_bytes()));
    let err = err.expect("an error");
    assert_eq!(rows, 1);
    assert_eq!((err.line, err.row), (Some(3), Some(1)), "{err}");
    assert!(err.message.contains("longer than 4096 bytes"), "{err}");
    let huge = "z".repeat(3 << 20); // past the first read chunk: refused before it is all buffered
    let text = format!("[{{\"a\": \"{huge}\"}}]");
    let err = read(&file("huge.json", text.as_bytes()))
        .1
        .expect("an error");
    assert_eq!((err.line, err.row), (Some(1), Some(0)), "{err}");
}

#[test]
fn a_parquet_cell_over_the_limit_names_its_row_and_column() {
    let path = file("big.parquet", b"");
    let big = "p".repeat(LIMIT + 1);
    common::write_user_prompts(&path, &["a", "b", &big]);
    let err = read(&path).1.expect("an error");
    assert_eq!((err.line, err.row), (Some(3), Some(2)), "{err}");
    assert_eq!(err.field.as_deref(), Some("user_prompt"));
    assert!(
        err.message.contains("4097 bytes, over the limit of 4096"),
        "{err}"
    );
}
