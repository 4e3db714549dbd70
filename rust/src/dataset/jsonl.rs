//! JSONL: one JSON value per line; blank lines are skipped and do not count as rows.

use super::error::{json_error_text, DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::read_buffer::ReadBuffer;
use super::row_value::RowValue;
use super::tape::json::Parsed;
use super::tape::{self, RowShape, TapeBatch};
use super::{RawRow, RowRead, RowSource};
use serde_json::Value;
use std::fs::File;
use std::io::Read;

const READ_BUFFER: usize = 1 << 20;
const BOM: &[u8] = b"\xEF\xBB\xBF";
/// The longest line read (bytes) unless `OSMOSIS_MAX_LINE_BYTES` says otherwise: a file without line
/// breaks (a binary file, a huge blob) must end in an error naming the line, not in memory exhaustion.
pub(crate) const DEFAULT_MAX_LINE_BYTES: u64 = 64 << 20;
pub(crate) const MAX_LINE_ENV: &str = "OSMOSIS_MAX_LINE_BYTES";

/// The line-length limit: `OSMOSIS_MAX_LINE_BYTES` when it is a positive integer, else the default.
pub(crate) fn max_line_bytes() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var(MAX_LINE_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&v| v > 0)
            .unwrap_or(DEFAULT_MAX_LINE_BYTES)
    })
}

pub(crate) fn line_too_long(path: &str, line: u64, limit: u64) -> DatasetError {
    DatasetError::new(
        DatasetErrorKind::Parse,
        path,
        format!("the line is longer than {limit} bytes (set {MAX_LINE_ENV} to allow longer lines)"),
    )
    .at(PositionUnit::Line, line, None)
}

pub(crate) fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// Reads a file line by line, trimming the line break (LF or CRLF) and a leading UTF-8 BOM.
///
/// The file is read in large blocks and lines are handed out as slices of the block (no copy per line).
pub(crate) struct Lines {
    input: ReadBuffer,
    /// `input.buf[input.start..scanned]` holds no newline.
    scanned: usize,
    line: u64,
    max_line: u64,
}

impl Lines {
    pub fn open(path: &str) -> DatasetResult<Self> {
        Ok(Lines {
            input: ReadBuffer::open(path)?,
            scanned: 0,
            line: 0,
            max_line: max_line_bytes(),
        })
    }

    /// The same reader with another line-length limit.
    #[cfg(test)]
    pub fn with_max_line(mut self, max_line: u64) -> Self {
        self.max_line = max_line;
        self
    }

    /// The next physical line without its newline, or None at the end of the file. A line longer
    /// than the limit is an error naming it, found before the line is read whole.
    fn next_physical(&mut self) -> DatasetResult<Option<(usize, usize)>> {
        let too_long = |line: u64, limit: u64, path: &str| line_too_long(path, line + 1, limit);
        loop {
            let input = &mut self.input;
            if let Some(at) = memchr::memchr(b'\n', &input.buf[self.scanned..input.filled]) {
                let end = self.scanned + at;
                let start = input.start;
                input.start = end + 1;
                self.scanned = input.start;
                if (end - start) as u64 > self.max_line {
                    return Err(too_long(self.line, self.max_line, input.path()));
                }
                return Ok(Some((start, end)));
            }
            self.scanned = input.filled;
            if (input.filled - input.start) as u64 > self.max_line {
                return Err(too_long(self.line, self.max_line, input.path()));
            }
            if input.eof {
                if input.start == input.filled {
                    return Ok(None);
                }
                let start = input.start;
                input.start = input.filled;
                return Ok(Some((start, input.filled)));
            }
            self.scanned -= input.refill()?;
        }
    }

    /// The next non-blank line and its 1-based number.
    pub fn next_line(&mut self) -> DatasetResult<Option<(u64, &[u8])>> {
        loop {
            let Some((mut start, mut end)) = self.next_physical()? else {
                return Ok(None);
            };
            self.line += 1;
            let buf = &self.input.buf;
            if self.line == 1 && buf[start..end].starts_with(BOM) {
                start += BOM.len();
            }
            if end > start && buf[end - 1] == b'\r' {
                end -= 1;
            }
            if !is_blank(&buf[start..end]) {
                return Ok(Some((self.line, &self.input.buf[start..end])));
            }
        }
    }
}

/// The line as text: one SIMD UTF-8 check for the whole line, so the JSON parser (reading from a `str`)
/// need not validate each string again.
pub(crate) fn line_text<'b>(
    path: &str,
    line: u64,
    index: u64,
    bytes: &'b [u8],
) -> DatasetResult<&'b str> {
    simdutf8::basic::from_utf8(bytes).map_err(|_| {
        let column = std::str::from_utf8(bytes)
            .err()
            .map_or(0, |e| e.valid_up_to())
            + 1;
        DatasetError::new(
            DatasetErrorKind::Parse,
            path,
            format!("invalid UTF-8 at column {column} (dataset files must be UTF-8)"),
        )
        .at(PositionUnit::Line, line, Some(index))
    })
}

pub(crate) fn parse_error(
    path: &str,
    line: u64,
    index: u64,
    err: &serde_json::Error,
) -> DatasetError {
    DatasetError::new(
        DatasetErrorKind::Parse,
        path,
        format!(
            "invalid JSON at column {}: {}",
            err.column(),
            json_error_text(err)
        ),
    )
    .at(PositionUnit::Line, line, Some(index))
}

