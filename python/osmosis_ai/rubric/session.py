"""An eval-rubric session on the run engine: judge every (record, run), then read the results back.

The results log is the single source of truth: the report of an interrupted and resumed session is built
from the log exactly like one that ran straight through.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osmosis_ai.rubric.engine import RUN_FIELDS, JudgeExecutor, JudgeHealth
from osmosis_ai.runs.backends import Backend, BackendError
from osmosis_ai.runs.engine import RunEngine
from osmosis_ai.runs.log import ResultsLog, iter_runs
from osmosis_ai.runs.work import RunOutcome, work_items

if TYPE_CHECKING:
    from osmosis_ai.rubric.runner import RecordJudge

__all__ = ["RubricSession", "log_config", "run_session"]

# Keys of model_info that never go into a log header (it is a file users share).
_SECRET_KEYS = frozenset({"api_key"})


def log_config(
    rubric_id: str, rubric: str, model_info: Mapping[str, Any], number: int, function: str | None
) -> dict[str, Any]:
    """What makes logged runs comparable; a resume with any of it changed is refused."""
    info = {k: v for k, v in sorted(model_info.items()) if k not in _SECRET_KEYS and v is not None}
    return {
        "rubric_id": rubric_id,
        "rubric": rubric,
        "model_info": info,
        "number": number,
        "function": function,
    }


@dataclass
class RubricSession:
    """The session's own state; its runs stay in the results log (``log_path``).

    ``health`` is counted while the results document streams the latest runs past (see
    :mod:`osmosis_ai.rubric.document`); ``results`` reads the whole log when first asked.
    """

    total: int
    health: JudgeHealth = field(default_factory=JudgeHealth)
    interrupted: bool = False
    # 130 (Ctrl+C) or 143 (SIGTERM) when interrupted.
    interrupted_exit_code: int = 130
    session_error: str | None = None
    resumed: int = 0
    log_path: Path | None = None
    # How a remote backend spread the runs (BackendReport.as_dict()), for the --json envelope.
    backend: dict[str, Any] | None = None
    _results: dict[int, dict[int, dict[str, Any]]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_log(cls, path: Path, total: int, outcome: RunOutcome) -> RubricSession:
        """The state of a session whose runs are in the log at ``path``."""
        session = cls(
            total=total,
            interrupted=outcome.interrupted,
            interrupted_exit_code=outcome.interrupted_exit_code,
            resumed=outcome.skipped,
            log_path=path,
        )
        if outcome.stopped_early:
            session.session_error = outcome.stop_reason
        return session

    @property
    def results(self) -> dict[int, dict[int, dict[str, Any]]]:
        """Every run of the log by record position and run (both from 0), read when first asked: it holds
        the whole log (a later record of the same run replaces an earlier one)."""
        if self._results is None:
            self._results = {}
            for record in iter_runs(self.log_path) if self.log_path is not None else ():
                run = {name: record.get(name) for name in RUN_FIELDS}
                self._results.setdefault(int(record["row_index"]), {})[int(record["run_index"])] = run
        return self._results

    def runs_of(self, position: int) -> list[dict[str, Any]]:
        """The runs of the record at ``position`` (from 0, the log's ``row_index``), in run order."""
        runs = self.results.get(position, {})
        return [runs[k] for k in sorted(runs)]


def run_session(
    *,
    rubric_id: str,
    number: int,
    calls: RecordJudge,
    log: ResultsLog,
    concurrency: int,
    progress: Callable[[dict[str, Any], RunOutcome], None] | None = None,
    loop: asyncio.AbstractEventLoop | None = None,
    backend: Backend | None = None,
) -> RunOutcome:
    """Judges every (record, run) the log does not hold yet; returns what the session did.

    With ``backend`` (started by :func:`~osmosis_ai.runs.backends.backend_session`, on ``loop``), the runs
    execute on its workers, which rebuild the judge from the spec it was started with.
    """
    from osmosis_ai.llm.pool import TransportPool

    executor = JudgeExecutor(rubric_id, calls)
    engine = RunEngine(executor, log, concurrency=concurrency, on_record=progress)
    if backend is not None:
        engine.backend, engine.concurrency = backend, backend.slots()
    rows = enumerate(calls.rows())
    items = work_items(rows, number, ("",), log.done, engine.outcome)

    async def main() -> RunOutcome:
        # One connection pool for every judge call of the session.
        async with TransportPool(max_connections=concurrency):
            return await engine.run(items)

    try:
        return loop.run_until_complete(main()) if loop is not None else asyncio.run(main())
    except KeyboardInterrupt as exc:  # a second signal, or no signal handlers: what finished is in the log
        engine.outcome.interrupted_by(exc)
    except BackendError:
        raise  # every worker was lost: the caller reports why
    except Exception as exc:  # a bug of ours must not cost the runs already logged: report, then fail
        if os.environ.get("OSMOSIS_DEBUG"):
            logging.getLogger(__name__).error("the rubric session failed", exc_info=True)
        engine.outcome.stopped_early = True
        engine.outcome.stop_reason = f"{type(exc).__name__}: {exc}"
    return engine.outcome
