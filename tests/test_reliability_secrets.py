"""Secrets never echoed (issue #22 item 7): planted values are grepped for in every output and file."""

from __future__ import annotations

import json
from pathlib import Path

from osmosis_ai.redact import redact, remember, safe_url, url_secrets
from test_eval_cli import EXAMPLES, FAILING_AGENT, eval_args, osmosis, write_rows

URL_PASSWORD = "url-pass-planted-7781"
FLAG_KEY = "sk-flag-planted-9034"


def _everything(result, folder: Path) -> str:
    files = [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.suffix != ".py"]
    return "\n".join([result.stdout, result.stderr, *files])


def test_credentials_in_urls_flags_and_errors_reach_no_output_or_file(scripted, tmp_path) -> None:
    (tmp_path / "flaky_agent.py").write_text(FAILING_AGENT)
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [("fine 1", "1"), ("explode now", "1")])
    server = scripted({"default": {"content": "1"}})
    host = server.base_url.split("://", 1)[1]
    url = f"http://planted-user:{URL_PASSWORD}@{host}"
    args = eval_args(server, dataset, tmp_path, "--no-preflight", agent="flaky_agent:agent")
    args[args.index("--base-url") + 1] = url
    result = osmosis(*args, "--api-key", FLAG_KEY, cwd=tmp_path)
    assert "Endpoint: http://***@" in result.stdout
    # A failed run (the agent raises) and the unreachable endpoint below both produce error messages.
    dead = [a if a != url else f"http://planted-user:{URL_PASSWORD}@127.0.0.1:1/v1" for a in args]
    dead[dead.index("--log") + 1] = str(tmp_path / "dead-log.jsonl")
    dead[dead.index("-o") + 1] = str(tmp_path / "dead-out.json")
    failed = osmosis(*dead, "--api-key", FLAG_KEY, cwd=tmp_path)
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    for output in (_everything(result, tmp_path), failed.stdout + failed.stderr):
        for secret in (URL_PASSWORD, FLAG_KEY, "planted-user"):
            assert secret not in output, output[output.find(secret) - 300 : output.find(secret) + 100]
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["total_runs"] == 2


def test_the_redactor() -> None:
    assert url_secrets("http://u:pw12345@h/v1?token=tok12345&x=1") == ["pw12345", "tok12345"]
    assert safe_url("https://a:b@h:1/v1?key=k") == "https://***@h:1/v1?key=***"
    assert safe_url("http://h/v1") == "http://h/v1"
    remember(["tiny", "s3cret-value-42", None, "ab"])
    assert redact("x s3cret-value-42 y ab") == "x *** y ab"
    assert redact("GET ftp://me:you@host/x failed") == "GET ftp://***@host/x failed"


def test_a_results_file_written_in_pieces_masks_every_secret_whole(tmp_path: Path) -> None:
    # Far larger than one written piece, with secrets all the way through: the file is json.dumps's text,
    # every planted value masked (none cut at a piece's end and let through), and it reads back.
    from osmosis_ai._files import write_json_atomic

    planted = "sk-pieces-planted-5521"
    remember([planted])
    payload = {
        "records": [
            {"i": i, "text": "é" * (i % 97), "key": f"{planted} at {i}", "url": f"http://u:{planted}@h/{i}"}
            for i in range(5000)
        ]
    }
    path = tmp_path / "out" / "results.json"
    write_json_atomic(path, payload, ensure_ascii=False)
    text = path.read_text(encoding="utf-8")
    assert len(text) > 10 * (1 << 16) and planted not in text
    assert text == redact(json.dumps(payload, indent=2, ensure_ascii=False)) + "\n"
    assert json.loads(text)["records"][4999]["key"] == "*** at 4999"
