# Everything a fresh machine needs: `make demo` and `make test` set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.xrelay-installed

# pytest's workers and the tools that tests start read the bytecode the first process wrote rather
# than compiling every module they import again (0.6 s of CPU per xrelay-opt), so bytecode is written
# even where the environment says not to (lit leaves the variable out of its RUN lines anyway).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test test-zoo test-slow pytest lit fuzz bench clean

setup: $(STAMP)

# Re-installs only when the project's dependencies change; quick when already done. The venv's own
# pip (Python 3.11's) installs everything here, so it is not upgraded first (a round trip to the index);
# --no-compile: Python compiles only the modules that get imported, on first import (see above).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev,iree]'
	touch $(STAMP)

demo: setup
	$(BIN)/python examples/pass_instrument_tutorial.py

test: lint pytest lit

lint: setup
	$(BIN)/ruff check --no-cache .

# On PYTEST_WORKERS processes (pytest-xdist), each test file on one worker so that a file's cached
# models are built once; PYTEST_WORKERS=0 runs in this process.
PYTEST_WORKERS ?= 2
pytest: setup
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

# Whole networks through upstream tools: ResNet-18 from IREE's ONNX import run by xrelay, and every
# ResNet-50 variant compiled by IREE (minutes).
test-slow: setup
	$(BIN)/python -m pytest -m slow

# The ONNX light model zoo with random weights against ONNX Runtime, every model at every level and
# through IREE (minutes).
test-zoo: setup
	$(BIN)/python -m pytest -m zoo

lit: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -v tests/filecheck

# The mutation fuzzer (tests/fuzz/fuzzer.py) for a given time; prints the count of each class
# (ok / error / crash / misplaced / hang) and writes shrunk reproducers to fuzz-out/.
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= $(shell date +%s)
fuzz: setup
	$(BIN)/python tests/fuzz/fuzzer.py --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED) --out fuzz-out

# Benchmarks print medians and ratios against references measured in the same run;
# ONNX Runtime comes with the optional `bench` extra.
bench: setup
	$(BIN)/python -m pip install --quiet -e '.[dev,iree,bench]'
	$(BIN)/python benchmarks/instrument_overhead.py
	$(BIN)/python benchmarks/compile_time.py
	$(BIN)/python benchmarks/execution.py

clean:
	rm -rf $(VENV) build *.egg-info
