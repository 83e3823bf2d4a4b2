# Two commands do everything (see README): `make demo` and `make test`.
# Each creates .venv from the repo's own files when it is missing or stale.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# MLflow (the `mlflow` extra) pins pyarrow<26 and brings scikit-learn/scipy, so the tests that need it
# run in a venv of their own, built the same way; the rest of the suite never sees MLflow.
MLFLOW_VENV := .venv-mlflow
MLFLOW_STAMP := $(MLFLOW_VENV)/.installed
MLFLOW_TESTS := $(wildcard tests/tracking/test_mlflow_*.py)

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

$(MLFLOW_STAMP): pyproject.toml
	test -x $(MLFLOW_VENV)/bin/python || $(PY) -m venv $(MLFLOW_VENV)
	$(MLFLOW_VENV)/bin/python -m pip install -q --upgrade pip
	$(MLFLOW_VENV)/bin/python -m pip install -q -e '.[dev,mlflow]'
	touch $(MLFLOW_STAMP)

demo: $(STAMP)
	$(BIN)/python -m agentlab demo

test: $(STAMP) $(MLFLOW_STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest $(addprefix --ignore=,$(MLFLOW_TESTS))
	# sweeps and comparisons logged to a real MLflow store and server (README "Experiment tracking")
	$(MLFLOW_VENV)/bin/python -m pytest $(MLFLOW_TESTS)
	# the notebooks, re-executed; only cells marked NBVAL_CHECK_OUTPUT must match their saved output
	env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u AGENTLAB_OPENAI_MODEL -u AGENTLAB_ANTHROPIC_MODEL -u GEMINI_API_KEY -u AGENTLAB_GOOGLE_MODEL -u AGENTLAB_OPENAI_SMALL_MODEL -u DEEPSEEK_API_KEY -u AGENTLAB_DEEPSEEK_MODEL -u OPENROUTER_API_KEY -u AGENTLAB_OPENROUTER_MODEL $(BIN)/python -m pytest --nbval-lax --nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(MLFLOW_VENV) build *.egg-info
