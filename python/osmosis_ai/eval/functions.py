"""Eval functions: load `module:function` paths, detect their mode, and score a finished conversation.

Simple mode (first parameter ``solution_str``) is called as
``fn(solution_str=<last assistant text>, ground_truth=..., extra_info=<row>)``; full mode (first parameter
``messages``) as ``fn(messages=<final messages>, ground_truth=..., metadata=<row>)``. The mode comes from the
core's signature rule tables, the same check ``@osmosis_reward`` uses, so a function that would fail at call
time is refused at load time instead of silently scoring 0.0 on every run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from osmosis_ai.errors import EvalFnError, SignatureError
from osmosis_ai.importer import import_object
from osmosis_ai.runs.user_code import SyncFunction
from osmosis_ai.scoring import coerce_score
from osmosis_ai.signatures import check_function

__all__ = ["EvalFunction", "final_assistant_text", "load_eval_function", "load_eval_functions"]

EvalMode = Literal["simple", "full"]
_EXAMPLE = "reward_fn.compute_reward:numbers_match_reward"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Multi-part content: the text parts, in order (the established harness scored the list's repr).
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        return "".join(parts)
    return str(content)


def final_assistant_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The content of the last assistant message that has content, or ``""``.

    Example:
        >>> final_assistant_text([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "42"}])
        '42'
    """
    for message in reversed(messages):
        if message.get("role") == "assistant" and (content := message.get("content")) is not None:
            return content if type(content) is str else _content_text(content)
    return ""


@dataclass(frozen=True)
class EvalFunction:
    """A loaded eval function.

    Attributes:
        name: The ``module:function`` path as given; the key of its scores in results.
        func: The callable.
        mode: ``"simple"`` or ``"full"``.
    """

    name: str
    func: Callable[..., Any]
    mode: EvalMode
    # How a sync function is called (inline or on the pool, decided per function); None when async.
    _sync: SyncFunction[Any] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sync = None if inspect.iscoroutinefunction(self.func) else SyncFunction(self.func)
        object.__setattr__(self, "_sync", sync)

    @property
    def is_async(self) -> bool:
        return self._sync is None

    async def score(self, messages: Sequence[Mapping[str, Any]], row: Mapping[str, Any]) -> float:
        """Scores one finished conversation of ``row``; raises :class:`EvalFnError` on any failure."""
        # The arguments are made before the call (a failure there is the run's, not the function's) and
        # passed straight into it: no kwargs dict of our own to build and unpack.
        ground_truth = row.get("ground_truth")
        simple = self.mode == "simple"
        first = final_assistant_text(messages) if simple else list(messages)
        extra = dict(row)
        call = self.func if self._sync is None else self._sync
        try:
            if simple:
                value = await call(solution_str=first, ground_truth=ground_truth, extra_info=extra)
            else:
                value = await call(messages=first, ground_truth=ground_truth, metadata=extra)
        except Exception as exc:
            raise EvalFnError(f"{type(exc).__name__}: {exc}") from exc
        try:
            return coerce_score(value, function=self.name, strict=False)
        except SignatureError as exc:
            # A bool, None, a string or NaN is an error of this run, never a score.
            raise EvalFnError(str(exc)) from None


def load_eval_function(path: str, *, root: Path | None = None) -> EvalFunction:
    """Imports ``module:function`` (resolved from ``root``, default the current directory) and checks it.

    Args:
        path: ``"package.module:function"``, or the path of an OpenAI grader config (``*.json``).
        root: The directory module paths are resolved from.

    Returns:
        The loaded :class:`EvalFunction` with its detected mode.

    Raises:
        EvalFnError: A malformed path, an import failure, a missing or non-callable attribute, or a signature
            that fits neither mode (the message names the rule that failed).

    Example:
        >>> load_eval_function("reward_fn.compute_reward:numbers_match_reward").mode  # doctest: +SKIP
        'simple'
    """
    if path.endswith(".json"):
        # An OpenAI grader config: the same reward, graded locally (osmosis_ai.graders).
        from osmosis_ai.errors import ConfigError
        from osmosis_ai.graders.session import grader_eval_function

        grader_path = Path(path) if root is None or Path(path).is_absolute() else root / path
        try:
            return grader_eval_function(str(grader_path) if root is not None else path)
        except (ConfigError, OSError) as exc:
            raise EvalFnError(f"Grader config '{path}' cannot be used: {exc}") from exc
    func = import_object(
        path, what="eval function", example=_EXAMPLE, root=root, error=EvalFnError, keep_root_on_path=False
    )
    if not callable(func):
        raise EvalFnError(f"'{path}' is not callable (it is a {type(func).__name__})")
    try:
        contract = check_function(func, "eval")
    except SignatureError as exc:
        raise EvalFnError(f"Eval function '{path}' has an unusable signature: {exc}") from exc
    return EvalFunction(name=path, func=func, mode="simple" if contract == "eval_simple" else "full")


def load_eval_functions(paths: Sequence[str], *, root: Path | None = None) -> list[EvalFunction]:
    """Loads several eval functions; the same path twice is an error.

    Example:
        >>> load_eval_functions(["a:f", "a:f"])  # doctest: +SKIP
        Traceback (most recent call last):
        EvalFnError: Duplicate eval function path: a:f
    """
    if not paths:
        raise EvalFnError(f"At least one --eval-fn is required (e.g. --eval-fn {_EXAMPLE})")
    seen: set[str] = set()
    loaded = []
    for path in paths:
        if path in seen:
            raise EvalFnError(f"Duplicate eval function path: {path}")
        seen.add(path)
        loaded.append(load_eval_function(path, root=root))
    return loaded
