"""The typed, frozen options of the rubric evaluations (see :mod:`osmosis_ai.rubric.run`).

Both kinds share the judge's settings (:class:`JudgeRunOptions`): runs per record, concurrency, the judge
call overrides, the results log and the backend. They are checked when made; messages name the fields
(``{number}``, ``{score_max}``), which the CLI shows as its flags.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import OptionsError, RunError
from osmosis_ai.runs.backends import BackendOptions

__all__ = ["InlineRubricOptions", "JudgeRunOptions", "RubricEvalOptions"]

PathLike = str | os.PathLike[str]

_INFERRED_PROVIDERS = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gemini"),
    ("grok", "xai"),
)


@dataclass(frozen=True, kw_only=True)
class JudgeRunOptions:
    """The judge's settings of a rubric evaluation.

    Attributes:
        number: Judge runs per record.
        concurrency: Judge calls in flight at once.
        base_url: OpenAI-compatible endpoint (default: ``OPENAI_BASE_URL`` and the like, else the provider).
        timeout: Seconds per judge request (default per provider).
        max_retries: Retries on 429/5xx/timeouts per call (default 3).
        temperature: Judge temperature (default 0).
        seed: Judge seed, where the provider accepts one.
        log_path: The results log to create (default: a new file under ``$OSMOSIS_LOG_DIR``).
        resume_path: A results log to continue instead.
        backend: Where the judgements run (this process, or Ray).
    """

    number: int = 1
    concurrency: int = 8
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None
    temperature: float | None = None
    seed: int | None = None
    log_path: PathLike | None = None
    resume_path: PathLike | None = None
    backend: BackendOptions = field(default_factory=BackendOptions)

    def _check_judge(self) -> None:
        if self.number < 1:
            raise OptionsError("Number of runs must be a positive integer.", fields=("number",))
        if self.concurrency < 1:
            raise OptionsError("{concurrency} must be >= 1.", fields=("concurrency",))

    def judge_overrides(self) -> dict[str, Any]:
        """The judge call settings given here (None where the rubric's or provider's default applies)."""
        return {
            "base_url": self.base_url,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "temperature": self.temperature,
            "seed": self.seed,
        }


@dataclass(frozen=True, kw_only=True)
class RubricEvalOptions(JudgeRunOptions):
    """A rubric evaluation with a rubric of a YAML config (``osmosis eval-rubric``).

    Attributes:
        rubric_id: The rubric's id in the config (also the records' ``rubric_id``).
        data_path: JSONL records (``rubric_id``, ``solution_str``, ...).
        config_path: The rubric YAML (default: ``rubric_configs.yaml`` next to the data, in ., or ./examples).
        output: Results file (with a suffix) or directory (default ``~/.cache/osmosis/eval_result/<rubric>/``).
        baseline_path: A previous results JSON to compare with.
        function: ``module:attr`` of an ``@osmosis_rubric`` function to score with instead of the judge.
        repeat: Judge each record this many times and report the judge's self-disagreement.
        gold_path: Human labels (JSONL of ``{"id", "score"}``) to report agreement with.
        gold_threshold: Pass/fail threshold of both sides for Cohen's kappa with the gold labels.
    """

    rubric_id: str
    data_path: PathLike
    config_path: PathLike | None = None
    output: PathLike | None = None
    baseline_path: PathLike | None = None
    function: str | None = None
    repeat: int | None = None
    gold_path: PathLike | None = None
    gold_threshold: float = 0.5

    def __post_init__(self) -> None:
        from osmosis_ai.runs.session_log import check_log_choice

        check_log_choice(self.log_path, self.resume_path)
        if self.repeat is not None and self.number not in (1, self.repeat):
            raise RunError(
                f"{{repeat}} {self.repeat} and {{number}} {self.number} disagree: give one of them.",
                fields=("repeat", "number"),
            )
        self.backend.check()
        if not self.rubric_id.strip():
            raise OptionsError("Rubric identifier cannot be empty.", fields=("rubric_id",))
        self._check_judge()

    def runs_per_record(self) -> int:
        """``repeat`` when given, else ``number``."""
        return self.repeat if self.repeat is not None else self.number


@dataclass(frozen=True, kw_only=True)
class InlineRubricOptions(JudgeRunOptions):
    """A rubric evaluation with a rubric given as text and chat-style records (``osmosis eval rubric``).

    Attributes:
        data_path: JSONL records: ``messages`` (the last assistant message is judged) or ``solution_str``.
        rubric: The rubric text, or ``@FILE`` to read it from a file.
        model: The judge model in LiteLLM form (``openai/gpt-4o-mini``; a known prefix implies the provider).
        output: Results file, or a directory (a trailing ``/`` or an existing one) for
            ``rubric_eval_result.json`` (default ``~/.cache/osmosis/eval_result/rubric/``).
        api_key: The judge's API key (deprecated: set the provider's key variable instead).
        score_min: The lowest score of the rubric's scale.
        score_max: The highest score of the rubric's scale.
    """

    data_path: PathLike
    rubric: str
    model: str
    output: PathLike | None = None
    api_key: str | None = None
    score_min: float = 0.0
    score_max: float = 1.0

    def __post_init__(self) -> None:
        from osmosis_ai.runs.session_log import check_log_choice

        check_log_choice(self.log_path, self.resume_path)
        self.backend.check()
        self._check_judge()
        if self.score_max <= self.score_min:
            raise OptionsError(
                "{score_max} must be greater than {score_min}.", fields=("score_max", "score_min")
            )

    def rubric_text(self) -> str:
        """The rubric, read from its file for ``@FILE``."""
        text = self.rubric
        if text.startswith("@"):
            path = Path(text[1:])
            if not path.exists():
                raise RunError(f"Rubric file '{path}' does not exist.")
            if path.is_dir():
                raise RunError(f"Rubric file '{path}' is a directory.")
            text = path.read_text(encoding="utf-8")
            if not text.strip():
                raise RunError(f"Rubric file '{path}' is empty.")
        if not text.strip():
            raise RunError("Rubric cannot be empty.")
        return text

    def provider_and_model(self) -> tuple[str, str]:
        """``(provider, model name)`` of ``model``: ``PROVIDER/MODEL``, a known prefix, or ``openai`` for any
        OpenAI-compatible server (``base_url`` or ``OPENAI_BASE_URL``)."""
        model = self.model.strip()
        if not model:
            raise RunError("{model} cannot be empty.", fields=("model",))
        if "/" in model:
            provider, _, name = model.partition("/")
            return provider.lower(), name
        for prefix, provider in _INFERRED_PROVIDERS:
            if model.lower().startswith(prefix):
                return provider, model
        if self.base_url or any(
            os.environ.get(n, "").strip() for n in ("OPENAI_BASE_URL", "OPENAI_API_BASE")
        ):
            return "openai", model  # any OpenAI-compatible server
        raise RunError(
            f"Cannot infer the provider of model '{model}'; use PROVIDER/MODEL (e.g. openai/{model})."
        )

    def model_info(self) -> dict[str, Any]:
        """The judge's ``model_info``: provider, model, and the key (given) or the key's variable."""
        from osmosis_ai.rubric.judge import DEFAULT_API_KEY_ENV

        provider, name = self.provider_and_model()
        info: dict[str, Any] = {"provider": provider, "model": name}
        if self.api_key:
            info["api_key"] = self.api_key
        elif provider not in DEFAULT_API_KEY_ENV:
            info["api_key_env"] = f"{provider.upper()}_API_KEY"
        return info
