"""OpenAI grader configs run locally: load and check a config, then grade one sample with it.

Types: ``string_check``, ``text_similarity`` (``fuzzy_match``, ``bleu``, ``gleu``, ``rouge_*``, and
``cosine`` through the LLM layer's embeddings), ``score_model``, ``label_model``, ``python`` and ``multi``.
A config is checked whole when loaded (:mod:`.schema`: unknown type or field, missing field, bad formula),
so a typo fails before the first sample, not on each of them. ``meteor`` is refused: it needs WordNet data
we do not ship.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import ConfigError
from osmosis_ai.graders import models, text
from osmosis_ai.graders.formula import evaluate
from osmosis_ai.graders.python_grader import DEFAULT_TIME_LIMIT, run_python_grader
from osmosis_ai.graders.schema import GRADER_TYPES, check_config
from osmosis_ai.graders.template import make_sample, render

__all__ = ["GRADER_TYPES", "GradeResult", "Grader", "load_grader"]


@dataclass
class GradeResult:
    """One sample's grade: the score, whether it passes (``pass_threshold``, when the config has one),
    sub-grader scores of a ``multi`` grader and type-specific detail (the label, a clamp, ...)."""

    score: float
    passed: bool | None = None
    sub_scores: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)


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
        check_config(config, str(config.get("name") or "grader") if isinstance(config, Mapping) else "grader")
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
        try:
            return Grader(config, settings=settings, time_limit=time_limit)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return Grader(config, settings=settings, time_limit=time_limit)
