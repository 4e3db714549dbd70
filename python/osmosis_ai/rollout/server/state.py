"""What the rollout server remembers: one record per idempotency key, and the work running for it.

A record is created by the first ``/v1/rollout/init`` for a key and kept until ``record_ttl_seconds``
after its rollout finished, so a repeated init (TrainGate retrying, a duplicate) gets the same answer and
never starts the agent twice. Running rollouts are bounded by a semaphore; finished work is reported to
TrainGate once, and a report TrainGate never accepted stays readable on the record until the TTL.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from osmosis_ai.errors import OsmosisRolloutError
from osmosis_ai.rollout.agent_loop import RolloutAgentLoop, RolloutContext, checked_result
from osmosis_ai.rollout.client import OsmosisLLMClient, create_http_client
from osmosis_ai.rollout.schemas import RolloutRequest

if TYPE_CHECKING:
    import httpx

    from osmosis_ai.rollout.settings import RolloutSettings

__all__ = ["AppState", "RolloutRecord"]

logger = logging.getLogger("osmosis_ai.rollout.server")

# Record states, in order: queued -> running -> reporting -> completed | callback_failed | cancelled.
FINISHED_STATES = frozenset({"completed", "callback_failed", "cancelled"})
STATES = ("queued", "running", "reporting", "completed", "callback_failed", "cancelled")
# How long a cancelled rollout's "cancelled" report may take at shutdown.
CANCEL_REPORT_TIMEOUT_SECONDS = 10.0


@dataclass
class RolloutRecord:
    """One idempotency key's rollout."""

    key: str
    rollout_id: str
    init: asyncio.Future[bytes]
    state: str = "queued"
    task: asyncio.Task[None] | None = None
    created_at: float = field(default_factory=time.monotonic)
    finished_at: float | None = None
    status: str | None = None
    error: str | None = None
    # The report TrainGate did not accept, kept so the result is not lost.
    undelivered: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        """The record as JSON for the status endpoint."""
        body: dict[str, Any] = {"rollout_id": self.rollout_id, "state": self.state, "status": self.status}
        if self.error:
            body["error"] = self.error
        if self.undelivered is not None:
            body["undelivered_result"] = self.undelivered
        return body


