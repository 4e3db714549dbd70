"""The one redactor: every secret the process was given is replaced by ``***`` in what it prints or writes.

Secrets are learnt where they enter (an :class:`~osmosis_ai.llm.providers.Endpoint` remembers its key and
the credentials of its URL; the CLI remembers ``--api-key`` values and secrets files); the writers call
:func:`redact` (the results log, result files) and the CLI wraps its output streams with
:class:`RedactingStream`, so an error message, a warning or a traceback that quotes a secret is caught too.
Credentials inside any URL (``scheme://user:password@host``) are hidden even when never registered.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterable
from typing import Any, TextIO, overload
from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "RedactingStream",
    "redact",
    "redact_data",
    "redact_std_streams",
    "remember",
    "safe_url",
    "url_secrets",
]

MASK = "***"
# Shorter values would mask ordinary words and numbers all over the output.
_MIN_LENGTH = 4
_SECRET_QUERY = re.compile(r"(?i)^(api[-_]?key|key|token|access[-_]?token|secret|password|sig|signature)$")
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s@'\"<>]+)@")

_lock = threading.Lock()
_known: tuple[str, ...] = ()  # longest first, so a secret containing another is masked whole


def remember(values: Iterable[str | None]) -> None:
    """Adds secret values to the ones every later :func:`redact` masks.

    Example:
        >>> remember(["sk-planted-1234"]); redact("key=sk-planted-1234")
        'key=***'
    """
    global _known
    fresh = {v for v in values if v and len(v) >= _MIN_LENGTH}
    with _lock:
        if fresh - set(_known):
            _known = tuple(sorted(set(_known) | fresh, key=len, reverse=True))


def url_secrets(url: str | None) -> list[str]:
    """The secrets a URL carries: its password and the values of key/token query parameters.

    The user name is not one: masking it everywhere would mask ordinary words (``user``); it is hidden
    inside URLs by :func:`redact` anyway.

    Example:
        >>> url_secrets("http://me:pw-1234@host/v1?api_key=abcd")
        ['pw-1234', 'abcd']
    """
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=False) if _SECRET_QUERY.match(k)]
    return found


@overload
def safe_url(url: str) -> str: ...
@overload
def safe_url(url: None) -> None: ...
def safe_url(url: str | None) -> str | None:
    """``url`` fit to print: credentials and key/token query values replaced by ``***``.

    Example:
        >>> safe_url("http://me:pw@host:8/v1?key=k&x=1")
        'http://***@host:8/v1?key=***&x=1'
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)[-1]
    except ValueError:
        return _USERINFO.sub(lambda m: m["scheme"] + MASK + "@", url)
    netloc = f"{MASK}@{host}" if "@" in parts.netloc else parts.netloc
    query = "&".join(
        f"{k}={MASK}" if _SECRET_QUERY.match(k) else (f"{k}={v}" if v else k)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact(text: str) -> str:
    """``text`` with every remembered secret and every URL's user info replaced by ``***``.

    Example:
        >>> redact("failed: http://u:p@h/v1")
        'failed: http://***@h/v1'
    """
    for secret in _known:
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text and "@" in text:
        text = _USERINFO.sub(lambda m: m["scheme"] + MASK + "@", text)
    return text


def redact_data(value: Any) -> Any:
    """:func:`redact` applied to every string inside dicts and lists (keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


class RedactingStream:
    """A text stream that redacts each write before passing it on (everything else is delegated)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(redact(text) if isinstance(text, str) else text)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def redact_std_streams() -> None:
    """Wraps ``sys.stdout`` and ``sys.stderr`` (once) so everything printed to them passes :func:`redact`.

    The CLI calls it, and so does a Ray worker, whose output lands in the cluster's log files.
    """
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))
