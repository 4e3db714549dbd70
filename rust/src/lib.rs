//! Rust core of osmosis-ai: plain Rust, no Python unless the `python` feature is on.

pub mod atif;
pub mod config;
pub mod dataset;
pub mod error;
pub mod http_head;
pub mod secrets;
pub mod signature;
pub mod stats;

pub mod rubric;

pub mod digest;

#[cfg(feature = "python")]
mod py;

/// The crate version, compared at import time against the Python package version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
