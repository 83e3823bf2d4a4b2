"""One entry per provider: what core, sweeps, the notebook and testing need to know about it.

A provider is one package (``agentlab/adapters/<name>/`` for the built-ins, any importable package
for others). Its ``provider.py`` declares a :class:`ProviderSpec`; everything provider-specific that
code outside the package needs (the model-string prefix, how to build the adapter, how to normalize
its usage, its SDK and the loggers to redact, its continuity policy, which simulated models it has,
the rules of its ``provider_options``) is a field of that spec, and the rest of agentlab asks
:func:`get_provider` instead of branching on a provider's name.

Built-ins are one line each in ``_BUILTIN`` (name -> ``"module:SPEC"``), resolved on first use, so
``import agentlab`` loads no provider module; others join with :func:`register_provider`. A spec and
this module import no SDK: routing a model string and checking a run's settings stay cheap, and the
adapter's module (and its SDK) is imported only when an adapter is built.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.adapters.option_rules import OptionRules, check_provider_options
from agentlab.errors import ConfigError, UnknownModelError

if TYPE_CHECKING:
    from agentlab.neutral.request import ModelRequest
    from agentlab.neutral.usage import CallUsage

__all__ = [
    "ProviderSpec",
    "find_provider",
    "get_provider",
    "option_prefixes",
    "provider_names",
    "register_provider",
    "unregister_provider",
]

# The built-in providers, one line each: name -> "module:attribute" of its spec (imported on first use).
_BUILTIN: dict[str, str] = {
    "openai": "agentlab.adapters.openai_responses.provider:SPEC",
    "anthropic": "agentlab.adapters.anthropic_messages.provider:SPEC",
    "anthropic_bedrock": "agentlab.adapters.anthropic_platforms.provider:BEDROCK",
    "anthropic_vertex": "agentlab.adapters.anthropic_platforms.provider:VERTEX",
    "google": "agentlab.adapters.google_gemini.provider:SPEC",
    "deepseek": "agentlab.adapters.openai_chat.provider:DEEPSEEK",
    "openrouter": "agentlab.adapters.openai_chat.provider:OPENROUTER",
    "moonshot": "agentlab.adapters.openai_chat.provider:MOONSHOT",
    "zai": "agentlab.adapters.openai_chat.provider:ZAI",
    "xai_chat": "agentlab.adapters.openai_chat.provider:XAI_CHAT",
    "vllm": "agentlab.adapters.openai_chat.provider:VLLM",
    "llamacpp": "agentlab.adapters.openai_chat.provider:LLAMACPP",
    "ollama": "agentlab.adapters.openai_chat.provider:OLLAMA",
    "chat": "agentlab.adapters.openai_chat.provider:CHAT",
    "xai": "agentlab.adapters.openai_responses.provider:XAI",
    "deepseek_responses": "agentlab.adapters.openai_responses.provider:DEEPSEEK_RESPONSES",
    "azure": "agentlab.adapters.openai_responses.provider:AZURE",
    "mantle": "agentlab.adapters.openai_responses.provider:MANTLE",
    "vllm_responses": "agentlab.adapters.openai_responses.provider:VLLM_RESPONSES",
    "ollama_responses": "agentlab.adapters.openai_responses.provider:OLLAMA_RESPONSES",
    "lmstudio_responses": "agentlab.adapters.openai_responses.provider:LMSTUDIO_RESPONSES",
    "bedrock": "agentlab.adapters.bedrock_converse.provider:SPEC",
}

_NAME_RE = re.compile(r"[a-z][a-z0-9_]*\Z")
_TARGET_RE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*\Z")
_NAMES_RE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*(\[\w+\])?\Z")  # a target, or an entry of a table


def load(target: str) -> Any:
    """The object a ``"package.module:attribute"`` string names, importing its module now."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def target_of(function: Any) -> str:
    """The ``"package.module:attribute"`` string :func:`load` resolves back to ``function``.

    For a spec built from objects its package already holds (a dialect's usage mapping), so the
    target is not written a second time by hand.
    """
    return f"{function.__module__}:{function.__name__}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """Everything provider-specific that code outside the provider's package needs.

    Strings of the form ``"module:attribute"`` are imported on first use, so a spec is cheap to
    declare and to register (it must not import the SDK itself).
    """

    name: str
    """The model-string prefix (``"openai"`` in ``"openai:gpt-5.1"``); also the ``provider`` tag on
    opaque items, errors, prices and usage rows, and the prefix of its ``provider_options`` keys."""
    api: str
    """The API surface the adapter speaks (``"responses"``); opaque items are tied to it."""
    label: str
    """How messages name the provider (``"OpenAI"``)."""
    adapter: str
    """``"module:Class"``: built as ``Class(model, **options)`` by ``create_adapter``."""
    usage: str
    """``"module:function"``: the provider's wire ``usage`` mapping -> ``CallUsage``."""
    aliases: tuple[str, ...] = ()
    """Further model-string prefixes routed to this provider."""
    sdk_module: str | None = None
    """The SDK's import name, if the adapter needs one: its first import costs seconds, which the
    notebook says, and the CLI checks it is installed before choosing the simulator behind it."""
    sdk_loggers: tuple[str, ...] = ()
    """Logger names of the provider's SDK stack to redact (the HTTP stack is covered for all)."""
    api_key_env: str | None = None
    """The environment variable the adapter reads its key from (the notebooks' model choice)."""
    reasoning_term: str = "reasoning"
    """The provider's own word for reasoning in messages (``"thinking"`` on Anthropic)."""
    reasoning_block_type: str = "reasoning"
    """``block_type`` of this provider's opaque reasoning items (scripted adapters tag them alike)."""
    drop_with_reasoning: bool = True
    """Whether ``continuation_policy="drop"`` can run with reasoning on. When not, runs refuse it and
    the continuity ablation for this provider is reasoning off instead."""
    drop_refusal: str = ""
    """Why ``drop`` cannot run with reasoning on (one clause, for the error); required when refused."""
    drop_rule: str | None = None
    """``"module:function"``, ``(model) -> str | None``: the per-model answer to "can ``drop`` run
    with reasoning on?" (``None``: it can; a string: the clause saying why not), for providers whose
    models differ (a router's backing model, an API generation that requires its items back). When
    set it decides alone, and ``drop_with_reasoning``/``drop_refusal`` are the provider-wide summary
    shown where no model is known yet. Its module must not import the SDK."""
    simulated_models: str | None = None
    """``"module:NAME"`` of the ``sim-*`` model names the in-process simulator serves for this
    provider, or ``"module:TABLE[key]"``: the entry ``key`` of a table of them (the simulator keeps one
    per protocol, ``"agentlab.sim:CHAT_MODELS[deepseek]"``) (``None``: no simulator, a ``sim-`` name
    goes to the adapter unchecked)."""
    simulator: str | None = None
    """``"module:function"`` making the SDK client on the in-process simulator that an adapter built
    for a ``sim-*`` model without ``base_url`` uses (``agentlab.adapters.sdk_adapter``): the one place
    a provider names how to reach the simulator, so no adapter imports it (``None``: no simulator)."""
    price_provider: str | None = None
    """The provider id under which the ``genai-prices`` library prices this provider's real models
    (``"openai"``, ``"anthropic"``, ``"google"``, ``"deepseek"``, ``"openrouter"``...). ``None``: only
    ``set_price`` / ``prices_override`` price them (a user provider is never matched to a library
    provider by a similar name)."""
    otel_name: str | None = None
    """``gen_ai.provider.name`` in the OpenTelemetry GenAI semantic conventions when it differs from
    ``name`` (Google's Gemini API is ``"gcp.gemini"``); ``None``: ``name`` (the convention's own
    value for ``openai``, ``anthropic``, ``deepseek``; a provider it does not list keeps its name)."""
    options: OptionRules = field(default_factory=OptionRules)
    """The provider's ``provider_options`` rules (keys agentlab builds, types, keys that set what a
    neutral knob sets), applied generically by ``agentlab.adapters.option_rules`` when a run is built
    and again in the adapter's build, so a bad key fails before anything is sent or logged."""
    check_options: str | None = None
    """``"module:function"`` of the adapter's own check of a request's knobs: ``(ModelRequest,
    adapter or None)`` -> ``None`` or ``InvalidSettingsError``, the one the adapter's build runs
    too. A run calls it when it is constructed (after ``options``), so a knob the provider refuses
    fails before anything is sent or logged. Its module must not import the SDK."""
    batch: str | None = None
    """``"module:Class"`` of the provider's batch API for ``sweep(..., backend="batch")``, built as
    ``Class(adapter)`` on the model's adapter (``None``: the provider has no batch API here)."""
    batch_price_factor: float = 0.5
    """Batch price as a fraction of the standard one (OpenAI, Anthropic and Google all bill 50%)."""

    def __post_init__(self) -> None:
        for n in (self.name, *self.aliases):
            if not isinstance(n, str) or not _NAME_RE.match(n):
                raise ConfigError(
                    f"provider name {n!r} must be lowercase letters, digits and '_', e.g. 'toy'"
                )
        for field_name in ("adapter", "usage", "simulated_models", "simulator", "check_options", "drop_rule"):
            value = getattr(self, field_name)
            pattern = _NAMES_RE if field_name == "simulated_models" else _TARGET_RE
            if value is not None and not (isinstance(value, str) and pattern.match(value)):
                raise ConfigError(
                    f"ProviderSpec.{field_name} must be 'package.module:attribute', got {value!r}"
                )
        if not self.drop_with_reasoning and not self.drop_refusal:
            raise ConfigError(
                f"provider {self.name!r} refuses 'drop' with reasoning on: say why in drop_refusal"
            )

    @property
    def option_prefix(self) -> str:
        """The prefix of this provider's ``provider_options`` keys (``"openai_"``)."""
        return f"{self.name}_"

    def adapter_class(self) -> Any:
        """The adapter class (imports its module, and so the SDK, now)."""
        return load(self.adapter)

    def batch_class(self) -> Any:
        """The batch API class (imports its module, and so the SDK, now), or ``None`` without one."""
        return load(self.batch) if self.batch else None

    def normalize_usage(self, usage: Mapping[str, Any]) -> CallUsage:
        """The provider's wire usage in agentlab's convention (``agentlab.neutral.usage``)."""
        result: CallUsage = load(self.usage)(usage)
        return result

    def check_provider_options(self, request: ModelRequest) -> None:
        """The request's ``provider_options`` against this provider's declared ``options`` rules."""
        prefixes = option_prefixes()
        check_provider_options(self.name, self.option_prefix, self.options, request, prefixes=prefixes)

    def check_request_options(self, request: ModelRequest, adapter: object | None = None) -> None:
        """The provider's rules for the request: its ``options`` declaration, then ``check_options``.

        ``adapter``: the run's own adapter, when given (its settings may change a rule).
        """
        self.check_provider_options(request)
        if self.check_options is not None:
            load(self.check_options)(request, adapter)

    def drop_refusal_for(self, model: str) -> str | None:
        """Why ``drop`` cannot run with reasoning on for ``model`` (``None``: it can)."""
        if self.drop_rule is not None:
            answer: str | None = load(self.drop_rule)(model)
            return answer
        return None if self.drop_with_reasoning else self.drop_refusal

    def simulator_client(self) -> Any:
        """The function making the simulator's SDK client (imports the simulator now), or ``None``."""
        return None if self.simulator is None else load(self.simulator)

    def simulated_model_names(self) -> tuple[str, ...] | None:
        """The simulator's model names for this provider, or ``None`` when it has no simulator."""
        if self.simulated_models is None:
            return None
        target, _, key = self.simulated_models.removesuffix("]").partition("[")
        names = load(target)
        if key and key not in names:  # a misspelt entry must not read as "no simulated models"
            raise ConfigError(f"ProviderSpec.simulated_models {self.simulated_models!r}: no entry {key!r}")
        return tuple(names[key] if key else names)


