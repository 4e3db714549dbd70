"""Fixtures for the proxy tests: a throwaway CA (trustme), the forward proxy, an environment without the
developer's own proxy or certificate variables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import ForwardProxy, TLSFiles

# Names only the test proxy resolves (to 127.0.0.1): a request that reaches a server under one went through it.
MODEL_HOST = "model.proxytest"
PLATFORM_HOST = "platform.proxytest"
STORAGE_HOST = "storage.proxytest"
PROXY_USER, PROXY_PASSWORD = "corp-user", "pr0xy-Secret-77"


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without proxy, certificate, provider or platform variables, plus ``extra``."""
    dropped = ("_API_KEY", "_BASE_URL", "_API_BASE")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy")
        and k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")
        and not k.endswith(dropped)
        and not k.startswith("OSMOSIS_PLATFORM")
        and k != "OSMOSIS_TOKEN"
    }
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    """A CA made for this session and one server certificate for every test name (and 127.0.0.1)."""
    trustme = pytest.importorskip("trustme")
    folder = tmp_path_factory.mktemp("test-ca")
    ca = trustme.CA()
    cert = ca.issue_cert(MODEL_HOST, PLATFORM_HOST, STORAGE_HOST, "127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.private_key_and_cert_chain_pem.write_to_path(str(folder / "chain.pem"))
    return TLSFiles(cert=str(folder / "chain.pem"), key=str(folder / "key.pem"), ca=str(folder / "ca.pem"))


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    """A forward proxy without credentials."""
    with ForwardProxy() as server:
        yield server


@pytest.fixture
def auth_proxy() -> Iterator[ForwardProxy]:
    """A forward proxy that wants ``PROXY_USER:PROXY_PASSWORD``."""
    with ForwardProxy(auth=f"{PROXY_USER}:{PROXY_PASSWORD}") as server:
        yield server


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process without the developer's proxy and certificate variables (tests set their own)."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUEST_METHOD"):
            monkeypatch.delenv(name)


def text_of(*paths: Path) -> str:
    """Everything written to the files and folders given (for leak checks)."""
    chunks = []
    for path in paths:
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        chunks += [p.read_text(encoding="utf-8", errors="replace") for p in files]
    return "\n".join(chunks)
