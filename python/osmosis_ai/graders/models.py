"""``score_model`` and ``label_model`` graders, and ``cosine`` similarity, through THE LLM layer.

The grader's ``input`` messages are rendered with the template variables and sent with a JSON-schema
response format asking for ``{"result": ...}`` (a number for ``score_model``, one of ``labels`` for
``label_model``). A reply without a usable result is an error of that sample, never a score. A
``score_model`` result outside ``range`` is clamped into it (and said so in the detail).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from osmosis_ai.errors import EvalFnError
from osmosis_ai.graders.template import render
from osmosis_ai.llm.providers import Endpoint, resolve_endpoint
from osmosis_ai.llm.retry import ProviderCallError

__all__ = ["DEFAULT_EMBEDDING_MODEL", "ModelSettings", "cosine", "label_model", "score_model"]

# The embedding model of `cosine`, as OpenAI's grader documentation gives it (the config names none).
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-large"
# sampling_params keys of the config (every one the schema documents) -> chat completion parameters.
_SAMPLING = {
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "max_completions_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort",
}


class ModelSettings:
    """Where model graders send their requests: an OpenAI-compatible ``base_url`` (else the provider's)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout
        self.embedding_model = embedding_model

    def endpoint(self, model: str) -> Endpoint:
        return resolve_endpoint(model, base_url=self.base_url, api_key=self.api_key, timeout=self.timeout)


def _transport(endpoint: Endpoint) -> tuple[Any, bool]:
    """The session pool's transport for ``endpoint``, or a fresh one the caller must close."""
    from osmosis_ai.llm.pool import active_pool
    from osmosis_ai.llm.transport import make_transport

    pool = active_pool()
    return (pool.get(endpoint), False) if pool is not None else (make_transport(endpoint), True)


def _content(content: Any, sample: Mapping[str, Any], item: Mapping[str, Any]) -> str:
    if isinstance(content, str):
        return render(content, sample, item)
    parts = content if isinstance(content, list) else [content]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(render(part, sample, item))
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(render(part["text"], sample, item))
        else:
            raise EvalFnError(
                f"grader input content {part!r} is not text (images and audio are not supported)"
            )
    return "".join(texts)


def _messages(
    grader: Mapping[str, Any], sample: Mapping[str, Any], item: Mapping[str, Any]
) -> list[dict[str, str]]:
    # `developer` is the newer name of `system`; OpenAI-compatible servers mostly know only the latter.
    return [
        {
            "role": "system" if m.get("role") == "developer" else str(m.get("role", "user")),
            "content": _content(m.get("content", ""), sample, item),
        }
        for m in grader["input"]
    ]


async def _ask(
    grader: Mapping[str, Any],
    settings: ModelSettings,
    sample: Mapping[str, Any],
    item: Mapping[str, Any],
    result_schema: dict[str, Any],
) -> Any:
    # Every key is one of _SAMPLING's: the schema check refused any other when the config was loaded.
    params: dict[str, Any] = {
        _SAMPLING[k]: v for k, v in (grader.get("sampling_params") or {}).items() if v is not None
    }
    params.setdefault("temperature", 0)
    params["response_format"] = {
        "type": "json_schema",
        "json_schema": {
            "name": "grade",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"result": result_schema},
                "required": ["result"],
                "additionalProperties": False,
            },
        },
    }
    transport, own = _transport(settings.endpoint(grader["model"]))
    try:
        reply = await transport.complete(_messages(grader, sample, item), params=params)
    except ProviderCallError as exc:
        raise EvalFnError(f"{grader['type']} grader call failed: {exc}") from exc
    finally:
        if own:
            await transport.aclose()
    from osmosis_ai.rubric.parse import _sanitise  # the judge's reply clean-up (think tags, code fences)

    text = _sanitise(str(reply.message.get("content") or ""))
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise EvalFnError(f"{grader['type']} grader reply is not JSON: {text[:100]!r}") from None
    if not isinstance(data, dict) or "result" not in data:
        raise EvalFnError(f"{grader['type']} grader reply has no 'result': {text[:100]!r}")
    return data["result"]


async def score_model(
    grader: Mapping[str, Any], settings: ModelSettings, sample: Mapping[str, Any], item: Mapping[str, Any]
) -> tuple[float, dict[str, Any]]:
    """The model's numeric result, clamped into ``range`` (default [0, 1]); and the detail."""
    low, high = (float(x) for x in grader.get("range") or (0.0, 1.0))
    result = await _ask(grader, settings, sample, item, {"type": "number"})
    if isinstance(result, bool) or not isinstance(result, (int, float)) or not math.isfinite(result):
        raise EvalFnError(f"score_model grader result {result!r} is not a finite number")
    score = min(high, max(low, float(result)))
    return score, {"raw_result": result, "clamped": score != result}


async def label_model(
    grader: Mapping[str, Any], settings: ModelSettings, sample: Mapping[str, Any], item: Mapping[str, Any]
) -> tuple[float, dict[str, Any]]:
    """1.0 when the model's label is one of ``passing_labels``, else 0.0; and the label."""
    labels = list(grader["labels"])
    label = await _ask(grader, settings, sample, item, {"type": "string", "enum": labels})
    if label not in labels:
        raise EvalFnError(f"label_model grader answered {label!r}, not one of {labels}")
    return float(label in grader["passing_labels"]), {"label": label}


async def cosine(settings: ModelSettings, a: str, b: str) -> float:
    """Cosine similarity of the two texts' embeddings (``settings.embedding_model``'s ``/embeddings``)."""
    model = settings.embedding_model
    endpoint = settings.endpoint(model)
    if not endpoint.direct:
        raise EvalFnError(f"cosine similarity needs an OpenAI-compatible embeddings endpoint for '{model}'")
    transport, own = _transport(endpoint)
    try:
        first, second = await transport.embed([a, b])
    except ProviderCallError as exc:
        raise EvalFnError(f"embedding call failed: {exc}") from exc
    finally:
        if own:
            await transport.aclose()
    return _cosine(first, second)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise EvalFnError(f"embeddings differ in length ({len(a)} and {len(b)})")
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0:
        raise EvalFnError("an embedding is all zeros: cosine similarity is undefined")
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm
