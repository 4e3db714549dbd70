//! JSONL: one JSON value per line; blank lines are skipped and do not count as rows.

use super::error::{json_error_text, DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::row_value::RowValue;
use super::{RawRow, RowSource};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

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
pub(crate) struct Lines {
    path: String,
    reader: BufReader<File>,
    buf: Vec<u8>,
    line: u64,
    /// Bytes of the file consumed so far, and where this reader stops (a line starting at or past
    /// `end` belongs to the next range).
    pos: u64,
    end: u64,
    bom_possible: bool,
    max_line: u64,
}

impl Lines {
    pub fn open(path: &str) -> DatasetResult<Self> {
        Lines::open_range(path, 0, u64::MAX)
    }

    /// The lines that start in the byte range `start..end`; line numbers count from 1 at the range's
    /// first line. Ranges that tile a file hand out every line exactly once.
    pub fn open_range(path: &str, start: u64, end: u64) -> DatasetResult<Self> {
        let io = |e: std::io::Error| DatasetError::io(path, &e);
        let mut file = File::open(path).map_err(io)?;
        let mut pos = 0;
        if start > 0 {
            file.seek(SeekFrom::Start(start - 1)).map_err(io)?;
            pos = start - 1;
        }
        let mut reader = BufReader::with_capacity(READ_BUFFER, file);
        if start > 0 {
            // Drop the tail of the line that began before `start` (just its newline if one ends at start-1).
            let mut tail = Vec::new();
            pos += reader.read_until(b'\n', &mut tail).map_err(io)? as u64;
        }
        Ok(Lines {
            path: path.to_owned(),
            reader,
            buf: Vec::with_capacity(8192),
            line: 0,
            pos,
            end,
            bom_possible: start == 0,
            max_line: max_line_bytes(),
        })
    }

    /// The same reader with another line-length limit.
    #[cfg(test)]
    pub fn with_max_line(mut self, max_line: u64) -> Self {
        self.max_line = max_line;
        self
    }

    /// The next non-blank line and its 1-based number.
    pub fn next_line(&mut self) -> DatasetResult<Option<(u64, &[u8])>> {
        loop {
            if self.pos >= self.end {
                return Ok(None);
            }
            self.buf.clear();
            // At most one byte past the limit is read: enough to know the line is too long.
            let n = (&mut self.reader)
                .take(self.max_line.saturating_add(1))
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| DatasetError::io(&self.path, &e))?;
            if n == 0 {
                return Ok(None);
            }
            if n as u64 > self.max_line && self.buf.last() != Some(&b'\n') {
                return Err(line_too_long(&self.path, self.line + 1, self.max_line));
            }
            self.pos += n as u64;
            self.line += 1;
            let mut start = 0;
            if self.line == 1 && self.bom_possible && self.buf.starts_with(BOM) {
                start = BOM.len();
            }
            let mut end = self.buf.len();
            if end > start && self.buf[end - 1] == b'\n' {
                end -= 1;
            }
            if end > start && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
            if !is_blank(&self.buf[start..end]) {
                return Ok(Some((self.line, &self.buf[start..end])));
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
        let path = &self.path;
        match serde_json::from_str::<RowValue>(line_text(path, line, index, bytes)?) {
            Ok(RowValue(value)) => Ok(Some(RawRow { line, index, value })),
            Err(err) => Err(parse_error(path, line, index, &err)),
        }
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
