"""The in-process ``httpx2`` transport: the official SDKs talk to the simulator with no sockets.

Why a transport and not a fake client: everything above it (SDK request building, retries, SSE
decoding, typed events) is the real code path, so what passes here passes against the real API.
One :class:`SimTransport` works for sync and async clients; streams are delivered chunk by chunk,
with ``slow`` faults sleeping (``time.sleep`` sync, ``asyncio.sleep`` async) and ``reset`` faults
raising ``httpx2.ReadError`` mid-body.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

from agentlab.sim.app import handle
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Chunk, Reset, Sleep


class _Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    def __init__(self, chunks: list[Chunk], request: httpx2.Request) -> None:
        self._chunks = chunks
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        for c in self._chunks:
            if isinstance(c, Sleep):
                time.sleep(c.seconds)
            elif isinstance(c, Reset):
                raise httpx2.ReadError("Connection reset by peer (simulated)", request=self._request)
            else:
                yield c

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for c in self._chunks:
            if isinstance(c, Sleep):
                await asyncio.sleep(c.seconds)
            elif isinstance(c, Reset):
                raise httpx2.ReadError("Connection reset by peer (simulated)", request=self._request)
            else:
                yield c


class SimTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport answering like OpenAI Responses and Anthropic Messages.

    Options: ``seed`` (ids and obfuscation bytes), ``secret`` (keys for signatures and encrypted
    content), ``retry_after_ms`` (what 429s ask for), ``default_fault`` (a fault spec for requests
    that name none), ``real_models`` (also answer real model names, labelled simulated; see
    :mod:`agentlab.sim.real_models`), ``latency_ms`` (added before every reply), or a shared
    ``simulator``.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        secret: bytes | None = None,
        retry_after_ms: int = 20,
        default_fault: str | None = None,
        real_models: bool = False,
        latency_ms: int = 0,
        simulator: Simulator | None = None,
    ) -> None:
        kw: dict[str, Any] = {
            "seed": seed,
            "retry_after_ms": retry_after_ms,
            "default_fault": default_fault,
            "real_models": real_models,
        }
        if secret is not None:
            kw["secret"] = secret
        self.simulator = simulator or Simulator(**kw)
        self.latency_ms = latency_ms
        self.requests: int = 0

    def __repr__(self) -> str:
        return f"SimTransport(simulator={self.simulator!r}, latency_ms={self.latency_ms})"

    def _respond(self, request: httpx2.Request, body: bytes) -> httpx2.Response:
        self.requests += 1
        status, headers, chunks = handle(
            self.simulator, request.method, request.url.raw_path.decode("ascii"), dict(request.headers), body
        )
        return httpx2.Response(status, headers=headers, stream=_Body(chunks, request), request=request)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Sync clients: read the whole body first (the simulator answers complete requests only).

        ``latency_ms`` sleeps the calling thread, as a slow network would.
        """
        body = request.read()
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        return self._respond(request, body)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Async clients: the same reply, but ``latency_ms`` awaits.

        Other requests on the event loop (parallel runs, a notebook's loop) keep going meanwhile.
        """
        body = await request.aread()
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        return self._respond(request, body)


#: :class:`SimTransport`'s options: what a simulated SDK client's constructor takes for the simulator.
SIM_OPTIONS = ("seed", "secret", "retry_after_ms", "default_fault", "real_models", "latency_ms", "simulator")


def split_options(kw: dict[str, Any]) -> tuple[SimTransport, dict[str, Any]]:
    """Separate simulator options from SDK client kwargs; reuse a given ``transport``.

    One rule for every simulated client (the SDK ones and boto3's): options beside ``transport=``
    would be silently ignored, so they are refused.
    """
    transport = kw.pop("transport", None)
    sim_kw = {k: kw.pop(k) for k in SIM_OPTIONS if k in kw}
    if transport is None:
        transport = SimTransport(**sim_kw)
    elif sim_kw:
        raise TypeError(f"pass simulator options to SimTransport, not beside transport=: {sorted(sim_kw)}")
    return transport, kw
