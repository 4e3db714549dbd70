//! JSON: a top-level array of rows, streamed element by element through a sliding buffer, so memory
//! holds one element (plus the read chunk), never the whole array. An element longer than the line
//! limit (`OSMOSIS_MAX_LINE_BYTES`) is an error naming the line it starts on.

use super::error::{json_error_text, DatasetError, DatasetErrorKind, DatasetResult, PositionUnit};
use super::jsonl::{max_line_bytes, MAX_LINE_ENV};
use super::row_value::RowValue;
use super::tape::json::Parsed;
use super::tape::{self, RowShape};
use super::{RawRow, RowRead, RowSource, TapeBatch};
use serde::de::{DeserializeOwned, IgnoredAny};
use std::fs::File;
use std::io::Read;

const CHUNK: usize = 1 << 20;

#[derive(PartialEq)]
enum State {
    Start,
    First,
    Next,
    Done,
}

pub(crate) struct JsonArraySource {
    path: String,
    file: File,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// 1-based line of `buf[pos]`.
    line: u64,
    index: u64,
    state: State,
    limit: u64,
}

impl JsonArraySource {
    pub fn open(path: &str) -> DatasetResult<Self> {
        let file = File::open(path).map_err(|e| DatasetError::io(path, &e))?;
        Ok(JsonArraySource {
            path: path.to_owned(),
            file,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            line: 1,
            index: 0,
            state: State::Start,
            limit: max_line_bytes(),
        })
    }

