"""The ATIF builder: one rollout's conversation, per-call metrics and platform context as an ``ATIF-v1.7``
document (the Agent Trajectory Interchange Format of the Harbor framework, as the established package
writes it).

A conversation (OpenAI chat messages) becomes ATIF steps: ``system``/``developer`` messages are system
steps, ``user`` messages user steps, ``assistant`` messages agent steps (their tool calls as ATIF tool
calls, their inline ``usage`` and ``model`` as the step's metrics and model), and each ``tool`` message an
observation result on the agent step before it (naming its tool call when that step made it). What does not
fit a field is kept under the step's ``extra``. Per-call LLM metrics (the eval-run bridge's, or a
controller's report) go onto the agent steps in order when there are as many calls as agent steps, else
under ``extra.osmosis.unmatched_llm_call_metrics``; ``final_metrics`` holds the totals and the step count.
The platform context (rollout id, label, reward, the sample's metrics and extra fields, the request's
metadata and extra fields) is ``extra.osmosis``. Every document built here passes the strict check of
:mod:`osmosis_ai.atif`, whatever the messages hold.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from osmosis_ai._version import __version__ as PACKAGE_VERSION
from osmosis_ai.atif import ATIF_VERSION

__all__ = ["ATIF_VERSION", "PRODUCER", "build_trajectory"]

PRODUCER = "osmosis-rollout-sdk"  # the established package's agent name: readers group documents by it
_SOURCES = {"system": "system", "developer": "system", "user": "user", "assistant": "agent"}
_TOTALS = {
    "prompt_tokens": "total_prompt_tokens",
    "completion_tokens": "total_completion_tokens",
    "cached_tokens": "total_cached_tokens",
    "cost_usd": "total_cost_usd",
}
_FINAL_FIELDS = frozenset({*_TOTALS.values(), "extra"})


def _is_int(value: Any) -> bool:
    # ATIF integers are JSON integers readers hold in 64 bits.
    return type(value) is int and -(2**63) <= value < 2**63


def _is_number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # the exact type first: ABC checks are slow


def _int_list(value: Any) -> bool:
    return type(value) is list and all(_is_int(i) for i in value)


def _json_text(value: Any) -> str:
    """A value shown as JSON text (orjson refuses integers beyond 64 bits: the standard library does not)."""
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError:
        return json.dumps(value, default=str, ensure_ascii=False)


def _number_list(value: Any) -> bool:
    return type(value) is list and all(_is_number(p) for p in value)


def _filled_mapping(value: Any) -> bool:
    return _is_mapping(value) and len(value) > 0


# The fields of ATIF Metrics, each with the test its value must pass (wrong types are dropped: the
# document must stay valid whatever a workflow or a controller put there).
_METRICS = {
    "prompt_tokens": _is_int,
    "completion_tokens": _is_int,
    "cached_tokens": _is_int,
    "cost_usd": _is_number,
    "prompt_token_ids": _int_list,
    "completion_token_ids": _int_list,
    "logprobs": _number_list,
    "extra": _filled_mapping,
}
_STAMP_KEYS = ("created_at", "timestamp", "completed_at")
_USAGE_DETAILS = (
    "prompt_tokens_details",
    "input_tokens_details",
    "completion_tokens_details",
    "output_tokens_details",
)


def _text(content: Any) -> str:
    """Message content as ATIF text: strings as they are, text parts joined, anything else as JSON."""
    if type(content) is str:
        return content
    if content is None:
        return ""
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = [p for p in content if _is_mapping(p)]
        if parts and all(p.get("type") == "text" for p in parts):
            return "\n".join(str(p.get("text", "")) for p in parts)
    return _json_text(content)


def _iso(value: Any) -> str | None:
    try:
        if _is_number(value):
            return _dt.datetime.fromtimestamp(value, tz=_dt.timezone.utc).isoformat()
        if isinstance(value, str) and value:
            return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
    except (ValueError, OverflowError, OSError):
        pass
    return None


def _timestamp(message: Mapping[str, Any]) -> str | None:
    """The message's own time (``created_at``, ``timestamp``, ``completed_at`` or ``extra.timestamp``)."""
    for key in _STAMP_KEYS:
        value = message.get(key)
        if value is not None and (stamp := _iso(value)) is not None:
            return stamp
    extra = message.get("extra")
    return _iso(extra.get("timestamp")) if extra is not None and _is_mapping(extra) else None


def _arguments(raw: Any) -> dict[str, Any]:
    if _is_mapping(raw):
        return dict(raw)
    if isinstance(raw, str) and raw:
        try:
            parsed = orjson.loads(raw)  # refuses NaN, which JSON cannot carry
        except orjson.JSONDecodeError:
            return {"_raw": raw}
        return parsed if type(parsed) is dict else {"_raw": raw}
    return {}


