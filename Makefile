# Two commands do everything (see README): `make demo` and `make test`.
# Each creates .venv from the repo's own files when it is missing or stale.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m agentlab demo

test: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest
	# the notebooks, re-executed; only cells marked NBVAL_CHECK_OUTPUT must match their saved output
	env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u AGENTLAB_OPENAI_MODEL -u AGENTLAB_ANTHROPIC_MODEL -u GEMINI_API_KEY -u AGENTLAB_GOOGLE_MODEL -u AGENTLAB_OPENAI_SMALL_MODEL -u DEEPSEEK_API_KEY -u AGENTLAB_DEEPSEEK_MODEL -u OPENROUTER_API_KEY -u AGENTLAB_OPENROUTER_MODEL $(BIN)/python -m pytest --nbval-lax --nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info
