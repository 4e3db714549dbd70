"""Writing result files so that a crash never leaves a half-written one."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

from osmosis_ai.redact import redact

__all__ = ["check_output_file", "fsync_dir", "write_json_atomic"]


# The encoder's chunks (a key, a value, punctuation) masked and written at a time by write_json_atomic.
_PIECE = 4096


def write_json_atomic(path: Path, payload: Any, *, ensure_ascii: bool = True) -> None:
    """Writes ``payload`` as indented JSON to ``path`` via a temporary file and a rename.

    Parent directories are created. ``ensure_ascii`` follows :func:`json.dumps` (the established eval output
    escapes non-ASCII; the rubric output does not).

    Example:
        >>> write_json_atomic(Path(tmp) / "out" / "results.json", {"ok": True})  # doctest: +SKIP
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    encoder = json.JSONEncoder(indent=2, ensure_ascii=ensure_ascii, default=str)
    with tmp.open("w", encoding="utf-8") as handle:
        # Written in pieces of the encoder's chunks, not as one string (a results file of 100k records is
        # hundreds of MB of text). A piece ends between chunks, which never split a JSON string, so each
        # secret is masked whole; masking cannot break the JSON: a secret becomes ``***`` in its string.
        chunks = encoder.iterencode(payload)
        while piece := "".join(itertools.islice(chunks, _PIECE)):
            handle.write(redact(piece))
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


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
    """Refuses an output file that is a directory or cannot be created, before a run spends anything.

    The message names the options field as ``{field}`` (see :class:`~osmosis_ai.errors.RunError`).

    Example:
        >>> check_output_file("/")  # doctest: +SKIP
        Traceback (most recent call last):
        OptionsError: output: / is a directory; give a file name such as /results.json
    """
    from osmosis_ai.errors import OptionsError

    if path is None:
        return
    target = Path(path)
    where = "{" + field + "}"

    def refuse(problem: str) -> OptionsError:
        return OptionsError(f"{where}: {problem}", fields=(field,))

    if target.is_dir():
        raise refuse(f"{target} is a directory; give a file name such as {target / 'results.json'}")
    # The nearest existing ancestor decides: missing directories are created at write time.
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise refuse(f"cannot create {target}: {folder} is not a directory")
    if target.exists() and not os.access(target, os.W_OK):
        raise refuse(f"{target} is not writable")
    if not target.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise refuse(f"cannot create {target}: {folder} is not writable")
