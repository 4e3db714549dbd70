"""`osmosis eval upload RUN_DIR` and `osmosis eval run --upload` against the platform stand-in."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.eval_run_workspace import MAIN, calc_rows

from .conftest import Run

IMPORTS = "/api/cli/eval-runs/imports"


def _calc(workspace: Path, rows: int = 4) -> None:
    """The calc rollout, an eval config without secrets, and ``rows`` rows (row 1 writes an artifact)."""
    (workspace / "rollouts/calc").mkdir(parents=True, exist_ok=True)
    (workspace / "rollouts/calc/main.py").write_text(MAIN)
    text = (workspace / "configs/eval/demo.toml").read_text()
    text = text.replace('rollout = "demo"', 'rollout = "calc"').replace(
        'required = ["OPENAI_API_KEY"]', "required = []"
    )
    (workspace / "configs/eval/calc.toml").write_text(text)
    data = calc_rows(rows)
    data[1]["metadata"] = {"mode": "artifact"}
    (workspace / "data/calc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))


def _eval_run(osmosis: Run, base_url: str, *extra: str) -> tuple[int, str, str]:
    return osmosis(
        "eval", "run", "configs/eval/calc.toml", "--dataset-file", "data/calc.jsonl", "--name", "up", "-y",
        "--base-url", base_url, *extra,
    )  # fmt: skip


@pytest.fixture
def finished_run(workspace: Path, osmosis: Run, scripted: Any) -> Path:
    """A finished local run of 4 items in the workspace: ``.osmosis/evals/up``."""
    _calc(workspace)
    server = scripted({"default": {"content": "4"}})
    code, _, err = _eval_run(osmosis, server.base_url)
    assert code == 0, err
    return workspace / ".osmosis/evals/up"


def _digests(run: Path) -> dict[str, str]:
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run.rglob("*"))
        if p.is_file()
    }


def _upload_paths(run: Path) -> list[str]:
    from osmosis_ai.eval.run_upload import build_upload_plan

    return [f.path for f in build_upload_plan(run).files]


def _puts(platform: Any) -> list[str]:
    return [r["path"] for r in platform.requests("/_storage/imports/") if r["method"] == "PUT"]


def test_upload_imports_a_finished_run_once(
    finished_run: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    code, out, err = osmosis("eval", "upload", str(finished_run), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["operation"] == "eval.upload" and result["status"] == "success"
    resource = result["resource"]
    assert resource["status"] == "finalized" and resource["eval_run_name"] == "up"
    assert resource["expected_files"] == resource["uploaded_files"] == resource["sent_files"]
    assert resource["local_run_path"] == str(finished_run) and resource["git"]["identity"] == "acme/agents"
    manifest = json.loads((finished_run / "manifest.json").read_text())
    start = platform.requests(IMPORTS)[0]
    body = start["body"]
    assert start["headers"]["x-osmosis-git"] == "acme/agents"
    assert body["local_run_id"] == manifest["local_run_id"]
    assert (
        body["manifest_digest"] == hashlib.sha256((finished_run / "manifest.json").read_bytes()).hexdigest()
    )
    paths = [f["path"] for f in body["files"]]
    assert paths == _upload_paths(finished_run) and paths[:2] == ["index.jsonl", "progress.json"]
    assert sum(p.endswith("/trajectory.json") for p in paths) == 4
    assert [p for p in paths if "/artifacts/" in p] and not any(
        p in paths for p in ("manifest.json", "results.jsonl", "metrics.json", "summary.jsonl", "logs.txt")
    )
    assert body["run"]["evaluation_config"] == {"n": 1, "pass_threshold": 1.0}
    assert body["run"]["experiment_config"]["dataset"]["name"] == "calc.jsonl"
    assert body["provenance"]["sdk_version"] and body["schema_versions"]["state_schema"] == 1
    assert len(_puts(platform)) == len(paths)
    assert [r for r in platform.state()["eval_runs"] if r["name"] == "up"]
    code, out, err = osmosis("eval", "upload", str(finished_run), "--json")  # the same run again
    assert code == 0, err
    assert json.loads(out)["resource"]["sent_files"] == 0 and len(_puts(platform)) == len(paths)


def test_an_interrupted_upload_resumes_without_resending_finished_files(
    finished_run: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    files = _upload_paths(finished_run)
    third = f"/_storage/imports/imp-1/{files[2]}"  # the first start is the stand-in's first id
    platform.fail(third, 403, method="PUT", body={"error": "signature expired"})
    code, _, err = osmosis("eval", "upload", str(finished_run))
    assert code == 1 and files[2] in err and "403" in err
    first = _puts(platform)
    assert len(first) == 3  # two landed, the third was refused
    code, _, err = osmosis("eval", "upload", str(finished_run))
    assert code == 0, err
    assert "2 already on the platform" in err
    again = _puts(platform)[3:]
    assert not set(first[:2]) & set(again) and third in again


def test_ctrl_c_during_an_upload_loses_nothing_and_the_next_run_resumes(
    finished_run: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    files = _upload_paths(finished_run)
    hanging = f"/_storage/imports/imp-1/{files[1]}"
    platform.fail(hanging, method="PUT", delay=600)  # hangs until the upload is interrupted
    before = _digests(finished_run)
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("osmosis")), "eval", "upload", str(finished_run)],
        cwd=finished_run.parents[2], env={**os.environ}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120  # a hang guard: the wait is for the request
    while hanging not in _puts(platform):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "nothing is lost" in err and f"osmosis eval upload {finished_run}" in err
    assert _digests(finished_run) == before
    code, _, err = osmosis("eval", "upload", str(finished_run))
    assert code == 0, err
    sent_again = _puts(platform)[2:]
    assert f"/_storage/imports/imp-1/{files[0]}" not in sent_again and hanging in sent_again


def test_an_incomplete_run_is_refused_before_any_request(
    finished_run: Path, platform: Any, home: Path, osmosis: Run
) -> None:
    index = finished_run / "index.jsonl"
    lines = index.read_text().splitlines(keepends=True)
    index.write_text("".join(lines[:-1]))
    code, _, err = osmosis("--json", "eval", "upload", str(finished_run))
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["code"] == "VALIDATION"
    assert error["message"].startswith(
        "local evaluation is incomplete: index.jsonl has 3 terminal results but progress.json expects 4"
    )
    index.write_text("".join(lines))
    metrics = json.loads((finished_run / "metrics.json").read_text())
    metrics["eval_run"]["status"] = "incomplete"
    (finished_run / "metrics.json").write_text(json.dumps(metrics))
    code, _, err = osmosis("eval", "upload", str(finished_run))
    assert code == 1 and "local evaluation is not completed: metrics.json status must be finished" in err
    assert platform.requests("/api/") == []  # nothing was asked of the platform (not even a login)


@pytest.mark.parametrize(
    "answer,why",
    [
        ({"session_id": "s", "status": "paused", "expected_files": 0, "uploaded_files": 0, "files": []}, "status 'paused'"),
        ({"session_id": "s", "status": "uploading", "expected_files": 0, "uploaded_files": 0, "files": {}}, "files is not a list"),
        ({"session_id": "s", "status": "uploading", "expected_files": 1, "uploaded_files": 2, "files": []}, "2 files uploaded of 1"),
        ({"status": "uploading", "expected_files": 0, "uploaded_files": 0, "files": []}, "no session_id"),
        ({"session_id": "s", "status": "uploading", "expected_files": 0, "uploaded_files": 0, "files": []}, "Server returned a different eval import file set: missing"),
    ],
)  # fmt: skip
def test_a_malformed_start_answer_stops_the_upload(
    finished_run: Path, platform: Any, logged_in: str, osmosis: Run, answer: dict, why: str
) -> None:
    platform.fail(IMPORTS, 200, method="POST", body=answer)
    code, _, err = osmosis("--json", "eval", "upload", str(finished_run))
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["code"] == "PLATFORM_ERROR"
    assert "malformed" in error["message"] and why in error["message"]
    assert _puts(platform) == []


def test_a_duplicate_path_and_a_bad_finalize_are_refused(
    finished_run: Path, platform: Any, logged_in: str, osmosis: Run
) -> None:
    state = {"session_id": "s", "status": "uploading", "expected_files": 2, "uploaded_files": 0}
    entry = {"path": "index.jsonl", "size": 1, "sha256": "0" * 64, "state": "pending"}
    platform.fail(IMPORTS, 200, method="POST", body={**state, "files": [entry, entry]})
    code, _, err = osmosis("eval", "upload", str(finished_run))
    assert code == 1 and "'index.jsonl' is listed twice" in err
    assert osmosis("eval", "upload", str(finished_run))[0] == 0  # creates imp-N, all files sent
    session = next(iter(platform.state()["imports"]))
    platform.fail(f"{IMPORTS}/{session}/finalize", 200, method="POST", body={
        "session_id": session, "status": "uploading", "expected_files": 0, "uploaded_files": 0, "files": []
    })  # fmt: skip
    code, _, err = osmosis("eval", "upload", str(finished_run))
    assert code == 1 and "different eval import file set" in err


def test_eval_run_upload_imports_the_run_after_it_finishes(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, scripted: Any
) -> None:
    _calc(workspace)
    server = scripted({"default": {"content": "4"}})
    code, out, err = _eval_run(osmosis, server.base_url, "--upload", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["operation"] == "eval.run" and result["status"] == "success"
    upload = result["resource"]["upload"]
    assert upload["status"] == "finalized" and upload["eval_run_name"] == "up"
    assert result["resource"]["platform_url"].startswith("https://platform.test/eval/")
    assert "Uploaded as up" in result["message"]


def test_eval_run_upload_needs_a_login_before_anything_runs(
    workspace: Path, platform: Any, home: Path, osmosis: Run
) -> None:
    _calc(workspace)
    code, _, err = _eval_run(osmosis, "http://127.0.0.1:9/v1", "--upload")
    assert code == 1 and "auth login" in err
    assert not (workspace / ".osmosis/evals/up").exists()


def test_a_file_changed_after_planning_stops_the_upload(
    finished_run: Path, platform: Any, logged_in: str
) -> None:
    from osmosis_ai.eval.run_upload import build_upload_plan
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.errors import PlatformError
    from osmosis_ai.platform.eval_import import import_run

    plan = build_upload_plan(finished_run)
    (finished_run / "progress.json").write_text((finished_run / "progress.json").read_text() + " ")
    client = PlatformClient(platform.url, token=logged_in, git_identity="acme/agents")
    with client, pytest.raises(PlatformError, match=r"progress\.json changed after the upload was planned"):
        import_run(client, plan)


def test_eval_run_upload_skips_an_incomplete_run_and_says_so(
    workspace: Path, platform: Any, logged_in: str, osmosis: Run, scripted: Any
) -> None:
    _calc(workspace)
    server = scripted({"default": {"status": 401, "body": {"error": {"message": "bad key"}}}})
    code, out, err = _eval_run(osmosis, server.base_url, "--upload", "--json")
    result = json.loads(out)
    assert code == 1 and result["status"] == "partial", err  # stopped early: every call would fail the same
    assert result["message"].endswith("Upload skipped because the local evaluation is incomplete.")
    assert "upload" not in result["resource"] and platform.requests(IMPORTS) == []


def _older(document: dict[str, Any]) -> None:
    """The trajectory as versions before ATIF wrote it: ``messages`` instead of steps."""
    osmosis = document["extra"]["osmosis"]
    document.clear()
    document.update(session_id=osmosis["rollout_id"], messages=[{"role": "user", "content": "2+2"}])
    document["extra"] = {"osmosis": osmosis}


@pytest.mark.parametrize(
    "damage,message",
    [
        (_older, "is not valid ATIF (messages: is not a field of ATIF Trajectory"),
        (lambda d: d["steps"][-1].update(source="assistant"),
         "is not valid ATIF (steps[2].source: must be one of 'system', 'user', 'agent', got 'assistant')"),
        (lambda d: d["steps"][-1].update(metrics={"prompt_tokens": "2"}),
         "is not valid ATIF (steps[2].metrics.prompt_tokens: must be an integer, got '2')"),
        (lambda d: d["extra"]["osmosis"].update(rollout_id="f" * 32), "does not identify rollout_id"),
        (lambda d: d["extra"]["osmosis"]["request_extra_fields"].update(run_index=5),
         "row/run identity does not match index.jsonl"),
    ],
)  # fmt: skip
def test_a_trajectory_that_fails_the_strict_atif_check_is_refused(
    finished_run: Path, platform: Any, home: Path, osmosis: Run, damage: Any, message: str
) -> None:
    row = json.loads((finished_run / "index.jsonl").read_text().splitlines()[0])
    relative = f"rollout_trials/{row['rollout_id']}/trajectory.json"
    document = json.loads((finished_run / relative).read_text())
    damage(document)
    (finished_run / relative).write_text(json.dumps(document))
    code, _, err = osmosis("--json", "eval", "upload", str(finished_run))
    error = json.loads(err.strip().splitlines()[-1])["error"]
    assert code == 1 and error["code"] == "VALIDATION"
    assert error["message"].startswith(f"{relative} {message}"), error["message"]
    assert platform.requests("/api/") == []
    # The run again (same config, --name and endpoint) rewrites the file from its results log; then it uploads.
    endpoint = json.loads((finished_run / "manifest.json").read_text())["inputs"]["base_url"]
    code, _, err = _eval_run(osmosis, endpoint)
    assert code == 0, err
    assert _upload_paths(finished_run)