def _tool_calls(raw: Any) -> list[dict[str, Any]]:
    if not raw or isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        return []
    calls = []
    for index, item in enumerate(raw):
        if not _is_mapping(item):
            continue
        function = item.get("function")
        function = function if _is_mapping(function) else {}
        calls.append({
            "tool_call_id": str(item.get("id") or f"call_{index}"),
            "function_name": str(function.get("name") or "unknown"),
            "arguments": _arguments(function.get("arguments")),
        })  # fmt: skip
    return calls


def _call_metrics(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ATIF Metrics fields of one call's numbers."""
    metrics = {}
    for key, value in entry.items():
        test = _METRICS.get(key)
        if test is not None and test(value):
            metrics[key] = dict(value) if key == "extra" else value
    return metrics


def _response(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A raw completion response kept on the message under ``extra.response`` (Harbor's convention)."""
    extra = message.get("extra")
    response = extra.get("response") if extra is not None and _is_mapping(extra) else None
    return response if response is not None and _is_mapping(response) else None


def _usage_metrics(message: Mapping[str, Any]) -> dict[str, Any]:
    """Inline usage on an assistant message (``usage``, or ``extra.response.usage``), either API's names."""
    usage = message.get("usage")
    if usage is None or not _is_mapping(usage):
        response = _response(message)
        usage = response.get("usage") if response is not None else None
        if usage is None or not _is_mapping(usage):
            return {}
    found = dict(usage)
    if found.get("prompt_tokens") is None:  # `is None`, not `or`: a real 0 stays
        found["prompt_tokens"] = usage.get("input_tokens")
    if found.get("completion_tokens") is None:
        found["completion_tokens"] = usage.get("output_tokens")
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details")
    if found.get("cached_tokens") is None and _is_mapping(details):
        found["cached_tokens"] = details.get("cached_tokens")
    found["extra"] = {k: dict(usage[k]) for k in _USAGE_DETAILS if _filled_mapping(usage.get(k))}
    return _call_metrics(found)


def _model_name(message: Mapping[str, Any]) -> str | None:
    model = message.get("model") or message.get("model_name")
    if not model:
        response = _response(message)
        model = response.get("model") if response is not None else None
    return str(model) if model else None


def _step(message: Mapping[str, Any], role: str, step_id: int) -> dict[str, Any]:
    source = _SOURCES.get(role)
    step: dict[str, Any] = {"step_id": step_id}
    if (stamp := _timestamp(message)) is not None:
        step["timestamp"] = stamp
    extra: dict[str, Any] = {}
    if source is None:  # an unknown role: kept as a user turn, its role remembered
        source = "user"
        extra["original_role"] = role
    step["source"] = source
    step["message"] = _text(message.get("content"))
    reasoning = message.get("reasoning_content")
    if reasoning is not None and type(reasoning) is not str:
        reasoning = _json_text(reasoning)
    raw_calls = message.get("tool_calls")
    calls = _tool_calls(raw_calls) if raw_calls else None
    if source == "agent":
        if (model := _model_name(message)) is not None:
            step["model_name"] = model
        if reasoning is not None:
            step["reasoning_content"] = reasoning
        if calls:
            step["tool_calls"] = calls
        if metrics := _usage_metrics(message):
            step["metrics"] = metrics
            step["llm_call_count"] = 1
    else:  # ATIF allows these on agent steps only
        if reasoning is not None:
            extra["reasoning_content"] = reasoning
        if calls:
            extra["tool_calls"] = calls
    if extra:
        step["extra"] = extra
    return step


def _observe(steps: list[dict[str, Any]], message: Mapping[str, Any], role: str) -> None:
    """A tool result joins the observation of the agent step before it (a system step when there is none)."""
    call_id = message.get("tool_call_id")
    target = steps[-1] if steps and steps[-1]["source"] == "agent" else None
    known = {c["tool_call_id"] for c in target.get("tool_calls", ())} if target is not None else set()
    result: dict[str, Any] = {"content": _text(message.get("content"))}
    if isinstance(call_id, str) and call_id in known:
        result = {"source_call_id": call_id, **result}
    elif call_id is not None:
        result["extra"] = {"tool_call_id": call_id}
    if target is None:
        steps.append({
            "step_id": len(steps) + 1, "source": "system", "message": "",
            "observation": {"results": [result]}, "extra": {"original_role": role},
        })  # fmt: skip
    else:
        target.setdefault("observation", {"results": []})["results"].append(result)


def _steps(messages: Sequence[Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for message in messages:
        if not _is_mapping(message):
            continue
        role = message.get("role", "")
        if type(role) is not str:
            role = str(role)
        if role == "tool" or role == "function":
            _observe(steps, message, role)
        elif len(message) == 2 and type(content := message.get("content")) is str and role in _SOURCES:
            # Only a role and a text: the usual message, built without looking for what it cannot have.
            steps.append({"step_id": len(steps) + 1, "source": _SOURCES[role], "message": content})
        else:
            steps.append(_step(message, role, len(steps) + 1))
    return steps


def _attribute(
    steps: list[dict[str, Any]], calls: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]] | None:
    """Per-call metrics onto the agent steps in order when the counts match; else returned to keep aside."""
    agent_steps = [s for s in steps if s["source"] == "agent"]
    if len(agent_steps) != len(calls):
        return [{k: v for k, v in dict(c).items() if v is not None} for c in calls]
    for step, call in zip(agent_steps, calls, strict=True):
        reported = _call_metrics(call)
        if reported:  # field by field: a count-only report keeps inline token ids and logprobs
            step["metrics"] = {**step.get("metrics", {}), **reported}
        if isinstance(call.get("model_name"), str) and call["model_name"]:
            step["model_name"] = call["model_name"]
        step["llm_call_count"] = 1
    return None


def _reported_totals(reported: Mapping[str, Any] | None) -> dict[str, Any]:
    """Totals a report gave, when every field is one ATIF FinalMetrics has, of its type (the step count
    is the document's own)."""
    if not isinstance(reported, Mapping):
        return {}
    totals = {k: v for k, v in reported.items() if k != "total_steps"}
    for key, value in totals.items():
        if key == "total_cost_usd":
            ok = _is_number(value)
        elif key == "extra":
            ok = isinstance(value, Mapping)
        else:
            ok = key in _FINAL_FIELDS and _is_int(value)
        if not ok:
            return {}
    return totals


def _final_metrics(
    calls: Sequence[Mapping[str, Any]], reported: Mapping[str, Any] | None, step_count: int
) -> dict[str, Any]:
    """Reported totals win; else the per-call metrics summed; always the step count."""
    totals = _reported_totals(reported) if reported else {}
    if not totals:
        for call in calls:
            for key, value in call.items():
                total = _TOTALS.get(key)
                if total is not None and (_is_int(value) or (key == "cost_usd" and _is_number(value))):
                    totals[total] = totals.get(total, 0) + value
        totals = {k: v for k, v in totals.items() if _is_int(v) or type(v) is float}
    totals["total_steps"] = step_count
    return totals


def build_trajectory(
    messages: Sequence[Any],
    *,
    rollout_id: str,
    context: Mapping[str, Any] | None = None,
    llm_calls: Sequence[Mapping[str, Any]] = (),
    final_metrics: Mapping[str, Any] | None = None,
    model_name: str | None = None,
    producer_version: str | None = None,
) -> dict[str, Any] | None:
    """The ATIF document of one rollout, or None when its conversation has no message.

    Args:
        messages: The conversation, OpenAI chat messages (``RolloutSample.trajectory_messages``).
        rollout_id: The rollout; the document's ``session_id``, ``trajectory_id`` and ``extra.osmosis.rollout_id``.
        context: The platform context for ``extra.osmosis`` (``label``, ``reward``, ``sample_metrics``,
            ``sample_extra_fields``, ``request_metadata``, ``request_extra_fields``, ...; None values left out).
        llm_calls: Metrics of each LLM call of the workflow in dispatch order (ATIF ``Metrics`` names, and
            ``model_name``).
        final_metrics: Totals reported for the rollout, preferred to the sums of ``llm_calls``.
        model_name: The model the rollout used (``agent.model_name``).
        producer_version: ``agent.version`` (default: this package's version).

    Example:
        >>> doc = build_trajectory([{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
        ...                        rollout_id="r1", llm_calls=[{"prompt_tokens": 9, "completion_tokens": 1}])
        >>> [s["source"] for s in doc["steps"]], doc["steps"][1]["metrics"], doc["final_metrics"]["total_steps"]
        (['user', 'agent'], {'prompt_tokens': 9, 'completion_tokens': 1}, 2)
    """
    steps = _steps(messages)
    if not steps:
        return None
    unmatched = _attribute(steps, llm_calls) if llm_calls else None
    agent: dict[str, Any] = {"name": PRODUCER, "version": producer_version or PACKAGE_VERSION}
    if model_name:
        agent["model_name"] = model_name
    osmosis: dict[str, Any] = {"rollout_id": rollout_id}
    for key, value in (context or {}).items():
        if value is not None:
            osmosis[key] = value
    if unmatched:
        osmosis["unmatched_llm_call_metrics"] = unmatched
    return {
        "schema_version": ATIF_VERSION,
        "session_id": rollout_id,
        "trajectory_id": rollout_id,
        "agent": agent,
        "steps": steps,
        "final_metrics": _final_metrics(llm_calls, final_metrics, len(steps)),
        "extra": {"osmosis": osmosis},
    }
