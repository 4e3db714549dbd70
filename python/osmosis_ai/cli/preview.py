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

from osmosis_ai.cli.output import emit_result, json_result
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
    "-n",
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    help="Show at most this many records (here -n is a count of records, not runs).",
)
@json_result
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
    records = []
    for i, record in enumerate(read_dataset(file, contract="any", limit=limit), start=1):
        click.echo("")
        click.echo(f"{label} #{i}")
        click.echo(json.dumps(record, indent=2, ensure_ascii=False))
        records.append(record)
    if limit is not None and limit < report.rows:
        click.echo("")
        click.echo(f"... {report.rows - limit} more not shown")
    emit_result({"path": str(file), "kind": "dataset", "total": report.rows, "records": records})


# --- YAML rubric configs -----------------------------------------------------------------------------


def _preview_yaml(file: Path, limit: int | None) -> None:
    from osmosis_ai.rubric.config import read_rubric_entries

    entries = read_rubric_entries(file)
    click.echo(f"Loaded {len(entries)} rubric config(s) from {file}")
    shown = entries if limit is None else entries[:limit]
    for i, raw in enumerate(shown, start=1):
        click.echo("")
        click.echo(f"Rubric config #{i} ({raw.label})")
        click.echo(_dump_yaml(raw.node).rstrip("\n"))
    records = [{"label": raw.label, "config": raw.node} for raw in shown]
    emit_result({"path": str(file), "kind": "rubric_configs", "total": len(entries), "records": records})


def _dump_yaml(entry: dict[str, Any]) -> str:
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(entry, Dumper=_Dumper, sort_keys=False, indent=2, allow_unicode=True)
