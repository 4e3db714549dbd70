//! CSV records out of a file, as the `csv` crate reads them, found with vector searches.
//!
//! The common record (fields plain or quoted, `""` inside quotes, LF / CRLF / CR endings) is split here
//! with `memchr`, a few bytes looked at per field instead of one state-machine step per byte (the
//! crate's way: most of a CSV read's time). A record with anything else (a closing quote followed by
//! more text, a quote left open at the end of the file) is read by `csv_core` itself, from the same
//! bytes, so the two cannot disagree. Blank lines are skipped; a record's line is the physical line
//! (counting `\n`) its first byte is on.

use super::error::{DatasetError, DatasetResult};
use super::read_buffer::ReadBuffer;

/// The fields of the record last read: `data[ends[i - 1]..ends[i]]` is field `i`.
#[derive(Debug, Default)]
pub(crate) struct Record {
    pub data: Vec<u8>,
    pub ends: Vec<usize>,
}

impl Record {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn fields(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.data[start..end])
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }
}

/// What splitting the bytes at the cursor gave.
enum Split {
    /// A record ending at this offset (past its terminator), with this many `\n` inside it.
    Record { end: usize, newlines: u64 },
    /// The bytes end inside the record: read more (or, at the end of the file, let `csv_core` finish).
    More,
    /// Something the fast path leaves to `csv_core`.
    Odd,
}

pub(crate) struct CsvRecords {
    input: ReadBuffer,
    /// The 1-based line of the first unread byte.
    line: u64,
    /// Whether the start of the file (a possible BOM) is behind.
    started: bool,
    /// Set by a record past the limit: where it ends is unknown (a stray quote makes the rest of the
    /// file one field), so no record after it can be found and the stream ends there.
    overflowed: bool,
}

impl CsvRecords {
    pub fn open(path: &str) -> DatasetResult<Self> {
        Ok(CsvRecords {
            input: ReadBuffer::open(path)?,
            line: 1,
            started: false,
            overflowed: false,
        })
    }

    /// Skips blank lines at the cursor (and a UTF-8 BOM at the start of the file, as `csv_core` does);
    /// false when the file has no more bytes.
    fn skip_blank(&mut self) -> DatasetResult<bool> {
        let input = &mut self.input;
        if !self.started {
            while input.filled < 3 && !input.eof {
                input.refill()?;
            }
            if input.buf[..input.filled].starts_with(b"\xEF\xBB\xBF") {
                input.start = 3;
            }
            self.started = true;
        }
        loop {
            while let Some(&b) = input.buf[..input.filled].get(input.start) {
                if b != b'\n' && b != b'\r' {
                    return Ok(true);
                }
                self.line += u64::from(b == b'\n');
                input.start += 1;
            }
            if input.eof {
                return Ok(false);
            }
            input.refill()?;
        }
    }

    /// Reads the next record into `record`; its line, or None at the end of the file. `limit` bounds
    /// the bytes a record may take: past it, `too_long` gives the error (with the record's line).
    pub fn next(
        &mut self,
        record: &mut Record,
        limit: u64,
        too_long: impl Fn(u64) -> DatasetError,
    ) -> DatasetResult<Option<u64>> {
        if self.overflowed || !self.skip_blank()? {
            return Ok(None);
        }
        let line = self.line;
        let input = &mut self.input;
        loop {
            record.clear();
            let data = &input.buf[input.start..input.filled];
            let found = match split(data, input.eof, record) {
                Split::Record { end, newlines } => Some((end, newlines)),
                Split::Odd => core_record(data, input.eof, record),
                Split::More => None,
            };
            if let Some((end, newlines)) = found {
                input.start += end;
                self.line += newlines;
                return Ok(Some(line));
            }
            if data.len() as u64 > limit {
                self.overflowed = true;
                return Err(too_long(line));
            }
            if input.eof {
                // The end of the file ends the record, whatever state it was in.
                let (end, newlines) = core_record(data, true, record).unwrap_or((data.len(), 0));
                input.start += end;
                self.line += newlines;
                return Ok(Some(line));
            }
            input.refill()?;
        }
    }
}

