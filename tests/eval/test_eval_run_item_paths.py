"""eval run's item on a LocalBackend: its steps on the request's fields (no ExecutionRequest) when validation
would keep them as they are, else through the validated request; the same record either way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from osmosis_ai.eval.workflow_executor import WorkflowExecutor
from osmosis_ai.llm.bridge import LLMBridge, split_request
from osmosis_ai.llm.transport import Reply
from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, LocalBackend, get_rollout_context
from osmosis_ai.runs.work import RunControl, WorkItem


class _Transport:
    """Answers every call at once with the last user message's first word, 5 + 2 tokens."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def complete(self, messages: Any, tools: Any = None, params: Any = None, **kw: Any) -> Reply:
        self.sent.append((messages, tools, params))
        message = {"role": "assistant", "content": messages[-1]["content"].split()[0]}
        usage = {"prompt_tokens": 5, "completion_tokens": 2}
        raw = {
            "choices": [{"index": 0, "message": dict(message), "finish_reason": "stop"}],
            "usage": {**usage},
        }
        return Reply(message, usage, "stop", raw)


class _Flow(AgentWorkflow):
    async def run(self, ctx: Any) -> Any:
        reply = await get_rollout_context().chat_completions({"model": "m", "messages": ctx.prompt})
        if ctx.metadata is not None:
            ctx.metadata["seen_by_workflow"] = True  # the workflow's copy: never the grader's or the row's
        return AgentWorkflowOutput(messages=[*ctx.prompt, reply["choices"][0]["message"]], metrics={"n": 1.0})


class _Grader(Grader):
    async def grade(self, ctx: Any) -> None:
        if ctx.metadata is not None:
            ctx.metadata["graded"] = True  # the grader's own copy, recorded as the request's metadata
        ctx.set_reward(1.0 if ctx.sample.messages[-1]["content"] == ctx.label else 0.0)


class _OwnExecute(LocalBackend):
    """A backend with its own execute(): the executor calls it with a validated request and callbacks."""

    async def execute(self, request: Any, on_workflow_complete: Any, on_grader_complete: Any = None) -> None:
        await super().execute(request, on_workflow_complete, on_grader_complete)


def _run(backend: LocalBackend, rows: list[dict[str, Any]], timeout: Any = 60.0) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        bridge = LLMBridge(_Transport())  # type: ignore[arg-type]
        bridge.port = 1  # never listened on: the workflow's calls are answered in process
        executor = WorkflowExecutor(backend, bridge, agent_timeout=timeout, grader_timeout=timeout)
        records = []
        for i, row in enumerate(rows):
            item = WorkItem(i, row, f"k{i}", 0)
            record = executor.new_record(item)
            try:
                await executor.execute(item, record, RunControl())
            except ValidationError as exc:  # the engine records it as the item's error
                record["error"] = f"ValidationError: {exc.errors()[0]['loc']}"
            executor.finish(item, record)
            records.append(record)
        return records

    return asyncio.run(main())


def _without_ids(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "rollout_id"} for r in records]


