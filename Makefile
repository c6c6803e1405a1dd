# UNO Arena. Every target installs what it needs into .venv (or .venv-bench) itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BENCH_VENV := .venv-bench
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py clients/python/pyproject.toml | sha1sum | cut -c1-12)
ENGINE_DIR := server/uno_server/engine

.PHONY: help venv engine-build test lint typecheck unit bench-engine golden clean

help:
	@echo "make tournament           a local tournament among the example bots (embedded server, SQLite)"
	@echo "make test                 lint, type-check and run the whole test suite"
	@echo "make dist                 every SDK as a publishable artifact, in dist/ (docs/sdks.md)"
	@echo "make test-loaded          make test with two CPU-burning processes beside it"
	@echo "make bench-engine         engine hands/s against RLCard's UNO, side by side"
	@echo "make bench-server         decisions/s through the service against a raw gRPC floor"
	@echo "make bench-server-profile the server's CPU per move, part by part (py-spy)"
	@echo "make bench-load           1,000 concurrent tables: errors, memory growth, p99"
	@echo "make bench-tournament     tournament hands/s, one shard and more"
	@echo "make bench-ratings        validate the ratings' intervals (long)"
	@echo "make bench-aa             1,000 A/A tournaments: the rating fit never collapses (long)"
	@echo "make bench-settled        run until settled: error rate, A/A, hands (long)"
	@echo "make bench-settled-quick  the same, 12 + 8 + 6 runs (about 8 minutes)"
	@echo "make bench-league         a 16-version league for a fixed time, with a submission arriving"
	@echo "make bench-report         tournament report on a 100,000-hand run: time and memory"
	@echo "make monitor              a local Prometheus scraping a local tournament"
	@echo "make golden               regenerate the golden transcripts in tests/engine/golden"
	@echo "make snapshots            rewrite the play and watch screens' text snapshots"
	@echo "make screenshots          the README's screenshots of the play, watch and web views"

# Editable install; setup.py compiles the engine in place with mypyc when a C compiler is there.
$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./clients/python -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP) engine-build

# Rebuild the compiled engine in place when its sources changed since the last build (a stale
# build is never loaded anyway: the pure sources run instead, see _build.py).
engine-build: $(STAMP)
	@if [ -n "$$($(BIN)/python -c 'from uno_server.engine._build import compiled_problem as p; from uno_server.service._build import compiled_problem as q; from uno_tournament._build import compiled_problem as r; print(p() or q() or r() or "")')" ]; then \
	  echo "compiling the engine, the service's per-move modules and the wire reader with mypyc (UNO_ARENA_MYPYC=$${UNO_ARENA_MYPYC:-auto})"; \
	  $(BIN)/python setup.py --quiet build_ext --inplace >/dev/null; fi
	@$(BIN)/python -c 'import uno_server.engine as e, uno_server.service as s, uno_tournament as t; print("engine:", e.BUILD); print("service:", s.BUILD); print("wire reader:", t.BUILD)'

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check server tournament clients/python tests

typecheck: venv
	$(BIN)/mypy

# two workers (pytest-xdist): each test file is one unit, the client builds one more
# (tests/conftest.py). Three were tried on 2026-12-06 (the cores sat idle 35% of the time with
# two): pytest took 1,710 s against 1,822 s, about 6% less, and two tests with tight deadlines
# failed from the load; TEST_WORKERS=0 runs the suite in one process
TEST_WORKERS ?= 2
unit: venv
	$(BIN)/pytest -q --durations=25 -n $(TEST_WORKERS) --dist loadfile

test: lint typecheck proto-check buf-lint clients-test unit

# `make test` on a busy machine: two processes burn a core each for as long as the suite runs,
# as on a newcomer's laptop. Timing tests must assert order and causality, so this passes too.
.PHONY: test-loaded
test-loaded:
	@bash .ci/loaded $(MAKE) test

golden: venv
	$(BIN)/python tests/engine/make_golden.py

