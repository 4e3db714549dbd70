"""A rubric (YAML config entry + LLM judge) as an eval function, so ``reward probe --rubric ID`` probes it.

Each control goes to the judge exactly as an ``eval-rubric`` record would (same arguments, same request
builder, same reply parsing); an unscored or failed judgement is an error of that probe, never a 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_ai.errors import EvalFnError, MissingAPIKeyError
from osmosis_ai.eval.functions import EvalFunction, final_assistant_text
from osmosis_ai.rubric.config import RubricEntry
from osmosis_ai.rubric.records import RubricRecord

__all__ = ["rubric_eval_function"]


def rubric_eval_function(
    entry: RubricEntry, rubric_id: str, overrides: Mapping[str, Any] | None = None
) -> EvalFunction:
    """An :class:`EvalFunction` named ``rubric:<id>`` that judges the final answer with ``entry``.

    Example:
        >>> fn = rubric_eval_function(entries["helpful"], "helpful")  # doctest: +SKIP
        >>> fn.name  # doctest: +SKIP
        'rubric:helpful'
    """
    from osmosis_ai.rubric.judge import prepare, run_async
    from osmosis_ai.rubric.runner import judge_arguments

    async def judge(
        messages: Sequence[Mapping[str, Any]],
        ground_truth: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> float:
        row = dict(metadata or {})
        question = row.get("user_prompt")
        record = RubricRecord(
            line=0,
            data=row,
            solution_str=final_assistant_text(messages),
            label="probe",
            record_id="probe",
            ground_truth=None if ground_truth is None else str(ground_truth),
            original_input=question if isinstance(question, str) else None,
        )
        try:
            request = prepare(**judge_arguments(entry, record, dict(overrides or {})))
        except (TypeError, ValueError, MissingAPIKeyError) as exc:
            raise EvalFnError(f"judge request not made: {exc}") from exc
        outcome = await run_async(request)
        if outcome.reply is None:
            raise EvalFnError(f"judge {outcome.status}: {outcome.reason or outcome.error}")
        return outcome.reply.score

    return EvalFunction(name=f"rubric:{rubric_id}", func=judge, mode="full")
