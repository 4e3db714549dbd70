//! A reader on its own thread: the next batch is parsed while the caller converts the current one, and
//! used batches are freed there too. At most `DEPTH` parsed batches wait, so memory stays bounded.
//! [`BatchSource`] is that or, for a caller slower than the parse, the reader in the caller's own thread.

use super::{Batch, DatasetReader, DatasetResult, Format};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

const DEPTH: usize = 2;

pub struct PrefetchReader {
    format: Format,
    batches: Receiver<DatasetResult<Batch>>,
    used: Option<Sender<Batch>>,
    worker: Option<JoinHandle<()>>,
}

fn run(
    mut reader: DatasetReader,
    batch_size: usize,
    out: SyncSender<DatasetResult<Batch>>,
    used: Receiver<Batch>,
) {
    loop {
        while let Ok(batch) = used.try_recv() {
            reader.recycle(batch);
        }
        let result = reader.next_batch(batch_size);
        let last = !matches!(&result, Ok(batch) if !batch.is_empty());
        // The receiver is gone when the caller stopped iterating: nothing more to do.
        if out.send(result).is_err() || last {
            return;
        }
    }
}

impl PrefetchReader {
    pub fn start(reader: DatasetReader, batch_size: usize) -> std::io::Result<Self> {
        let format = reader.format();
        let (out, batches) = mpsc::sync_channel(DEPTH);
        let (used, used_rx) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .name("osmosis-dataset-reader".to_owned())
            .spawn(move || run(reader, batch_size, out, used_rx))?;
        Ok(PrefetchReader {
            format,
            batches,
            used: Some(used),
            worker: Some(worker),
        })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The next batch; empty once the window is exhausted or after an error was returned.
    pub fn next_batch(&mut self) -> DatasetResult<Batch> {
        self.batches.recv().unwrap_or_else(|_| Ok(Batch::default()))
    }

    /// Hands a used batch back so the reader thread frees it.
    pub fn recycle(&self, batch: Batch) {
        if let Some(used) = &self.used {
            // If the worker has ended, the batch is simply dropped here.
            let _ = used.send(batch);
        }
    }
}

impl Drop for PrefetchReader {
    fn drop(&mut self) {
        self.used = None;
        // Unblock a worker waiting to send, then wait for it so no thread outlives the reader.
        while self.batches.try_recv().is_ok() {}
        let (_, dead) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.batches, dead));
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Where a caller's batches come from: read ahead on a thread of its own (a bulk read, whose caller
/// keeps up with the parse), or in the caller's thread (a run that takes much longer per row than the
/// parse: reading ahead saves it nothing, and the batches queued ahead would raise its memory with the
/// size of the file, up to four batches instead of the one a small file fills).
pub enum BatchSource {
    Ahead(PrefetchReader),
    Inline {
        reader: Box<DatasetReader>,
        batch_size: usize,
    },
}

impl BatchSource {
    pub fn start(reader: DatasetReader, batch_size: usize, ahead: bool) -> std::io::Result<Self> {
        Ok(if ahead {
            BatchSource::Ahead(PrefetchReader::start(reader, batch_size)?)
        } else {
            BatchSource::Inline {
                reader: Box::new(reader),
                batch_size,
            }
        })
    }

    pub fn format(&self) -> Format {
        match self {
            BatchSource::Ahead(ahead) => ahead.format(),
            BatchSource::Inline { reader, .. } => reader.format(),
        }
    }

    /// The next batch; empty once the window is exhausted or after an error was returned.
    pub fn next_batch(&mut self) -> DatasetResult<Batch> {
        match self {
            BatchSource::Ahead(ahead) => ahead.next_batch(),
            BatchSource::Inline { reader, batch_size } => reader.next_batch(*batch_size),
        }
    }

    /// Hands a used batch back, to be filled again.
    pub fn recycle(&mut self, batch: Batch) {
        match self {
            BatchSource::Ahead(ahead) => ahead.recycle(batch),
            BatchSource::Inline { reader, .. } => reader.recycle(batch),
        }
    }
}
