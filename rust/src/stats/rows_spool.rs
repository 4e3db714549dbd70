//! The `rows` of `osmosis eval`'s `-o` file laid out during the result model's own pass over the log (one
//! read and one parse of each line for both, see `results/record_line.rs`), held until the file is
//! written: the summary that goes before them in the file needs the whole log read first. Past
//! [`IN_MEMORY`] bytes the text goes to an unnamed file beside the log, so memory stays flat with the rows.
//! Rows still waiting for runs are held in memory: past [`IN_MEMORY`] of them (runs appended after all
//! first runs, a run stopped early) the shared pass gives up, and the caller reads the rows from the log
//! once the result model is freed, so peak memory is that of the larger pass, not of both.

use crate::stats::output_rows::{field_place, Members, Piece, RowsLayout};
use crate::stats::{Captured, LineTap};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Rows text kept in memory before it goes to the spool file.
const IN_MEMORY: usize = 1 << 20;
/// About how much text a piece handed to Python holds (whole rows: the writer masks secrets a batch of
/// pieces at a time, so a piece never ends inside a value).
const PIECE: usize = 1 << 16;

/// The rows of a log laid out line by line as the result model's pass hands them over.
pub struct SpooledRows {
    layout: RowsLayout,
    runs_per_row: usize,
    with_tags: bool,
    dir: PathBuf,
    /// The text not yet in the spool file.
    text: Vec<u8>,
    file: Option<File>,
    /// The length of each piece cut so far, and of the text since the last cut.
    cuts: Vec<usize>,
    open: usize,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Laying,
    /// A record the writer cannot write as the Python writer would.
    Unrendered,
    /// The spool file could not be made or written, or too many rows wait for runs: the caller lays the
    /// rows out from the log itself.
    Unspooled,
}

impl SpooledRows {
    /// Rows for a log in `dir` (where a spool file goes).
    pub fn new(dir: &Path, runs_per_row: usize, with_tags: bool) -> Self {
        SpooledRows {
            layout: RowsLayout::new(runs_per_row, with_tags),
            runs_per_row,
            with_tags,
            dir: dir.to_path_buf(),
            text: Vec::new(),
            file: None,
            cuts: Vec::new(),
            open: 0,
            state: State::Laying,
        }
    }

    /// Counts what the text grew by (whole rows) into the open piece, cut once it is big enough.
    fn grew(&mut self, before: usize) {
        self.open += self.text.len() - before;
        if self.open >= PIECE {
            self.cuts.push(std::mem::take(&mut self.open));
        }
    }

    /// Moves the text laid out so far into the spool file (made on first use).
    fn spill(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(unnamed_file(&self.dir)?);
        }
        if let Some(file) = self.file.as_mut() {
            file.write_all(&self.text)?;
        }
        self.text.clear();
        Ok(())
    }

    /// Drops what is laid out (the spool file with it) and goes on in `state`: `Laying` again from the
    /// log's first line, or done, the rows to come from elsewhere.
    fn reset(&mut self, state: State) {
        let fresh = SpooledRows::new(&self.dir, self.runs_per_row, self.with_tags);
        *self = SpooledRows { state, ..fresh };
    }

    /// Once the pass has read the whole log: the rows' pieces, or `None` when they could not be spooled
    /// (the caller then lays them out from the log).
    pub fn finish(mut self) -> Option<SpooledPieces> {
        if self.state == State::Laying {
            self.layout.read_all = true;
            let mut before = self.text.len();
            while self.layout.next_left(&mut self.text) {
                self.grew(before);
                if self.text.len() >= IN_MEMORY && self.spill().is_err() {
                    return None;
                }
                before = self.text.len();
            }
            if self.open > 0 {
                self.cuts.push(self.open);
            }
        }
        match self.state {
            State::Unspooled => None,
            State::Unrendered => Some(SpooledPieces::unrendered()),
            State::Laying => {
                let mut file = self.file;
                if let Some(file) = file.as_mut() {
                    file.seek(SeekFrom::Start(0)).ok()?;
                }
                self.cuts.reverse();
                Some(SpooledPieces {
                    file,
                    text: self.text,
                    at: 0,
                    cuts: self.cuts,
                    unrendered: false,
                    rows: self.layout.rows,
                })
            }
        }
    }
}

