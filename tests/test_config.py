"""Config validation: valid configs of both kinds, every rule alone (with its position), many at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_ai import _core
from osmosis_ai.config import (
    EvalConfig,
    TrainingConfig,
    infer_kind,
    load_eval_config,
    load_training_config,
    validate_config_text,
    validate_files,
)
from osmosis_ai.errors import ConfigError, ConfigValidationError

FIXTURES = Path(__file__).parent / "fixtures" / "config"
EVAL_MIN = (FIXTURES / "eval_minimal.toml").read_text()
TRAIN_MIN = (FIXTURES / "training_minimal.toml").read_text()


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a character offset."""
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def test_minimal_eval_config_loads() -> None:
    config = load_eval_config(FIXTURES / "eval_minimal.toml")
    assert isinstance(config, EvalConfig)
    assert config.experiment.rollout == "demo"
    assert config.secrets == []
    assert config.evaluation_config == {}
    assert config.experiment_config == {
        "rollout": "demo",
        "entrypoint": "main.py",
        "model_path": "openai/gpt-5-mini",
        "dataset": "demo-data",
    }
    assert config.request_body() == {"experiment_config": config.experiment_config}
    assert config.where("experiment.rollout").endswith("eval_minimal.toml:2:11")


def test_full_eval_config_loads() -> None:
    config = load_eval_config(FIXTURES / "eval_full.toml")
    assert config.experiment.commit_sha == "0123abcdEF"
    assert config.evaluation.n == 4
    assert config.evaluation_config["agent_workflow_timeout_s"] == 450
    assert isinstance(config.evaluation_config["agent_workflow_timeout_s"], int)
    assert config.evaluation.grader_timeout_s == 150.5
    assert config.advanced == {"engine": "v2", "retries": {"max": 3, "backoff": [1, 2, 4]}}
    assert config.env == {"LOG_LEVEL": "debug", "_INTERNAL_FLAG": "1"}
    assert config.secrets == ["OPENAI_API_KEY", "HF_TOKEN"]
    body = config.request_body()
    assert set(body) == {"experiment_config", "evaluation_config", "advanced_config", "env_config"}


def test_minimal_and_full_training_configs_load() -> None:
    minimal = load_training_config(FIXTURES / "training_minimal.toml")
    assert isinstance(minimal, TrainingConfig)
    assert minimal.secrets == []
    assert minimal.request_body() == {"experiment_config": minimal.experiment_config}
    full = load_training_config(FIXTURES / "training_full.toml")
    assert full.training.lr == pytest.approx(1e-6)
    assert full.sampling.rollout_top_p == pytest.approx(0.95)
    assert full.checkpoints.checkpoint_save_freq == 20
    assert full.experiment.branch == "feature/x"
    assert set(full.request_body()) == {
        "experiment_config",
        "training_config",
        "sampling_config",
        "checkpoints_config",
        "advanced_config",
        "env_config",
    }


