//! Parquet through the public dataset API (no Python): files written with the crate's own writer, read
//! back column by column, checked against the contract, windowed and validated.

use osmosis_core::dataset::{
    count_rows, validate_file, Batch, Contract, DatasetErrorKind, DatasetReader,
};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde_json::{json, Value};
use std::sync::Arc;

/// One row of the test file: `user_prompt` and `n` may be null.
struct Cells {
    user: Option<String>,
    n: Option<i64>,
}

fn cells(i: usize) -> Cells {
    Cells {
        user: (i % 17 != 5).then(|| format!("question {i} — naïve 数学")),
        n: (i % 4 != 0).then_some(i as i64 * 3),
    }
}

fn expected(i: usize) -> Value {
    let c = cells(i);
    json!({"system_prompt": "be brief", "User_Prompt": c.user, "ground_truth": i.to_string(), "n": c.n})
}

/// Writes `rows` rows of `cells` in row groups of `group` rows.
fn write_file(path: &std::path::Path, rows: usize, group: usize) {
    let schema = parse_message_type(
        "message m {
            REQUIRED BYTE_ARRAY system_prompt (UTF8);
            OPTIONAL BYTE_ARRAY User_Prompt (UTF8);
            REQUIRED BYTE_ARRAY ground_truth (UTF8);
            OPTIONAL INT64 n;
        }",
    )
    .unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    for start in (0..rows).step_by(group) {
        let range = start..(start + group).min(rows);
        let mut row_group = writer.next_row_group().unwrap();
        let all: Vec<Cells> = range.clone().map(cells).collect();
        let levels = |present: &dyn Fn(&Cells) -> bool| -> Vec<i16> {
            all.iter().map(|c| i16::from(present(c))).collect()
        };
        let mut column = 0;
        while let Some(mut col) = row_group.next_column().unwrap() {
            match column {
                0 => {
                    let v = vec![ByteArray::from("be brief"); all.len()];
                    col.typed::<ByteArrayType>().write_batch(&v, None, None)
                }
                1 => {
                    let v: Vec<ByteArray> = all
                        .iter()
                        .filter_map(|c| c.user.as_deref().map(ByteArray::from))
                        .collect();
                    let l = levels(&|c| c.user.is_some());
                    col.typed::<ByteArrayType>().write_batch(&v, Some(&l), None)
                }
                2 => {
                    let v: Vec<ByteArray> = range
                        .clone()
                        .map(|i| ByteArray::from(i.to_string().as_str()))
                        .collect();
                    col.typed::<ByteArrayType>().write_batch(&v, None, None)
                }
                _ => {
                    let v: Vec<i64> = all.iter().filter_map(|c| c.n).collect();
                    let l = levels(&|c| c.n.is_some());
                    col.typed::<Int64Type>().write_batch(&v, Some(&l), None)
                }
            }
            .unwrap();
            col.close().unwrap();
            column += 1;
        }
        row_group.close().unwrap();
    }
    writer.close().unwrap();
}

fn temp_file(tag: &str) -> std::path::PathBuf {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!(
        "osmosis-pq-{tag}-{}-{n}.parquet",
        std::process::id()
    ))
}

/// Every row of the window, as JSON, and how the read ended.
fn read(
    path: &str,
    contract: Contract,
    offset: u64,
    limit: Option<u64>,
) -> (Vec<Value>, Result<(), DatasetErrorKind>) {
    let mut reader = DatasetReader::open(path, contract, offset, limit).unwrap();
    let mut rows = Vec::new();
    loop {
        match reader.next_batch(300) {
            Ok(batch) if batch.is_empty() => return (rows, Ok(())),
            Ok(batch) => {
                assert!(
                    matches!(batch, Batch::Columns(_)),
                    "Parquet is read column-wise"
                );
                assert!(batch.len() <= 300);
                rows.extend(
                    batch
                        .into_rows()
                        .into_iter()
                        .map(|r| Value::Object(r.fields)),
                );
            }
            Err(err) => return (rows, Err(err.kind)),
        }
    }
}

#[test]
fn rows_nulls_windows_and_row_groups() {
    let file = temp_file("read");
    write_file(&file, 2_500, 700);
    let path = file.to_str().unwrap();
    let all: Vec<Value> = (0..2_500).map(expected).collect();
    assert_eq!(count_rows(path).unwrap(), 2_500);

    let (rows, end) = read(path, Contract::Any, 0, None);
    assert_eq!(end, Ok(()));
    assert_eq!(rows, all);
    let (rows, _) = read(path, Contract::Any, 1_399, Some(5));
    assert_eq!(rows, all[1_399..1_404]);
    let (rows, _) = read(path, Contract::Any, 2_450, None);
    assert_eq!(rows, all[2_450..]);
    let (rows, _) = read(path, Contract::Any, 9_999, None);
    assert!(rows.is_empty());
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn the_contract_stops_at_the_first_bad_row_after_the_good_ones() {
    let file = temp_file("contract");
    write_file(&file, 1_000, 400);
    let path = file.to_str().unwrap();
    // Row 5 (0-based) has a null user prompt: the eval contract refuses it.
    let (rows, end) = read(path, Contract::Eval, 0, None);
    assert_eq!(rows.len(), 5);
    assert_eq!(end, Err(DatasetErrorKind::Validation));
    assert_eq!(rows[0]["user_prompt"], json!("question 0 — naïve 数学"));
    assert!(
        rows[0].get("User_Prompt").is_none(),
        "required columns are lower-cased"
    );

    let mut reader = DatasetReader::open(path, Contract::Eval, 0, None).unwrap();
    assert_eq!(reader.next_batch(300).unwrap().len(), 5);
    let err = reader.next_batch(300).unwrap_err();
    assert_eq!((err.line, err.row), (Some(6), Some(5)));
    assert_eq!(err.field.as_deref(), Some("user_prompt"));
    assert!(
        err.to_string()
            .contains("row 6: 'user_prompt' cannot be null"),
        "{err}"
    );
    assert!(reader.next_batch(300).unwrap().is_empty());

    let report = validate_file(path, Contract::Eval, 1_000).unwrap();
    let bad: Vec<u64> = (0..1_000u64).filter(|i| i % 17 == 5).collect();
    assert_eq!(report.rows, 1_000);
    assert_eq!(report.bad_rows, bad.len() as u64);
    let rows: Vec<u64> = report.problems.iter().map(|p| p.row.unwrap()).collect();
    assert_eq!(rows, bad);
    assert_eq!(
        report.columns,
        ["system_prompt", "user_prompt", "ground_truth", "n"]
    );
    std::fs::remove_file(&file).unwrap();
}
