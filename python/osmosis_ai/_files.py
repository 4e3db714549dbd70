"""Writing result files: checked before anything runs, never half-written, never over what is not a file.

The one home of the ``-o`` rule (every command's results file, metrics and report page): the target is
checked before the run (:func:`check_output_path`: a directory, a device, a FIFO or a socket is refused,
and so is a place where no file can be created); ``-`` means standard output; a symbolic link is written
through to its target (the link stays); the file is written to a temporary name beside its target and
renamed over it, so a crash never leaves half a file and nothing but a regular file is ever replaced. Every
byte passes the redaction gate (:func:`osmosis_ai.redact.redact`) on its way out.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, TextIO

import orjson

from osmosis_ai.errors import OutputPathError
from osmosis_ai.redact import redact, redact_bytes

__all__ = [
    "STDOUT",
    "LaidOutList",
    "check_output_file",
    "check_output_path",
    "fsync_dir",
    "json_block",
    "orjson_dumps",
    "output_writer",
    "results_to",
    "write_json_atomic",
    "write_json_streamed",
    "write_text_output",
]

STDOUT = "-"
_result_stream: TextIO | None = None

PathLike = str | os.PathLike[str]


@contextlib.contextmanager
def results_to(stream: TextIO) -> Iterator[None]:
    """Sends ``-`` outputs to ``stream`` meanwhile (the CLI: stdout, while its own text goes to stderr)."""
    global _result_stream
    previous, _result_stream = _result_stream, stream
    try:
        yield
    finally:
        _result_stream = previous


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def _target(path: Path) -> Path:
    """The regular file ``path`` names, symbolic links followed (it need not exist yet).

    Raises:
        OutputPathError: It is a directory or anything but a regular file.
    """
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a parent that is a file is named by the caller
        return real
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise OutputPathError(f"{path} is a directory; give a file name such as {path / 'results.json'}")
    if not stat.S_ISREG(mode):
        where = f" ({real})" if real != path.absolute() else ""
        raise OutputPathError(
            f"{path}{where} is a {_kind(mode)}, not a regular file: a results file is never written over "
            "one (give a file name, or - for standard output)"
        )
    return real


def check_output_path(path: PathLike | None) -> None:
    """Refuses an output file that cannot be written, before anything runs.

    ``-`` (standard output) and None pass. Missing parent directories are fine (they are created at write
    time) when the nearest existing one lets a file be created, which is tried for real: permission bits
    say nothing of a read-only mount or of ``/proc``, and nothing of anything to root.

    Raises:
        OutputPathError: A directory, a device, a FIFO or a socket; an existing file that is not writable;
            a parent that is not a directory or where no file can be created.

    Example:
        >>> check_output_path("/dev/null")  # doctest: +SKIP
        Traceback (most recent call last):
        OutputPathError: /dev/null is a character device, not a regular file: ...
    """
    if path is None or str(path) == STDOUT:
        return
    given = Path(path)
    target = _target(given)
    if target.exists():
        if not os.access(target, os.W_OK):
            raise OutputPathError(f"{given} is not writable")
        return
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputPathError(f"cannot create {given}: {folder} is not a directory")
    probe = folder / f".osmosis-write-check-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as exc:
        raise OutputPathError(f"cannot create {given}: {folder}: {exc.strerror or exc}") from None
    os.unlink(probe)


@contextlib.contextmanager
def output_writer(path: PathLike, *, binary: bool = False) -> Iterator[Callable[[Any], object]]:
    """Yields a ``write(text)`` for the output ``path`` (see the module docstring); the file appears whole
    when the block ends without an error, and not at all otherwise. ``binary``: ``write(data)`` takes
    UTF-8 bytes instead (no decoding on the way to a file).

    Each piece of text is redacted as it is written: write whole values (a JSON block, a line), never a
    string cut in two, so that a secret cannot straddle two writes.

    Raises:
        OutputPathError: ``path`` is (or became) a directory or anything but a regular file.
    """
    if str(path) == STDOUT:
        stream = _result_stream or sys.stdout
        if binary:
            yield lambda data: stream.write(redact(data.decode()))
        else:
            yield lambda text: stream.write(redact(text))
        stream.flush()
        return
    target = _target(Path(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        handle: IO[Any] = tmp.open("xb") if binary else tmp.open("x", encoding="utf-8")
        with handle:
            yield (
                (lambda data: handle.write(redact_bytes(data)))
                if binary
                else (lambda text: handle.write(redact(text)))
            )
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(_target(target)).st_mode))  # a replaced file keeps its mode
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    fsync_dir(target.parent)


def write_text_output(path: PathLike, text: str) -> None:
    """Writes ``text`` as the output ``path`` (see :func:`output_writer`)."""
    with output_writer(path) as write:
        write(text)


# Bytes of encoded JSON joined into one write (each write is masked as a whole).
_STREAM_PIECE = 1 << 16
# What json.dumps(indent=2, default=str) does with the same values: dataclasses and datetimes go to
# ``default`` (str) as there, not to orjson's own forms; keys that are not strings as orjson_dumps adds.
_ORJSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
# What json.dumps escapes with ensure_ascii beyond what orjson escapes: DEL and every non-ASCII character.
_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def _ascii_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None, as orjson writes them (for the standard encoder)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_block(value: Any, *, ensure_ascii: bool = True) -> str:
    r"""``json.dumps(value, indent=2, ensure_ascii=ensure_ascii, default=str)``, encoded by orjson: the one
    JSON encoder of the files a user reads (``-o`` results, metrics, manifests, trajectories).

    The same text but for floats below 1e-4, written in full (``0.00001`` for ``1e-05``; the same number),
    and NaN or infinities, written ``null`` (strict JSON has neither; nothing scored is null). Non-ASCII
    characters can only be inside strings, so with ``ensure_ascii`` each (and DEL) is escaped wherever it
    is. What orjson refuses (integers past 64 bits, lone surrogates) goes to the standard encoder, NaN
    still ``null``.

    Example:
        >>> print(json_block({"a": "é"}))
        {
          "a": "\u00e9"
        }
    """
    try:
        data = orjson_dumps(value, _ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(_finite(value), indent=2, ensure_ascii=ensure_ascii, default=str)
    return _ascii_if_asked(data, ensure_ascii).decode()


def _json_bytes(value: Any, ensure_ascii: bool) -> bytes:
    """:func:`json_block`'s text in UTF-8, made as bytes (decoded only to escape non-ASCII text)."""
    try:
        data = orjson_dumps(value, _ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return json_block(value, ensure_ascii=ensure_ascii).encode()
    return _ascii_if_asked(data, ensure_ascii)


def _ascii_if_asked(data: bytes, ensure_ascii: bool) -> bytes:
    """orjson's UTF-8 ``data`` with, under ``ensure_ascii``, each non-ASCII character and DEL escaped."""
    if ensure_ascii and (not data.isascii() or b"\x7f" in data):
        return _NON_ASCII.sub(_ascii_escape, data.decode()).encode()
    return data


def orjson_dumps(value: Any, option: int) -> bytes:
    """``orjson.dumps(value, default=str, option=option)``, keys that are not strings written as
    ``OPT_NON_STR_KEYS`` writes them. That option makes every call a fifth to a third slower, so it is
    asked for only when the value has such a key (the same bytes either way)."""
    try:
        return orjson.dumps(value, default=str, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(value, default=str, option=option | orjson.OPT_NON_STR_KEYS)


class _Streamed:
    """A member's list written item by item (its items may stream from a log)."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


class LaidOutList:
    """A member's list whose text the caller made as :func:`write_json_streamed` lays out a list's items:
    ``pieces`` holds whole items, each after its separator (``[\n    `` before the first, ``,\n    ``
    before the others) and four spaces deeper than :func:`json_block` puts it; ``count()``, asked once the
    pieces are written, says how many items they held."""

    def __init__(self, pieces: Iterable[bytes], count: Callable[[], int]) -> None:
        self.pieces = pieces
        self.count = count


def _object_pieces(members: Iterable[tuple[str, Any]], ensure_ascii: bool) -> Iterator[bytes]:
    """The UTF-8 text of ``{name: value, ...}`` as :func:`json_block` lays it out, in pieces: each member,
    and each item of a member's list (or :class:`_Streamed` items) on its own, so no piece is the document."""
    yield b"{"
    empty = True
    for name, value in members:
        yield (b"\n  " if empty else b",\n  ") + _json_bytes(name, ensure_ascii) + b": "
        empty = False
        if isinstance(value, LaidOutList):
            yield from value.pieces
            yield b"\n  ]" if value.count() else b"[]"
            continue
        if not isinstance(value, list | tuple | _Streamed):
            yield _json_bytes(value, ensure_ascii).replace(b"\n", b"\n  ")
            continue
        items = value.items if isinstance(value, _Streamed) else value
        count = 0
        for item in items:
            data = _json_bytes(item, ensure_ascii).replace(b"\n", b"\n    ")
            yield (b"[\n    " if count == 0 else b",\n    ") + data
            count += 1
        yield b"\n  ]" if count else b"[]"
    yield b"}" if empty else b"\n}"


def _write_pieces(path: PathLike, pieces: Iterable[bytes]) -> None:
    """Writes ``pieces`` and a newline as the output ``path``, joined into writes of about 64 KiB (a piece
    ends between JSON values, never inside a string: each secret is masked whole)."""
    with output_writer(path, binary=True) as write:
        batch: list[bytes] = []
        size = 0
        for piece in pieces:
            batch.append(piece)
            size += len(piece)
            if size >= _STREAM_PIECE:
                write(b"".join(batch))
                batch, size = [], 0
        write(b"".join(batch) + b"\n")


def write_json_atomic(path: PathLike, payload: Any, *, ensure_ascii: bool = True) -> None:
    """Writes ``payload`` as indented JSON to ``path`` (see :func:`output_writer`), encoded by
    :func:`json_block` (the text of ``json.dumps(payload, indent=2, default=str)`` but for its two
    differences: NaN is ``null``, tiny floats are written in full).

    Parent directories are created. ``ensure_ascii`` follows :func:`json.dumps` (the established eval output
    escapes non-ASCII; the rubric output does not). Masking in the JSON text cannot break it: a secret
    becomes ``***`` inside the same string. A mapping with string keys is written member by member (and
    its lists item by item), not as one string: an ``osmosis test`` document of 100k rows is hundreds of MB.

    Example:
        >>> write_json_atomic(Path(tmp) / "out" / "results.json", {"ok": True})  # doctest: +SKIP
    """
    if isinstance(payload, Mapping) and all(isinstance(key, str) for key in payload):
        _write_pieces(path, _object_pieces(payload.items(), ensure_ascii))
    else:
        _write_pieces(path, [_json_bytes(payload, ensure_ascii)])


def write_json_streamed(
    path: PathLike,
    head: Mapping[str, Any],
    key: str,
    items: Iterable[Any] | LaidOutList,
    tail: Callable[[], Mapping[str, Any]],
    *,
    ensure_ascii: bool = True,
) -> None:
    """Writes ``{**head, key: [*items], **tail()}`` as :func:`write_json_atomic` does, holding one item at a
    time: ``items`` may stream from a log (or be a :class:`LaidOutList`, written as it is), and ``tail`` is
    asked for once they are written, so what it says may be counted as they pass.

    Example:
        >>> write_json_streamed(out, {"total": 2}, "rows", iter([{"i": 0}, {"i": 1}]), dict)  # doctest: +SKIP
    """

    def members() -> Iterator[tuple[str, Any]]:
        yield from head.items()
        yield key, items if isinstance(items, LaidOutList) else _Streamed(items)
        yield from tail().items()

    _write_pieces(path, _object_pieces(members(), ensure_ascii))


def fsync_dir(directory: Path) -> None:
    """Makes a rename inside ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_output_file(path: str | os.PathLike[str] | None, field: str = "output") -> None:
    """The options objects' check of an output file (the rule of :func:`check_output_path`), before a run
    spends anything; the message names the options field as ``{field}`` (see
    :class:`~osmosis_ai.errors.RunError`).

    Example:
        >>> check_output_file("/")  # doctest: +SKIP
        Traceback (most recent call last):
        OptionsError: output: / is a directory; give a file name such as /results.json
    """
    from osmosis_ai.errors import OptionsError

    try:
        check_output_path(path)
    except OutputPathError as exc:
        raise OptionsError("{" + field + "}: " + str(exc), fields=(field,)) from None