# (kind, old text, new text, snippet of the new text the issue points at, key, message fragment)
# An empty `at` means the position is the [experiment] header (1:1) or the document start.
SINGLE_RULES = [
    ("eval", 'rollout = "demo"\n', "", "", "experiment.rollout", "missing required key 'rollout'"),
    ("eval", 'rollout = "demo"', "rollout = 5", "5", "experiment.rollout", "must be a string, got integer 5"),
    ("eval", 'rollout = "demo"', 'rollout = "a/b"', '"a/b"', "experiment.rollout", "no path separators"),
    ("eval", 'rollout = "demo"', 'rollout = ".."', '".."', "experiment.rollout", "not a valid rollout name"),
    ("eval", 'rollout = "demo"', 'rollout = "/srv/x"', '"/srv', "experiment.rollout", "absolute path"),
    (
        "eval",
        'rollout = "demo"',
        'rollout = "demo"\nrolout = 1',
        "rolout",
        "experiment.rolout",
        "Unrecognized key",
    ),
    ("eval", '"main.py"', '"../main.py"', '"../', "experiment.entrypoint", "climbs out"),
    ("eval", '"main.py"', '"main.txt"', '"main.txt"', "experiment.entrypoint", "ending in .py"),
    ("eval", '"openai/gpt-5-mini"', '""', '""', "experiment.model_path", "must not be empty"),
    ("eval", '"demo-data"', "[1]", "[1]", "experiment.dataset", "must be a string, got array [1]"),
    ("eval", '"demo-data"', '"d"\nbranch = ""', '""', "experiment.branch", "must not be empty or contain"),
    ("eval", '"demo-data"', '"d"\nbranch = "a b"', '"a b"', "experiment.branch", "whitespace"),
    ("eval", '"demo-data"', '"d"\ncommit_sha = "abc12"', '"abc12"', "experiment.commit_sha", "7 to 40"),
    ("eval", '"demo-data"', '"d"\ncommit_sha = 1234567', "1234567", "experiment.commit_sha", "got integer"),
    (
        "eval",
        '"demo-data"',
        '"d"\nbranch = "main"\ncommit_sha = "abcdef1"',
        "commit_sha",
        "experiment",
        "either branch or commit_sha, not both",
    ),
    (
        "eval",
        "required = []",
        "required = []\n[evalution]\nn = 1",
        "evalution",
        "evalution",
        "Unrecognized section",
    ),
    ("eval", "[secrets]\nrequired = []\n", "", "", "secrets", "missing [secrets] section"),
    ("eval", "required = []", "", "[secrets]", "secrets.required", "missing 'required'"),
    ("training", "[experiment]", 'secrets = ["A"]\n[experiment]', '["A"]', "secrets", "must be a table"),
    (
        "eval",
        "required = []",
        "required = []\noptional = []",
        "optional",
        "secrets.optional",
        "only supports",
    ),
    ("eval", "required = []", 'required = "A"', '"A"', "secrets.required", "list of strings"),
    ("eval", "required = []", "required = [1]", "1]", "secrets.required[0]", "must be a string"),
    ("eval", "required = []", 'required = ["api_key"]', '"api', "secrets.required[0]", "^[A-Z][A-Z0-9_]*$"),
    ("eval", "required = []", 'required = ["_KEY"]', '"_KEY', "secrets.required[0]", "^[A-Z][A-Z0-9_]*$"),
    ("eval", "required = []", 'required = ["A", "A"]', '"A"]', "secrets.required[1]", "duplicate"),
    (
        "eval",
        "required = []",
        'required = ["A"]\n[env]\nA = "1"',
        '"A"',
        "secrets.required[0]",
        "also set in [env]",
    ),
    (
        "eval",
        "required = []",
        'required = []\n[env]\nmy-var = "1"',
        "my-var",
        "env.my-var",
        "^[A-Z_][A-Z0-9_]*$",
    ),
    (
        "eval",
        "required = []",
        'required = []\n[env]\n_OSMOSIS_PORT = "1"',
        "_OSMOSIS",
        "env._OSMOSIS_PORT",
        "reserved",
    ),
    ("eval", "required = []", "required = []\n[env]\nPORT = 8080", "8080", "env.PORT", "must be a string"),
    ("eval", "required = []", "required = []\n[evaluation]\nn = 0", "0", "evaluation.n", "positive integer"),
    (
        "eval",
        "required = []",
        "required = []\n[evaluation]\nlimit = -5",
        "-5",
        "evaluation.limit",
        "positive",
    ),
    ("eval", "required = []", "required = []\n[evaluation]\nn = 1.5", "1.5", "evaluation.n", "an integer"),
    (
        "eval",
        "required = []",
        'required = []\n[evaluation]\nn = "4"',
        '"4"',
        "evaluation.n",
        'got string "4"',
    ),
    (
        "eval",
        "required = []",
        "required = []\n[evaluation]\nbatch_size = 0",
        "0",
        "evaluation.batch_size",
        ">= 1",
    ),
    ("eval", "required = []", "required = []\n[evaluation]\npass_threshold = inf", "inf", "", "finite"),
    ("eval", "required = []", "required = []\n[evaluation]\ngrader_timeout_s = 0", "0", "", "greater than 0"),
    (
        "eval",
        "required = []",
        "required = []\n[evaluation]\nagent_workflow_timeout_s = -1",
        "-1",
        "",
        "than 0",
    ),
    (
        "eval",
        "required = []",
        "required = []\n[evaluation]\nlimt = 5",
        "limt",
        "evaluation.limt",
        "Unrecognized",
    ),
    ("eval", "[experiment]", "evaluation = 3\n[experiment]", "3", "evaluation", "must be a table"),
    ("eval", "required = []", "required = []\n[training]\nlr = 1", "training", "training", "training config"),
    ("eval", "required = []", "required = []\n[advanced]\nx = nan", "nan", "advanced.x", "finite"),
    ("training", "[experiment]", "[experiment]\nseed = 1", "seed", "experiment.seed", "Unrecognized key"),
    ("training", '"main.py"', "true", "true", "experiment.entrypoint", "got boolean true"),
    ("training", "[training]", "[training]\nlr = 0", "0", "training.lr", "greater than 0"),
    ("training", "[training]", '[training]\nlr = "1e-6"', '"1e-6"', "training.lr", "must be a number"),
    (
        "training",
        "[training]",
        "[training]\ntotal_epochs = true",
        "true",
        "training.total_epochs",
        "an integer",
    ),
    (
        "training",
        "[training]",
        "[training]\nmax_prompt_length = 0",
        "0",
        "training.max_prompt_length",
        ">= 1",
    ),
    (
        "training",
        "[training]",
        "[training]\nrollout_batch_size = -32",
        "-32",
        "training.rollout_batch_size",
        ">= 1",
    ),
    ("training", "", "[sampling]\nrollout_top_p = 0", "0", "sampling.rollout_top_p", "at most 1"),
    ("training", "", "[sampling]\nrollout_top_p = 1.01", "1.01", "sampling.rollout_top_p", "at most 1"),
    (
        "training",
        "",
        "[sampling]\nrollout_temperature = -0.1",
        "-0.1",
        "sampling.rollout_temperature",
        ">= 0",
    ),
    ("training", "", "[sampling]\nlr = 1e-6", "lr", "sampling.lr", "belongs in [training]"),
    ("training", "", "[checkpoints]\neval_interval = 0", "0", "checkpoints.eval_interval", "positive"),
    ("training", "", "[evaluation]\nn = 1", "evaluation", "evaluation", "belongs in an eval config"),
    ("training", "", "[secrets]", "[secrets]", "secrets.required", "missing 'required'"),
    ("training", "", "[chekpoints]", "chekpoints", "chekpoints", "Unrecognized section"),
]


