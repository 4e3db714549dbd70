"""The direct transport and the httpx clients through a real forward proxy on 127.0.0.1: plain forwarding,
CONNECT tunnels with TLS from a test CA, proxy credentials, NO_PROXY, an https:// proxy."""

from __future__ import annotations

import asyncio
import sys

import pytest

from osmosis_ai.llm.network import network_settings
from osmosis_ai.llm.providers import resolve_endpoint
from osmosis_ai.llm.retry import ProviderCallError, RetryPolicy
from osmosis_ai.llm.transport import make_transport
from servers import ForwardProxy, ScriptedServer

from .conftest import MODEL_HOST, PROXY_PASSWORD, PROXY_USER

ONCE = RetryPolicy(max_retries=0)
MESSAGES = [{"role": "user", "content": "hello"}]


def _complete(base_url: str, env: dict[str, str]) -> dict:
    endpoint = resolve_endpoint("scripted", base_url=base_url, api_key="sk-test")

    async def call() -> dict:
        transport = make_transport(endpoint, network=network_settings(env), policy=ONCE)
        try:
            return (await transport.complete(MESSAGES)).message
        finally:
            await transport.aclose()

    return asyncio.run(call())


def test_plain_http_goes_to_the_proxy_in_absolute_form_with_its_credentials(auth_proxy: ForwardProxy) -> None:
    with ScriptedServer({"default": {"content": "via proxy"}}) as server:
        base = f"http://{MODEL_HOST}:{server.port}/v1"
        assert _complete(base, {"HTTP_PROXY": auth_proxy.url})["content"] == "via proxy"
        assert _complete(base, {"HTTP_PROXY": auth_proxy.url})["content"] == "via proxy"
    entries = auth_proxy.log()
    assert [(e["method"], e["host"], e["path"], e["authorized"]) for e in entries] == [
        ("POST", MODEL_HOST, "/v1/chat/completions", True)
    ] * 2


