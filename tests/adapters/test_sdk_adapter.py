"""The shared adapter base (``agentlab.adapters.sdk_adapter``): the client it makes, and what it closes."""

from __future__ import annotations

from typing import Any

import pytest

from agentlab.adapters.base import create_adapter
from agentlab.adapters.registry import ProviderSpec, register_provider, unregister_provider
from agentlab.adapters.sdk_adapter import SDKAdapter
from agentlab.errors import ConfigError

SIMULATED = {
    "openai:sim-reasoner": lambda a: a.client.is_closed(),
    "anthropic:sim-thinker": lambda a: a.client.is_closed(),
    "google:sim-gemini": lambda a: a._api._async_httpx_client.is_closed,
    "deepseek:sim-deepseek": lambda a: a.client.is_closed(),
    "vllm:sim-local": lambda a: a.client.is_closed(),
}


@pytest.mark.parametrize("model", sorted(SIMULATED))
async def test_an_adapter_closes_the_simulator_client_it_made(model: str) -> None:
    adapter: Any = create_adapter(model)
    assert isinstance(adapter, SDKAdapter) and not SIMULATED[model](adapter)
    await adapter.aclose()
    assert SIMULATED[model](adapter)


class _Client:
    base_url = "http://nowhere.invalid"

    async def close(self) -> None:
        raise AssertionError("never made, never closed")


class _NoSimAdapter(SDKAdapter[_Client]):
    provider = "nosim"
    api = "none"
    client_type = _Client


async def test_a_provider_without_a_simulator_refuses_an_in_process_sim_name() -> None:
    register_provider(
        ProviderSpec(
            name="nosim", api="none", label="NoSim", adapter=f"{__name__}:_NoSimAdapter", usage="x:y"
        )
    )
    try:
        with pytest.raises(ConfigError, match="no in-process simulator serves 'sim-x'"):
            _NoSimAdapter("sim-x")
        adapter = _NoSimAdapter("sim-x", client=_Client())
        assert adapter.base_url == "http://nowhere.invalid"
        await adapter.aclose()  # the injected client is the caller's: not closed
    finally:
        unregister_provider("nosim")
