"""The redaction gate's search in the core (``_core.SecretMasker``) against the Python replace loop it
replaced: the same text and the same bytes on disk, whatever the secrets and the text."""

from __future__ import annotations

import random

import orjson
import pytest

from osmosis_ai import _core
from osmosis_ai.redact import MASK, redact, redact_bytes, remember
from osmosis_ai.runs.log import ResultsLog


def python_loop(text: str, secrets: list[str]) -> str:
    """What redaction did before the core searched: each secret, longest first, replaced everywhere."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def test_the_core_masks_as_the_python_loop_did() -> None:
    rng = random.Random(33)
    alphabet = "ab*é-\n😀"
    for _ in range(3000):
        secrets = sorted(
            {"".join(rng.choices(alphabet, k=rng.randint(1, 6))) for _ in range(rng.randint(0, 5))},
            key=len,
            reverse=True,
        )
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 60)))
        masker = _core.SecretMasker(secrets)
        assert masker.mask_text(text) == python_loop(text, secrets), (text, secrets)
        assert masker.mask_bytes(text.encode()) == python_loop(text, secrets).encode(), (text, secrets)


def test_nothing_masked_gives_the_same_object_back() -> None:
    masker = _core.SecretMasker(["sk-not-there-1234"])
    line = b'{"a": "' + b"x" * 5000 + b'"}\n'
    text = "é" * 5000
    assert masker.mask_bytes(line) is line
    assert masker.mask_text(text) is text
    assert redact_bytes(line) is line


def test_bytes_that_are_not_utf8_are_refused_as_decoding_them_would_be() -> None:
    with pytest.raises(UnicodeDecodeError):
        _core.SecretMasker(["sk-1234"]).mask_bytes(b"ok \xff")
    with pytest.raises(UnicodeDecodeError):
        redact_bytes(b"ok \xff")


def test_long_and_short_texts_and_lone_surrogates_are_masked_alike() -> None:
    secret = "sk-redact-search-9931"
    remember([secret])
    for size in (10, 255, 256, 5000):
        text = ("é" * size) + secret + "\ud800" + secret
        assert redact(text) == ("é" * size) + "***\ud800***"
        plain = ("a" * size) + f" {secret} http://me:pw@host/v1"
        assert redact(plain) == ("a" * size) + " *** http://***@host/v1"
        assert redact_bytes(plain.encode()) == redact(plain).encode()


def test_a_secret_remembered_later_is_masked_from_then_on() -> None:
    first, later = "sk-first-known-5521", "sk-known-later-5521"
    remember([first])
    line = f"{first} {later} ".encode() * 100
    assert redact_bytes(line) == f"*** {later} ".encode() * 100
    remember([later])
    assert redact_bytes(line) == b"*** *** " * 100


def test_a_results_log_line_is_the_bytes_the_python_loop_wrote(tmp_path) -> None:
    secrets = ["sk-log-line-secret-0001", "sk-log-line-secret-00", "tok-\u00e9t\u00e9-7788"]
    remember(secrets)
    record = {
        "row_key": "k",
        "row_index": 0,
        "run_index": 0,
        "error": f"401 from http://u:{secrets[0]}@h/v1: key {secrets[1]}1 and {secrets[2]} rejected",
        "final_messages": [{"role": "user", "content": "é" * 3000 + secrets[0]}],
    }
    log = ResultsLog.create(tmp_path / "log.jsonl", {"a": 1})
    log.append(record)
    log.close()
    written = (tmp_path / "log.jsonl").read_bytes().splitlines(keepends=True)[1]
    stamped = orjson.loads(written)
    for name in ("invocation", "invocation_ms", "invocation_cpu_ms"):
        record[name] = stamped[name]
    # The old gate: decoded, every remembered secret replaced longest first, URL user info hidden.
    text = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE).decode()
    expected = redact(python_loop(text, secrets))
    assert written == expected.encode()
    assert secrets[0] not in written.decode() and "http://***@h/v1" in written.decode()


class _Tagged(dict):
    pass


class _Odd:
    def __str__(self) -> str:
        return "odd"


@pytest.mark.parametrize(
    "record",
    [
        {"row_key": "k", "row_index": 3, "run_index": 1, "scores": {"f": 0.5}, "error": None},
        {"row_key": "k", "row_index": 0, "scores": {1: 0.5, None: 1.0, 2.5: 0.0}, "at": _Odd()},
        {"row_key": "k", "invocation": 9, "row_index": 0},
        {},
        _Tagged(row_key="k", row_index=0),
    ],
)
@pytest.mark.parametrize("index_base", [0, 1])
def test_a_stamped_line_is_the_bytes_of_the_merged_record(tmp_path, record, index_base) -> None:
    from osmosis_ai.stats import rebase_indices

    log = ResultsLog.create(tmp_path / "log.jsonl", {"a": 1})
    log.index_base = index_base
    log.append(record)
    log.close()
    written = (tmp_path / "log.jsonl").read_bytes().splitlines(keepends=True)[1]
    stamp = {
        name: orjson.loads(written)[name] for name in ("invocation", "invocation_ms", "invocation_cpu_ms")
    }
    merged = {**record, **stamp}
    merged = rebase_indices(merged, -index_base) if index_base else merged
    option = orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    assert written == orjson.dumps(merged, default=str, option=option)
