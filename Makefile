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

# vega, vega-lite and vega-embed for `dvc plots show` offline: .dvc/plots/offline.html (the HTML
# template, .dvc/config plots.html_template) loads them from .dvc/plots/js, from the CDN only when
# they are absent; pinned builds from the npm registry (about 0.8 MB, not kept in git)
PLOTS_JS := .dvc/plots/js
VEGA_PACKAGES := vega@5.33.1 vega-lite@5.23.0 vega-embed@6.29.0

.PHONY: install demo test test-fast lint report clean-results help plots-js

help:
	@echo "make demo    install into $(VENV) and run the offline demo workflow (snakemake --cores $(CORES))"
	@echo "make test    install into $(VENV) and run the whole test suite (what CI runs)"
	@echo "make test-fast  the fast tier (pytest -m 'not slow'): every metric's known answers and a small workflow, under 5 min"
	@echo "make lint    rendered files current, snakemake --lint, snakefmt, ruff (lint + format), mypy"
	@echo "make report  HTML report of the last run (results/report.zip: unzip, open report/report.html)"
	@echo "make plots-js  vega's scripts from npm into $(PLOTS_JS), so that dvc plots show renders offline"

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
	# dvc plots show offline (optional: without npm, the plots load vega from its CDN)
	if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory plots-js || echo "plots-js failed: dvc plots show will load vega from its CDN"; fi
	touch $(STAMP)

plots-js:
	rm -rf $(PLOTS_JS).tmp && mkdir -p $(PLOTS_JS).tmp $(PLOTS_JS)
	cd $(PLOTS_JS).tmp && for p in $(VEGA_PACKAGES); do n=$${p%@*}; \
		npm pack --silent $$p >/dev/null && tar -xzf $$n-*.tgz && cp package/build/$$n.min.js ../js/ \
		&& rm -rf package $$n-*.tgz || exit 1; done
	rm -rf $(PLOTS_JS).tmp

demo: install
	snakemake --cores $(CORES)
	dvc status

# the 40 slowest tests listed at the end: where the suite's time goes
test: install
	python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=40

test-fast: install
	python -m pytest -n $(TEST_WORKERS) -m "not slow"

lint: install
	vlstress pipeline check
	snakemake --lint
	snakefmt --check workflow/
	ruff check src tests benchmarks
	ruff format --check src tests benchmarks
	mypy

report: install
	snakemake --report results/report.zip

clean-results:
	rm -rf data/raw data/prepared results/embeddings results/figures .snakemake logs
