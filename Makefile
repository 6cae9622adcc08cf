# Quick start: `make demo` (install + offline demo workflow), `make test` (install + tests).
# Everything installs into a local virtual environment ($(VENV)); only the install needs network
# (package registries). The workflow itself runs offline.

VENV ?= .venv
PYTHON ?= python3
CORES ?= 2
# test files run side by side in this many processes (pytest-xdist; a file's tests stay in one,
# so its fixtures are built once): a workflow test waiting on Snakemake, DVC or SLURM leaves its
# core to another file
TEST_WORKERS ?= $(CORES)
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: install demo test test-fast lint report clean-results help

help:
	@echo "make demo    install into $(VENV) and run the offline demo workflow (snakemake --cores $(CORES))"
	@echo "make test    install into $(VENV) and run the whole test suite (what CI runs)"
	@echo "make test-fast  the fast tier (pytest -m 'not slow'): every metric's known answers and a small workflow, under 5 min"
	@echo "make lint    rendered files current, snakemake --lint, snakefmt, ruff (lint + format), mypy"
	@echo "make report  HTML report of the last run (results/report.html)"

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[workflow,test]"
	# torchattacks' metadata pins requests~=2.25.1, which DVC's urllib3>=2.2.2 rules out; the library itself
	# needs only torch, torchvision, scipy, numpy and tqdm (installed above), so it goes in without its pins
	$(BIN)/python -m pip install --quiet --no-deps -c constraints.txt torchattacks
	# WordNet for the text stress-tests, into the venv's own nltk path (<prefix>/nltk_data),
	# so the workflow later copies it offline (docs/text-variants.md)
	$(BIN)/vlstress nlp-data --out $(VENV)/nltk_data
	touch $(STAMP)

demo: install
	snakemake --cores $(CORES)
	dvc status

test: install
	python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test-fast: install
	python -m pytest -m "not slow"

lint: install
	vlstress pipeline check
	snakemake --lint
	snakefmt --check workflow/
	ruff check src tests benchmarks
	ruff format --check src tests benchmarks
	mypy

report: install
	snakemake --report results/report.html

clean-results:
	rm -rf data/raw data/prepared results/embeddings results/figures .snakemake logs