@pytest.mark.parametrize(("kind", "old", "new", "at", "key", "fragment"), SINGLE_RULES)
def test_each_rule_alone_reports_one_issue_at_its_position(
    kind: str, old: str, new: str, at: str, key: str, fragment: str
) -> None:
    base = EVAL_MIN if kind == "eval" else TRAIN_MIN
    if old:
        assert old in base, old
        text = base.replace(old, new, 1)
        start = base.index(old)
    else:
        text = base + new + "\n"
        start = len(base)
    report = validate_config_text(text, kind, path="configs/x.toml")  # type: ignore[arg-type]
    assert not report.ok
    fragment = fragment.replace(">= 0", "0 or greater")
    issues = [i for i in report.issues if fragment in i.message]
    assert len(report.issues) == 1, [str(i) for i in report.issues]
    assert issues, [str(i) for i in report.issues]
    issue = issues[0]
    if key:
        assert issue.key == key
    # The snippet is looked up from the change on (or, for a header above it, anywhere).
    offset = text.find(at, start) if at in text[start:] else text.index(at)
    expected = position(text, offset) if at else (1, 1)
    assert (issue.line, issue.column) == expected, str(issue)
    assert str(issue).startswith(f"configs/x.toml:{expected[0]}:{expected[1]}: ")


def test_suggestions_for_misspelt_keys() -> None:
    text = EVAL_MIN.replace("model_path", "modelpath").replace("required", "requried")
    report = validate_config_text(text, "eval")
    suggestions = {i.key: i.suggestion for i in report.issues}
    assert suggestions["experiment.modelpath"] == "model_path"
    assert suggestions["secrets.requried"] == "required"
    assert "(did you mean 'model_path'?)" in " ".join(str(i) for i in report.issues)
    lower = validate_config_text(EVAL_MIN + '[env]\nlog_level = "x"\n', "eval")
    assert lower.issues[0].suggestion == "LOG_LEVEL"


def test_many_problems_are_reported_together_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        "[experiment]\n"
        'rollout = "a/b"\n'
        "entrypoint = 3\n"
        'model_path = "m"\n'
        'dataset = "d"\n'
        "extra = 1\n"
        "[evaluation]\n"
        "n = 0\n"
        "[env]\n"
        'lower = "x"\n'
        "[secrets]\n"
        'required = ["ok_not"]\n'
        "[bogus]\n"
    )
    with pytest.raises(ConfigValidationError) as caught:
        load_eval_config(path)
    error = caught.value
    assert [(i.line, i.key) for i in error.issues] == [
        (2, "experiment.rollout"),
        (3, "experiment.entrypoint"),
        (6, "experiment.extra"),
        (8, "evaluation.n"),
        (10, "env.lower"),
        (12, "secrets.required[0]"),
        (13, "bogus"),
    ]
    text = str(error)
    assert text.startswith(f"Invalid eval config {path} (7 problems):")
    assert f"{path}:8:5: evaluation.n: must be a positive integer (>= 1), got integer 0" in text
    assert isinstance(error, ConfigError) and isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ('[experiment]\nrollout = "demo\n', 2, 16),
        ("[experiment]\nrollout = \n", 2, 11),
        ("[experiment\n", 1, 12),
        ('[experiment]\nrollout = "a"\nrollout = "b"\n', 3, 1),
        ('[secrets]\nrequired = ["A",,]\n', 2, 17),
    ],
)
def test_toml_syntax_errors_carry_their_position(text: str, line: int, column: int) -> None:
    report = validate_config_text(text, "eval", path="c.toml")
    assert report.issues, text
    first = report.issues[0]
    assert first.message.startswith("invalid TOML: ")
    assert (first.line, first.column) == (line, column), str(first)
    assert report.config is None


