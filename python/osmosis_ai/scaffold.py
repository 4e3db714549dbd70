"""The files `osmosis init` writes: a workspace whose configs pass `osmosis config validate`.

Contents follow the established layout (``rollouts/<name>/``, ``configs/eval/<name>.toml``,
``configs/training/<name>.toml``, ``data/``); unlike the established templates, the configs hold working
values instead of placeholders, so the scaffold validates as written.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "NAME_PATTERN",
    "rollout_pyproject",
    "rollout_scaffold_files",
    "scaffold_files",
    "validate_rollout_name",
]

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]*$")

_MAIN_PY = '''"""Rollout entrypoint of `{name}`: the agent loop the platform (and `osmosis eval`) runs."""

from osmosis_ai import osmosis_reward
from osmosis_ai.rollout import RolloutAgentLoop, RolloutContext, RolloutResult


class {cls}AgentLoop(RolloutAgentLoop):
    """Answers one dataset row with one model call. Grow it into your agent (tools, several turns, ...)."""

    name = "{name}"

    def get_tools(self, request):
        return []

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        reply = await ctx.chat(ctx.request.messages, **ctx.request.completion_params)
        return ctx.complete([*ctx.request.messages, reply.message], finish_reason=reply.finish_reason)


agent_loop = {cls}AgentLoop()


@osmosis_reward
def contains_answer(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    """1.0 when the expected answer appears in the model's final reply."""
    return float(ground_truth.strip() in solution_str)
'''

_PYPROJECT = """[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["{requirement}"]

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"
"""


def rollout_pyproject(name: str, requirement: str) -> str:
    """A rollout directory's ``pyproject.toml``: project ``name`` depending on ``requirement``.

    Example:
        >>> 'dependencies = ["osmosis-ai[server]"]' in rollout_pyproject("demo", "osmosis-ai[server]")
        True
    """
    return _PYPROJECT.format(name=name, requirement=requirement)


_README = """# {name}

A rollout: `main.py` defines the agent loop (`agent_loop`) and a reward function (`contains_answer`).

- Try it locally against any OpenAI-compatible server, from `rollouts/{name}/`:
  `osmosis eval -m main:agent_loop -d ../../data/{name}.jsonl --eval-fn main:contains_answer --base-url URL --model M`

- Check the workspace: `osmosis config validate configs/eval/{name}.toml configs/training/{name}.toml`
- See the request an eval submission would send: `osmosis eval submit configs/eval/{name}.toml --dry-run`
- Sample data: `data/{name}.jsonl` (`system_prompt`, `user_prompt`, `ground_truth`).
"""

_EVAL_TOML = """# Evaluation config: `osmosis config validate` checks it, `osmosis eval submit` sends it.
[experiment]
rollout = "{name}"            # directory under rollouts/
entrypoint = "main.py"         # file inside rollouts/{name}/
model_path = "openai/gpt-5-mini"
dataset = "{name}"             # platform dataset name (upload data/{name}.jsonl under this name)
# branch = "main"              # or pin a commit: commit_sha = "abc1234" (not both)

[evaluation]                   # omit a key to use the platform default
n = 1
pass_threshold = 1.0
agent_workflow_timeout_s = 450
grader_timeout_s = 150

# [env]                        # plain values for the rollout process (not for secrets)
# LOG_LEVEL = "info"

[secrets]                      # names of platform secrets (or per-run values) the rollout needs
required = ["OPENAI_API_KEY"]
"""

_TRAINING_TOML = """# Training config: `osmosis config validate` checks it, `osmosis train submit` sends it.
[experiment]
rollout = "{name}"
entrypoint = "main.py"
model_path = "Qwen/Qwen3.6-35B-A3B"
dataset = "{name}"

[training]
lr = 1e-6
total_epochs = 1
n_samples_per_prompt = 8
rollout_batch_size = 32
max_prompt_length = 8192
max_response_length = 8192

[sampling]
rollout_temperature = 1.0
rollout_top_p = 1.0

[checkpoints]
eval_interval = 10
checkpoint_save_freq = 20

# [secrets]                    # optional for training; when present it needs `required`
# required = ["OPENAI_API_KEY"]
"""

_ROWS = [(3, 4), (7, 8), (12, 11), (6, 9), (15, 14)]


def _dataset() -> str:
    import json

    system = "Answer with the number only."
    lines = [
        json.dumps(
            {"system_prompt": system, "user_prompt": f"What is {a} * {b}?", "ground_truth": str(a * b)}
        )
        for a, b in _ROWS
    ]
    return "\n".join(lines) + "\n"


def validate_rollout_name(name: str) -> str | None:
    """Why ``name`` cannot name a rollout, or ``None`` when it can.

    Example:
        >>> validate_rollout_name("Demo")
        "rollout name 'Demo' must match ^[a-z][a-z0-9-]*$ (lower-case letters, digits, dashes)"
    """
    if not name:
        return "rollout name must not be empty"
    if name == "default":
        return "rollout name 'default' is reserved"
    if not NAME_PATTERN.match(name):
        return f"rollout name '{name}' must match ^[a-z][a-z0-9-]*$ (lower-case letters, digits, dashes)"
    return None


def scaffold_files(name: str) -> dict[Path, str]:
    """The files of a new workspace for rollout ``name``, relative to the workspace root.

    Example:
        >>> sorted(str(p) for p in scaffold_files("demo"))[:2]
        ['configs/eval/demo.toml', 'configs/training/demo.toml']
    """
    cls = "".join(part.capitalize() for part in name.split("-"))
    fill = {"name": name, "cls": cls}
    return {
        Path("rollouts", name, "main.py"): _MAIN_PY.format(**fill),
        Path("rollouts", name, "pyproject.toml"): rollout_pyproject(name, "osmosis-ai[server]"),
        Path("rollouts", name, "README.md"): _README.format(**fill),
        Path("configs", "eval", f"{name}.toml"): _EVAL_TOML.format(**fill),
        Path("configs", "training", f"{name}.toml"): _TRAINING_TOML.format(**fill),
        Path("data", f"{name}.jsonl"): _dataset(),
    }


# --- `osmosis rollout init`: a 0.3 rollout (AgentWorkflow + Grader) in an existing workspace. ---

_WORKFLOW_MAIN_PY = '''"""Rollout `{name}`: an AgentWorkflow that asks the model once and a Grader that checks the answer.

`osmosis eval run configs/eval/{name}.toml --dataset-file data/{name}.jsonl` runs it locally; run this file
to serve it over the rollout protocol (`python main.py`, port $_OSMOSIS_ROLLOUT_PORT or 8000).
"""

