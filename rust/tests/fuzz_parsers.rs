//! Fuzzing on the stable toolchain: valid files of every parsed format, mutated byte by byte (flips,
//! inserted tokens, deletions, truncation, repeated chunks), must give rows or an error, never a panic, a
//! hang or a position outside the file. `cargo test` runs a few cases per format; `make fuzz` sets
//! `PROPTEST_CASES` for a longer run.

use osmosis_core::config::{validate_text, Kind};
use osmosis_core::dataset::{count_rows, validate_file, Contract, DatasetReader};
use osmosis_core::stats::{summarize_results_file, AggregatorOptions, ResultsOptions};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use proptest::prelude::*;
use proptest::sample::Index;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// A case that takes longer than this is a hang (the inputs are a few kilobytes).
const CASE_DEADLINE: Duration = Duration::from_secs(20);
/// The line limit of this test binary: small, so mutated files cross it.
const LINE_LIMIT: &str = "4096";

fn config() -> ProptestConfig {
    // Readers take the limit once per process; every test sets the same value before its first read.
    std::env::set_var("OSMOSIS_MAX_LINE_BYTES", LINE_LIMIT);
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `f` on its own thread; a panic or no answer within the deadline fails the case.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(CASE_DEADLINE) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: no answer within {CASE_DEADLINE:?}"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: panicked (see the message above)"),
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Set(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Truncate(Index),
    Repeat(Index, usize, usize),
}

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 1..8),
        prop::sample::select(vec![
            &b"\n"[..],
            b"\r\n",
            b"\"",
            b"{",
            b"}",
            b"[",
            b"]",
            b",",
            b":",
            b"\\u",
            b"\\ud800",
            b"\xff",
            b"\xEF\xBB\xBF",
            b"NaN",
            b"1e999",
            b"-",
            b"=",
            b"'''",
            b"\"\"\"",
            b"#",
            b"\0",
        ])
        .prop_map(<[u8]>::to_vec),
        (1usize..6000).prop_map(|n| vec![b'x'; n]),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        4 => (any::<Index>(), token()).prop_map(|(i, t)| Edit::Insert(i, t)),
        2 => (any::<Index>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        1 => any::<Index>().prop_map(Edit::Truncate),
        1 => (any::<Index>(), 1usize..64, 1usize..20).prop_map(|(i, n, k)| Edit::Repeat(i, n, k)),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..6)
}

