"""The one importer of `module:attribute` specs: file paths, user tracebacks, close-name hints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
