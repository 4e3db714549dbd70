//! Unit tests of the config validator: one rule at a time, positions asserted.

use super::*;

const EVAL_MIN: &str = r#"[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "openai/gpt-5-mini"
dataset = "demo-data"

[secrets]
required = []
"#;

const TRAIN_EXPERIMENT: &str = r#"[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "Qwen/Qwen3.6-35B-A3B"
dataset = "demo-data"
"#;

const TRAIN_MIN: &str = concat!(
    r#"[experiment]
rollout = "demo"
entrypoint = "main.py"
model_path = "Qwen/Qwen3.6-35B-A3B"
dataset = "demo-data"
"#,
    "\n[training]\n"
);

fn eval(text: &str) -> Report {
    validate_text(text, "c.toml", Kind::Eval)
}

fn train(text: &str) -> Report {
    validate_text(text, "c.toml", Kind::Training)
}

/// (line, column, key, message-fragment) of the single issue of a report.
fn only(report: &Report) -> &Issue {
    assert_eq!(report.issues.len(), 1, "{:#?}", report.issues);
    &report.issues[0]
}

#[test]
fn a_training_config_without_its_training_section_is_refused() {
    let r = train(TRAIN_EXPERIMENT);
    let issue = only(&r);
    assert_eq!(issue.key, "training");
    assert!(
        issue.message.contains("missing [training] section"),
        "{issue:?}"
    );
}

#[test]
fn minimal_configs_are_valid() {
    let r = eval(EVAL_MIN);
    assert!(r.is_valid(), "{:#?}", r.issues);
    let config = r.config.unwrap();
    assert_eq!(config["experiment"]["rollout"], "demo");
    assert_eq!(r.positions["experiment.rollout"], (2, 11));
    assert_eq!(r.positions["experiment.entrypoint"], (3, 14));
    assert_eq!(config["secrets"], serde_json::json!([]));
    assert_eq!(config["evaluation"], serde_json::json!({}));
    let r = train(TRAIN_MIN);
    assert!(r.is_valid(), "{:#?}", r.issues);
    assert_eq!(r.config.unwrap()["training"], serde_json::json!({}));
}

#[test]
fn full_eval_config_is_valid_and_normalised() {
    let text = format!(
        "{EVAL_MIN}\n[evaluation]\nlimit = 200\nn = 4\nbatch_size = 2\npass_threshold = 0.5\nagent_workflow_timeout_s = 450\ngrader_timeout_s = 150.5\n\n[advanced]\nanything = {{ nested = [1, 2] }}\nwhen = 2026-01-01\n\n[env]\nLOG_LEVEL = \"debug\"\n_PRIVATE = \"x\"\n"
    )
    .replace("required = []", "required = [\"OPENAI_API_KEY\", \"HF_TOKEN\"]")
    .replace("dataset = \"demo-data\"", "dataset = \"demo-data\"\ncommit_sha = \"abc1234\"");
    let r = eval(&text);
    assert!(r.is_valid(), "{:#?}", r.issues);
    let c = r.config.unwrap();
    assert_eq!(c["evaluation"]["n"], 4);
    assert_eq!(c["evaluation"]["agent_workflow_timeout_s"], 450);
    assert_eq!(c["evaluation"]["grader_timeout_s"], 150.5);
    assert_eq!(
        c["advanced"]["anything"]["nested"],
        serde_json::json!([1, 2])
    );
    assert_eq!(c["advanced"]["when"], "2026-01-01");
    assert_eq!(c["env"]["LOG_LEVEL"], "debug");
    assert_eq!(
        c["secrets"],
        serde_json::json!(["OPENAI_API_KEY", "HF_TOKEN"])
    );
    assert_eq!(c["experiment"]["commit_sha"], "abc1234");
}

#[test]
fn unknown_key_has_position_and_suggestion() {
    let r = eval(&EVAL_MIN.replace("rollout = \"demo\"", "rollout = \"demo\"\nrolout = \"x\""));
    let issue = only(&r);
    assert_eq!((issue.line, issue.column), (3, 1));
    assert_eq!(issue.key, "experiment.rolout");
    assert_eq!(issue.message, "Unrecognized key");
    assert_eq!(issue.suggestion.as_deref(), Some("rollout"));
}