impl LineTap for SpooledRows {
    fn line(&mut self, raw: &[u8], captured: Option<&Captured<'_>>) {
        if self.state != State::Laying {
            return;
        }
        // The shared read is of the trimmed line; the rows' reader parses the line as it is, which no JSON
        // reader takes when what was trimmed holds a form feed.
        let plain = json_spaced(raw);
        let members = || -> Members<'_> { captured.filter(|_| plain)?.members(field_place) };
        let before = self.text.len();
        if !self.layout.line(raw, members, &mut self.text) {
            self.reset(State::Unrendered);
            return;
        }
        self.grew(before);
        if self.layout.waiting() > IN_MEMORY
            || (self.text.len() >= IN_MEMORY && self.spill().is_err())
        {
            self.reset(State::Unspooled); // the caller lays the rows out from the log itself
        }
    }

    fn restart(&mut self) {
        self.reset(State::Laying);
    }
}

/// Whether all `raw` holds around its ASCII-trimmed text is JSON whitespace.
fn json_spaced(raw: &[u8]) -> bool {
    let start = raw.len() - raw.trim_ascii_start().len();
    let end = raw.trim_ascii_end().len().max(start);
    raw[..start]
        .iter()
        .chain(&raw[end..])
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// A file in `dir` with no name (gone when closed).
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags, CWD};
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(CWD, dir, flags, Mode::from_raw_mode(0o600))?;
    Ok(File::from(fd))
}

#[cfg(not(target_os = "linux"))]
fn unnamed_file(_: &Path) -> io::Result<File> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// The laid-out rows handed out in pieces: the spool file's text, then what stayed in memory.
pub struct SpooledPieces {
    file: Option<File>,
    text: Vec<u8>,
    at: usize,
    /// The lengths of the pieces still to come, the next last.
    cuts: Vec<usize>,
    unrendered: bool,
    /// How many rows the text holds.
    pub rows: usize,
}

impl SpooledPieces {
    fn unrendered() -> Self {
        SpooledPieces {
            file: None,
            text: Vec::new(),
            at: 0,
            cuts: Vec::new(),
            unrendered: true,
            rows: 0,
        }
    }

    /// The next piece: whole rows of text, then `End`; or `Unrendered` first.
    pub fn next_piece(&mut self) -> io::Result<Piece> {
        if std::mem::take(&mut self.unrendered) {
            return Ok(Piece::Unrendered);
        }
        let Some(length) = self.cuts.pop() else {
            self.text = Vec::new();
            return Ok(Piece::End);
        };
        let mut piece = Vec::with_capacity(length);
        if let Some(file) = self.file.as_mut() {
            Read::by_ref(file)
                .take(length as u64)
                .read_to_end(&mut piece)?;
            if piece.len() < length {
                self.file = None; // the file's text is all read: the rest is in memory
            }
        }
        let rest = (length - piece.len()).min(self.text.len() - self.at);
        piece.extend_from_slice(&self.text[self.at..self.at + rest]);
        self.at += rest;
        Ok(Piece::Text(piece))
    }
}

#[cfg(test)]
mod tests {
    use super::{SpooledRows, IN_MEMORY};
    use crate::stats::output_rows::{OutputRows, Piece};
    use crate::stats::results::summarize_results_file_with;
    use crate::stats::ResultsOptions;
    use std::io::BufReader;
    use std::path::PathBuf;

    /// A folder of its own for a test's log (and the spool file), removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("osmosis-spool-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The pieces in order, `None` for a hand-back.
    type Pieces = Vec<Option<Vec<u8>>>;

    fn pieces(mut next: impl FnMut() -> Piece) -> Pieces {
        let mut out = Vec::new();
        loop {
            match next() {
                Piece::Text(text) => out.push(Some(text)),
                Piece::Unrendered => return [out, vec![None]].concat(),
                Piece::End => return out,
            }
        }
    }

    /// What the result model's pass lays out: the pieces, the rows, whether any text went to the spool
    /// file and how much stayed in memory; `None` when the pass gave the rows up.
    type Laid = Option<(Pieces, usize, bool, usize)>;

    /// What the result model's pass lays out, and the pieces the pull reader reads from the log.
    fn both_ways(name: &str, log: &str) -> (Laid, Pieces) {
        let scratch = Scratch::new(name);
        let path = scratch.0.join("log.jsonl");
        std::fs::write(&path, log).unwrap();
        let options = ResultsOptions::file_model();
        let mut spooled = SpooledRows::new(&scratch.0, 2, false);
        summarize_results_file_with(&path, &options, &mut || false, Some(&mut spooled)).unwrap();
        let laid = spooled.finish().map(|mut laid| {
            let (rows, spilled, in_memory) = (laid.rows, laid.file.is_some(), laid.text.len());
            (
                pieces(|| laid.next_piece().unwrap()),
                rows,
                spilled,
                in_memory,
            )
        });
        let file = std::fs::File::open(&path).unwrap();
        let mut pull = OutputRows::new(BufReader::new(file), 2, false);
        let slow = pieces(|| pull.next_piece().unwrap());
        (laid, slow)
    }

