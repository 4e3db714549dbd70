"""The one proxy/certificate decision (llm/network.py): httpx's precedence and matching, loopback cover,
what doctor shows, and unusable values named without their credentials."""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osmosis_ai.errors import ConfigError
from osmosis_ai.llm.network import cover_loopback, network_settings
from osmosis_ai.redact import redact

from .conftest import PROXY_PASSWORD

_CONTEXT = ssl.create_default_context()  # shared, so httpx builds no context per example


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _httpx_choice(env: dict[str, str], url: str) -> str | None:
    """Where httpx itself sends ``url`` under ``env``: the proxy's host:port, or None for direct."""
    with _environment(env), httpx.Client(verify=_CONTEXT) as client:
        # httpx's routing is private API; this test uses it only as the reference to agree with.
        transport = client._transport_for_url(httpx.URL(url))
        if transport is client._transport:
            return None
        proxy = transport._pool._proxy_url
        return f"{proxy.host.decode()}:{proxy.port}"


def _our_choice(env: dict[str, str], url: str) -> str | None:
    proxy = network_settings(env).proxy_for(url)
    return None if proxy is None else f"{proxy.host}:{proxy.port}"


_HOSTS = ["example.com", "www.example.com", "wwwexample.com", "a.b.example.com", "127.0.0.1", "localhost",
          "[::1]", "10.1.2.3", "other.org", "intranet"]  # fmt: skip
_NO_PROXY = ["example.com", ".example.com", "EXAMPLE.com", "127.0.0.1", "localhost", "::1", "http://other.org",
             "https://example.com:8443", "other.org:8080", "10.1.2.3/8", "intranet", "*", ""]  # fmt: skip


