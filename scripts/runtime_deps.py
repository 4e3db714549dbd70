"""Print the runtime dependencies of pyproject.toml, one per line (`make setup` installs them quietly
before maturin builds, so the build step only builds).

Python 3.10 has no tomllib: there it prints nothing, and maturin installs the dependencies itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    sys.exit(0)

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
print("\n".join(project["dependencies"]))
