"""`osmosis init`, `osmosis config validate`, and the `eval submit` / `train submit` pre-flight."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from osmosis_ai.cli.main import main

# The platform's classes, re-exported by a sibling module the entrypoint imports (its own import path).
BASES = "from osmosis_ai.rollout import AgentWorkflow, Grader, RolloutAgentLoop\n"

GOOD_MAIN = """
import os
from pathlib import Path

from platform_bases import AgentWorkflow, Grader

with open(os.environ["PROBE_MARKER"], "a") as marker:
    marker.write("imported\\n")
os.environ["PROBE_SIDE_EFFECT"] = "1"


class MyWorkflow(AgentWorkflow):
    async def run(self, ctx):
        return None


class MyGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0)
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A workspace made by `osmosis init` whose rollout uses local stand-ins for the platform classes."""
    root = tmp_path / "ws"
    assert run(capsys, "init", str(root), "--name", "demo")[0] == 0
    rollout = root / "rollouts" / "demo"
    (rollout / "platform_bases.py").write_text(BASES)
    (rollout / "main.py").write_text(GOOD_MAIN)
    monkeypatch.setenv("PROBE_MARKER", str(tmp_path / "marker"))
    monkeypatch.delenv("PROBE_SIDE_EFFECT", raising=False)
    monkeypatch.chdir(root)
    return root


def test_init_scaffold_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "fresh"
    code, out, _ = run(capsys, "init", str(root), "--name", "my-agent")
    assert code == 0
    for rel in (
        "rollouts/my-agent/main.py",
        "rollouts/my-agent/pyproject.toml",
        "configs/eval/my-agent.toml",
        "configs/training/my-agent.toml",
        "data/my-agent.jsonl",
    ):
        assert (root / rel).is_file(), rel
        assert f"created {rel}" in out
    rows = [json.loads(line) for line in (root / "data/my-agent.jsonl").read_text().splitlines()]
    assert len(rows) >= 4 and all({"user_prompt", "ground_truth"} <= set(row) for row in rows)
    configs = [str(root / "configs/eval/my-agent.toml"), str(root / "configs/training/my-agent.toml")]
    code, out, err = run(capsys, "config", "validate", *configs)
    assert code == 0, out + err
    assert out.count("ok: ") == 2
    # The scaffolded entrypoint really imports and exposes a RolloutAgentLoop: no check was skipped.
    assert "skipped the import check" not in err


def test_init_refuses_to_overwrite_and_bad_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "init", str(tmp_path), "--name", "demo")[0] == 0
    code, _, err = run(capsys, "init", str(tmp_path), "--name", "demo")
    assert code == 1
    assert "already exist" in err and "configs/eval/demo.toml" in err and "--force" in err
    assert run(capsys, "init", str(tmp_path), "--name", "demo", "--force")[0] == 0
    for name in ("Demo", "default", "1x", "a_b"):
        code, _, err = run(capsys, "init", str(tmp_path), "--name", name)
        assert code == 2 and "Error: Invalid value for --name: rollout name" in err, err


def test_validate_good_workspace_imports_entrypoint_in_a_child(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = set(sys.modules)
    code, out, err = run(capsys, "config", "validate", "configs/eval/demo.toml", "configs/training/demo.toml")
    assert code == 0, out + err
    assert "warning" not in err
    # The entrypoint ran once for both configs (in a child): its side effects never reach this process.
    assert (tmp_path / "marker").read_text() == "imported\n"
    assert "PROBE_SIDE_EFFECT" not in os.environ
    assert not {m for m in set(sys.modules) - before if "rollout" in m or m in ("main", "platform_bases")}


@pytest.mark.parametrize(
    ("main_py", "problem"),
    [
        ("import platform_bases\n\nraise RuntimeError('boom')\n", "failed: RuntimeError: boom (main.py:3)"),
        ("def broken(:\n", "failed: SyntaxError"),
        ("import sys\nsys.exit(3)\n", "failed: SystemExit: 3 (main.py:2)"),
    ],
)
def test_entrypoint_problems_point_at_the_entrypoint_line(
    workspace: Path, capsys: pytest.CaptureFixture[str], main_py: str, problem: str
) -> None:
    (workspace / "rollouts/demo/main.py").write_text(main_py)
    code, out, err = run(capsys, "config", "validate", "configs/eval/demo.toml")
    assert code == 1
    assert "configs/eval/demo.toml:4:14: experiment.entrypoint: importing rollouts/demo/main.py" in out, out
    assert problem in out, out
    assert err.rstrip().endswith("Error: 1 of 1 config file(s) are invalid")


@pytest.mark.parametrize(
    "main_py",
    ["from platform_bases import AgentWorkflow\nclass W(AgentWorkflow):\n    pass\n", "x = 1\n"],
    ids=["workflow-without-grader", "no-classes"],
)
def test_importing_is_the_whole_entrypoint_check(
    workspace: Path, capsys: pytest.CaptureFixture[str], main_py: str
) -> None:
    # As in 0.3's submit preflight: a backend validates itself when imported; no class scan.
    (workspace / "rollouts/demo/main.py").write_text(main_py)
    code, out, err = run(capsys, "config", "validate", "configs/eval/demo.toml")
    assert code == 0, out + err


def test_nested_entrypoint_with_relative_imports(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = workspace / "rollouts/demo/agent"
    agent.mkdir()
    (agent / "parts.py").write_text(
        "from platform_bases import AgentWorkflow, Grader\n\n"
        "class W(AgentWorkflow):\n    pass\n\n"
        "class G(Grader):\n    pass\n"
    )
    (agent / "run.py").write_text("from .parts import G, W\n")
    config = workspace / "configs/eval/demo.toml"
    config.write_text(config.read_text().replace('"main.py"', '"agent/run.py"'))
    code, out, err = run(capsys, "config", "validate", str(config))
    assert code == 0, out + err


def test_an_entrypoint_that_blocks_at_import_fails_at_the_deadline(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "rollouts/demo/main.py").write_text("import os\nwhile True:\n    pass\n")
    monkeypatch.setenv("OSMOSIS_IMPORT_TIMEOUT", "1")
    code, out, _ = run(capsys, "config", "validate", "configs/eval/demo.toml")
    assert code == 1
    assert "experiment.entrypoint: importing rollouts/demo/main.py failed: Importing " in out, out
    assert "did not finish within 1 s (stopped at " in out and "main.py:2: while True:" in out, out


def test_an_entrypoint_eval_run_could_not_run_is_a_warning(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "rollouts/demo/main.py").write_text("x = 1\n")
    code, _, err = run(capsys, "config", "validate", "configs/eval/demo.toml")
    assert code == 0
    assert (
        "rollouts/demo/main.py imports, but `osmosis eval run` could not run it (defines no AgentWorkflow"
        in err
    )


def test_unmet_rollout_dependencies_skip_the_import_with_a_warning(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = workspace / "rollouts/demo/pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "demo"\nversion = "0.1.0"\n'
        'dependencies = ["click>=1", "osmosis-nonexistent-dist-xyz>=1",'
        " \"skipped-on-other-os; sys_platform == 'x'\"]\n"
    )
    code, out, err = run(capsys, "config", "validate", "configs/eval/demo.toml")
    assert code == 0, out + err
    assert (
        "does not satisfy the rollout's dependencies (osmosis-nonexistent-dist-xyz is not installed)" in err
    )
    assert not (tmp_path / "marker").exists()  # the entrypoint was not imported


def test_legacy_rollout_agent_loop_is_accepted(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "rollouts/demo/main.py").write_text(
        "from platform_bases import RolloutAgentLoop\n\nclass Loop(RolloutAgentLoop):\n    pass\n"
    )
    assert run(capsys, "config", "validate", "configs/eval/demo.toml")[0] == 0


def test_missing_rollout_and_entrypoint(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = workspace / "configs/eval/demo.toml"
    config.write_text(config.read_text().replace('rollout = "demo"', 'rollout = "nope"'))
    code, out, _ = run(capsys, "config", "validate", str(config))
    assert code == 1
    assert f"{config}:3:11: experiment.rollout: rollout directory rollouts/nope/ does not exist" in out
    assert "(rollouts found: demo)" in out
    config.write_text(config.read_text().replace('"nope"', '"demo"').replace('"main.py"', '"agent.py"'))
    code, out, _ = run(capsys, "config", "validate", str(config))
    assert (
        f"{config}:4:14: experiment.entrypoint: entrypoint file rollouts/demo/agent.py does not exist" in out
    )


def test_validate_reports_every_file_and_exit_code_in_a_subprocess(workspace: Path) -> None:
    bad = workspace / "configs/training/bad.toml"
    bad.write_text(
        '[experiment]\nrollout = "demo"\nentrypoint = "main.py"\nmodel_path = "m"\n'
        "[sampling]\nrollout_top_p = 2\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "osmosis_ai.cli.main",
            "config",
            "validate",
            "configs/eval/demo.toml",
            str(bad),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "ok: configs/eval/demo.toml" in proc.stdout
    assert f"{bad}:1:1: experiment.dataset: missing required key 'dataset' in [experiment]" in proc.stdout
    assert (
        f"{bad}:6:17: sampling.rollout_top_p: must be greater than 0 and at most 1, got integer 2"
        in proc.stdout
    )
    assert "Traceback" not in proc.stderr
    assert "Error: 1 of 2 config file(s) are invalid" in proc.stderr


def test_validate_a_directory(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "configs/eval/broken.toml").write_text("[experiment\n")
    code, out, _ = run(capsys, "config", "validate", "--no-import", ".")
    assert code == 1
    assert "ok: configs/eval/demo.toml" in out and "ok: configs/training/demo.toml" in out
    assert "configs/eval/broken.toml:1:12: invalid TOML" in out
    # rollouts/demo/pyproject.toml is not a config: it is not picked up.
    assert "pyproject" not in out
    code, _, err = run(capsys, "config", "validate", "data")
    assert code == 1 and "no config files under it" in err


def test_validate_a_file_outside_a_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stray = tmp_path / "stray.toml"
    stray.write_text(
        '[experiment]\nrollout = "r"\nentrypoint = "main.py"\nmodel_path = "m"\ndataset = "d"\n[training]\n'
    )
    code, out, err = run(capsys, "config", "validate", str(stray))
    assert code == 1 and "cannot tell whether this is an eval or a training config" in out
    code, out, err = run(capsys, "config", "validate", "--kind", "training", str(stray))
    assert code == 0, out + err
    assert "not under configs/training/ of a workspace; skipped the rollout checks" in err


def test_validate_json_output(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "config", "validate", "--json", "configs/eval/demo.toml", "configs/eval/missing.toml"
    )
    assert code == 1
    report = json.loads(out)
    assert report["valid"] is False
    assert [f["valid"] for f in report["files"]] == [True, False]
    assert "cannot read the file" in report["files"][1]["problems"][0]
    assert report["files"][1]["issues"][0]["line"] == 0
    config = workspace / "configs/eval/demo.toml"
    config.write_text(config.read_text().replace("n = 1", "nn = 1"))
    code, out, _ = run(capsys, "config", "validate", "--json", str(config))
    issue = json.loads(out)["files"][0]["issues"][0]
    assert issue == {
        "path": str(config),
        "line": 10,
        "column": 1,
        "key": "evaluation.nn",
        "message": "Unrecognized key",
        "suggestion": "n",
    }


def test_submit_dry_run_prints_the_request_without_secret_values(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = workspace / "configs/eval/demo.toml"
    config.write_text(
        config.read_text().replace('["OPENAI_API_KEY"]', '["OPENAI_API_KEY", "HF_TOKEN", "OTHER"]')
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-value-123")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("OTHER", raising=False)
    secrets_file = tmp_path / "secrets.env"
    secrets_file.write_text("# per-run values\nexport HF_TOKEN='hf-file-value-456'\n")
    code, out, err = run(
        capsys, "eval", "submit", "configs/eval/demo.toml", "--dry-run", "--secrets-file", str(secrets_file)
    )
    assert code == 0, err
    assert "sk-env-value-123" not in out + err and "hf-file-value-456" not in out + err
    result = json.loads(out)
    request = result["request"]
    assert request["method"] == "POST" and request["path"] == "/api/cli/eval-runs"
    body = request["json"]
    assert body["experiment_config"] == {
        "rollout": "demo",
        "entrypoint": "main.py",
        "model_path": "openai/gpt-5-mini",
        "dataset": "demo",
    }
    assert body["evaluation_config"]["agent_workflow_timeout_s"] == 450
    assert body["secrets"] == {
        "required": ["OPENAI_API_KEY", "HF_TOKEN", "OTHER"],
        "provided": {"OPENAI_API_KEY": "[REDACTED]", "HF_TOKEN": "[REDACTED]"},
    }
    assert result["secrets"]["OTHER"].startswith("stored platform secret")
    assert request["headers"]["X-Osmosis-CLI-Version"]


def test_submit_without_dry_run_needs_a_git_workspace(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The submission itself is tested against the platform stand-in in tests/platform/test_runs.py.
    code, out, err = run(capsys, "train", "submit", "configs/training/demo.toml")
    assert code == 1 and out == ""
    assert "is not inside a Git repository" in err


def test_submit_checks_location_contents_and_secrets_file(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "train", "submit", "configs/eval/demo.toml", "--dry-run")
    assert code == 1 and "`osmosis train submit` config must live under configs/training/" in err
    assert "Expected under:" in err
    config = workspace / "configs/eval/demo.toml"
    config.write_text(config.read_text().replace("n = 1", "n = 0"))
    code, _, err = run(capsys, "eval", "submit", "configs/eval/demo.toml", "--dry-run")
    assert code == 1 and "evaluation.n: must be a positive integer" in err
    config.write_text(config.read_text().replace("n = 0", "n = 1"))
    secrets_file = tmp_path / "bad.env"
    secrets_file.write_text("GOOD=1\nthis line holds sk-secret-789 without equals\n")
    code, out, err = run(
        capsys, "eval", "submit", str(config), "--dry-run", "--secrets-file", str(secrets_file)
    )
    assert code == 1
    assert f"{secrets_file}:2: expected NAME=value" in err
    assert "sk-secret-789" not in out + err


def test_submit_resolves_relative_paths_from_a_subdirectory(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(workspace / "data")
    code, out, err = run(capsys, "train", "submit", "configs/training/demo.toml", "--dry-run")
    assert code == 0, err
    body = json.loads(out)["request"]["json"]
    assert body["sampling_config"] == {"rollout_temperature": 1.0, "rollout_top_p": 1.0}
    assert "secrets" not in body


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_submit_git_identity_and_unknown_commit(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, env=env)
    subprocess.run(
        ["git", "remote", "add", "origin", "git@github.com:Acme/Agents.git"],
        cwd=workspace,
        check=True,
        env=env,
    )
    config = workspace / "configs/eval/demo.toml"
    config.write_text(
        config.read_text().replace('dataset = "demo"', 'dataset = "demo"\ncommit_sha = "abcdef1"')
    )
    code, out, err = run(capsys, "eval", "submit", "configs/eval/demo.toml", "--dry-run")
    assert code == 0, err
    assert json.loads(out)["request"]["headers"]["X-Osmosis-Git"] == "acme/agents"
    assert "commit abcdef1 is not in the local repository" in err


def test_help_stays_light() -> None:
    code = (
        "import sys\nfrom osmosis_ai.cli.main import main\nmain(['--help'])\n"
        "heavy = {'pydantic', 'osmosis_ai.config', 'osmosis_ai.workspace_layout'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    for name in ("config", "init", "train"):
        assert f"  {name} " in proc.stdout


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the partial read of an invalid file needs tomllib")
def test_an_invalid_value_does_not_hide_a_missing_rollout_directory(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = workspace / "configs/eval/demo.toml"
    config.write_text(
        config.read_text().replace("n = 1", "n = 0").replace('rollout = "demo"', 'rollout = "gone"')
    )
    code, out, _ = run(capsys, "config", "validate", "--json", str(config))
    assert code == 1
    (report,) = json.loads(out)["files"]
    assert any("evaluation.n: must be a positive integer" in p for p in report["problems"])
    assert any("rollout directory rollouts/gone/ does not exist" in p for p in report["problems"])
    assert json.loads(out)["schema_version"] == 1
