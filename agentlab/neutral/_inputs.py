r"""The rules for what a caller may pass in, checked once where a run (or a setting) is built.

Every keyword of ``Run`` (and so of ``al.run``, ``Session.start``, ``compare`` and sweep ``Setting``s)
is checked here before anything is sent or logged, and a bad value raises agentlab's typed error in
one line that says the fix (``UserError`` renders as that line in IPython). pydantic's
``ValidationError`` never reaches the caller from a setting: its multi-line text names pydantic's
model, not the keyword the caller typed.

Text is the other half. A Python ``str`` may hold lone surrogates (``"\udcff"``: what
``surrogateescape`` decoding makes of undecodable bytes in files and filenames, or what a JSON
``"\ud800"`` escape decodes to), which UTF-8 cannot encode, so neither the wire body, the event log
nor a result's JSON could be written. Text the caller gave is refused naming where it is
(``task``, ``system``, ``history[3].text``); text a tool or the model produced is not the caller's
to fix, so it is made safe (:func:`scrub`: each such code point becomes U+FFFD) and the fact is said.
"""

from __future__ import annotations

import difflib
import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from agentlab.errors import ConfigError, InvalidSettingsError, UserError
from agentlab.neutral.request import CacheHints, CallOptions, ReasoningSettings, named_tool