fn mutate(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for edit in edits {
        let at = |i: &Index, bytes: &Vec<u8>| i.index(bytes.len() + 1);
        match edit {
            Edit::Set(i, b) if !bytes.is_empty() => {
                let p = i.index(bytes.len());
                bytes[p] = *b;
            }
            Edit::Set(..) => {}
            Edit::Insert(i, token) => {
                let p = at(i, &bytes);
                bytes.splice(p..p, token.iter().copied());
            }
            Edit::Delete(i, n) => {
                let p = at(i, &bytes);
                let end = (p + n).min(bytes.len());
                bytes.drain(p..end);
            }
            Edit::Truncate(i) => bytes.truncate(at(i, &bytes)),
            Edit::Repeat(i, n, k) => {
                let p = at(i, &bytes);
                let chunk: Vec<u8> = bytes[p..(p + n).min(bytes.len())].to_vec();
                for _ in 0..*k {
                    bytes.splice(p..p, chunk.iter().copied());
                }
            }
        }
    }
    bytes
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("osmosis-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let thread = format!("{:?}", std::thread::current().id())
        .replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let path = dir.join(format!("{n}-{thread}-{name}"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Reads the whole file through every entry point; checks that rows and errors stay inside the file.
fn read_everything(name: &str, bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let path = temp_file(name, &bytes);
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let text = path.to_str().unwrap().to_owned();
    let outcome = bounded(name, {
        let text = text.clone();
        move || {
            let mut positions = Vec::new();
            let mut error_line = None;
            if let Ok(mut reader) = DatasetReader::open(&text, Contract::Any, 0, None) {
                // A stream longer than the file has bytes would be a reader that never ends.
                for _ in 0..bytes.len() + 2 {
                    match reader.next_batch(7) {
                        Ok(batch) if batch.is_empty() => break,
                        Ok(batch) => {
                            positions.extend(batch.into_rows().iter().map(|r| (r.line, r.index)))
                        }
                        Err(err) => {
                            error_line = err.line;
                            break;
                        }
                    }
                }
            }
            let _ = count_rows(&text);
            let _ = validate_file(&text, Contract::Eval, 10);
            (positions, error_line)
        }
    });
    let _ = std::fs::remove_file(&path);
    let (positions, error_line) = outcome;
    let parquet = name.ends_with(".parquet");
    for (i, (line, index)) in positions.iter().enumerate() {
        prop_assert_eq!(*index, i as u64, "row indices count up from 0");
        prop_assert!(
            parquet || *line <= lines,
            "row at line {} of a {}-line file",
            line,
            lines
        );
    }
    if let (Some(line), false) = (error_line, parquet) {
        prop_assert!(
            line <= lines,
            "error at line {} of a {}-line file",
            line,
            lines
        );
    }
    Ok(())
}

const JSONL: &str = r#"{"system_prompt": "s", "user_prompt": "What is 2+2?", "ground_truth": "4"}
{"system_prompt": "s", "user_prompt": "naïve \"quoted\" \u00e9", "ground_truth": "x", "meta": {"k": [1, 2.5, null, true]}}

{"system_prompt": "s", "user_prompt": "deep", "ground_truth": "y", "n": [[[[{"a": -1e10}]]]]}
"#;

const CSV: &str = "system_prompt,user_prompt,ground_truth,extra\n\
s,\"What is \"\"2+2\"\"?\",4,\n\
s,\"two\nlines\",x,\"a,b\"\n\
s,plain,y,z\n";

fn json_array() -> String {
    let rows: Vec<&str> = JSONL.lines().filter(|l| !l.trim().is_empty()).collect();
    format!("[\n  {}\n]\n", rows.join(",\n  "))
}

fn parquet_seed() -> Vec<u8> {
    let schema = parse_message_type(
        "message m { REQUIRED BYTE_ARRAY user_prompt (UTF8); OPTIONAL BYTE_ARRAY ground_truth (UTF8); OPTIONAL INT64 n; }",
    )
    .unwrap();
    let path = temp_file("seed.parquet", b"");
    let file = std::fs::File::create(&path).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    for group in 0..2i64 {
        let mut row_group = writer.next_row_group().unwrap();
        let mut column = 0;
        while let Some(mut col) = row_group.next_column().unwrap() {
            let levels = [1i16, 0, 1];
            match column {
                0 => {
                    let v: Vec<ByteArray> = (0..3)
                        .map(|i| ByteArray::from(format!("q{group}{i}").as_str()))
                        .collect();
                    col.typed::<ByteArrayType>().write_batch(&v, None, None)
                }
                1 => {
                    let v = [ByteArray::from("a"), ByteArray::from("b")];
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, Some(&levels), None)
                }
                _ => col
                    .typed::<Int64Type>()
                    .write_batch(&[group, -7], Some(&levels), None),
            }
            .unwrap();
            col.close().unwrap();
            column += 1;
        }
        row_group.close().unwrap();
    }
    writer.close().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    bytes
}

const RESULTS_LOG: &str = r#"{"format": "osmosis-eval-log/1", "config": {"eval_fns": ["m:acc"], "model": "x", "n": 2}}
{"row_key": "a", "row_index": 0, "run_index": 0, "model_tag": "", "success": true, "scores": {"m:acc": 1.0}, "error": null, "tokens": 10}
{"row_key": "a", "row_index": 0, "run_index": 1, "model_tag": "", "success": false, "scores": {}, "error": "boom", "tokens": 3}
{"row_key": "b", "row_index": 1, "run_index": 0, "model_tag": "baseline", "success": true, "scores": {"m:acc": 0.5}, "error": null}
"#;

fn config_seeds() -> Vec<(String, Kind)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/config");
    [
        ("eval_minimal.toml", Kind::Eval),
        ("eval_full.toml", Kind::Eval),
        ("training_minimal.toml", Kind::Training),
        ("training_full.toml", Kind::Training),
    ]
    .into_iter()
    .map(|(name, kind)| (std::fs::read_to_string(dir.join(name)).unwrap(), kind))
    .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_jsonl_never_panics(edits in edits()) {
        read_everything("f.jsonl", mutate(JSONL.as_bytes(), &edits))?;
    }

    #[test]
    fn mutated_json_array_never_panics(edits in edits()) {
        read_everything("f.json", mutate(json_array().as_bytes(), &edits))?;
    }

    #[test]
    fn mutated_csv_never_panics(edits in edits()) {
        read_everything("f.csv", mutate(CSV.as_bytes(), &edits))?;
    }

    #[test]
    fn mutated_parquet_never_panics(edits in edits()) {
        read_everything("f.parquet", mutate(&parquet_seed(), &edits))?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), ext in prop::sample::select(vec!["jsonl", "json", "csv", "parquet"])) {
        read_everything(&format!("f.{ext}"), bytes)?;
    }

    #[test]
    fn mutated_toml_configs_never_panic(seed in 0usize..4, edits in edits()) {
        let (text, kind) = config_seeds().swap_remove(seed);
        let mutated = String::from_utf8_lossy(&mutate(text.as_bytes(), &edits)).into_owned();
        let lines = mutated.lines().count().max(1) + 1;
        let report = bounded("config", move || validate_text(&mutated, "fuzz.toml", kind));
        for issue in &report.issues {
            prop_assert!(issue.line >= 1 && issue.line <= lines, "issue at line {} of {}", issue.line, lines);
        }
    }

    #[test]
    fn mutated_results_logs_never_panic(edits in edits()) {
        let path = temp_file("log.jsonl", &mutate(RESULTS_LOG.as_bytes(), &edits));
        let options = ResultsOptions { base: AggregatorOptions::default(), pass_threshold: None, n_runs: None, failed: None, model: false, per_row: false };
        let target = path.clone();
        let _ = bounded("results log", move || summarize_results_file(&target, &options, &mut || false).is_ok());
        let _ = std::fs::remove_file(&path);
    }
}

/// Exhaustive over one byte: the first panic fuzzing found was a single changed byte of a page header.
#[test]
fn every_one_byte_change_of_a_parquet_file_is_read_or_refused() {
    config();
    let seed = parquet_seed();
    for at in 0..seed.len() {
        for value in [0u8, 3, 0x7f, 0xff] {
            let mut bytes = seed.clone();
            bytes[at] = value;
            read_everything("one.parquet", bytes).unwrap();
        }
    }
}
