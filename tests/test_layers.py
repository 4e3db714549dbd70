"""The import graph, read from the source: arrows only run down (``llm`` < ``runs`` < run kinds < ``cli``).

Every import counts, also one inside a function or under ``TYPE_CHECKING``: a lazy import is still an
arrow. Library code (everything outside ``cli/``) does not print either; the few programs that run in a
process of their own, and the progress display the CLI hands to a run, are listed with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "osmosis_ai"

# What each lower layer may import of the package (its own modules always): nothing above it.
FOUNDATION = {
    "errors",
    "redact",
    "loop_thread",
    "_deadline",
    "_version",
    "_files",
    "stop_signals",
    "terminal_text",
    "_http_head",
    "_fresh",
}
MAY_IMPORT = {
    "llm": FOUNDATION,
    "runs": FOUNDATION | {"llm", "stats", "_stats_types", "_stats_input"},
}
RUN_KINDS = ("eval", "rubric", "graders", "probes")

# Library modules that write to the terminal, and why that is theirs to do.
PRINTS = {
    "runs/progress.py": "the progress display; only the CLI creates one and hands it to a run",
    "llm/local_server.py": "`python -m osmosis_ai.llm.local_server` prints its address for the parent process",
    "graders/python_grader.py": "the program a python grader runs in its child process",
    "rollout/serve.py": "the rollout server's banner (moving to cli/ is issue #29 item 3, engineer 'harden')",
    "eval/interactive.py": "the interactive test console's default for library users (the CLI passes click's)",
    "_compat/stubs.py": "`python -m osmosis_ai._compat.stubs` lists the stubs it wrote (a maintainer's command)",
}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str | None = None) -> Iterator[tuple[int, str]]:
    """``(line, imported module)`` of every import in the file (the module ``module``, by default the one
    at ``path``), relative ones resolved."""
    module = module or _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            yield node.lineno, name
            for alias in node.names:  # `from osmosis_ai import cli` imports osmosis_ai.cli
                yield node.lineno, f"{name}.{alias.name}"


def _files(*top: str) -> list[Path]:
    return sorted(p for name in top for p in (PACKAGE / name).rglob("*.py"))


def _arrows(files: list[Path], forbidden: Iterator[str] | list[str]) -> list[str]:
    names = tuple(forbidden)
    found = []
    for path in files:
        for line, imported in _imports(path):
            if any(imported == n or imported.startswith(n + ".") for n in names):
                found.append(f"{path.relative_to(PACKAGE)}:{line}: imports {imported}")
    return found


def _top_level_names() -> list[str]:
    return sorted(
        {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or p.is_dir()}
    )


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_a_lower_layer_imports_nothing_above_it(layer: str) -> None:
    above = [
        f"osmosis_ai.{name}"
        for name in _top_level_names()
        if name not in MAY_IMPORT[layer] | {layer, "__init__", "__pycache__"}
    ]
    assert _arrows(_files(layer), [*above, "click"]) == []


def test_the_run_kinds_import_nothing_of_the_cli() -> None:
    assert _arrows(_files(*RUN_KINDS), ["osmosis_ai.cli", "click"]) == []


def test_the_ray_worker_imports_nothing_of_the_cli() -> None:
    assert _arrows([PACKAGE / "runs" / "ray_worker.py"], ["osmosis_ai.cli", "click"]) == []


def test_the_compat_table_draws_no_import_arrows() -> None:
    # Established paths are rows of a table of strings; _compat imports nothing but its lazy loader.
    allowed = ["osmosis_ai._compat", "osmosis_ai._lazy"]
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: imports {imported}"
        for path in _files("_compat")
        for line, imported in _imports(path)
        if imported.startswith("osmosis_ai") and not any(imported.startswith(a) for a in allowed)
    ]
    assert found == []


def test_the_arrow_check_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    # The checker itself: an import inside a function and a relative one are both arrows.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from osmosis_ai.cli import main\nfrom ..runs import engine\n", encoding="utf-8"
    )
    found = set(_imports(probe, "osmosis_ai.llm.probe"))
    assert {(2, "osmosis_ai.cli.main"), (3, "osmosis_ai.runs"), (3, "osmosis_ai.runs.engine")} <= found


_PRINTERS = {
    ("click", "echo"),
    ("click", "secho"),
    ("traceback", "print_exc"),
    ("traceback", "print_exception"),
}


def _prints(path: Path) -> list[int]:
    """Lines calling ``print``, ``click.echo`` / ``secho`` or ``traceback.print_exc``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        func = node.func if isinstance(node, ast.Call) else None
        named = isinstance(func, ast.Name) and func.id == "print"
        dotted = (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and (func.value.id, func.attr) in _PRINTERS
        )
        if named or dotted:
            lines.append(node.lineno)
    return lines


def test_library_code_does_not_print() -> None:
    library = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1]]
    found = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in library
        if str(path.relative_to(PACKAGE)) not in PRINTS
        for line in _prints(path)
    ]
    assert found == []
