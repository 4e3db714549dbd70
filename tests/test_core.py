"""The compiled core: version agreement (catches a stale .so), the type stub, build metadata."""

import ast
import importlib.metadata
import pathlib

import tomllib

import osmosis_ai
from osmosis_ai import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_core_version_matches_package_version() -> None:
    assert _core.__version__ == osmosis_ai.__version__


def test_installed_metadata_and_cargo_agree_with_the_package() -> None:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    assert cargo["workspace"]["package"]["version"] == osmosis_ai.__version__
    assert importlib.metadata.version("osmosis-ai") == osmosis_ai.__version__


def test_core_is_loaded_from_this_checkout() -> None:
    assert pathlib.Path(_core.__file__).resolve().parent == ROOT / "python" / "osmosis_ai"


def test_stub_lists_exactly_the_public_names_of_the_core() -> None:
    stub = ast.parse((ROOT / "python" / "osmosis_ai" / "_core.pyi").read_text())
    stubbed: set[str] = set()
    for node in stub.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stubbed.add(node.target.id)
        elif isinstance(node, ast.Assign):
            stubbed.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def public(names: set[str]) -> set[str]:  # the stub's own private helpers (TypedDicts) are not exported
        return {name for name in names if not name.startswith("_") or name == "__version__"}

    assert public(stubbed) == public(set(dir(_core)))


def test_build_profile_is_reported() -> None:
    assert _core.build_profile() in {"debug", "release"}
