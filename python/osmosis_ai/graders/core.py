"""OpenAI grader configs run locally: load and check a config, then grade one sample with it.

Types: ``string_check``, ``text_similarity`` (``fuzzy_match``, ``bleu``, ``gleu``, ``rouge_*``, and
``cosine`` through the LLM layer's embeddings), ``score_model``, ``label_model``, ``python`` and ``multi``.
A config is checked whole when loaded (unknown type, missing field, bad formula), so a typo fails before
the first sample, not on each of them. ``meteor`` is refused: it needs WordNet data we do not ship.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import ConfigError
from osmosis_ai.graders import models, text
from osmosis_ai.graders.formula import check_formula, evaluate
from osmosis_ai.graders.python_grader import DEFAULT_TIME_LIMIT, run_python_grader
from osmosis_ai.graders.template import make_sample, render

__all__ = ["GRADER_TYPES", "GradeResult", "Grader", "load_grader"]

_REQUIRED: dict[str, tuple[str, ...]] = {
    "string_check": ("input", "reference", "operation"),
    "text_similarity": ("input", "reference", "evaluation_metric"),
    "score_model": ("input", "model"),
    "label_model": ("input", "model", "labels", "passing_labels"),
    "python": ("source",),
    "multi": ("graders", "calculate_output"),
}
GRADER_TYPES = tuple(_REQUIRED)


@dataclass
class GradeResult:
    """One sample's grade: the score, whether it passes (``pass_threshold``, when the config has one),
    sub-grader scores of a ``multi`` grader and type-specific detail (the label, a clamp, ...)."""

    score: float
    passed: bool | None = None
    sub_scores: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)


def _check(config: Any, where: str) -> None:
    if not isinstance(config, Mapping):
        raise ConfigError(f"{where}: a grader must be a JSON object, got {type(config).__name__}")
    kind = config.get("type")
    if kind not in _REQUIRED:
        raise ConfigError(
            f"{where}: unknown grader type {kind!r} (expected one of {', '.join(GRADER_TYPES)})"
        )
    missing = [name for name in _REQUIRED[kind] if name not in config]
    if missing:
        raise ConfigError(f"{where}: {kind} grader lacks {', '.join(missing)}")
    if kind == "string_check" and config["operation"] not in text.STRING_OPERATIONS:
        raise ConfigError(f"{where}: operation {config['operation']!r} is not one of eq, ne, like, ilike")
    if kind == "text_similarity":
        metric = config["evaluation_metric"]
        if metric not in (*text.LOCAL_METRICS, "cosine"):
            raise ConfigError(f"{where}: evaluation_metric {metric!r} is not supported locally")
    if kind in ("score_model", "label_model") and not isinstance(config["input"], list):
        raise ConfigError(f"{where}: {kind} input must be a list of messages")
    if kind == "label_model" and not set(config["passing_labels"]) <= set(config["labels"]):
        raise ConfigError(f"{where}: passing_labels must be a subset of labels")
    if kind == "score_model" and "range" in config:
        bounds = config["range"]
        if not (isinstance(bounds, list) and len(bounds) == 2 and bounds[0] < bounds[1]):
            raise ConfigError(f"{where}: range must be [low, high] with low < high")
    if kind == "python":
        try:
            compile(config["source"], "<grader source>", "exec")
        except SyntaxError as exc:
            raise ConfigError(f"{where}: python grader source does not compile: {exc}") from None
    if kind == "multi":
        graders = config["graders"]
        if not isinstance(graders, Mapping) or not graders:
            raise ConfigError(f"{where}: multi graders must be an object of named graders")
        for name, sub in graders.items():
            _check(sub, f"{where}.graders.{name}")
        try:
            check_formula(str(config["calculate_output"]), graders)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None


class Grader:
    """A checked grader config, ready to grade samples.

    Args:
        config: The grader JSON as a dict.
        settings: Where model graders and embeddings go (default: each model's provider).
        time_limit: Seconds a ``python`` grader may run per sample.

    Example:
        >>> import asyncio
        >>> g = Grader({"type": "string_check", "name": "exact", "input": "{{sample.output_text}}",
        ...             "reference": "{{item.answer}}", "operation": "eq"})
        >>> asyncio.run(g.grade("Paris", {"answer": "Paris"})).score
        1.0
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        *,
        settings: models.ModelSettings | None = None,
        time_limit: float = DEFAULT_TIME_LIMIT,
    ) -> None:
        _check(config, str(config.get("name") or "grader") if isinstance(config, Mapping) else "grader")
        self.config = dict(config)
        self.settings = settings or models.ModelSettings()
        self.time_limit = time_limit

    @property
    def name(self) -> str:
        return str(self.config.get("name") or self.config["type"])

    async def grade(self, output_text: str, item: Mapping[str, Any]) -> GradeResult:
        """Grades one model output for one dataset item; raises :class:`EvalFnError` when it cannot."""
        result = await self._grade(self.config, make_sample(output_text), item)
        threshold = self.config.get("pass_threshold")
        if isinstance(threshold, (int, float)):
            result.passed = result.score >= threshold
        return result

    async def _grade(
        self, config: Mapping[str, Any], sample: dict[str, Any], item: Mapping[str, Any]
    ) -> GradeResult:
        kind = config["type"]
        if kind == "string_check":
            value, ref = render(config["input"], sample, item), render(config["reference"], sample, item)
            return GradeResult(text.string_check(value, ref, config["operation"]))
        if kind == "text_similarity":
            value, ref = render(config["input"], sample, item), render(config["reference"], sample, item)
            metric = config["evaluation_metric"]
            if metric == "cosine":
                return GradeResult(await models.cosine(self.settings, value, ref))
            return GradeResult(text.similarity(metric, value, ref))
        if kind in ("score_model", "label_model"):
            ask = models.score_model if kind == "score_model" else models.label_model
            score, detail = await ask(config, self.settings, sample, item)
            return GradeResult(score, detail=detail)
        if kind == "python":
            score = await run_python_grader(config["source"], sample, item, time_limit=self.time_limit)
            return GradeResult(score)
        subs = {name: (await self._grade(sub, sample, item)).score for name, sub in config["graders"].items()}
        return GradeResult(evaluate(str(config["calculate_output"]), subs), sub_scores=subs)


def load_grader(
    source: str | Path | Mapping[str, Any],
    *,
    settings: models.ModelSettings | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> Grader:
    """A :class:`Grader` from a JSON file path or an already parsed config.

    A file may hold the grader itself or an object with a ``grader`` key (the fine-tuning job shape).

    Raises:
        ConfigError: The file is not JSON or the config is not a usable grader (the message says why).
        FileNotFoundError: The file does not exist.

    Example:
        >>> load_grader({"type": "python", "source": "def grade(s, i): return 1.0"}).name
        'python'
    """
    if isinstance(source, Mapping):
        config: Any = source
    else:
        path = Path(source)
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{exc.lineno}: grader config is not valid JSON ({exc.msg})") from None
        if isinstance(config, Mapping) and "type" not in config and isinstance(config.get("grader"), Mapping):
            config = config["grader"]
        if not isinstance(config, Mapping):
            raise ConfigError(f"{path}: a grader config must be a JSON object")
    return Grader(config, settings=settings, time_limit=time_limit)
