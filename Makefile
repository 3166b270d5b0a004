# mlx — two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Data search path: the user's MLX_DATA_PATH, then ../shared/datasets when it exists.
SHARED_DATA := $(abspath $(wildcard ../shared/datasets))
export MLX_DATA_PATH := $(subst $() $(),:,$(strip $(MLX_DATA_PATH) $(SHARED_DATA)))

PYTEST_ARGS ?=

.DEFAULT_GOAL := help
include tables.mk

.PHONY: run lint test test-all test-browser smoke validate bench mutants mutants-module install data clean help benchmark-multilabel

help:
	@echo "make run       run configs/bibtex.yaml (installs into $(VENV), finds or fetches bibtex)"
	@echo "make test      install, lint, run the test suite (slow reproductions excluded) and the smoke run"
	@echo "make lint      ruff check mlx tests benchmarks tools"
	@echo "make test-all  the test suite including slow tests"
	@echo "make test-browser  install Debian's chromium if missing, then load an mlx report in it headless"
	@echo "make validate  check every config under configs/"
	@echo "make bench     run the benchmarks under benchmarks/"
	@echo "make mutants   mutation testing of the runner, Dask backend, masks, seeding, config, methods, splits and tables (hours)"
	@echo "make mutants-module MODULE=mlx/x.py TESTS=\"tests/...\"  one module against chosen tests (minutes)"
	@echo "make tables    run and render every paper table that can run here (make tables-status: what each needs)"
	@echo "make results-doc  regenerate docs/RESULTS.md from the rendered tables"
	@echo "make benchmark-multilabel  every multi-label method on every multi-label set -> docs/BENCHMARK.md"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

data: $(STAMP)
	$(BIN)/mlx datasets fetch bibtex

run: data
	$(BIN)/mlx run configs/bibtex.yaml

lint: $(STAMP)
	$(BIN)/ruff check mlx tests benchmarks tools

test: $(STAMP) lint
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS)
	$(BIN)/mlx validate configs/*.yaml configs/lsvv/*.yaml configs/similarity/*.yaml
	@smoke=$$(mktemp -d) && trap 'rm -rf "$$smoke"' EXIT && \
	  $(BIN)/mlx run --quiet -o "$$smoke/smoke" configs/smoke.yaml && \
	  $(BIN)/mlx run --quiet -o "$$smoke/smoke-multiclass" configs/smoke-multiclass.yaml

test-all: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The report page in a real browser: Debian's chromium (apt-get, as root) unless one is on PATH.
# Set MLX_SCREENSHOT=FILE.png to keep the screenshot the test takes.
test-browser: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { apt-get update && apt-get install -y chromium; }
	$(BIN)/python -m pytest -q -m browser -rs $(PYTEST_ARGS) tests/tables/test_report.py

smoke: $(STAMP)
	$(BIN)/mlx run configs/smoke.yaml
	$(BIN)/mlx run configs/smoke-multiclass.yaml

validate: $(STAMP)
	$(BIN)/mlx validate configs/*.yaml configs/lsvv/*.yaml configs/similarity/*.yaml \
	  configs/leml-table4-synth/*.yaml

mutants: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[mutation]'
	$(BIN)/mutmut run --max-children 2 || true
	$(BIN)/mutmut results

# One module against chosen tests, collected once (seconds instead of hours):
#   make mutants-module MODULE=mlx/methods/bcs.py TESTS="tests/methods/test_mutants_bcs.py tests/methods/test_bcs.py"
mutants-module: $(STAMP)
	@test -n "$(MODULE)" -a -n "$(TESTS)" || { echo "make mutants-module needs MODULE=mlx/... and TESTS=\"tests/...\""; exit 2; }
	$(BIN)/python -m pip install --quiet -e '.[mutation]'
	$(BIN)/python tools/mutation/drive.py $(MODULE) $(TESTS)

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info mutants

# Every multi-label method on every multi-label set here (configs/benchmark/*.yaml), then the
# tables, average ranks, Friedman test and CD diagram in docs/BENCHMARK.md. A cell that fails,
# or is stopped over its method's time budget (`budget` in the configs), is recorded in its
# results.csv and listed on the page; the other cells and configs still run.
BENCH_JOBS ?= 2
benchmark-multilabel: $(STAMP)
	@for c in configs/benchmark/*.yaml; do \
	  $(BIN)/mlx run -q -j $(BENCH_JOBS) "$$c" || echo "($$c: some cells did not finish; see its results)"; \
	done
	$(BIN)/python benchmarks/benchmark_multilabel.py
