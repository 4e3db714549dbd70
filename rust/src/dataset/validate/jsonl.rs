//! The JSONL validation pass: byte ranges read in blocks and checked line by line, on up to four
//! threads for large files, problems merged in file order.

use super::Collector;
use crate::dataset::error::{DatasetError, DatasetResult};
use crate::dataset::jsonl::{is_blank, line_text, line_too_long, max_line_bytes, parse_error};
use crate::dataset::scan::{self, Scanned};
use crate::dataset::shape::{self, Shape};
use crate::dataset::value_kind::ValueKind;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// Files smaller than this are checked on one thread.
pub(super) const PARALLEL_MIN_BYTES: u64 = 16 << 20;
pub(super) const MAX_THREADS: usize = 4;

/// JSONL in `chunks` byte ranges checked on as many threads, merged in file order.
pub(super) fn validate_jsonl(
    path: &str,
    c: &mut Collector,
    size: u64,
    chunks: usize,
) -> DatasetResult<()> {
    if chunks <= 1 {
        validate_jsonl_range(path, c, 0, u64::MAX)?;
        return Ok(());
    }
    let bounds: Vec<u64> = (0..=chunks as u64)
        .map(|k| size * k / chunks as u64)
        .collect();
    let results: Vec<DatasetResult<(Collector, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let (start, end) = (w[0], if w[1] == size { u64::MAX } else { w[1] });
                let mut part = c.empty_like();
                scope.spawn(move || {
                    let lines = validate_jsonl_range(path, &mut part, start, end)?;
                    Ok((part, lines))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("validation thread panicked"))
            .collect()
    });
    let (mut line_offset, mut row_offset) = (0u64, 0u64);
    for result in results {
        // A range's error counts lines from the range's start, like its problems before the merge.
        let (part, lines) = result.map_err(|mut e| {
            e.line = e.line.map(|l| l + line_offset);
            e
        })?;
        c.merge(part.report, line_offset, row_offset);
        line_offset += lines;
        row_offset = c.report.rows;
    }
    Ok(())
}

/// Bytes read at a time by a validation thread; a block stays in cache between the UTF-8 check and the
/// scan. A longer line grows the buffer.
pub(super) const BLOCK: usize = 256 << 10;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// JSONL lines starting in `start..end`: shapes only, no values built. Returns the lines read.
///
/// The file is read in blocks of whole lines; each block gets one UTF-8 check, then the fast scanner
/// ([`scan::scan_line`]) runs over it. A line the scanner does not vouch for, or every line of a block
/// that is not UTF-8, goes through the serde path ([`check_line`]), which owns every message.
fn validate_jsonl_range(path: &str, c: &mut Collector, start: u64, end: u64) -> DatasetResult<u64> {
    let io = |e: std::io::Error| DatasetError::io(path, &e);
    let mut file = File::open(path).map_err(io)?;
    // File offset of `buf[0]`. A range after the first starts one byte early and drops the tail of the
    // line that began before it (just its newline if one ends at `start - 1`).
    let mut base = start.saturating_sub(1);
    if start > 0 {
        file.seek(SeekFrom::Start(base)).map_err(io)?;
    }
    let mut skip_partial = start > 0;
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0usize;
    let (mut line, mut index) = (0u64, 0u64);
    loop {
        let eof = fill(&mut file, &mut buf, &mut filled).map_err(io)?;
        let data = &buf[..filled];
        let whole = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', data) {
                Some(p) => p + 1,
                None => {
                    // A line longer than the buffer: grow it and read on, up to the line-length limit
                    // (checked per block: a shorter limit than one block is enforced by the readers).
                    let limit = max_line_bytes();
                    if filled as u64 > limit {
                        return Err(line_too_long(path, line + 1, limit));
                    }
                    buf.resize(buf.len() * 2, 0);
                    continue;
                }
            }
        };
        let mut pos = 0;
        if skip_partial {
            match memchr::memchr(b'\n', &data[..whole]) {
                Some(p) => {
                    pos = p + 1;
                    skip_partial = false;
                }
                None => pos = whole,
            }
        }
        let stop = usize::try_from(end.saturating_sub(base)).unwrap_or(usize::MAX);
        let block = Block {
            path,
            data: &data[..whole],
            stop,
            bom_possible: start == 0,
        };
        let done = block.check(c, pos, &mut line, &mut index);
        buf.copy_within(whole..filled, 0);
        filled -= whole;
        base += whole as u64;
        if eof || done {
            return Ok(line);
        }
    }
}

