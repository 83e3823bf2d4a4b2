"""Every provider's ``provider_options`` rules, applied where the run (or the compare) is built.

The bad options are derived from each registered provider's own declaration (``ProviderSpec.options``:
keys agentlab builds, types, sub-keys it builds, keys that set what a neutral knob sets) plus the
rules every provider shares (another provider's key, a value that is not JSON). Each one must raise
``InvalidSettingsError`` in one line when ``Run``/``compare`` is constructed: no event log written,
no request sent. A provider that joins the registry is covered by this file without editing it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel

import agentlab as al
from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec, get_provider, provider_names
from agentlab.errors import InvalidSettingsError
from agentlab.sim.transport import SimTransport


class Answer(BaseModel):
    value: int


# One valid setting of each neutral knob a declaration may name (the Run keyword that sets it).
NEUTRAL_KW: dict[str, dict[str, Any]] = {
    "max_output_tokens": {"max_output_tokens": 30000},
    "temperature": {"temperature": 1.0},
    "top_p": {"top_p": 1.0},
    "stop_sequences": {"stop_sequences": ["END"]},
    "metadata": {"metadata": {"k": "v"}},
    "user_id": {"user_id": "u-1"},
    "service_tier": {"service_tier": "auto"},
    "reasoning": {"reasoning": "low"},
    "tool_choice": {"tool_choice": "none"},
    "parallel_tool_calls": {"parallel_tool_calls": False},
    "output": {"output_type": Answer},
}


def _ok(value: object, expected: type | tuple[type, ...]) -> bool:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds) or (isinstance(value, int) and float in kinds)


def _wrong(expected: type | tuple[type, ...]) -> object:
    return next(v for v in (True, "x", 5, [1], {"k": 1}) if not _ok(v, expected))


def _valid(expected: type | tuple[type, ...] | None) -> object:
    return "x" if expected is None else next(v for v in ("x", 5, [1], {"k": 1}, True) if _ok(v, expected))


def _simulated(spec: ProviderSpec) -> str | None:
    names = spec.simulated_model_names()
    return f"{spec.name}:{sorted(names)[0]}" if names else None


def _bad_options(spec: ProviderSpec) -> Iterator[tuple[str, dict[str, Any]]]:
    """(what is wrong, Run keywords) for every rule ``spec`` declares, and the shared ones."""
    p, rules = spec.option_prefix, spec.options
    other = next(get_provider(n) for n in provider_names() if n != spec.name)
    yield "another provider's key", {"provider_options": {f"{other.option_prefix}top_logprobs": 2}}
    yield "not JSON", {"provider_options": {f"{p}metadata": object()}}
    yield "not JSON inside", {"provider_options": {f"{p}extra": {"a": [1, {2}]}}}
    yield "NaN", {"provider_options": {f"{p}extra": float("nan")}}
    assert isinstance(rules, OptionRules)
    for key in rules.owned:
        yield f"owned {key}", {"provider_options": {p + key: "x"}}
    for key, expected in rules.types.items():
        yield f"type of {key}", {"provider_options": {p + key: _wrong(expected)}}
    for key, subkeys in rules.nested_owned.items():
        for sub in sorted(subkeys):
            yield f"owned {key}.{sub}", {"provider_options": {p + key: {sub: {}}}}
    for path, fields in rules.neutral.items():
        key, _, sub = path.partition(".")
        value = _valid(None if sub else rules.types.get(key))
        option = {sub: value} if sub else value
        for name in (fields,) if isinstance(fields, str) else fields:
            yield f"{path} with {name}", {"provider_options": {p + key: option}, **NEUTRAL_KW[name]}


def _cases() -> list[Any]:
    out = []
    for name in provider_names():
        spec = get_provider(name)
        model = _simulated(spec)
        if model is None:
            continue
        out += [pytest.param(model, kw, id=f"{name}-{what}") for what, kw in _bad_options(spec)]
    return out


CASES = _cases()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request the in-process simulator receives, from any client."""
    seen: list[str] = []
    respond = SimTransport._respond

    def record(self: SimTransport, request: Any, body: bytes) -> Any:
        seen.append(str(request.url))
        return respond(self, request, body)

    monkeypatch.setattr(SimTransport, "_respond", record)
    return seen


