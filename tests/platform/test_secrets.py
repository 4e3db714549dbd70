"""`osmosis secret set|list|delete`: the value reaches the platform and nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run

VALUE = "sk-live-value-that-must-not-leak-8f3a"


def all_text_under(directory: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in directory.rglob("*") if p.is_file() and ".git" not in p.parts
    )


def test_secret_value_goes_to_the_platform_only(
    workspace: Path, home: Path, platform: Any, logged_in: str, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY_SOURCE", VALUE)
    outputs = []
    for mode in ((), ("--json",), ("--plain",)):
        code, out, err = osmosis(*mode, "secret", "set", "OPENAI_API_KEY", "--env", "MY_KEY_SOURCE")
        assert code == 0, err
        outputs.append(out + err)
    assert json.loads(outputs[1].strip().splitlines()[0])["operation"] == "secret.set"
    code, out, err = osmosis("secret", "list", "--json")
    assert code == 0, err
    listing = json.loads(out)
    assert [(s["name"], s["scope"]) for s in listing["items"]] == [("OPENAI_API_KEY", "personal")]
    assert "value" not in listing["items"][0]
    outputs.append(out + err)
    code, out, err = osmosis("secret", "list")
    outputs.append(out + err)
    assert "OPENAI_API_KEY" in out

    # The platform echoes a rejected value in its error; the CLI scrubs it, in text and JSON details.
    monkeypatch.setenv("BAD_SOURCE", "trigger-422")
    for mode in ((), ("--json",)):
        code, out, err = osmosis(*mode, "secret", "set", "OTHER_KEY", "--env", "BAD_SOURCE")
        assert code == 1
        assert "trigger-422" not in out + err and "[REDACTED]" in err

    for text in outputs:
        assert VALUE not in text
    assert VALUE not in all_text_under(home)  # config dir, credentials, workspace: nowhere
    sent = [r for r in platform.requests("/api/cli/environment-secrets") if r["method"] == "POST"]
    assert sent[0]["body"] == {"name": "OPENAI_API_KEY", "value": VALUE, "scope": "user"}
    stored = platform.state()["secrets"]
    assert stored[0]["value"] == VALUE


def test_secret_set_needs_a_value_source_before_any_network_call(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = len(platform.requests())
    code, _, err = osmosis("--json", "secret", "set", "OPENAI_API_KEY")
    assert code == 1
    error = json.loads(err)["error"]
    assert error["code"] == "INTERACTIVE_REQUIRED" and error["details"]["flags"] == ["--env"]
    monkeypatch.delenv("UNSET_VAR", raising=False)
    code, _, err = osmosis("secret", "set", "OPENAI_API_KEY", "--env", "UNSET_VAR")
    assert code == 1 and "UNSET_VAR is not set" in err
    code, _, err = osmosis("secret", "set", "lower_case", "--env", "HOME")
    assert code == 1 and "Invalid secret name" in err
    assert len(platform.requests()) == before


def test_secret_delete_checks_the_scope(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    platform.update(
        secrets=[
            {"id": "s1", "name": "SHARED_KEY", "scope": "workspace", "value": "v1"},
            {"id": "s2", "name": "MINE", "scope": "user", "value": "v2"},
        ]
    )
    code, _, err = osmosis("--json", "secret", "delete", "SHARED_KEY", "-y")
    error = json.loads(err)["error"]
    assert code == 1 and error["code"] == "NOT_FOUND" and "--scope workspace" in error["message"]
    assert not [r for r in platform.requests("/api/cli/environment-secrets") if r["method"] == "DELETE"]
    code, _, err = osmosis("secret", "delete", "SHARED_KEY", "--scope", "workspace", "-y")
    assert code == 0, err
    code, _, err = osmosis("secret", "delete", "MINE")
    assert code == 1 and "--yes" in err
    assert [s["name"] for s in platform.state()["secrets"]] == ["MINE"]
