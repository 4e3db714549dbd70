"""Exceptions and messages users' code matches (`except CLIError`, `pytest.raises(..., match=...)`) keep
the established classes and words, while still naming the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from osmosis_ai.cli_services import CLIError
from osmosis_ai.cli_services.dataset import DatasetLoader
from osmosis_ai.errors import DatasetFormatError


@pytest.mark.parametrize(
    "text,words",
    [
        ('{"solution_str": "a"}\n{oops\n', "Invalid JSON on line 2 of '{path}'"),
        ('{"solution_str": "a"}\n[1, 2]\n', "Expected JSON object on line 2 of '{path}'"),
        ("\n\n", "No JSON records found in '{path}'."),
        (
            '{"conversation_id": "c7", "solution_str": "  "}\n',
            "Record 'c7' must include a non-empty 'solution_str' string",
        ),
    ],
)
def test_the_0_2_dataset_loader_raises_what_except_cli_error_catches(
    tmp_path: Path, text: str, words: str
) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(text)
    with pytest.raises(CLIError) as info:
        DatasetLoader().load(path)
    assert words.format(path=path) in str(info.value)
    assert isinstance(info.value, DatasetFormatError) and info.value.path == str(path)


def test_a_good_file_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps({"id": "r1", "solution_str": "hello", "ground_truth": "hi"}) + "\n")
    [record] = DatasetLoader().load(path)
    assert record.solution_str == "hello" and record.ground_truth == "hi"


def test_rollout_errors_keep_the_established_words() -> None:
    from osmosis_ai.rollout import (
        AgentLoopNotFoundError,
        CompletionsRequest,
        RolloutRequest,
        ToolArgumentError,
        parse_tool_arguments,
        set_max_metadata_size_bytes,
    )

    assert "Available: ['a', 'b']" in str(AgentLoopNotFoundError("x", ["a", "b"]))
    assert "Available: []" in str(AgentLoopNotFoundError("x"))
    with pytest.raises(ToolArgumentError, match="Invalid JSON"):
        parse_tool_arguments("{oops")
    with pytest.raises(ToolArgumentError, match="Expected dict"):
        parse_tool_arguments("[1]")
    with pytest.raises(ToolArgumentError, match="Expected str or dict"):
        parse_tool_arguments(5)  # type: ignore[arg-type]
    base = {"server_url": "http://127.0.0.1:8080", "messages": [], "completion_params": {}}
    with pytest.raises(ValidationError, match="string_too_long"):
        RolloutRequest(rollout_id="a" * 257, **base)
    with pytest.raises(ValidationError, match="exceeds maximum"):
        RolloutRequest(rollout_id="r", metadata={"data": "x" * (1024 * 1024 + 1)}, **base)
    with pytest.raises(ValueError, match="must be positive"):
        set_max_metadata_size_bytes(0)
    with pytest.raises(ValidationError, match="cannot be empty or whitespace"):
        CompletionsRequest(rollout_id="   ", messages=[])


def test_the_llm_client_exposes_its_established_attributes() -> None:
    from osmosis_ai.rollout import OsmosisLLMClient

    client = OsmosisLLMClient(
        server_url="http://localhost:8080", rollout_id="r", api_key="k", timeout_seconds=60
    )
    assert (client.api_key, client.timeout_seconds, client.max_retries) == ("k", 60, 3)
    assert OsmosisLLMClient("http://localhost:8080", "r").timeout_seconds == 300.0
