# Two commands do everything (see README): `make demo` and `make test`.
# Each creates .venv from the committed lock (locks/dev.txt: every package, pinned, with hashes) when it
# is missing or older than the lock; nothing is resolved at install time. `make lock` refreshes the
# locks; `make test-latest` runs the suite on the newest releases pyproject allows and reports drift.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
STAMP := $(VENV)/.installed
# MLflow (the `mlflow` extra) pins pyarrow<26 and brings scikit-learn/scipy, so the tests that need it
# run in a venv of their own, built the same way from its own lock; the rest of the suite never sees MLflow.
MLFLOW_VENV := .venv-mlflow
MLFLOW_STAMP := $(MLFLOW_VENV)/.installed
MLFLOW_TESTS := $(wildcard tests/tracking/test_mlflow_*.py)
# Arize Phoenix (tests/telemetry/test_phoenix.py starts it on loopback): a web server with its own
# OpenTelemetry SDK, in its own venv from its own lock.
PHOENIX_VENV := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed
# The peers `python -m bench` measures side by side (the `bench` extra), in their own venv.
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed
LATEST_VENV := .venv-latest
# Interpreter the locks are made for (CPython on Linux x86_64, as on every machine of this project).
LOCK_PY := 3.11
COMPILE = $(UV) pip compile -q --generate-hashes --python-version $(LOCK_PY) --custom-compile-command "make lock"
# How nbval runs the notebooks: no provider keys, so every notebook runs on the simulated providers.
NO_KEYS := env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u AGENTLAB_OPENAI_MODEL -u AGENTLAB_ANTHROPIC_MODEL \
	-u GEMINI_API_KEY -u AGENTLAB_GOOGLE_MODEL -u AGENTLAB_OPENAI_SMALL_MODEL -u DEEPSEEK_API_KEY \
	-u AGENTLAB_DEEPSEEK_MODEL -u OPENROUTER_API_KEY -u AGENTLAB_OPENROUTER_MODEL
NBVAL := --nbval-lax --nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks

.PHONY: demo test lint bench lock test-latest phoenix docs docs-serve notebooks clean

# venv DIR from LOCK: uv itself comes from the lock too (pip checks its hashes), then uv makes the venv
# exactly the lock (sync removes anything else) and adds agentlab, editable, without build isolation.
define venv_from_lock
	test -x $(1)/bin/python || $(PY) -m venv $(1)
	awk '/^uv==/{p=1;print;next} p&&/^ /{print;next} {p=0}' $(2) > $(1)/uv-lock.txt
	$(1)/bin/python -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r $(1)/uv-lock.txt
	$(1)/bin/uv pip sync -q --python $(1)/bin/python --require-hashes $(2)
	$(if $(3),$(1)/bin/uv pip install -q --python $(1)/bin/python --no-deps --no-build-isolation -e .)
	touch $(1)/.installed
endef

$(STAMP): pyproject.toml locks/dev.txt
	$(call venv_from_lock,$(VENV),locks/dev.txt,editable)

$(MLFLOW_STAMP): pyproject.toml locks/mlflow.txt locks/dev.txt
	$(call venv_from_lock,$(MLFLOW_VENV),locks/mlflow.txt,editable)

$(PHOENIX_STAMP): locks/phoenix.txt locks/dev.txt
	$(call venv_from_lock,$(PHOENIX_VENV),locks/phoenix.txt,)

$(BENCH_STAMP): pyproject.toml locks/bench.txt locks/dev.txt
	$(call venv_from_lock,$(BENCH_VENV),locks/bench.txt,editable)

phoenix: $(PHOENIX_STAMP)

demo: $(STAMP)
	$(BIN)/python -m agentlab demo

lint: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy

# What runs beside the main suite (see `test`), in this order, each whatever the one before did: mypy; the
# notebook-layer and documentation tests (tests/notebook: kernels, JupyterLab and Chromium; tests/docs:
# the site built strictly and every example run; together about a third of the suite's time, so the two
# halves take about as long); sweeps and comparisons logged to a real MLflow store and
# server (docs: tracking); the MLflow page's examples (the extra is only in .venv-mlflow); the notebooks,
# re-executed (only cells marked NBVAL_CHECK_OUTPUT must match their saved output). It fails if any failed.
SIDE_LOG := out/make-test-beside.log
BESIDE_TESTS := tests/notebook tests/docs
define test_beside
	rc=0; \
	$(BIN)/python -m mypy || rc=1; \
	$(BIN)/python -m pytest $(BESIDE_TESTS) || rc=1; \
	$(MLFLOW_VENV)/bin/python -m pytest $(MLFLOW_TESTS) || rc=1; \
	$(MLFLOW_VENV)/bin/python -m pytest tests/docs/test_examples.py -k export || rc=1; \
	$(NO_KEYS) $(BIN)/python -m pytest $(NBVAL) || rc=1; \
	exit $$rc
