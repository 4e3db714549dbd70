//! Where the latest line of each (row, run) of a results log starts, in row then run order: the first
//! pass of `osmosis_ai.runs.log.latest_run_lines`, for a log whose every record line begins the way the
//! engine writes it (orjson, these keys first: `{"row_key":"...","row_index":R,"run_index":K,`). Any other
//! line (or a negative index) gives `None`: Python's own pass reads that log, with its checks and errors.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

/// The header line (line 1, with its newline) and the start of each latest record line (past the
/// line before it, so blank lines between may come first), or `None` for a log Python must read.
pub struct LatestLines {
    pub header: Vec<u8>,
    pub offsets: Vec<u64>,
}

/// `row_index` and `run_index` of a record line the engine wrote (Python's `_HEAD` pattern).
pub(crate) fn head(line: &[u8]) -> Option<(i64, i64)> {
    let rest = line.strip_prefix(br#"{"row_key":""#)?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    let rest = rest[end..].strip_prefix(br#"","row_index":"#)?;
    let (row, rest) = integer(rest)?;
    let rest = rest.strip_prefix(br#","run_index":"#)?;
    let (run, rest) = integer(rest)?;
    rest.starts_with(b",").then_some((row, run))
}

/// `-?[0-9]{1,18}` and what follows it.
fn integer(text: &[u8]) -> Option<(i64, &[u8])> {
    let sign = usize::from(text.first() == Some(&b'-'));
    let digits = text[sign..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 18 {
        return None;
    }
    let end = sign + digits;
    let value: i64 = std::str::from_utf8(&text[..end]).ok()?.parse().ok()?;
    Some((value, &text[end..]))
}

/// The lines of a reader, each lent from the reader's own buffer when it lies whole there (no copy per
/// line; most lines of a log do), else gathered in a buffer of its own: `read_until`'s lines, without
/// the copy.
pub(crate) struct LentLines<R> {
    reader: R,
    spill: Vec<u8>,
    /// The length of the line lent last, consumed when the next is asked for.
    lent: usize,
}

impl<R: BufRead> LentLines<R> {
    pub fn new(reader: R) -> Self {
        LentLines {
            reader,
            spill: Vec::new(),
            lent: 0,
        }
    }

    /// The next line with its newline (without one: the last line of a file that does not end in one);
    /// empty at the end.
    pub fn next_line(&mut self) -> io::Result<&[u8]> {
        self.reader.consume(std::mem::take(&mut self.lent));
        let found = memchr::memchr(b'\n', filled(&mut self.reader)?);
        if let Some(at) = found {
            self.lent = at + 1;
            return Ok(&self.reader.fill_buf()?[..=at]); // the same buffer: fill_buf reads nothing now
        }
        self.spill.clear();
        let available = filled(&mut self.reader)?;
        let taken = available.len();
        self.spill.extend_from_slice(available);
        self.reader.consume(taken);
        if taken > 0 {
            self.reader.read_until(b'\n', &mut self.spill)?;
        }
        Ok(&self.spill)
    }

    /// The line [`next_line`](Self::next_line) lent last, again.
    fn last_line(&mut self) -> io::Result<&[u8]> {
        match self.lent {
            0 => Ok(&self.spill),
            lent => Ok(&self.reader.fill_buf()?[..lent]), // still buffered: fill_buf reads nothing
        }
    }

    /// The reader, past the line lent last (where a seek starts from).
    fn reader_mut(&mut self) -> &mut R {
        self.reader.consume(std::mem::take(&mut self.lent));
        &mut self.reader
    }
}

/// `fill_buf`, asked again when a signal interrupted the read (as `read_until` does).
fn filled<R: BufRead>(reader: &mut R) -> io::Result<&[u8]> {
    loop {
        match reader.fill_buf() {
            Ok([]) => return Ok(&[]), // the end: asking again would read again
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    reader.fill_buf() // what is buffered now, lent again without a read
}

/// Python's `bytes.isspace()` of a whole line.
pub(crate) fn blank(line: &[u8]) -> bool {
    line.iter().all(|b| b" \t\n\r\x0b\x0c".contains(b))
}

/// Where the latest line of each (row, run) starts. With the runs each row was given, 8 bytes a run in
/// a flat vector indexed by `row * runs_per_row + run` (in order as it stands, nothing to sort: a
/// run's memory stays flat with the log, as Python's pass keeps it); past that shape, every line's
/// `(row, run, start)`, sorted at the end.
struct Starts {
    per_row: u64,
    flat: Option<Vec<u64>>,
    lines: u64,
    found: Vec<(i64, i64, u64)>,
}

const EMPTY: u64 = u64::MAX;

impl Starts {
    fn new(runs_per_row: Option<u32>) -> Self {
        let per_row = u64::from(runs_per_row.unwrap_or(0));
        let flat = (per_row > 0).then(Vec::new);
        Starts {
            per_row,
            flat,
            lines: 0,
            found: Vec::new(),
        }
    }

    fn set(&mut self, row: i64, run: i64, start: u64) {
        self.lines += 1;
        if let Some(flat) = self.flat.as_mut() {
            let slot = (row as u64)
                .checked_mul(self.per_row)
                .and_then(|s| s.checked_add(run as u64))
                .filter(|_| (run as u64) < self.per_row);
            // A slot far past the lines read so far (a hand-numbered log) would size the vector by it.
            let bound = (self.lines + 1024).saturating_mul(2 * self.per_row);
            if let Some(slot) = slot.filter(|&s| s < bound) {
                let slot = slot as usize;
                if slot >= flat.len() {
                    let len = (slot + 1).max(2 * flat.len());
                    flat.resize(len, EMPTY);
                }
                flat[slot] = start;
                return;
            }
            let per_row = self.per_row;
            for (slot, &offset) in flat.iter().enumerate() {
                if offset != EMPTY {
                    let slot = slot as u64;
                    self.found
                        .push(((slot / per_row) as i64, (slot % per_row) as i64, offset));
                }
            }
            self.flat = None;
        }
        self.found.push((row, run, start));
    }

    fn ordered(mut self) -> Vec<u64> {
        if let Some(flat) = self.flat {
            return flat.into_iter().filter(|&o| o != EMPTY).collect();
        }
        // Stable: of the lines of one (row, run), the file's last comes last and is the one kept.
        let found = &mut self.found;
        found.sort_by_key(|&(row, run, _)| (row, run));
        let mut offsets: Vec<u64> = Vec::with_capacity(found.len());
        for (i, &(row, run, offset)) in found.iter().enumerate() {
            let superseded = found
                .get(i + 1)
                .is_some_and(|&(r, k, _)| (r, k) == (row, run));
            if !superseded {
                offsets.push(offset);
            }
        }
        offsets
    }
}

/// Reads the log at `path` (see the module documentation); `runs_per_row`, the runs each row was
/// given, keeps the pass's memory at 8 bytes a run.
pub fn latest_lines(path: &Path, runs_per_row: Option<u32>) -> io::Result<Option<LatestLines>> {
    let mut lines = LentLines::new(BufReader::with_capacity(1 << 16, File::open(path)?));
    let mut header = None;
    let mut starts = Starts::new(runs_per_row);
    let (mut start, mut end) = (0u64, 0u64);
    loop {
        let line = lines.next_line()?;
        if line.last() != Some(&b'\n') {
            break; // the end, or a last line a crash cut short (not read, as Python's pass does)
        }
        end += line.len() as u64;
        if header.is_none() {
            if blank(line) {
                return Ok(None);
            }
            header = Some(line.to_vec());
        } else if !blank(line) {
            match head(line) {
                Some((row, run)) if row >= 0 && (0..1 << 32).contains(&run) => {
                    starts.set(row, run, start)
                }
                _ => return Ok(None),
            }
        } else {
            continue;
        }
        start = end;
    }
    let Some(header) = header else {
        return Ok(None);
    };
    Ok(Some(LatestLines {
        header,
        offsets: starts.ordered(),
    }))
}

/// Reads the lines at the starts [`latest_lines`] found (the second pass), mostly in file order.
pub struct LineReader {
    lines: LentLines<BufReader<File>>,
    position: u64,
}

impl LineReader {
    pub fn open(path: &Path) -> io::Result<LineReader> {
        Ok(LineReader {
            lines: LentLines::new(BufReader::with_capacity(1 << 16, File::open(path)?)),
            position: 0,
        })
    }

    /// Puts the first non-blank line from `offset` on into `line` (with its newline; empty at the end
    /// of the file) and returns where it starts.
    pub fn line_at(&mut self, offset: u64, line: &mut Vec<u8>) -> io::Result<u64> {
        let (start, lent) = self.lend_at(offset)?;
        line.clear();
        line.extend_from_slice(lent);
        Ok(start)
    }

    /// [`line_at`](Self::line_at)'s line and start, the line lent from the reader's buffer (most lie
    /// whole there) until the next call.
    pub fn lend_at(&mut self, mut offset: u64) -> io::Result<(u64, &[u8])> {
        if offset != self.position {
            let reader = self.lines.reader_mut();
            // Within the buffer, forward or back, keeps it (a seek would read it again): the latest lines
            // of a log written by concurrent runs come a few lines out of file order.
            let delta = i64::try_from(i128::from(offset) - i128::from(self.position)).ok();
            match delta {
                Some(delta) => reader.seek_relative(delta)?,
                None => {
                    reader.seek(SeekFrom::Start(offset))?;
                }
            }
            self.position = offset;
        }
        loop {
            let line = self.lines.next_line()?;
            let (read, found) = (line.len() as u64, line.is_empty() || !blank(line));
            self.position += read;
            if found {
                return Ok((offset, self.lines.last_line()?));
            }
            offset += read;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{head, latest_lines, LentLines, LineReader};

    #[test]
    fn lent_lines_are_read_until_s_lines_whatever_the_buffer() {
        let text: &[u8] =
            b"one\n\ntwo two two two\nthree\r\n{\"x\": \"a longer line than the buffer\"}\nlast";
        let mut expected = Vec::new();
        let mut reader = text;
        loop {
            let mut line = Vec::new();
            std::io::BufRead::read_until(&mut reader, b'\n', &mut line).unwrap();
            expected.push(line.clone());
            if line.is_empty() {
                break;
            }
        }
        for (capacity, interrupted) in [1, 2, 3, 5, 8, 64]
            .into_iter()
            .flat_map(|c| [(c, false), (c, true)])
        {
            let reader = Interrupting {
                text,
                every_other: interrupted,
                next_fails: interrupted,
            };
            let mut lines = LentLines::new(std::io::BufReader::with_capacity(capacity, reader));
            let mut got = Vec::new();
            loop {
                let line = lines.next_line().unwrap().to_vec();
                got.push(line.clone());
                if line.is_empty() {
                    break;
                }
            }
            assert_eq!(
                got, expected,
                "capacity {capacity}, interrupted {interrupted}"
            );
        }
    }

    /// A reader whose every other read is interrupted by a signal (EINTR) when `every_other` is set.
    struct Interrupting<'a> {
        text: &'a [u8],
        every_other: bool,
        next_fails: bool,
    }

    impl std::io::Read for Interrupting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if std::mem::replace(&mut self.next_fails, false) {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            self.next_fails = self.every_other;
            self.text.read(buf)
        }
    }

    #[test]
    fn reads_the_head_the_engine_writes() {
        assert_eq!(
            head(br#"{"row_key":"ab","row_index":3,"run_index":-1,"x":1}"#),
            Some((3, -1))
        );
        assert_eq!(
            head(br#"{"row_key":"ab","row_index":007,"run_index":0,"#),
            Some((7, 0))
        );
        for other in [
            &br#"{"row_key":"a\"b","row_index":3,"run_index":1,"#[..],
            br#"{"row_index":3,"row_key":"ab","run_index":1,"#,
            br#"{"row_key":"ab","row_index":1234567890123456789,"run_index":1,"#,
            br#"{"row_key":"ab","row_index":1.0,"run_index":1,"#,
            br#"{"row_key":"ab","row_index":1,"run_index":1}"#,
        ] {
            assert_eq!(head(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn keeps_the_last_line_of_each_row_and_run_in_order() {
        let dir = std::env::temp_dir().join(format!("osmosis-latest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.jsonl");
        let line = |row: u32, run: u32| {
            format!("{{\"row_key\":\"k\",\"row_index\":{row},\"run_index\":{run},\"v\":1}}\n")
        };
        let lines = [
            "{\"format\":\"osmosis-results/1\"}\n".to_string(),
            line(1, 0),
            "\n".to_string(),
            line(0, 1),
            line(1, 0),
            line(0, 0),
            "{\"row_key\":\"k\",\"row_in".to_string(),
        ];
        std::fs::write(&path, lines.concat()).unwrap();
        let found = latest_lines(&path, None).unwrap().unwrap();
        for per_row in [1, 2, 3] {
            let flat = latest_lines(&path, Some(per_row)).unwrap().unwrap();
            assert_eq!(flat.offsets, found.offsets);
        }
        let starts: Vec<u64> = lines
            .iter()
            .scan(0, |at, l| {
                let start = *at;
                *at += l.len() as u64;
                Some(start)
            })
            .collect();
        assert_eq!(found.header, lines[0].as_bytes());
        // (0, 0), (0, 1), then the second (1, 0); (0, 1) starts past the line before the blank one.
        assert_eq!(found.offsets, vec![starts[5], starts[2], starts[4]]);
        let mut reader = LineReader::open(&path).unwrap();
        let mut line = Vec::new();
        for (offset, index) in [
            (starts[5], 5),
            (starts[2], 3),
            (starts[4], 4),
            (starts[1], 1),
        ] {
            assert_eq!(reader.line_at(offset, &mut line).unwrap(), starts[index]);
            assert_eq!(line, lines[index].as_bytes());
        }
        std::fs::write(
            &path,
            [lines[0].as_str(), "{\"row_index\":0,\"run_index\":0}\n"].concat(),
        )
        .unwrap();
        assert!(latest_lines(&path, None).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lent_lines_at_any_start_across_the_buffer_match_the_file() {
        let dir = std::env::temp_dir().join(format!("osmosis-lend-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.jsonl");
        // Lines of 1 to ~12 KB, blank ones among them: some straddle the reader's 64 KiB buffer; every
        // tenth is longer than the buffer (70 KB), so it is lent from the reader's second buffer.
        let mut text = Vec::new();
        let mut starts = Vec::new();
        for i in 0..40usize {
            starts.push(text.len() as u64);
            let len = if i % 10 == 3 {
                70_000
            } else {
                (i * 7919) % 12_000 + 1
            };
            text.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len));
            text.extend_from_slice(if i % 9 == 4 { b"\n \n" } else { b"\n" });
        }
        text.extend_from_slice(b"tail without a newline");
        std::fs::write(&path, &text).unwrap();
        let expected = |start: u64| {
            let mut at = start as usize;
            loop {
                let end = text[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |e| at + e + 1);
                if end == at || !super::blank(&text[at..end]) {
                    return (at as u64, text[at..end].to_vec());
                }
                at = end;
            }
        };
        let mut reader = LineReader::open(&path).unwrap();
        // In order, then back and forth, then past the end.
        let order = starts
            .iter()
            .copied()
            .chain(starts.iter().rev().step_by(3).copied());
        for start in order.chain([text.len() as u64 - 5, text.len() as u64]) {
            let (at, line) = reader.lend_at(start).unwrap();
            assert_eq!((at, line.to_vec()), expected(start), "from {start}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
