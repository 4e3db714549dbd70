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