endef

# ruff first (seconds); then the rest of the suite on one core while test_beside runs on the other (most
# of the suite's time is one process; these are separate processes that share no port or file with it:
# every test writes under its own temp dir). test_beside's output goes
# to SIDE_LOG and is printed when both ends; either failing fails `make test`.
test: $(STAMP) $(MLFLOW_STAMP)
	$(BIN)/python -m ruff check .
	@mkdir -p $(dir $(SIDE_LOG))
	@echo "beside the suite (output below when it ends): mypy, tests/notebook and tests/docs, MLflow tests, MLflow page examples, notebooks"
	@( $(test_beside) ) > $(SIDE_LOG) 2>&1 & beside=$$!; \
	$(BIN)/python -m pytest $(addprefix --ignore=,$(MLFLOW_TESTS) $(BESIDE_TESTS)); suite=$$?; \
	wait $$beside; rc=$$?; \
	echo "===== beside the suite: mypy, tests/notebook and tests/docs, MLflow tests, MLflow page examples, notebooks (exit $$rc) ====="; \
	cat $(SIDE_LOG); \
	test $$suite -eq 0 && test $$rc -eq 0

# Re-execute the shipped notebooks from the current code (simulated providers, fresh kernels), write
# them back whole, and scan them for stale outputs (machine paths, widget reprs, old formats).
notebooks: $(STAMP)
	$(NO_KEYS) $(BIN)/python -m agentlab.notebook.refresh notebooks/

# The documentation site (mkdocs.yml) into out/site, strictly; docs-serve serves it on loopback.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict -a 127.0.0.1:8000

bench: $(BENCH_STAMP)
	$(BENCH_VENV)/bin/python -m bench

# Refresh every lock to the newest releases pyproject allows (P=name refreshes that package only).
lock: $(STAMP)
	$(COMPILE) $(if $(P),--upgrade-package $(P),--upgrade) pyproject.toml locks/tools.in --extra dev -o locks/dev.txt
	$(COMPILE) $(if $(P),--upgrade-package $(P),--upgrade) pyproject.toml locks/tools.in --extra dev --extra mlflow -o locks/mlflow.txt
	$(COMPILE) $(if $(P),--upgrade-package $(P),--upgrade) pyproject.toml locks/tools.in --extra dev --extra bench -o locks/bench.txt
	$(COMPILE) $(if $(P),,--upgrade) locks/phoenix.in -o locks/phoenix.txt

# Not part of `make test`: the whole suite on the newest releases pyproject allows, in a fresh venv,
# then a drift report (what moved against locks/dev.txt, what broke, and the commands that follow).
test-latest: $(STAMP)
	rm -rf $(LATEST_VENV) && $(UV) venv -q --python $(BIN)/python $(LATEST_VENV)
	$(UV) pip install -q --python $(LATEST_VENV)/bin/python --upgrade -r locks/tools.in -e '.[dev]'
	-$(LATEST_VENV)/bin/python -m pytest -q -p no:cacheprovider -o junit_family=xunit1 $(addprefix --ignore=,$(MLFLOW_TESTS)) \
		--junitxml=$(LATEST_VENV)/suite.xml > $(LATEST_VENV)/suite.log 2>&1
	-$(NO_KEYS) $(LATEST_VENV)/bin/python -m pytest -q -p no:cacheprovider -o junit_family=xunit1 $(NBVAL) \
		--junitxml=$(LATEST_VENV)/notebooks.xml > $(LATEST_VENV)/notebooks.log 2>&1
	$(BIN)/python locks/drift.py --lock locks/dev.txt --python $(LATEST_VENV)/bin/python \
		$(LATEST_VENV)/suite.xml $(LATEST_VENV)/notebooks.xml

clean:
	rm -rf $(VENV) $(MLFLOW_VENV) $(PHOENIX_VENV) $(BENCH_VENV) $(LATEST_VENV) build *.egg-info
