# UNO Arena. Every target installs what it needs into .venv (or .venv-bench) itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BENCH_VENV := .venv-bench
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: help venv test lint typecheck unit bench-engine golden clean

help:
	@echo "make tournament    run a local tournament among the example bots (coming with the tournament runner)"
	@echo "make test          lint, type-check and run the whole test suite"
	@echo "make bench-engine  engine hands/s against RLCard's UNO, side by side"
	@echo "make bench-load    1,000 concurrent tables: errors, memory growth, p99"
	@echo "make golden        regenerate the golden transcripts in tests/engine/golden"

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check server tournament clients/python tests

typecheck: venv
	$(BIN)/mypy

unit: venv
	$(BIN)/pytest -q

test: lint typecheck proto-check buf-lint clients-test unit

golden: venv
	$(BIN)/python tests/engine/make_golden.py

$(BENCH_VENV)/.installed: pyproject.toml setup.py $(wildcard server/uno_server/engine/*.py)
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet mypy setuptools wheel
	UNO_ARENA_MYPYC=1 $(BENCH_VENV)/bin/python -m pip install --quiet --no-build-isolation '.[bench]'
	touch $@

bench-engine: $(BENCH_VENV)/.installed
	taskset -c 0 $(BENCH_VENV)/bin/python -m uno_server.benchmarks.engine

clean:
	rm -rf $(VENV) $(BENCH_VENV) .mypy_cache .pytest_cache .ruff_cache

.PHONY: bench-ratings
bench-ratings: venv
	$(BIN)/python -m uno_tournament.validate_ratings --repeats 500

.PHONY: proto proto-check buf-lint
BUF := .tools/node_modules/.bin/buf
$(BUF):
	npm install --no-audit --no-fund --prefix .tools @bufbuild/buf@1 >/dev/null

proto: venv
	$(BIN)/python -m uno_server.protogen
	PATH="$(CURDIR)/$(BIN):$$PATH" clients/each.sh generate

proto-check: venv
	$(BIN)/python -m uno_server.protogen --check
	PATH="$(CURDIR)/$(BIN):$$PATH" clients/each.sh check

.PHONY: clients clients-test
clients: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" clients/each.sh build

clients-test: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" clients/each.sh test

buf-lint: $(BUF)
	cd proto && ../$(BUF) lint && ../$(BUF) format -d --exit-code && ../$(BUF) build

.PHONY: bench-server bench-load
bench-server: venv
	$(BIN)/python -m uno_server.benchmarks.server

# 1,000 concurrent tables of connected bots in 4 processes, then 1,000 more matches: errors,
# the server's RSS growth and the p99 round trip (a reduced run is in tests/service/test_soak.py)
bench-load: venv
	$(BIN)/python -m uno_server.benchmarks.load

.PHONY: tournament bench-tournament
tournament: venv clients
	$(BIN)/python -m uno_server.cli tournament run example --out runs/example-$$(date +%Y%m%d-%H%M%S)

bench-tournament: venv
	$(BIN)/python -m uno_tournament.bench

# ---------------------------------------------------------------- monitoring and deployment
.PHONY: dashboards monitor
dashboards: venv
	$(BIN)/python deploy/grafana/dashboards.py

monitor: venv
	@command -v prometheus >/dev/null || { echo "make monitor needs Prometheus: sudo apt-get install prometheus" >&2; exit 1; }
	PYTHON=$(BIN)/python deploy/monitor.sh
