"""The base install (no extras): `from osmosis_ai import *` works, and what needs an extra names it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

# Blocks the modules the `report` extra installs, in a fresh interpreter, as on a base install.
GUARD = """
import builtins, sys
real = builtins.__import__
def guarded(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name.partition(".")[0] in {"polars", "altair", "vl_convert"}:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return real(name, globals, locals, fromlist, level)
builtins.__import__ = guarded
"""


def _python(source: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = GUARD + textwrap.dedent(source)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_star_import_needs_no_extra(tmp_path: Path) -> None:
    result = _python(
        """
        namespace = {}
        exec("from osmosis_ai import *", namespace)
        assert {"osmosis_reward", "osmosis_rubric", "evaluate_rubric", "load_results"} <= set(namespace)
        import osmosis_ai
        try:
            osmosis_ai.load_results("nothing.jsonl")
        except ImportError as exc:
            print(exc)
        assert callable(osmosis_ai.report) and callable(osmosis_ai.compare)  # their extra loads on use
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "load_results needs polars" in result.stdout  # said when used, not at the import


def test_a_command_that_needs_an_extra_names_it(tmp_path: Path) -> None:
    log = tmp_path / "results.jsonl"
    header = {"format": "osmosis-results/1", "kind": "eval", "config": {"eval_fns": ["acc"]}}
    run = {"row_index": 0, "run_index": 0, "success": True, "scores": {"acc": 1.0}}
    log.write_text(json.dumps(header) + "\n" + json.dumps(run) + "\n")
    result = _python(
        f"""
        from osmosis_ai.cli.main import main
        sys.exit(main(["report", {str(log)!r}]))
        """,
        tmp_path,
    )
    assert result.returncode == 1
    assert (
        'Error: osmosis report needs vl_convert, which the report extra installs: pip install "osmosis-ai[report]"'
        in (result.stderr)
    )
    assert "Traceback" not in result.stderr


def test_the_error_is_the_module_not_found_error_users_catch() -> None:
    from osmosis_ai.extras import missing_extra

    error = missing_extra(
        ModuleNotFoundError("No module named 'fastapi'", name="fastapi"), "The rollout server"
    )
    assert isinstance(error, ModuleNotFoundError) and error.name == "fastapi" and error.extra == "server"
    assert str(error).endswith('pip install "osmosis-ai[server]"')
    assert missing_extra(ModuleNotFoundError("No module named 'mine'", name="mine")) is None
