# buffersweep: `make demo` runs the main job on embedded defaults, `make test` runs every test.
# Both create .venv (Python 3.11) and install the project, with its Rust extension, when needed.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
RUST_SRC := $(shell find sim/src -name '*.rs') sim/Cargo.toml sim/Cargo.lock

# Two pytest workers (pytest-xdist): many tests wait on Ray, MLflow or a subprocess's imports, so
# two share 2 cores well (the suite took 21.5 min serially, 17.6 with two workers). Each worker
# starts its own session Ray node (tests/conftest.py). PYTEST_PARALLEL= runs them serially. The 15
# slowest tests are listed at the end: `make test` must stay under 20 minutes on 2 cores.
PYTEST_PARALLEL ?= -n 2 --dist worksteal
# Optional extras installed with the project: `make test EXTRAS=,ns3` adds ns-3 3.44 (700 MB, about
# 3 minutes), whose cross-check tests are skipped without it; .ci/run does so.
EXTRAS ?=

.PHONY: install demo lint check test test-rust test-py faults bench reproduce clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-installs when the Rust sources or the dependency pins change (pip rebuilds the extension).
$(STAMP): $(BIN)/python pyproject.toml $(RUST_SRC)
	@echo "installing dependencies and building the Rust engine (about 3 minutes on 2 cores the first time)..."
	$(BIN)/pip install -q -e '.[test$(EXTRAS)]'
	$(BIN)/python -m sim.stubs  # sim/config.pyi, the type stub, from the engine's registries
	cd sim && cargo build --release --quiet --bin bsw-delayline  # the kernel backend's delay line
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/python -m sweeps.demo

# Style and layering: ruff (Python style), rustfmt, clippy, and import-linter (sim <- sweeps <- hydra_plugins
# <- analysis / cluster, no circle between files; the Rust files' is a cargo test, sim/tests/modules.rs).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	cd sim && cargo fmt --check
	cd sim && PYO3_PYTHON=$(abspath $(BIN)/python) cargo clippy --release --quiet --all-targets --features python -- -D warnings

test: lint test-rust test-py

# The quick loop (under 4 minutes on 2 cores): the Rust tests, then the Python tests marked
# `check` (fingerprints, config and CLI errors, the schema, the README's links, one reproduction).
check: install test-rust
	tests/run $(PYTEST_PARALLEL) -m check

test-rust:
	cd sim && cargo test --release --quiet

test-py: install
	tests/run $(PYTEST_PARALLEL) --durations=15

# Issue 36's fault test at its size: 10,000 tiny jobs with MLflow on, the Ray node killed under
# them, the driver killed with -9 while it logs, the command rerun (`make test` runs 600).
faults: install
	FAULT_JOBS=10000 tests/run tests/sweeps/test_faults.py

bench: install
	$(BIN)/python -m bench.engine --baseline 0cd694d
	$(BIN)/python -m bench.orchestration
	$(BIN)/python -m bench.backends
	$(BIN)/python -m bench.precision
	$(BIN)/python -m bench.coverage
	$(BIN)/python -m bench.htsim
	$(BIN)/python -m bench.kernel
	tests/netns $(BIN)/python -m bench.cluster

# Every paper reproduction at full size: reports/NAME.{md,png} (tests run reduced grids), with
# ns-2's side of the cross-checks where ns-2 is installed.
reproduce: install
	$(BIN)/python -m analysis reproduce all --reports reports $(if $(shell command -v ns),--backends ns2)

clean:
	rm -rf $(VENV) sim/target sim/_core*.so
