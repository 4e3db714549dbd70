#!/usr/bin/env bash
# Builds the release abi3 wheel once and proves it installs and imports on other CPython versions.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSIONS=${WHEEL_CHECK_PYTHONS:-"3.10 3.13"}
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT

maturin build --release --quiet --out "$dist"
wheel=$(ls "$dist"/*.whl)
case "$wheel" in
  *abi3*) ;;
  *) echo "wheel is not abi3: $wheel" >&2; exit 1 ;;
esac
echo "built $(basename "$wheel")"

for version in $VERSIONS; do
  interpreter=$(ls -d "$PYENV_ROOT"/versions/"$version".*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$interpreter" ]; then
    echo "no CPython $version under $PYENV_ROOT/versions: install it with 'pyenv install $version'" >&2
    exit 1
  fi
  venv="$dist/venv-$version"
  "$interpreter" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
  "$venv/bin/python" - <<'PY'
import sys
import osmosis_ai
from osmosis_ai import _core, osmosis_reward

assert _core.__version__ == osmosis_ai.__version__, (_core.__version__, osmosis_ai.__version__)
assert _core.build_profile() == "release"

# The established import paths are a table, not files: their .pyi stubs are what editors and mypy resolve.
from pathlib import Path
from osmosis_ai._compat.stubs import stub_files
missing = [str(file) for file in stub_files(Path(osmosis_ai.__file__).parent) if not file.is_file()]
assert not missing, f"the wheel lacks the stubs {missing}"

@osmosis_reward
def match(solution_str: str, ground_truth: str, extra_info: dict = None) -> float:
    return float(solution_str == ground_truth)

assert match("a", "a") == 1.0
print(f"wheel OK on Python {sys.version.split()[0]}: osmosis-ai {osmosis_ai.__version__}")
PY
  for script in osmosis osmosis-ai osmosis_ai; do
    "$venv/bin/$script" --version >/dev/null
  done
done