#[test]
fn wrong_section_key_names_its_home() {
    let r = train(&format!("{TRAIN_MIN}[sampling]\nlr = 1e-6\n"));
    let issue = only(&r);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (9, 1, "sampling.lr")
    );
    assert!(
        issue.message.contains("belongs in [training]"),
        "{}",
        issue.message
    );
}

#[test]
fn missing_required_key_points_at_header() {
    let r = eval(&EVAL_MIN.replace("dataset = \"demo-data\"\n", ""));
    let issue = only(&r);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (1, 1, "experiment.dataset")
    );
}

#[test]
fn type_and_value_errors_point_at_the_value() {
    let r = eval(&EVAL_MIN.replace("rollout = \"demo\"", "rollout = 5"));
    let issue = only(&r);
    assert_eq!((issue.line, issue.column), (2, 11));
    assert_eq!(issue.message, "must be a string, got integer 5");

    let r = train(&format!("{TRAIN_MIN}[sampling]\nrollout_top_p = 1.5\n"));
    let issue = only(&r);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (9, 17, "sampling.rollout_top_p")
    );
    assert!(issue
        .message
        .starts_with("must be greater than 0 and at most 1"));

    let r = train(&format!("{TRAIN_EXPERIMENT}[training]\ntotal_epochs = 0\n"));
    assert!(only(&r).message.contains("positive integer"));
    let r = train(&format!(
        "{TRAIN_EXPERIMENT}[training]\ntotal_epochs = 1.0\n"
    ));
    assert_eq!(only(&r).message, "must be an integer, got float 1.0");
    let r = train(&format!("{TRAIN_EXPERIMENT}[training]\nlr = nan\n"));
    assert!(only(&r).message.contains("finite"));
}

#[test]
fn env_and_secret_rules() {
    let r = eval(&format!("{EVAL_MIN}[env]\nlog_level = \"x\"\n"));
    let issue = only(&r);
    assert_eq!((issue.line, issue.column), (10, 1));
    assert_eq!(issue.suggestion.as_deref(), Some("LOG_LEVEL"));

    let r = eval(&format!("{EVAL_MIN}[env]\n_OSMOSIS_X = \"x\"\n"));
    assert!(only(&r).message.contains("reserved"));

    let r = eval(&format!("{EVAL_MIN}[env]\nN = 5\n"));
    assert!(only(&r).message.starts_with("must be a string"));

    let r = eval(&EVAL_MIN.replace("required = []", "required = [\"A\", \"_B\"]"));
    let issue = only(&r);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (8, 18, "secrets.required[1]")
    );

    let r = eval(&EVAL_MIN.replace("required = []", "required = [\"A\", \"A\"]"));
    assert!(only(&r).message.contains("duplicate"));

    let r = eval(&format!(
        "{}[env]\nA = \"1\"\n",
        EVAL_MIN.replace("required = []", "required = [\"A\"]")
    ));
    assert!(
        only(&r).message.contains("also set in [env] (line 10)"),
        "{:?}",
        r.issues
    );
}

#[test]
fn secrets_presence_rules() {
    let no_secrets = EVAL_MIN.replace("[secrets]\nrequired = []\n", "");
    let report = eval(&no_secrets);
    let issue = only(&report);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (1, 1, "secrets")
    );
    assert!(train(TRAIN_MIN).is_valid());
    let r = train(&format!("{TRAIN_MIN}[secrets]\n"));
    assert_eq!(only(&r).key, "secrets.required");
    let r = eval(&EVAL_MIN.replace("required = []", "required = []\nrequire = []"));
    assert_eq!(only(&r).suggestion.as_deref(), Some("required"));
    let r = eval(&EVAL_MIN.replace("required = []", "required = \"A\""));
    assert!(only(&r).message.contains("list of strings"));
}

