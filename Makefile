# memstream: two commands matter, `make demo` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test test-unit test-integration demo lint bench soak faults clean broker browser screenshots

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# The dashboard's tests drive a real headless Chromium: Debian's package, installed where
# missing and possible; without it those tests skip and say why.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null 2>&1 && (apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } || \
	  echo "no Chromium could be installed: the dashboard's browser tests will skip"

# every dashboard page of a seeded worker as PNG files in screenshots/ (not committed)
screenshots: $(STAMP) browser
	$(BIN)/python -m tests.screenshots --out screenshots

# Four processes, a module each at a time (module fixtures share a worker): most of an
# integration test is waiting on the broker and the worker (three processes kept 2 cores
# ~60% busy: 8:18-9:31 for a fresh clone's make test; four: 7:10, five: 6:10, all passing).
test: $(STAMP) browser
	$(BIN)/pytest -q -p no:cacheprovider -n 4 --dist loadfile --no-loadscope-reorder --durations=12 tests

test-unit: $(STAMP)
	$(BIN)/pytest -q -m "not integration" tests

test-integration: $(STAMP)
	$(BIN)/pytest -q -m integration tests

demo: $(STAMP)
	$(BIN)/python -m memstream.consumers.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The crash-and-restart driver at a large size (SOAK_TURNS, SOAK_KILLS, SOAK_SEED choose it),
# and the worker roles: 2 write + 1 project + 2 API nodes, one of each SIGKILLed.
soak: $(STAMP)
	MEMSTREAM_SOAK=1 $(BIN)/pytest -q -p no:cacheprovider -m soak -s tests/integration/test_crash_restart.py \
		tests/integration/test_role_nodes.py

# The faults of issue 12 combined (SIGKILLs, poison queries, recall load, bad dates, unknown
# ids, a broker restart) at a larger size; prints turns lost, duplicate memories, projections
# stalled and health wrong per phase. FAULTS_TURNS, FAULTS_KILLS, FAULTS_SEED choose the run,
# FAULTS_RECOVER the memstream command run after the broker restart (default: recover).
faults: $(STAMP)
	$(BIN)/python -m tests.reliability.faults

bench: $(STAMP)
	$(BIN)/python -m bench

broker: $(STAMP)
	$(BIN)/memstream broker

clean:
	rm -rf $(VENV) .memstream build *.egg-info .pytest_cache .mypy_cache .ruff_cache
