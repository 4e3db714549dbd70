//! `CoreError`: the one error type of the core. `py/` maps each variant to a Python class.

use crate::signature::SignatureViolation;
use crate::stats::StatsError;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A function does not meet the contract it is used under.
    #[error("{0}")]
    Signature(#[from] SignatureViolation),

    /// Statistics input out of range (n, c, k, a score), naming the row when there is one.
    #[error("{0}")]
    Stats(#[from] StatsError),
    /// A dataset file is missing, unreadable, malformed, or a row breaks its contract.
    #[error("{0}")]
    Dataset(#[from] crate::dataset::DatasetError),

    /// A file the core was asked to read could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// A long read was stopped by its caller (Ctrl+C in Python).
    #[error("interrupted")]
    Interrupted,

    /// Input handed over from Python was not of the agreed shape (a bug on the Python side, not user input).
    #[error("invalid input to the core: {0}")]
    Protocol(String),
}

pub type CoreResult<T> = Result<T, CoreError>;

impl CoreError {
    /// An I/O failure on `path`.
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        CoreError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
