//! The console report of `eval rubric`'s records as `osmosis_ai.rubric.report._record_lines` writes it
//! (untrusted text made safe as `osmosis_ai.terminal_text.terminal_safe` makes it), for the records the
//! core lays out (see [`super::document`]). What it cannot write as Python would gives `None`.

use crate::atif::json_text::compact;
use crate::atif::json_tree::{Json, Obj};
use std::fmt::Write;

/// A record's statistics as `osmosis_ai.rubric.engine.established_statistics` has them.
pub struct Statistics {
    /// `(mean, variance, std, min, max)`, None without a score.
    pub moments: Option<[f64; 5]>,
    pub total_runs: usize,
    pub success_count: usize,
    pub unscored_count: usize,
}

impl Statistics {
    pub fn failure_count(&self) -> usize {
        self.total_runs - self.success_count
    }
}

/// `terminal_safe(text)`: every control character (C0 but tab and newline, DEL, C1), the line and
/// paragraph separators and the bidirectional overrides as the escape Python's `repr` uses.
pub fn terminal_safe(text: &str, out: &mut String) {
    // Most text is printable ASCII with tabs and newlines at most: nothing to escape.
    if text
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) || b == b'\t' || b == b'\n')
    {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        let code = u32::from(c);
        let unsafe_char = matches!(code, 0x00..=0x08 | 0x0b..=0x1f | 0x7f..=0x9f | 0x2028 | 0x2029
            | 0x202a..=0x202e | 0x2066..=0x2069);
        if !unsafe_char {
            out.push(c);
        } else if code < 0x100 {
            let _ = write!(out, "\\x{code:02x}");
        } else {
            let _ = write!(out, "\\u{code:04x}");
        }
    }
}

/// Python's `str.splitlines()`: the line boundaries it knows, `\r\n` as one, no empty last line.
pub(super) fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        ) {
            lines.push(&text[start..at]);
            let mut end = at + c.len_utf8();
            if c == '\r' && chars.peek().map(|&(_, n)| n) == Some('\n') {
                chars.next();
                end += 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// `_indent(text, first, rest)`: each line made terminal-safe, the first after `first`, the others
/// after `rest` (Python's shortcut for printable text gives the same lines).
fn indent(text: &str, first: &str, rest: &str, out: &mut String) {
    out.push_str(first);
    let lines = split_lines(text);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(rest);
        }
        terminal_safe(line, out);
    }
}

/// `str(value)` of a text-like value: a string, an integer, a bool, None, or a float Python's `repr`
/// writes without an exponent (the report's values and the dataset's record labels).
pub(super) fn python_str(value: &Json<'_>) -> Option<String> {
    Some(match value.resolved() {
        Json::Str(s) => s.to_string(),
        Json::Null => "None".into(),
        Json::Bool(b) => (if *b { "True" } else { "False" }).into(),
        Json::Int(i) => i.to_string(),
        Json::UInt(u) => u.to_string(),
        Json::Float(f) => {
            let mut text = Vec::new();
            // json_text's floats are repr's in the range it writes (1e-4 to 1e15).
            compact(&Json::Float(*f), &mut text).then_some(())?;
            String::from_utf8(text).ok()?
        }
        _ => return None,
    })
}

/// `float(value)` of a number.
pub fn number(value: &Json<'_>) -> Option<f64> {
    match value.resolved() {
        Json::Int(i) => Some(*i as f64),
        Json::UInt(u) => Some(*u as f64),
        Json::Float(f) => Some(*f),
        _ => None,
    }
}

/// `_fmt(value, places)`: "n/a" for None.
fn fmt(value: Option<f64>, places: usize, out: &mut String) {
    match value {
        Some(v) => {
            let _ = write!(out, "{v:.places$}");
        }
        None => out.push_str("n/a"),
    }
}

/// A string member, or `default` when it is falsy (`run.get(name) or default`); None for another type.
fn text_or<'r>(run: &'r Obj<'_>, name: &str, default: &'r str) -> Option<&'r str> {
    match run.get(name) {
        Some(value) if value.truthy() => value.as_str(),
        _ => Some(default),
    }
}

/// `_record_lines(row)` joined by newlines: `label` as the row's `conversation_id`, `runs` as its runs
/// (each the document's run: `run_index` from 1).
pub fn record_text(
    label: &str,
    runs: &[Obj<'_>],
    stats: &Statistics,
    out: &mut String,
) -> Option<()> {
    out.push('[');
    terminal_safe(label, out);
    out.push(']');
    for run in runs {
        let index = run.get("run_index")?.as_i64()?;
        let status = run.get("status")?.as_str()?;
        if !status.is_ascii() {
            return None; // str.upper() past ASCII has its own cases
        }
        let _ = write!(out, "\n  Run {index:02} [{}]", status.to_ascii_uppercase());
        if status == "success" {
            out.push_str("\n    score: ");
            let score = match run.get("score").filter(|s| !s.is_null()) {
                Some(score) => Some(number(score)?),
                None => None,
            };
            fmt(score, 4, out);
            if run.get("clamped").is_some_and(Json::truthy) {
                let raw = python_str(run.get("raw_score").unwrap_or(&Json::Null))?;
                let _ = write!(out, " (judge said {raw}, clamped)");
            }
            if let Some(preview) = run.get("preview").filter(|p| p.truthy()) {
                out.push('\n');
                indent(preview.as_str()?, "    preview: ", "      ", out);
            }
            let explanation = text_or(run, "explanation", "(no explanation provided)")?;
            out.push('\n');
            indent(explanation, "    explanation: ", "      ", out);
        } else {
            out.push('\n');
            indent(
                text_or(run, "error", "unknown error")?,
                "    error: ",
                "      ",
                out,
            );
        }
        let duration = number(run.get("duration_seconds")?)?;
        let _ = write!(out, "\n    duration: {duration:.2}s\n");
    }
    if stats.total_runs > 1 || stats.failure_count() > 0 {
        out.push('\n');
        summary_lines(stats, out);
        out.push('\n');
    }
    Some(())
}

/// `_summary_lines(stats, "  ")`, joined.
fn summary_lines(stats: &Statistics, out: &mut String) {
    let _ = write!(
        out,
        "  Summary:\n    total: {}  successes: {}  failures: {} (unscored: {})\n    average: ",
        stats.total_runs,
        stats.success_count,
        stats.failure_count(),
        stats.unscored_count
    );
    let m = stats.moments.filter(|_| stats.success_count > 0);
    fmt(m.map(|m| m[0]), 4, out);
    out.push_str("  variance: ");
    fmt(m.map(|m| m[1]), 6, out);
    out.push_str("  stdev: ");
    fmt(m.map(|m| m[2]), 4, out);
    out.push_str("  min: ");
    fmt(m.map(|m| m[3]), 4, out);
    out.push_str("  max: ");
    fmt(m.map(|m| m[4]), 4, out);
}