pub(crate) struct JsonlSource {
    path: String,
    lines: Lines,
    index: u64,
}

impl JsonlSource {
    pub fn open(path: &str) -> DatasetResult<Self> {
        Ok(JsonlSource {
            path: path.to_owned(),
            lines: Lines::open(path)?,
            index: 0,
        })
    }
}

impl RowSource for JsonlSource {
    fn next_row(&mut self) -> DatasetResult<Option<RawRow>> {
        let index = self.index;
        let Some((line, bytes)) = self.lines.next_line()? else {
            return Ok(None);
        };
        self.index += 1;
        let value = parse_value(&self.path, line, index, bytes)?;
        Ok(Some(RawRow { line, index, value }))
    }

    fn read_row(&mut self, tape: &mut TapeBatch) -> DatasetResult<Option<RowRead>> {
        let index = self.index;
        let Some((line, bytes)) = self.lines.next_line()? else {
            return Ok(None);
        };
        self.index += 1;
        let shape = match tape::json::parse_row(bytes, tape, true) {
            Parsed::Done(_) => RowShape::Object,
            // Whatever the fast parser leaves, serde_json reads (and words the errors of).
            Parsed::Reject | Parsed::Incomplete => {
                tape.push_row_value(&parse_value(&self.path, line, index, bytes)?)
            }
        };
        Ok(Some(RowRead { line, index, shape }))
    }

    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        let mut skipped = 0;
        while skipped < n && self.lines.next_line()?.is_some() {
            skipped += 1;
        }
        self.index += skipped;
        Ok(skipped)
    }
}

/// One line read by `serde_json`: the value, or the error naming the line and column.
fn parse_value(path: &str, line: u64, index: u64, bytes: &[u8]) -> DatasetResult<Value> {
    match serde_json::from_str::<RowValue>(line_text(path, line, index, bytes)?) {
        Ok(RowValue(value)) => Ok(value),
        Err(err) => Err(parse_error(path, line, index, &err)),
    }
}

/// Counts non-blank lines without parsing them.
pub(crate) fn count_rows(path: &str) -> DatasetResult<u64> {
    count_rows_limited(path, max_line_bytes())
}

/// Counts non-blank lines; a line longer than `max_line` bytes is an error naming it.
pub(crate) fn count_rows_limited(path: &str, max_line: u64) -> DatasetResult<u64> {
    let mut file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
    let mut chunk = vec![0u8; READ_BUFFER];
    let (mut rows, mut content, mut first) = (0u64, false, true);
    // Physical lines seen, and the length of the line being read (it may span chunks).
    let (mut lines, mut length) = (0u64, 0u64);
    loop {
        let n = file
            .read(&mut chunk)
            .map_err(|e| DatasetError::io(path, &e))?;
        if n == 0 {
            break;
        }
        let mut data = &chunk[..n];
        if first {
            first = false;
            data = data.strip_prefix(BOM).unwrap_or(data);
        }
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', data) {
            if length + (newline - start) as u64 > max_line {
                return Err(line_too_long(path, lines + 1, max_line));
            }
            content = content || !is_blank(&data[start..newline]);
            rows += u64::from(content);
            content = false;
            start = newline + 1;
            lines += 1;
            length = 0;
        }
        content = content || !is_blank(&data[start..]);
        length += (data.len() - start) as u64;
        if length > max_line {
            return Err(line_too_long(path, lines + 1, max_line));
        }
    }
    Ok(rows + u64::from(content))
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use std::io::Write;

    /// A temporary file removed when dropped.
    struct Temp(std::path::PathBuf);

    impl Temp {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn file_with(lines: &[&[u8]]) -> Temp {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "osmosis-limit-{}-{}.jsonl",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let mut file = File::create(&path).unwrap();
        for line in lines {
            file.write_all(line).unwrap();
        }
        Temp(path)
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_naming_it() {
        let long = [b'x'; 100];
        let file = file_with(&[b"{\"a\": 1}\n", &long, b"\n"]);
        let path = file.path().to_str().unwrap();
        let mut lines = Lines::open(path).unwrap().with_max_line(50);
        assert_eq!(lines.next_line().unwrap().unwrap().0, 1);
        let err = lines.next_line().unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(
            err.message.contains("longer than 50 bytes"),
            "{}",
            err.message
        );
        let err = count_rows_limited(path, 50).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert_eq!(count_rows_limited(path, 100).unwrap(), 2);
    }

    #[test]
    fn a_file_without_newlines_is_refused_after_the_limit() {
        let file = file_with(&[&[b'y'; 5000]]);
        let path = file.path().to_str().unwrap();
        assert_eq!(count_rows_limited(path, 4096).unwrap_err().line, Some(1));
        let mut lines = Lines::open(path).unwrap().with_max_line(4096);
        assert_eq!(lines.next_line().unwrap_err().line, Some(1));
        // Exactly at the limit is still a line.
        let exact = file_with(&[&[b' '; 10], b"\n{}\n"]);
        let mut lines = Lines::open(exact.path().to_str().unwrap())
            .unwrap()
            .with_max_line(10);
        assert_eq!(lines.next_line().unwrap().unwrap().0, 2);
    }
}
