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

.PHONY: bench-ratings bench-report
JOBS ?= 1
# synthetic (5 loser signals x 200 repeats) and engine-played (150 repeats) validation; about
# 45 min on one core (JOBS=2 plays the engine hands in two processes)
bench-ratings: venv
	$(BIN)/python -m uno_tournament.validate_ratings --repeats 200 --engine-repeats 150 --jobs $(JOBS)

# tournament report on a realistic 100,000-hand folder (generated once into runs/)
bench-report: venv
	$(BIN)/python -m uno_tournament.bench_report --hands 100000

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

.PHONY: bench-server
bench-server: venv
	$(BIN)/python -m uno_server.benchmarks.server

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
