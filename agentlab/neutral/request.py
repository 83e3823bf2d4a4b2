"""What one model call asks for, in provider-neutral terms.

Adapters translate a ``ModelRequest`` into their provider's wire request. Knobs every provider has
are generic fields; provider-only knobs go into ``provider_options`` under the provider's prefix
(``openai_*``/``anthropic_*``), which is the typed escape hatch: an adapter rejects keys with
another provider's prefix instead of silently ignoring them.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentlab.neutral._shapes import ShapedRepr
from agentlab.neutral.continuity import OpaqueRef
from agentlab.neutral.events import EventOrigin
from agentlab.neutral.items import PortableItem, ProviderReasoningItem
from agentlab.neutral.output import OutputSpec

__all__ = [
    "TOOL_CHOICE_MODES",
    "CacheHints",
    "CallOptions",
    "ModelRequest",
    "ReasoningSettings",
    "ServiceTier",
    "ToolSpec",
    "named_tool",
    "strict_schema_problem",
]

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
ServiceTier = Literal["auto", "default", "flex", "scale", "priority", "fast", "ultrafast", "standard_only"]
"""The union of the providers' ``service_tier`` values; each adapter refuses the ones its API lacks
(OpenAI: auto, default, flex, scale, priority, fast, ultrafast; Anthropic: auto, standard_only)."""
TOOL_CHOICE_MODES = ("auto", "required", "none")
"""The ``tool_choice`` modes besides ``"tool:<name>"`` (one named tool)."""
_TOOL_CHOICE = re.compile(r"^(auto|required|none|tool:[a-zA-Z0-9_-]{1,64})$")


def named_tool(tool_choice: str) -> str | None:
    """The tool a ``"tool:<name>"`` choice forces, or ``None`` for auto/required/none."""
    return tool_choice[5:] if tool_choice.startswith("tool:") else None


class _Value(BaseModel):
    """A frozen settings value, whose switches and counts are strict (``Field(strict=True)``).

    ``True`` is not a budget of 1 nor a temperature of 1.0, and ``"no"`` is not ``True``: pydantic's
    lax mode would take each silently.
    """

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

    enabled: bool = Field(default=True, strict=True)
    effort: Effort | None = None
    budget_tokens: int | None = Field(default=None, ge=0, strict=True)
    adaptive: bool = Field(default=False, strict=True)
    summary: Literal["auto", "concise", "detailed"] | None = "auto"
    display: Literal["summarized", "omitted"] | None = None
    interleaved: bool = Field(default=False, strict=True)


class CacheHints(_Value):
    """Provider-neutral prompt-cache hints.

    ``key`` is a stable cache key (OpenAI ``prompt_cache_key``; defaults to one derived from the run
    when ``None``). ``system``/``tools``/``history`` say which stable prefix parts are worth caching
    (Anthropic ``cache_control`` breakpoints on the system prompt, the last tool, and the last stable
    message). ``ttl`` is the wished lifetime; adapters map it to what the provider offers.

    ``mode``: ``"auto"`` (the default) is each provider's own prompt caching, steered by these hints
    (OpenAI's automatic prefix caching with ``prompt_cache_key``; Anthropic's ``cache_control``
    breakpoints; Gemini's implicit caching). ``"explicit"`` asks for a server-side cache *resource*
    made for the tool loop and deleted when its run ends: Gemini ``cachedContents`` (system
    instruction, tools, tool config and the portable start of the history, for ``ttl`` at most).
    OpenAI and Anthropic have no such resource (OpenAI caches by itself; Anthropic's breakpoints
    already are explicit marks in each request), so there ``"explicit"`` does what ``"auto"`` does.
    """

    enabled: bool = Field(default=True, strict=True)
    key: str | None = None
    system: bool = Field(default=True, strict=True)
    tools: bool = Field(default=True, strict=True)
    history: bool = Field(default=True, strict=True)
    ttl: Literal["5m", "1h", "24h"] = "5m"
    mode: Literal["auto", "explicit"] = "auto"


class ToolSpec(_Value):
    """A tool as the model sees it: name, description and a JSON schema for its arguments object.

    ``strict``: ``None`` (the default) sends strict mode where the schema qualifies (OpenAI: every
    property required, ``additionalProperties: false`` on every object); ``True`` insists on it (a
    schema that does not qualify is refused before sending, naming the tool and the field; Anthropic
    gets ``strict: true``); ``False`` never sends it.
    """

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


def _object_problem(schema: dict[str, Any], at: str) -> str | None:
    props = schema.get("properties") or {}
    if schema.get("additionalProperties", True) is not False:
        return f"{at}: additionalProperties must be false"
    missing = sorted(set(props) - set(schema.get("required") or ()))
    if missing:
        return f"{at}: every property must be required; not required: {missing}"
    for name, sub in props.items():
        if (problem := strict_schema_problem(sub, f"{at}.properties.{name}")) is not None:
            return problem
    return None


def strict_schema_problem(schema: Any, at: str = "parameters") -> str | None:
    """Why a JSON schema does not qualify for OpenAI strict mode (the first field found), or ``None``.

    Strict mode requires every object schema to set ``additionalProperties: false`` and to list every
    property in ``required``; this checks that recursively (properties, items, combinators, $defs).
    Sending ``strict: true`` for a schema that does not qualify gets a 400 from OpenAI, so ``@tool``
    and the adapters check it before sending; Anthropic strict tool use asks the same of objects.
    """
    if isinstance(schema, list):
        for i, s in enumerate(schema):
            if (problem := strict_schema_problem(s, f"{at}[{i}]")) is not None:
                return problem
        return None
    if not isinstance(schema, dict):
        return None
    is_object = schema.get("type") == "object" or "properties" in schema
    if is_object and (problem := _object_problem(schema, at)) is not None:
        return problem
    for key in ("items", "anyOf", "oneOf", "allOf", "prefixItems"):
        if key in schema and (problem := strict_schema_problem(schema[key], f"{at}.{key}")) is not None:
            return problem
    for key in ("$defs", "definitions"):
        defs = schema.get(key)
        if isinstance(defs, dict):
            for name, d in defs.items():
                if (problem := strict_schema_problem(d, f"{at}.{key}.{name}")) is not None:
                    return problem
    return None


class CallOptions(_Value):
    """The per-call request knobs a researcher sets, in one frozen value (``Run(options=...)``).

    The same names are flat keywords of ``Run``/``run``/``compare``/``Session.run`` and fields of a
    sweep ``Setting``; this model is the one place their types and ranges are checked. Provider rules
    (a reasoning model takes no ``temperature``, Anthropic forbids forced tool use with thinking) are
    the adapters' and are checked when the run is built, before anything is sent or logged.

    * ``temperature`` (0-2) / ``top_p`` (0-1): sampling, where the model takes it. OpenAI reasoning
      models take neither; Anthropic's Messages API version 2026-10-21 (what the SDK sends) has no
      sampling fields at all, so they work there only on an adapter pinned to ``2023-06-01``
      (0-1, and with thinking: temperature 1 only, top_p 0.95-1).
    * ``tool_choice``: ``"auto"``, ``"required"`` (some tool), ``"none"`` or ``"tool:<name>"`` (that
      tool). ``reset_tool_choice`` (default on): a forced choice (required / a named tool) applies
      until the model has called a tool, then the loop goes on with ``"auto"`` (otherwise a forced
      loop never reaches a final answer).
    * ``parallel_tool_calls``: whether the model may call several tools in one turn.
    * ``stream``: ``False`` makes non-streaming calls; the loop and its durable events are the same.
    * ``stop_sequences``: Anthropic ``stop_sequences`` (OpenAI Responses has none: refused there).
    * ``metadata``: string pairs (OpenAI ``metadata``; Anthropic takes only ``user_id``).
    * ``user_id``: a stable, opaque end-user id (OpenAI ``safety_identifier``; Anthropic
      ``metadata.user_id``). Hash it: never a name or an email address.
    * ``service_tier``: OpenAI auto/default/flex/scale/priority/fast/ultrafast; Anthropic
      auto/standard_only.
    """

    temperature: float | None = Field(default=None, ge=0, le=2, allow_inf_nan=False, strict=True)
    top_p: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False, strict=True)
    tool_choice: str = "auto"
    reset_tool_choice: bool = Field(default=True, strict=True)
    parallel_tool_calls: bool = Field(default=True, strict=True)
    stream: bool = Field(default=True, strict=True)
    stop_sequences: tuple[str, ...] = ()
    metadata: dict[str, str] | None = None
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    service_tier: ServiceTier | None = None

    @field_validator("tool_choice")
    @classmethod
    def _choice(cls, v: str) -> str:
        if not _TOOL_CHOICE.match(v):
            raise ValueError(f"tool_choice must be 'auto', 'required', 'none' or 'tool:<name>', got {v!r}")
        return v

    @field_validator("stop_sequences")
    @classmethod
    def _stops(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(not s or not s.strip() for s in v):
            raise ValueError("stop_sequences must be non-empty strings that are not only whitespace")
        return v

    def request_fields(self) -> dict[str, Any]:
        """The ``ModelRequest`` fields these options set (``reset_tool_choice`` is the loop's)."""
        return self.model_dump(exclude={"reset_tool_choice"})


class ModelRequest(ShapedRepr, BaseModel):
    """One model call: portable history, this loop's continuation, tools and settings.

    ``model`` is the provider's model name (without the ``provider:`` prefix). ``continuation`` holds
    the opaque reasoning items of the *current* tool loop only; it is excluded from every dump. The
    repr shows settings and counts (history, continuation, tools, options), never their content:
    a request is a local of every frame a failing call passes through.
    """

    _repr_shown = frozenset(
        {"model", "reasoning", "max_output_tokens", "temperature", "top_p", "cache", "tool_choice",
         "parallel_tool_calls", "stream", "service_tier", "output"}
    )  # fmt: skip

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: str
    items: tuple[PortableItem, ...]
    continuation: tuple[ProviderReasoningItem, ...] = Field(default=(), exclude=True)
    continuation_policy: Literal["verbatim", "drop"] = Field(default="verbatim", exclude=True)
    """``"drop"``: the run withholds this loop's opaque items on purpose (``Run(continuation_policy=
    "drop")``), so an adapter may fill what the API needs in their place with the provider's documented
    stand-in; ``"verbatim"``: an item missing from ``continuation`` is a loss the API should see."""
    continuation_released: bool = Field(default=False, exclude=True)
    """True once this loop's continuation was released before the loop finished (its notebook cell
    ended, ``run.release_continuation()``, a ``continuation_released`` diagnostic; or the run resumes
    a loop from portable history, e.g. a restored checkpoint ending in tool results): the opaque items of
    the steps before the release are gone for good, so their absence from ``continuation`` is known,
    not a bug, and an adapter may take the provider's documented recovery for them. Items of steps
    made after the release are in ``continuation`` as usual."""
    continuity_expected: tuple[OpaqueRef, ...] = Field(default=(), exclude=True)
    """The opaque items of the loop's last response that this request must carry back, as received
    (digests, never payloads): the continuity guard (:mod:`agentlab.neutral.continuity`) refuses to
    send the request when one is missing, out of order or changed. Empty outside a live loop."""
    tools: tuple[ToolSpec, ...] = ()
    reasoning: ReasoningSettings | None = Field(default_factory=ReasoningSettings)
    max_output_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = None
    top_p: float | None = None
    cache: CacheHints | None = Field(default_factory=CacheHints)
    tool_choice: str = "auto"
    """``"auto"``, ``"required"``, ``"none"`` or ``"tool:<name>"`` (see ``CallOptions``)."""
    parallel_tool_calls: bool = True
    stream: bool = True
    stop_sequences: tuple[str, ...] = ()
    metadata: dict[str, str] | None = None
    user_id: str | None = None
    service_tier: ServiceTier | None = None
    provider_options: dict[str, Any] = Field(default_factory=dict)
    output: OutputSpec | None = None
    """The JSON schema the final answer must follow (``Run(output_type=...)``); None: free text."""
    origin: EventOrigin | None = Field(default=None, exclude=True)
    """The run and step this call belongs to: the adapter builds every event of the call with it
    (events are frozen and born stamped). ``None`` outside a run; not part of the wire request."""

    @field_validator("tool_choice")
    @classmethod
    def _choice(cls, v: str) -> str:
        return CallOptions._choice(v)

    @model_validator(mode="after")
    def _unique_tools(self) -> ModelRequest:
        names = [t.name for t in self.tools]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate tool names: {sorted(dup)}")
        forced = named_tool(self.tool_choice)
        if forced is not None and forced not in names:
            raise ValueError(
                f"tool_choice {self.tool_choice!r} names no tool of this request; tools: {sorted(names)}"
            )
        return self

    def options_for(self, provider: str) -> dict[str, Any]:
        """This provider's escape-hatch options, prefix stripped."""
        prefix = f"{provider}_"
        return {k[len(prefix) :]: v for k, v in self.provider_options.items() if k.startswith(prefix)}
