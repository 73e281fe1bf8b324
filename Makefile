# Two commands matter (see README): `make demo` and `make test`. Both create ./.venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
JOBS ?= 2
# torch (only the pycox survival baseline and the reference tests need it) is installed as the CPU
# build from this index first: PyPI's default Linux wheel is the CUDA build (~2 GB more).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: install demo demo-data demo-archive regenerate test test-fast lint format bench fuzz clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 14))' || { \
	  echo "automd-analysis needs Python 3.11 to 3.14, but $(PYTHON) is $$($(PYTHON) -V 2>&1)."; \
	  echo "Point make at another interpreter, e.g.: make demo PYTHON=python3.13"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --retries 1 --timeout 30 --index-url $(TORCH_INDEX) "torch==2.13.0" \
	  || $(BIN)/python -m pip install -q "torch==2.13.0"
	$(BIN)/python -m pip install -q -e ".[dev,demo,baselines]"
	touch $@

install: $(VENV)/.installed

## main job: demo tasks from real public cohorts -> scripted-agent archive -> scores -> HTML report
demo: install
	$(BIN)/automd demo data
	$(BIN)/automd demo archive
	$(BIN)/automd annotate runs_archive/demo --out annotations/demo --jobs $(JOBS)
	$(BIN)/automd regenerate runs_archive/demo --out reports --scores scores/demo --jobs $(JOBS) \
	  --annotations annotations/demo --masking --allow-code-execution --version-bootstrap 200
	@echo "Report: reports/index.html"

## all tests: lint, format check, unit/property/reference/integration tests, the docstring examples
## of the package (doctests) and nbval notebooks
test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile
	$(BIN)/python -m pytest -n $(JOBS) --doctest-modules automd_analysis
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --nbval tests/nbval --nbval-sanitize-with tests/nbval/sanitize.cfg

## the edit-test loop: unit and property tests only (no `slow` integration tests, no `reference`
## comparisons with pycox & co.; `make test` runs everything)
test-fast: install
	$(BIN)/python -m pytest -n $(JOBS) --dist load -p no:nbval -q -m "not slow and not reference"

## unseeded property-test exploration (not in CI): HYPOTHESIS_PROFILE=explore runs ten times the
## examples of every property test (tests/conftest.py EXPLORE_FACTOR)
fuzz: install
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -n $(JOBS) --dist loadfile -q tests

lint: install
	$(BIN)/ruff check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	$(BIN)/python bench/run_benchmarks.py

clean:
	rm -rf reports scores annotations .pytest_cache .ruff_cache