/// Splits the record at the start of `data` into `record`. With `eof`, the end of `data` ends it.
fn split(data: &[u8], eof: bool, record: &mut Record) -> Split {
    let (mut i, mut newlines) = (0, 0u64);
    loop {
        if data.get(i) == Some(&b'"') {
            // A quoted field: up to a quote not doubled.
            let mut from = i + 1;
            loop {
                let Some(at) = memchr::memchr(b'"', &data[from..]) else {
                    return Split::More;
                };
                let part = &data[from..from + at];
                newlines += memchr::memchr_iter(b'\n', part).count() as u64;
                record.data.extend_from_slice(part);
                from += at + 1;
                match data.get(from) {
                    Some(b'"') => {
                        record.data.push(b'"');
                        from += 1;
                    }
                    Some(b',' | b'\n' | b'\r') => break,
                    None if eof => break,
                    None => return Split::More,
                    Some(_) => return Split::Odd,
                }
            }
            i = from;
        } else {
            let rest = &data[i..];
            let at = memchr::memchr3(b',', b'\n', b'\r', rest).unwrap_or(rest.len());
            if at == rest.len() && !eof {
                return Split::More;
            }
            record.data.extend_from_slice(&rest[..at]);
            i += at;
        }
        record.ends.push(record.data.len());
        match data.get(i) {
            Some(b',') => i += 1,
            Some(b'\n') => {
                return Split::Record {
                    end: i + 1,
                    newlines: newlines + 1,
                }
            }
            Some(b'\r') => match data.get(i + 1) {
                Some(b'\n') => {
                    return Split::Record {
                        end: i + 2,
                        newlines: newlines + 1,
                    }
                }
                None if !eof => return Split::More,
                _ => {
                    return Split::Record {
                        end: i + 1,
                        newlines,
                    }
                }
            },
            _ => return Split::Record { end: i, newlines },
        }
        if i == data.len() {
            // A delimiter last in the data: one more (empty) field, or more bytes to come.
            if !eof {
                return Split::More;
            }
            record.ends.push(record.data.len());
            return Split::Record { end: i, newlines };
        }
    }
}

/// The record at the start of `data` read by `csv_core`, as the `csv` crate would: its end and the
/// `\n` bytes in it; None when `data` ends inside it and more may come (not `eof`).
fn core_record(data: &[u8], eof: bool, record: &mut Record) -> Option<(usize, u64)> {
    use csv_core::ReadRecordResult as R;
    let mut reader = csv_core::Reader::new();
    // A new reader strips a BOM from its first input, as at the start of a file; this record is not
    // there (the file's BOM is gone before any record), so the reader is first shown a blank line.
    let _ = reader.read_record(b"\n", &mut [0; 1], &mut [0; 1]);
    record.clear();
    record.data.resize(data.len().max(64), 0);
    record.ends.resize(16, 0);
    let (mut read, mut out, mut fields) = (0, 0, 0);
    loop {
        let input = if read == data.len() && eof {
            &[][..]
        } else {
            &data[read..]
        };
        let (result, nin, nout, nend) =
            reader.read_record(input, &mut record.data[out..], &mut record.ends[fields..]);
        read += nin;
        out += nout;
        fields += nend;
        match result {
            R::OutputFull => {
                let len = record.data.len();
                record.data.resize(len * 2, 0);
            }
            R::OutputEndsFull => {
                let len = record.ends.len();
                record.ends.resize(len * 2, 0);
            }
            R::InputEmpty if !eof => return None,
            R::InputEmpty => {}
            R::Record | R::End => {
                record.data.truncate(out);
                record.ends.truncate(fields);
                let newlines = memchr::memchr_iter(b'\n', &data[..read]).count() as u64;
                return Some((read, newlines));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn temp(bytes: &[u8]) -> std::path::PathBuf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "osmosis-csv-{}-{}.csv",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// (line, fields) of every record, by this reader.
    fn ours(bytes: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
        let path = temp(bytes);
        let mut records = CsvRecords::open(path.to_str().unwrap()).unwrap();
        let mut record = Record::default();
        let mut out = Vec::new();
        let too_long = |_| DatasetError::new(super::super::DatasetErrorKind::Parse, "x", "long");
        while let Some(line) = records.next(&mut record, u64::MAX, too_long).unwrap() {
            out.push((line, record.fields().map(<[u8]>::to_vec).collect()));
        }
        std::fs::remove_file(path).unwrap();
        out
    }

    /// The same by the `csv` crate (its line of a record counts the `\n` before the record's end
    /// position of the previous one, so only the fields are compared).
    fn crate_fields(bytes: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        reader
            .byte_records()
            .map(|r| r.unwrap().iter().map(<[u8]>::to_vec).collect())
            .collect()
    }

    #[test]
    fn records_lines_and_fields() {
        let text = b"\xEF\xBB\xBFa,b\r\n\r\n1,\"x\ny\"\"z\"\n\n\"odd\"tail,2\r3,\n\"open";
        let got = ours(text);
        let fields: Vec<_> = got.iter().map(|(_, f)| f.clone()).collect();
        assert_eq!(fields, crate_fields(text));
        let lines: Vec<_> = got.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 3, 6, 6, 7]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn records_are_read_as_the_csv_crate_reads_them(
            pieces in prop::collection::vec(prop::sample::select(vec![
                "a", "bc", ",", "\"", "\"\"", "\n", "\r", "\r\n", " ", "é", "\u{feff}",
            ]), 0..60),
        ) {
            let text: String = pieces.concat();
            let got: Vec<_> = ours(text.as_bytes()).into_iter().map(|(_, f)| f).collect();
            prop_assert_eq!(got, crate_fields(text.as_bytes()));
        }
    }
}