#[test]
fn branch_and_commit_rules() {
    let r = eval(&EVAL_MIN.replace(
        "dataset = \"demo-data\"",
        "dataset = \"d\"\ncommit_sha = \"xyz\"",
    ));
    assert!(only(&r).message.contains("hexadecimal"));
    let r = eval(&EVAL_MIN.replace(
        "dataset = \"demo-data\"",
        "dataset = \"d\"\nbranch = \"a b\"",
    ));
    assert!(only(&r).message.contains("whitespace"));
    let r = eval(&EVAL_MIN.replace(
        "dataset = \"demo-data\"",
        "dataset = \"d\"\nbranch = \"main\"\ncommit_sha = \"abcdef1\"",
    ));
    let issue = only(&r);
    assert_eq!((issue.key.as_str(), issue.line), ("experiment", 7));
}

#[test]
fn sections_of_the_other_kind_and_unknown_sections() {
    let r = eval(&format!("{EVAL_MIN}[training]\nlr = 1\n"));
    let issue = only(&r);
    assert!(
        issue.message.contains("belongs in a training config"),
        "{}",
        issue.message
    );
    let r = eval(&format!("{EVAL_MIN}[evalution]\n"));
    assert_eq!(only(&r).suggestion.as_deref(), Some("evaluation"));
    let r = eval(&format!(
        "{EVAL_MIN}[advanced]\nwhatever = 1\nfoo.bar = \"x\"\n"
    ));
    assert!(r.is_valid());
}

#[test]
fn many_problems_are_reported_together_in_file_order() {
    let text = "[experiment]\nrollout = \"a/b\"\nentrypoint = \"../x.py\"\nmodel_path = \"\"\n\n[evaluation]\nn = 0\nlimt = 3\n\n[env]\nbad-name = \"x\"\n\n[secrets]\nrequired = [\"lower\"]\n";
    let r = eval(text);
    let keys: Vec<&str> = r.issues.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "experiment.dataset",
            "experiment.rollout",
            "experiment.entrypoint",
            "experiment.model_path",
            "evaluation.n",
            "evaluation.limt",
            "env.bad-name",
            "secrets.required[0]"
        ]
    );
    assert!(r.config.is_none());
}

#[test]
fn toml_syntax_errors_have_positions() {
    let r = eval("[experiment]\nrollout = \"demo\nentrypoint = 1\n");
    assert!(!r.issues.is_empty());
    let issue = &r.issues[0];
    assert_eq!(issue.line, 2);
    assert!(
        issue.message.starts_with("invalid TOML"),
        "{}",
        issue.message
    );
    let r = eval("[experiment]\nrollout = \"a\"\nrollout = \"b\"\n");
    assert_eq!((r.issues[0].line, r.issues[0].column), (3, 1));
}

#[test]
fn not_a_table_and_missing_experiment() {
    let r = eval("experiment = 3\n[secrets]\nrequired = []\n");
    let issue = only(&r);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (1, 14, "experiment")
    );
    let r = eval("[secrets]\nrequired = []\n");
    assert_eq!(only(&r).key, "experiment");
}

#[test]
fn byte_order_mark_keeps_positions() {
    let r = eval(&format!("\u{feff}{}", EVAL_MIN.replace("\"demo\"", "5")));
    let issue = only(&r);
    assert_eq!((issue.line, issue.column), (2, 11));
}

#[test]
fn advanced_values_must_fit_json() {
    let r = eval(&format!(
        "{EVAL_MIN}[advanced]\nbig = 99999999999999999999\nok = [1, \"a\"]\n"
    ));
    let issue = only(&r);
    assert_eq!(
        (issue.line, issue.column, issue.key.as_str()),
        (10, 7, "advanced.big")
    );
    let r = eval(&format!("{EVAL_MIN}[advanced]\nnested = {{ x = -inf }}\n"));
    assert_eq!(only(&r).key, "advanced.nested.x");
}