# A regular (non-editable) install, compiled or failing: the build the benchmark measures.
$(BENCH_VENV)/.installed: pyproject.toml clients/python/pyproject.toml setup.py $(wildcard $(ENGINE_DIR)/*.py)
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	UNO_ARENA_MYPYC=1 $(BENCH_VENV)/bin/python -m pip install --quiet ./clients/python '.[bench]'
	touch $@

bench-engine: $(BENCH_VENV)/.installed
	UNO_ARENA_ENGINE=compiled taskset -c 0 $(BENCH_VENV)/bin/python -m uno_server.benchmarks.engine

clean:
	rm -rf $(VENV) $(BENCH_VENV) .mypy_cache .pytest_cache .ruff_cache build
	rm -f $(foreach d,$(ENGINE_DIR) server/uno_server/service tournament/uno_tournament,$(d)/*.so $(d)/_native_build.json)

.PHONY: bench-ratings bench-report
JOBS ?= 1
# synthetic (5 loser signals x 200 repeats) and engine-played (150 repeats) validation; about
# 30 min on one core, measured 28 (JOBS=2 plays the engine hands in two processes)
bench-ratings: venv
	$(BIN)/python -m uno_tournament.validate_ratings --repeats 200 --engine-repeats 150 --jobs $(JOBS)

# issue 20: 1,000 A/A tournaments at the example's design (8 identical engine heuristic bots,
# 1,680 hands each): non-finite weights of places 2-4, interval widths against the winner-only
# fit's, fallback share; about 50 min on one core (JOBS=2 halves it)
.PHONY: bench-aa
bench-aa: venv
	$(BIN)/python -m uno_tournament.validate_ratings --aa 1000 --jobs $(JOBS)

# run until settled on engine-played hands (issue 24; about 50 minutes on two free cores, hours on
# busy ones). Each run is logged to runs/bench-settled.jsonl: stopped, the same command continues it
.PHONY: bench-settled
bench-settled: venv
	@mkdir -p runs
	$(BIN)/python -m uno_tournament.bench_settled --tournaments 200 --aa 200 --newversion 200 --jobs $(JOBS) --log runs/bench-settled.jsonl --resume

# the same checks at a reduced size (32 runs: 7 minutes on 2 cores, 2026-12-02, R 0.66 as in the README);
# its intervals are wide: the full target is the verdict
.PHONY: bench-settled-quick
bench-settled-quick: venv
	$(BIN)/python -m uno_tournament.bench_settled --tournaments 12 --aa 8 --newversion 6 --jobs $(JOBS)

# a standing league of 16 versions for two minutes, a new submission arriving meanwhile (issue 26)
.PHONY: bench-league
bench-league: venv
	$(BIN)/python -m uno_tournament.league.bench --versions 16 --seconds 120

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

# every SDK as the artifact its registry takes, checked as the registry would (docs/sdks.md)
.PHONY: dist
dist: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python clients/dist.py --out dist

.PHONY: clients clients-test
clients: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" clients/each.sh build

clients-test: venv
	PATH="$(CURDIR)/$(BIN):$$PATH" clients/each.sh test

buf-lint: $(BUF)
	cd proto && ../$(BUF) lint && ../$(BUF) format -d --exit-code && ../$(BUF) build
	.ci/buf-breaking $(BUF)

.PHONY: bench-server bench-load
bench-server: venv
	$(BIN)/python -m uno_server.benchmarks.server

# where the server's CPU per move goes: receive, engine, view, serialise, send, bookkeeping
# (py-spy samples the service part of bench-server; py-spy is in the dev extras)
.PHONY: bench-server-profile
bench-server-profile: venv
	$(BIN)/python -m uno_server.benchmarks.breakdown

# 1,000 concurrent tables of connected bots in 4 processes, then 1,000 more matches: errors,
# the server's RSS growth and the p99 round trip (a reduced run is in tests/service/test_soak.py)
bench-load: venv
	$(BIN)/python -m uno_server.benchmarks.load

.PHONY: tournament bench-tournament
tournament: venv clients
	$(BIN)/uno-arena tournament run example --out runs/example-$$(date +%Y%m%d-%H%M%S)

bench-tournament: venv
	$(BIN)/python -m uno_tournament.bench

# ---------------------------------------------------------------- monitoring and deployment
.PHONY: dashboards monitor
dashboards: venv
	$(BIN)/python deploy/grafana/dashboards.py

monitor: venv
	@command -v prometheus >/dev/null || { echo "make monitor needs Prometheus: sudo apt-get install prometheus" >&2; exit 1; }
	PYTHON=$(BIN)/python deploy/monitor.sh

# ---------------------------------------------------------------- play and watch
.PHONY: snapshots screenshots
# rewrite the text snapshots of the play and watch screens; review the diff before committing
snapshots: venv
	UPDATE_SNAPSHOTS=1 $(BIN)/pytest -q tests/play

# the README's screenshots (needs Debian's chromium)
screenshots: venv
	$(BIN)/python -m tests.web.make_screenshots deploy/screenshots
