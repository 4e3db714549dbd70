"""`osmosis dataset upload|list|info|preview|download` against the platform stand-in."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run


def write_dataset(path: Path, rows: int = 8, pad: int = 0) -> Path:
    lines = [
        json.dumps({"user_prompt": f"What is {i} + {i}?" + " " * pad, "ground_truth": str(2 * i)})
        for i in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_simple_upload_then_list_info_preview(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    data = write_dataset(workspace / "data" / "sums.jsonl")
    code, out, err = osmosis("dataset", "upload", str(data), "-y", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["operation"] == "dataset.upload" and result["resource"]["status"] == "uploaded"
    created = platform.requests("/api/cli/datasets")[0]
    assert created["body"] == {"file_name": "sums", "file_size": data.stat().st_size, "extension": "jsonl"}
    put = platform.requests("/_storage/")[0]
    assert put["method"] == "PUT" and "authorization" not in put["headers"]  # no token to storage
    assert platform.state()["storage"]["datasets/ds-1/file"]["size"] == data.stat().st_size

    code, out, err = osmosis("dataset", "list", "--json")
    assert code == 0, err
    page = json.loads(out)
    assert [d["file_name"] for d in page["items"]] == ["sums"]
    assert set(page["items"][0]) == {
        "id", "file_name", "file_size", "status", "file_format", "original_file_format", "row_count",
        "original_file_size", "creator_name", "created_at", "updated_at",
    }  # fmt: skip
    code, out, err = osmosis("dataset", "info", "sums")
    assert code == 0 and "uploaded" in out
    code, out, err = osmosis("dataset", "preview", "sums", "--json")
    assert code == 0 and json.loads(out)["data"]["returned_rows"] == 0


def test_local_validation_runs_before_any_request(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    bad = workspace / "data" / "bad.jsonl"
    bad.write_text("\n".join(json.dumps({"question": "q"}) for _ in range(5)) + "\n")
    code, _, err = osmosis("dataset", "upload", str(bad), "-y")
    assert code == 1 and "Missing required columns: user_prompt, ground_truth" in err
    few = write_dataset(workspace / "data" / "few.jsonl", rows=2)
    code, _, err = osmosis("dataset", "upload", str(few), "-y")
    assert code == 1 and "at least 4" in err
    assert platform.requests("/api/cli/datasets") == []


def test_conflict_needs_overwrite(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    data = write_dataset(workspace / "data" / "sums.jsonl")
    assert osmosis("dataset", "upload", str(data), "-y")[0] == 0
    code, _, err = osmosis("--json", "dataset", "upload", str(data), "-y")
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["code"] == "CONFLICT" and "--overwrite" in error["message"]
    code, _, err = osmosis("dataset", "upload", str(data), "-y", "--overwrite")
    assert code == 0, err
    retry = platform.requests("/api/cli/datasets")[-2]
    assert retry["body"]["overwrite_dataset_id"] == "ds-1"
    assert [d["id"] for d in platform.state()["datasets"]] == ["ds-2"]  # ds-1 replaced


def test_multipart_upload_survives_a_dropped_connection(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    platform.update(multipart_threshold=100_000, part_size=65_536)
    data = write_dataset(workspace / "data" / "big.jsonl", rows=2500, pad=60)
    size = data.stat().st_size
    assert size > 3 * 65_536
    platform.fail("/_storage/datasets/ds-1/part-2", method="PUT", drop=True, status=0)
    code, _out, err = osmosis("dataset", "upload", str(data), "-y")
    assert code == 0, err
    state = platform.state()
    assert state["datasets"][0]["status"] == "uploaded"
    assert sum(v["size"] for v in state["storage"].values()) == size
    complete = platform.requests("/api/cli/datasets/ds-1/complete")[0]["body"]
    assert [p["PartNumber"] for p in complete["parts"]] == list(range(1, len(complete["parts"]) + 1))
    assert all(p["ETag"] and '"' not in p["ETag"] for p in complete["parts"])
    assert len(platform.requests("/_storage/datasets/ds-1/part-2")) == 1  # the dropped try was never recorded


def test_failed_upload_is_aborted_and_leaves_no_dataset(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    platform.update(multipart_threshold=100_000, part_size=65_536)
    data = write_dataset(workspace / "data" / "big.jsonl", rows=2500, pad=60)
    platform.fail("/_storage/datasets/ds-1/part-2", 403, method="PUT", body={"error": "signature expired"})
    code, _, err = osmosis("--json", "dataset", "upload", str(data), "-y")
    assert code == 1
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert (
        "part 2" in error["message"]
        and error["details"]["dataset_id"] == "ds-1"
        and error["details"]["aborted"]
    )
    assert platform.requests("/api/cli/datasets/ds-1/abort")
    state = platform.state()
    assert state["datasets"] == [] and state["storage"] == {}


def test_ctrl_c_mid_upload_aborts_the_dataset(
    workspace: Path, home: Path, platform: Any, logged_in: str
) -> None:
    platform.update(multipart_threshold=100_000, part_size=65_536)
    data = write_dataset(workspace / "data" / "big.jsonl", rows=2500, pad=60)
    platform.fail("/_storage/datasets/ds-1/part-2", method="PUT", delay=600)  # hangs until interrupted
    osmosis_bin = Path(sys.executable).with_name("osmosis")
    proc = subprocess.Popen(
        [str(osmosis_bin), "dataset", "upload", str(data), "-y"],
        cwd=workspace,
        env={**os.environ},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # a hang guard: the wait is for the request
    while not platform.requests("/_storage/datasets/ds-1/part-2"):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert platform.requests("/api/cli/datasets/ds-1/abort")
    assert platform.state()["datasets"] == []


def test_download_checks_size_and_refuses_to_clobber(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, tmp_path: Path
) -> None:
    content = "a,b\n1,2\n"
    record = {
        "id": "ds-9",
        "file_name": "table",
        "file_format": "csv",
        "file_size": len(content),
        "status": "uploaded",
    }
    platform.update(datasets=[record], blobs={"datasets/ds-9/download": content})
    out_dir = tmp_path / "downloads"
    code, _out, err = osmosis("dataset", "download", "table", "-o", f"{out_dir}/")
    assert code == 0, err
    assert (out_dir / "table.csv").read_text() == content
    code, _, err = osmosis("dataset", "download", "table", "-o", f"{out_dir}/")
    assert code == 1 and "--overwrite" in err
    platform.update(datasets=[{**record, "file_size": 999}])
    code, _, err = osmosis("dataset", "download", "table", "-o", str(tmp_path / "short.csv"))
    assert code == 1 and "expected 999" in err
    assert not (tmp_path / "short.csv").exists() and not (tmp_path / "short.csv.partial").exists()


@pytest.mark.parametrize("status", ["processing", "error"])
def test_download_needs_an_uploaded_dataset(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, status: str
) -> None:
    platform.update(
        datasets=[{"id": "ds-9", "file_name": "t", "file_format": "csv", "file_size": 1, "status": status}]
    )
    code, _, err = osmosis("dataset", "download", "t")
    assert code == 1 and "only uploaded datasets" in err


def test_a_failed_abort_is_reported(workspace: Path, platform: Any, logged_in: str, osmosis: Run) -> None:
    data = write_dataset(workspace / "data" / "sums.jsonl")
    platform.fail("/_storage/datasets/ds-1/file", 403, method="PUT")
    platform.fail("/api/cli/datasets/ds-1/abort", 400, method="POST", body={"error": "cannot abort now"})
    code, _, err = osmosis("--json", "dataset", "upload", str(data), "-y")
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["details"]["aborted"] is False
    assert "Aborting dataset ds-1 failed too (cannot abort now)" in error["message"]
