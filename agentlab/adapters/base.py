"""The adapter contract and model-string routing.

An adapter has one required method, ``stream(request)``: an async iterator of ``AdapterEvent``s that
ends with exactly one ``ResponseCompletedEvent`` (or raises an ``agentlab.errors.ProviderError``).
Non-streaming calls go through the same method (``request.stream=False``) and the same
post-processing. Every event of a call is built carrying the ``run_id``/``step`` of
``request.origin`` (events are frozen; the shared assembler base, :mod:`agentlab.assembly`, does it);
an adapter that ignores the origin has its events copied with it by the run, never mutated.
Adapters translate SDK exceptions into agentlab's error tree in one place and own retries (bounded,
honouring ``retry-after``). An adapter that holds server-side state for a run (Gemini's explicit
caches) may also have ``async end_run(run_id)``: the run awaits it on every exit (answer, step limit,
failure, cancel), whether or not it created the adapter.

Routing happens once per run: ``parse_model("anthropic:claude-sonnet-4-5")``, through the provider
registry (``agentlab.adapters.registry``: one ``ProviderSpec`` per provider). A model name starting
with ``sim-`` routes to the in-process simulator behind the real SDK; a real name never does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agentlab.adapters._simulated import is_simulated, option_error, simulated_base
from agentlab.adapters.registry import find_provider, get_provider, provider_names
from agentlab.errors import InvalidSettingsError, UnknownModelError
from agentlab.neutral._inputs import did_you_mean
from agentlab.neutral.events import AdapterEvent
from agentlab.neutral.request import ModelRequest

__all__ = [
    "Adapter",
    "ModelRef",
    "check_simulated",
    "create_adapter",
    "parse_model",
]


class ModelRef(BaseModel):
    """A routed model: provider, API surface and the provider's model name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    """A registered provider's name (``agentlab.adapters.registry``)."""
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
    found = find_provider(provider)
    if found is None:
        known = provider_names()
        hint = did_you_mean(provider, known)
        raise UnknownModelError(f"unknown provider {provider!r} in {spec!r}{hint}; known: {sorted(known)}")
    if not model:
        raise UnknownModelError(f"model name missing in {spec!r}")
    return ModelRef(provider=found.name, api=found.api, model=model)


def check_simulated(ref: ModelRef) -> None:
    """A ``sim-*`` name the simulator does not serve fails here, with the nearest name, not as its 404.

    Only for runs that will reach the simulator (no injected adapter): imports ``agentlab.sim``. The
    provider's spec names the simulator's models for it; a provider without a simulator is not checked.
    """
    if not is_simulated(ref.model):
        return
    known = get_provider(ref.provider).simulated_model_names()
    if known is None:
        return
    base = simulated_base(ref.model)  # "sim-reasoner+fault=429x1": options after "+"
    _check_simulator_options(ref)
    if base not in known:
        names = [f"{ref.provider}:{m}" for m in known]
        asked = f"{ref.provider}:{base}"
        raise UnknownModelError(
            f"the simulator has no model {asked!r}{did_you_mean(asked, names)}; "
            f"simulated {ref.provider} models: {', '.join(names)}"
        )


def _check_simulator_options(ref: ModelRef) -> None:
    """The options after ``+`` (fault, tps, ttft), checked by the simulator's own parsers, here."""
    wrong = option_error(ref.model)
    if wrong is not None:
        raise InvalidSettingsError(f"{ref.provider}:{ref.model}: {wrong}")


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
    adapter: Adapter = get_provider(ref.provider).adapter_class()(ref.model, **options)
    return adapter
