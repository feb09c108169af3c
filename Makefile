# Two commands matter: `make book` (everything from scratch: venv, install, data, notebooks, HTML)
# and `make test` (install if needed, then the whole test suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REGIME_DATA_DIR ?= $(abspath ../shared/data)
PROFILE ?= default
export REGIME_DATA_DIR
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
# Figures never need a display: notebooks show them with regime_core.book.figures.show, which
# renders PNG bytes, so they appear on the executed pages under Agg too (plt.show() would not).
export MPLBACKEND ?= Agg

.PHONY: install data reproduce book test test-numeric expected lint format clean

install: $(STAMP)

# Reinstall when the pins change. torch is pinned exactly in pyproject.toml (a range pulls CUDA).
# The dev/test install includes the scale extra (Ray) so that the Ray engine's test runs in CI;
# a user's plain `pip install -e .` stays without it.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23.2"
	$(BIN)/python -m pip install --quiet -e ".[book,dev,scale]"
	touch $(STAMP)

data: install
	$(BIN)/regime data prepare --data-dir "$(REGIME_DATA_DIR)"

reproduce: data
	$(BIN)/regime reproduce --profile $(PROFILE)

book: reproduce
	$(BIN)/regime book

test: install
	$(BIN)/python -m pytest

# The tests whose results are floating-point computations (the `numeric` marker, tests/conftest.py).
# .ci/run runs them a second time under another OpenBLAS kernel: OPENBLAS_CORETYPE=... make test-numeric
test-numeric: install
	$(BIN)/python -m pytest -m numeric

# Refreeze the quick profile's numbers after an intended change (then review the diff).
expected: install
	$(BIN)/regime data prepare --data-dir "$(REGIME_DATA_DIR)" --work _build/quick
	$(BIN)/regime reproduce --profile quick --work _build/quick
	$(BIN)/regime expected freeze --work _build/quick

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf _build .pytest_cache .ruff_cache
