"""Writing result files so that a crash never leaves a half-written one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from osmosis_ai.redact import redact

__all__ = ["fsync_dir", "write_json_atomic"]


def write_json_atomic(path: Path, payload: Any, *, ensure_ascii: bool = True) -> None:
    """Writes ``payload`` as indented JSON to ``path`` via a temporary file and a rename.

    Parent directories are created. ``ensure_ascii`` follows :func:`json.dumps` (the established eval output
    escapes non-ASCII; the rubric output does not).

    Example:
        >>> write_json_atomic(Path(tmp) / "out" / "results.json", {"ok": True})  # doctest: +SKIP
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    text = json.dumps(payload, indent=2, ensure_ascii=ensure_ascii, default=str)
    # Masking in the JSON text cannot break it: a secret becomes ``***`` inside the same string.
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(redact(text) + "\n")
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
