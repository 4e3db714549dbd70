"""How a stop by a signal is named, and what a stopped command exits with: the one home of that wording.

SIGTERM (``kill``, a supervisor, a CI job's timeout) is "terminated (SIGTERM)" and exit 143; Ctrl+C (SIGINT)
is "interrupted" and exit 130 (a command may keep its established Ctrl+C words: eval-rubric's "cancelled by
user"). The run engine's outcome, the importer's deadline, ``serve``, ``eval run``'s summary and every CLI
message word a stop here.

Python turns SIGINT into ``KeyboardInterrupt`` but lets SIGTERM kill the process without a word, skipping
every ``finally``. :func:`sigterm_raises` makes SIGTERM raise :class:`Terminated` (a ``KeyboardInterrupt``)
instead, so whatever cleans up after Ctrl+C cleans up after SIGTERM too, and the CLI says which it was.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["Terminated", "exit_code_of", "sigterm_raises", "stop_word"]


def exit_code_of(signum: int) -> int:
    """The exit code of a command a signal stopped: 128 + the signal (130 for Ctrl+C, 143 for SIGTERM).

    Example:
        >>> exit_code_of(signal.SIGTERM)
        143
    """
    return 128 + int(signum)


def stop_word(exit_code: int, *, ctrl_c: str = "interrupted", starts_sentence: bool = False) -> str:
    """How a stop is named in a message, from its exit code: ``terminated (SIGTERM)`` for 143, else
    ``ctrl_c``; capitalised when it ``starts_sentence``.

    Example:
        >>> stop_word(143), stop_word(130), stop_word(130, ctrl_c="cancelled by user")
        ('terminated (SIGTERM)', 'interrupted', 'cancelled by user')
        >>> stop_word(143, starts_sentence=True)
        'Terminated (SIGTERM)'
    """
    word = "terminated (SIGTERM)" if exit_code == exit_code_of(signal.SIGTERM) else ctrl_c
    return word[:1].upper() + word[1:] if starts_sentence else word


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (raised by :func:`sigterm_raises`' handler where Ctrl+C raises ``KeyboardInterrupt``).

    Attributes:
        signum: ``signal.SIGTERM``.
        exit_code: 143.
    """

    signum = signal.SIGTERM
    exit_code = exit_code_of(signal.SIGTERM)

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or stop_word(self.exit_code, starts_sentence=True))


def _raise_terminated(_signum: int, _frame: FrameType | None) -> None:
    raise Terminated()


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` in the main thread; the previous handler after.

    Elsewhere than the main thread (Python delivers signals only there) it changes nothing.

    Example:
        >>> with sigterm_raises():
        ...     pass
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