def test_every_builtin_provider_declares_its_rules() -> None:
    for name in ("openai", "anthropic", "google", "deepseek", "openrouter", "vllm"):
        rules = get_provider(name).options
        assert rules.owned and rules.types and rules.neutral, name
    assert len(CASES) > 100


@pytest.mark.parametrize(("model", "kw"), CASES)
def test_bad_provider_options_fail_when_the_run_is_built(
    model: str, kw: dict[str, Any], tmp_path: Path, sent: list[str]
) -> None:
    log = tmp_path / "events.jsonl"
    with pytest.raises(InvalidSettingsError) as info:
        al.Run(model, "What is 2+2?", event_log=log, **kw)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    assert not log.exists(), "nothing logged"
    assert sent == [], "nothing sent"


@pytest.mark.parametrize(("model", "kw"), CASES[::7])
def test_bad_provider_options_fail_when_the_compare_is_built(
    model: str, kw: dict[str, Any], sent: list[str]
) -> None:
    with pytest.raises(InvalidSettingsError) as info:
        al.compare("What is 2+2?", [model], live=False, **kw)
    assert "\n" not in str(info.value)
    assert sent == [], "nothing sent"


async def test_the_adapters_build_refuses_what_construction_refuses() -> None:
    """One declaration for both: a request built by hand meets the same rule in ``adapter.build``."""
    from agentlab.adapters.base import create_adapter
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    for model, key in (("google:sim-gemini", "google_contents"), ("deepseek:sim-deepseek", "deepseek_model")):
        adapter = create_adapter(model)
        req = ModelRequest(
            model=model.partition(":")[2], items=(UserItem(text="hi"),), provider_options={key: 1}
        )
        try:
            with pytest.raises(InvalidSettingsError, match="agentlab builds"):
                cast(Any, adapter).build(req)
        finally:
            await adapter.aclose()


@pytest.mark.parametrize("spec_name", provider_names())
def test_a_key_with_no_providers_prefix_is_refused_by_the_spec_with_the_runs_words(spec_name: str) -> None:
    """One check, one message: ``Run(provider_options={"foo": 1})`` and a hand-built request alike.

    The rule is the provider's spec's (the neutral ``ModelRequest`` does not ask the registry).
    """
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    req = ModelRequest(model="m", items=(UserItem(text="hi"),), provider_options={"foo": 1})
    with pytest.raises(InvalidSettingsError) as by_spec:
        get_provider(spec_name).check_provider_options(req)
    with pytest.raises(InvalidSettingsError) as by_run:
        al.Run(f"{spec_name}:m", "hi", provider_options={"foo": 1})
    assert str(by_spec.value) == str(by_run.value)
    assert f"'{spec_name}_...' for this run" in str(by_spec.value)


def test_a_generation_config_that_sets_max_output_tokens_alone_is_sent() -> None:
    """No conflict without the neutral knob: the provider's key is the one setting it."""
    r = al.run(
        "google:sim-gemini",
        "What is 2+2?",
        provider_options={"google_generation_config": {"maxOutputTokens": 4000}},
    )
    assert r.status == "completed"


def test_a_compare_hands_each_run_its_own_providers_keys() -> None:
    cmp = al.compare(
        "What is 2+2?",
        ["openai:sim-reasoner", "deepseek:sim-deepseek"],
        live=False,
        provider_options={"openai_top_logprobs": 0, "deepseek_seed": 7},
    )
    assert [e.error for e in cmp.entries] == [None, None]


def test_a_compare_refuses_keys_for_none_of_its_providers() -> None:
    with pytest.raises(InvalidSettingsError, match=r"no model of this compare"):
        al.compare("What is 2+2?", ["openai:sim-reasoner"], live=False, provider_options={"google_x": 1})


# Provider names that extend another's: the key belongs to the longest prefix it starts with.
NESTED = [("xai", "xai_chat"), ("deepseek", "deepseek_responses"), ("vllm", "vllm_responses")]