/// Reads until `buf` is full or the file ends; true at the end of the file.
fn fill(file: &mut File, buf: &mut [u8], filled: &mut usize) -> std::io::Result<bool> {
    while *filled < buf.len() {
        match file.read(&mut buf[*filled..]) {
            Ok(0) => return Ok(true),
            Ok(n) => *filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// Whole lines of a range's block; lines starting at or past `stop` belong to the next range.
struct Block<'b> {
    path: &'b str,
    data: &'b [u8],
    stop: usize,
    bom_possible: bool,
}

impl Block<'_> {
    /// Checks the lines from `pos`; true once a line at or past `stop` is reached.
    fn check(&self, c: &mut Collector, mut pos: usize, line: &mut u64, index: &mut u64) -> bool {
        let Ok(text) = simdutf8::basic::from_utf8(&self.data[pos..]) else {
            return self.check_slowly(c, pos, line, index);
        };
        let base = pos;
        let mut entries = Vec::with_capacity(16);
        let mut at = 0;
        while at < text.len() {
            if base + at >= self.stop {
                return true;
            }
            *line += 1;
            let from = if *line == 1 && self.bom_possible && text[at..].starts_with('\u{feff}') {
                at + BOM.len()
            } else {
                at
            };
            entries.clear();
            match scan::scan_line(text, from, &mut entries) {
                Some((Scanned::Blank, next)) => at = next,
                Some((Scanned::Object, next)) => {
                    c.object(*line, *index, &entries);
                    *index += 1;
                    at = next;
                }
                Some((Scanned::Other(kind), next)) => {
                    c.other(*line, *index, kind);
                    *index += 1;
                    at = next;
                }
                None => {
                    let next = line_end(text.as_bytes(), at);
                    check_line(self.path, c, *line, index, &text.as_bytes()[from..next]);
                    at = next;
                }
            }
        }
        pos = base + at;
        pos >= self.stop
    }

    /// A block that is not all UTF-8: every line through the serde path.
    fn check_slowly(
        &self,
        c: &mut Collector,
        mut pos: usize,
        line: &mut u64,
        index: &mut u64,
    ) -> bool {
        while pos < self.data.len() {
            if pos >= self.stop {
                return true;
            }
            *line += 1;
            let next = line_end(self.data, pos);
            let mut bytes = &self.data[pos..next];
            if *line == 1 && self.bom_possible {
                bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
            }
            check_line(self.path, c, *line, index, bytes);
            pos = next;
        }
        pos >= self.stop
    }
}

/// The offset just past the newline ending the line at `pos` (or the end of `data`).
fn line_end(data: &[u8], pos: usize) -> usize {
    memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |p| pos + p + 1)
}

/// One line (BOM already dropped, line break still on) through the serde path.
pub(super) fn check_line(path: &str, c: &mut Collector, line: u64, index: &mut u64, bytes: &[u8]) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if is_blank(bytes) {
        return;
    }
    let row = *index;
    *index += 1;
    let text = match line_text(path, line, row, bytes) {
        Ok(text) => text,
        Err(err) => return c.unparsable_row(err),
    };
    match shape::parse(text) {
        Ok(Shape::Object(owned)) => {
            let entries: Vec<(&str, ValueKind)> =
                owned.iter().map(|(k, v)| (k.as_ref(), *v)).collect();
            c.object(line, row, &entries);
        }
        Ok(Shape::Other(kind)) => c.other(line, row, kind),
        Err(err) => c.unparsable_row(parse_error(path, line, row, &err)),
    }
}
