//! A file read in large blocks into one buffer, for the readers that split it into lines or records
//! in place (no copy per line).

use super::error::{DatasetError, DatasetResult};
use std::fs::File;
use std::io::Read;

const READ_BUFFER: usize = 1 << 20;

pub(crate) struct ReadBuffer {
    path: String,
    file: File,
    pub buf: Vec<u8>,
    /// The unread bytes are `buf[start..filled]`.
    pub start: usize,
    pub filled: usize,
    /// The file has no more bytes past `filled`.
    pub eof: bool,
}

impl ReadBuffer {
    pub fn open(path: &str) -> DatasetResult<Self> {
        Ok(ReadBuffer {
            path: path.to_owned(),
            file: File::open(path).map_err(|e| DatasetError::io(path, &e))?,
            buf: vec![0; READ_BUFFER],
            start: 0,
            filled: 0,
            eof: false,
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Moves the unread bytes to the front (growing the buffer when they fill it) and reads more.
    /// Returns how far the unread bytes moved back, for offsets a caller keeps into them.
    pub fn refill(&mut self) -> DatasetResult<usize> {
        let moved = self.start;
        self.buf.copy_within(self.start..self.filled, 0);
        self.filled -= moved;
        self.start = 0;
        if self.filled == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let n = self
            .file
            .read(&mut self.buf[self.filled..])
            .map_err(|e| DatasetError::io(&self.path, &e))?;
        self.filled += n;
        self.eof = n == 0;
        Ok(moved)
    }
}
