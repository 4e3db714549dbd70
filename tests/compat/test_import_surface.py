"""Every row of the compatibility sheet imports from its established path and has the established kind."""

from __future__ import annotations

import importlib
import inspect

import pytest

from tests.compat.surface import COMPAT_MODULES, DEFERRED, ROLLOUT_ALL_0_2, ROWS

SUPPORTED = [row for row in ROWS if row[0] not in DEFERRED]


def test_every_row_is_checked_or_deferred_with_a_reason() -> None:
    assert [row[0] for row in ROWS] == list(range(1, 101))
    assert set(DEFERRED) <= {row[0] for row in ROWS}
    assert all(reason.strip() for reason in DEFERRED.values())


def _unwrap(obj: object) -> object:
    return inspect.unwrap(obj) if callable(obj) else obj


@pytest.mark.parametrize(
    ("row", "module", "name", "kind"), SUPPORTED, ids=[f"{r[0]}-{r[2]}" for r in SUPPORTED]
)
def test_row_imports_with_its_kind(row: int, module: str, name: str, kind: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module} import {name}", namespace)  # the statement users write, verbatim
    obj = namespace[name]
    if kind == "exception":
        assert inspect.isclass(obj) and issubclass(obj, BaseException)
    elif kind == "class":
        assert inspect.isclass(obj) and not issubclass(obj, BaseException)
    elif kind == "constant (dict)":
        assert isinstance(obj, dict) and obj
    elif kind in ("function", "function (async)"):
        assert inspect.isfunction(_unwrap(obj)), f"{module}.{name} is a {type(obj).__name__}"
    else:
        pytest.fail(f"row {row}: unknown kind {kind!r}")


def test_modules_that_were_packages_upstream_are_packages() -> None:
    for name in (
        "osmosis_ai.rollout.core",
        "osmosis_ai.rollout.config",
        "osmosis_ai.rollout.eval",
        "osmosis_ai.rollout.eval.common",
        "osmosis_ai.rollout.eval.evaluation",
        "osmosis_ai.rollout.eval.test_mode",
        "osmosis_ai.rollout.server",
        "osmosis_ai.rollout.mcp",
        "osmosis_ai.cli_services",
        "osmosis_ai.eval.rubric",
    ):
        assert hasattr(importlib.import_module(name), "__path__"), f"{name} is not a package"


def test_star_import_of_rollout_gives_the_established_names() -> None:
    namespace: dict[str, object] = {}
    exec("from osmosis_ai.rollout import *", namespace)
    assert set(namespace) >= ROLLOUT_ALL_0_2, sorted(ROLLOUT_ALL_0_2 - set(namespace))


def test_established_defaults_of_shared_constants() -> None:
    from osmosis_ai.rollout import DEFAULT_PORT
    from osmosis_ai.rubric_eval import DEFAULT_API_KEY_ENV

    assert DEFAULT_PORT == 9000
    assert DEFAULT_API_KEY_ENV == {
        "anthropic": "ANTHROPIC_API_KEY",
        "azure": "AZURE_API_KEY",
        "bedrock": "AWS_ACCESS_KEY_ID",
        "cerebras": "CEREBRAS_API_KEY",
        "gemini": "GEMINI_API_KEY",
        "google": "GEMINI_API_KEY",
        "openai": "OPENAI_API_KEY",
        "openrouter": "OPENROUTER_API_KEY",
        "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
        "xai": "XAI_API_KEY",
    }


@pytest.mark.parametrize("module", COMPAT_MODULES)
def test_compat_paths_are_entries_of_the_one_table(module: str) -> None:
    # A second implementation at an old path would drift from the real one: each path is a row of the
    # table in osmosis_ai/_compat/paths.py (no file of its own) whose names come from their one home.
    from osmosis_ai._compat.paths import ESTABLISHED

    loaded = importlib.import_module(module)
    assert module in ESTABLISHED and getattr(loaded, "__file__", None) is None, f"{module} has a file"
    assert sorted(loaded.__all__) == sorted(ESTABLISHED[module])
    for name in loaded.__all__:
        obj = getattr(loaded, name)
        home = getattr(obj, "__module__", None)
        if home is not None and (inspect.isclass(obj) or inspect.isfunction(obj)):
            assert home not in COMPAT_MODULES, f"{module}.{name} is defined in a compat module ({home})"


def test_every_path_of_the_table_imports_and_no_file_shadows_one() -> None:
    from osmosis_ai._compat.paths import ESTABLISHED, NOT_PROVIDED

    for module, names in ESTABLISHED.items():
        loaded = importlib.import_module(module)
        assert getattr(loaded, "__file__", None) is None, f"a file of the package shadows {module}"
        for name in names:
            getattr(loaded, name)
    for module, message in NOT_PROVIDED.items():
        with pytest.raises(ModuleNotFoundError, match="is not part of this osmosis-ai"):
            importlib.import_module(module)
        assert message


def test_an_established_path_loads_only_what_it_is_asked_for() -> None:
    # The table draws no import arrows: importing a path loads none of its homes until a name is used.
    import subprocess
    import sys

    code = (
        "import sys; import osmosis_ai.utils as m\n"
        "assert 'osmosis_ai.rewards' not in sys.modules, 'loaded eagerly'\n"
        "m.osmosis_reward; assert 'osmosis_ai.rewards' in sys.modules\n"
        "from osmosis_ai.rollout.core import *\n"
        "assert RolloutAgentLoop.__module__ == 'osmosis_ai.rollout.agent_loop'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_same_objects_at_old_and_new_paths() -> None:
    import osmosis_ai
    from osmosis_ai.cli_services import CLIError
    from osmosis_ai.errors import CLIError as OurCLIError
    from osmosis_ai.errors import ToolArgumentError
    from osmosis_ai.eval.rubric import RubricResult, evaluate_rubric
    from osmosis_ai.rollout.core.exceptions import ToolArgumentError as OldToolArgumentError
    from osmosis_ai.rollout.core.schemas import OpenAIFunctionToolSchema
    from osmosis_ai.utils import osmosis_reward

    assert OldToolArgumentError is ToolArgumentError
    assert OpenAIFunctionToolSchema is osmosis_ai.rollout.OpenAIFunctionToolSchema
    assert osmosis_reward is osmosis_ai.osmosis_reward
    assert evaluate_rubric is osmosis_ai.evaluate_rubric and RubricResult is osmosis_ai.RubricResult
    assert CLIError is OurCLIError
