"""`osmosis logout --all` (0.2.17): every stored login, on every platform, revoked and deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servers import PlatformServer

from .conftest import Run


def test_logout_all_revokes_every_platform_login(
    home: Path, platform: Any, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    platform.seed_token("tok-a", token_id="tid-a")
    assert osmosis("auth", "login", "--token", "tok-a", "--token-store", "file")[0] == 0
    with PlatformServer() as other:
        other.seed_token("tok-b", token_id="tid-b")
        monkeypatch.setenv("OSMOSIS_PLATFORM_URL", other.url)
        assert osmosis("login", "--token", "tok-b", "--token-store", "file")[0] == 0
        stored = json.loads((home / ".config/osmosis/credentials.json").read_text())["platforms"]
        assert set(stored) == {platform.url, other.url}
        code, _, err = osmosis("--json", "logout", "--all")
        error = json.loads(err.strip().splitlines()[-1])["error"]
        assert code == 1 and error["code"] == "INTERACTIVE_REQUIRED" and "--yes" in error["message"]
        code, out, err = osmosis("--json", "logout", "--all", "-y")
        assert code == 0, err
        result = json.loads(out)
        assert result["operation"] == "auth.logout" and result["status"] == "success"
        assert {p["platform_url"]: p["revoked"] for p in result["resource"]["platforms"]} == {
            platform.url: True,
            other.url: True,
        }
        assert other.state()["tokens"]["tok-b"]["revoked"] is True
    assert platform.state()["tokens"]["tok-a"]["revoked"] is True
    assert json.loads((home / ".config/osmosis/credentials.json").read_text())["platforms"] == {}
    code, out, _ = osmosis("--json", "auth", "logout", "--all", "-y")
    assert code == 0 and json.loads(out)["status"] == "noop"
