"""Two checks of an ATIF document for tests: the package's own (the Rust core, :mod:`osmosis_ai.atif`) and an
independent one written apart from it, a JSON Schema from the public ATIF RFC (``fixtures/atif``, checked
with ``jsonschema``) plus the RFC's cross-field rules in plain Python. A document the package writes must
pass both; a broken one must fail both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from osmosis_ai.atif import check_trajectory

SCHEMA = json.loads((Path(__file__).parent / "fixtures/atif/atif-v1.7.schema.json").read_text())
_VALIDATOR = Draft202012Validator(SCHEMA)


def _rule_problems(document: Mapping[str, Any], where: str = "") -> list[str]:
    """The RFC rules a schema cannot state: steps numbered 1, 2, ...; observation results naming a tool call
    of their own step; no metrics on a step that made no LLM call; unique embedded subagent ids."""
    problems = []
    for index, step in enumerate(document.get("steps") or []):
        if step.get("step_id") != index + 1:
            problems.append(f"{where}steps[{index}].step_id is not {index + 1}")
        ids = {call.get("tool_call_id") for call in step.get("tool_calls") or []}
        for result in (step.get("observation") or {}).get("results") or []:
            if result.get("source_call_id") is not None and result["source_call_id"] not in ids:
                problems.append(f"{where}steps[{index}] observes a tool call it did not make")
        if step.get("llm_call_count") == 0 and step.get("metrics") is not None:
            problems.append(f"{where}steps[{index}] has metrics but made no LLM call")
    children = document.get("subagent_trajectories") or []
    ids = [child.get("trajectory_id") for child in children]
    if None in ids or len(set(ids)) != len(ids):
        problems.append(f"{where}subagent_trajectories need unique trajectory_id values")
    for index, child in enumerate(children):
        problems += _rule_problems(child, f"{where}subagent_trajectories[{index}].")
    return problems


def independent_problems(document: Any) -> list[str]:
    """What the independent check finds wrong (empty: valid)."""
    found = [
        f"{'.'.join(map(str, e.absolute_path)) or '<document>'}: {e.message}"
        for e in _VALIDATOR.iter_errors(document)
    ]
    if not found and isinstance(document, Mapping):
        found = _rule_problems(document)
    return found


def assert_valid_atif(document: Mapping[str, Any]) -> None:
    """Both checks accept ``document``."""
    ours = check_trajectory(document)
    assert ours.valid, ours.describe()
    assert independent_problems(document) == []


def assert_invalid_atif(document: Mapping[str, Any], field: str) -> None:
    """Both checks refuse ``document``; ours names ``field``."""
    ours = check_trajectory(document)
    assert not ours.valid and ours.field == field, ours
    assert independent_problems(document), "the independent check accepted it"
