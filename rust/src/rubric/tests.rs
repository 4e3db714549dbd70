//! The chat records' check against what Python's readers and record check decide.

use super::*;

fn ok(line: &str) -> bool {
    chat_line_ok(line.as_bytes())
}

#[test]
fn vouches_for_plain_chat_records() {
    assert!(ok(
        r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}"#
    ));
    assert!(ok(
        r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":" hi"}]}]}"#
    ));
    assert!(ok(
        r#"{"solution_str":"x","ground_truth":null,"original_input":"i","metadata":{"a":1}}"#
    ));
    assert!(ok("{\"messages\":[],\"solution_str\":\"\u{3000}x\"}\r\n"));
    assert!(ok(r#"{"messages":"not a list","solution_str":"x"}"#));
}

#[test]
fn hands_back_what_python_decides() {
    for line in [
        r#"{"messages":[{"role":"assistant","content":"a"},{"role":"assistant","content":" "}]}"#,
        r#"{"messages":[{"role":"assistant","content":"\u3000\u0085"}]}"#,
        r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":""}]}],"solution_str":"x"}"#,
        r#"{"messages":[{"role":"assistant","content":"a","role":"user"}]}"#,
        r#"{"solution_str":"x","solution_str":""}"#,
        r#"{"solution_str":""}"#,
        r#"{"messages":[{"role":"assistant","content":[{"type":"image","text":"a"}]}]}"#,
        r#"{"messages":[{"role":"Assistant","content":"a"}]}"#,
        r#"{"solution_str":"x","ground_truth":1}"#,
        r#"{"solution_str":"x","original_input":[]}"#,
        r#"{"solution_str":"x","metadata":"m"}"#,
        r#"{"solution_str":"x","n":NaN}"#,
        r#"{"solution_str":"x"} x"#,
        r#"["solution_str"]"#,
        "\u{feff}{\"solution_str\":\"x\"}",
        "{\"solution_str\":\"x\"",
    ] {
        assert!(!ok(line), "{line}");
    }
    assert!(!chat_line_ok(b"{\"solution_str\":\"\xff\"}"));
}

#[test]
fn python_space_is_str_isspace() {
    // Python: [c for c in range(0x110000) if chr(c).isspace()]
    let expected: Vec<u32> = [
        0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
        0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029,
        0x202f, 0x205f, 0x3000,
    ]
    .to_vec();
    let found: Vec<u32> = (0..=0x10ffffu32)
        .filter_map(char::from_u32)
        .filter(|&c| python_space(c))
        .map(u32::from)
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn scan_counts_records_and_hands_back_lines() {
    let dir = std::env::temp_dir().join(format!("osmosis-chat-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rows.jsonl");
    let text = "{\"solution_str\":\"a\"}\n \x0b\n{\"solution_str\":\"\"}\n{\"solution_str\":\"b\"}";
    std::fs::write(&path, text).unwrap();
    let scan = scan_chat_records(&path).unwrap();
    assert_eq!(scan.records, 3);
    assert_eq!(scan.unsure, vec![(3, 2, 24)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_fields_are_found_at_their_place() {
    use super::document::{run_field, RUN_FIELDS};
    for (at, name) in RUN_FIELDS.iter().enumerate() {
        assert_eq!(run_field(name), Some(at), "{name}");
    }
    assert_eq!(run_field("row_index"), None);
}

#[test]
fn lines_split_and_escape_as_python_does() {
    use super::console::{split_lines, terminal_safe};
    // str.splitlines: \r\n is one break, the last break ends no empty line.
    assert_eq!(
        split_lines("a\r\nb\rc\x0bd\u{85}e\u{2028}f\n"),
        ["a", "b", "c", "d", "e", "f"]
    );
    assert_eq!(split_lines("\n\nx"), ["", "", "x"]);
    assert!(split_lines("").is_empty());
    let mut out = String::new();
    terminal_safe("a\tb\n\x1b[31m\x7f\u{9b}\u{202e}é😀", &mut out);
    assert_eq!(out, "a\tb\n\\x1b[31m\\x7f\\x9b\\u202eé😀");
}

#[test]
fn a_run_line_keeps_the_shown_members_and_reads_the_rest_through() {
    use super::document::{run_field, RunLine};
    use crate::atif::json_tree::Json;
    let line = r#"{"row_key":"k","row_index":3,"score":0.5,"scores":{"r":-0.0},"sc\u006fre":0.75,
        "row_index":4,"x":[1,{"y":"\u00e9"}]}"#;
    let run = RunLine::parse(line.as_bytes()).unwrap();
    assert_eq!(run.row.as_ref().and_then(Json::as_i64), Some(4)); // a repeated key's last value
    assert_eq!(
        run.fields[run_field("score").unwrap()],
        Some(Json::Float(0.75))
    );
    assert!(run.fields[run_field("status").unwrap()].is_none());
    // What the whole line's Json refuses in a member no one shows is refused too (but a negative zero).
    for bad in [
        "[1]",
        r#"{"score": 1} x"#,
        r#"{"x": "\ud800"}"#,
        r#"{"x": NaN}"#,
        r#"{"score": -0.0}"#,
    ] {
        assert!(RunLine::parse(bad.as_bytes()).is_none(), "{bad}");
    }
}

#[test]
fn a_document_is_laid_out_with_its_report_and_health() {
    use super::document::{Piece, RubricDocument};
    let dir = std::env::temp_dir().join(format!("osmosis-rubric-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log.jsonl");
    let run = |row: u32, status: &str, score: &str| {
        format!(
            "{{\"row_key\":\"k\",\"row_index\":{row},\"run_index\":0,\"status\":\"{status}\",\
             \"score\":{score},\"explanation\":\"ok\",\"duration_seconds\":0.5,\"attempts\":1,\
             \"usage\":{{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":null}}}}\n"
        )
    };
    let text = format!(
        "{{\"format\":\"osmosis-results/1\",\"index_base\":0}}\n{}{}",
        run(1, "error", "null"),
        run(0, "success", "0.25")
    );
    std::fs::write(&log, text).unwrap();
    let dataset: &[u8] = b"{\"id\": \" a\\u00e9 \"}\n\n{\"conversation_id\": 7}\n{}";
    let mut doc = RubricDocument::new(dataset, Some(&log), 1, true).unwrap();
    let Piece::Records {
        text,
        report,
        records,
    } = doc.next_piece().unwrap()
    else {
        panic!("not laid out");
    };
    assert_eq!(records, 3);
    assert_eq!(doc.next_piece().unwrap(), Piece::End);
    let text = String::from_utf8(text).unwrap();
    assert!(text.starts_with("[\n    {\n      \"index\": 1,\n      \"label\": \"aé\",\n"));
    assert!(text.contains("\"errors\": [\n        \"error\"\n      ],"));
    assert!(text.ends_with("\"runs\": []\n    }"));
    assert_eq!(
        report,
        "[aé]\n  Run 01 [SUCCESS]\n    score: 0.2500\n    explanation: ok\n    duration: 0.50s\n\n\
         [7]\n  Run 01 [ERROR]\n    error: unknown error\n    duration: 0.50s\n\n  Summary:\n    \
         total: 1  successes: 0  failures: 1 (unscored: 0)\n    average: n/a  variance: n/a  \
         stdev: n/a  min: n/a  max: n/a\n\n[record[3]]"
    );
    assert_eq!(
        (doc.health.runs, doc.health.errors, doc.health.attempts),
        (2, 1, 2)
    );
    assert_eq!(doc.health.total_tokens, 14); // a null total is prompt + completion
    std::fs::remove_dir_all(dir).unwrap();
}
