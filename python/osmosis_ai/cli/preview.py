"""`osmosis preview -p/--path FILE`: show a rubric config (YAML) or the records of a dataset file.

YAML files are rubric configs (spec 5.2, non-strict): every mapping with a string ``rubric`` key is an
entry, shown with its label. ``.jsonl``, ``.json``, ``.csv`` and ``.parquet`` files are checked whole
(every row must be a JSON object; nothing else is checked) before any record is printed, so a bad line
fails the command with its line number instead of leaving half a listing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from osmosis_ai.errors import CLIError

_DATASET_LABELS = {
    ".jsonl": "JSONL record",
    ".json": "JSON record",
    ".csv": "CSV row",
    ".parquet": "Parquet row",
}
_YAML = (".yaml", ".yml")


def _check_path(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.exists():
        raise CLIError(f"Path '{raw}' does not exist.")
    if path.is_dir():
        raise CLIError(f"Path '{raw}' is a directory; expected a file.")
    ext = path.suffix.lower()
    if ext not in _YAML and ext not in _DATASET_LABELS:
        shown = ext or "(none)"
        raise CLIError(
            f"Unsupported file extension '{shown}'. Expected .yaml, .yml, .jsonl, .json, .csv or .parquet."
        )
    return path


@click.command("preview")
@click.option("-p", "--path", "path", required=True, help="A rubric config (.yaml/.yml) or dataset file.")
@click.option(
    "-n", "--limit", type=click.IntRange(min=0), default=None, help="Show at most this many records."
)
def preview(path: str, limit: int | None) -> None:
    """Show the rubric configs of a YAML file or the records of a JSONL/JSON/CSV/Parquet dataset."""
    file = _check_path(path)
    if file.suffix.lower() in _YAML:
        _preview_yaml(file, limit)
    else:
        _preview_dataset(file, _DATASET_LABELS[file.suffix.lower()], limit)


def _preview_dataset(file: Path, label: str, limit: int | None) -> None:
    from osmosis_ai.datasets import read_dataset, validate_dataset

    report = validate_dataset(file, contract="any", max_problems=1)
    if report.problems:
        problem = report.problems[0]
        if problem.kind == "empty":
            noun = "JSON records" if file.suffix.lower() in (".jsonl", ".json") else "rows"
            raise CLIError(f"No {noun} found in {file}")
        raise CLIError(str(problem))
    click.echo(f"Loaded {report.rows} {label}(s) from {file}")
    for i, record in enumerate(read_dataset(file, contract="any", limit=limit), start=1):
        click.echo("")
        click.echo(f"{label} #{i}")
        click.echo(json.dumps(record, indent=2, ensure_ascii=False))
    if limit is not None and limit < report.rows:
        click.echo("")
        click.echo(f"... {report.rows - limit} more not shown")


# --- YAML rubric configs -----------------------------------------------------------------------------


def _rubric_entries(node: Any, key: str | None, found: list[tuple[str, dict[str, Any]]], top: str) -> None:
    """Collects every mapping with a string ``rubric`` key; does not descend into an entry."""
    if isinstance(node, dict):
        if isinstance(node.get("rubric"), str):
            found.append((key or top, node))
            return
        for k, v in node.items():
            _rubric_entries(v, str(k), found, top)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _rubric_entries(item, f"{key}[{i}]" if key else f"{top}[{i}]", found, top)


def _check_document(doc: dict[str, Any], index: int, file: Path, versions: set[int]) -> None:
    if "default_extra_info" in doc:
        raise CLIError(f"{file}: document {index}: 'default_extra_info' is no longer supported")
    if "version" in doc:
        version = doc["version"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise CLIError(f"{file}: document {index}: 'version' must be an integer, got {version!r}")
        if version < 0:
            raise CLIError(f"{file}: document {index}: 'version' must not be negative")
        versions.add(version)
    if len(versions) > 1:
        raise CLIError(f"{file}: documents declare different versions: {sorted(versions)}")
    if versions and versions != {1}:
        raise CLIError(f"{file}: Unsupported rubric config version {versions.pop()} (expected 1)")


def _preview_yaml(file: Path, limit: int | None) -> None:
    import yaml

    try:
        documents = list(yaml.safe_load_all(file.read_text(encoding="utf-8")))
    except yaml.YAMLError as exc:
        raise CLIError(f"{file}: invalid YAML: {exc}") from exc
    entries: list[tuple[str, dict[str, Any]]] = []
    versions: set[int] = set()
    seen_ids: dict[str, str] = {}
    for index, doc in enumerate(documents):
        if doc is None:
            continue
        if isinstance(doc, dict):
            _check_document(doc, index, file, versions)
        found: list[tuple[str, dict[str, Any]]] = []
        _rubric_entries(doc, None, found, f"document[{index}]")
        for label, entry in found:
            rubric_id = entry.get("id")
            if isinstance(rubric_id, str) and rubric_id.strip():
                if rubric_id.strip() in seen_ids:
                    raise CLIError(
                        f"{file}: duplicate rubric id '{rubric_id.strip()}' "
                        f"({seen_ids[rubric_id.strip()]} and {label})"
                    )
                seen_ids[rubric_id.strip()] = label
        entries.extend(found)
    if not entries:
        raise CLIError(f"No rubric entries found in {file}")
    click.echo(f"Loaded {len(entries)} rubric config(s) from {file}")
    shown = entries if limit is None else entries[:limit]
    for i, (label, entry) in enumerate(shown, start=1):
        click.echo("")
        click.echo(f"Rubric config #{i} ({label})")
        click.echo(_dump_yaml(entry).rstrip("\n"))


def _dump_yaml(entry: dict[str, Any]) -> str:
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(entry, Dumper=_Dumper, sort_keys=False, indent=2, allow_unicode=True)
