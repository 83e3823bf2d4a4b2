"""A provider's ``provider_options`` rules: declared in its spec, checked by one generic function.

Why declared, not coded in each adapter: a rule an adapter applies only while building its first
request fires after ``run_started`` is logged, and a rule each adapter writes for itself drifts from
its siblings. A provider says in its :class:`~agentlab.adapters.registry.ProviderSpec` which keys
agentlab builds itself, what type a known key must have, and which keys set what a neutral knob
sets; :func:`check_provider_options` applies that declaration the same way for every provider, when
a ``Run`` (or a ``compare``) is built and again in the adapter's build, so both refuse the same keys
with the same words. Nothing here names a provider.

The checks, in order: keys with no registered provider's prefix (a typo, or a generic knob such as
``reasoning`` given here); keys of another registered provider (a run is pinned to one provider, and a
knob meant for another would do nothing); values that are not JSON (every option goes into a JSON
request body, so an ``object()`` would fail inside the SDK after logging); keys agentlab builds;
wrong types; sub-keys of a dict option that agentlab builds; and a key given together with the
neutral knob that sets the same wire field (the body would keep one of them silently).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.errors import InvalidSettingsError

if TYPE_CHECKING:
    from agentlab.neutral.request import ModelRequest

__all__ = ["OptionRules", "check_provider_options", "json_problem", "option_owner"]

_JSON_NAMES: dict[type, str] = {
    dict: "a dict",
    list: "a list",
    str: "a string",
    int: "an int",
    float: "a number",
    bool: "a bool",
}


@dataclass(frozen=True, eq=False, kw_only=True)
class OptionRules:
    """What a provider declares about its ``provider_options`` keys (prefix stripped throughout).

    ``eq=False``: two declarations are the same only when they are the same object, so a spec that
    holds one stays hashable.
    """

    owned: Mapping[str, str] = field(default_factory=dict)
    """Keys agentlab builds itself, each with the clause that says why (or what to use instead)."""
    types: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)
    """The JSON type(s) a known key must have (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``)."""
    nested_owned: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """For a dict-valued key, the sub-keys agentlab builds in it (a generation config's thinking)."""
    neutral: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    """Key (or ``"key.subkey"``) -> the neutral ``ModelRequest`` field(s) that set the same wire field.
    Given together with a neutral knob the caller set, it is a conflict: refused, naming both."""


def json_problem(value: object, at: str = "") -> str | None:
    """What in ``value`` is not JSON and where (``"object at ['a'][0]"``), or ``None`` when it all is."""
    where = f" at {at}" if at else ""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value!r}{where}"
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"a {type(k).__name__} key{where}"
            if (problem := json_problem(v, f"{at}[{k!r}]")) is not None:
                return problem
        return None
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            if (problem := json_problem(v, f"{at}[{i}]")) is not None:
                return problem
        return None
    return f"{type(value).__name__}{where}"


def _type_names(expected: type | tuple[type, ...]) -> str:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(_JSON_NAMES.get(t, t.__name__) for t in kinds)


def _is_type(value: object, expected: type | tuple[type, ...]) -> bool:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in kinds:
        return False  # True is not a count
    if isinstance(value, int) and float in kinds:
        return True
    if isinstance(value, tuple) and list in kinds:
        return True
    return isinstance(value, kinds)


def _neutral_set(request: ModelRequest, name: str) -> bool:
    """Whether the caller set the neutral field ``name`` (it differs from ``ModelRequest``'s default)."""
    info = type(request).model_fields[name]
    return bool(getattr(request, name) != info.get_default(call_default_factory=True))


def check_prefixed(provider: str, prefixes: tuple[str, ...], options: Mapping[str, Any]) -> None:
    """Every key carries some registered provider's prefix: the one rule that needs no provider spec."""
    bad = sorted(str(k) for k in options if not (isinstance(k, str) and k.startswith(prefixes)))
    if bad:
        raise InvalidSettingsError(
            f"provider_options {bad}: keys must start with a provider's prefix ('{provider}_...' for this "
            "run); generic knobs such as reasoning or max_output_tokens are Run keywords"
        )


