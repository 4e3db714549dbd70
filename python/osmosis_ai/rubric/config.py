"""Rubric configs: YAML files declaring rubric entries anywhere in their documents.

Any mapping with a string ``rubric`` key is an entry (the walker does not descend into entries), so
``rubrics: [...]`` is a convention, not a requirement. Document-level ``default_*`` keys fill gaps.
Errors name the file, the document (1-based) and the entry's full path (``rubrics[2]``,
``groups.math[0]``) so nested configs never produce ambiguous labels.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import ConfigError

__all__ = ["RawRubric", "RubricEntry", "find_config", "load_rubric_configs", "read_rubric_entries"]

CONFIG_NAME = "rubric_configs.yaml"


@dataclass
class RubricEntry:
    """One rubric of a config file."""

    id: str
    rubric: str
    model_info: dict[str, Any]
    score_min: float | None = None
    score_max: float | None = None
    system_prompt: str | None = None
    original_input: str | None = None
    ground_truth: str | None = None
    source_label: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rubric_text(self) -> str:
        """The rubric text, under the attribute name the established ``RubricConfig`` used."""
        return self.rubric


def find_config(data_path: Path, explicit: Path | None, cwd: Path | None = None) -> Path:
    """``--config``, else the first ``rubric_configs.yaml`` in the data folder, ``.`` or ``./examples``."""
    if explicit is not None:
        if not explicit.exists():
            raise ConfigError(f"Rubric config '{explicit}' does not exist.")
        if explicit.is_dir():
            raise ConfigError(f"Rubric config '{explicit}' is a directory; expected a YAML file.")
        return explicit
    cwd = cwd or Path.cwd()
    candidates: list[Path] = []
    for candidate in (data_path.parent / CONFIG_NAME, cwd / CONFIG_NAME, cwd / "examples" / CONFIG_NAME):
        if candidate not in candidates:
            candidates.append(candidate)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    checked = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"No rubric config found (checked: {checked}). Pass one with --config.")


def _number(value: Any, where: str, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: '{key}' must be a number, got {value!r}")
    return float(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _walk(node: Any, path: str, found: list[tuple[str, dict[str, Any]]]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("rubric"), str):
            found.append((path, node))
            return
        for key, value in node.items():
            _walk(value, f"{path}.{key}" if path else str(key), found)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _walk(value, f"{path}[{index}]", found)


def _document_defaults(doc: dict[str, Any], where: str) -> dict[str, Any]:
    if "default_extra_info" in doc:
        raise ConfigError(f"{where}: 'default_extra_info' is no longer supported; remove it.")
    model_info = doc.get("default_model_info")
    if model_info is not None and not isinstance(model_info, dict):
        raise ConfigError(f"{where}: 'default_model_info' must be a mapping")
    return {
        "model_info": model_info,
        "score_min": _number(doc.get("default_score_min"), where, "default_score_min"),
        "score_max": _number(doc.get("default_score_max"), where, "default_score_max"),
        "system_prompt": _text(doc.get("default_system_prompt")),
        "original_input": _text(doc.get("default_original_input")),
        "ground_truth": _text(doc.get("default_ground_truth")),
    }


def _entry(node: dict[str, Any], where: str, label: str, defaults: dict[str, Any]) -> RubricEntry:
    if "extra_info" in node:
        raise ConfigError(f"{where}: rubric entries must not include 'extra_info'")
    rubric_id = node.get("id")
    if not isinstance(rubric_id, str) or not rubric_id.strip():
        raise ConfigError(f"{where}: 'id' must be a non-empty string")
    if not node["rubric"].strip():
        raise ConfigError(f"{where}: 'rubric' must be a non-empty string")
    model_info = node.get("model_info", defaults["model_info"])
    if not isinstance(model_info, dict):
        raise ConfigError(f"{where}: 'model_info' is required (a mapping with provider and model)")

    def pick(key: str) -> Any:
        return node[key] if key in node else defaults[key]

    known = {"id", "rubric", "model_info", "score_min", "score_max", "system_prompt", "original_input"}
    return RubricEntry(
        id=rubric_id.strip(),
        rubric=node["rubric"],
        model_info=copy.deepcopy(model_info),
        score_min=_number(node["score_min"], where, "score_min")
        if "score_min" in node
        else defaults["score_min"],
        score_max=_number(node["score_max"], where, "score_max")
        if "score_max" in node
        else defaults["score_max"],
        system_prompt=_text(pick("system_prompt")),
        original_input=_text(pick("original_input")),
        ground_truth=_text(pick("ground_truth")),
        source_label=label,
        extra={k: v for k, v in node.items() if k not in known | {"ground_truth"}},
    )


@dataclass
class RawRubric:
    """One rubric entry as written: where it is, the mapping itself, and its document's defaults."""

    label: str
    where: str
    node: dict[str, Any]
    defaults: dict[str, Any]


def read_rubric_entries(path: Path) -> list[RawRubric]:
    """The one reader of rubric YAML: documents, versions, defaults, every entry, duplicate ids.

    Entries are not validated beyond their id (``osmosis preview`` shows them as written);
    :func:`load_rubric_configs` validates them.

    Raises:
        ConfigError: Invalid YAML, bad document keys, mixed or unsupported versions, a duplicate id,
            or no entries at all.
    """
    import yaml

    try:
        documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    found: list[RawRubric] = []
    versions: set[int] = set()
    seen: dict[str, str] = {}
    for number, doc in enumerate(documents, start=1):
        if not isinstance(doc, dict):
            continue
        where = f"{path} (document {number})"
        if "version" in doc:
            version = doc["version"]
            if isinstance(version, bool) or not isinstance(version, int) or version < 0:
                raise ConfigError(f"{where}: 'version' must be a non-negative integer, got {version!r}")
            versions.add(version)
        defaults = _document_defaults(doc, where)
        nodes: list[tuple[str, dict[str, Any]]] = []
        _walk(doc, "", nodes)
        for label, node in nodes:
            label = label or f"document[{number}]"
            rubric_id = node.get("id")
            if isinstance(rubric_id, str) and rubric_id.strip():
                if rubric_id.strip() in seen:
                    raise ConfigError(
                        f"{where}, entry '{label}': duplicate rubric id '{rubric_id.strip()}' "
                        f"(first at {seen[rubric_id.strip()]})"
                    )
                seen[rubric_id.strip()] = f"{path}:{label}"
            found.append(RawRubric(label, f"{where}, entry '{label}'", node, defaults))
    if len(versions) > 1:
        raise ConfigError(f"{path}: documents declare different versions {sorted(versions)}")
    if versions and versions != {1}:
        raise ConfigError(f"{path}: Unsupported rubric config version {versions.pop()} (expected 1)")
    if not found:
        raise ConfigError(
            f"{path}: No rubric entries found (a rubric entry is a mapping with 'id' and 'rubric')"
        )
    return found


def load_rubric_configs(path: Path) -> dict[str, RubricEntry]:
    """Parses a rubric config file strictly; returns entries by id (in file order).

    Raises:
        ConfigError: Invalid YAML, an invalid entry, a duplicate id, an unsupported version, or no entries.

    Example:
        >>> entries = load_rubric_configs(Path("rubric_configs.yaml"))  # doctest: +SKIP
        >>> entries["helpfulness"].model_info["provider"]
        'openai'
    """
    entries: dict[str, RubricEntry] = {}
    for raw in read_rubric_entries(path):
        entry = _entry(raw.node, raw.where, f"{path}:{raw.label}", raw.defaults)
        entries[entry.id] = entry
    return entries
