"""Commands behind a proxy, end to end (the real CLI in a subprocess, a forward proxy on 127.0.0.1):
`eval`, `eval rubric` and a platform command reach their servers through it (https in CONNECT tunnels,
certificates from a test CA), NO_PROXY hosts are reached directly, a workflow's OpenAI SDK reaches the
`eval run` bridge with HTTP_PROXY set, and the proxy's credentials appear in no output."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

from servers import ForwardProxy, PlatformServer, ScriptedServer
from tests.eval_run_workspace import calc_rows, make_workspace

from .conftest import (
    MODEL_HOST,
    PLATFORM_HOST,
    PROXY_PASSWORD,
    PROXY_USER,
    STORAGE_HOST,
    clean_environment,
    text_of,
)

ROOT = Path(__file__).resolve().parents[3]
OSMOSIS = str(Path(sys.executable).with_name("osmosis"))
SECRETS = (PROXY_PASSWORD, base64.b64encode(f"{PROXY_USER}:{PROXY_PASSWORD}".encode()).decode())


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([OSMOSIS, *args], cwd=cwd, capture_output=True, text=True, timeout=180, env=env)


def assert_no_credentials(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text


def write_rows(path: Path) -> Path:
    rows = [
        {"system_prompt": "Answer.", "user_prompt": f"{i}+{i}?", "ground_truth": str(2 * i)} for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def eval_args(base_url: str, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "eval", "-m", "math_agent:agent_loop", "-d", str(write_rows(tmp_path / "rows.jsonl")),
        "--model", "org/scripted", "--base-url", base_url, "--eval-fn", "reward_fn.compute_reward:numbers_match_reward",
        "-o", str(tmp_path / "out.json"), "--log", str(tmp_path / "log.jsonl"), *extra,
    ]  # fmt: skip


def test_eval_calls_the_provider_through_the_proxy_and_never_shows_its_credentials(
    auth_proxy: ForwardProxy, test_ca, tmp_path: Path
) -> None:
    env = clean_environment(HTTPS_PROXY=auth_proxy.url, SSL_CERT_FILE=test_ca.ca, OPENAI_API_KEY="sk-test")
    with ScriptedServer({"default": {"content": "2"}}, tls=test_ca) as server:
        base = f"https://{MODEL_HOST}:{server.port}/v1"
        done = run(["--json", *eval_args(base, tmp_path)], ROOT / "examples", env)
        assert done.returncode == 0, done.stderr
        assert len(server.requests()) >= 3  # the rows (and the up-front probe of the endpoint)
    assert {(e["method"], e["host"], e["authorized"]) for e in auth_proxy.log()} == {
        ("CONNECT", MODEL_HOST, True)
    }
    assert_no_credentials(done.stdout, done.stderr, text_of(tmp_path))


def test_a_refused_proxy_is_a_clear_error_without_the_credentials(
    auth_proxy: ForwardProxy, test_ca, tmp_path
):
    wrong = auth_proxy.url.replace(PROXY_PASSWORD, PROXY_PASSWORD[::-1])
    env = clean_environment(HTTPS_PROXY=wrong, SSL_CERT_FILE=test_ca.ca, OPENAI_API_KEY="sk-test")
    with ScriptedServer(tls=test_ca) as server:
        done = run(eval_args(f"https://{MODEL_HOST}:{server.port}/v1", tmp_path), ROOT / "examples", env)
    assert done.returncode != 0
    assert "407" in done.stdout + done.stderr
    assert_no_credentials(done.stdout, done.stderr, text_of(tmp_path))
    for text in (done.stdout, done.stderr, text_of(tmp_path)):
        assert PROXY_PASSWORD[::-1] not in text


def test_no_proxy_hosts_are_reached_directly(proxy: ForwardProxy, tmp_path: Path) -> None:
    env = clean_environment(HTTP_PROXY=proxy.url, HTTPS_PROXY=proxy.url, NO_PROXY="localhost,127.0.0.1")
    with ScriptedServer({"default": {"content": "2"}}) as server:
        done = run(eval_args(server.base_url, tmp_path), ROOT / "examples", env)
        assert done.returncode == 0, done.stderr
        assert len(server.requests()) >= 3
    assert proxy.log() == []


def test_eval_rubric_judges_through_the_proxy(auth_proxy: ForwardProxy, test_ca, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"id": "a", "messages": [{"role": "user", "content": "hi"},
                                                        {"role": "assistant", "content": "Hello!"}]}) + "\n")  # fmt: skip
    with ScriptedServer({"default": {"score": 0.8, "explanation": "fine"}}, tls=test_ca) as server:
        env = clean_environment(
            HTTPS_PROXY=auth_proxy.url,
            SSL_CERT_FILE=test_ca.ca,
            OPENAI_API_KEY="sk-test",
            OPENAI_BASE_URL=f"https://{MODEL_HOST}:{server.port}/v1",
        )
        args = ["--json", "eval", "rubric", "-d", str(chat), "-r", "Judge politeness.", "--model", "openai/judge",
                "-o", str(tmp_path / "res") + "/"]  # fmt: skip
        done = run(args, tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert server.requests()
    assert {(e["method"], e["host"], e["authorized"]) for e in auth_proxy.log()} == {
        ("CONNECT", MODEL_HOST, True)
    }
    assert_no_credentials(done.stdout, done.stderr, text_of(tmp_path))


def test_dataset_upload_reaches_the_platform_and_storage_through_the_proxy(
    auth_proxy: ForwardProxy, test_ca, tmp_path: Path
) -> None:
    from tests.platform.conftest import GIT_ENV
    from tests.platform.conftest import make_workspace as make_platform_workspace

    with PlatformServer(tls=test_ca) as platform:
        platform.seed_token("tok-proxy-test")
        platform.update(storage_base=f"https://{STORAGE_HOST}:{platform.port}")
        home = tmp_path / "home"
        home.mkdir()
        env = clean_environment(
            HTTPS_PROXY=auth_proxy.url,
            SSL_CERT_FILE=test_ca.ca,
            HOME=str(home),
            OSMOSIS_CONFIG_DIR=str(home / ".config/osmosis"),
            OSMOSIS_PLATFORM_URL=f"https://{PLATFORM_HOST}:{platform.port}",
            OSMOSIS_TOKEN="tok-proxy-test",
            OSMOSIS_TOKEN_PLATFORM_URL=f"https://{PLATFORM_HOST}:{platform.port}",
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            **GIT_ENV,
        )
        workspace = make_platform_workspace(tmp_path / "ws")
        data = workspace / "data" / "sums.jsonl"
        data.write_text("".join(json.dumps({"user_prompt": f"{i}+1", "ground_truth": str(i + 1)}) + "\n"
                                for i in range(12)))  # fmt: skip
        done = run(["--json", "dataset", "upload", str(data), "-y"], workspace, env)
        assert done.returncode == 0, done.stderr
        stored = [r for r in platform.requests("/_storage/")]
    hosts = {(e["method"], e["host"], e["authorized"]) for e in auth_proxy.log()}
    assert hosts == {("CONNECT", PLATFORM_HOST, True), ("CONNECT", STORAGE_HOST, True)}
    assert stored, "the file was never uploaded"
    assert_no_credentials(done.stdout, done.stderr)


OPENAI_SDK_MAIN = """
from openai import AsyncOpenAI

