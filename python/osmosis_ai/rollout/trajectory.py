"""Trajectory documents in ATIF (the Agent Trajectory Interchange Format of the Harbor framework, version
``ATIF-v1.7``, as the established package writes them): the one builder behind every trajectory file, the
rollout server's ``<artifact root>/<rollout id>/trajectory.json`` and ``osmosis eval run``'s
``rollout_trials/<rollout id>/trajectory.json`` (and its copy under ``trajectories/``).

A conversation (OpenAI chat messages) becomes ATIF steps: ``system``/``developer`` messages are system
steps, ``user`` messages user steps, ``assistant`` messages agent steps (their tool calls as ATIF tool
calls, their inline ``usage`` and ``model`` as the step's metrics and model), and each ``tool`` message an
observation result on the agent step before it (naming its tool call when that step made it). What does not
fit a field is kept under the step's ``extra``. Per-call LLM metrics (the bridge's, or a controller's report)
go onto the agent steps in order when there are as many calls as agent steps, else under
``extra.osmosis.unmatched_llm_call_metrics``; ``final_metrics`` holds the totals and the step count. The
platform context (rollout id, label, reward, the sample's metrics and extra fields, the request's metadata
and extra fields) is ``extra.osmosis``. Every document built here passes the strict check of
:mod:`osmosis_ai.atif`, whatever the messages hold.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from osmosis_ai.atif import ATIF_VERSION

__all__ = [
    "ATIF_VERSION",
    "PRODUCER",
    "CallReport",
    "build_trajectory",
    "read_call_report",
]

PRODUCER = "osmosis-rollout-sdk"  # the established package's agent name: readers group documents by it
_SOURCES = {"system": "system", "developer": "system", "user": "user", "assistant": "agent"}
_INT_METRICS = ("prompt_tokens", "completion_tokens", "cached_tokens")
_TOTALS = {
    "prompt_tokens": "total_prompt_tokens",
    "completion_tokens": "total_completion_tokens",
    "cached_tokens": "total_cached_tokens",
    "cost_usd": "total_cost_usd",
}
_FINAL_FIELDS = frozenset({*_TOTALS.values(), "extra"})


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def _text(content: Any) -> str:
    """Message content as ATIF text: strings as they are, text parts joined, anything else as JSON."""
    if type(content) is str:
        return content
    if content is None:
        return ""
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = [p for p in content if isinstance(p, Mapping)]
        if parts and all(p.get("type") == "text" for p in parts):
            return "\n".join(str(p.get("text", "")) for p in parts)
    return orjson.dumps(content, default=str).decode()


def _timestamp(message: Mapping[str, Any]) -> str | None:
    extra = message.get("extra")
    for value in (
        message.get("created_at"),
        message.get("timestamp"),
        message.get("completed_at"),
        extra.get("timestamp") if isinstance(extra, Mapping) else None,
    ):
        try:
            if _is_number(value):
                return _dt.datetime.fromtimestamp(value, tz=_dt.timezone.utc).isoformat()
            if isinstance(value, str) and value:
                return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
        except (ValueError, OverflowError, OSError):
            continue
    return None


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str) and raw:
        try:
            parsed = orjson.loads(raw)  # refuses NaN, which JSON cannot carry
        except orjson.JSONDecodeError:
            return {"_raw": raw}
        return parsed if isinstance(parsed, dict) else {"_raw": raw}
    return {}


def _tool_calls(raw: Any) -> list[dict[str, Any]]:
    if not raw or isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        return []
    calls = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            continue
        function = item.get("function")
        function = function if isinstance(function, Mapping) else {}
        calls.append({
            "tool_call_id": str(item.get("id") or f"call_{index}"),
            "function_name": str(function.get("name") or "unknown"),
            "arguments": _arguments(function.get("arguments")),
        })  # fmt: skip
    return calls


def _call_metrics(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The ATIF Metrics fields of one call's numbers (wrong types dropped: the document must stay valid)."""
    metrics: dict[str, Any] = {}
    for key in _INT_METRICS:
        if _is_int(entry.get(key)):
            metrics[key] = entry[key]
    if _is_number(entry.get("cost_usd")):
        metrics["cost_usd"] = entry["cost_usd"]
    for key in ("prompt_token_ids", "completion_token_ids"):
        ids = entry.get(key)
        if isinstance(ids, list) and all(_is_int(i) for i in ids):
            metrics[key] = ids
    logprobs = entry.get("logprobs")
    if isinstance(logprobs, list) and all(_is_number(p) for p in logprobs):
        metrics["logprobs"] = logprobs
    if isinstance(entry.get("extra"), Mapping) and entry["extra"]:
        metrics["extra"] = dict(entry["extra"])
    return metrics


