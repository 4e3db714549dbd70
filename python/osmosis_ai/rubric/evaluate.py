"""``evaluate_rubric`` / ``aevaluate_rubric``: score one output against a rubric with a judge model.

``evaluate_rubric`` has two established forms and picks one by its arguments: with ``model_info=`` it is
the 0.2 form (synchronous, returns a float or the details dict); with ``model="provider/model"`` it is the
0.3 form (awaitable, keyword-only, returns a :class:`RubricResult`). Both run the one judge of
:mod:`osmosis_ai.rubric.judge`.
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, overload

from osmosis_ai.rubric.judge import prepare, run_async, run_sync

__all__ = ["ModelInfo", "RewardRubricRunResult", "RubricResult", "aevaluate_rubric", "evaluate_rubric"]


class ModelInfo(TypedDict, total=False):
    """The judge model and how to reach it. Only ``provider`` and ``model`` are required."""

    provider: str
    model: str
    api_key: str
    api_key_env: str
    base_url: str
    score_min: float
    score_max: float
    system_prompt: str
    original_input: str
    timeout: float
    temperature: float
    seed: int
    max_tokens: int
    reasoning_effort: str
    response_format: Literal["json_schema", "json_object", "none"]
    max_retries: int
    retry_base_delay: float
    max_parse_retries: int


class RewardRubricRunResult(TypedDict, total=False):
    """The ``return_details=True`` payload: the established keys plus judge-health fields."""

    score: float
    explanation: str
    raw: Any
    raw_score: float
    clamped: bool
    score_min: float
    score_max: float
    attempts: int
    retries: int
    parse_failures: int
    retry_waits: list[float]
    usage: dict[str, int]
    response_format: str


@dataclass(frozen=True)
class RubricResult:
    """The 0.3 form's result: the clamped score and the judge's explanation.

    Example:
        >>> RubricResult(score=0.5, explanation="half right").score
        0.5
    """

    score: float
    explanation: str


_FORMS = (
    "evaluate_rubric() takes model_info= (the 0.2 form: evaluate_rubric(rubric, solution_str, model_info), "
    "returns a float) or model= (the 0.3 form: await evaluate_rubric(solution_str=..., rubric=..., "
    'model="openai/gpt-5-mini"), returns a RubricResult)'
)


@overload
def evaluate_rubric(
    rubric: str,
    solution_str: str,
    model_info: ModelInfo | dict[str, Any],
    *,
    ground_truth: str | None = ...,
    original_input: str | None = ...,
    metadata: dict[str, Any] | None = ...,
    score_min: float | None = ...,
    score_max: float | None = ...,
    timeout: float | None = ...,
    return_details: Literal[False] = ...,
) -> float: ...
@overload
def evaluate_rubric(
    rubric: str,
    solution_str: str,
    model_info: ModelInfo | dict[str, Any],
    *,
    ground_truth: str | None = ...,
    original_input: str | None = ...,
    metadata: dict[str, Any] | None = ...,
    score_min: float | None = ...,
    score_max: float | None = ...,
    timeout: float | None = ...,
    return_details: Literal[True],
) -> RewardRubricRunResult: ...
@overload
def evaluate_rubric(
    *,
    solution_str: str,
    rubric: str,
    model: str,
    ground_truth: str | None = ...,
    original_input: str | None = ...,
    metadata: dict[str, Any] | None = ...,
    score_min: float = ...,
    score_max: float = ...,
    api_key: str | None = ...,
    timeout: float | None = ...,
    system_prompt: str | None = ...,
) -> Coroutine[Any, Any, RubricResult]: ...
def evaluate_rubric(
    rubric: str | None = None,
    solution_str: str | None = None,
    model_info: ModelInfo | dict[str, Any] | None = None,
    *,
    model: str | None = None,
    ground_truth: str | None = None,
    original_input: str | None = None,
    metadata: dict[str, Any] | None = None,
    score_min: float | None = None,
    score_max: float | None = None,
    timeout: float | None = None,
    return_details: bool = False,
    api_key: str | None = None,
    system_prompt: str | None = None,
) -> float | RewardRubricRunResult | Coroutine[Any, Any, RubricResult]:
    """Scores ``solution_str`` against ``rubric`` with a judge model reached through LiteLLM.

    The judge must answer ``{"score": number, "explanation": string}`` (a strict JSON schema is requested
    where the provider supports it). Rate limits, 5xx and timeouts are retried with backoff (honouring
    ``Retry-After``); an unparseable reply is asked again a bounded number of times and then raises
    :class:`~osmosis_ai.rubric.JudgeUnscoredError` with the reason, never a silent 0. The score is clamped
    into ``[score_min, score_max]``; the judge's own number is kept as ``raw_score`` in the details.

    This is the 0.2 form (``model_info=``). The 0.3 form (``model="provider/model"``, keyword-only,
    optional ``api_key`` and ``system_prompt``, ``score_min``/``score_max`` defaulting to 0.0/1.0) returns
    an awaitable of :class:`RubricResult` instead:
    ``result = await evaluate_rubric(solution_str=s, rubric=r, model="openai/gpt-5-mini")``.

    Args:
        rubric: What to judge, in natural language.
        solution_str: The model output to score.
        model_info: ``provider`` and ``model`` (required); ``api_key`` or ``api_key_env`` (default: the
            provider's variable, e.g. ``OPENAI_API_KEY``); optional ``base_url`` (else ``OPENAI_BASE_URL``
            and the like), ``score_min``/``score_max``, ``system_prompt``, ``original_input``,
            ``timeout``, ``temperature`` (default 0), ``seed``, ``max_tokens``, ``reasoning_effort``,
            ``response_format``, ``max_retries`` (3), ``retry_base_delay`` (1 s), ``max_parse_retries`` (2).
        ground_truth: A reference answer shown to the judge.
        original_input: The prompt the model answered (falls back to ``model_info["original_input"]``).
        metadata: Extra context shown to the judge as JSON.
        score_min: Lower bound (wins over ``model_info``; default 0.0).
        score_max: Upper bound (default 1.0); must exceed ``score_min``.
        timeout: Seconds per request (default per provider, 30 s for most).
        return_details: Return the full result payload instead of the score.

    Returns:
        The clamped score, or with ``return_details=True`` a dict with ``score``, ``explanation``, ``raw``
        (the provider response), ``raw_score``, ``clamped``, ``attempts``, ``retries``,
        ``parse_failures``, ``retry_waits`` and ``usage``.

    Raises:
        TypeError: A required argument or ``model_info`` key is missing or blank, or neither (or both) of
            ``model_info`` and ``model`` is given.
        ValueError: ``score_max <= score_min`` or a bad option value.
        MissingAPIKeyError: No API key could be resolved.
        ModelNotFoundError: The provider does not know the model.
        ProviderRequestError: The request failed after retries (``JudgeUnscoredError`` when replies
            could not be scored).

    Example:
        >>> evaluate_rubric(  # doctest: +SKIP
        ...     "Award 1.0 if the answer is polite.", "Thank you!",
        ...     {"provider": "openai", "model": "gpt-4o-mini", "api_key_env": "OPENAI_API_KEY"},
        ... )
        1.0
    """
    if model is not None:
        if model_info is not None:
            raise TypeError(f"both model_info= and model= were given; {_FORMS}")
        if return_details:
            raise TypeError(
                "return_details= belongs to the 0.2 form (model_info=); the 0.3 form returns a RubricResult"
            )
        return _judge_with_model(
            rubric=rubric,
            solution_str=solution_str,
            model=model,
            ground_truth=ground_truth,
            original_input=original_input,
            metadata=metadata,
            score_min=0.0 if score_min is None else score_min,
            score_max=1.0 if score_max is None else score_max,
            api_key=api_key,
            timeout=timeout,
            system_prompt=system_prompt,
        )
    if model_info is None:
        raise TypeError(_FORMS)
    if api_key is not None or system_prompt is not None:
        raise TypeError("api_key= and system_prompt= belong to the 0.3 form (model=); put them in model_info")
    request = prepare(
        rubric,  # type: ignore[arg-type]  # checked by prepare
        solution_str,  # type: ignore[arg-type]
        dict(model_info),
        ground_truth=ground_truth,
        original_input=original_input,
        metadata=metadata,
        score_min=score_min,
        score_max=score_max,
        timeout=timeout,
    )
    outcome = run_sync(request)
    reply = outcome.value()
    return outcome.details(request) if return_details else reply.score  # type: ignore[return-value]


def _model_info_for(model: str, api_key: str | None, system_prompt: str | None) -> dict[str, Any]:
    """The 0.3 ``model="provider/model"`` string as the judge's ``model_info``."""
    provider, sep, name = model.partition("/") if isinstance(model, str) else ("", "", "")
    if not sep or not provider.strip() or not name.strip():
        raise ValueError(f"model must be 'provider/model' (e.g. 'openai/gpt-5-mini'), got {model!r}")
    info: dict[str, Any] = {"provider": provider, "model": name}
    if api_key is not None:
        info["api_key"] = api_key
    if system_prompt is not None:
        info["system_prompt"] = system_prompt
    return info