class AppState:
    """The server's records, concurrency limit and background work.

    Args:
        agent_loop: The agent every rollout runs.
        settings: Rollout settings (client retries, server limits).
        max_concurrent: Rollouts running at once; the settings' value when omitted.
        record_ttl_seconds: How long finished records are kept; the settings' value when omitted.
        debug_dir: Directory for ``ctx.log_event`` traces, if any.
    """

    def __init__(
        self,
        agent_loop: RolloutAgentLoop,
        settings: RolloutSettings,
        max_concurrent: int | None = None,
        record_ttl_seconds: float | None = None,
        debug_dir: str | None = None,
    ) -> None:
        server = settings.server
        self.agent_loop = agent_loop
        self.settings = settings
        self.max_concurrent = max_concurrent or server.max_concurrent_rollouts
        self.record_ttl = record_ttl_seconds or server.record_ttl_seconds
        self.debug_dir = debug_dir
        self.records: dict[str, RolloutRecord] = {}
        # Records per state, kept in step by add/move/drop so /health costs O(1) however many are kept.
        self._counts: Counter[str] = Counter()
        self.accepting = True
        self._grace_ends: float | None = None  # set by begin_shutdown
        self.http: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._cleanup_task: asyncio.Task[None] | None = None

    # --- lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Opens the pooled HTTP client and starts the TTL cleanup."""
        self._semaphore = asyncio.Semaphore(self.max_concurrent)
        # One pool for all rollouts. (Keeping every connection alive measured slower: httpcore scans
        # the whole pool for each request.)
        self.http = create_http_client(self.settings)
        self._cleanup_task = asyncio.create_task(self._cleanup_loop())

    def begin_shutdown(self) -> None:
        """Stops taking rollouts (inits get 503) and starts the running ones' grace period (once)."""
        if self._grace_ends is None:
            self.accepting = False
            self._grace_ends = time.monotonic() + self.settings.server.shutdown_grace_seconds

    def running_tasks(self) -> list[asyncio.Task[None]]:
        """The rollouts not finished yet (queued, running or reporting)."""
        return [r.task for r in self.records.values() if r.task is not None and not r.task.done()]

    async def drain(self) -> None:
        """Waits until every running rollout finished or the grace period begun by :meth:`begin_shutdown`
        ended, whichever comes first; the server keeps answering meanwhile."""
        self.begin_shutdown()
        assert self._grace_ends is not None
        pending = self.running_tasks()
        left = self._grace_ends - time.monotonic()
        if pending and left > 0:
            logger.info("waiting up to %.1f s for %d rollout(s) to finish", left, len(pending))
            await asyncio.wait(pending, timeout=left)

    async def stop(self) -> None:
        """Stops taking rollouts; running ones get what is left of the grace period, then are cancelled
        and reported."""
        await self.drain()
        still = self.running_tasks()
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still, timeout=CANCEL_REPORT_TIMEOUT_SECONDS + 1)
        if self._cleanup_task is not None:
            self._cleanup_task.cancel()
        if self.http is not None:
            await self.http.aclose()

    async def _cleanup_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.server.cleanup_interval_seconds)
            self.forget_expired()

    def forget_expired(self, now: float | None = None) -> int:
        """Drops finished records older than the TTL; returns how many were dropped."""
        now = time.monotonic() if now is None else now
        expired = [
            key
            for key, record in self.records.items()
            if record.finished_at is not None and now - record.finished_at > self.record_ttl
        ]
        for key in expired:
            self.drop(key)
        return len(expired)

    # --- records ----------------------------------------------------------------------------------------

    def add(self, record: RolloutRecord) -> None:
        """Remembers a new record under its key."""
        self.records[record.key] = record
        self._counts[record.state] += 1

    def drop(self, key: str) -> None:
        """Forgets a record."""
        self._counts[self.records.pop(key).state] -= 1

    def move(self, record: RolloutRecord, state: str) -> None:
        """Changes a record's state."""
        self._counts[record.state] -= 1
        record.state = state
        self._counts[state] += 1

    def counts(self) -> dict[str, int]:
        """Rollouts per state (queued, running, reporting, completed, callback_failed, cancelled)."""
        return {state: self._counts[state] for state in STATES}

    # --- one rollout ------------------------------------------------------------------------------------

    def start_rollout(self, record: RolloutRecord, request: RolloutRequest, tools: list[Any]) -> None:
        """Starts the background task that runs the agent and reports to TrainGate."""
        record.task = asyncio.create_task(
            self._run(record, request, tools), name=f"rollout-{request.rollout_id}"
        )

    async def _run(self, record: RolloutRecord, request: RolloutRequest, tools: list[Any]) -> None:
        llm = OsmosisLLMClient(
            request.server_url,
            request.rollout_id,
            api_key=request.api_key,
            settings=self.settings,
            http_client=self.http,
        )
        try:
            assert self._semaphore is not None
            async with self._semaphore:
                self.move(record, "running")
                report = await self._run_agent(request, tools, llm)
        except asyncio.CancelledError:
            self.move(record, "reporting")
            message = "cancelled: the rollout server shut down before the rollout finished"
            body = _error_body(llm, message, finish_reason="cancelled")
            await self._report(record, llm, body, final_state="cancelled", cancelled=True)
            raise
        self.move(record, "reporting")
        await self._report(record, llm, report, final_state="completed")

    async def _run_agent(
        self, request: RolloutRequest, tools: list[Any], llm: OsmosisLLMClient
    ) -> dict[str, Any]:
        """Runs the agent; returns the callback body (an ERROR body for any failure of the agent)."""
        ctx = RolloutContext(
            request=request, tools=tools, llm=llm, _start_time=time.monotonic(), _debug_dir=self.debug_dir
        )
        timeout = self.settings.server.request_timeout_seconds
        try:
            result = await asyncio.wait_for(self.agent_loop.run(ctx), timeout)
        except asyncio.TimeoutError:
            logger.warning("rollout %s: agent run exceeded %.0f s", request.rollout_id, timeout)
            return _error_body(llm, f"agent run exceeded the {timeout:g} s limit (request_timeout_seconds)")
        except Exception as exc:
            logger.exception("rollout %s: agent run raised", request.rollout_id)
            return _error_body(llm, f"{type(exc).__name__}: {exc}")
        try:
            result = checked_result(result)
        except TypeError as exc:
            return _error_body(llm, str(exc))
        try:
            return llm.response_body(
                result.status,
                result.final_messages,
                result.finish_reason,
                result.error_message,
                result.metrics,
                result.reward,
            )
        except ValueError as exc:
            logger.error("rollout %s: unusable result: %s", request.rollout_id, exc)
            return _error_body(llm, f"the agent's RolloutResult cannot be sent: {exc}")

    async def _report(
        self,
        record: RolloutRecord,
        llm: OsmosisLLMClient,
        body: dict[str, Any],
        *,
        final_state: str,
        cancelled: bool = False,
    ) -> None:
        record.status = body["status"]
        record.error = body.get("error_message")
        try:
            if cancelled:
                await asyncio.wait_for(llm.send_response(body), CANCEL_REPORT_TIMEOUT_SECONDS)
            else:
                await llm.send_response(body)
            self.move(record, final_state)
        except (OsmosisRolloutError, asyncio.TimeoutError) as exc:
            self.move(record, "callback_failed")
            record.undelivered = body
            logger.error(
                "rollout %s: TrainGate did not accept the result (%s); it is kept for %.0f s at "
                "GET /v1/rollout/status/%s",
                record.rollout_id,
                exc,
                self.record_ttl,
                record.key,
            )
        except asyncio.CancelledError:
            self.move(record, "callback_failed")
            record.undelivered = body
            logger.error("rollout %s: shut down while reporting; result not delivered", record.rollout_id)
            raise
        finally:
            record.finished_at = time.monotonic()


def _error_body(llm: OsmosisLLMClient, message: str, finish_reason: str = "error") -> dict[str, Any]:
    return llm.response_body("ERROR", [], finish_reason=finish_reason, error_message=message)