def _usage_metrics(message: Mapping[str, Any]) -> dict[str, Any]:
    """Inline usage on an assistant message (``usage``, or ``extra.response.usage``), either API's names."""
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        extra = message.get("extra")
        response = extra.get("response") if isinstance(extra, Mapping) else None
        usage = response.get("usage") if isinstance(response, Mapping) else None
        if not isinstance(usage, Mapping):
            return {}
    found = dict(usage)
    for chat_name, responses_name in (
        ("prompt_tokens", "input_tokens"),
        ("completion_tokens", "output_tokens"),
    ):
        if found.get(chat_name) is None:
            found[chat_name] = usage.get(responses_name)
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details")
    if found.get("cached_tokens") is None and isinstance(details, Mapping):
        found["cached_tokens"] = details.get("cached_tokens")
    kept = {
        key: dict(usage[key])
        for key in (
            "prompt_tokens_details",
            "input_tokens_details",
            "completion_tokens_details",
            "output_tokens_details",
        )
        if isinstance(usage.get(key), Mapping) and usage[key]
    }
    found["extra"] = kept
    return _call_metrics(found)


def _model_name(message: Mapping[str, Any]) -> str | None:
    model = message.get("model") or message.get("model_name")
    if not model:
        extra = message.get("extra")
        response = extra.get("response") if isinstance(extra, Mapping) else None
        model = response.get("model") if isinstance(response, Mapping) else None
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
    if reasoning is not None and not isinstance(reasoning, str):
        reasoning = orjson.dumps(reasoning, default=str).decode()
    calls = _tool_calls(message.get("tool_calls"))
    if source != "agent":  # ATIF allows these on agent steps only
        if reasoning is not None:
            extra["reasoning_content"] = reasoning
        if calls:
            extra["tool_calls"] = calls
    else:
        if (model := _model_name(message)) is not None:
            step["model_name"] = model
        if reasoning is not None:
            step["reasoning_content"] = reasoning
        if calls:
            step["tool_calls"] = calls
        if metrics := _usage_metrics(message):
            step["metrics"] = metrics
            step["llm_call_count"] = 1
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
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role", ""))
        if role in ("tool", "function"):
            _observe(steps, message, role)
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
    totals = _reported_totals(reported)
    if not totals:
        for call in calls:
            for key, total in _TOTALS.items():
                value = call.get(key)
                if _is_int(value) or (key == "cost_usd" and _is_number(value)):
                    totals[total] = totals.get(total, 0) + value
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
    if producer_version is None:
        from osmosis_ai.consts import PACKAGE_VERSION as producer_version
    agent: dict[str, Any] = {"name": PRODUCER, "version": producer_version}
    if model_name:
        agent["model_name"] = model_name
    osmosis = {"rollout_id": rollout_id}
    osmosis.update((k, v) for k, v in (context or {}).items() if v is not None)
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


@dataclass(frozen=True)
class CallReport:
    """What a controller reported about a rollout's LLM calls in a callback answer (``trajectory``).

    Attributes:
        model_name: The model that served the calls.
        llm_calls: Each call's metrics, in dispatch order (ATIF ``Metrics`` names and ``model_name``).
        final_metrics: Totals the controller computed, if any.
        unmatched_samples: Several sample entries (a rollout has one sample): kept as they came.
    """

    model_name: str | None = None
    llm_calls: tuple[Mapping[str, Any], ...] = ()
    final_metrics: Mapping[str, Any] | None = None
    unmatched_samples: Mapping[str, Any] | None = None


def read_call_report(body: Any) -> CallReport | None:
    """The ``trajectory`` report in a callback answer's JSON body, or None when it has none or it is malformed.

    Its shape (the established one): ``{"model_name", "samples": {<any key>: {"model_name",
    "llm_call_metrics": [...], "final_metrics": {...}}}}``; one sample entry applies whatever its key.

    Example:
        >>> read_call_report({"trajectory": {"samples": {"s": {"llm_call_metrics": [{"prompt_tokens": 5}]}}}})
        CallReport(model_name=None, llm_calls=({'prompt_tokens': 5},), final_metrics=None, unmatched_samples=None)
    """
    report = body.get("trajectory") if isinstance(body, Mapping) else None
    samples = report.get("samples", {}) if isinstance(report, Mapping) else None
    if not isinstance(samples, Mapping):
        return None
    model = report.get("model_name")
    model = model if isinstance(model, str) and model else None
    if len(samples) != 1:
        return CallReport(model, unmatched_samples=dict(samples) or None)
    sample = next(iter(samples.values()))
    if not isinstance(sample, Mapping):
        return None
    calls = sample.get("llm_call_metrics")
    final = sample.get("final_metrics")
    own_model = sample.get("model_name")
    return CallReport(
        own_model if isinstance(own_model, str) and own_model else model,
        tuple(c for c in calls if isinstance(c, Mapping)) if isinstance(calls, list) else (),
        final if isinstance(final, Mapping) else None,
    )