_lock = threading.RLock()
_specs: dict[str, ProviderSpec] = {}  # resolved built-ins and registered providers, by name
_aliases: dict[str, str] = {}  # alias -> name
# Every routable provider's option prefix, computed once per state of the registry (every run checks
# its provider_options against it); emptied by any change to ``_specs``.
_prefixes: tuple[str, ...] | None = None


def _remember(spec: ProviderSpec) -> ProviderSpec:
    """Keep a resolved spec, and cover its loggers by redaction from the moment it is known."""
    from agentlab.records.logs import install_redaction

    global _prefixes
    _specs[spec.name] = spec
    _prefixes = None
    for alias in spec.aliases:
        _aliases[alias] = spec.name
    if spec.sdk_loggers:
        install_redaction(*spec.sdk_loggers)
    return spec


def _builtin(name: str) -> ProviderSpec:
    spec = load(_BUILTIN[name])
    if not isinstance(spec, ProviderSpec) or spec.name != name:
        raise ConfigError(f"{_BUILTIN[name]} is not the ProviderSpec of {name!r}")
    return _remember(spec)


def register_provider(spec: ProviderSpec, *, replace: bool = False) -> ProviderSpec:
    """Make a provider routable as ``"<spec.name>:<model>"`` everywhere (runs, sweeps, notebooks).

    A name already taken (a built-in included) is refused unless ``replace=True``, so two packages
    cannot silently fight over one prefix. Returns the spec, so a package can register at import.
    """
    if not isinstance(spec, ProviderSpec):
        raise ConfigError(f"register_provider takes an agentlab ProviderSpec, got {type(spec).__name__}")
    with _lock:
        taken = [n for n in (spec.name, *spec.aliases) if find_provider(n) is not None]
        if taken and not replace:
            raise ConfigError(f"provider name(s) {taken} already registered; pass replace=True to replace")
        for n in taken:
            old = find_provider(n)
            if old is not None:
                _forget(old)
        return _remember(spec)


