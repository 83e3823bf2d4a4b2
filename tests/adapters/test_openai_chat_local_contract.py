"""The shared adapter contract (``test_contract.py``), run on the local Chat Completions dialects.

The scenarios are the shared suite's, collected here with this module's ``case`` fixture (as
``tests/providers/test_toy.py`` does): vLLM on ``sim-local`` (``reasoning_content``) and Ollama on
``sim-local-reasoning`` (the ``reasoning`` field). One scenario differs on purpose, and says why:
local servers report no ``reasoning_tokens``, so the usage scenario asserts "unknown, never 0"
instead of "reported".
"""

from __future__ import annotations

import pytest

from tests.adapters.contract import AdapterCase, _chat, _chat_assembler, _chat_tool_call, collect, completed
from tests.adapters.test_contract import *  # noqa: F403 - the shared contract scenarios, collected here
from tests.adapters.test_contract import ask

LOCAL_CASES = {
    name: AdapterCase(
        name,
        model,
        _chat(cls, "local"),
        provider=name,
        assembler=_chat_assembler(name, model),
        tool_call_wire=_chat_tool_call,
        unknown_event_type="sim_unknown",
    )
    for name, cls, model in (
        ("vllm", "VLLMAdapter", "sim-local"),
        ("ollama", "OllamaAdapter", "sim-local-reasoning"),
    )
}


@pytest.fixture(params=sorted(LOCAL_CASES))  # type: ignore[no-redef]  # overrides the shared suite's `case`
def case(request: pytest.FixtureRequest) -> AdapterCase:
    return LOCAL_CASES[request.param]


async def test_usage_is_populated(case: AdapterCase) -> None:  # type: ignore[no-redef]  # see module docstring
    adapter, _ = case.adapter()
    usage = completed(await collect(adapter, ask(case, "What is 12 * (3 + 4)?"))).usage
    assert usage.input_tokens and usage.input_tokens > 0
    assert usage.output_tokens and usage.output_tokens > 0
    assert usage.reasoning_tokens is None and usage.reasoning_source == "unknown"  # never 0