    /// Reads more bytes after dropping the consumed ones; false at end of file.
    fn fill(&mut self) -> DatasetResult<bool> {
        if self.eof {
            return Ok(false);
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let old = self.buf.len();
        let want = CHUNK.max(old);
        self.buf.resize(old + want, 0);
        let n = self
            .file
            .read(&mut self.buf[old..])
            .map_err(|e| DatasetError::io(&self.path, &e))?;
        self.buf.truncate(old + n);
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// The next non-whitespace byte (not consumed), or None at end of file.
    fn peek(&mut self) -> DatasetResult<Option<u8>> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if !b.is_ascii_whitespace() {
                    return Ok(Some(b));
                }
                self.line += u64::from(b == b'\n');
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Reads more of an element already `size` bytes long, unless that is over the limit.
    fn fill_within(&mut self, line: u64, size: usize) -> DatasetResult<()> {
        if size as u64 > self.limit {
            return Err(self.too_long(line));
        }
        self.fill().map(drop)
    }

    fn too_long(&mut self, line: u64) -> DatasetError {
        self.state = State::Done;
        let message = format!(
            "the element starting on this line is longer than {} bytes (set {MAX_LINE_ENV} to allow \
             longer ones)",
            self.limit
        );
        DatasetError::new(DatasetErrorKind::Parse, &self.path, message).at(
            PositionUnit::Line,
            line,
            Some(self.index),
        )
    }

    fn syntax_error(&mut self, message: String, line: u64) -> DatasetError {
        self.state = State::Done;
        DatasetError::new(DatasetErrorKind::Parse, &self.path, message).at(
            PositionUnit::Line,
            line,
            None,
        )
    }

    /// Moves to the start of the next element; false after the closing bracket.
    fn advance(&mut self) -> DatasetResult<bool> {
        let found = self.peek()?;
        let line = self.line;
        match (&self.state, found) {
            (State::Done, _) => Ok(false),
            (State::Start, Some(0xEF)) if self.buf[self.pos..].starts_with(b"\xEF\xBB\xBF") => {
                self.pos += 3;
                self.advance()
            }
            (State::Start, Some(b'[')) => {
                self.pos += 1;
                self.state = State::First;
                self.advance()
            }
            (State::Start, None) => {
                self.state = State::Done;
                Ok(false)
            }
            (State::Start, Some(_)) => Err(self.syntax_error(
                "expected a JSON array of rows (the file must start with '[')".to_owned(),
                line,
            )),
            (State::First, Some(b']')) | (State::Next, Some(b']')) => {
                self.pos += 1;
                self.state = State::Done;
                match self.peek()? {
                    None => Ok(false),
                    Some(_) => {
                        let line = self.line;
                        Err(self
                            .syntax_error("unexpected data after the closing ']'".to_owned(), line))
                    }
                }
            }
            (State::First, Some(_)) => {
                self.state = State::Next;
                Ok(true)
            }
            (State::Next, Some(b',')) => {
                self.pos += 1;
                match self.peek()? {
                    Some(b']') | None => {
                        let line = self.line;
                        Err(self.syntax_error("expected a value after ','".to_owned(), line))
                    }
                    Some(_) => Ok(true),
                }
            }
            (State::Next, Some(b)) => Err(self.syntax_error(
                format!(
                    "expected ',' or ']' between rows, found '{}'",
                    char::from(b)
                ),
                line,
            )),
            (_, None) => {
                Err(self.syntax_error("unexpected end of file inside the array".to_owned(), line))
            }
        }
    }

    /// Parses the element at `pos`, reading more of the file while it is cut off by the buffer's end.
    fn parse_element<T: DeserializeOwned>(&mut self) -> DatasetResult<(u64, T)> {
        let line = self.line;
        loop {
            let slice = &self.buf[self.pos..];
            let mut stream = serde_json::Deserializer::from_slice(slice).into_iter::<T>();
            match stream.next() {
                // A number at the very end of the buffer may go on in the next chunk.
                Some(Ok(_)) if stream.byte_offset() == slice.len() && !self.eof => {
                    self.fill_within(line, slice.len())?;
                }
                Some(Ok(_)) if stream.byte_offset() as u64 > self.limit => {
                    return Err(self.too_long(line));
                }
                Some(Ok(value)) => {
                    let used = stream.byte_offset();
                    self.line += memchr::memchr_iter(b'\n', &slice[..used]).count() as u64;
                    self.pos += used;
                    return Ok((line, value));
                }
                Some(Err(err)) if err.is_eof() && !self.eof => {
                    self.fill_within(line, slice.len())?;
                }
                Some(Err(err)) => {
                    let at = line + err.line() as u64 - 1;
                    let message = format!("invalid JSON: {}", json_error_text(&err));
                    return Err(self.syntax_error(message, at));
                }
                None => return Err(self.syntax_error("unexpected end of file".to_owned(), line)),
            }
        }
    }
}

impl RowSource for JsonArraySource {
    fn next_row(&mut self) -> DatasetResult<Option<RawRow>> {
        if !self.advance()? {
            return Ok(None);
        }
        let index = self.index;
        self.index += 1;
        let (line, RowValue(value)) = self.parse_element::<RowValue>().map_err(|mut e| {
            e.row = Some(index);
            e
        })?;
        Ok(Some(RawRow { line, index, value }))
    }

    fn read_row(&mut self, tape: &mut TapeBatch) -> DatasetResult<Option<RowRead>> {
        if !self.advance()? {
            return Ok(None);
        }
        let index = self.index;
        self.index += 1;
        let with_row = |mut e: DatasetError| {
            e.row = Some(index);
            e
        };
        let line = self.line;
        loop {
            let slice = &self.buf[self.pos..];
            match tape::json::parse_row(slice, tape, false) {
                Parsed::Done(used) if used as u64 > self.limit => {
                    return Err(with_row(self.too_long(line)))
                }
                Parsed::Done(used) => {
                    self.line += memchr::memchr_iter(b'\n', &slice[..used]).count() as u64;
                    self.pos += used;
                    let shape = RowShape::Object;
                    return Ok(Some(RowRead { line, index, shape }));
                }
                Parsed::Incomplete if !self.eof => {
                    let size = slice.len();
                    self.fill_within(line, size).map_err(with_row)?;
                }
                // serde_json reads what the fast parser leaves, and words the errors.
                Parsed::Incomplete | Parsed::Reject => break,
            }
        }
        let (line, RowValue(value)) = self.parse_element::<RowValue>().map_err(with_row)?;
        let shape = tape.push_row_value(&value);
        Ok(Some(RowRead { line, index, shape }))
    }

    fn skip_rows(&mut self, n: u64) -> DatasetResult<u64> {
        let mut skipped = 0;
        while skipped < n && self.advance()? {
            self.parse_element::<IgnoredAny>()?;
            skipped += 1;
        }
        self.index += skipped;
        Ok(skipped)
    }
}
