//! JSONL: one JSON value per line; blank lines are skipped and do not count as rows.

use super::error::{json_error_text, DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::{RawRow, RowSource};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

const READ_BUFFER: usize = 1 << 20;
const BOM: &[u8] = b"\xEF\xBB\xBF";

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
        })
    }

    /// The next non-blank line and its 1-based number.
    pub fn next_line(&mut self) -> DatasetResult<Option<(u64, &[u8])>> {
        loop {
            if self.pos >= self.end {
                return Ok(None);
            }
            self.buf.clear();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| DatasetError::io(&self.path, &e))?;
            if n == 0 {
                return Ok(None);
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
        match serde_json::from_str(line_text(path, line, index, bytes)?) {
            Ok(value) => Ok(Some(RawRow { line, index, value })),
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
    let mut file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
    let mut chunk = vec![0u8; READ_BUFFER];
    let (mut rows, mut content, mut first) = (0u64, false, true);
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
            content = content || !is_blank(&data[start..newline]);
            rows += u64::from(content);
            content = false;
            start = newline + 1;
        }
        content = content || !is_blank(&data[start..]);
    }
    Ok(rows + u64::from(content))
}