    fn record(row: usize, run: usize, score: &str, pad: usize) -> String {
        format!(
            "{{\"row_key\":\"k{row}\",\"row_index\":{row},\"run_index\":{run},\"model_tag\":\"\",\"success\":true,\"scores\":{{{score}}},\"error\":null,\"final_messages\":[{{\"role\":\"user\",\"content\":\"{}\"}}],\"duration_ms\":1.5,\"tokens\":7,\"invocation\":0}}\n",
            "x".repeat(pad)
        )
    }

    const HEADER: &str = "{\"format\":\"osmosis-results/1\",\"kind\":\"eval\",\"config\":{\"eval_fns\":[\"f\"],\"n_runs\":2}}\n";

    fn text_of(pieces: &Pieces) -> usize {
        pieces.iter().flatten().map(Vec::len).sum()
    }

    #[test]
    fn lays_out_what_the_pull_reader_reads_through_the_spool_file() {
        let mut log = HEADER.to_string();
        for row in 0..6000 {
            // Runs finish out of order, a row is logged twice, blank lines come between.
            log += &record(row, 1, "\"f\":0.5", 40);
            if row % 97 == 0 {
                log += &record(row, 1, "\"f\":1.0", 40);
                log += " \n";
            }
            if row % 5 != 3 {
                log += &record(row, 0, "\"f\":null", 40);
            }
            if row % 5 == 1 && row > 5 {
                log += &record(row - 3, 0, "\"f\":0.25", 40); // a row completed later
            }
        }
        log += record(7, 0, "\"f\":1.0", 0).trim_end(); // a line a crash cut short
        let (laid, slow) = both_ways("long", &log);
        let (fast, rows, spilled, _) = laid.unwrap();
        assert!(
            text_of(&fast) > 2 * IN_MEMORY && spilled,
            "{}",
            text_of(&fast)
        );
        assert_eq!(rows, 6000);
        assert_eq!(fast, slow);
    }

    #[test]
    fn rows_left_at_the_end_go_to_the_spool_file_too() {
        // Rows written as the log comes, then rows left incomplete (a run stopped early): together, past
        // what stays in memory.
        let mut log = HEADER.to_string();
        for row in 0..2000 {
            log += &record(row, 0, "\"f\":0.5", 0);
            log += &record(row, 1, "\"f\":0.5", 0);
        }
        for row in 2000..3800 {
            log += &record(row, 0, "\"f\":1.0", 0);
        }
        let (laid, slow) = both_ways("left", &log);
        let (fast, rows, spilled, in_memory) = laid.unwrap();
        assert!(text_of(&fast) > IN_MEMORY, "{}", text_of(&fast));
        assert!(spilled && in_memory < IN_MEMORY, "{in_memory}");
        assert_eq!(rows, 3800);
        assert_eq!(fast, slow);
    }

    #[test]
    fn gives_the_rows_up_when_too_many_wait_for_runs() {
        // Every first run, then the second runs of a few rows: every row waits until the log's end.
        let mut log = HEADER.to_string();
        for row in 0..8000 {
            log += &record(row, 0, "\"f\":0.5", 200);
        }
        for row in 0..100 {
            log += &record(row, 1, "\"f\":1.0", 200);
        }
        let (laid, slow) = both_ways("waiting", &log);
        assert!(laid.is_none());
        assert!(text_of(&slow) > IN_MEMORY && slow.iter().all(Option::is_some));
        // Fewer waiting rows are still laid out by the pass, as the pull reader lays them out.
        let few: String = log
            .lines()
            .take(1001)
            .map(|line| format!("{line}\n"))
            .collect();
        let (laid, slow) = both_ways("few", &few);
        assert_eq!(laid.unwrap().0, slow);
    }

    #[test]
    fn a_late_score_name_and_records_it_cannot_write_read_as_the_pull_reader_reads_them() {
        let late = format!(
            "{HEADER}{}{}",
            record(0, 0, "\"f\":1", 3),
            record(0, 1, "\"g\":1", 3)
        );
        let (laid, slow) = both_ways("late", &late);
        let fast = laid.unwrap().0;
        assert_eq!((fast.len(), &fast), (1, &slow));
        for odd in [
            "\x0c{\"row_index\":1,\"run_index\":0,\"success\":true}\n",
            "{\"row_index\":1,\"run_index\":0,\"success\":true,\"m\":\"\\ud800\"}\n",
        ] {
            let log = format!("{HEADER}{}{odd}", record(0, 0, "\"f\":1", 3));
            let (laid, slow) = both_ways("odd", &log);
            assert_eq!((laid.unwrap().0, slow), (vec![None], vec![None]), "{odd:?}");
        }
    }
}
