//! A corrupt Parquet file that makes the parquet crate panic gives an error naming the file, and the
//! panic hook stays quiet for it (users saw "thread '...' panicked at ..." before the error); panics
//! anywhere else still reach the hook. Its own test binary: it replaces the process's panic hook.

mod common;

use osmosis_core::dataset::{Contract, DatasetReader};
use std::sync::atomic::{AtomicUsize, Ordering};

static HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A one-column file whose first page header has an unknown page type: the crate panics on it
/// ("not implemented: Page type ...") instead of returning an error.
fn corrupt_file() -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("osmosis-panic-hook-{}.parquet", std::process::id()));
    common::write_user_prompts(&path, &["q0", "q1"]);
    let mut bytes = std::fs::read(&path).unwrap();
    // After "PAR1": the page header's first field, the page type (zigzag varint); 3 is type -2.
    bytes[5] = 3;
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_caught_parquet_panic_stays_off_the_hook_and_others_do_not() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
        default(info);
    }));
    let path = corrupt_file();
    let text = path.to_str().unwrap();
    let error = DatasetReader::open(text, Contract::Any, 0, None)
        .and_then(|mut reader| reader.next_batch(10).map(|_| ()))
        .expect_err("the corrupt file must be refused");
    let _ = std::fs::remove_file(&path);
    let message = error.to_string();
    assert!(message.contains(text), "{message}");
    assert!(
        message.contains("corrupt data"),
        "the case must go through a caught panic: {message}"
    );
    assert_eq!(
        HOOK_CALLS.load(Ordering::SeqCst),
        0,
        "the hook saw the caught panic"
    );

    let elsewhere = std::panic::catch_unwind(|| panic!("a bug outside the Parquet reader"));
    assert!(elsewhere.is_err());
    assert_eq!(
        HOOK_CALLS.load(Ordering::SeqCst),
        1,
        "a panic elsewhere must reach the hook"
    );
}