__all__ = [
    "cache_hints",
    "call_options",
    "check_items",
    "check_kwargs",
    "check_text",
    "check_tool_choice",
    "did_you_mean",
    "int_at_least",
    "max_output_tokens",
    "non_negative_number",
    "positive_int",
    "provider_options",
    "reasoning_settings",
    "scrub",
    "scrub_item",
    "unencodable_at",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


# ---------------------------------------------------------------------- text


def unencodable_at(text: str) -> int | None:
    """Index of the first code point UTF-8 cannot encode (a lone surrogate), or ``None``."""
    if text.isascii():
        return None
    m = _SURROGATE.search(text)
    return m.start() if m else None


def scrub(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many were replaced."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn(REPLACEMENT, text)


def scrub_item(item: BaseModel) -> tuple[BaseModel, int]:
    """A frozen item with its string fields scrubbed (the same object when nothing needed it)."""
    update: dict[str, str] = {}
    n = 0
    for name in type(item).model_fields:
        v = getattr(item, name)
        if isinstance(v, str):
            fixed, k = scrub(v)
            if k:
                update[name], n = fixed, n + k
    return (item.model_copy(update=update), n) if update else (item, 0)


def _unencodable(where: str, text: str, at: int) -> UserError:
    return UserError(
        f"{where} holds a character UTF-8 cannot encode (U+{ord(text[at]):04X} at position {at}, a lone "
        "surrogate, e.g. from reading bytes with errors='surrogateescape'); decode the source with "
        "errors='replace' or fix the text"
    )


def check_text(value: object, where: str, *, error: type[UserError] = ConfigError) -> str:
    """A ``str`` the providers can receive; ``error`` for another type, ``UserError`` for lone surrogates."""
    if not isinstance(value, str):
        raise error(f"{where} must be a str, got {type(value).__name__}")
    at = unencodable_at(value)
    if at is not None:
        raise _unencodable(where, value, at)
    return value


def check_items(items: Iterable[object], where: str = "history") -> None:
    """Every string field of every item encodable; the error names ``history[i].field``."""
    for i, item in enumerate(items):
        if not isinstance(item, BaseModel):
            raise UserError(f"{where}[{i}] must be a history item (UserItem, ...), got {type(item).__name__}")
        for name in type(item).model_fields:
            v = getattr(item, name)
            if isinstance(v, str):
                at = unencodable_at(v)
                if at is not None:
                    raise _unencodable(f"{where}[{i}].{name}", v, at)


# ---------------------------------------------------------------------- settings


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _pydantic_problems(e: ValidationError, model: type[BaseModel]) -> str:
    """One line per problem, naming the field (never the offending value: it may be long)."""
    out = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(value)"
        if err.get("type") == "extra_forbidden":
            known = ", ".join(model.model_fields)
            out.append(f"unknown key {loc!r}{did_you_mean(loc, model.model_fields)}; known keys: {known}")
        else:
            out.append(f"{loc}: {err.get('msg')}")
    return "; ".join(out)


def reasoning_settings(value: object, where: str = "reasoning") -> ReasoningSettings:
    """``None``, an effort string, a dict of ``ReasoningSettings`` fields or one; else a typed error."""
    if value is None:
        return ReasoningSettings()
    if isinstance(value, ReasoningSettings):
        return value
    try:
        if isinstance(value, str):
            return ReasoningSettings(effort=value)  # type: ignore[arg-type]
        if isinstance(value, Mapping):
            return ReasoningSettings.model_validate(dict(value))
    except ValidationError as e:
        raise InvalidSettingsError(
            f"{where}: {_pydantic_problems(e, ReasoningSettings)} "
            "(e.g. reasoning='high' or reasoning={'effort': 'low', 'budget_tokens': 2048})"
        ) from None
    raise InvalidSettingsError(
        f"{where} must be an effort ('low', 'high', ...), a dict or ReasoningSettings, "
        f"got {type(value).__name__}"
    )


def cache_hints(value: object) -> CacheHints | None:
    """``None`` (no cache hints), a ``CacheHints`` or a dict of its fields."""
    if value is None or isinstance(value, CacheHints):
        return value
    if isinstance(value, Mapping):
        try:
            return CacheHints.model_validate(dict(value))
        except ValidationError as e:
            raise InvalidSettingsError(f"cache: {_pydantic_problems(e, CacheHints)}") from None
    raise InvalidSettingsError(
        f"cache must be CacheHints(...), a dict of its fields or None, got {type(value).__name__} "
        "(cache=CacheHints(enabled=False) turns caching off)"
    )


CALL_KNOBS: tuple[str, ...] = tuple(CallOptions.model_fields)
"""The per-call knobs, by name: flat keywords of ``Run`` and fields of ``CallOptions``/``Setting``."""


def call_options(value: object, where: str = "options", **flat: Any) -> CallOptions:
    """``options`` (``None``, a ``CallOptions`` or a dict of its fields) with the flat keywords on top.

    A flat keyword left at ``None`` means "not given". A knob given both ways with different values
    is refused (which one was meant cannot be guessed). Every problem names the knob.
    """
    if value is None:
        base: dict[str, Any] = {}
    elif isinstance(value, CallOptions):
        base = value.model_dump(exclude_unset=True)
    elif isinstance(value, Mapping):
        base = dict(value)
    else:
        raise InvalidSettingsError(
            f"{where} must be CallOptions(...), a dict of its fields or None, got {type(value).__name__}"
        )
    given = {k: v for k, v in flat.items() if v is not None}
    clash = sorted(k for k, v in given.items() if k in base and base[k] != v)
    if clash:
        raise InvalidSettingsError(f"{clash} given both as keywords and in {where} with different values")
    try:
        return CallOptions.model_validate({**base, **given})
    except ValidationError as e:
        raise InvalidSettingsError(
            _pydantic_problems(e, CallOptions).replace("unknown key", "unknown knob")
        ) from None


def check_tool_choice(options: CallOptions, tool_names: Iterable[str]) -> None:
    """A forced choice needs tools, and a named one a tool of that name in the run."""
    names = sorted(tool_names)
    forced = named_tool(options.tool_choice)
    if forced is not None and forced not in names:
        raise InvalidSettingsError(
            f"tool_choice {options.tool_choice!r} names no tool of this run{did_you_mean(forced, names)}; "
            f"its tools: {', '.join(names) or 'none'}"
        )
    if options.tool_choice == "required" and not names:
        raise InvalidSettingsError("tool_choice='required' needs at least one tool")


def positive_int(value: object, name: str, *, error: type[UserError] = ConfigError) -> int:
    """An ``int`` >= 1 (``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise error(f"{name} must be a positive int, got {value!r}")
    return value


def int_at_least(
    value: object, name: str, minimum: int, *, note: str = "", error: type[UserError] = ConfigError
) -> int:
    """A count: an ``int`` >= ``minimum`` (``True`` is not a count), else ``error`` naming ``name``.

    One rule for every count a caller passes (repeats, retries, concurrency, limits); ``note``
    follows the rule in the message, for what the value means or what None does.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise error(f"{name} must be an int >= {minimum}{note}, got {value!r}")
    return value


def max_output_tokens(value: object) -> int | None:
    if value is None:
        return None
    return positive_int(value, "max_output_tokens", error=InvalidSettingsError)


def non_negative_number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def provider_options(value: object, provider: str) -> dict[str, Any]:
    """The escape hatch: a dict whose keys carry a provider's prefix (``openai_*``, ``anthropic_*``).

    Only its shape is checked here. The keys are the provider's spec's business, checked by
    ``ProviderSpec.check_provider_options`` (``agentlab.adapters.option_rules``), which ``Run`` runs
    on its first request right after: a key with no provider's prefix (a typo, or a generic knob in
    the wrong place), another provider's keys, owned keys, types, clashes with generic knobs.
    ``compare`` hands each run only its provider's keys.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidSettingsError(
            f"provider_options must be a dict such as {{'{provider}_...': value}}, got {type(value).__name__}"
        )
    return dict(value)


def callable_or_none(value: object, name: str) -> None:
    if value is not None and not callable(value):
        raise ConfigError(
            f"{name} must be a function (e.g. {name}=print) or None, got {type(value).__name__}"
        )


def check_kwargs(
    kw: Mapping[str, Any], target: Callable[..., Any], caller: str, *, also: Iterable[str] = ()
) -> None:
    """Unknown keywords as one ``UserError`` listing the known ones (and the nearest), not a ``TypeError``."""
    params = inspect.signature(target).parameters
    known = sorted({*(n for n, p in params.items() if p.kind is p.KEYWORD_ONLY), *also})
    unknown = sorted(k for k in kw if k not in known)
    if unknown:
        hint = did_you_mean(unknown[0], known)
        raise UserError(f"{caller}() got unknown keyword(s) {unknown}{hint}; it takes: {', '.join(known)}")