def test_https_goes_through_a_connect_tunnel_and_checks_the_target_against_ssl_cert_file(
    proxy: ForwardProxy, test_ca
) -> None:
    with ScriptedServer({"default": {"content": "tunnelled"}}, tls=test_ca) as server:
        base = f"https://{MODEL_HOST}:{server.port}/v1"
        env = {"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": test_ca.ca}
        assert _complete(base, env)["content"] == "tunnelled"
        # Without the test CA (certifi's bundle) the target's certificate is refused, as httpx refuses it.
        with pytest.raises(ProviderCallError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            _complete(base, {"HTTPS_PROXY": proxy.url})
    assert [(e["method"], e["host"]) for e in proxy.log()] == [("CONNECT", MODEL_HOST)] * 2


def test_a_proxy_refusing_the_credentials_is_an_error_that_never_shows_them(
    auth_proxy: ForwardProxy, test_ca
):
    wrong = auth_proxy.url.replace(PROXY_PASSWORD, "not-the-password-31")
    with ScriptedServer(tls=test_ca) as server, pytest.raises(ProviderCallError) as caught:
        _complete(
            f"https://{MODEL_HOST}:{server.port}/v1", {"HTTPS_PROXY": wrong, "SSL_CERT_FILE": test_ca.ca}
        )
    message = str(caught.value)
    assert "407" in message and "credentials" in message
    assert "not-the-password-31" not in message and PROXY_USER not in message


def test_https_without_a_proxy_checks_the_server_and_keeps_its_connection(test_ca) -> None:
    from osmosis_ai.llm.http1 import Http1Pool

    async def posts(env: dict[str, str]) -> list[int]:
        pool = Http1Pool(f"https://127.0.0.1:{server.port}/v1", network=network_settings(env))
        try:
            return [
                (await pool.post("/chat/completions", b'{"messages": []}', timeout=10)).status for _ in "abc"
            ]
        finally:
            await pool.aclose()

    with ScriptedServer({"default": {"content": "tls"}}, tls=test_ca) as server:
        assert asyncio.run(posts({"SSL_CERT_FILE": test_ca.ca})) == [200] * 3
        with pytest.raises(OSError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            asyncio.run(posts({}))


def test_no_proxy_hosts_are_reached_directly(proxy: ForwardProxy) -> None:
    with ScriptedServer({"default": {"content": "direct"}}) as server:
        env = {"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"}
        assert _complete(server.base_url, env)["content"] == "direct"
    assert proxy.log() == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="TLS inside a TLS proxy connection needs Python 3.11")
def test_an_https_proxy_is_itself_reached_over_tls(test_ca) -> None:
    with (
        ForwardProxy(tls=test_ca) as tls_proxy,
        ScriptedServer({"default": {"content": "x"}}, tls=test_ca) as server,
    ):
        env = {"HTTPS_PROXY": tls_proxy.url.replace("127.0.0.1", "localhost"), "SSL_CERT_FILE": test_ca.ca}
        assert _complete(f"https://{MODEL_HOST}:{server.port}/v1", env)["content"] == "x"
        assert [e["method"] for e in tls_proxy.log()] == ["CONNECT"]


def test_httpx_clients_follow_the_same_decision(auth_proxy: ForwardProxy, test_ca, monkeypatch) -> None:
    from osmosis_ai.llm.httpx_clients import async_http_client, http_client

    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", auth_proxy.url)
    monkeypatch.setenv("SSL_CERT_FILE", test_ca.ca)
    with ScriptedServer(tls=test_ca) as server:
        with http_client() as client:
            assert client.get(f"https://{MODEL_HOST}:{server.port}/_requests").status_code == 200
        with http_client(direct=True) as client:  # our own loopback servers: never through the proxy
            assert client.get(f"https://127.0.0.1:{server.port}/_requests").status_code == 200

        async def call() -> int:
            async with async_http_client() as client:
                return (await client.get(f"https://{MODEL_HOST}:{server.port}/_requests")).status_code

        assert asyncio.run(call()) == 200
    assert [(e["method"], e["host"], e["authorized"]) for e in auth_proxy.log()] == [
        ("CONNECT", MODEL_HOST, True)
    ] * 2


def _hashed_directory(ca_file: str, folder) -> str:
    """An OpenSSL-style certificate directory (``<subject hash>.0``) holding the test CA."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to name a certificate directory's files")
    digest = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", ca_file], capture_output=True, text=True, check=True
    ).stdout.strip()
    folder.mkdir()
    shutil.copy(ca_file, folder / f"{digest}.0")
    return str(folder)


def test_litellm_and_the_direct_transport_follow_ssl_cert_dir_through_the_proxy(
    auth_proxy: ForwardProxy, test_ca, tmp_path, monkeypatch, no_proxy_env
) -> None:
    from osmosis_ai.llm.providers import Endpoint

    certs = _hashed_directory(test_ca.ca, tmp_path / "certs")
    monkeypatch.setenv("HTTPS_PROXY", auth_proxy.url)
    monkeypatch.setenv("SSL_CERT_DIR", certs)
    with ScriptedServer({"default": {"content": "from litellm"}}, tls=test_ca) as server:
        base = f"https://{MODEL_HOST}:{server.port}/v1"
        # A provider LiteLLM translates for (its OpenAI-compatible path), not our direct transport.
        endpoint = Endpoint("hosted_vllm/scripted", "hosted_vllm", "scripted", None, "sk-test", 30.0, base)

        async def call() -> dict:
            transport = make_transport(endpoint, policy=ONCE)
            try:
                return (await transport.complete(MESSAGES)).message
            finally:
                await transport.aclose()

        assert asyncio.run(call())["content"] == "from litellm"
        assert (
            _complete(base, {"HTTPS_PROXY": auth_proxy.url, "SSL_CERT_DIR": certs})["content"]
            == "from litellm"
        )
    assert [(e["method"], e["host"], e["authorized"]) for e in auth_proxy.log()] == [
        ("CONNECT", MODEL_HOST, True)
    ] * 2
