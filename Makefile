# Two commands on a fresh machine: `make demo` and `make test`.
# Both bootstrap .venv from the pinned versions in requirements/lock.txt first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)/.dagster_home
export CLARUS_CMS_MIRROR ?= $(abspath $(CURDIR)/../shared/cms-data/raw)
# the browser tests drive Debian's chromium through Playwright; it never downloads a browser
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

.PHONY: demo test lint bootstrap bundle bench dagster clean

$(STAMP): pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==26.3
	$(BIN)/pip install --quiet -c requirements/lock.txt -e '.[pipeline,server,llm,dev,train,audit,ray,report]'
	$(BIN)/pip install --quiet --no-deps openenv-core==0.3.0  # test-only: OpenEnv's own client
	$(BIN)/pip install --quiet -c requirements/lock.txt 'fastmcp-slim[client]==4.2.3'  # what its client imports
	command -v redis-server >/dev/null || (apt-get update -qq && apt-get install -y -qq redis-server) || echo "redis-server not installed: the Redis session-store tests will skip"
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium) || echo "chromium not installed: the browser tests will skip"
	mkdir -p $(DAGSTER_HOME) && touch $(DAGSTER_HOME)/dagster.yaml
	touch $(STAMP)

bootstrap: $(STAMP)

demo: $(STAMP)
	$(BIN)/clarus reference lookup --fee 99213 --mac 04412 --locality 18 --ncci 96372 99211
	$(BIN)/clarus eval --agent oracle,heuristic,random --task all --split dev --quiet
	mkdir -p reports
	for agent in oracle heuristic random; do $(BIN)/clarus eval --agent $$agent --task all --split dev --limit 8 --trials 3 --quiet --out reports/demo-$$agent.json >/dev/null || exit 1; done
	$(BIN)/clarus report reports/demo-oracle.json reports/demo-heuristic.json reports/demo-random.json --out reports/demo.html

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -q -n 2 --dist loadfile -m "not serial"
	$(BIN)/pytest -q -m serial

# A data engineer's refresh: build 2026C from the CMS mirror and publish it under
# CLARUS_BUNDLE_ROOT (an immutable release dir + an atomically flipped link), never into the
# checkout; compare with bundles/reference/2026C before copying it there to commit.
bundle: $(STAMP)
	CLARUS_BUNDLE_ROOT=$${CLARUS_BUNDLE_ROOT:-$(CURDIR)/.dagster_home/bundles} \
	  $(BIN)/python -m pipelines.refresh --partition 2026C

bench: $(STAMP)
	$(BIN)/python benchmarks/pipeline.py
	$(BIN)/python benchmarks/env.py

dagster: $(STAMP)
	$(BIN)/dagster dev -w workspace.yaml

clean:
	rm -rf $(VENV) $(DAGSTER_HOME) .pytest_cache .ruff_cache
