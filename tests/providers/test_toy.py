"""The toy provider (``tests/providers/toy``), added by following README's "How to add a provider".

It joins through the public mechanism only (``agentlab.register_provider``), runs the shared adapter
contract unchanged (the scenarios of ``tests/adapters/test_contract.py``, collected here with a
``case`` fixture that serves the toy), and runs end to end with a tool call via ``agentlab.run``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import agentlab as al
from agentlab.adapters.registry import ProviderSpec, unregister_provider
from agentlab.assembly.assembler import Assembler
from tests.adapters.contract import AdapterCase
from tests.adapters.test_contract import *  # noqa: F403 - the shared contract scenarios, collected here
from tests.providers.toy.provider import SPEC
from tests.providers.toy.server import ToyServer

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}


def _build(server: ToyServer, max_retries: int, model: str) -> Any:
    from tests.providers.toy._adapter import ToyAdapter

    return ToyAdapter(model, client=server, max_retries=max_retries)


def _assembler() -> Assembler:
    from tests.providers.toy._stream import ToyAssembler

    return ToyAssembler(model="toy-1", base_url="toy://local")


def _tool_call_wire(arguments: str) -> list[str]:
    """The toy's events (SSE ``data`` payloads) of one answer holding one tool call."""
    call = {"type": "call", "id": "call_1", "name": "get_weather", "arguments": arguments}
    done = {"type": "done", "id": "toy_resp_1", "stop": "tool_use", "usage": {"in": 5, "out": 3}}
    return [json.dumps(call), json.dumps(done)]


TOY = AdapterCase(
    "toy",
    "toy-1",
    _build,
    serve=ToyServer,
    answer=ToyServer.answering,
    assembler=_assembler,
    tool_call_wire=_tool_call_wire,
    unknown_event_type="novel_event",
)


@pytest.fixture
def toy() -> Iterator[ProviderSpec]:
    """The toy registered for one test only (the registry is process-wide)."""
    al.register_provider(SPEC)
    yield SPEC
    unregister_provider(SPEC.name)


@pytest.fixture
def priced_toy(toy: ProviderSpec) -> Iterator[ProviderSpec]:
    """The toy registered and priced (an unpriced model warns, and warnings are errors here)."""
    price = {"input": 1.0, "cache_read": 0.1, "cache_write_5m": 1.0, "cache_write_1h": 1.0, "output": 2.0}
    with al.prices_override({"toy:toy-1": price}):
        yield toy


@pytest.fixture  # type: ignore[no-redef]  # deliberately overrides the shared suite's `case` fixture
def case(toy: ProviderSpec) -> AdapterCase:
    """The shared scenarios' adapter case, here: the toy (replaces the suite's built-in cases)."""
    return TOY


def test_the_toy_is_unknown_until_registered() -> None:
    with pytest.raises(al.UnknownModelError, match="unknown provider 'toy'"):
        al.parse_model("toy:toy-1")


def test_run_end_to_end_with_a_tool_call(priced_toy: ProviderSpec) -> None:
    calls: list[str] = []

    @al.tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return TEMPS[city]

    result = al.run("toy:toy-1", "Is it warmer in Paris or Rome?", tools=[get_weather])
    result.raise_for_status()
    assert sorted(calls) == ["Paris", "Rome"]  # one step's two calls run side by side: no order
    assert result.provider == "toy" and result.steps == 2 and "Warmest: Rome" in (result.output or "")
    assert [c.stop_reason for c in result.calls] == ["tool_use", "end_turn"]
    assert result.usage.calls == 2 and result.usage.cost.known
    assert result.usage.tokens.reasoning_tokens and result.usage.tokens.reasoning_source == "reported"


def test_drop_is_allowed_and_the_continuity_arms_include_the_toy(priced_toy: ProviderSpec) -> None:
    arms = {s.name: s.providers for s in al.continuity_settings()}
    from tests.adapters.test_registry import DROP, THINKING_OFF  # the built-ins' arms

    assert arms["drop"] == (*DROP, "toy") and arms["thinking_off"] == THINKING_OFF
    result = al.run("toy:toy-1", "What is 12 * (3 + 4)?", continuation_policy="drop")
    assert "84" in (result.output or "")
