"""The files `osmosis init` writes: a workspace whose configs pass `osmosis config validate`.

Contents follow the established layout (``rollouts/<name>/``, ``configs/eval/<name>.toml``,
``configs/training/<name>.toml``, ``data/``); unlike the established templates, the configs hold working
values instead of placeholders, so the scaffold validates as written.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["NAME_PATTERN", "scaffold_files", "validate_rollout_name"]

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]*$")

_MAIN_PY = '''"""Rollout entrypoint of `{name}`: the platform imports it and runs the classes below."""

from osmosis_ai.rollout import AgentWorkflow, AgentWorkflowContext, Grader, GraderContext


class {cls}Workflow(AgentWorkflow):
    """Answers one dataset row. Replace the body with your agent (model calls, tools, ...)."""

    async def run(self, ctx: AgentWorkflowContext):
        question = ctx.prompt[-1]["content"] if ctx.prompt else ""
        raise NotImplementedError(f"call your model here; the prompt has {{len(question)}} characters")


class {cls}Grader(Grader):
    """Scores the workflow's answer against the row's ground truth (its `label`)."""

    async def grade(self, ctx: GraderContext):
        messages = list(ctx.sample.messages) if ctx.sample else []
        answer = str(messages[-1].get("content", "")) if messages else ""
        ctx.set_reward(1.0 if ctx.label is not None and ctx.label.strip() in answer else 0.0)


if __name__ == "__main__":
    import os

    import uvicorn

    from osmosis_ai.rollout import LocalBackend
    from osmosis_ai.rollout.server import create_rollout_server

    backend = LocalBackend(workflow={cls}Workflow, grader={cls}Grader)
    port = int(os.environ.get("_OSMOSIS_ROLLOUT_PORT", "8000"))
    uvicorn.run(create_rollout_server(backend), host="0.0.0.0", port=port)
'''

_PYPROJECT = """[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["osmosis-ai[server]"]

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"
"""

_README = """# {name}

A rollout: `main.py` defines the agent workflow (`{cls}Workflow`) and the grader (`{cls}Grader`).

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
        Path("rollouts", name, "pyproject.toml"): _PYPROJECT.format(**fill),
        Path("rollouts", name, "README.md"): _README.format(**fill),
        Path("configs", "eval", f"{name}.toml"): _EVAL_TOML.format(**fill),
        Path("configs", "training", f"{name}.toml"): _TRAINING_TOML.format(**fill),
        Path("data", f"{name}.jsonl"): _dataset(),
    }
