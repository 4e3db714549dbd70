"""`osmosis check [ROOT]`: validates a local-rollout repository before any spend.

The layout: ``mcp/`` (an MCP server in ``mcp/main.py``), ``reward_fn/`` (``@osmosis_reward`` functions),
``reward_rubric/`` (``@osmosis_rubric`` functions, optional) and ``test_data.jsonl``. Every part is checked
and reported, so one run lists every problem; the exit code is 1 when any check failed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import click

from osmosis_ai.cli.output import emit_result, json_result

__all__ = ["CheckReport", "check_command", "check_repository"]

_MARK = {"ok": "OK  ", "warn": "WARN", "error": "FAIL", "skip": "-   ", "hint": "HINT"}


@dataclass
class CheckReport:
    """Findings per section, in order: ``sections[title] = [(level, text), ...]``.

    ``level`` is ``"ok"``, ``"warn"``, ``"error"``, ``"skip"`` or ``"hint"`` (where to look instead).
    """

    sections: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def add(self, section: str, level: str, text: str) -> None:
        """Records one finding."""
        self.sections.setdefault(section, []).append((level, text))

    def count(self, level: str) -> int:
        """How many findings have ``level``."""
        return sum(1 for items in self.sections.values() for lvl, _ in items if lvl == level)


def _check_mcp(report: CheckReport, folder: Path) -> None:
    from osmosis_ai.errors import MCPLoadError
    from osmosis_ai.rollout.mcp import load_mcp_agent
    from osmosis_ai.rollout.tools import check_tool

    section = f"MCP tools ({folder})"
    if not folder.exists():
        report.add(
            section, "error", f"{folder} not found (expected a folder with main.py that builds the server)"
        )
        return
    try:
        agent = load_mcp_agent(folder)
    except MCPLoadError as exc:
        report.add(section, "error", str(exc))
        return
    if not agent.tool_names:
        report.add(section, "warn", f"the server in {folder / 'main.py'} has no tools")
        return
    report.add(section, "ok", f"{len(agent.tool_names)} tool(s): {', '.join(agent.tool_names)}")
    for index, tool in enumerate(agent.get_tools()):
        name = agent.tool_names[index]
        for issue in check_tool(tool, index):
            report.add(section, "error" if issue.error else "warn", f"tool '{name}': {issue.message}")


def _module_names(root: Path, folder: Path) -> list[str]:
    names = []
    for path in sorted(folder.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def _check_functions(report: CheckReport, root: Path, package: str, family: str, required: bool) -> None:
    """Imports every module under ``root/package`` and lists its ``@osmosis_<family>`` functions."""
    from osmosis_ai.import_deadline import ImportDeadlineError
    from osmosis_ai.importer import ImportTargetError, import_module
    from osmosis_ai.rewards import collect_signature_errors

    folder = root / package
    decorator = f"@osmosis_{family}"
    section = f"{decorator} functions ({package}/)"
    if not folder.is_dir():
        report.add(section, "error" if required else "skip", f"{folder} not found")
        return
    found = 0
    entry = str(root)
    sys.path.insert(0, entry)
    try:
        for name in _module_names(root, folder):
            origin = root / (name.replace(".", "/") + ".py")
            problems: list[BaseException] = []
            module = None
            try:
                # Every broken function of a module is listed, not only the first one.
                with collect_signature_errors() as breaches:
                    try:
                        module = import_module(name, root=root, what=f"{decorator} module")
                    finally:
                        problems.extend(breaches)
            except ImportTargetError as exc:
                cause = exc.__cause__
                problems.append(exc if cause is None or isinstance(cause, ImportDeadlineError) else cause)
            for problem in problems:
                text = str(problem) if isinstance(problem, ImportTargetError) else None
                report.add(section, "error", text or f"{origin}: {type(problem).__name__}: {problem}")
            if module is None:
                continue
            for attribute, value in sorted(vars(module).items()):
                contract = getattr(value, "__osmosis_contract__", None)
                if contract is None or getattr(value, "__module__", None) != module.__name__:
                    continue
                # The decorator checked the signature when the module was imported (a breach fails
                # the import above, naming the function and the parameter).
                found += 1
                kind = "custom signature, not checked" if contract == "custom" else f"{contract} contract"
                report.add(section, "ok", f"{name}:{attribute} ({kind})")
    finally:
        if entry in sys.path:
            sys.path.remove(entry)
    if found == 0 and not any(level == "error" for level, _ in report.sections.get(section, [])):
        report.add(section, "warn", f"no {decorator} functions found under {folder}")


def _check_dataset(report: CheckReport, dataset: Path) -> None:
    from osmosis_ai.datasets import validate_dataset

    section = f"Dataset ({dataset})"
    try:
        result = validate_dataset(dataset, contract="eval", max_problems=20)
    except (OSError, ValueError) as exc:
        report.add(section, "error", str(exc))
        return
    if result.ok:
        report.add(section, "ok", f"{result.rows} row(s), columns: {', '.join(result.columns)}")
        return
    for problem in result.problems:
        report.add(section, "error", str(problem))
    hidden = result.total_problems - len(result.problems)
    if hidden > 0:
        report.add(section, "error", f"... and {hidden} more problem(s)")


def _agent_loops(root: Path) -> list[str]:
    """``module:attribute`` of each ``RolloutAgentLoop`` instance made at the top level of ``root/*.py``
    (a remote-rollout repository), read from the source: a server module is not imported (it may serve)."""
    import ast

    found = []
    for path in sorted(root.glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        loops = {
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            and any(
                getattr(base, "id", getattr(base, "attr", None)) == "RolloutAgentLoop" for base in node.bases
            )
        }
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) in loops
            ):
                found += [
                    f"{path.stem}:{target.id}" for target in node.targets if isinstance(target, ast.Name)
                ]
    return found


def _remote_rollout_hint(report: CheckReport, root: Path) -> None:
    """A repository without mcp/ and reward_fn/ may be a remote-rollout one: say which command checks it."""
    loops = _agent_loops(root)
    section = "Remote rollout"
    if loops:
        for loop in loops:
            report.add(
                section, "hint", f"{loop} is a RolloutAgentLoop: check it with `osmosis validate -m {loop}`"
            )
    else:
        report.add(
            section,
            "hint",
            "a remote-rollout repository is checked with `osmosis validate -m module:agent_loop`",
        )


def check_repository(root: Path, mcp_dir: Path | None = None, dataset: Path | None = None) -> CheckReport:
    """Checks the MCP server, the reward and rubric functions and the dataset of a repository.

    Args:
        root: The repository root (module paths such as ``reward_fn.compute_reward`` resolve from here).
        mcp_dir: The tool folder; default ``root/mcp``.
        dataset: The dataset; default ``root/test_data.jsonl``.

    Returns:
        The report; ``report.count("error") == 0`` means the repository is ready.

    Example:
        >>> check_repository(Path(".")).count("error")  # doctest: +SKIP
        0
    """
    root = root.resolve()
    report = CheckReport()
    mcp = (mcp_dir or root / "mcp").resolve()
    _check_mcp(report, mcp)
    _check_functions(report, root, "reward_fn", "reward", required=True)
    _check_functions(report, root, "reward_rubric", "rubric", required=False)
    _check_dataset(report, (dataset or root / "test_data.jsonl").resolve())
    if not mcp.exists() and not (root / "reward_fn").is_dir():
        _remote_rollout_hint(report, root)
    return report


@click.command("check")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--mcp", "mcp_dir", type=click.Path(path_type=Path), help="Tool folder (default ROOT/mcp).")
@click.option(
    "-d", "--dataset", type=click.Path(path_type=Path), help="Dataset file (default ROOT/test_data.jsonl)."
)
@json_result
def check_command(root: Path, mcp_dir: Path | None, dataset: Path | None) -> None:
    """Check a local-rollout repository (mcp/, reward_fn/, reward_rubric/, test_data.jsonl) before a run."""
    if not root.is_dir():
        from osmosis_ai.errors import CLIError

        raise CLIError(f"Repository folder not found: {root}")
    click.echo(f"Checking local-rollout repository: {root.resolve()}")
    report = check_repository(root, mcp_dir, dataset)
    for title, items in report.sections.items():
        click.echo()
        click.echo(title)
        for level, text in items:
            lines = text.splitlines() or [""]
            click.echo(f"  {_MARK[level]} {lines[0]}")
            for line in lines[1:]:
                click.echo(f"       {line}")
    errors, warnings = report.count("error"), report.count("warn")
    sections = [
        {"title": title, "findings": [{"level": level, "text": text} for level, text in items]}
        for title, items in report.sections.items()
    ]
    emit_result({"root": str(root.resolve()), "ok": not errors, "errors": errors, "sections": sections})
    click.echo()
    if errors:
        click.echo(f"Error: {errors} check(s) failed, {warnings} warning(s).", err=True)
        sys.exit(1)
    click.echo(f"All checks passed ({warnings} warning(s)).")