@pytest.mark.parametrize(("short", "long"), NESTED)
def test_a_longer_providers_key_is_foreign_to_the_shorter_one(short: str, long: str) -> None:
    """``xai_chat_seed`` on an ``xai`` run is not xai's option ``chat_seed``: it is another provider's."""
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    req = ModelRequest(model="m", items=(UserItem(text="hi"),), provider_options={f"{long}_seed": 1})
    with pytest.raises(InvalidSettingsError, match="another provider"):
        get_provider(short).check_provider_options(req)
    get_provider(long).check_provider_options(req)  # its own key: accepted


def test_a_compare_of_nested_names_hands_each_key_to_its_longest_prefix() -> None:
    from agentlab.sweeps.compare import _options_per_model

    models = ["xai:sim-grok", "xai_chat:sim-xai-chat"]
    per = _options_per_model({"xai_user": "a", "xai_chat_user": "b"}, models)
    assert per == [{"xai_user": "a"}, {"xai_chat_user": "b"}]
    with pytest.raises(InvalidSettingsError, match=r"\['xai_chat_user'\] are for no model"):
        _options_per_model({"xai_chat_user": "b"}, ["xai:sim-grok"])


# The cases the review found refused only at step 1, after ``run_started`` was logged (issue 29).
REVIEWED: list[tuple[str, dict[str, Any], str]] = [
    ("google:sim-gemini", {"provider_options": {"google_contents": []}}, "google_contents"),
    ("deepseek:sim-deepseek", {"provider_options": {"deepseek_model": "x"}}, "deepseek_model"),
    ("deepseek:sim-deepseek", {"provider_options": {"deepseek_messages": []}}, "deepseek_messages"),
    ("openrouter:sim-router-openai", {"provider_options": {"openrouter_stream": False}}, "openrouter_stream"),
    ("google:sim-gemini", {"provider_options": {"google_generation_config": 5}}, "must be a dict"),
    ("deepseek:sim-deepseek", {"provider_options": {"openai_top_logprobs": 2}}, "another provider"),
    ("anthropic:sim-thinker", {"provider_options": {"anthropic_metadata": object()}}, "must be JSON"),
    (
        "google:sim-gemini",
        {"provider_options": {"google_generation_config": {"maxOutputTokens": 5}}, "max_output_tokens": 900},
        "max_output_tokens",
    ),
    ("anthropic:sim-thinker", {"reasoning": {"budget_tokens": 10}}, "at least 1024"),
    ("openai:sim-reasoner", {"reasoning": "max"}, "'max'"),
]


@pytest.mark.parametrize(("model", "kw", "needle"), REVIEWED, ids=[c[2] for c in REVIEWED])
def test_reviewed_options_fail_before_run_started(
    model: str, kw: dict[str, Any], needle: str, tmp_path: Path, sent: list[str]
) -> None:
    log = tmp_path / "events.jsonl"
    with pytest.raises(InvalidSettingsError, match=needle) as info:
        al.Run(model, "What is 2+2?", event_log=log, **kw)
    assert "\n" not in str(info.value)
    assert not log.exists() and sent == []


def test_a_key_belongs_to_the_longest_provider_prefix_it_starts_with() -> None:
    """``toyx`` and ``toyx_sub`` registered: ``toyx_sub_seed`` is the second's key, not ``toyx``'s.

    A platform named after its provider (``anthropic_bedrock``) would otherwise have its keys slip
    into a plain ``anthropic`` run's body under a wrong name.
    """
    from agentlab.adapters.registry import register_provider, unregister_provider
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    def spec(name: str) -> ProviderSpec:
        return ProviderSpec(name=name, api="toy", label=name, adapter="toy.a:A", usage="toy.u:u")

    outer = register_provider(spec("toyx"))
    inner = register_provider(spec("toyx_sub"))
    try:
        req = ModelRequest(model="m", items=(UserItem(text="hi"),), provider_options={"toyx_sub_seed": 1})
        with pytest.raises(InvalidSettingsError, match=r"\['toyx_sub_seed'\] are for another provider"):
            outer.check_provider_options(req)
        inner.check_provider_options(req)  # its own key
        own = req.model_copy(update={"provider_options": {"toyx_seed": 1}})
        outer.check_provider_options(own)
        with pytest.raises(InvalidSettingsError, match="for another provider"):
            inner.check_provider_options(own)
    finally:
        unregister_provider("toyx_sub")
        unregister_provider("toyx")
