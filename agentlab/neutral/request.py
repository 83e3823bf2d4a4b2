"""What one model call asks for, in provider-neutral terms.

Adapters translate a ``ModelRequest`` into their provider's wire request. Knobs every provider has
are generic fields; provider-only knobs go into ``provider_options`` under the provider's prefix
(``openai_*``/``anthropic_*``), which is the typed escape hatch: an adapter rejects keys with
another provider's prefix instead of silently ignoring them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentlab.neutral._shapes import ShapedRepr
from agentlab.neutral.events import EventOrigin
from agentlab.neutral.items import PortableItem, ProviderReasoningItem
from agentlab.neutral.output import OutputSpec

__all__ = ["CacheHints", "ModelRequest", "ReasoningSettings", "ToolSpec"]

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReasoningSettings(_Value):
    """How much and how visibly the model reasons.

    ``effort`` maps to OpenAI ``reasoning.effort`` (and Anthropic ``output_config.effort`` where the
    model supports it); ``budget_tokens`` to Anthropic ``thinking.budget_tokens``; ``adaptive`` to
    Anthropic ``thinking.type = "adaptive"``. ``summary`` is OpenAI's reasoning summary detail;
    ``display`` Anthropic's thinking display (``summarized``: thinking text is a summary;
    ``omitted``: empty thinking text, signature only). ``interleaved`` asks for thinking between tool
    calls where the model supports it. ``enabled=False`` turns reasoning off (never done silently).
    """

    enabled: bool = True
    effort: Effort | None = None
    budget_tokens: int | None = Field(default=None, ge=0)
    adaptive: bool = False
    summary: Literal["auto", "concise", "detailed"] | None = "auto"
    display: Literal["summarized", "omitted"] | None = None
    interleaved: bool = False


class CacheHints(_Value):
    """Provider-neutral prompt-cache hints.

    ``key`` is a stable cache key (OpenAI ``prompt_cache_key``; defaults to one derived from the run
    when ``None``). ``system``/``tools``/``history`` say which stable prefix parts are worth caching
    (Anthropic ``cache_control`` breakpoints on the system prompt, the last tool, and the last stable
    message). ``ttl`` is the wished lifetime; adapters map it to what the provider offers.
    """

    enabled: bool = True
    key: str | None = None
    system: bool = True
    tools: bool = True
    history: bool = True
    ttl: Literal["5m", "1h", "24h"] = "5m"


class ToolSpec(_Value):
    """A tool as the model sees it: name, description and a JSON schema for its arguments object."""

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool = True


class ModelRequest(ShapedRepr, BaseModel):
    """One model call: portable history, this loop's continuation, tools and settings.

    ``model`` is the provider's model name (without the ``provider:`` prefix). ``continuation`` holds
    the opaque reasoning items of the *current* tool loop only; it is excluded from every dump. The
    repr shows settings and counts (history, continuation, tools, options), never their content:
    a request is a local of every frame a failing call passes through.
    """

    _repr_shown = frozenset(
        {"model", "reasoning", "max_output_tokens", "temperature", "cache", "tool_choice",
         "parallel_tool_calls", "stream", "output"}
    )  # fmt: skip

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: str
    items: tuple[PortableItem, ...]
    continuation: tuple[ProviderReasoningItem, ...] = Field(default=(), exclude=True)
    tools: tuple[ToolSpec, ...] = ()
    reasoning: ReasoningSettings | None = Field(default_factory=ReasoningSettings)
    max_output_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = None
    cache: CacheHints | None = Field(default_factory=CacheHints)
    tool_choice: Literal["auto", "required", "none"] = "auto"
    parallel_tool_calls: bool = True
    stream: bool = True
    provider_options: dict[str, Any] = Field(default_factory=dict)
    output: OutputSpec | None = None
    """The JSON schema the final answer must follow (``Run(output_type=...)``); None: free text."""
    origin: EventOrigin | None = Field(default=None, exclude=True)
    """The run and step this call belongs to: the adapter builds every event of the call with it
    (events are frozen and born stamped). ``None`` outside a run; not part of the wire request."""

    @field_validator("provider_options")
    @classmethod
    def _prefixed(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not v:
            return v
        from agentlab.adapters.registry import option_prefixes

        prefixes = option_prefixes()
        bad = [k for k in v if not k.startswith(prefixes)]
        if bad:
            raise ValueError(
                f"provider_options keys must start with one of {list(prefixes)}; got {sorted(bad)}"
            )
        return v

    @model_validator(mode="after")
    def _unique_tools(self) -> ModelRequest:
        names = [t.name for t in self.tools]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate tool names: {sorted(dup)}")
        return self

    def options_for(self, provider: str) -> dict[str, Any]:
        """This provider's escape-hatch options, prefix stripped."""
        prefix = f"{provider}_"
        return {k[len(prefix) :]: v for k, v in self.provider_options.items() if k.startswith(prefix)}
