"""Secrets never echoed (issue #22 item 7): planted values are grepped for in every output and file."""

from __future__ import annotations

import json
from pathlib import Path

from osmosis_ai.redact import redact, remember, safe_url, url_secrets
from tests.cli.test_eval_cli import EXAMPLES, FAILING_AGENT, eval_args, osmosis, write_rows

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


ECHO_KEY = "sk-echoed-by-the-provider-5521"
ENV_TOKEN = "hf_planted_env_token_7310"
LOGGING_AGENT = """
import logging
import os

from osmosis_ai.rollout import RolloutAgentLoop

log = logging.getLogger("user.agent")
log.setLevel(logging.INFO)
log.addHandler(logging.FileHandler("agent.log"))


class Talkative(RolloutAgentLoop):
    name = "talkative"

    def get_tools(self, request):
        return []

    async def run(self, ctx):
        token = os.environ["HF_TOKEN"]
        print("my token is", token)
        log.info("token %s", token)
        try:
            raise RuntimeError(f"failed with {token}")
        except RuntimeError:
            log.exception("traceback follows")
        reply = await ctx.chat(ctx.request.messages)
        return ctx.complete([*ctx.request.messages, reply.message])


agent = Talkative()
"""


def test_a_provider_error_echoing_the_key_reaches_no_sink(scripted, tmp_path, monkeypatch) -> None:
    # The provider's 401 quotes the key: the -o file's stop_reason once held it in clear.
    refusal = {"error": {"message": f"Incorrect API key provided: {ECHO_KEY}", "code": "invalid_api_key"}}
    server = scripted({"default": {"status": 401, "body": refusal}})
    dataset = write_rows(tmp_path / "data.jsonl", [("q-1", "1"), ("q-2", "1")])
    args = eval_args(server, dataset, tmp_path, "--no-preflight")
    result = osmosis(*args, "--api-key", ECHO_KEY)
    assert result.returncode == 1, result.stderr
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["summary"]["stopped_early"] is True and "***" in document["summary"]["stop_reason"]
    (tmp_path / "plan.json").unlink()  # the scripted server's own script holds the key, of course
    output = _everything(result, tmp_path)
    assert ECHO_KEY not in output, output[output.find(ECHO_KEY) - 300 : output.find(ECHO_KEY) + 100]


def test_a_secret_known_only_from_the_environment_is_masked_in_prints_and_user_logs(
    scripted, tmp_path, monkeypatch
) -> None:
    (tmp_path / "talkative.py").write_text(LOGGING_AGENT)
    (tmp_path / "reward_fn").symlink_to(EXAMPLES / "reward_fn")
    dataset = write_rows(tmp_path / "data.jsonl", [("q-1", "1")])
    server = scripted({"default": {"content": "1"}})
    monkeypatch.setenv("HF_TOKEN", ENV_TOKEN)
    args = eval_args(server, dataset, tmp_path, "--no-preflight", agent="talkative:agent")
    import subprocess

    from tests.cli.test_eval_cli import OSMOSIS

    result = subprocess.run([OSMOSIS, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    agent_log = (tmp_path / "agent.log").read_text()
    assert "token ***" in agent_log and "failed with ***" in agent_log  # a file handler, traceback too
    assert "my token is ***" in result.stdout + result.stderr
    output = _everything(result, tmp_path)
    assert ENV_TOKEN not in output, output[output.find(ENV_TOKEN) - 300 : output.find(ENV_TOKEN) + 100]


def test_debug_event_logs_of_a_rollout_pass_the_gate(tmp_path) -> None:
    from osmosis_ai.rollout import RolloutContext
    from osmosis_ai.rollout.schemas import RolloutRequest

    secret = "sk-event-planted-6610"
    remember([secret])
    request = RolloutRequest(
        rollout_id="r-1",
        server_url="http://127.0.0.1:1",
        messages=[{"role": "user", "content": "x"}],
        completion_params={},
    )
    ctx = RolloutContext(request=request, tools=[], llm=None, _debug_dir=str(tmp_path))
    ctx.log_event("call", headers={"Authorization": f"Bearer {secret}"})
    text = (tmp_path / "r-1.jsonl").read_text()
    assert secret not in text and "Bearer ***" in text
