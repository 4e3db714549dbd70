"""The typed, frozen options of ``eval`` (:class:`EvalOptions`) and ``test`` (:class:`TestOptions`).

Both are checked when made, before anything is loaded: a value out of range or options that exclude each
other raise :class:`~osmosis_ai.errors.OptionsError` naming the fields (``{n_runs}``), which the CLI shows
as its flags. The range limits of the CLI's flags (``MAX_RUNS``...) are the CLI's; here only what makes no
sense at all is refused.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osmosis_ai.errors import OptionsError
from osmosis_ai.runs.backends import BackendOptions

__all__ = ["EvalOptions", "TestOptions"]

PathLike = str | os.PathLike[str]


def _at_least(options: Any, names: Sequence[str], minimum: int) -> None:
    for name in names:
        value = getattr(options, name)
        if value is not None and value < minimum:
            raise OptionsError(f"{{{name}}} must be >= {minimum}.", fields=(name,))


def _positive(options: Any, name: str) -> None:
    value = getattr(options, name)
    if value is not None and not value > 0:
        raise OptionsError(f"{{{name}}} must be > 0.", fields=(name,))


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """Everything an eval session runs with (see :func:`osmosis_ai.eval.session.run_eval`).

    Attributes:
        dataset: The dataset file (``.jsonl``, ``.json``, ``.csv`` or ``.parquet``).
        model: The model (LiteLLM ``provider/model``, or the endpoint's model name with ``base_url``).
        eval_fns: Eval functions, ``module:function`` or ``path/file.py:function`` (or a grader ``.json``).
        module: The agent loop as ``module:attr`` (or ``path/file.py:attr``); or None with ``mcp_dir``.
        mcp_dir: The MCP tool folder of the built-in agent; or None with ``module``.
        tool_timeout: Seconds one MCP tool call may take (``mcp_dir`` only).
        n_runs: Runs per row (the n of pass@k).
        pass_threshold: A run passes at a score >= this.
        max_turns: Most agent turns (LLM calls) per run.
        temperature: Sampling temperature of the agent's calls, or None for the model's default.
        max_tokens: Max tokens per LLM call, or None.
        api_key: The model's API key (else the provider's environment variable).
        base_url: Any OpenAI-compatible server.
        output: Where to write the results JSON, or None.
        limit: At most this many rows; None for all.
        offset: Rows skipped first.
        batch_size: Runs in flight at once.
        baseline_model: Also run every row against this model and compare.
        baseline_base_url: The baseline model's server.
        baseline_api_key: The baseline model's API key.
        log_path: The results log to create (default: a new file under ``$OSMOSIS_LOG_DIR``).
        resume_path: A results log to continue instead.
        backend: Where runs execute (this process, or Ray).
        run_timeout: Seconds one run may take, or None.
        preflight: Send one 1-token request per model before the run.
    """

    dataset: PathLike = ""
    model: str = ""
    eval_fns: tuple[str, ...] = ()
    module: str | None = None
    mcp_dir: str | None = None
    tool_timeout: float | None = None
    n_runs: int = 1
    pass_threshold: float = 1.0
    max_turns: int = 10
    temperature: float | None = None
    max_tokens: int | None = None
    api_key: str | None = None
    base_url: str | None = None
    output: PathLike | None = None
    limit: int | None = None
    offset: int = 0
    batch_size: int = 1
    baseline_model: str | None = None
    baseline_base_url: str | None = None
    baseline_api_key: str | None = None
    log_path: PathLike | None = None
    resume_path: PathLike | None = None
    backend: BackendOptions = field(default_factory=BackendOptions)
    run_timeout: float | None = 600.0
    preflight: bool = True

    def __post_init__(self) -> None:
        from osmosis_ai._files import check_output_file
        from osmosis_ai.eval.agent import check_agent_source
        from osmosis_ai.runs.session_log import check_log_choice

        object.__setattr__(self, "eval_fns", tuple(self.eval_fns))
        _at_least(self, ("n_runs", "batch_size", "max_turns"), 1)
        _at_least(self, ("offset",), 0)
        _at_least(self, ("limit",), 1)
        _positive(self, "run_timeout")
        check_log_choice(self.log_path, self.resume_path)
        check_output_file(self.output)  # before the run: a bad output must not cost the whole eval
        self.backend.check()
        check_agent_source(self.module, self.mcp_dir, self.tool_timeout)
        missing = [name for name in ("dataset", "model") if not getattr(self, name)]
        if missing:
            named = ", ".join("{" + name + "}" for name in missing)
            raise OptionsError(f"Missing required option(s): {named}", fields=tuple(missing))
        if not self.eval_fns:
            raise OptionsError(
                "At least one {eval_fns} MODULE:FN is required "
                "(e.g. {eval_fns} reward_fn.compute_reward:numbers_match_reward)",
                fields=("eval_fns",),
            )
        if (self.baseline_base_url or self.baseline_api_key) and not self.baseline_model:
            raise OptionsError(
                "{baseline_base_url} and {baseline_api_key} require {baseline_model}.",
                fields=("baseline_base_url", "baseline_api_key", "baseline_model"),
            )

    def completion_params(self) -> dict[str, Any]:
        """The sampling parameters put into each request (only those given)."""
        return {
            k: v
            for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens))
            if v is not None
        }

    def log_config(self) -> dict[str, Any]:
        """What makes logged runs comparable; a resume with any of it changed is refused."""
        from osmosis_ai.redact import safe_url

        return {
            "agent": self.module or f"mcp:{Path(str(self.mcp_dir)).resolve()}",
            "model": self.model,
            "base_url": safe_url(self.base_url),
            "eval_fns": list(self.eval_fns),
            "max_turns": self.max_turns,
            "completion_params": self.completion_params(),
            "baseline_model": self.baseline_model,
            "baseline_base_url": safe_url(self.baseline_base_url),
            "n_runs": self.n_runs,
            "offset": self.offset,
            "limit": self.limit,
        }

    def output_config(self) -> dict[str, Any]:
        """The ``config`` block of the results JSON."""
        config: dict[str, Any] = {
            "model": self.model,
            "n_runs": self.n_runs,
            "pass_threshold": self.pass_threshold,
            "eval_fns": list(self.eval_fns),
        }
        if self.baseline_model:
            config["baseline_model"] = self.baseline_model
        return config


@dataclass(frozen=True, kw_only=True)
class TestOptions:
    """Everything a ``test`` session runs with (see :func:`osmosis_ai.eval.test_session.run_test`): the
    agent once per row, no scoring.

    Attributes:
        dataset: The dataset file.
        model: The model (LiteLLM ``provider/model``, or the endpoint's model name with ``base_url``).
        module: The agent loop as ``module:attr``; or None with ``mcp_dir``.
        mcp_dir: The MCP tool folder of the built-in agent; or None with ``module``.
        tool_timeout: Seconds one MCP tool call may take (``mcp_dir`` only).
        limit: At most this many rows; None for all.
        offset: Rows skipped first.
        api_key: The model's API key (else the provider's environment variable).
        base_url: Any OpenAI-compatible server.
        max_turns: Turn limit put into each request.
        max_tokens: Max tokens per LLM call, or None.
        temperature: Sampling temperature, or None.
        output: Where to write the ``{"summary", "results"}`` JSON, or None.
        run_timeout: Seconds one row may take, or None.
    """

    __test__ = False  # not a pytest test class, whatever its name

    dataset: PathLike
    model: str = "gpt-5-mini"
    module: str | None = None
    mcp_dir: str | None = None
    tool_timeout: float | None = None
    limit: int | None = None
    offset: int = 0
    api_key: str | None = None
    base_url: str | None = None
    max_turns: int = 10
    max_tokens: int | None = None
    temperature: float | None = None
    output: PathLike | None = None
    run_timeout: float | None = 600.0

    def __post_init__(self) -> None:
        from osmosis_ai._files import check_output_file
        from osmosis_ai.eval.agent import check_agent_source

        check_agent_source(self.module, self.mcp_dir, self.tool_timeout)
        _at_least(self, ("offset",), 0)
        _at_least(self, ("limit", "max_turns"), 1)
        check_output_file(self.output)

    def completion_params(self) -> dict[str, Any]:
        """The sampling parameters put into each request (only those given)."""
        return {
            k: v
            for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens))
            if v is not None
        }