#[test]
fn inline_and_dotted_sections_are_checked_like_headers() {
    let text = "experiment = { rollout = \"r\", entrypoint = \"main.py\", model_path = \"m\", dataset = \"d\", x = 1 }\nsecrets.required = [\"lower\"]\n";
    let r = eval(text);
    let found: Vec<(usize, usize, &str)> = r
        .issues
        .iter()
        .map(|i| (i.line, i.column, i.key.as_str()))
        .collect();
    assert_eq!(
        found,
        [(1, 88, "experiment.x"), (2, 21, "secrets.required[0]")]
    );
}

#[test]
fn integers_out_of_range_and_huge_counts() {
    let r = train(&format!(
        "{TRAIN_EXPERIMENT}[training]\ntotal_epochs = 99999999999999999999\n"
    ));
    assert!(only(&r)
        .message
        .starts_with("must be an integer from 1 to 10000"));
    let r = train(&format!(
        "{TRAIN_EXPERIMENT}[training]\ntotal_epochs = 0x10\n"
    ));
    assert!(r.is_valid());
    assert_eq!(r.config.unwrap()["training"]["total_epochs"], 16);
}

#[test]
fn values_past_their_maximum_name_the_allowed_range() {
    let lines = EVAL_MIN.lines().count() + 2;
    for (entry, key, message) in [
        (
            "n = 9223372036854775807",
            "evaluation.n",
            "must be an integer from 1 to 10000, got integer 9223372036854775807",
        ),
        (
            "batch_size = 1025",
            "evaluation.batch_size",
            "must be an integer from 1 to 1024",
        ),
        (
            "grader_timeout_s = 1e308",
            "evaluation.grader_timeout_s",
            "must be greater than 0 and at most 604800, got float 1e308",
        ),
        (
            "agent_workflow_timeout_s = -1",
            "evaluation.agent_workflow_timeout_s",
            "must be greater than 0",
        ),
        (
            "agent_workflow_timeout_s = nan",
            "evaluation.agent_workflow_timeout_s",
            "must be a finite number",
        ),
    ] {
        let r = eval(&format!("{EVAL_MIN}[evaluation]\n{entry}\n"));
        let issue = only(&r);
        assert_eq!((issue.line, issue.key.as_str()), (lines, key), "{entry}");
        assert!(
            issue.message.starts_with(message),
            "{entry}: {}",
            issue.message
        );
    }
    let r = train(&format!(
        "{TRAIN_MIN}[sampling]\nrollout_temperature = 2.5\n"
    ));
    assert!(only(&r)
        .message
        .starts_with("must be 0 or greater and at most 2, got float 2.5"));
    let r = train(&format!(
        "{TRAIN_EXPERIMENT}[training]\nmax_response_length = 10000000\n"
    ));
    assert!(r.is_valid(), "{:?}", r.issues);
}

const BENCH_MIN: &str = r#"[experiment]
benchmark = "terminal-bench"

[[agents]]
harness = "mini-swe-agent"

[agents.model]
type = "provider"
model = "openai/gpt-5-mini"
api_key_secret = "OPENAI_API_KEY"
"#;

fn bench(text: &str) -> Report {
    validate_text(text, "b.toml", Kind::Benchmark)
}

#[test]
fn minimal_benchmark_config_is_valid_and_normalised() {
    let text = format!(
        "{BENCH_MIN}\n[agents.env]\nLOG = \"1\"\n\n[tasks]\ntask_set = \"parity\"\ncategories = [\"a\"]\n\n[execution]\nattempts_per_task = 3\nmax_retries = 0\njudge_api_key_secret = \"JUDGE_KEY\"\n\n[secrets]\nrequired = [\"HF_TOKEN\"]\n"
    );
    let r = bench(&text);
    assert!(r.is_valid(), "{:#?}", r.issues);
    let c = r.config.unwrap();
    assert_eq!(c["experiment"]["benchmark"], "terminal-bench");
    assert_eq!(c["agents"][0]["model"]["api_key_secret"], "OPENAI_API_KEY");
    assert_eq!(c["agents"][0]["env"]["LOG"], "1");
    assert_eq!(c["tasks"]["task_set"], "parity");
    assert_eq!(c["execution"]["max_retries"], 0);
    assert_eq!(c["secrets"], serde_json::json!(["HF_TOKEN"]));
    assert_eq!(c["verifier"], serde_json::json!([]));
}