def _forget(spec: ProviderSpec) -> None:
    global _prefixes
    _specs.pop(spec.name, None)
    _prefixes = None
    for alias in spec.aliases:
        _aliases.pop(alias, None)


def unregister_provider(name: str) -> None:
    """Remove a provider registered with :func:`register_provider` (tests, plugin reloads).

    A built-in cannot be removed (it would come back on next use); replace it instead.
    """
    with _lock:
        spec = _specs.get(name)
        if name in _BUILTIN and (spec is None or spec is load(_BUILTIN[name])):
            raise ConfigError(
                f"{name!r} is a built-in provider; replace it with register_provider(..., replace=True)"
            )
        if spec is None:
            raise UnknownModelError(f"no provider {name!r} is registered")
        _forget(spec)


def find_provider(name: str) -> ProviderSpec | None:
    """The spec for a model-string prefix (a name or an alias), or ``None`` when none matches."""
    with _lock:
        name = _aliases.get(name, name)
        spec = _specs.get(name)
        if spec is None and name in _BUILTIN:
            spec = _builtin(name)
        if spec is None and name not in _BUILTIN:
            for builtin in _BUILTIN:  # a built-in's alias is known only once its spec is loaded
                if builtin not in _specs:
                    _builtin(builtin)
            spec = _specs.get(_aliases.get(name, name))
        return spec


def get_provider(name: str) -> ProviderSpec:
    """The spec for a provider name or alias; ``UnknownModelError`` with the nearest name otherwise."""
    spec = find_provider(name)
    if spec is None:
        from agentlab.neutral._inputs import did_you_mean

        known = provider_names()
        raise UnknownModelError(
            f"unknown provider {name!r}{did_you_mean(name, known)}; known: {sorted(known)}"
        )
    return spec


def option_prefixes() -> tuple[str, ...]:
    """The ``provider_options`` key prefixes of every routable provider (``"openai_"``, ...)."""
    global _prefixes
    with _lock:
        if _prefixes is None:
            _prefixes = tuple(get_provider(n).option_prefix for n in provider_names())
        return _prefixes


def provider_names() -> tuple[str, ...]:
    """Every routable provider name: the built-ins first, then registered ones in order."""
    with _lock:
        return tuple(dict.fromkeys((*_BUILTIN, *_specs)))
