"""The one redaction gate: every secret the process knows is replaced by ``***`` before any sink sees it.

What the process knows (:func:`remember`): the keys an :class:`~osmosis_ai.llm.providers.Endpoint` is given
and the credentials of its URL, the platform login's token, ``--api-key``-like option values, ``[secrets]``
values and secrets files, and the values of environment variables named like secrets (``*_API_KEY``,
``*_TOKEN``, ``*_SECRET``, ...: :func:`remember_environment`). Credentials inside any URL
(``scheme://user:password@host``) are hidden even when never registered.

The sinks and how each passes the gate: stdout and stderr (``--json`` envelopes and ``--debug`` tracebacks
included) through :class:`RedactingStream` (:func:`redact_std_streams`, installed by the CLI and by Ray
workers); log records through the record factory of :func:`redact_log_records` (a message, its arguments
and its traceback, whatever handler writes it); results logs, ``-o`` files, metrics, trajectories, report
pages and debug event logs through their writers (:mod:`osmosis_ai.runs.log`, :mod:`osmosis_ai._files`,
:mod:`osmosis_ai.eval.run_files`), which call :func:`redact`. So an error text a server sent back that
quotes a key is masked wherever it goes. The one deliberate exception: ``osmosis serve`` shows the API key
it generated once, in its start-up panel, so it can be given to TrainGate; it is masked from then on.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO, overload
from urllib.parse import parse_qsl, urlsplit, urlunsplit

if TYPE_CHECKING:
    from osmosis_ai._core import SecretMasker

__all__ = [
    "MASK",
    "RedactingStream",
    "masker",
    "redact",
    "redact_bytes",
    "redact_data",
    "redact_log_records",
    "redact_std_streams",
    "remember",
    "remember_environment",
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
# The compiled search of ``_known`` (``_core.SecretMasker``: SIMD, no decoding) with the tuple it was built
# from, built on first use after ``remember``: a pair read and replaced whole, so no lock on the hot path.
_compiled: tuple[tuple[str, ...] | None, SecretMasker | None] = (None, None)
# Shorter texts are searched in Python: as fast there, and printing ``--help`` does not load the core.
_COMPILED_FROM = 256


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


# Environment variables whose values are secrets: names ending like these (HF_TOKEN, OPENAI_API_KEY,
# AWS_SECRET_ACCESS_KEY, DB_PASSWORD...), not merely containing them (TOKENIZERS_PARALLELISM=false).
_SECRET_ENV_NAME = re.compile(r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")
# Shorter environment values are flags and counts, not keys.
_MIN_ENV_SECRET = 8


def remember_environment(environ: Mapping[str, str] | None = None) -> None:
    """Remembers the values of environment variables named like secrets (see the module docstring).

    Example:
        >>> remember_environment({"HF_TOKEN": "hf_planted_1234", "TOKENIZERS_PARALLELISM": "false"})
        >>> redact("hf_planted_1234 false")
        '*** false'
    """
    environ = os.environ if environ is None else environ
    remember(
        value
        for name, value in environ.items()
        if _SECRET_ENV_NAME.search(name) and len(value.strip()) >= _MIN_ENV_SECRET
    )


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
        return _hide_userinfo(url)
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
    known = _known
    if known:
        text = _secrets_masked(text, known)
    # "@" first: a one-character search is a memchr, while "://" walks the text (2 us on a log line).
    if "@" in text and "://" in text:
        text = _hide_userinfo(text)
    return text


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` of UTF-8 ``data``: the same bytes object when nothing is masked (most lines of a
    results log or a trajectory: no encoding back).

    Example:
        >>> redact_bytes(b"failed: http://u:p@h/v1")
        b'failed: http://***@h/v1'
    """
    masked = _masker(_known).mask_bytes(data)  # UnicodeDecodeError for bytes that are not UTF-8
    # "@" first: a one-byte search is a memchr, "://" walks the line.
    if b"@" in masked and b"://" in masked:
        text = masked.decode()
        hidden = _hide_userinfo(text)
        return masked if hidden == text else hidden.encode()
    return masked


def masker() -> SecretMasker:
    """The compiled search of the secrets known now, for the core's writers: what :func:`redact_bytes`
    masks first (the user info of URLs is left to it)."""
    return _masker(_known)


def _masker(known: tuple[str, ...]) -> SecretMasker:
    """The compiled search of ``known`` (the current ``_known``), built once per set of secrets."""
    global _compiled
    built, masker = _compiled
    if built is not known or masker is None:
        from osmosis_ai import _core  # here: printing --help must not load the core

        masker = _core.SecretMasker(list(known))
        _compiled = (known, masker)
    return masker


def _secrets_masked(text: str, known: tuple[str, ...]) -> str:
    if len(text) >= _COMPILED_FROM:
        try:
            return _masker(known).mask_text(text)
        except UnicodeEncodeError:  # lone surrogates: no UTF-8 to search; the loop below replaces them
            pass
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _hide_userinfo(text: str) -> str:
    return _USERINFO.sub(lambda m: m["scheme"] + MASK + "@", text)


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


_factory_installed = False


def redact_log_records() -> None:
    """Makes every log record pass :func:`redact` when it is made (once per process): its message is
    formatted and masked, and so is its traceback, so no handler (a file, a stream, a collector) can write
    a secret.

    The CLI calls it, and so does a Ray worker.
    """
    global _factory_installed
    with _lock:
        if _factory_installed:
            return
        _factory_installed = True
    make = logging.getLogRecordFactory()
    formatter = logging.Formatter()

    def masked(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        # Masked in place, shape kept: formatters that read the arguments (uvicorn's access log) still can.
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, Mapping):
            record.args = {key: _masked_argument(value) for key, value in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_masked_argument(value) for value in record.args)
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(formatter.formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(masked)


def _masked_argument(value: Any) -> Any:
    # Numbers keep their type (``%d``); anything else is text by the time it is written.
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(value if isinstance(value, str) else str(value))
