"""An adapter whose calls wait for the next batch round instead of going out one by one.

Why an adapter: a ``Run`` then drives its tool loop exactly as it does live (the same continuation
rules, verbatim opaque items, tools, retries, usage and cost); only ``_open`` differs. The request
the model's own adapter builds becomes one line of the round; the line's result body goes through
the adapter's own assembler as a non-streaming answer would. Nothing here keeps a body after the
call: the continuation stays in the run, in this process's memory.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from agentlab.adapters.base import Adapter
from agentlab.adapters.batch_api import BatchAPI, PendingLine
from agentlab.assembly.assembler import WireCall, assemble
from agentlab.errors import AgentlabError, ConfigError
from agentlab.neutral.events import AdapterEvent, ResponseCompletedEvent
from agentlab.neutral.request import ModelRequest
from agentlab.sweeps.batch.rounds import RoundQueue

__all__ = ["BatchedAdapter", "custom_id"]


def custom_id(request: ModelRequest) -> str:
    """``<run id>_<step>``: unique within a round (one call per run), within every provider's pattern."""
    o = request.origin
    if o is None:
        raise ConfigError("a batched call needs its run's origin (run id and step)")
    return f"{o.run_id}_{o.step}"


async def _nothing() -> None:
    """A batch line's answer holds no open connection."""


def _no_read_errors(exc: BaseException, request_id: str | None) -> AgentlabError:  # pragma: no cover
    raise exc  # reading an in-memory body cannot fail with a transport error


class BatchedAdapter:
    """Wraps a model's adapter: same provider, model and request building; answers come by round."""

    def __init__(self, inner: Adapter, api: BatchAPI, queue: RoundQueue) -> None:
        build = getattr(inner, "build", None)
        if not callable(build):
            raise ConfigError(f"{inner.provider}: its adapter cannot build a request without sending it")
        self.inner = inner
        self._build = build
        self._assembler = api.assembler()
        self.queue = queue
        self.provider = inner.provider
        self.api = inner.api
        self.model = inner.model
        self.base_url = inner.base_url
        self.max_retries = 0  # a failed line is retried by the run, in the next round

    def __repr__(self) -> str:
        return f"<BatchedAdapter {self.provider}:{self.model}>"

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """The call as a non-streaming one (a batch line answers whole), priced at batch rates."""
        return self._events(request.model_copy(update={"stream": False}))

    async def _events(self, request: ModelRequest) -> AsyncGenerator[AdapterEvent, None]:
        async for ev in assemble(request, self._build, self._open, self._assembler):
            if isinstance(ev, ResponseCompletedEvent):  # priced at the provider's batch rates
                resp = ev.response.model_copy(update={"pricing_tier": "batch"})
                ev = ev.model_copy(update={"response": resp})
            yield ev

    async def _open(self, built: Any, request: ModelRequest) -> WireCall:
        outcome = await self.queue.call(PendingLine(custom_id(request), built))
        if outcome.error is not None:
            raise outcome.error
        body = outcome.body or b""

        async def read() -> bytes:
            return body

        return WireCall(
            request_id=outcome.request_id,
            chunks=None,
            read=read,
            close=_nothing,
            errors=(),
            translate=_no_read_errors,
        )

    async def aclose(self) -> None:
        """The sweep closes the inner adapter it built."""