@st.composite
def _cases(draw: st.DrawFn) -> tuple[dict[str, str], str]:
    env: dict[str, str] = {}
    for upper, lower, value in (
        ("HTTP_PROXY", "http_proxy", "http://p1:3128"),
        ("HTTPS_PROXY", "https_proxy", "p2:8080"),
        ("ALL_PROXY", "all_proxy", "http://p3:1111"),
    ):
        for name in draw(st.sets(st.sampled_from([upper, lower]), max_size=2)):
            env[name] = draw(st.sampled_from([value, "http://p4:4444", ""]))
    for name in draw(st.sets(st.sampled_from(["NO_PROXY", "no_proxy"]), max_size=2)):
        env[name] = ",".join(draw(st.lists(st.sampled_from(_NO_PROXY), max_size=3)))
    if draw(st.booleans()) and draw(st.booleans()):
        env["REQUEST_METHOD"] = "GET"
    scheme = draw(st.sampled_from(["http", "https"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080", ":8443"]))
    return env, f"{scheme}://{draw(st.sampled_from(_HOSTS))}{port}/v1"


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_every_url_is_routed_as_httpx_routes_it(case: tuple[dict[str, str], str]) -> None:
    env, url = case
    assert _our_choice(env, url) == _httpx_choice(env, url)


def test_lower_case_names_win_and_an_empty_one_removes_the_proxy() -> None:
    both = {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2"}
    assert _our_choice(both, "https://api.example/v1") == "lower:2"
    emptied = {"HTTPS_PROXY": "http://upper:1", "https_proxy": ""}
    assert _our_choice(emptied, "https://api.example/v1") is None
    assert _our_choice({"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}, "http://a/") is None  # CGI


def test_no_proxy_star_turns_every_proxy_off_and_ports_are_specific() -> None:
    assert _our_choice({"ALL_PROXY": "http://p:1", "NO_PROXY": "x.org,*"}, "https://a/") is None
    env = {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "api.example:8443"}
    assert _our_choice(env, "https://api.example:8443/") is None
    assert _our_choice(env, "https://api.example/") == "p:1"


def test_loopback_is_added_to_no_proxy_under_every_spelling_keeping_the_users_entries() -> None:
    env = {"no_proxy": "corp.example", "NO_PROXY": "ignored-when-lower-case-is-set"}
    cover_loopback(env)
    assert env["no_proxy"] == env["NO_PROXY"] == "corp.example,127.0.0.1,localhost"
    cover_loopback(env)  # a second bridge in the same process adds nothing
    assert env["NO_PROXY"] == "corp.example,127.0.0.1,localhost"
    empty: dict[str, str] = {}
    cover_loopback(empty)
    assert empty == {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    everything = {"NO_PROXY": "*"}
    cover_loopback(everything)
    assert everything == {"NO_PROXY": "*"}
    settings_ = network_settings({"HTTP_PROXY": "http://p:1", **empty})
    assert settings_.proxy_for("http://127.0.0.1:9/v1") is None
    assert settings_.proxy_for("http://localhost:9/v1") is None
    assert settings_.proxy_for("http://model.example/v1") is not None


def test_credentials_are_masked_in_what_doctor_shows_and_known_to_the_redactor() -> None:
    url = f"http://corp-user:{PROXY_PASSWORD}@proxy.corp:3128"
    described = network_settings({"HTTPS_PROXY": url, "SSL_CERT_DIR": "/etc/ssl/certs"}).describe()
    assert PROXY_PASSWORD not in repr(described)
    assert described["proxies"]["https"] == "http://***@proxy.corp:3128"
    assert described["variables"]["HTTPS_PROXY"] == "http://***@proxy.corp:3128"
    assert described["ca_source"] == "SSL_CERT_DIR (/etc/ssl/certs)"
    assert redact(f"the proxy said no to {PROXY_PASSWORD}") == "the proxy said no to ***"


def test_an_unusable_proxy_or_certificate_variable_is_an_error_naming_it() -> None:
    bad = network_settings({"HTTPS_PROXY": f"ftp://u:{PROXY_PASSWORD}@p:21"})
    assert bad.describe()["problems"]  # doctor shows it without raising
    with pytest.raises(ConfigError, match="HTTPS_PROXY") as caught:
        bad.proxy_for("https://api.example/v1")
    assert PROXY_PASSWORD not in str(caught.value)
    with pytest.raises(ConfigError, match="SSL_CERT_FILE=/no/such/bundle"):
        network_settings({"SSL_CERT_FILE": "/no/such/bundle.pem"}).ssl_context()


def test_the_transport_factory_refuses_an_unusable_proxy_before_any_request() -> None:
    from osmosis_ai.llm.providers import resolve_endpoint
    from osmosis_ai.llm.transport import make_transport

    endpoint = resolve_endpoint("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="HTTP_PROXY"):
        make_transport(endpoint, network=network_settings({"HTTP_PROXY": "http://p:notaport"}))


def test_doctor_reports_the_proxy_and_certificates_in_effect_with_credentials_masked(
    tmp_path, test_ca
) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    from .conftest import clean_environment

    osmosis = str(Path(sys.executable).with_name("osmosis"))
    url = f"http://corp-user:{PROXY_PASSWORD}@proxy.corp:3128"
    env = clean_environment(HTTPS_PROXY=url, no_proxy="internal.example", SSL_CERT_FILE=test_ca.ca)
    subprocess.run([osmosis, "doctor", "--fix"], cwd=tmp_path, env=env, capture_output=True, check=True)
    shown = subprocess.run([osmosis, "doctor"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "HTTPS proxy: http://***@proxy.corp:3128" in shown.stdout
    assert "HTTP proxy: none (direct)" in shown.stdout
    assert "NO_PROXY: internal.example" in shown.stdout
    assert f"Certificates: SSL_CERT_FILE ({test_ca.ca})" in shown.stdout
    as_json = subprocess.run(
        [osmosis, "--json", "doctor"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    network = json.loads(as_json.stdout)["resource"]["network"]
    assert network["proxies"] == {"https": "http://***@proxy.corp:3128", "http": None}
    for text in (shown.stdout, shown.stderr, as_json.stdout, as_json.stderr):
        assert PROXY_PASSWORD not in text
