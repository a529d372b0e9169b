# attention-course: the commands a learner, an instructor and a maintainer type.
#   make lab             open the course in JupyterLab (learners)
#   make instructor-lab  JupyterLab with nbgrader's instructor tools: formgrader, Create Assignment
#   make demo            release, grade a sample class and print the grade table (instructors)
#   make demo-lab        the instructor's lab on the demo's graded class: open its formgrader
#   make test            everything the project checks (maintainers, CI)
#   make check           the fast tier, for the inner loop: layers, types, suites, notebooks' structure
#   make claims          every direction a notebook states, over a sweep of ten or more seeds
#
# PYTHON=python3.12 builds .venv with another interpreter (3.11 to 3.14); VENV=/path/to/env installs
# into an environment that already exists instead of building .venv; LAB_ARGS passes flags to
# JupyterLab (make lab LAB_ARGS="--port 8890 --no-browser") and LAB_ROOT the folder it shows (the
# course's, by default); BENCH_ARGS passes flags to the benchmark
# (make bench BENCH_ARGS="--capacity 10,40,160"). WHEELHOUSE=folder installs from that folder
# alone, with no package index (a machine with no network); `make wheelhouse` fills it.
PYTHON ?= python3
VENV ?= .venv
LAB_ARGS ?=
LAB_ROOT ?= $(CURDIR)
BENCH_ARGS ?=
WHEELHOUSE ?=
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check \
	$(if $(WHEELHOUSE),--no-index --find-links $(abspath $(WHEELHOUSE)))
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
HUB_STAMP := $(VENV)/.installed-hub
ASSIGNMENTS := $(notdir $(wildcard solutions/*))
# nbgrader calls `alembic` by name: the environment's bin/ must be on PATH.
export PATH := $(abspath $(BIN)):$(PATH)
# The course's own Python compiled to bytecode, as pip compiles every package it installs (an
# editable install is not compiled): a process that may not write bytecode (every sandboxed kernel,
# which imports src/helpers; any process where PYTHONDONTWRITEBYTECODE is set) then reads it
# instead of compiling each module again at every start. Only files changed since are compiled.
COMPILE = $(BIN)/python -m compileall -q -j 0 autograder src suites $(1) >/dev/null

.PHONY: lab instructor-lab axe demo demo-lab test check claims release bench lock clean help hub-env wheelhouse engine-wheel

help:
	@sed -n '2,8p' Makefile | sed '/^#$$/d'

# A virtual environment made here gets this pip first: the one Python's venv brings (23.2 with
# 3.11) takes about three times as long to resolve the locks (a fresh .venv's install of
# requirements.lock: 28 s against 19 s, measured). An environment given with VENV keeps its own;
# where this pip cannot be had (a wheelhouse made before it was pinned), the venv's own installs.
PIP_VERSION := 26.3

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || { $(PYTHON) -m venv $(VENV) && { $(PIP) pip==$(PIP_VERSION) || \
	  echo "note: pip $(PIP_VERSION) is not to be had here: installing with the environment's own pip."; }; }
	$(PIP) -r requirements.lock
	$(PIP) --no-deps -e .
	@$(call COMPILE)
	@touch $@

$(DEV_STAMP): $(STAMP) requirements-dev.lock requirements-hub.lock
	$(PIP) -r requirements-dev.lock
	@touch $@

# The instructor's environment on a JupyterHub (docs/jupyterhub.md): the course and JupyterHub.
$(HUB_STAMP): $(STAMP) requirements-hub.lock
	$(PIP) -r requirements-hub.lock
	@touch $@

hub-env: $(HUB_STAMP)

# Everything an install needs, gathered on a machine with network to carry to one without (docs in
# README.md, "With no network"): every wheel requirements.lock and requirements-hub.lock pin, for
# this machine's Python and platform (PYTHON=python3.12 for another), the pip a new environment
# gets first, the build backend that installs the course and the learners' package, and
# configurable-http-proxy with its node modules, ready to run (npm/, when npm is here).
# WITH_DEV=1 adds the maintainers' test extras.
WHEELHOUSE_DIR := $(or $(WHEELHOUSE),wheelhouse)
wheelhouse:
	$(PYTHON) -m pip download --quiet --disable-pip-version-check --dest $(WHEELHOUSE_DIR) \
	  -r requirements.lock -r requirements-hub.lock $(if $(WITH_DEV),-r requirements-dev.lock) \
	  "setuptools>=68" wheel pip==$(PIP_VERSION)
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-audit --no-fund --prefix $(WHEELHOUSE_DIR)/npm configurable-http-proxy@5.3.0; \
	else echo "note: npm is not installed: the hub's configurable-http-proxy is not in the wheelhouse."; fi
	@echo "$(WHEELHOUSE_DIR) holds $$(ls $(WHEELHOUSE_DIR)/*.whl $(WHEELHOUSE_DIR)/*.tar.gz 2>/dev/null | wc -l) packages." \
	  "On the machine with no network: make lab WHEELHOUSE=$(abspath $(WHEELHOUSE_DIR)) (or demo, hub-env)."

# Both labs start the course's kernel (learner/jupyter/kernels/python3, found through JUPYTER_PATH:
# IPython's, reporting the language the notebooks record, so they open unmodified). The learner's
# lab also reads learner/jupyter-config first (JUPYTER_CONFIG_PATH), which turns off nbgrader's
# formgrader, Create Assignment and course list for this launch only: learners keep the
# Assignment List and Validate, and no Jupyter configuration of theirs changes.
# JupyterLab refuses to run as root unless told --allow-root; learner code would then run as root.
LAB = @if [ "$$(id -u)" = 0 ]; then echo "note: running JupyterLab as root (adding --allow-root)." \
	  "Notebook code then runs as root: prefer an ordinary user account for course work."; fi; \
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
	JUPYTER_PATH=$(CURDIR)/learner/jupyter$${JUPYTER_PATH:+:$$JUPYTER_PATH} $(1) \
	$(BIN)/jupyter lab --ServerApp.root_dir=$(LAB_ROOT) --LabApp.default_url=/lab/tree/$(2) \
	$$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

lab: $(STAMP)
	$(call LAB,JUPYTER_CONFIG_PATH=$(CURDIR)/learner/jupyter-config$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH},notebooks)

instructor-lab: $(STAMP)
	$(call LAB,,)

demo: $(STAMP)
	$(BIN)/python -m autograder demo

# The instructor's lab on the class `make demo` graded (its state: DEMO_STATE), with the
# formgrader at /formgrader: the sample learners, their grades, flags and feedback.
DEMO_STATE ?= $(CURDIR)/demo-output/course
demo-lab: $(STAMP)
	@test -f $(DEMO_STATE)/gradebook.db || { echo "no graded demo class in $(DEMO_STATE): run make demo first"; exit 1; }
	@echo "the demo's class: open /formgrader in the lab's address (Nbgrader > Formgrader)"
	$(call LAB,ATTENTION_COURSE_STATE=$(DEMO_STATE),)

# axe-core, which the accessibility tests inject into pages: the version
# tests/accessibility/package-lock.json pins, from npm (.ci/run installs npm; without it those tests
# are skipped, and fail in CI).
AXE := tests/accessibility/node_modules/axe-core/axe.min.js
$(AXE): tests/accessibility/package-lock.json
	cd tests/accessibility && npm ci --no-audit --no-fund --silent
	@touch $@

axe:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(AXE); \
	else echo "note: npm is not installed: the accessibility tests will be skipped."; fi

# One worker more than the machine has cores: much of the suite waits on other processes (kernels
# starting, Chromium, pip, the hub), not on the CPU. TEST_JOBS=N sets the number. One BLAS and
# OpenMP thread in each, as in the grader's kernels: with every core busy, a second thread only
# spins (about 7% of the suite's CPU time, measured).
# A worker that crashes fails the test it was running and is not replaced: pytest-xdist 3.8
# replacing a crashed worker under --dist loadgroup once left the run waiting for ever.
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test: $(DEV_STAMP) axe
	@$(call COMPILE,tests)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadgroup --max-worker-restart=0 --durations=15

# The inner loop's tier (a few minutes): the engine's floors and types, every suite against its
# catalogue (mutants lose points, alternatives keep them), the wire, and the notebooks' structure.
# No notebook is run, no class graded: make test does that.
CHECK := tests/test_engine_design.py tests/assignments/test_suites.py tests/engine/test_suite.py \
	tests/engine/test_testing.py tests/engine/test_standalone.py tests/engine/test_wire.py \
	tests/engine/test_catalogue.py tests/assignments/test_notebooks.py
check: $(DEV_STAMP)
	@$(call COMPILE,tests)
	$(BIN)/python -m pytest -n 2 -m "not slow" -q $(CHECK)

release: $(STAMP)
	$(BIN)/python -m autograder release $(ASSIGNMENTS)

# The seed sweep of every notebook's claims (tests/claims/__init__.py): seeds 0 to 9, or the ones
# CLAIM_SEEDS names (make claims CLAIM_SEEDS=10-29). make test checks two seeds; this checks them all,
# and makes each notebook's optional runs (LONGER_RUN = True), which make test leaves off.
claims: $(DEV_STAMP)
	CLAIM_SWEEP=1 $(BIN)/python -m pytest -n 2 -p no:randomly tests/assignments/test_claims.py -m claim_sweep

# The grading engine as a distribution of its own (packaging/engine/): the wheel another course
# installs, without this course's helpers, suites or tools (docs/authoring.md).
ENGINE_DIST ?= dist
engine-wheel: $(STAMP)
	$(BIN)/python packaging/engine/build.py $(ENGINE_DIST)

bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m autograder.tools.bench $(BENCH_ARGS)
	$(MAKE) --no-print-directory claims

lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable --exclude attention-course | sed '1i # Exact versions the course is tested with (CI, make lab, make test). Regenerate with `make lock`.' > requirements.lock

clean:
	rm -rf .course demo-output bench-output
