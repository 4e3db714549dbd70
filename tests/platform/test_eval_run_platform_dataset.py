"""`osmosis eval run` without --dataset-file: the platform dataset, downloaded once, then from the cache."""

from __future__ import annotations

import contextlib
import json
import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.eval_run_workspace import MAIN, calc_rows

Run = Any


def _calc_workspace(workspace: Path, dataset: str) -> None:
    """The calc rollout with an eval config naming the platform dataset ``dataset`` and no secrets."""
    (workspace / "rollouts/calc").mkdir(parents=True)
    (workspace / "rollouts/calc/main.py").write_text(MAIN)
    text = (workspace / "configs/eval/demo.toml").read_text()
    text = text.replace('rollout = "demo"', 'rollout = "calc"').replace(
        'dataset = "demo"', f'dataset = "{dataset}"'
    )
    (workspace / "configs/eval/calc.toml").write_text(
        text.replace('required = ["OPENAI_API_KEY"]', "required = []")
    )


def _run_args(base_url: str) -> tuple[str, ...]:
    """``eval run`` of the calc config, run ``p``, without a --dataset-file (so the platform's dataset)."""
    return ("eval", "run", "configs/eval/calc.toml", "--name", "p", "-y", "--base-url", base_url)


def test_platform_dataset_needs_login_then_is_cached(
    workspace: Path, platform: Any, osmosis: Run, home: Path, scripted: Any
) -> None:
    _calc_workspace(workspace, "calc-rows")
    server = scripted({"default": {"content": "4"}})
    args = ("--json", *_run_args(server.base_url))
    code, _, err = osmosis(*args)
    assert code != 0 and "auth login" in err  # a platform dataset needs a login; a local file does not
    platform.seed_token("tok-x", token_id="tok-1")
    assert osmosis("auth", "login", "--token", "tok-x", "--token-store", "file")[0] == 0
    content = "".join(json.dumps(row) + "\n" for row in calc_rows(4))
    record = {"id": "ds-7", "file_name": "calc-rows", "file_format": "jsonl", "file_size": len(content),
              "status": "uploaded", "updated_at": "2026-11-01T00:00:00Z"}  # fmt: skip
    platform.update(datasets=[record], blobs={"datasets/ds-7/download": content})
    code, out, err = osmosis(*args)
    assert code == 0, err
    result = json.loads(out)["resource"]
    assert result["dataset_source"] == "download" and result["metrics"]["passed"] == 2
    code, out, err = osmosis(*args, "--fresh")
    assert code == 0, err
    assert json.loads(out)["resource"]["dataset_source"] == "cache"
    assert len(platform.requests("/api/cli/datasets/calc-rows/download")) == 1
    assert (home / ".cache/osmosis/datasets/ds-7/metadata.json").is_file()


def test_platform_dataset_errors_say_what_to_do(
    workspace: Path, platform: Any, osmosis: Run, logged_in: str
) -> None:
    _calc_workspace(workspace, "demo")
    args = _run_args("http://127.0.0.1:9/v1")
    code, _, err = osmosis(*args)
    assert code != 0 and "Dataset 'demo' not found; pass --dataset-file" in err
    record = {"id": "ds-8", "file_name": "demo", "file_format": "jsonl", "file_size": 5,
              "status": "processing", "updated_at": "2026-11-01T00:00:00Z"}  # fmt: skip
    platform.update(datasets=[record])
    code, _, err = osmosis(*args)
    assert code != 0 and "(status: processing). Try again after it finishes uploading." in err
    content = json.dumps(calc_rows(1)[0]) + "\n"
    platform.update(datasets=[{**record, "status": "uploaded"}], blobs={"datasets/ds-8/download": content})
    code, _, err = osmosis(*args)  # the platform said 5 bytes: the download is refused, once, clearly
    assert code != 0 and f"got {len(content)} bytes, expected 5; the file was discarded; re-run" in err, err


@contextlib.contextmanager
def _file_size_limit(size: int) -> Iterator[None]:
    """A disk that takes no file past ``size`` bytes: a write past it fails (EFBIG) instead of killing us."""
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def test_a_cache_metadata_write_that_fails_keeps_the_previous_metadata_whole(
    workspace: Path, platform: Any, logged_in: str
) -> None:
    from osmosis_ai.eval.run_dataset import cache_root, resolve_platform_dataset
    from osmosis_ai.platform.client import PlatformClient

    content = json.dumps(calc_rows(1)[0]) + "\n"
    record = {"id": "ds-9", "file_name": "calc-one", "file_format": "jsonl", "file_size": len(content),
              "status": "uploaded", "updated_at": "2026-11-01T00:00:00Z"}  # fmt: skip
    platform.update(datasets=[record], blobs={"datasets/ds-9/download": content})
    metadata = cache_root() / "ds-9" / "metadata.json"
    with PlatformClient(platform.url, token=logged_in, git_identity="acme/agents") as client:
        assert resolve_platform_dataset(client, "calc-one")[1] == "download"
        before = metadata.read_text()
        platform.update(datasets=[{**record, "updated_at": "2026-11-02T00:00:00Z"}])
        # The new version downloads whole, then the disk fills while its metadata is written.
        assert len(content) < len(before) - 40
        with _file_size_limit(len(content) + 20), pytest.raises(OSError):
            resolve_platform_dataset(client, "calc-one")
    # Before: metadata.json truncated to its first bytes (not JSON: every later run re-downloads or fails).
    assert metadata.read_text() == before
    assert json.loads(before)["version"] == "2026-11-01T00:00:00Z"
    assert not [p.name for p in metadata.parent.iterdir() if p.name.startswith(".")]  # no temporary file left
