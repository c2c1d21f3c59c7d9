# Two commands on a fresh machine: `make demo` and `make test`.
# Both bootstrap .venv from the pinned versions in requirements/lock.txt first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)/.dagster_home
export CLARUS_CMS_MIRROR ?= $(abspath $(CURDIR)/../shared/cms-data/raw)

.PHONY: demo test lint bootstrap bundle bench dagster clean

$(STAMP): pyproject.toml requirements/lock.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==26.3
	$(BIN)/pip install --quiet -c requirements/lock.txt -e '.[pipeline,server,llm,dev,train,audit,ray]'
	$(BIN)/pip install --quiet --no-deps openenv-core==0.3.0  # test-only: OpenEnv's own client
	$(BIN)/pip install --quiet -c requirements/lock.txt 'fastmcp-slim[client]==4.2.3'  # what its client imports
	command -v redis-server >/dev/null || (apt-get update -qq && apt-get install -y -qq redis-server) || echo "redis-server not installed: the Redis session-store tests will skip"
	mkdir -p $(DAGSTER_HOME) && touch $(DAGSTER_HOME)/dagster.yaml
	touch $(STAMP)

bootstrap: $(STAMP)

demo: $(STAMP)
	$(BIN)/clarus reference lookup --fee 99213 --mac 04412 --locality 18 --ncci 96372 99211
	$(BIN)/clarus eval --agent oracle,heuristic,random --task all --split dev --quiet

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -q

# Rebuild the committed reference bundle from the CMS mirror (a data engineer's refresh).
bundle: $(STAMP)
	$(BIN)/dagster asset materialize -m pipelines.definitions --select '*' --partition 2026C

bench: $(STAMP)
	$(BIN)/python benchmarks/pipeline.py
	$(BIN)/python benchmarks/env.py

dagster: $(STAMP)
	$(BIN)/dagster dev -w workspace.yaml

clean:
	rm -rf $(VENV) $(DAGSTER_HOME) .pytest_cache .ruff_cache
