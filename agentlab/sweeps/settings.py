"""A sweep's settings.

The named knobs one arm of a sweep runs with, and the combinations refused before anything runs (a
``Setting`` is part of every row's key and fingerprint).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlab.adapters.base import ModelRef
from agentlab.errors import ConfigError
from agentlab.loop.settings import ContinuationPolicy, RunSettings, drop_split
from agentlab.neutral.output import OutputSpec
from agentlab.neutral.request import CallOptions, ReasoningSettings, ServiceTier

__all__ = ["Setting", "check_setting", "continuity_settings", "parse_settings"]


@dataclass(frozen=True)
class Setting:
    """One arm of a sweep: how each run is configured. ``name`` labels it in results.

    ``providers`` restricts the setting to some providers (``None``: all), which is how an ablation
    that only one provider can run (``drop`` on OpenAI) sits beside its counterpart on the other
    (thinking off on Anthropic) in one sweep.

    The per-call knobs (``temperature``, ``tool_choice``, ``stream``, ...) are fields too, flat or as
    one ``options=CallOptions(...)`` (or a dict), exactly as ``Run`` takes them; after construction
    ``options`` holds them all and the flat fields are left as given. A knob a provider refuses fails
    that model's runs (a failed row naming the knob), before anything is sent.
    """

    name: str
    continuation_policy: ContinuationPolicy = "verbatim"
    reasoning: ReasoningSettings | None = None
    max_steps: int = 20
    max_output_tokens: int | None = None
    system: str | None = None
    providers: tuple[str, ...] | None = None
    options: CallOptions | Mapping[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    stream: bool | None = None
    stop_sequences: Sequence[str] | None = None
    metadata: Mapping[str, str] | None = None
    user_id: str | None = None
    service_tier: ServiceTier | None = None

    run_settings: RunSettings = field(init=False, repr=False, compare=False)
    """The run-settings value every run of this arm gets: checked once, by the rules ``Run`` uses."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"a setting needs a non-empty name, got {self.name!r}")
        if self.providers is not None:
            if isinstance(self.providers, str):  # tuple("openai") would be six one-letter providers
                raise ConfigError(
                    f"setting {self.name!r}: providers must be a list, e.g. providers=({self.providers!r},)"
                )
            object.__setattr__(self, "providers", tuple(self.providers))
        run = RunSettings.from_setting(self)
        object.__setattr__(self, "run_settings", run)
        if self.reasoning is not None:  # None stays "the default", so fingerprints stay stable
            object.__setattr__(self, "reasoning", run.reasoning)
        object.__setattr__(self, "options", run.options)

    @property
    def call_options(self) -> CallOptions:
        """The knobs every run of this setting gets (``options`` after construction, typed)."""
        assert isinstance(self.options, CallOptions)
        return self.options

    def applies_to(self, provider: str) -> bool:
        """Whether this setting runs for ``provider`` (``providers=None``: every provider)."""
        return self.providers is None or provider in self.providers

    @property
    def thinking(self) -> bool:
        """Whether reasoning is on (``reasoning=None`` is a run's default, which reasons)."""
        return self.reasoning is None or self.reasoning.enabled

    def fingerprint(self, output: OutputSpec | None = None) -> str:
        """A hash of what changes a run (not the name, not ``providers``).

        ``output`` is the sweep's ``output_type`` as sent (name, schema, strictness): rows answered
        in one schema must not resume as rows of another. Without it (and without knobs) the hash is
        the one results files written before either existed hold, so they still resume.
        """
        data = {
            "continuation_policy": self.continuation_policy,
            "reasoning": self.reasoning.model_dump(mode="json") if self.reasoning else None,
            "max_steps": self.max_steps,
            "max_output_tokens": self.max_output_tokens,
            "system": self.system,
        }
        if self.call_options != CallOptions():  # settings without knobs keep their earlier fingerprint
            data["options"] = self.call_options.model_dump(mode="json")
        if output is not None:
            data["output"] = output.model_dump(mode="json", include={"name", "json_schema", "strict"})
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def continuity_settings(*, max_steps: int = 20) -> list[Setting]:
    """The continuity ablation each provider can actually run (the arms follow the specs).

    ``verbatim`` (all providers): opaque reasoning goes back within the loop (the default).
    ``drop`` (OpenAI, Google Gemini): reasoning items are not sent back; the model loses its plan
    (on Gemini 3 the calls carry Google's documented dummy signature, which the API accepts in place
    of the real one; the model works without its earlier steps' reasoning).
    ``thinking_off`` (Anthropic): Anthropic cannot drop thinking blocks mid-loop while thinking
    is on (the API rejects it), so its ablation is no thinking at all: a different question (what
    reasoning buys), labelled as such.
    """
    can_drop, cannot = drop_split()
    return [
        Setting("verbatim", max_steps=max_steps),
        Setting("drop", continuation_policy="drop", max_steps=max_steps, providers=can_drop),
        Setting(
            "thinking_off",
            reasoning=ReasoningSettings(enabled=False),
            max_steps=max_steps,
            providers=cannot,
        ),
    ]


def check_setting(ref: ModelRef, s: Setting) -> None:
    """The one combination rule (``agentlab.loop.settings.check_combination``), naming the setting."""
    s.run_settings.check_model(ref, where=f"setting {s.name!r}:")


def parse_settings(
    settings: Iterable[Setting | str] | Mapping[str, Mapping[str, Any]] | None,
) -> list[Setting]:
    """The ``settings=`` argument as ``Setting``s, checked once."""
    if settings is None:
        return [Setting("default")]
    out: list[Setting] = []
    if isinstance(settings, Mapping):
        for name, kw in settings.items():
            if not isinstance(kw, Mapping):
                raise ConfigError(f"setting {name!r}: expected a dict of Setting fields, got {kw!r}")
            try:
                out.append(Setting(name, **dict(kw)))
            except TypeError as e:
                raise ConfigError(f"setting {name!r}: {e}") from None
    else:
        for s in settings:
            out.append(Setting(s) if isinstance(s, str) else s)
            if not isinstance(out[-1], Setting):
                raise ConfigError(f"settings must be Setting objects, names or a dict, got {s!r}")
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"duplicate setting names {dup}; names key the results")
    if not out:
        raise ConfigError("settings is empty; pass None for one default setting")
    return out
