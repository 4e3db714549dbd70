"""`osmosis template list|apply`: example rollouts bundled with the SDK, applied into a workspace.

The catalog and the file contents ship with this package (the established CLI downloads them from a
template repository on every apply; bundling them makes ``apply`` work offline and pins the recipe to the
SDK version that runs it). Each recipe owns ``rollouts/<recipe>/`` and its two configs, and shares
``data/multiply.jsonl`` with the others.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from osmosis_ai.errors import WorkspaceError
from osmosis_ai.scaffold import _TRAINING_TOML, rollout_pyproject

__all__ = ["CATALOG", "TemplateResult", "apply_template", "template_files"]

_OPENAI_MAIN = '''"""multiply-local-openai: an OpenAI Agents SDK agent with a multiply tool, graded on the product."""

from agents import Runner, function_tool

from osmosis_ai.rollout import AgentWorkflow, Grader
from osmosis_ai.rollout.integrations.agents.openai_agents import OsmosisAgent, OsmosisMemorySession


@function_tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


class MultiplyWorkflow(AgentWorkflow):
    async def run(self, ctx):
        system = next((m["content"] for m in ctx.prompt if m["role"] == "system"), None)
        agent = OsmosisAgent(name="multiply", instructions=system, tools=[multiply])
        await Runner.run(agent, ctx.prompt[-1]["content"], session=OsmosisMemorySession())
        return None  # the sample is the session's conversation


class MultiplyGrader(Grader):
    async def grade(self, ctx):
        answer = str(ctx.sample.messages[-1].get("content") or "")
        ctx.set_reward(1.0 if ctx.label is not None and ctx.label.strip() in answer else 0.0)
'''

_STRANDS_MAIN = '''"""multiply-local-strands: a Strands agent with a multiply tool, graded on the product."""

from strands import tool

from osmosis_ai.rollout import AgentWorkflow, Grader
from osmosis_ai.rollout.integrations.agents.strands import OsmosisStrandsAgent


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


class MultiplyWorkflow(AgentWorkflow):
    async def run(self, ctx):
        system = next((m["content"] for m in ctx.prompt if m["role"] == "system"), None)
        agent = OsmosisStrandsAgent(system_prompt=system, tools=[multiply])
        await agent.invoke_async(ctx.prompt[-1]["content"])
        return None  # the sample is the agent's conversation


class MultiplyGrader(Grader):
    async def grade(self, ctx):
        answer = str(ctx.sample.messages[-1].get("content") or "")
        ctx.set_reward(1.0 if ctx.label is not None and ctx.label.strip() in answer else 0.0)
'''

_EVAL = """[experiment]
rollout = "{name}"
entrypoint = "main.py"
model_path = "openai/gpt-5-mini"
dataset = "multiply"

[evaluation]
n = 1
pass_threshold = 1.0
agent_workflow_timeout_s = 300
grader_timeout_s = 60

[secrets]
required = ["OPENAI_API_KEY"]
"""

_README = """# {name}

{summary}

1. `pip install -e rollouts/{name}`
2. `osmosis eval run configs/eval/{name}.toml --dataset-file data/multiply.jsonl`
3. Push the repository, confirm Git Sync on the platform, then `osmosis eval submit configs/eval/{name}.toml`
   and `osmosis train submit configs/training/{name}.toml`.
"""


@dataclass(frozen=True)
class _Recipe:
    summary: str
    main: str
    extra: str


CATALOG: dict[str, _Recipe] = {
    "multiply-local-openai": _Recipe(
        "An OpenAI Agents SDK agent with a multiply tool, run in-process.", _OPENAI_MAIN, "openai-agents"
    ),
    "multiply-local-strands": _Recipe(
        "A Strands agent with a multiply tool, run in-process.", _STRANDS_MAIN, "strands"
    ),
}


def _multiply_data() -> str:
    system = "Use the multiply tool, then answer with the number only."
    pairs = [(3, 4), (7, 8), (12, 11), (6, 9), (15, 14), (21, 3), (9, 9), (13, 7)]
    rows = [
        {"system_prompt": system, "user_prompt": f"What is {a} * {b}?", "ground_truth": str(a * b)}
        for a, b in pairs
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


SHARED = {Path("data/multiply.jsonl"): _multiply_data}


def template_files(name: str) -> dict[Path, str]:
    """The files recipe ``name`` writes (relative to the workspace), shared data included."""
    recipe = CATALOG.get(name) if name and not name.startswith((".", "_")) and "/" not in name else None
    if recipe is None:
        raise WorkspaceError(
            f"Template '{name}' not found. Available templates: {', '.join(CATALOG)}", code="NOT_FOUND"
        )
    fill = {"name": name, "summary": recipe.summary, "extra": recipe.extra}
    files = {
        Path("rollouts", name, "main.py"): recipe.main,
        Path("rollouts", name, "pyproject.toml"): rollout_pyproject(
            name, f"osmosis-ai[server,{recipe.extra}]>=0.3.0rc1,<0.4"
        ),
        Path("rollouts", name, "README.md"): _README.format(**fill),
        Path("configs", "eval", f"{name}.toml"): _EVAL.format(**fill),
        Path("configs", "training", f"{name}.toml"): _TRAINING_TOML.format(name=name).replace(
            f'dataset = "{name}"', 'dataset = "multiply"'
        ),
    }
    return {**files, **{path: make() for path, make in SHARED.items()}}


@dataclass
class TemplateResult:
    """What ``apply`` wrote."""

    name: str
    destinations: list[str]
    files: list[str]


def apply_template(root: Path, name: str, *, force: bool = False) -> TemplateResult:
    """Writes recipe ``name`` into the workspace at ``root``; conflicts unless ``force`` (symlinks never replaced)."""
    files = template_files(name)
    owned_dir = root / "rollouts" / name
    conflicts: list[str] = []
    if owned_dir.is_symlink() or (owned_dir.exists() and not owned_dir.is_dir()):
        raise WorkspaceError(
            f"rollouts/{name} is a symlink or not a directory; refusing to replace it", code="CONFLICT"
        )
    for path, text in files.items():
        target = root / path
        if not target.resolve().is_relative_to(root.resolve()):
            raise WorkspaceError(f"{path} resolves outside the workspace {root}")
        if target.is_symlink():
            raise WorkspaceError(f"{path} is a symlink; refusing to replace it", code="CONFLICT")
        shared_same = path in SHARED and target.is_file() and target.read_text(encoding="utf-8") == text
        if target.exists() and not shared_same and not force:
            conflicts.append(str(path))
    if owned_dir.exists() and not force:
        conflicts.insert(0, f"rollouts/{name}/")
    if conflicts:
        listing = "\n".join(f"  - {c}" for c in dict.fromkeys(conflicts))
        raise WorkspaceError(
            f"Already exists:\n{listing}\nRe-run with {{force}} to replace them.",
            fields=("force",),
            code="CONFLICT",
        )
    if owned_dir.exists():
        shutil.rmtree(owned_dir)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    destinations = [f"rollouts/{name}/", f"configs/eval/{name}.toml", f"configs/training/{name}.toml"]
    return TemplateResult(name, destinations, [str(p) for p in files])
