"""The build leaves the importable extension in place while it compiles (a new user's finding: `make demo`
removed `_core.abi3.so` for seconds, and any `osmosis` command run meanwhile failed at import)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make(*args: str) -> str:
    done = subprocess.run(["make", "-s", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def test_the_build_recipes_remove_only_stale_version_tagged_extensions(tmp_path: Path) -> None:
    stale_cores = _make("--eval", "print-stale-cores: ; @echo '$(STALE_CORES)'", "print-stale-cores").strip()
    package = tmp_path / "python" / "osmosis_ai"
    package.mkdir(parents=True)
    for name in ("_core.abi3.so", "_core.cpython-311-x86_64-linux-gnu.so", "_core.pyi", "other.so"):
        (package / name).write_text("")
    subprocess.run(["bash", "-c", stale_cores], cwd=tmp_path, check=True)
    assert sorted(p.name for p in package.iterdir()) == ["_core.abi3.so", "_core.pyi", "other.so"]


@pytest.mark.parametrize("target", ["build", "build-release"])
def test_no_build_step_deletes_the_abi3_extension(target: str) -> None:
    # `-n -B` prints every recipe line the target would run, the setup steps included, without running them.
    recipe = _make("-n", "-B", target)
    removals = [
        line for line in recipe.splitlines() if "_core" in line and ("rm " in line or "-delete" in line)
    ]
    assert removals, recipe  # the stale ones are still removed
    assert all('! -name "_core.abi3.so"' in line and "rm -f" not in line for line in removals), removals
