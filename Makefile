# Two commands matter: `make book` (everything from scratch: venv, install, data, notebooks, HTML)
# and `make test` (install if needed, then the default tier of the tests; `make test-all` runs every
# tier, as CI does).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Which build of torch the venv gets: `cpu` (the default, no CUDA needed) or `cuda` (PyPI's Linux
# wheel with its 19 nvidia/cuda/triton wheels, several GB): `make install TORCH=cuda`. The version
# is the pin in pyproject.toml. Without TORCH, make keeps the build the venv has (cpu for a new
# one); naming the other one rebuilds the venv.
TORCH ?= $(or $(patsubst $(VENV)/.installed-torch-%,%,$(firstword $(wildcard $(VENV)/.installed-torch-*))),cpu)
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_VERSION = $(shell sed -n 's/^ *"torch==\([^"]*\)".*/\1/p' pyproject.toml)
STAMP := $(VENV)/.installed-torch-$(TORCH)
DEV_STAMP := $(VENV)/.installed-dev
REGIME_DATA_DIR ?= $(abspath ../shared/data)
PROFILE ?= default
export REGIME_DATA_DIR
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
# Figures never need a display: notebooks show them with regime_core.book.figures.show, which
# renders SVG, so they appear on the executed pages under Agg too (plt.show() would not).
export MPLBACKEND ?= Agg

.PHONY: install install-dev torch data reproduce book book-check citation test test-slow test-all test-numeric expected lint format clean

install: $(STAMP)

install-dev: $(DEV_STAMP)

ifeq ($(TORCH),cpu)
# The CPU build first, alone (--no-deps: its dependencies come from PyPI in the next step): the
# local wheel when pip's find-links has `torch==VERSION+cpu` (asking no index, so an unreachable
# one costs nothing), else PyTorch's CPU index. Installed first, it satisfies the pin, and the
# main install then never takes PyPI's CUDA build.
INSTALL_TORCH = $(BIN)/python -m pip install --quiet --no-deps --no-index "torch==$(TORCH_VERSION)+cpu" 2>/dev/null \
	|| $(BIN)/python -m pip install --quiet --no-deps --index-url "$(TORCH_CPU_INDEX)" "torch==$(TORCH_VERSION)"
else ifeq ($(TORCH),cuda)
# PyPI's build. `===` matches the version string exactly, so a local `+cpu` wheel is not taken.
INSTALL_TORCH = $(BIN)/python -m pip install --quiet --no-deps "torch===$(TORCH_VERSION)"
else
$(error TORCH is cpu or cuda, not '$(TORCH)')
endif

# Reinstall when the pins change. `make install` (and so `make book`) installs what the book needs:
# the package with its `book` extra. `make install-dev` (every test, lint and check target) adds the
# `dev` extra and the `scale` extra (Ray), so that the Ray engine's test runs in CI; a user's plain
# `pip install -e .` stays without either.
$(STAMP): pyproject.toml
	@for old in $(VENV)/.installed-torch-*; do \
	  if [ -e "$$old" ] && [ "$$old" != "$(STAMP)" ]; then \
	    echo "TORCH=$(TORCH): rebuilding $(VENV) (it holds another torch build)"; rm -rf $(VENV); break; \
	  fi; \
	done
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23.2"
	$(INSTALL_TORCH)
	$(BIN)/python -m pip install --quiet -e ".[book]"
	rm -f $(DEV_STAMP)
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[book,dev,scale]"
	touch $(DEV_STAMP)

# The torch step alone, into an existing venv (tests/test_install.py runs it against stand-in
# indexes; `make install` runs it too).
torch:
	$(INSTALL_TORCH)

data: install
	$(BIN)/regime data prepare --data-dir "$(REGIME_DATA_DIR)"

reproduce: data
	$(BIN)/regime reproduce --profile $(PROFILE)

book: reproduce
	$(BIN)/regime book

# The built book as its readers meet it (tools/bookcheck, run from the checkout, not shipped):
# every page's HTML, then each page in the system's headless Chromium at four widths.
book-check: install-dev
	$(BIN)/python -m tools.bookcheck --browser

# How to cite, from CITATION.cff (book/_ext/regime_book/citation.py, the repository's tool): write
# CITATION.cff's repository-code and version, the README's repository line and book/references.bib
# from their sources. tests/test_book_citation.py fails while one is out of step.
citation: install
	$(BIN)/python book/_ext/regime_book/citation.py --sync

# Two tiers of tests. The default tier (`make test`): every test not marked `slow` (unit tests on
# fixtures, the toy world, the real-data checks that need no notebook run). The slow tier: the
# tests that execute notebooks, build the book, drive Chromium or rerun the quick profile against
# expected_numbers.yml. `make test-all` runs both; .ci/run runs `make test`, then `make test-slow`.
# Each run ends with its 20 slowest tests, so a CI log is also the tiers' profile.
# The default and numeric tiers run on every core (pytest-xdist: PYTEST_WORKERS=auto, one worker
# per core; 0: one process), a test module per worker so that each module-scoped fixture is built
# once, and every module that reads the quick profile on one worker (tests/conftest.py,
# pytest_xdist_make_scheduler), so the profile runs once. The slow tier stays on one process: on
# 2 cores two workers took longer (31:39 against 30:25), as its longest path (the quick profile,
# its book, Chromium) already uses both cores. `make test-slow PYTEST_SLOW="-n auto --dist loadfile"`
# runs it on every core (on more cores it may pay).
PYTEST_FLAGS ?= --durations=20
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist loadfile
PYTEST_SLOW ?=
test: install-dev
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_PARALLEL) $(PYTEST_FLAGS)

test-slow: install-dev
	$(BIN)/python -m pytest -m slow $(PYTEST_SLOW) $(PYTEST_FLAGS)

test-all: install-dev
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) $(PYTEST_FLAGS)

# The tests whose results are floating-point computations (the `numeric` marker, tests/conftest.py).
# .ci/run runs them a second time under another OpenBLAS kernel: OPENBLAS_CORETYPE=... make test-numeric
test-numeric: install-dev
	$(BIN)/python -m pytest -m numeric $(PYTEST_PARALLEL) $(PYTEST_FLAGS)

# Refreeze the quick profile's numbers after an intended change (then review the diff): every number
# a claim names and each run's first two levels (regime_core.runner.expected.freeze); the tests'
# invariants check the rest.
expected: install-dev
	$(BIN)/regime data prepare --data-dir "$(REGIME_DATA_DIR)" --work _build/quick
	$(BIN)/regime reproduce --profile quick --work _build/quick
	$(BIN)/regime expected freeze --work _build/quick

# ruff, then the type check of the package, the book's checks (tools/) and its Sphinx extension
# (book/_ext) (mypy, configured in pyproject.toml)
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf _build .pytest_cache .ruff_cache
