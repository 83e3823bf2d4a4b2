"""A ``sim-*`` model with an explicit ``base_url`` talks to the simulator served there, with the key given.

An outside user serves the simulator on loopback (``python -m agentlab.sim serve``) and points
agentlab at it: ``create_adapter("openai:sim-reasoner", base_url=..., api_key=...)``. The requests
must reach that server, carrying that key, for every provider that has a simulator; without
``base_url`` the in-process simulator is still the one used. The server here runs in a thread of
this process (the same ``serve`` the command line runs), so the test can see what reaches it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import agentlab as al
import agentlab.sim.server as sim_server
from agentlab.adapters.base import create_adapter
from agentlab.adapters.registry import get_provider, provider_names
from agentlab.errors import ProviderAPIError
from agentlab.sim.transport import SimTransport
from tests.support.loopback import serving

KEY = "sk-loopback-4c1d"

# Where each provider's SDK takes the simulator's root (as ``python -m agentlab.sim serve`` prints).
BASE_PATH = {
    "openai": "/v1",
    "anthropic": "",
    "anthropic_bedrock": "",
    "anthropic_vertex": "/v1",
    "google": "",
    "deepseek": "",
    "openrouter": "/api/v1",
    "moonshot": "/v1",
    "zai": "/api/paas/v4",
    "xai_chat": "/v1",
    "vllm": "/v1",
    "llamacpp": "/v1",
    "ollama": "/v1",
    "chat": "/v1",
    **dict.fromkeys(("xai", "deepseek_responses", "azure", "mantle"), "/v1"),
    **dict.fromkeys(("vllm_responses", "ollama_responses", "lmstudio_responses"), "/v1"),
    "bedrock": "",
}


def _simulated() -> list[str]:
    out = []
    for name in provider_names():
        names = get_provider(name).simulated_model_names()
        if names:
            out.append(f"{name}:{sorted(names)[0]}")
    return out


MODELS = _simulated()


class _Server:
    """``agentlab.sim.server.serve`` on 127.0.0.1 in a thread, recording what reaches it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.url = ""
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),))

    async def _main(self) -> None:
        self._stop = asyncio.Event()

        def ready(port: int) -> None:
            self.url = f"http://127.0.0.1:{port}"
            self._ready.set()

        await sim_server.serve(0, on_ready=ready, stop=self._stop)

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10), "the loopback simulator did not start"

    def close(self) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    srv = _Server()
    real = sim_server.handle  # type: ignore[attr-defined]  # the name serve() calls

    def record(sim: Any, method: str, target: str, headers: dict[str, str], body: bytes) -> Any:
        srv.seen.append((method, target, dict(headers)))
        return real(sim, method, target, headers, body)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sim_server, "handle", record)
        srv.start()
        try:
            yield srv
        finally:
            srv.close()


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request the in-process simulator answers."""
    seen: list[str] = []
    respond = SimTransport._respond

    def record(self: SimTransport, request: Any, body: bytes) -> Any:
        seen.append(str(request.url))
        return respond(self, request, body)

    monkeypatch.setattr(SimTransport, "_respond", record)
    return seen


def test_every_simulated_provider_has_a_base_path() -> None:
    assert {m.partition(":")[0] for m in MODELS} <= set(BASE_PATH)
    assert len(MODELS) >= 6


@pytest.mark.parametrize("model", MODELS)
async def test_a_sim_model_with_base_url_talks_to_that_server_with_that_key(
    model: str, server: _Server, in_process: list[str]
) -> None:
    provider = model.partition(":")[0]
    base = server.url + BASE_PATH[provider]
    before = len(server.seen)
    adapter = create_adapter(model, base_url=base, api_key=KEY)
    try:
        assert adapter.base_url is not None and adapter.base_url.startswith(server.url)
        result = await al.Run(model, "What is 2+2?", adapter=adapter).arun()
    finally:
        await adapter.aclose()
    assert result.status == "completed" and result.output
    posts = [(t, h) for m, t, h in server.seen[before:] if m == "POST"]
    assert posts, "no request reached the loopback server"
    for target, headers in posts:
        assert target.startswith(BASE_PATH[provider] + "/"), target
        assert any(KEY in v for v in headers.values()), f"the given key was not sent: {sorted(headers)}"
    assert in_process == [], "the in-process simulator was used instead"


@pytest.mark.parametrize("model", MODELS)
async def test_without_base_url_the_in_process_simulator_is_used(
    model: str, server: _Server, in_process: list[str]
) -> None:
    before = len(server.seen)
    adapter = create_adapter(model, api_key=KEY)
    try:
        result = await al.Run(model, "What is 2+2?", adapter=adapter).arun()
    finally:
        await adapter.aclose()
    assert result.status == "completed"
    assert in_process, "the in-process simulator saw nothing"
    assert len(server.seen) == before


async def test_the_served_simulator_of_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m agentlab.sim serve`` in its own process: a run reaches it, and only it.

    The server's default fault (``--fault``) marks its answers: the call fails with its 529
    (overloaded), which the in-process simulator would not answer.
    """
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with serving("--fault", "529") as url:
        adapter = create_adapter("anthropic:sim-thinker", base_url=url, max_retries=0)
        try:
            with pytest.raises(ProviderAPIError) as info:
                await al.Run("anthropic:sim-thinker", "What is 2+2?", adapter=adapter, retries=0).arun()
        finally:
            await adapter.aclose()
    assert info.value.status == 529