#[test]
fn benchmark_structure_problems_name_their_place() {
    let r = bench("[experiment]\nbenchmark = \"x\"\n");
    assert_eq!((only(&r).key.as_str(), only(&r).line), ("agents", 1));
    let r = bench(&BENCH_MIN.replace("type = \"provider\"", "type = \"local\""));
    assert_eq!(only(&r).key, "agents[0].model.type");
    let r = bench(&format!("{BENCH_MIN}[tasks]\ntask_set = \"all\"\n"));
    assert!(only(&r).message.contains("parity"));
    let r = bench(&format!("{BENCH_MIN}[evaluation]\nn = 1\n"));
    assert_eq!(only(&r).key, "evaluation");
    let r = bench(&BENCH_MIN.replace("model = \"openai", "modle = \"openai"));
    let keys: Vec<&str> = r.issues.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["agents[0].model.model", "agents[0].model.modle"]);
    assert_eq!(r.issues[1].suggestion.as_deref(), Some("model"));
    let endpoint = "type = \"endpoint\"\nbase_url = \"https://x\"\nmodel = \"m\"\napi_key_secret = \"K\"\n[agents.model.extra_headers]\nAuthorization = \"Bearer x\"\n";
    let text = BENCH_MIN.replace(
        "type = \"provider\"\nmodel = \"openai/gpt-5-mini\"\napi_key_secret = \"OPENAI_API_KEY\"\n",
        endpoint,
    );
    assert!(only(&bench(&text)).message.contains("Authorization"));
    let agent = "[[agents]]\n[agents.model]\ntype = \"hosted\"\nbase_model = \"b\"\nlora_model_name = \"l\"\n";
    let nine = format!("[experiment]\nbenchmark = \"x\"\n{}", agent.repeat(9));
    let r = bench(&nine);
    assert!(
        r.issues.iter().any(|i| i.message.contains("1 to 8")),
        "{:#?}",
        r.issues
    );
}

#[test]
fn benchmark_secret_collisions_and_harness_rules() {
    let r = bench(&format!("{BENCH_MIN}[env]\nOPENAI_API_KEY = \"sk\"\n"));
    let i = only(&r);
    assert_eq!(
        (i.key.as_str(), i.line),
        ("agents[0].model.api_key_secret", 10)
    );
    let r = bench(&BENCH_MIN.replace("OPENAI_API_KEY", "DAYTONA_API_KEY"));
    assert!(only(&r).message.contains("reserved"));
    let r = bench(&BENCH_MIN.replace("mini-swe-agent", "cursor-cli"));
    assert!(only(&r)
        .message
        .contains("harness_api_key_secret = \"CURSOR_API_KEY\""));
    let r = bench(&BENCH_MIN.replace(
        "harness = \"mini-swe-agent\"",
        "harness = \"cursor-cli\"\nharness_api_key_secret = \"CURSOR_KEY\"",
    ));
    assert!(only(&r).message.contains("reads CURSOR_API_KEY"));
    let r = bench(&BENCH_MIN.replace(
        "harness = \"mini-swe-agent\"",
        "harness_api_key_secret = \"X\"",
    ));
    assert!(only(&r).message.contains("takes no harness_api_key_secret"));
    let r = bench(&format!("{BENCH_MIN}[agents.env]\nMSWEA_API_KEY = \"k\"\n"));
    assert!(only(&r).message.contains("MSWEA_API_KEY"));
    let r = bench(&format!(
        "{BENCH_MIN}[verifier]\nrequired = [\"V\"]\n[env]\nV = \"1\"\n"
    ));
    assert!(
        r.issues.iter().any(|i| i.key == "verifier.required[0]"),
        "{:#?}",
        r.issues
    );
}
