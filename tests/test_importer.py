"""The one importer of `module:attribute` specs: file paths, user tracebacks, close-name hints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from osmosis_ai.importer import ImportTargetError, import_object

OSMOSIS = str(Path(sys.executable).with_name("osmosis"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "my_agents").mkdir()
    (tmp_path / "my_agents" / "__init__.py").write_text("")
    (tmp_path / "my_agents" / "loop.py").write_text("def make_loop():\n    return 'loop'\n\nvalue = 3\n")
    (tmp_path / "broken.py").write_text("import os\n\nCONFIG = {}\nMODEL = CONFIG['model']\n")
    (tmp_path / "needs_missing.py").write_text("import not_installed_pkg_xyz\n")
    return tmp_path


def test_module_and_file_path_forms_give_the_same_object(project: Path) -> None:
    by_module = import_object("my_agents.loop:make_loop", root=project)
    assert by_module() == "loop"
    assert import_object("my_agents/loop.py:value", root=project) == 3


def test_a_missing_file_or_module_says_where_it_looked(project: Path) -> None:
    with pytest.raises(ImportTargetError, match=r"file 'my_agents/nope.py' does not exist \(looked in "):
        import_object("my_agents/nope.py:x", root=project)
    with pytest.raises(ImportTargetError, match="no module named 'agent'"):
        import_object("agent:make_loop", root=project)


def test_an_error_inside_the_users_module_points_at_their_line(project: Path) -> None:
    with pytest.raises(ImportTargetError) as caught:
        import_object("broken:MODEL", root=project)
    message = str(caught.value)
    assert "Cannot import module 'broken': KeyError: 'model'" in message
    assert f"{project / 'broken.py'}:4: MODEL = CONFIG['model']" in message
    with pytest.raises(
        ImportTargetError,
        match=r"ModuleNotFoundError: No module named 'not_installed_pkg_xyz' \(at ",
    ):
        import_object("needs_missing:x", root=project)


def test_a_missing_attribute_suggests_close_names(project: Path) -> None:
    with pytest.raises(ImportTargetError, match=r"no attribute 'make_lop'\. Did you mean: make_loop\?"):
        import_object("my_agents.loop:make_lop", root=project)
    with pytest.raises(ImportTargetError, match=r"Expected format: 'module\.path:attribute_name'"):
        import_object("my_agents.loop", root=project)


def test_eval_accepts_a_file_path_for_the_agent(project: Path) -> None:
    (project / "x.jsonl").write_text('{"system_prompt": "s", "user_prompt": "u", "ground_truth": "1"}\n')
    result = subprocess.run(
        [OSMOSIS, "eval", "-m", "broken.py:agent", "-d", "x.jsonl", "--model", "m", "--eval-fn", "a:b"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "broken.py:4: MODEL = CONFIG['model']" in result.stderr


# ---- package semantics -----------------------------------------------------------------------------


def test_a_file_target_imports_its_siblings_relatively_and_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "scorers"
    folder.mkdir()
    (folder / "helpers.py").write_text("TOKEN = 'rel'\n")
    (folder / "plain.py").write_text("TOKEN = 'abs'\n")
    (folder / "main.py").write_text(
        "from .helpers import TOKEN as REL\nimport plain\n\ndef score():\n    return REL + '+' + plain.TOKEN\n"
    )
    assert import_object("scorers/main.py:score", root=tmp_path)() == "rel+abs"


def test_a_nested_entrypoint_reaches_the_rollout_root_with_two_dots(tmp_path: Path) -> None:
    from osmosis_ai.importer import import_module_file

    (tmp_path / "agent").mkdir()
    (tmp_path / "shared.py").write_text("VALUE = 7\n")
    (tmp_path / "agent" / "run.py").write_text("from ..shared import VALUE\n")
    module = import_module_file(
        tmp_path / "agent" / "run.py", package_root=tmp_path, prefix="_osmosis_rollout"
    )
    assert module.VALUE == 7
    assert module.__name__.startswith("_osmosis_rollout_") and module.__name__.endswith(".agent.run")


def test_each_import_of_a_folder_starts_afresh(tmp_path: Path) -> None:
    (tmp_path / "counter.py").write_text("import os\nos.environ['OSMOSIS_TEST_IMPORTS'] += 'x'\n")
    (tmp_path / "main.py").write_text("from . import counter\n")
    os.environ["OSMOSIS_TEST_IMPORTS"] = ""
    try:
        import_object("main.py:counter", root=tmp_path)
        import_object("main.py:counter", root=tmp_path)
        assert os.environ["OSMOSIS_TEST_IMPORTS"] == "xx"
    finally:
        del os.environ["OSMOSIS_TEST_IMPORTS"]


# ---- the one finder of what an entrypoint exposes ---------------------------------------------------

WORKFLOW = """
from osmosis_ai.rollout import AgentWorkflow, Grader


class SharedFlow(AgentWorkflow):
    async def run(self, ctx):
        return None


class CalcGrader(Grader):
    async def grade(self, ctx):
        ctx.set_reward(1.0)
"""


def _exposed(tmp_path: Path, main: str) -> Any:
    from osmosis_ai.eval.run_entry import find_exposed, import_rollout_entrypoint

    (tmp_path / "parts.py").write_text(WORKFLOW)
    (tmp_path / "main.py").write_text(main)
    return find_exposed(import_rollout_entrypoint(tmp_path / "main.py", tmp_path), tmp_path)


def test_classes_imported_from_the_rollouts_own_files_are_found(tmp_path: Path) -> None:
    exposed = _exposed(tmp_path, "from .parts import CalcGrader, SharedFlow\n")
    assert exposed.choice() == ("workflow", "SharedFlow + CalcGrader")


def test_a_derived_workflow_hides_the_one_it_derives_from(tmp_path: Path) -> None:
    main = "from .parts import CalcGrader, SharedFlow\n\nclass MyFlow(SharedFlow):\n    pass\n"
    assert _exposed(tmp_path, main).choice() == ("workflow", "MyFlow + CalcGrader")


def test_library_classes_and_bases_are_not_the_users(tmp_path: Path) -> None:
    main = "from osmosis_ai.rollout import AgentWorkflow, Grader, LocalBackend\nx = 1\n"
    exposed = _exposed(tmp_path, main)
    assert exposed.workflows == [] and exposed.graders == []
    assert "defines no AgentWorkflow subclass" in (exposed.problem() or "")
