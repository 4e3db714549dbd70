"""`make test` says so before it installs a system package (issue #32 item 7): the `browser` target, run
with a PATH where chromium is missing and `apt-get` only records that it was called."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)


def _make_browser(tmp_path: Path, **env: str) -> str:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "id", "echo 0")  # as root, where the target installs
    _tool(bin_dir, "apt-get", f'echo "apt-get $*" >> {tmp_path / "apt.log"}; echo "apt-get ran"')
    result = subprocess.run(
        [make, "-s", "-C", str(ROOT), "browser", f"VENV={tmp_path / 'no-venv'}"],
        env={"PATH": str(bin_dir), "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_system_wide_install_is_announced_before_it_starts(tmp_path: Path) -> None:
    out = _make_browser(tmp_path)
    announced = out.index("Installing Debian's chromium system-wide (apt-get)")
    assert "OSMOSIS_NO_SYSTEM_INSTALL=1 skips it" in out
    assert (tmp_path / "apt.log").read_text().splitlines()[0] == "apt-get update -qq"
    assert "apt-get ran" not in out[:announced]  # said before anything was installed


def test_the_install_can_be_declined(tmp_path: Path) -> None:
    out = _make_browser(tmp_path, OSMOSIS_NO_SYSTEM_INSTALL="1")
    assert "chromium not installed: the report page tests will skip" in out
    assert not (tmp_path / "apt.log").exists()
