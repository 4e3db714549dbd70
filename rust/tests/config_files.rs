//! Whole-file config validation against the fixtures the Python tests use too.

use osmosis_core::config::{validate_file, Kind};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/config")
        .join(name)
}

#[test]
fn fixtures_are_valid() {
    for (name, kind) in [
        ("eval_minimal.toml", Kind::Eval),
        ("eval_full.toml", Kind::Eval),
        ("training_minimal.toml", Kind::Training),
        ("training_full.toml", Kind::Training),
    ] {
        let report = validate_file(&fixture(name), kind).expect("fixture is readable");
        assert!(report.is_valid(), "{name}: {:#?}", report.issues);
        let config = report.config.expect("valid reports carry the config");
        assert!(config["experiment"]["rollout"].is_string());
        assert!(report.positions.contains_key("experiment.entrypoint"));
    }
}

#[test]
fn an_eval_fixture_is_not_a_training_config_and_vice_versa() {
    let keys = |report: &osmosis_core::config::Report| -> Vec<String> {
        report.issues.iter().map(|i| i.key.clone()).collect()
    };
    let report = validate_file(&fixture("eval_full.toml"), Kind::Training).unwrap();
    assert_eq!(keys(&report), ["training", "evaluation"]);
    assert!(report.issues[0]
        .message
        .contains("missing [training] section"));
    assert!(report.issues[1]
        .message
        .contains("belongs in an eval config"));
    let report = validate_file(&fixture("training_minimal.toml"), Kind::Eval).unwrap();
    assert_eq!(keys(&report), ["secrets", "training"]);
}

#[test]
fn unreadable_files_are_io_errors() {
    let err = validate_file(&fixture("does-not-exist.toml"), Kind::Eval).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}
