# sweetie_motion -- the two commands a user needs: `make demo` and `make test`.
# Both set everything up on first use (`make setup`: venv, ROS 2 wheels, interface packages).

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
ARTIFACTS := artifacts

# DDS discovery stays on this machine, on a domain of our own, for everything make runs.
# (The package itself respects whatever a user sets: a real robot talks across machines.)
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
ROS_DOMAIN_ID ?= $(shell echo $$(( $$$$ % 90 + 5 )))
export ROS_DOMAIN_ID

.PHONY: all setup demo test test-fast lint bench editor console lock clean help

all: help

help:
	@echo "make demo    -- set up on first use, then run the demo on the virtual robot"
	@echo "make test    -- set up on first use, then run the whole test suite"
	@echo "make test-fast -- only test/unit, as without ROS and Qt (under 30 s)"
	@echo "make setup   -- only create/update .venv and build the interface packages"
	@echo "make lint    -- flake8 and pep257 as ament configures them, mypy over every module without rclpy or Qt"
	@echo "make bench   -- run the benchmarks in bench/"
	@echo "make editor  -- the trajectory editor next to the virtual robot"
	@echo "make console -- the operator console next to the winding arm's virtual robot"
	@echo "make lock    -- re-resolve requirements/requirements.in into the lock file"

setup:
	@bash scripts/setup.sh

demo: setup
	@mkdir -p $(ARTIFACTS)
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/sweetie-motion demo --out $(ARTIFACTS)

# Every dependency is required here: a missing one fails instead of skipping its tests.
# Two at a time (pytest-xdist, each worker its own ROS domains and X displays; a file, the
# editor's folder and the real-time servo files each stay on one worker: test/xdist_groups.py),
# then the tests that measure time (marked serial) with nothing beside them. TEST_WORKERS=3 is
# faster on a quiet 2-core machine (most tests wait on the processes they start: 11.5 -> 8.5
# minutes) but not beside a busy loop, where the CPU is the limit (740 s against 692-715 s with
# two), and there six timing-judging tests failed in one run.
TEST_ENV := QT_QPA_PLATFORM=offscreen SWEETIE_MOTION_TEST_STRICT=1
TEST_WORKERS ?= 2
test: setup
	@status=0; \
	$(TEST_ENV) $(PY) -m pytest test -n $(TEST_WORKERS) --dist loadgroup -m "not serial" \
		|| status=$$?; \
	$(TEST_ENV) $(PY) -m pytest test -m serial || status=$$?; \
	exit $$status

# The unit layer as it runs where ROS and Qt are not installed (they are hidden from it).
test-fast: setup
	$(PY) -m pytest test/unit -p no:pytest-qt --without-ros-and-qt -m "not slow" -q

lint: setup
	$(PY) -m pytest test/lint -q

bench: setup
	$(PY) bench/run_all.py

# The editor next to the virtual robot; without a display it renders a screenshot instead.
editor: setup
	@mkdir -p $(ARTIFACTS)
	@if [ -n "$$DISPLAY" ]; then \
		$(VENV)/bin/sweetie-motion editor --with-robot; \
	else \
		echo "no display: rendering the editor offscreen into $(ARTIFACTS)/editor.png"; \
		QT_QPA_PLATFORM=offscreen $(VENV)/bin/sweetie-motion editor --with-robot \
			--screenshot $(ARTIFACTS)/editor.png --quit-after 8; \
	fi

console: setup
	@mkdir -p $(ARTIFACTS)
	@if [ -n "$$DISPLAY" ]; then \
		$(VENV)/bin/sweetie-motion console --with-robot --program config/programs/paper_path.txt; \
	else \
		echo "no display: rendering the console offscreen into $(ARTIFACTS)/console.png"; \
		QT_QPA_PLATFORM=offscreen $(VENV)/bin/sweetie-motion console --with-robot \
			--program config/programs/paper_path.txt \
			--screenshot $(ARTIFACTS)/console.png --quit-after 8; \
	fi

lock:
	$(VENV)/bin/uv pip compile --python $(PY) --generate-hashes \
		requirements/requirements.in -o requirements/requirements.lock

clean:
	rm -rf build $(ARTIFACTS) .pytest_cache
