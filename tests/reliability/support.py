"""Shared helpers for the reliability suite.

A request-recording transport around the simulator, adapters built on it (real SDKs, real adapters), tools,
and checks every fault test repeats.

Why our own transport wrapper: every request agentlab sends and every byte the simulator answers
passes through it, so tests can (a) inspect each request body (no foreign opaque item, verbatim
continuity), (b) see each status the strict simulator returned (never a 400 to agentlab), (c) count
response streams opened and never closed (leaked connections), and (d) inject a fault per request
(``x-sim-fault`` header) by request number.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

import agentlab as al
from agentlab.adapters.base import Adapter
from agentlab.neutral.events import ErrorEvent, RunCompletedEvent, RunStartedEvent
from agentlab.neutral.items import ProviderReasoningItem, ToolCallItem, ToolResultItem
from agentlab.records.eventlog import EventLog
from agentlab.sim import SimTransport

PROVIDERS = ("openai", "anthropic")
MODELS = {"openai": "sim-reasoner", "anthropic": "sim-thinker"}
TASK = "Is it warmer in Paris or Rome?"
TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Berlin": "11 C", "Oslo": "-3 C, snow"}

FaultPlan = Callable[[int, str], str | None]
"""(request number from 0, path) -> an ``x-sim-fault`` spec for that request, or None."""


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return TEMPS.get(city, "no data")


@dataclass
class Exchange:
    """One HTTP request agentlab's SDK client sent, and what the simulator answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int | None = None
    response: bytearray = field(default_factory=bytearray)
    opened: bool = False
    closed: bool = False

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def text(self) -> str:
        return self.response.decode("utf-8", "replace")


class _Tee(httpx2.AsyncByteStream):
    """Passes the simulator's body through, recording it; notes whether it was closed."""

    def __init__(self, inner: Any, ex: Exchange) -> None:
        self._inner = inner
        self._ex = ex

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._ex.response.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        self._ex.closed = True
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()


class RecordingTransport(httpx2.AsyncBaseTransport):
    """Wraps a ``SimTransport``; records every exchange; injects per-request faults via ``plan``."""

    def __init__(self, inner: SimTransport | None = None, plan: FaultPlan | None = None) -> None:
        self.inner = inner or SimTransport(retry_after_ms=1)
        self.plan = plan
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        n = len(self.exchanges)
        if self.plan is not None:
            spec = self.plan(n, request.url.path)
            if spec:
                request.headers["x-sim-fault"] = spec
        ex = Exchange(
            request.method, request.url.path, {k.lower(): v for k, v in request.headers.items()}, body
        )
        self.exchanges.append(ex)
        resp = await self.inner.handle_async_request(request)
        ex.status = resp.status_code
        ex.opened = True
        return httpx2.Response(
            resp.status_code, headers=resp.headers, stream=_Tee(resp.stream, ex), request=request
        )

    @property
    def statuses(self) -> list[int | None]:
        return [e.status for e in self.exchanges]

    @property
    def unclosed(self) -> list[Exchange]:
        """Responses whose body stream was opened and never closed (a leaked connection)."""
        return [e for e in self.exchanges if e.opened and not e.closed]

    def bodies(self) -> list[dict[str, Any]]:
        return [e.json for e in self.exchanges]


def make_adapter(
    provider: str,
    transport: RecordingTransport,
    *,
    max_retries: int = 2,
    timeout: float | None = None,
    model: str | None = None,
) -> Adapter:
    """The real adapter for ``provider`` on the real SDK, talking to ``transport``."""
    from agentlab import sim

    model = model or MODELS[provider]
    if provider == "openai":
        from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

        client = sim.openai_client(transport=transport, max_retries=max_retries)
        return OpenAIResponsesAdapter(model, client=client, max_retries=max_retries, timeout=timeout)
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter

    kw: dict[str, Any] = {"max_retries": max_retries}
    if timeout is not None:
        kw["timeout"] = timeout
    return AnthropicMessagesAdapter(model, client=sim.anthropic_client(transport=transport, **kw))


async def close_adapter(adapter: Adapter) -> None:
    client = getattr(adapter, "_client", None)
    if client is not None:
        await client.close()


def opaque_payloads_on_wire(exchanges: Iterable[Exchange]) -> list[str]:
    """Every opaque reasoning payload the simulator handed out, as strings.

    Encrypted_content, signatures, redacted_thinking data, read from the raw response bytes.
    """
    out: list[str] = []
    keys = ("encrypted_content", "signature", "data")
    for ex in exchanges:
        for line in ex.text.splitlines():
            if line.startswith("data:"):
                line = line[5:].strip()
            elif not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            _collect(obj, keys, out)
    return [p for p in dict.fromkeys(out) if len(p) >= 16]


def _collect(obj: Any, keys: tuple[str, ...], out: list[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in keys and isinstance(v, str):
                if k != "data" or obj.get("type") == "redacted_thinking":
                    out.append(v)
            else:
                _collect(v, keys, out)
    elif isinstance(obj, list):
        for v in obj:
            _collect(v, keys, out)


def check_history_consistent(history: Iterable[Any]) -> None:
    """Every tool call in history has exactly one result after it; no result without its call.

    Only portable items are kept (a half-written step would break one of these).
    """
    calls: dict[str, int] = {}
    results: dict[str, int] = {}
    for i, it in enumerate(history):
        assert not isinstance(it, ProviderReasoningItem), "opaque item in portable history"
        if isinstance(it, ToolCallItem):
            assert it.call_id not in calls, f"tool call id {it.call_id} twice in history"
            calls[it.call_id] = i
        elif isinstance(it, ToolResultItem):
            assert it.call_id in calls, f"tool result {it.call_id} without its call"
            assert it.call_id not in results, f"two results for {it.call_id}"
            results[it.call_id] = i
    assert set(calls) == set(results), f"tool calls without results: {set(calls) - set(results)}"


def check_log_ends_with_error(path: Path, run_id: str) -> list[Any]:
    """The JSONL event log is complete up to the fault.

    It starts with run start, ends with the error record and the run end (status failed), and every line
    parses.
    """
    recs = EventLog.read(path)
    mine = [r for r in recs if r.run_id == run_id]
    assert isinstance(mine[0], RunStartedEvent)
    assert isinstance(mine[-2], ErrorEvent), [type(r).__name__ for r in mine]
    assert isinstance(mine[-1], RunCompletedEvent) and mine[-1].status == "failed"
    return mine


def no_live_continuation(run_id: str) -> bool:
    return all(c.run_id != run_id for c in al.live_continuations())


# ---------------------------------------------------------------- real sockets (loopback server)


def socket_adapter(provider: str, url: str, *, timeout: float | None, fault: str | None) -> Any:
    """A real adapter on a real SDK client over a real socket to the loopback simulator."""
    import anthropic
    import httpx2
    import openai

    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    headers = {"x-sim-fault": fault} if fault else {}
    if provider == "openai":
        oc = openai.AsyncOpenAI(
            base_url=f"{url}/v1", api_key="sk-loopback", max_retries=0, http_client=httpx2.AsyncClient()
        )
        return OpenAIResponsesAdapter(
            MODELS[provider], client=oc, max_retries=0, timeout=timeout, extra_headers=headers
        )
    ac = anthropic.AsyncAnthropic(
        base_url=url, api_key="sk-loopback", max_retries=0, timeout=timeout, http_client=httpx2.AsyncClient()
    )
    return AnthropicMessagesAdapter(MODELS[provider], client=ac, extra_headers=headers)


def open_sockets() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            n += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return n
