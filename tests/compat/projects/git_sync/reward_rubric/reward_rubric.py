"""A rubric reward driven by a YAML rubric suite and a JSONL record, through the 0.2 `cli_services` helpers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from osmosis_ai import evaluate_rubric, osmosis_rubric
from osmosis_ai.cli_services import CLIError, RubricConfig, load_rubric_suite
from osmosis_ai.cli_services.dataset import DatasetLoader, DatasetRecord
from osmosis_ai.rubric_eval import DEFAULT_API_KEY_ENV
from osmosis_ai.rubric_types import MissingAPIKeyError

HERE = Path(__file__).parent
CONFIG_PATH = HERE / "reward_rubric_config.yaml"
DATA_PATH = HERE / "reward_rubric_data.jsonl"
RUBRIC_ID = "support_followup"


def build_extra_info(config: RubricConfig, record: DatasetRecord) -> dict[str, Any]:
    model_info = dict(config.model_info or {})
    env_name = model_info.get("api_key_env") or DEFAULT_API_KEY_ENV[model_info["provider"].lower()]
    api_key = model_info.get("api_key") or os.getenv(env_name)
    if not api_key:
        raise MissingAPIKeyError(f"set {env_name}")
    return {
        "rubric": config.rubric_text,
        "model_info": {**model_info, "api_key": api_key},
        "score_min": config.score_min if config.score_min is not None else 0.0,
        "score_max": config.score_max if config.score_max is not None else 1.0,
        "metadata": record.metadata,
    }


@osmosis_rubric
def score_conversation(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
    return float(
        evaluate_rubric(
            rubric=extra_info["rubric"],
            solution_str=solution_str,
            model_info=extra_info["model_info"],
            ground_truth=ground_truth,
            metadata=extra_info.get("metadata"),
            score_min=extra_info["score_min"],
            score_max=extra_info["score_max"],
        )
    )


def run_example() -> float:
    config = load_rubric_suite(CONFIG_PATH).get(RUBRIC_ID)
    if config is None:
        raise CLIError(f"no rubric '{RUBRIC_ID}' in {CONFIG_PATH}")
    records = [r for r in DatasetLoader().load(DATA_PATH) if (r.rubric_id or "") == RUBRIC_ID]
    if not records:
        raise CLIError(f"no records for rubric '{RUBRIC_ID}' in {DATA_PATH}")
    record = records[0]
    return score_conversation(
        solution_str=record.solution_str,
        ground_truth=record.ground_truth or config.ground_truth,
        extra_info=build_extra_info(config, record),
    )
