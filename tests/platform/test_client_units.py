"""The platform layer's pieces: URL rules, repository identity, error mapping, redaction, the client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from osmosis_ai.llm.retry import RetryPolicy
from osmosis_ai.platform.client import PlatformClient
from osmosis_ai.platform.errors import PlatformError
from osmosis_ai.platform.responses import error_from_response
from osmosis_ai.platform.secrets import redact
from osmosis_ai.platform.settings import load_env_file, normalize_platform_url, resolve_settings
from osmosis_ai.platform.workspace import normalize_git_identity

from .conftest import Run


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" https://Platform.Osmosis.AI/ ", "https://platform.osmosis.ai"),
        ("https://example.com:443/base/", "https://example.com/base"),
        ("http://127.0.0.1:80", "http://127.0.0.1"),
        ("localhost:8080", "http://localhost:8080"),
        ("example.com", "https://example.com"),
        ("http://[::1]:9000", "http://[::1]:9000"),
    ],
)
def test_platform_url_normalisation(raw: str, expected: str) -> None:
    assert normalize_platform_url(raw) == expected


@pytest.mark.parametrize("raw", ["ftp://x", "https://", "https://user@host", "https://h/p?q=1"])
def test_invalid_platform_urls(raw: str) -> None:
    with pytest.raises(PlatformError, match="Invalid platform URL"):
        normalize_platform_url(raw)


def test_plain_http_is_refused_off_loopback_unless_opted_in() -> None:
    with pytest.raises(PlatformError, match="Refusing the plain-HTTP platform URL") as info:
        resolve_settings("http://platform.example.com", {})
    assert info.value.code == "VALIDATION"
    settings = resolve_settings(
        None, {"OSMOSIS_PLATFORM_URL": "http://x.example", "OSMOSIS_ALLOW_INSECURE_PLATFORM_URL": "1"}
    )
    assert settings.url == "http://x.example" and settings.warnings[0][0] == "INSECURE_PLATFORM_URL"
    assert resolve_settings("http://127.0.0.1:5000", {}).url == "http://127.0.0.1:5000"
    assert resolve_settings(None, {"OSMOSIS_PLATFORM_URL": ""}).source == "default"


def test_a_refused_plain_http_url_is_warned_about_first(tmp_path: Path) -> None:
    # The established CLI prints the INSECURE_PLATFORM_URL warning, then the VALIDATION error.
    import json
    import subprocess
    import sys

    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "OSMOSIS_PLATFORM_URL": "http://platform.example.com",
    }
    osmosis = str(Path(sys.executable).with_name("osmosis"))
    result = subprocess.run(
        [osmosis, "--json", "eval", "list"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and result.stdout == ""
    warning, error = (json.loads(line) for line in result.stderr.splitlines())
    assert (
        warning["warning"]["code"] == "INSECURE_PLATFORM_URL" and "not HTTPS" in warning["warning"]["message"]
    )
    assert error["error"]["code"] == "VALIDATION"


def test_env_file_fills_gaps_and_refuses_a_different_auth_profile(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("OSMOSIS_PLATFORM_URL=https://staging.example.com/\nOTHER=1\n")
    environ: dict[str, str] = {"OSMOSIS_PLATFORM_URL": "https://STAGING.example.com"}
    assert load_env_file(env_file, environ) == env_file
    assert environ["OTHER"] == "1"  # same platform after normalisation: fine
    environ = {"OSMOSIS_PLATFORM_URL": "https://prod.example.com"}
    with pytest.raises(PlatformError, match="different value") as info:
        load_env_file(env_file, environ)
    assert info.value.code == "CONFLICT"
    with pytest.raises(PlatformError, match="no such file"):
        load_env_file(tmp_path / "missing.env", {})


@pytest.mark.parametrize(
    ("remote", "identity"),
    [
        ("git@github.com:Acme/Agents.git", "acme/agents"),
        ("https://github.com/acme/agents", "acme/agents"),
        ("https://token@github.com/acme/agents.git/", "acme/agents"),
        ("ssh://git@github.com/acme/my.repo.git", "acme/my.repo"),
    ],
)
def test_git_identity(remote: str, identity: str) -> None:
    result = normalize_git_identity(remote)
    assert result.identity == identity and "token" not in result.remote_url


@pytest.mark.parametrize(
    ("remote", "why"),
    [
        ("git@gitlab.com:acme/agents.git", "GitHub repositories only"),
        ("https://github.com/acme", "exactly one repository"),
        ("https://github.com/acme/a/b", "exactly one repository"),
        ("https://github.com/acme%2Fx/agents", "encoded separators"),
        ("https://github.com/acme/ag ents", "whitespace"),
    ],
)
def test_bad_git_remotes(remote: str, why: str) -> None:
    with pytest.raises(PlatformError, match=why):
        normalize_git_identity(remote)


def test_error_mapping() -> None:
    error = error_from_response(401, {"code": "TOKEN_REVOKED"}, "", env_token=True)
    assert error.code == "AUTH_REQUIRED" and "revoked" in str(error) and "OSMOSIS_TOKEN" in str(error)
    error = error_from_response(502, None, "<html>" + "x" * 500, env_token=False)
    assert error.code == "PLATFORM_ERROR" and "HTTP 502" in str(error) and len(str(error)) < 300
    error = error_from_response(403, {"error": "Your subscription has lapsed"}, "", env_token=False)
    assert error.code == "SUBSCRIPTION_REQUIRED"
    error = error_from_response(
        422, {"error": "Bad config.", "issues": [{"key": "a", "message": "m"}]}, "", env_token=False
    )
    assert str(error) == "Bad config:\n  - a: m" and error.details["status_code"] == 422


def test_redaction_scrubs_messages_details_and_value_keys() -> None:
    error = PlatformError(
        "value sk-abc is bad", details={"echo": ["sk-abc!"], "value": "other", "nested": {"secret": "x"}}
    )
    clean = redact(error, ["sk-abc"])
    assert str(clean) == "value [REDACTED] is bad"
    assert clean.details == {
        "echo": ["[REDACTED]!"],
        "value": "[REDACTED]",
        "nested": {"secret": "[REDACTED]"},
    }
    assert error.details["echo"] == ["sk-abc!"]  # the original is untouched


def test_client_headers_retries_and_slow_responses(platform: Any) -> None:
    platform.seed_token("t-1")
    waits: list[float] = []
    client = PlatformClient(
        platform.url,
        token="t-1",
        git_identity="acme/agents",
        timeout=0.5,
        retry=RetryPolicy(max_retries=1, base_delay=0.01),
        sleep=waits.append,
    )
    with client:
        assert client.get("/api/cli/eval-runs")["eval_runs"] == []
        headers = platform.requests("/api/cli/eval-runs")[0]["headers"]
        assert headers["user-agent"].startswith("osmosis-cli/") and headers["x-osmosis-cli-version"]
        assert headers["x-osmosis-git"] == "acme/agents" and headers["authorization"] == "Bearer t-1"

        platform.fail("/api/cli/eval-runs", method="GET", delay=2, times=2)
        with pytest.raises(PlatformError, match="timed out"):
            client.get("/api/cli/eval-runs")
        assert len(waits) == 1  # one retry, then give up

        platform.fail("/api/cli/eval-runs", 500, method="POST")
        with pytest.raises(PlatformError) as info:
            client.post("/api/cli/eval-runs", {"experiment_config": {}})
        assert info.value.status_code == 500 and len(waits) == 1  # a POST is not retried


def test_version_notice_is_a_warning_envelope(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    import osmosis_ai.platform.client as client_module

    client_module._SEEN_VERSION_NOTICES.clear()
    platform.update(version_status="upgrade_available")
    code, out, err = osmosis("--json", "eval", "list")
    assert code == 0, err
    warning = json.loads(err.strip().splitlines()[-1])
    assert (
        set(warning) == {"schema_version", "cli_version", "warning"}
        and warning["warning"]["code"] == "UPGRADE_AVAILABLE"
    )
    assert json.loads(out)["schema_version"] == 1


def test_root_options_anywhere_and_exit_codes(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    for args in (["--json", "eval", "list"], ["eval", "list", "--json"], ["eval", "--json", "list"]):
        code, out, err = osmosis(*args)
        assert code == 0 and json.loads(out)["items"] == [], (args, err)
    code, _, err = osmosis("eval", "list", "--json", "--plain")
    assert code == 2 and json.loads(err)["error"]["code"] == "VALIDATION"
    code, _, err = osmosis("--json", "eval", "list", "--bogus")
    assert code == 2 and json.loads(err)["error"]["code"] == "VALIDATION"
    code, _, err = osmosis("--platform", "http://platform.example.com", "eval", "list")
    assert code == 1 and "not HTTPS" in err
    code, _, err = osmosis("--env-file", str(workspace / "missing.env"), "eval", "list")
    assert code == 1 and "no such file" in err
    (workspace / "other.env").write_text("OSMOSIS_PLATFORM_URL=https://elsewhere.example.com\n")
    code, _, err = osmosis("--json", "--env-file", str(workspace / "other.env"), "eval", "list")
    assert code == 1 and json.loads(err)["error"]["code"] == "CONFLICT"
    # `dataset validate --json` keeps its own report shape (not wrapped in an envelope; it carries the
    # schema_version every JSON output has).
    data = workspace / "data" / "demo.jsonl"
    code, out, _ = osmosis("dataset", "validate", str(data), "--json")
    report = json.loads(out)
    assert "data" not in report and report["ok"] is True and report["rows"] >= 1
    assert report["schema_version"] == 1


def test_help_does_not_import_the_platform_stack() -> None:
    code = (
        "import sys\nfrom osmosis_ai.cli.main import main\n"
        "for args in (['--help'], ['eval', 'list', '--help'], ['auth', '--help']):\n"
        "    main(args)\n"
        "heavy = {'httpx', 'keyring', 'osmosis_ai.platform.client'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_downloads_refuse_a_redirect_to_plain_http(platform: Any, tmp_path: Path) -> None:
    from osmosis_ai.platform.transfer import DownloadItem, check_presigned_url, download_all

    with pytest.raises(PlatformError, match="not HTTPS"):
        check_presigned_url("http://bucket.example.com/file")
    platform.update(blobs={"a/file": "data"})
    platform.fail(
        "/_storage/a/file", 302, method="GET", headers={"Location": "http://bucket.example.com/file"}
    )
    report = download_all([DownloadItem("file", f"{platform.url}/_storage/a/file", 4)], tmp_path)
    assert "not HTTPS" in report.failed["file"] and not (tmp_path / "file").exists()
    report = download_all([DownloadItem("file", f"{platform.url}/_storage/a/file", 4)], tmp_path)
    assert report.downloaded == ["file"] and (tmp_path / "file").read_text() == "data"


def test_transfers_retry_transient_storage_failures_then_give_up_with_the_count(
    platform: Any, tmp_path: Path
) -> None:
    from osmosis_ai.platform.transfer import DownloadItem, download_all, put_bytes

    waits: list[float] = []
    policy = RetryPolicy(max_retries=2, base_delay=0.01)
    platform.update(blobs={"a/file": "data"})
    platform.fail("/_storage/a/file", 503, method="GET", times=2, headers={"Retry-After": "0"})
    report = download_all(
        [DownloadItem("file", f"{platform.url}/_storage/a/file", 4)],
        tmp_path,
        policy=policy,
        sleep=waits.append,
    )
    assert report.downloaded == ["file"] and waits == [0.0, 0.0]  # Retry-After wins over the backoff

    platform.fail("/_storage/up/part", 502, method="PUT", times=3)
    with httpx.Client() as http, pytest.raises(PlatformError, match=r"HTTP 502 \(after 3 attempts\)"):
        put_bytes(http, f"{platform.url}/_storage/up/part", b"x", policy=policy, sleep=waits.append)
    platform.fail("/_storage/up/part", 403, method="PUT", times=3)
    waits.clear()
    with httpx.Client() as http, pytest.raises(PlatformError, match=r"HTTP 403$"):
        put_bytes(http, f"{platform.url}/_storage/up/part", b"x", policy=policy, sleep=waits.append)
    assert waits == []  # a refused signature is final
