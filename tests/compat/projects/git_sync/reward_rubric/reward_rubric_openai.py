"""A rubric reward that delegates to a judge model with the 0.2 `evaluate_rubric` form."""

import os

from osmosis_ai import evaluate_rubric, osmosis_rubric

RUBRIC = "Reward 1.0 when the final number equals the ground truth, else 0.0."


@osmosis_rubric
def compute_rubric_score_openai(solution_str: str, ground_truth: str, extra_info: dict, **kwargs) -> float:
    model_info = {"provider": "openai", "model": "judge-model", "api_key": os.getenv("OPENAI_API_KEY")}
    result = evaluate_rubric(
        rubric=RUBRIC,
        solution_str=solution_str,
        model_info=model_info,
        ground_truth=ground_truth,
        metadata=extra_info.get("metadata"),
        score_min=0.0,
        score_max=1.0,
        return_details=False,
    )
    return float(result)
