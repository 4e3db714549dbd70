"""The ``@osmosis_reward`` and ``@osmosis_rubric`` decorators.

As in the established 0.2.15+ package, the classic contract is enforced only when the first parameter is
named ``solution_str`` (the rule tables live in the Rust core); any other signature is accepted unchecked.
Postponed annotations work, ``async def`` functions are awaited, and a ``data_source`` keyword is dropped
only when the function cannot take it. Results follow the platform's strict rule
(:mod:`osmosis_ai.scoring`) for every decorated function: anything but a finite ``float`` raises
``TypeError`` at call time.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from osmosis_ai.errors import SignatureError
from osmosis_ai.scoring import coerce_score
from osmosis_ai.signatures import Contract, Family, check_function

__all__ = ["collect_signature_errors", "osmosis_reward", "osmosis_rubric"]

F = TypeVar("F", bound=Callable[..., Any])

_CLASSIC_CONTRACTS: frozenset[str] = frozenset({"reward", "rubric"})

# Where decoration-time breaches go instead of being raised; set only by `collect_signature_errors`.
_breaches: ContextVar[list[SignatureError] | None] = ContextVar("osmosis_signature_breaches", default=None)


@contextlib.contextmanager
def collect_signature_errors() -> Iterator[list[SignatureError]]:
    """Collects decoration-time signature errors instead of raising them, for as long as the block runs.

    A module with several broken functions then imports to the end and every breach is listed, where a
    plain import stops at the first. A function that breaks its contract is left undecorated (it has no
    ``__osmosis_contract__``). Used by ``osmosis check``; ordinary imports are unaffected.

    Example:
        >>> with collect_signature_errors() as errors:  # doctest: +SKIP
        ...     importlib.import_module("reward_fn.compute_reward")
        >>> [e.function for e in errors]  # doctest: +SKIP
        ['bad_reward', 'worse_reward']
    """
    found: list[SignatureError] = []
    token = _breaches.set(found)
    try:
        yield found
    finally:
        _breaches.reset(token)


def _function_name(func: Callable[..., Any]) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func)))


def _drops_data_source(signature: inspect.Signature) -> bool:
    """Trainers pass ``data_source=``; drop it only where the function could not take it."""
    params = signature.parameters.values()
    return "data_source" not in signature.parameters and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params
    )


def _check_rubric_arguments(
    name: str, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError as exc:
        raise SignatureError(f"Function '{name}': {exc}", function=name) from exc
    bound.apply_defaults()
    values = bound.arguments
    if "solution_str" not in values:
        raise SignatureError(
            f"Function '{name}': 'solution_str' argument is required", function=name, parameter="solution_str"
        )
    if not isinstance(values["solution_str"], str):
        got = type(values["solution_str"]).__name__
        raise SignatureError(
            f"Function '{name}': 'solution_str' must be a string, got {got}",
            function=name,
            parameter="solution_str",
            expected="str",
        )
    if "ground_truth" not in values:
        raise SignatureError(
            f"Function '{name}': 'ground_truth' argument is required", function=name, parameter="ground_truth"
        )
    if values["ground_truth"] is not None and not isinstance(values["ground_truth"], str):
        raise SignatureError(
            f"Function '{name}': 'ground_truth' must be a string or None, "
            f"got {type(values['ground_truth']).__name__}",
            function=name,
            parameter="ground_truth",
            expected="str or None",
        )
    if "extra_info" not in values:
        raise SignatureError(
            f"Function '{name}': 'extra_info' argument is required", function=name, parameter="extra_info"
        )


def _wrap(func: F, family: Family) -> F:
    try:
        if not callable(func):
            raise SignatureError(f"@osmosis_{family} expects a function, got {type(func).__name__}")
        contract: Contract = check_function(func, family)
    except SignatureError as exc:
        sink = _breaches.get()
        if sink is None:
            raise
        sink.append(exc)
        return func
    name = _function_name(func)
    signature = inspect.signature(func)
    drop_data_source = _drops_data_source(signature)
    check_arguments = family == "rubric" and contract in _CLASSIC_CONTRACTS

    def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if drop_data_source and "data_source" in kwargs:
            kwargs = {k: v for k, v in kwargs.items() if k != "data_source"}
        if check_arguments:
            _check_rubric_arguments(name, signature, args, kwargs)
        return kwargs

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> float:
            kwargs = prepare(args, kwargs)
            return coerce_score(await func(*args, **kwargs), function=name, strict=True)

        wrapper: Any = async_wrapper
    else:

        @functools.wraps(func)
        def sync_wrapper(*args: Any, **kwargs: Any) -> float:
            kwargs = prepare(args, kwargs)
            return coerce_score(func(*args, **kwargs), function=name, strict=True)

        wrapper = sync_wrapper

    wrapper.__osmosis_contract__ = contract
    return cast(F, wrapper)  # functools.wraps: the same signature


def osmosis_reward(func: F) -> F:
    """Marks a reward function and enforces its contract.

    When the first parameter is ``solution_str`` the classic contract is enforced:
    ``(solution_str: str, ground_truth: str, extra_info: dict | None = None, ...)``. Any other signature
    is accepted unchecked, as in the established package. Every call must return a finite ``float``
    (``1``, ``True``, ``None`` or a numpy scalar raise: write ``return float(x)``). ``async def`` functions
    are awaited.

    Args:
        func: The reward function.

    Returns:
        A wrapper with the same name, signature and ``__wrapped__``.

    Raises:
        SignatureError: (a ``TypeError``) at decoration time if the signature breaks the contract, and
            at call time if the result is not a finite ``float``.

    Example:
        >>> @osmosis_reward
        ... def exact_match(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
        ...     return float(solution_str.strip() == ground_truth.strip())
        >>> exact_match("42", "42")
        1.0
    """
    return _wrap(func, "reward")


def osmosis_rubric(func: F) -> F:
    """Marks a rubric (LLM-judge) scoring function and enforces its contract.

    When the first parameter is ``solution_str`` the classic contract is enforced:
    ``(solution_str: str, ground_truth: str | None, extra_info, ...)`` with no defaults on the first two
    parameters, and every call checks that ``solution_str`` is a string, ``ground_truth`` a string or
    ``None`` and ``extra_info`` given (or defaulted). Any other signature is accepted unchecked, as in the
    established package. The result must be a finite ``float`` (as for ``@osmosis_reward``).

    Args:
        func: The rubric function.

    Returns:
        A wrapper with the same name, signature and ``__wrapped__``.

    Raises:
        SignatureError: (a ``TypeError``) when the signature, an argument or the result breaks the contract.

    Example:
        >>> @osmosis_rubric
        ... def judge(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
        ...     return 0.5
        >>> judge("answer", None, {})
        0.5
    """
    return _wrap(func, "rubric")
