"""The adapter contract and model-string routing.

An adapter has one required method, ``stream(request)``: an async iterator of ``AdapterEvent``s that
ends with exactly one ``ResponseCompletedEvent`` (or raises an ``agentlab.errors.ProviderError``).
Non-streaming calls go through the same method (``request.stream=False``) and the same
post-processing. Every event of a call is built carrying the ``run_id``/``step`` of
``request.origin`` (events are frozen; the shared assembler base, :mod:`agentlab.assembly`, does it);
an adapter that ignores the origin has its events copied with it by the run, never mutated.
Adapters translate SDK exceptions into agentlab's error tree in one place and own retries (bounded,
honouring ``retry-after``).

Routing happens once per run: ``parse_model("anthropic:claude-sonnet-4-5")``. A model name starting
with ``sim-`` routes to the in-process simulator behind the real SDK; a real name never does.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agentlab.adapters._simulated import is_simulated, simulated_base
from agentlab.errors import ModelBehaviorError, UnknownModelError, detach_frames
from agentlab.neutral._inputs import did_you_mean
from agentlab.neutral.events import AdapterEvent, ModelResponse, ResponseCompletedEvent
from agentlab.neutral.request import ModelRequest

__all__ = [
    "PROVIDERS",
    "Adapter",
    "ModelRef",
    "check_simulated",
    "complete",
    "create_adapter",
    "parse_model",
    "retry_after_seconds",
]

ProviderName = Literal["openai", "anthropic"]

# provider -> (API surface, "module:Class"), imported on first use only.
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("responses", "agentlab.adapters.openai_responses:OpenAIResponsesAdapter"),
    "anthropic": ("messages", "agentlab.adapters.anthropic_messages:AnthropicMessagesAdapter"),
}


class ModelRef(BaseModel):
    """A routed model: provider, API surface and the provider's model name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: ProviderName
    api: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_model(spec: str | ModelRef) -> ModelRef:
    """``"provider:model"`` -> ``ModelRef``; raises ``UnknownModelError`` with the fix."""
    if isinstance(spec, ModelRef):
        return spec
    if not isinstance(spec, str) or ":" not in spec:
        raise UnknownModelError(
            f"model {spec!r} must be 'provider:model', e.g. 'openai:sim-reasoner', "
            f"'anthropic:sim-thinker', 'openai:gpt-5.1' or 'anthropic:claude-sonnet-4-5'"
        )
    provider, _, model = spec.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if provider not in PROVIDERS:
        hint = did_you_mean(provider, PROVIDERS)
        raise UnknownModelError(
            f"unknown provider {provider!r} in {spec!r}{hint}; known: {sorted(PROVIDERS)}"
        )
    if not model:
        raise UnknownModelError(f"model name missing in {spec!r}")
    return ModelRef(provider=provider, api=PROVIDERS[provider][0], model=model)  # type: ignore[arg-type]


def check_simulated(ref: ModelRef) -> None:
    """A ``sim-*`` name the simulator does not serve fails here, with the nearest name, not as its 404.

    Only for runs that will reach the simulator (no injected adapter): imports ``agentlab.sim``.
    """
    if not is_simulated(ref.model):
        return
    from agentlab.sim import ANTHROPIC_MODELS, OPENAI_MODELS

    known = {"openai": OPENAI_MODELS, "anthropic": ANTHROPIC_MODELS}[ref.provider]
    base = simulated_base(ref.model)  # "sim-reasoner+fault=429x1": options after "+"
    if base not in known:
        names = [f"{ref.provider}:{m}" for m in known]
        asked = f"{ref.provider}:{base}"
        raise UnknownModelError(
            f"the simulator has no model {asked!r}{did_you_mean(asked, names)}; "
            f"simulated {ref.provider} models: {', '.join(names)}"
        )


@runtime_checkable
class Adapter(Protocol):
    """What a run needs from a provider adapter."""

    provider: str
    api: str
    model: str
    base_url: str | None
    max_retries: int
    """How often the adapter's SDK retries an HTTP status error itself (0: it does not).

    The run does not retry status errors again when this is above 0 (the attempts would multiply);
    it retries them itself when it is 0. An adapter without the attribute counts as 0.
    """

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield display events, then one ``ResponseCompletedEvent``."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP client if the adapter created it."""
        ...


def create_adapter(spec: str | ModelRef, **options: Any) -> Adapter:
    """Build the adapter for a model string; imports its SDK on first use."""
    ref = parse_model(spec)
    _, target = PROVIDERS[ref.provider]
    module_name, _, cls_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    adapter: Adapter = cls(ref.model, **options)
    return adapter


async def complete(adapter: Adapter, request: ModelRequest) -> ModelResponse:
    """Consume a stream to its ``ModelResponse`` (for callers that do not display deltas).

    Like a run, this is a boundary: an error leaving it carries no locals of the adapter's frames.
    """
    final: ModelResponse | None = None
    event: AdapterEvent | None = None
    try:
        async for event in adapter.stream(request):
            if isinstance(event, ResponseCompletedEvent):
                final = event.response
    except BaseException as e:
        final = event = None  # this frame stays on the traceback: it keeps no response or delta
        detach_frames(e)
        raise
    if final is None:
        raise ModelBehaviorError(f"{adapter.provider} adapter ended without a completed response")
    return final


def retry_after_seconds(headers: Any) -> float | None:
    """The server's retry hint in seconds: ``retry-after-ms`` first, then ``retry-after`` (seconds form).

    Both providers send these headers on 429/529/5xx answers; an HTTP-date ``retry-after`` is ignored.
    """
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) / scale
        except (TypeError, ValueError):
            continue
    return None