def option_owner(key: str, prefixes: tuple[str, ...]) -> str | None:
    """The prefix that owns ``key``: the longest one it starts with.

    Provider names may extend one another (``xai``/``xai_chat``, ``anthropic``/``anthropic_bedrock``), so
    ``xai_chat_foo`` belongs to ``xai_chat``, never to ``xai`` as its option ``chat_foo``.
    """
    return max((p for p in prefixes if key.startswith(p)), key=len, default=None)


def _check_foreign(provider: str, prefix: str, options: Mapping[str, Any], prefixes: tuple[str, ...]) -> None:
    foreign = sorted(k for k in options if option_owner(k, (*prefixes, prefix)) != prefix)
    if foreign:
        raise InvalidSettingsError(
            f"provider_options {foreign} are for another provider; this run is pinned to {provider} "
            f"(use '{prefix}*' keys here)"
        )


def _check_values(provider: str, prefix: str, opts: Mapping[str, Any], rules: OptionRules) -> None:
    for key, value in opts.items():
        if (problem := json_problem(value)) is not None:
            raise InvalidSettingsError(
                f"{provider}: provider_options['{prefix}{key}'] must be JSON (dicts, lists, strings, "
                f"numbers, bools, None), as it goes into the request body; got {problem}"
            )
    owned = sorted(k for k in opts if k in rules.owned)
    if owned:
        why = "; ".join(dict.fromkeys(rules.owned[k] for k in owned))
        raise InvalidSettingsError(
            f"{provider}: provider_options cannot set {[prefix + k for k in owned]}; agentlab builds "
            f"{'it' if len(owned) == 1 else 'them'} ({why})"
        )
    for key, expected in rules.types.items():
        if key in opts and opts[key] is not None and not _is_type(opts[key], expected):
            raise InvalidSettingsError(
                f"{provider}: provider_options['{prefix}{key}'] must be {_type_names(expected)}, "
                f"got {type(opts[key]).__name__}"
            )
    for key, subkeys in rules.nested_owned.items():
        inner = opts.get(key)
        taken = sorted(k for k in inner if k in subkeys) if isinstance(inner, Mapping) else []
        if taken:
            raise InvalidSettingsError(
                f"{provider}: provider_options['{prefix}{key}'] cannot set {taken}; agentlab builds them "
                "from the run's settings"
            )


def _given(opts: Mapping[str, Any], path: str) -> bool:
    key, _, sub = path.partition(".")
    if key not in opts or opts[key] is None:
        return False
    inner = opts[key]
    return not sub or (isinstance(inner, Mapping) and inner.get(sub) is not None)


def _check_neutral(
    provider: str, prefix: str, opts: Mapping[str, Any], request: ModelRequest, rules: OptionRules
) -> None:
    for path, fields in rules.neutral.items():
        if not _given(opts, path):
            continue
        for name in (fields,) if isinstance(fields, str) else fields:
            if _neutral_set(request, name):
                key, _, sub = path.partition(".")
                where = f"provider_options['{prefix}{key}']" + (f"[{sub!r}]" if sub else "")
                raise InvalidSettingsError(
                    f"{provider}: {where} and {name} set the same request field; give {name} only "
                    f"(or remove {name} to use the provider's key)"
                )


def check_provider_options(
    provider: str, prefix: str, rules: OptionRules, request: ModelRequest, *, prefixes: tuple[str, ...]
) -> None:
    """``request.provider_options`` against ``rules``; the first problem as one-line ``InvalidSettingsError``.

    ``provider``/``prefix``: the provider the request is for and its key prefix (``"openai_"``);
    ``prefixes``: every registered provider's prefix (a key with none of them is a typo or a generic
    knob in the wrong place, said apart from another provider's key).
    """
    if not request.provider_options:
        return
    check_prefixed(provider, prefixes, request.provider_options)
    _check_foreign(provider, prefix, request.provider_options, prefixes)
    opts = request.options_for(provider)
    _check_values(provider, prefix, opts, rules)
    _check_neutral(provider, prefix, opts, request, rules)
