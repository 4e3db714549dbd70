"""``python`` graders: the config's ``source`` defines ``grade(sample, item) -> float``; it runs in a fresh
interpreter (``python -I``) with a time limit, so a hanging or crashing grader cannot take the session
down, and the score goes through the one coercion rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Mapping
from typing import Any

from osmosis_ai.errors import EvalFnError, SignatureError
from osmosis_ai.scoring import coerce_score

__all__ = ["DEFAULT_TIME_LIMIT", "run_python_grader"]

DEFAULT_TIME_LIMIT = 30.0

# Runs in the child: reads {source, sample, item} on stdin, writes {"result": ...} or {"error": ...}.
_RUNNER = """
import json, sys, traceback
job = json.load(sys.stdin)
out, sys.stdout = sys.stdout, sys.stderr  # a print() in the grader must not corrupt the reply
try:
    scope = {"__name__": "grader"}
    exec(compile(job["source"], "<grader source>", "exec"), scope)
    result = scope["grade"](job["sample"], job["item"])
    json.dump({"result": result}, out)
except BaseException as exc:
    json.dump({"error": f"{type(exc).__name__}: {exc}"}, out)
"""


async def run_python_grader(
    source: str, sample: Mapping[str, Any], item: Mapping[str, Any], *, time_limit: float = DEFAULT_TIME_LIMIT
) -> float:
    """Runs ``grade(sample, item)`` from ``source`` in a subprocess; raises :class:`EvalFnError` on failure.

    Example:
        >>> import asyncio
        >>> src = "def grade(sample, item):\\n    return float(sample['output_text'] == item['a'])"
        >>> asyncio.run(run_python_grader(src, {"output_text": "x"}, {"a": "x"}))
        1.0
    """
    job = json.dumps({"source": source, "sample": dict(sample), "item": dict(item)}, default=str).encode()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-c",
        _RUNNER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(job), time_limit)
    except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise EvalFnError(f"python grader exceeded its time limit of {time_limit:g}s") from None
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        raise
    try:
        reply = json.loads(out)
    except json.JSONDecodeError:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise EvalFnError(f"python grader exited with code {proc.returncode}: {tail[0]}") from None
    if "error" in reply:
        raise EvalFnError(f"python grader raised {reply['error']}")
    try:
        return coerce_score(reply.get("result"), function="grade", strict=False)
    except SignatureError as exc:
        raise EvalFnError(str(exc)) from None
