"""`osmosis auth login|logout|whoami` against the platform stand-in: device flow, tokens, storage."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.platform.auth import DeviceCode, poll_device_token
from osmosis_ai.platform.client import PlatformClient
from osmosis_ai.platform.errors import PlatformError

from .conftest import Run


def credentials_file(home: Path) -> Path:
    return home / ".config" / "osmosis" / "credentials.json"


def test_device_flow_login_stores_the_token_in_a_0600_file_without_keyring(
    home: Path, platform: Any, osmosis: Run
) -> None:
    code, out, err = osmosis("auth", "login")
    assert code == 0, err
    assert "WXYZ-1234" in out and f"{platform.url}/device" in out
    assert "Logged in to" in out and "ada@example.com" in out
    # No keyring backend: said once, as a warning naming the file.
    assert err.count("No usable keyring backend") == 1
    path = credentials_file(home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    entry = data["platforms"][platform.url]
    assert data["version"] == 2 and entry["token_store"] == "file"
    token = entry["access_token"]
    assert token.startswith("osm_") and token not in out + err
    polls = platform.requests("/api/cli/device/token")
    assert len(polls) == 2  # one authorization_pending, then the token
    authorize = platform.requests("/api/cli/device/authorize")[0]
    assert "authorization" not in authorize["headers"] and authorize["body"]["deviceName"]
    assert authorize["headers"]["x-osmosis-cli-version"]

    code, out, err = osmosis("whoami")  # the 0.2 spelling
    assert code == 0, err
    assert "ada@example.com" in out and "stored (file)" in out
    assert platform.requests("/api/cli/verify")[-1]["headers"]["authorization"] == f"Bearer {token}"


def test_device_flow_slow_down_adds_five_seconds_and_denial_fails(platform: Any) -> None:
    platform.update(
        device={"pending_polls": 1, "slow_down_polls": 1, "deny": False, "approved": False, "codes": {}}
    )
    waits: list[float] = []
    with PlatformClient(platform.url) as client:
        code = DeviceCode(
            device_code=client.post(
                "/api/cli/device/authorize", {"deviceName": "t"}, scoped=False, auth=False
            )["device_code"],
            user_code="x",
            verification_uri="u",
            expires_in=600,
            interval=2,
        )
        grant = poll_device_token(client, code, sleep=waits.append)
    assert waits == [7, 7]  # slow_down: 2 + 5; then authorization_pending keeps the new interval
    assert grant.user["email"] == "ada@example.com" and grant.token_id

    platform.update(
        device={"pending_polls": 0, "slow_down_polls": 0, "deny": True, "approved": False, "codes": {}}
    )
    with PlatformClient(platform.url) as client:
        raw = client.post("/api/cli/device/authorize", {"deviceName": "t"}, scoped=False, auth=False)
        denied = DeviceCode(raw["device_code"], "x", "u", 600, 0)
        with pytest.raises(PlatformError, match="refused in the browser") as info:
            poll_device_token(client, denied, sleep=waits.append)
    assert info.value.code == "AUTH_REQUIRED"


def test_device_flow_gives_up_at_the_deadline(platform: Any) -> None:
    platform.update(
        device={"pending_polls": 99, "slow_down_polls": 0, "deny": False, "approved": False, "codes": {}}
    )
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with PlatformClient(platform.url) as client:
        raw = client.post("/api/cli/device/authorize", {"deviceName": "t"}, scoped=False, auth=False)
        with pytest.raises(PlatformError, match="Timed out"):
            poll_device_token(
                client, DeviceCode(raw["device_code"], "x", "u", 20, 5), sleep=sleep, clock=lambda: now[0]
            )
    assert now[0] == 20  # polls at 0, 5, ..., 20; the next would pass the 20 s deadline


def test_device_flow_is_refused_in_json_mode(home: Path, osmosis: Run) -> None:
    code, out, err = osmosis("--json", "auth", "login")
    assert code == 1 and out == ""
    envelope = json.loads(err.strip().splitlines()[-1])
    assert envelope["error"]["code"] == "INTERACTIVE_REQUIRED"
    assert envelope["command"] == "auth login"


def test_token_login_with_a_keyring_backend_keeps_the_token_out_of_the_file(
    home: Path, platform: Any, osmosis: Run
) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    class MemoryKeyring(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            self.store: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.store.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.store[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.store.pop((service, username), None)

    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    platform.seed_token("tok-A-secret", token_id="tok-A")
    platform.seed_token("tok-B-secret", token_id="tok-B")
    code, out, err = osmosis("--json", "auth", "login", "--token", "tok-A-secret")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "success" and result["operation"] == "auth.login"
    assert result["resource"]["token_store"] == "keyring" and result["resource"]["source"] == "token"
    text = credentials_file(home).read_text()
    assert "tok-A-secret" not in text and list(backend.store.values()) == ["tok-A-secret"]

    # A second login replaces the first and revokes its token on the platform.
    code, out, err = osmosis("auth", "login", "--token", "tok-B-secret")
    assert code == 0, err
    assert list(backend.store.values()) == ["tok-B-secret"]
    assert platform.state()["tokens"]["tok-A-secret"].get("revoked") is True

    code, out, err = osmosis("--json", "auth", "logout", "--yes")
    assert code == 0, err
    assert json.loads(out)["resource"]["revoked"] is True
    assert backend.store == {} and platform.state()["tokens"]["tok-B-secret"].get("revoked") is True
    code, out, err = osmosis("--json", "auth", "logout", "-y")
    assert code == 0 and json.loads(out)["status"] == "noop"


def test_explicit_keyring_store_without_a_backend_fails_clearly(
    home: Path, platform: Any, osmosis: Run
) -> None:
    platform.seed_token("tok-x", token_id="t")
    code, _out, err = osmosis("auth", "login", "--token", "tok-x", "--token-store", "keyring")
    assert code == 1 and "No usable keyring backend" in err and "--token-store file" in err
    assert not credentials_file(home).exists()


def test_osmosis_token_is_verified_not_stored_and_bound_to_its_platform(
    home: Path, platform: Any, osmosis: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    platform.seed_token("env-token-secret")
    monkeypatch.setenv("OSMOSIS_TOKEN", "env-token-secret")
    code, out, err = osmosis("auth", "login")
    assert code == 1 and "OSMOSIS_TOKEN_PLATFORM_URL" in err  # not the default platform: refuse to send it
    monkeypatch.setenv("OSMOSIS_TOKEN_PLATFORM_URL", platform.url + "/")
    code, out, err = osmosis("--json", "auth", "login")
    assert code == 0, err
    assert json.loads(out)["resource"]["saved"] is False
    assert not credentials_file(home).exists()
    code, out, err = osmosis("whoami", "--json")
    assert code == 0, err
    assert json.loads(out)["data"]["source"] == "environment"
    assert "env-token-secret" not in out + err


def test_not_logged_in_expired_and_rejected_logins(home: Path, platform: Any, osmosis: Run) -> None:
    code, _, err = osmosis("--json", "auth", "whoami")
    assert code == 1
    assert json.loads(err)["error"]["code"] == "AUTH_REQUIRED" and "osmosis auth login" in err

    platform.seed_token("tok-1", token_id="t1")
    assert osmosis("auth", "login", "--token", "tok-1", "--token-store", "file")[0] == 0
    platform.update(tokens={})  # the platform forgets the token: 401
    code, _out, err = osmosis("auth", "whoami")
    assert code == 1 and "Run `osmosis auth login`" in err
    # A 401 never deletes the stored login.
    assert platform.url in json.loads(credentials_file(home).read_text())["platforms"]


def test_corrupt_credentials_fail_closed_and_login_moves_them_aside(
    home: Path, platform: Any, osmosis: Run
) -> None:
    path = credentials_file(home)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    code, _, err = osmosis("whoami")
    assert code == 1 and "corrupt" in err and str(path) in err
    platform.seed_token("tok-2", token_id="t2")
    code, _out, err = osmosis("auth", "login", "--token", "tok-2", "--token-store", "file")
    assert code == 0, err
    assert path.with_name("credentials.json.bak").read_text() == "{not json"
    assert json.loads(path.read_text())["version"] == 2
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


@pytest.mark.parametrize("mode", [(), ("--json",), ("--debug",)])
def test_an_error_text_from_the_platform_never_shows_the_token(
    logged_in: str, platform: Any, osmosis: Run, monkeypatch: pytest.MonkeyPatch, mode: tuple[str, ...]
) -> None:
    monkeypatch.setenv("OSMOSIS_DEBUG", "")  # restored after the test: --debug sets it for the process
    platform.fail("/api/cli/verify", 403, body={"error": f"token {logged_in} rejected"}, times=5)
    code, out, err = osmosis(*mode, "auth", "whoami")
    assert code == 1
    assert logged_in not in out + err
    assert "token *** rejected" in out + err