import os

from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowOutput, Grader, LocalBackend, get_rollout_context


class {cls}Workflow(AgentWorkflow):
    """One model call per row. Grow it into your agent: tools, several turns, an agent framework."""

    async def run(self, ctx):
        # The rollout's model: answered in this process under `osmosis eval run`, POSTed to the rollout's
        # chat-completions URL on the platform.
        reply = await get_rollout_context().chat_completions({{"model": "default", "messages": ctx.prompt}})
        return AgentWorkflowOutput(messages=[*ctx.prompt, reply["choices"][0]["message"]])


class {cls}Grader(Grader):
    """Reward 1.0 when the expected answer appears in the final reply, else 0.0."""

    async def grade(self, ctx):
        answer = str(ctx.sample.messages[-1].get("content") or "")
        ctx.set_reward(1.0 if ctx.label is not None and ctx.label.strip() in answer else 0.0)


backend = LocalBackend(workflow={cls}Workflow, grader={cls}Grader)


if __name__ == "__main__":
    import uvicorn

    from osmosis_ai.rollout.server import create_rollout_server

    port = int(os.environ.get("_OSMOSIS_ROLLOUT_PORT", "8000"))
    uvicorn.run(create_rollout_server(backend), host="0.0.0.0", port=port)
'''

_WORKFLOW_README = """# {name}

`main.py` defines `{cls}Workflow` (an `AgentWorkflow`: one model call per row with
`get_rollout_context().chat_completions(...)`, answered in-process by `osmosis eval run` and sent to the
rollout's chat-completions URL on the platform) and `{cls}Grader` (a `Grader`: `ctx.set_reward(...)`
against the row's `ground_truth`), and serves them with `create_rollout_server` when run as a script.

- Run it locally: `osmosis eval run configs/eval/{name}.toml --dataset-file data/{name}.jsonl`
  (add `--base-url URL` for any OpenAI-compatible server; `--name RUN` to be able to resume).
- Check the workspace: `osmosis config validate configs/eval/{name}.toml configs/training/{name}.toml`
- Submit: `osmosis eval submit configs/eval/{name}.toml`, `osmosis train submit configs/training/{name}.toml`
"""


def rollout_scaffold_files(name: str) -> dict[Path, str]:
    """The files `osmosis rollout init NAME` writes (a 0.3 rollout), relative to the workspace root.

    The rollout directory and the two configs are the scaffold's own; ``data/NAME.jsonl`` is sample data,
    written only where no such file exists.

    Example:
        >>> sorted(str(p) for p in rollout_scaffold_files("demo"))[0]
        'configs/eval/demo.toml'
    """
    cls = "".join(part.capitalize() for part in name.split("-"))
    fill = {"name": name, "cls": cls}
    return {
        Path("rollouts", name, "main.py"): _WORKFLOW_MAIN_PY.format(**fill),
        Path("rollouts", name, "pyproject.toml"): rollout_pyproject(
            name, "osmosis-ai[server]>=0.3.0rc1,<0.4"
        ),
        Path("rollouts", name, "README.md"): _WORKFLOW_README.format(**fill),
        Path("configs", "eval", f"{name}.toml"): _EVAL_TOML.format(**fill),
        Path("configs", "training", f"{name}.toml"): _TRAINING_TOML.format(**fill),
        Path("data", f"{name}.jsonl"): _dataset(),
    }
