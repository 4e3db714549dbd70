"""User code imported under a deadline, with Ctrl+C and SIGTERM honoured while it imports.

A user's module runs arbitrary code at import: a ``while True``, a network call without a timeout, an
``input()``. Without a guard the command hangs, and inside ``asyncio.run`` the first Ctrl+C only asks the
event loop to cancel, which a blocked loop never does. :func:`guarded` runs an import so that

* it stops after a deadline (``OSMOSIS_IMPORT_TIMEOUT`` seconds, default 60; ``0`` for none) with an error
  naming the file and the line it was stopped at;
* Ctrl+C and SIGTERM stop it at once with :class:`ImportInterrupted` (a ``KeyboardInterrupt`` whose
  ``exit_code`` is 130 or 143 and whose message names the file).

On the main thread the import stays there (a module may install signal handlers or look for the main
thread): a timer signal and the two stop signals raise into it, and the process's own handlers are put back
afterwards. Elsewhere (a Ray actor's thread, a server's worker) no signal reaches the thread, so the import
runs on a daemon thread that is abandoned at the deadline; it cannot block the process's exit.
"""

from __future__ import annotations

import contextvars
import os
import signal
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TypeVar

from osmosis_ai.errors import ConfigError, OsmosisError
from osmosis_ai.stop_signals import exit_code_of, stop_word

__all__ = [
    "DEFAULT_IMPORT_TIMEOUT_S",
    "IMPORT_TIMEOUT_ENV",
    "ImportDeadlineError",
    "ImportInterrupted",
    "guarded",
    "import_timeout",
]

T = TypeVar("T")

IMPORT_TIMEOUT_ENV = "OSMOSIS_IMPORT_TIMEOUT"
DEFAULT_IMPORT_TIMEOUT_S = 60.0
_PACKAGE = str(Path(__file__).resolve().parent)


class ImportDeadlineError(OsmosisError, TimeoutError):
    """Importing a user's module did not finish within the deadline; the message names the file."""


class ImportInterrupted(KeyboardInterrupt):
    """Ctrl+C or SIGTERM arrived while a user's module was importing.

    Attributes:
        signum: ``signal.SIGINT`` or ``signal.SIGTERM``.
        exit_code: 130 or 143 (128 + the signal), what the CLI exits with.
    """

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum
        self.exit_code = exit_code_of(signum)