from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, get_rollout_context


class CalcWorkflow(AgentWorkflow):
    async def run(self, ctx):
        rollout = get_rollout_context()
        async with AsyncOpenAI(base_url=rollout.chat_completions_url, api_key=rollout.api_key) as client:
            reply = await client.chat.completions.create(model="calc", messages=ctx.prompt, temperature=0)
        message = reply.choices[0].message.model_dump(exclude_none=True)
        return AgentWorkflowOutput(messages=[*ctx.prompt, message])


class CalcGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0 if ctx.sample.messages[-1].get("content") == ctx.label else 0.0)
"""


def test_a_workflow_using_the_openai_sdk_reaches_the_bridge_with_http_proxy_set(
    proxy: ForwardProxy, tmp_path: Path
) -> None:
    ws = make_workspace(tmp_path / "ws", calc_rows(4))
    (ws / "rollouts/calc/main.py").write_text(OPENAI_SDK_MAIN)
    env = clean_environment(HTTP_PROXY=proxy.url, HTTPS_PROXY=proxy.url, NO_PROXY="internal.example")
    with ScriptedServer({"default": {"content": "4"}}) as server:
        base = f"http://{MODEL_HOST}:{server.port}/v1"
        args = ["--json", "eval", "run", "configs/eval/calc.toml", "--dataset-file", "data/calc.jsonl",
                "--name", "r1", "-y", "--base-url", base]  # fmt: skip
        done = run(args, ws, env)
        assert done.returncode == 0, done.stderr
        served = len(server.requests())
    metrics = json.loads(done.stdout)["resource"]["metrics"]
    assert (metrics["total_samples"], metrics["passed"], metrics["failed"]) == (4, 2, 0)
    # The model calls went through the proxy; the workflow's calls to the bridge on 127.0.0.1 did not.
    assert {(e["method"], e["host"]) for e in proxy.log()} == {("POST", MODEL_HOST)}
    assert len(proxy.log()) == served >= 4
