"""The provider registry: one ``ProviderSpec`` per provider, asked instead of branching on names."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentlab
from agentlab.adapters.registry import (
    ProviderSpec,
    find_provider,
    get_provider,
    option_prefixes,
    provider_names,
    register_provider,
    unregister_provider,
)
from agentlab.errors import ConfigError, UnknownModelError

ROOT = Path(agentlab.__file__).resolve().parent


def _spec(**kw: object) -> ProviderSpec:
    base: dict[str, object] = {
        "name": "dummy",
        "api": "dummy_api",
        "label": "Dummy",
        "adapter": "dummy_provider._adapter:DummyAdapter",
        "usage": "dummy_provider._usage:usage_from_dummy",
    }
    base.update(kw)
    return ProviderSpec(**base)  # type: ignore[arg-type]


@pytest.fixture
def dummy() -> Iterator[ProviderSpec]:
    spec = register_provider(_spec())
    yield spec
    unregister_provider("dummy")


def test_routing_a_model_string_imports_no_sdk() -> None:
    """The registry and the built-in specs are light: only building an adapter imports its SDK."""
    code = (
        "import sys, agentlab\n"
        "from agentlab.adapters.base import parse_model, check_simulated\n"
        "from agentlab.adapters.registry import option_prefixes\n"
        "refs = [parse_model(m) for m in ('openai:sim-reasoner', 'anthropic:sim-thinker')]\n"
        "option_prefixes()\n"
        "out = [m for m in ('openai', 'anthropic', 'httpx2') if m in sys.modules]\n"
        "for ref in refs:\n"
        "    check_simulated(ref)  # imports the simulator (and its HTTP library), not an SDK\n"
        "out += [m for m in ('openai', 'anthropic') if m in sys.modules]\n"
        "print(','.join(out))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"routing pulled in: {out.stdout.strip()}"


def test_builtins_declare_their_facts() -> None:
    openai, anthropic = get_provider("openai"), get_provider("anthropic")
    assert (openai.api, anthropic.api) == ("responses", "messages")
    assert openai.drop_with_reasoning and not anthropic.drop_with_reasoning
    assert (openai.sdk_module, anthropic.sdk_module) == ("openai", "anthropic")
    assert "sim-reasoner" in (openai.simulated_model_names() or ())
    assert "sim-thinker" in (anthropic.simulated_model_names() or ())
    assert openai.normalize_usage({"input_tokens": 3, "output_tokens": 2}).input_tokens == 3
    assert provider_names()[:2] == ("openai", "anthropic")


def test_register_route_and_unregister(dummy: ProviderSpec) -> None:
    assert find_provider("dummy") is dummy and "dummy" in provider_names()
    ref = agentlab.parse_model("dummy:m1")
    assert (ref.provider, ref.api, ref.model) == ("dummy", "dummy_api", "m1")
    assert "dummy_" in option_prefixes()
    agentlab.ModelRequest(model="m1", items=(), provider_options={"dummy_x": 1})


def test_option_prefixes_follow_every_registry_change() -> None:
    """The prefixes are computed once per registry state (each run checks against them), never stale."""
    before = option_prefixes()
    assert option_prefixes() is before  # computed once, not once per run
    register_provider(_spec())
    try:
        assert option_prefixes() == (*before, "dummy_")
    finally:
        unregister_provider("dummy")
    assert option_prefixes() == before


def test_unregistered_provider_is_unknown_again() -> None:
    register_provider(_spec())
    unregister_provider("dummy")
    assert find_provider("dummy") is None
    with pytest.raises(UnknownModelError, match="unknown provider 'dummy'"):
        agentlab.parse_model("dummy:m1")
    with pytest.raises(UnknownModelError):
        unregister_provider("dummy")


def test_a_taken_name_is_refused_unless_replaced(dummy: ProviderSpec) -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_provider(_spec())
    with pytest.raises(ConfigError, match="already registered"):
        register_provider(_spec(name="openai"))
    other = register_provider(_spec(api="v2"), replace=True)
    assert get_provider("dummy") is other


def test_a_replaced_builtin_comes_back_when_unregistered() -> None:
    original = get_provider("openai")
    register_provider(_spec(name="openai", api="other"), replace=True)
    try:
        assert agentlab.parse_model("openai:gpt-5.1").api == "other"
    finally:
        unregister_provider("openai")
    assert get_provider("openai") is original
    with pytest.raises(ConfigError, match="built-in"):
        unregister_provider("openai")


def test_aliases_route_to_the_provider() -> None:
    register_provider(_spec(aliases=("dum",)))
    try:
        assert agentlab.parse_model("dum:m").provider == "dummy"
    finally:
        unregister_provider("dummy")
    assert find_provider("dum") is None


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"name": "Bad:Name"}, "provider name"),
        ({"aliases": ("ok", "no-dash")}, "provider name"),
        ({"adapter": "not a target"}, "ProviderSpec.adapter"),
        ({"simulated_models": "pkg.mod"}, "ProviderSpec.simulated_models"),
        ({"simulated_models": "pkg.mod:TABLE[key"}, "ProviderSpec.simulated_models"),
        ({"simulator": "pkg.mod:TABLE[key]"}, "ProviderSpec.simulator"),
        ({"drop_with_reasoning": False}, "drop_refusal"),
    ],
)
def test_a_malformed_spec_fails_at_construction(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        _spec(**kw)


def test_simulated_models_name_a_sequence_or_an_entry_of_a_simulator_table() -> None:
    """One table per protocol in the simulator; a spec names its own entry (a misspelt one fails)."""
    assert _spec(simulated_models="agentlab.sim:GEMINI_MODELS").simulated_model_names() == (
        "sim-gemini",
        "sim-gemini-legacy",
    )
    assert _spec(simulated_models="agentlab.sim:CHAT_MODELS[zai]").simulated_model_names() == ("sim-glm",)
    with pytest.raises(ConfigError, match=r"CHAT_MODELS\[nobody\]'.*no entry 'nobody'"):
        _spec(simulated_models="agentlab.sim:CHAT_MODELS[nobody]").simulated_model_names()
    assert _spec().simulated_model_names() is None


def test_unknown_provider_names_the_nearest() -> None:
    with pytest.raises(UnknownModelError, match="did you mean 'openai'"):
        get_provider("opnai")
    with pytest.raises(ConfigError, match="ProviderSpec"):
        register_provider("openai")  # type: ignore[arg-type]


def test_drop_refusal_and_continuity_settings_follow_the_spec() -> None:
    """A provider whose spec refuses 'drop' with reasoning on gets the refusal and the reasoning-off arm."""
    register_provider(_spec(drop_with_reasoning=False, drop_refusal="the dummy API wants its items back"))
    try:
        with pytest.raises(agentlab.InvalidSettingsError, match="the dummy API wants its items back"):
            agentlab.Run("dummy:m", "q", continuation_policy="drop")
        arms = {s.name: s.providers for s in agentlab.continuity_settings()}
        assert arms["drop"] == DROP and arms["thinking_off"] == (*THINKING_OFF, "dummy")
    finally:
        unregister_provider("dummy")
    arms = {s.name: s.providers for s in agentlab.continuity_settings()}
    assert arms["drop"] == DROP and arms["thinking_off"] == THINKING_OFF


# The built-ins' continuity arms: providers whose spec lets 'drop' run with reasoning on, and the rest.
DROP: tuple[str, ...] = ("openai", "google", "zai", "xai_chat", "vllm", "llamacpp", "ollama", "chat")
DROP += ("xai", "deepseek_responses", "azure", "mantle")
DROP += ("vllm_responses", "ollama_responses", "lmstudio_responses")
THINKING_OFF: tuple[str, ...] = ("anthropic", "anthropic_bedrock", "anthropic_vertex", "deepseek")
THINKING_OFF += ("openrouter", "moonshot", "bedrock")


# Provider-name string literals outside the provider packages and the simulator, each with its reason.
# Anything else is a provider fact in the wrong room: declare it on the ProviderSpec instead.
ALLOWED_LITERALS = {
    ("adapters/registry.py", "openai"): "the one _BUILTIN line for the built-in provider",
    ("adapters/registry.py", "anthropic"): "the one _BUILTIN line for the built-in provider",
    ("notebook/__init__.py", "openai"): "choose_models: the notebooks' roles and the provider of each",
    ("notebook/__init__.py", "anthropic"): "choose_models: the notebooks' roles and the provider of each",
    ("adapters/registry.py", "google"): "the one _BUILTIN line for the built-in provider",
    ("notebook/__init__.py", "google"): "choose_models: the notebooks' roles and the provider of each",
    ("testing.py", "openai"): "ScriptedAdapter's documented default provider (public API)",
    ("adapters/wire_dialect.py", "openai"): "the SDK (sdk_module) the Responses and Chat dialects share",
}
NAMES = {"openai", "anthropic", "openai_responses", "anthropic_messages"}
NAMES |= {"google", "gemini", "google_gemini"}
GEMINI_PACKAGE = "adapters/google_gemini/"


def _provider_literals() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(
            (
                "adapters/openai_responses/",
                "adapters/anthropic_messages/",
                "adapters/anthropic_platforms/",
                "adapters/openai_chat/",
                "sim/",
            )
        ):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in NAMES:
                found.add((rel, str(node.value)))
    return found


def test_no_provider_name_literal_outside_its_package() -> None:
    found = {(rel, name) for rel, name in _provider_literals() if not rel.startswith(GEMINI_PACKAGE)}
    stray = sorted(found - set(ALLOWED_LITERALS))
    assert not stray, f"provider facts outside the provider's package (use its ProviderSpec): {stray}"


def _only_big_models_refuse(model: str) -> str | None:
    return "this dummy model wants its items back" if model.startswith("big") else None


def test_a_drop_rule_decides_per_model() -> None:
    """A provider whose models differ (a router's backing model) answers per model, not per provider."""
    register_provider(_spec(drop_rule=f"{__name__}:_only_big_models_refuse", drop_with_reasoning=True))
    try:
        with pytest.raises(agentlab.InvalidSettingsError, match="this dummy model wants its items back"):
            agentlab.Run("dummy:big-1", "q", continuation_policy="drop")
        agentlab.Run("dummy:small-1", "q", continuation_policy="drop")  # constructs: the rule allows it
        with pytest.raises(ConfigError, match="drop_rule"):
            _spec(name="dummy2", drop_rule="not a target")
    finally:
        unregister_provider("dummy")
