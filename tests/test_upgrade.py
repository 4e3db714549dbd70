"""`osmosis upgrade` against a package index stand-in on 127.0.0.1 (never PyPI)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from osmosis_ai._version import __version__
from osmosis_ai.cli.main import main
from osmosis_ai.upgrade import install_method, upgrade_command
from servers import PackageIndex


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[PackageIndex, Path]]:
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"info": {"version": "0.0.1"}}))
    with PackageIndex(answer) as server:
        monkeypatch.setenv("OSMOSIS_PACKAGE_INDEX_URL", server.url)
        yield server, answer


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_older_release_on_the_index_is_already_up_to_date(
    index: tuple[PackageIndex, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "upgrade", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["operation"] == "upgrade" and result["status"] == "no_update"
    assert (
        result["resource"]["installed_version"] == __version__
        and result["resource"]["latest_version"] == "0.0.1"
    )


def test_a_source_build_is_never_replaced_by_the_index_release(
    index: tuple[PackageIndex, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    answer = index[1]
    answer.write_text(json.dumps({"info": {"version": "99.0.0"}}))
    code, out, err = _run(capsys, "upgrade", "--check", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "update_available" and result["resource"]["method"] == "source"
    assert "make -C" in result["next_steps_structured"][0]["command"]
    code, out, err = _run(capsys, "upgrade")  # this suite runs on the checkout's own build (make build)
    assert code == 1 and out == ""
    assert "built from the source checkout" in err and "git -C" in err and "pull" in err


@pytest.mark.parametrize(
    "answer,why",
    [
        ("not json", "no valid version"),
        ('{"info": {}}', "no valid version"),
        ('{"info": {"version": "x.y!"}}', "no valid version"),
    ],
)
def test_a_bad_index_answer_is_an_error(
    index: tuple[PackageIndex, Path], capsys: pytest.CaptureFixture[str], answer: str, why: str
) -> None:
    index[1].write_text(answer)
    code, _, err = _run(capsys, "--json", "upgrade")
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["code"] == "PLATFORM_ERROR" and why in error["message"]


def test_an_unreachable_index_says_which(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OSMOSIS_PACKAGE_INDEX_URL", "http://127.0.0.1:9/pypi")
    code, _, err = _run(capsys, "upgrade")
    assert code == 1 and "Could not reach the package index at http://127.0.0.1:9/pypi" in err


def test_the_command_follows_how_the_copy_was_installed() -> None:
    assert install_method({"url": "file:///src/o%20s", "dir_info": {"editable": True}}, "/v") == (
        "source",
        "/src/o s",
    )
    assert install_method(None, "/home/a/.local/pipx/venvs/osmosis-ai")[0] == "pipx"
    assert (
        install_method({"url": "https://files.example/osmosis_ai.whl", "archive_info": {}}, "/v")[0] == "pip"
    )
    assert upgrade_command("source", "1.0") is None
    assert upgrade_command("uv_tool", "1.0") == ["uv", "tool", "install", "--force", "osmosis-ai==1.0"]
    assert upgrade_command("pip", "1.0", installer="pip") == [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--upgrade",
        "osmosis-ai==1.0",
    ]