def import_timeout() -> float | None:
    """The import deadline in seconds from ``OSMOSIS_IMPORT_TIMEOUT`` (default 60); None for no deadline.

    Raises:
        ConfigError: The variable is set to something other than a number of seconds.

    Example:
        >>> import_timeout() > 0  # doctest: +SKIP
        True
    """
    raw = os.environ.get(IMPORT_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_IMPORT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not seconds >= 0 or seconds == float("inf"):
        raise ConfigError(
            f"{IMPORT_TIMEOUT_ENV}={raw!r}: expected the seconds a user module may take to import "
            "(a number; 0 for no deadline)"
        )
    return seconds or None


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return (_PACKAGE, *{paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths})


def _where(frames: list[traceback.FrameSummary]) -> str:
    """`` (stopped at file:line: code)`` of the innermost frame of user code (not the standard library,
    an installed package or ours), else ``""``."""
    roots = _library_roots()
    user = [f for f in frames if not f.filename.startswith(roots) and not f.filename.startswith("<frozen")]
    if not user:
        return ""
    code = f": {user[-1].line.strip()}" if user[-1].line else ""
    return f" (stopped at {user[-1].filename}:{user[-1].lineno}{code})"


def _deadline_error(label: str, seconds: float, frames: list[traceback.FrameSummary]) -> ImportDeadlineError:
    return ImportDeadlineError(
        f"Importing {label} did not finish within {seconds:g} s{_where(frames)}. A module should not "
        "wait at import (a loop, a network call, input()); move that work into a function, or allow "
        f"longer with {IMPORT_TIMEOUT_ENV}=SECONDS"
    )


def _interrupted(label: str, signum: int) -> ImportInterrupted:
    verb = stop_word(exit_code_of(signum), starts_sentence=True)
    return ImportInterrupted(f"{verb} while importing {label}", signum)


class _Stop(BaseException):
    """Raised into the importing code by a signal (a BaseException: ``except Exception`` lets it pass)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class _Guard:
    """The handlers' state: after ``closing`` a signal is only remembered, for the handler put back."""

    closing: bool = False
    stopped: int | None = None
    pending: list[int] = field(default_factory=list)
    frames: list[traceback.FrameSummary] = field(default_factory=list)

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.closing:
            self.pending.append(signum)
            return
        self.stopped = signum  # kept even if the user's code swallows the _Stop
        raise _Stop(signum)


def _on_main_thread(work: Callable[[], T], label: str, seconds: float | None) -> T:
    guard = _Guard()
    stops = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGALRM] if seconds else [])
    previous: dict[int, Any] = {}
    signum: int
    started = time.monotonic()
    old_timer = (0.0, 0.0)
    try:
        for signum in stops:
            previous[signum] = signal.signal(signum, guard.handle)
        if seconds:
            # Re-fires each second: a module that swallows the first stop is stopped again.
            old_timer = signal.setitimer(signal.ITIMER_REAL, seconds, min(seconds, 1.0))
        value = work()
    except _Stop as stop:
        guard.closing = True
        guard.frames = traceback.extract_tb(stop.__traceback__)
    finally:
        guard.closing = True
        if seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        if old_timer[0] > 0:  # someone else's timer (pytest-timeout, say): put back what is left of it
            left = max(old_timer[0] - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, old_timer[1])
    if guard.stopped is not None:
        if guard.stopped == signal.SIGALRM:
            raise _deadline_error(label, seconds or 0.0, guard.frames)
        raise _interrupted(label, guard.stopped)
    for signum in guard.pending:  # arrived after the import finished: the process's own handler decides
        if signum != signal.SIGALRM:
            signal.raise_signal(signum)
    return value


def _on_helper_thread(work: Callable[[], T], label: str, seconds: float) -> T:
    done = threading.Event()
    values: list[T] = []  # what the import returned, or
    errors: list[BaseException] = []  # what it raised
    context = contextvars.copy_context()  # the caller's context variables (collected errors, ...)

    def run() -> None:
        try:
            values.append(context.run(work))
        except BaseException as exc:  # handed to the waiting thread, whatever it is
            errors.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=run, name="osmosis-user-import", daemon=True)
    worker.start()
    if not done.wait(seconds):
        frame = sys._current_frames().get(worker.ident or -1)
        raise _deadline_error(label, seconds, traceback.extract_stack(frame) if frame else [])
    if errors:
        error = errors[0]
        tb: TracebackType | None = error.__traceback__
        raise error.with_traceback(tb)
    return values[0]


def guarded(work: Callable[[], T], *, label: str, seconds: float | None = None) -> T:
    """Runs ``work`` (an import of user code) under the deadline, honouring Ctrl+C and SIGTERM.

    Args:
        work: What imports the user's code.
        label: The file (or module) being imported, for messages.
        seconds: The deadline; None reads :func:`import_timeout` (``OSMOSIS_IMPORT_TIMEOUT``), 0 means none.

    Raises:
        ImportDeadlineError: The deadline passed; the message names ``label`` and where it was stopped.
        ImportInterrupted: Ctrl+C or SIGTERM arrived meanwhile (main thread only).

    Example:
        >>> guarded(lambda: 42, label="answer.py")
        42
    """
    limit = import_timeout() if seconds is None else (seconds or None)
    main = threading.current_thread() is threading.main_thread()
    if main and hasattr(signal, "setitimer"):
        return _on_main_thread(work, label, limit)
    if limit is None:
        return work()
    return _on_helper_thread(work, label, limit)