def test_read_errors_raise_stdlib_exceptions(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_eval_config(tmp_path / "missing.toml")
    with pytest.raises(IsADirectoryError):
        load_training_config(tmp_path)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[experiment]\nrollout = "caf\xe9"\n')
    with pytest.raises(ConfigValidationError, match=r"latin1.toml:2:15: invalid TOML: the file is not UTF-8"):
        load_training_config(bad)


def test_kind_inference_and_batch_validation(tmp_path: Path) -> None:
    (tmp_path / "configs" / "eval").mkdir(parents=True)
    (tmp_path / "configs" / "training").mkdir(parents=True)
    good = tmp_path / "configs" / "eval" / "a.toml"
    good.write_text(EVAL_MIN)
    train = tmp_path / "configs" / "training" / "a.toml"
    train.write_text(EVAL_MIN + "[training]\n")  # [secrets] is fine for training too
    stray = tmp_path / "a.toml"
    stray.write_text(EVAL_MIN)
    assert infer_kind(good) == "eval" and infer_kind(train) == "training" and infer_kind(stray) is None
    reports = validate_files([good, train, stray, tmp_path / "configs" / "eval" / "nope.toml"])
    assert [r.ok for r in reports] == [True, True, False, False]
    assert [r.kind for r in reports] == ["eval", "training", None, "eval"]
    assert "cannot tell whether" in reports[2].issues[0].message
    assert reports[3].io_error == "not_found"
    assert isinstance(reports[1].config, TrainingConfig)
    # An eval config taken for a training one lacks [training]: an error, not a run on defaults.
    forced = validate_files([stray], kind="training")
    assert not forced[0].ok
    assert [(i.key, i.message.split(" (")[0]) for i in forced[0].issues] == [
        ("training", "missing [training] section")
    ]


def test_a_training_config_without_its_training_section_is_an_error() -> None:
    text = TRAIN_MIN.replace("[training]\n", "")
    report = validate_config_text(text, "training", path="configs/training/t.toml")
    assert not report.ok
    [issue] = report.issues
    assert issue.key == "training" and "missing [training] section" in issue.message
    assert "write `[training]` alone to take the platform's defaults" in issue.message


def test_byte_order_mark_is_accepted() -> None:
    report = validate_config_text("\ufeff" + EVAL_MIN.replace('"demo"', "5"), "eval")
    assert [(i.line, i.column) for i in report.issues] == [(2, 11)]


def test_stub_lists_the_config_functions() -> None:
    stub = (Path(_core.__file__).parent / "_core.pyi").read_text()
    for name in ("validate_config_text", "validate_config_files"):
        assert callable(getattr(_core, name))
        assert f"def {name}(" in stub


@pytest.mark.parametrize("name", ["eval_minimal", "eval_full", "training_minimal", "training_full"])
def test_models_round_trip(name: str) -> None:
    # A loaded config survives a dump/validate round trip unchanged (what callers that cache or send
    # configs rely on).
    load = load_eval_config if name.startswith("eval") else load_training_config
    config = load(FIXTURES / f"{name}.toml")
    again = type(config).model_validate(config.model_dump())
    assert again == config
    assert again.request_body() == config.request_body()


def test_large_batches_keep_input_order(tmp_path: Path) -> None:
    # Enough files for the core to split the work across threads; each report must stay with its path.
    (tmp_path / "configs" / "training").mkdir(parents=True)
    paths = []
    for i in range(300):
        path = tmp_path / "configs" / "training" / f"c{i:03d}.toml"
        epochs = i % 7  # 0 is invalid
        path.write_text(TRAIN_MIN.replace("[training]\n", f"[training]\ntotal_epochs = {epochs}\n"))
        paths.append(path)
    reports = validate_files(paths)
    assert [r.path for r in reports] == [str(p) for p in paths]
    assert [r.ok for r in reports] == [i % 7 != 0 for i in range(300)]
    assert all(r.config.training.total_epochs == i % 7 for i, r in enumerate(reports) if r.config)