def _spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"_run_fields": 0, "run_rollout": 0}
    for name in calls:
        original = getattr(LocalBackend, name)

        def counted(self: Any, *args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
            calls[_name] += 1
            return _original(self, *args, **kw)

        monkeypatch.setattr(LocalBackend, name, counted)
    return calls


def _rows() -> list[dict[str, Any]]:
    return [
        {"user_prompt": "4 please", "ground_truth": "4", "source_row_index": 0},
        {"system_prompt": "be brief", "user_prompt": "7 now", "ground_truth": "8", "source_row_index": 1},
        {"user_prompt": "2 more", "ground_truth": "2", "metadata": {"topic": "sums"}, "source_row_index": 2},
        {"user_prompt": "no label", "source_row_index": 3},
    ]


def test_plain_fields_run_without_a_request_and_record_what_the_request_path_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _spy(monkeypatch)
    rows = _rows()
    fast = _run(LocalBackend(workflow=_Flow, grader=_Grader, artifact_root=False, max_concurrent=None), rows)
    assert calls == {"_run_fields": len(rows), "run_rollout": 0}
    general = _run(
        _OwnExecute(workflow=_Flow, grader=_Grader, artifact_root=False, max_concurrent=None), rows
    )
    assert calls == {"_run_fields": len(rows), "run_rollout": 0}  # execute() takes neither
    assert _without_ids(fast) == _without_ids(general)
    assert [r.get("reward") for r in fast] == [1.0, 0.0, 1.0, None]  # the last has nothing to grade
    assert fast[0]["llm_calls"] == [{"prompt_tokens": 5, "completion_tokens": 2}] and fast[0]["tokens"] == 7
    # The grader's metadata is a copy of the row's, and it is what the record keeps.
    assert fast[2]["request_metadata"] == {"topic": "sums", "graded": True}
    assert rows[2]["metadata"] == {"topic": "sums"}


@pytest.mark.parametrize(
    ("row", "timeout"),
    [
        ({"user_prompt": "4", "ground_truth": "4"}, 60),  # an int budget: validated to 60.0
        ({"user_prompt": "4", "ground_truth": 4}, 60.0),  # a label that is not text: a validation error
        ({"user_prompt": "4", "ground_truth": "4", "metadata": {1: "x"}}, 60.0),  # a key that is not text
        ({"user_prompt": "4", "ground_truth": "4"}, float("inf")),  # not a finite budget
    ],
)
def test_fields_validation_would_change_go_through_the_validated_request(
    monkeypatch: pytest.MonkeyPatch, row: dict[str, Any], timeout: Any
) -> None:
    calls = _spy(monkeypatch)
    backend = LocalBackend(workflow=_Flow, grader=_Grader, artifact_root=False, max_concurrent=None)
    [record] = _run(backend, [row], timeout)
    [general] = _run(_OwnExecute(workflow=_Flow, grader=_Grader, artifact_root=False), [row], timeout)
    assert _without_ids([record]) == _without_ids([general])
    if (record.get("error") or "").startswith("ValidationError"):
        assert calls == {"_run_fields": 0, "run_rollout": 0}  # the request could not be made
    else:  # the validated request's steps (run_rollout runs them through _run_fields)
        assert calls == {"_run_fields": 1, "run_rollout": 1} and record["status"] == "success"


@pytest.mark.parametrize(
    ("body", "params"),
    [
        ({"model": "m", "messages": []}, {}),
        ({"model": "m", "messages": [], "tools": [], "stream": True, "stream_options": {}}, {}),
        (
            {"model": "m", "messages": [], "temperature": 0, "stream_options": {"include_usage": True}},
            {"temperature": 0},
        ),
        (
            {"messages": [], "seed": 1, "stream": False, "tool_choice": "auto"},
            {"seed": 1, "tool_choice": "auto"},
        ),
    ],
)
def test_a_request_passes_on_every_key_the_transport_does_not_set(body: dict[str, Any], params: Any) -> None:
    messages, tools, passed = split_request(body)
    assert messages is body["messages"] and tools is body.get("tools") and passed == params


def test_each_in_process_call_keeps_its_own_counts_and_returns_the_replys_body() -> None:
    async def main() -> tuple[Any, Any, Any]:
        transport = _Transport()
        bridge = LLMBridge(transport)  # type: ignore[arg-type]
        bodies = [
            await bridge.chat_in_process("a", {"model": "m", "messages": [{"role": "user", "content": word}]})
            for word in ("x", "y")
        ]
        return bodies, bridge.take_calls("a"), transport.sent

    bodies, calls, sent = asyncio.run(main())
    assert [body["choices"][0]["message"]["content"] for body in bodies] == ["x", "y"]
    assert bodies[0]["usage"] == {"prompt_tokens": 5, "completion_tokens": 2}  # the wire body as it came
    assert calls == [{"prompt_tokens": 5, "completion_tokens": 2}] * 2 and calls[0] is not calls[1]
    assert [params for _, _, params in sent] == [{}, {}]


class _HalvedRollout(LocalBackend):
    """A backend whose run_rollout is its own: it must see every item, plain fields or not."""

    async def run_rollout(self, request: Any, workflow_done: Any = None, **kw: Any) -> Any:
        workflow, grader = await super().run_rollout(request, workflow_done, **kw)
        grader.sample.reward /= 2
        return workflow, grader


def test_a_backend_with_its_own_run_rollout_runs_every_item_through_it() -> None:
    rows = [{"user_prompt": "4 please", "ground_truth": "4"}]
    for timeout in (60.0, 60):  # plain fields, and fields the request's validation changes
        records = _run(_HalvedRollout(workflow=_Flow, grader=_Grader, artifact_root=False), rows, timeout)
        assert records[0]["reward"] == 0.5, timeout


class _SharedUsage(_Transport):
    """A transport whose Reply's usage is the body's own usage block (nothing says it must not be)."""

    async def complete(self, messages: Any, tools: Any = None, params: Any = None, **kw: Any) -> Reply:
        reply = await super().complete(messages, tools, params)
        return Reply(reply.message, reply.raw["usage"], reply.finish_reason, reply.raw)


def test_the_recorded_counts_are_not_the_body_the_workflow_may_edit() -> None:
    async def main() -> Any:
        bridge = LLMBridge(_SharedUsage())  # type: ignore[arg-type]
        body = await bridge.chat_in_process(
            "a", {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        )
        body["usage"]["prompt_tokens"] = 0  # the workflow's edit of its own reply
        return bridge.take_calls("a")

    assert asyncio.run(main()) == [{"prompt_tokens": 5, "completion_tokens": 2}]
