"""The package version; must equal the Rust crate's (a test compares it with the built `_core`)."""

__version__ = "0.1.0"
