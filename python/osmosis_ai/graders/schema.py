"""What a grader config may hold: the fields of each type as OpenAI's grader schema documents them.

A config is checked whole when it is loaded, so a typo fails before the first sample instead of on each
of them (or, worse, being ignored): an unknown type, a missing field, a field the type does not have, a
``sampling_params`` key or value the schema does not document, a message that is not a chat message, image
or audio input (not supported locally), a bad ``range`` or ``calculate_output``. Every message names the
grader (``name``, nested as ``outer.graders.inner``) and the field.

The fields are those of openai-python's ``types.graders`` (``string_check``, ``text_similarity``,
``score_model``, ``label_model``, ``python``, ``multi``); ``pass_threshold``, a field of the evals'
testing criteria, is accepted on every type (a sample then also *passes* or not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from osmosis_ai.errors import ConfigError
from osmosis_ai.graders import text
from osmosis_ai.graders.formula import check_formula

__all__ = ["GRADER_TYPES", "REASONING_EFFORTS", "SAMPLING_PARAMS", "check_config"]

_REQUIRED: dict[str, tuple[str, ...]] = {
    "string_check": ("input", "reference", "operation"),
    "text_similarity": ("input", "reference", "evaluation_metric"),
    "score_model": ("input", "model"),
    "label_model": ("input", "model", "labels", "passing_labels"),
    "python": ("source",),
    "multi": ("graders", "calculate_output"),
}
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "score_model": ("range", "sampling_params"),
    "python": ("image_tag",),
}
_COMMON = ("type", "name", "pass_threshold")
GRADER_TYPES = tuple(_REQUIRED)

# score_model's sampling_params: name -> (what the value must be, a check of it).
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_ROLES = ("user", "assistant", "system", "developer")
_TEXT_PARTS = ("input_text", "output_text")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


SAMPLING_PARAMS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "temperature": ("a number", _is_number),
    "top_p": ("a number", _is_number),
    "seed": ("an integer", _is_integer),
    "max_completions_tokens": ("a positive integer", lambda v: _is_integer(v) and v > 0),
    "reasoning_effort": (
        f"one of {', '.join(REASONING_EFFORTS)}",
        lambda v: v is None or v in REASONING_EFFORTS,
    ),
}


def _check_fields(config: Mapping[str, Any], kind: str, where: str) -> None:
    missing = [name for name in _REQUIRED[kind] if name not in config]
    if missing:
        raise ConfigError(f"{where}: {kind} grader lacks {', '.join(missing)}")
    known = (*_COMMON, *_REQUIRED[kind], *_OPTIONAL.get(kind, ()))
    unknown = [name for name in config if name not in known]
    if unknown:
        raise ConfigError(
            f"{where}: unknown field '{unknown[0]}' in a {kind} grader (its fields: {', '.join(known)})"
        )
    threshold = config.get("pass_threshold")
    if threshold is not None and not _is_number(threshold):
        raise ConfigError(f"{where}: pass_threshold must be a number, got {threshold!r}")


def _check_sampling(params: Any, where: str) -> None:
    if params is None:
        return
    if not isinstance(params, Mapping):
        raise ConfigError(f"{where}: sampling_params must be an object")
    for name, value in params.items():
        if name not in SAMPLING_PARAMS:
            raise ConfigError(
                f"{where}: unknown field 'sampling_params.{name}' (supported: {', '.join(SAMPLING_PARAMS)})"
            )
        expected, valid = SAMPLING_PARAMS[name]
        if not valid(value):
            raise ConfigError(f"{where}: sampling_params.{name} must be {expected}, got {value!r}")


def _check_content(content: Any, where: str) -> None:
    parts = content if isinstance(content, list) else [content]
    for index, part in enumerate(parts):
        at = f"{where}[{index}]" if isinstance(content, list) else where
        if isinstance(part, str):
            continue
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("input_image", "input_audio"):
            raise ConfigError(f"{at}: {kind} content is not supported locally (text only)")
        if kind not in _TEXT_PARTS or not isinstance(part.get("text"), str):
            raise ConfigError(
                f'{at}: expected text, or {{"type": "input_text" | "output_text", "text": ...}}'
            )
        unknown = [key for key in part if key not in ("type", "text")]
        if unknown:
            raise ConfigError(f"{at}: unknown field '{unknown[0]}' in a {kind} part")


def _check_messages(messages: Any, kind: str, where: str) -> None:
    if not isinstance(messages, list):
        raise ConfigError(f"{where}: {kind} input must be a list of messages")
    for index, message in enumerate(messages):
        at = f"{where}: input[{index}]"
        if not isinstance(message, Mapping):
            raise ConfigError(f"{at}: a message must be an object with role and content")
        unknown = [key for key in message if key not in ("role", "content", "type")]
        if unknown:
            raise ConfigError(
                f"{at}: unknown field '{unknown[0]}' in a message (its fields: role, content, type)"
            )
        if message.get("role") not in _ROLES:
            raise ConfigError(f"{at}: role must be one of {', '.join(_ROLES)}, got {message.get('role')!r}")
        if message.get("type", "message") != "message":
            raise ConfigError(f"{at}: type must be 'message', got {message.get('type')!r}")
        if "content" not in message:
            raise ConfigError(f"{at}: the message has no content")
        _check_content(message["content"], f"{at}.content")


def _check_kind(config: Mapping[str, Any], kind: str, where: str) -> None:
    if kind == "string_check" and config["operation"] not in text.STRING_OPERATIONS:
        raise ConfigError(f"{where}: operation {config['operation']!r} is not one of eq, ne, like, ilike")
    if kind == "text_similarity":
        metric = config["evaluation_metric"]
        if metric not in (*text.LOCAL_METRICS, "cosine"):
            raise ConfigError(f"{where}: evaluation_metric {metric!r} is not supported locally")
    if kind in ("score_model", "label_model"):
        _check_messages(config["input"], kind, where)
    if kind == "label_model" and not set(config["passing_labels"]) <= set(config["labels"]):
        raise ConfigError(f"{where}: passing_labels must be a subset of labels")
    if kind == "score_model":
        _check_sampling(config.get("sampling_params"), where)
        bounds = config.get("range")
        if bounds is not None and not (
            isinstance(bounds, list)
            and len(bounds) == 2
            and all(map(_is_number, bounds))
            and bounds[0] < bounds[1]
        ):
            raise ConfigError(f"{where}: range must be [low, high] with low < high")
    if kind == "python":
        try:
            compile(config["source"], "<grader source>", "exec")
        except SyntaxError as exc:
            raise ConfigError(f"{where}: python grader source does not compile: {exc}") from None


def check_config(config: Any, where: str) -> None:
    """Raises :class:`ConfigError` (naming ``where`` and the field) unless ``config`` is a usable grader.

    Example:
        >>> check_config({"type": "python", "source": "def grade(s, i): return 1", "timeout": 3}, "g")
        Traceback (most recent call last):
        ...
        osmosis_ai.errors.ConfigError: g: unknown field 'timeout' in a python grader (its fields: type, name, pass_threshold, source, image_tag)
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"{where}: a grader must be a JSON object, got {type(config).__name__}")
    kind = config.get("type")
    if kind not in _REQUIRED:
        raise ConfigError(
            f"{where}: unknown grader type {kind!r} (expected one of {', '.join(GRADER_TYPES)})"
        )
    _check_fields(config, kind, where)
    _check_kind(config, kind, where)
    if kind == "multi":
        graders = config["graders"]
        if not isinstance(graders, Mapping) or not graders:
            raise ConfigError(f"{where}: multi graders must be an object of named graders")
        for name, sub in graders.items():
            check_config(sub, f"{where}.graders.{name}")
        try:
            check_formula(str(config["calculate_output"]), graders)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
