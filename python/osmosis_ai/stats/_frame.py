"""A results file as a polars DataFrame (one row per run) for analysis; polars is imported on use."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from osmosis_ai.errors import StatsError
from osmosis_ai.stats._results import log_index_base

if TYPE_CHECKING:
    import polars as pl

__all__ = ["LoadedResults", "load_results"]

# Header keys that are not run fields (polars reads the header line as the frame's first row).
_HEADER_COLUMNS = ("format", "kind", "config", "index_base")


class LoadedResults(NamedTuple):
    """What :func:`load_results` returns: unpack it as ``frame, header = load_results(path)``.

    Attributes:
        frame: One row per run record.
        header: ``{"layout": ..., "kind": ..., "config": {...}}`` of the file (a log's also carries its
            ``dataset``, ``created_at`` and ``osmosis_version``).
    """

    frame: pl.DataFrame
    header: dict[str, Any]


_RUBRIC_RUN_FIELDS = (
    "status",
    "explanation",
    "preview",
    "raw_score",
    "clamped",
    "unscored_reason",
    "attempts",
    "retries",
    "parse_failures",
    "usage",
)


def _from_one(index: Any) -> Any:
    return index - 1 if isinstance(index, int) and not isinstance(index, bool) else index


def _document_runs(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The runs of an eval or eval-rubric ``-o`` JSON, in the log's record layout."""
    rubric_id = doc.get("rubric_id")
    if rubric_id is not None or "records" in doc:
        name = rubric_id or "score"
        for record in doc.get("records") or []:
            for run in record.get("runs") or []:
                scored = run.get("status") == "success" and run.get("score") is not None
                # The established document numbers records and runs from 1; rows read from 0, as a log's.
                yield {
                    "row_index": _from_one(record.get("record_index")),
                    "run_index": _from_one(run.get("run_index")),
                    "model_tag": "",
                    "success": scored,
                    "scores": {name: run.get("score") if scored else None},
                    "error": run.get("error"),
                    "duration_ms": float(run.get("duration_seconds") or 0.0) * 1000.0,
                    # The judge's own fields, as a rubric log record holds them.
                    **{k: run[k] for k in _RUBRIC_RUN_FIELDS if k in run},
                }
        return
    for row in doc.get("rows") or []:
        for run in row.get("runs") or []:
            tag = run.get("model_tag") or ""
            yield {**run, "row_index": row.get("row_index"), "model_tag": "" if tag == "primary" else tag}


def _only_header(name: str) -> bool:
    """Whether a log holds its header and nothing else (polars cannot drop the header of such a file)."""
    with open(name, "rb") as handle:
        lines = (raw for raw in handle if raw.strip())
        next(lines, None)
        return next(lines, None) is None


def load_results(path: str | os.PathLike[str]) -> LoadedResults:
    """Loads a results file (any layout :func:`summarize_results` reads) as a polars DataFrame.

    One row per run record, with the record's fields as columns (``row_index``, ``run_index``,
    ``model_tag`` ("" for the primary model), ``success``, ``scores`` and ``eval_errors`` as struct
    columns, ``error``, ``tokens``, ...). Use :func:`summarize_results` for the statistics; this is
    for your own slicing.

    Args:
        path: The results log or ``-o`` JSON.

    Returns:
        ``LoadedResults(frame, header)``.

    Raises:
        ImportError: If polars is not installed.
        FileNotFoundError: If the file does not exist.
        StatsError: If the file is not a results file.

    Example:
        >>> import json, pathlib, tempfile
        >>> log = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> lines = [{"format": "osmosis-eval-log/1", "config": {"model": "m"}},
        ...          {"row_index": 0, "run_index": 0, "model_tag": "", "success": True, "scores": {"acc": 1.0}}]
        >>> _ = log.write_text("\\n".join(json.dumps(x) for x in lines) + "\\n")
        >>> frame, header = load_results(log)
        >>> (frame.height, frame["scores"].struct.field("acc").to_list(), header["config"])
        (1, [1.0], {'model': 'm'})
    """
    try:
        import polars as pl
    except ImportError as exc:  # pragma: no cover - polars is in the dev environment
        raise ImportError("load_results needs polars: pip install polars") from exc

    name = os.fspath(path)
    with open(name, "rb") as handle:
        first = b""
        for raw in handle:
            if raw.strip():
                first = raw
                break
    try:
        head = json.loads(first) if first else {"row_index": None}
    except ValueError:
        head = None
    if isinstance(head, dict) and ("format" in head or "row_index" in head):
        is_log = "format" in head
        header = {
            "layout": "log" if is_log else "records",
            "kind": head.get("kind") if is_log else None,
            "config": (head.get("config") or {}) if is_log else {},
            # What a report shows about the run; absent (None) in earlier logs.
            "dataset": head.get("dataset") if is_log else None,
            "created_at": head.get("created_at") if is_log else None,
            "osmosis_version": head.get("osmosis_version") if is_log else None,
        }
        if not first or (is_log and _only_header(name)):
            return LoadedResults(pl.DataFrame(), header)
        # polars reads the file itself (no copy through Python); the header is its first row.
        frame = pl.read_ndjson(name, infer_schema_length=None)
        if is_log:
            frame = frame.slice(1).drop([c for c in _HEADER_COLUMNS if c in frame.columns])
            base = log_index_base(head)
            if base:  # a rubric log of earlier versions counted from 1: read from 0, as every log
                frame = frame.with_columns(pl.col("row_index") - base, pl.col("run_index") - base)
        return LoadedResults(frame, header)
    with open(name, "rb") as handle:
        data = handle.read()
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise StatsError(f"{name}: not a results log or results JSON ({exc})", field="line") from None
    if not isinstance(doc, dict):
        raise StatsError(f"{name}: not a results log or results JSON (a JSON {type(doc).__name__})")
    rubric = "rubric_id" in doc or "records" in doc
    header = {
        "layout": "rubric-json" if rubric else "eval-json",
        "kind": "rubric" if rubric else None,
        "config": doc.get("config") or {},
    }
    runs = list(_document_runs(doc))
    return LoadedResults(pl.from_dicts(runs, infer_schema_length=None) if runs else pl.DataFrame(), header)