async def _judge_with_model(
    *,
    rubric: str | None,
    solution_str: str | None,
    model: str,
    ground_truth: str | None,
    original_input: str | None,
    metadata: dict[str, Any] | None,
    score_min: float,
    score_max: float,
    api_key: str | None,
    timeout: float | None,
    system_prompt: str | None,
) -> RubricResult:
    request = prepare(
        rubric,  # type: ignore[arg-type]  # checked by prepare
        solution_str,  # type: ignore[arg-type]
        _model_info_for(model, api_key, system_prompt),
        ground_truth=ground_truth,
        original_input=original_input,
        metadata=metadata,
        score_min=score_min,
        score_max=score_max,
        timeout=timeout,
    )
    reply = (await run_async(request)).value()
    return RubricResult(score=reply.score, explanation=reply.explanation)


async def aevaluate_rubric(
    rubric: str,
    solution_str: str,
    model_info: ModelInfo | dict[str, Any],
    *,
    ground_truth: str | None = None,
    original_input: str | None = None,
    metadata: dict[str, Any] | None = None,
    score_min: float | None = None,
    score_max: float | None = None,
    timeout: float | None = None,
    return_details: bool = False,
) -> float | RewardRubricRunResult:
    """The asynchronous form of :func:`evaluate_rubric` (same arguments, results and errors).

    Example:
        >>> import asyncio
        >>> async def main():  # doctest: +SKIP
        ...     info = {"provider": "openai", "model": "gpt-4o-mini"}
        ...     calls = [aevaluate_rubric("Is it polite?", s, info) for s in ["Hi", "No"]]
        ...     return await asyncio.gather(*calls)
    """
    request = prepare(
        rubric,
        solution_str,
        dict(model_info),
        ground_truth=ground_truth,
        original_input=original_input,
        metadata=metadata,
        score_min=score_min,
        score_max=score_max,
        timeout=timeout,
    )
    outcome = await run_async(request)
    reply = outcome.value()
    return outcome.details(request) if return_details else reply.score  # type: ignore[return-value]
