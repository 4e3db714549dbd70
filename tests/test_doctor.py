"""`osmosis doctor`: reports what a workspace lacks; `--fix` adds it without overwriting anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))


def osmosis(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [OSMOSIS, *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )


def test_doctor_reports_then_fixes_without_overwriting(tmp_path: Path) -> None:
    (tmp_path / "rollouts").mkdir()
    (tmp_path / "AGENTS.md").write_text("my own guide\n")
    first = osmosis(tmp_path, "doctor")
    assert first.returncode != 0
    assert "configs/eval/" in first.stderr and "CLAUDE.md" in first.stderr and "--fix" in first.stderr
    fixed = osmosis(tmp_path, "--json", "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stderr
    resource = json.loads(fixed.stdout)["resource"]
    assert resource["valid"] and resource["missing"] == []
    assert set(resource["fixed"]) == {
        "configs/training/",
        "configs/eval/",
        "data/",
        "CLAUDE.md",
        "configs/AGENTS.md",
    }
    assert (tmp_path / "data/.gitkeep").is_file()
    assert (tmp_path / "AGENTS.md").read_text() == "my own guide\n"
    assert osmosis(tmp_path, "doctor").returncode == 0


def test_doctor_reports_bad_configs_and_refuses_symlinks(tmp_path: Path) -> None:
    for folder in ("rollouts", "configs/eval", "configs/training", "data"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("AGENTS.md", "CLAUDE.md", "configs/AGENTS.md"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "configs/eval/bad.toml").write_text("[experiment]\nrollout = 1\n")
    bad = osmosis(tmp_path, "doctor")
    assert bad.returncode != 0 and "bad.toml" in bad.stderr
    other = tmp_path / "elsewhere"
    other.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "rollouts").mkdir()
    (ws / "configs").symlink_to(other)
    refused = osmosis(ws, "doctor", "--fix")
    assert refused.returncode != 0 and "symlink" in refused.stderr
    assert not (other / "eval").exists()


def test_a_workspace_osmosis_init_made_passes_doctor(tmp_path: Path) -> None:
    made = osmosis(tmp_path, "init", "ws")
    assert made.returncode == 0, made.stderr
    assert "created AGENTS.md" in made.stdout
    checked = osmosis(tmp_path / "ws", "doctor")
    assert checked.returncode == 0, checked.stderr


def test_doctor_json_prints_the_failed_result_and_the_error(tmp_path: Path) -> None:
    # 0.3.0's scripts read `resource.missing` from stdout; the newest reads the error envelope's details.
    result = osmosis(tmp_path, "--json", "doctor")
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["status"] == "failed" and payload["resource"]["valid"] is False
    assert "AGENTS.md" in payload["resource"]["missing"] and "data/" in payload["resource"]["missing"]
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "VALIDATION" and error["details"]["missing"] == payload["resource"]["missing"]
