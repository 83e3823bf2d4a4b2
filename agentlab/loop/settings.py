"""``RunSettings``: everything that configures one run, validated once, and the rules about combinations.

Why one value: the same knobs reach a run from ``Run(...)``/``run``/``Session.run`` keywords, from a
``compare``'s ``run_kw`` and from a sweep ``Setting``. Each way used to check them again with its
own messages; now each builds (or is handed) one :class:`RunSettings`, checked here with one typed,
one-line error per bad field (a prefix such as ``"setting 'x':"`` says where it was written).

What the value does not hold, and why: the model (one value applies to every model of a sweep or a
compare; the model-bound rules are :meth:`RunSettings.check_model`), the tools and ``output_type``
(a run's environment, per task in a sweep; :meth:`RunSettings.check_tools` holds the rule between
them and ``tool_choice``), and what belongs to one execution only (task, adapter, session, event
log, ``on_event``, ``run_id``).

Every rule about a combination lives here, once:

* ``continuation_policy='drop'`` with reasoning on, per provider and model (the spec's
  ``drop_refusal_for``, i.e. ``drop_with_reasoning``/``drop_rule``): :func:`check_combination`;
* a forced ``tool_choice`` and the run's tools: :meth:`RunSettings.check_tools`;
* the provider's own rules for the knobs on the request it would get (``ProviderSpec.check_options``):
  :func:`check_request`;
* a value given both as a keyword and in ``settings=``/``options=``: :meth:`RunSettings.merged`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from agentlab.adapters.option_rules import check_prefixed
from agentlab.adapters.registry import get_provider, option_prefixes, provider_names
from agentlab.errors import ConfigError, InvalidSettingsError, UserError
from agentlab.loop.tools import DEFAULT_TOOL_TIMEOUT_S, check_timeout
from agentlab.neutral import _inputs
from agentlab.neutral._shapes import ShapedRepr
from agentlab.neutral.request import CacheHints, CallOptions, ReasoningSettings

if TYPE_CHECKING:
    from agentlab.adapters.base import ModelRef
    from agentlab.neutral.request import ModelRequest

__all__ = [
    "KEYWORD_DEFAULTS",
    "ContinuationPolicy",
    "RunSettings",
    "check_combination",
    "check_request",
    "drop_split",
]

ContinuationPolicy = Literal["verbatim", "drop"]

_KNOBS: tuple[str, ...] = tuple(k for k in _inputs.CALL_KNOBS if k != "reset_tool_choice")

KEYWORD_DEFAULTS: dict[str, Any] = {
    "system": None,
    "reasoning": None,
    "cache": CacheHints(),
    "max_steps": 20,
    "max_output_tokens": None,
    "continuation_policy": "verbatim",
    "retries": 2,
    "retry_delay": 0.5,
    "provider_options": None,
    "tool_timeout": DEFAULT_TOOL_TIMEOUT_S,
    "options": None,
    **dict.fromkeys(_KNOBS),
}
"""The configuration keywords of ``Run``/``run``/``Session.run``/``compare`` and their defaults (a
test holds ``Run``'s signature to them). ``None`` for ``reasoning``/``provider_options``/``options``
and the flat knobs means "not given"."""


class RunSettings(ShapedRepr, BaseModel):
    """How one run is configured, apart from its model, tools and task; frozen and checked once.

    Takes the same values as the ``Run`` keywords of the same names (``reasoning='high'``, a dict
    for ``cache``/``options``, the flat knobs ``temperature``, ``tool_choice``...), and holds them
    normalized: ``reasoning`` a ``ReasoningSettings``, ``options`` one ``CallOptions`` with every
    knob. A bad value is a one-line ``ConfigError``/``InvalidSettingsError`` naming the field.
    ``Run(model, task, settings=s)`` runs with it; reuse one across runs, a compare or a session.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    # The repr shows the knobs; the system prompt, provider_options and the options (metadata,
    # user_id) only as shapes, like a ModelRequest's.
    _repr_shown = frozenset(
        {"reasoning", "cache", "max_steps", "max_output_tokens", "continuation_policy", "retries",
         "retry_delay", "tool_timeout"}
    )  # fmt: skip

    system: str | None = None
    reasoning: ReasoningSettings = ReasoningSettings()
    cache: CacheHints | None = CacheHints()
    max_steps: int = 20
    max_output_tokens: int | None = None
    continuation_policy: ContinuationPolicy = "verbatim"
    retries: int = 2
    retry_delay: float = 0.5
    provider_options: dict[str, Any] = {}
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT_S
    options: CallOptions = CallOptions()

    @model_validator(mode="before")
    @classmethod
    def _normalized(cls, data: Any, info: ValidationInfo) -> Any:
        """Each field through its one helper, in the order ``Run`` always checked them.

        ``info.context`` may carry ``where`` (a prefix for every message, e.g. ``"setting 'x':"``) and
        ``provider`` (named in the ``provider_options`` message).
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"RunSettings takes its fields by name, got {type(data).__name__}")
        context = info.context or {}
        where = context.get("where", "")
        try:
            return _normalize(dict(data), context.get("provider") or "provider")
        except UserError as e:
            if not where:
                raise
            raise type(e)(f"{where} {e}") from None

    @classmethod
    def checked(cls, where: str = "", provider: str | None = None, **values: Any) -> RunSettings:
        """``RunSettings(**values)`` with every message prefixed by ``where`` (``"setting 'x':"``).

        What a sweep ``Setting`` builds its value with, so its errors keep naming the setting.
        """
        return cls.model_validate(values, context={"where": where, "provider": provider})

    @classmethod
    def from_setting(cls, setting: object) -> RunSettings:
        """The value a sweep ``Setting`` describes, read by field name (``sweeps`` sits above ``loop``).

        Fields left at ``None`` are "the default" (``Setting(reasoning=None)`` reasons). Errors name
        the setting, as ``Setting`` always did: ``"setting 'x': max_steps must be a positive int"``.
        """
        fields = ("continuation_policy", "reasoning", "max_steps", "max_output_tokens", "system", "options")
        values = {k: getattr(setting, k, None) for k in (*fields, *_KNOBS)}
        where = f"setting {getattr(setting, 'name', None)!r}:"
        return cls.checked(where, **{k: v for k, v in values.items() if v is not None})

    @classmethod
    def merged(
        cls, base: object, keywords: Mapping[str, Any], provider: str | None = None
    ) -> RunSettings:
        """``base`` (``settings=``, or None) with the configuration ``keywords`` given beside it.

        A keyword left at its default (``KEYWORD_DEFAULTS``) is "not given". A value given both ways
        must agree, as for ``options=`` and the flat knobs: which one was meant cannot be guessed.
        """
        given = {k: v for k, v in keywords.items() if not _is_default(k, v)}
        if base is None:
            return cls.checked(provider=provider, **given)
        if not isinstance(base, RunSettings):
            raise ConfigError(f"settings must be RunSettings(...) or None, got {type(base).__name__}")
        mine = {k: getattr(base, k) for k in base.set_fields()}
        new = cls.checked(provider=provider, **{**mine, **given})
        clash = sorted(k for k in mine if getattr(new, k) != getattr(base, k))
        if clash:
            raise InvalidSettingsError(
                f"{clash} given both as keywords and in settings with different values"
            )
        return new

    def set_fields(self) -> tuple[str, ...]:
        """The fields whose value is not the default (what this value changes about a run)."""
        fields = type(self).model_fields
        return tuple(k for k in fields if getattr(self, k) != fields[k].default)

    def replace(self, **changes: Any) -> RunSettings:
        """A copy with ``changes``, checked like a new value (``model_copy`` would not check them)."""
        return type(self).checked(**{**{k: getattr(self, k) for k in self.set_fields()}, **changes})

    @property
    def thinking(self) -> bool:
        """Whether reasoning is on (the default reasons)."""
        return self.reasoning.enabled

    def check_model(self, ref: ModelRef, where: str = "") -> None:
        """The rules between these settings and one model; see :func:`check_combination`."""
        check_combination(ref, self.continuation_policy, self.thinking, where)

    def check_tools(self, tool_names: Iterable[str]) -> None:
        """A forced ``tool_choice`` needs tools, and a named one a tool of that name."""
        _inputs.check_tool_choice(self.options, tool_names)

    def request_fields(self, *, forced_choice_spent: bool = False) -> dict[str, Any]:
        """The ``ModelRequest`` fields these settings set, for one step of a loop.

        A forced ``tool_choice`` goes back to ``"auto"`` once the model has called a tool
        (``forced_choice_spent``), unless ``reset_tool_choice=False`` (see ``CallOptions``).
        """
        knobs = self.options.request_fields()
        if forced_choice_spent and self.options.reset_tool_choice:
            knobs["tool_choice"] = "auto"
        return {
            "continuation_policy": self.continuation_policy,
            "reasoning": self.reasoning,
            "max_output_tokens": self.max_output_tokens,
            "cache": self.cache,
            "provider_options": self.provider_options,
            **knobs,
        }


def _normalize(data: dict[str, Any], provider: str) -> dict[str, Any]:
    """The raw keywords as typed fields (the flat knobs folded into ``options``), or a typed error."""
    knobs = {k: data.pop(k) for k in _KNOBS if k in data}
    unknown = sorted(set(data) - set(RunSettings.model_fields))
    if unknown:
        known = ", ".join(sorted({*RunSettings.model_fields, *_KNOBS}))
        hint = _inputs.did_you_mean(unknown[0], [*RunSettings.model_fields, *_KNOBS])
        raise ConfigError(f"RunSettings got unknown field(s) {unknown}{hint}; it takes: {known}")
    policy = data.get("continuation_policy", "verbatim")
    if policy not in ("verbatim", "drop"):
        raise ConfigError(f"continuation_policy must be 'verbatim' or 'drop', got {policy!r}")
    if "max_steps" in data:
        _inputs.positive_int(data["max_steps"], "max_steps")
    _inputs.int_at_least(data.get("retries", 2), "retries", 0)
    if "retry_delay" in data:
        data["retry_delay"] = _inputs.non_negative_number(data["retry_delay"], "retry_delay")
    data["reasoning"] = _inputs.reasoning_settings(data.get("reasoning"))
    if "tool_timeout" in data:
        data["tool_timeout"] = check_timeout(data["tool_timeout"], "tool_timeout", ConfigError)
    if "cache" in data:
        data["cache"] = _inputs.cache_hints(data["cache"])
    data["max_output_tokens"] = _inputs.max_output_tokens(data.get("max_output_tokens"))
    data["provider_options"] = _inputs.provider_options(data.get("provider_options"), provider)
    check_prefixed(provider, option_prefixes(), data["provider_options"])
    data["options"] = _inputs.call_options(data.get("options"), **knobs)
    if data.get("system") is not None:
        _inputs.check_text(data["system"], "system")
    return data


def _is_default(name: str, value: object) -> bool:
    default = KEYWORD_DEFAULTS.get(name)
    return value is default or (type(value) is type(default) and value == default)


def check_combination(ref: ModelRef, continuation_policy: str, reasoning_on: bool, where: str = "") -> None:
    """Refuse ``drop`` where the provider's spec says the API rejects it with reasoning on.

    The one rule and message for ``Run``, ``compare``, ``Session`` and a sweep's settings (``where``
    prefixes it, e.g. ``"setting 'drop':"``). Rewriting the turns as text would make it run, but as
    a different experiment presented as this one; the honest ablation there is reasoning off.
    """
    if continuation_policy != "drop" or not reasoning_on:
        return
    spec = get_provider(ref.provider)
    refusal = spec.drop_refusal_for(ref.model)
    if refusal is None:
        return
    prefix = f"{where} " if where else ""
    raise InvalidSettingsError(
        f"{prefix}continuation_policy='drop' cannot run on {ref}: {refusal}. Rewriting the tool calls "
        "as plain text would be a different experiment, not the ablation; the "
        f"{spec.label} ablation is {spec.reasoning_term} off: reasoning={{'enabled': False}} "
        f"(in a sweep: agentlab.sweeps.continuity_settings() builds both arms, 'drop' for "
        f"{', '.join(drop_split()[0])})."
    )


def check_request(ref: ModelRef, request: ModelRequest, adapter: object | None = None) -> None:
    """The provider's rules for the knobs on ``request`` (its spec's ``options``/``check_options``).

    ``adapter``: the run's own adapter, when given (its settings may change a rule).
    """
    get_provider(ref.provider).check_request_options(request, adapter)


def drop_split() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(providers that can drop reasoning mid-loop, providers that cannot)``, from their specs."""
    specs = [get_provider(n) for n in provider_names()]
    return (
        tuple(s.name for s in specs if s.drop_with_reasoning),
        tuple(s.name for s in specs if not s.drop_with_reasoning),
    )
