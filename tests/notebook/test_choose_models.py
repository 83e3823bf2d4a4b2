"""choose_models(): one role per provider (Gemini included); a real model needs its key *and* a model."""

from __future__ import annotations

import pytest

from agentlab.adapters.base import parse_model
from agentlab.adapters.registry import get_provider
from agentlab.notebook import _CHOICES, choose_models

SIMULATED = {
    "openai": "openai:sim-reasoner",
    "anthropic": "anthropic:sim-thinker",
    "openai_small": "openai:sim-reasoner-mini",
    "google": "google:sim-gemini",
    "deepseek": "deepseek:sim-deepseek",
    "openrouter": "openrouter:sim-router-claude",
}


def test_without_keys_every_role_is_simulated() -> None:
    assert choose_models({}) == SIMULATED


def test_every_simulated_choice_is_a_model_its_simulator_serves() -> None:
    for role, model in choose_models({}).items():
        ref = parse_model(model)
        assert ref.model in (get_provider(ref.provider).simulated_model_names() or ()), role


@pytest.mark.parametrize(
    ("env", "role", "expected"),
    [
        (
            {"GEMINI_API_KEY": "k", "AGENTLAB_GOOGLE_MODEL": "gemini-3-pro-preview"},
            "google",
            "google:gemini-3-pro-preview",
        ),
        (
            {"ANTHROPIC_API_KEY": "k", "AGENTLAB_ANTHROPIC_MODEL": " claude-sonnet-4-5 "},
            "anthropic",
            "anthropic:claude-sonnet-4-5",
        ),
        (
            {"OPENAI_API_KEY": "k", "AGENTLAB_OPENAI_SMALL_MODEL": "gpt-5-mini"},
            "openai_small",
            "openai:gpt-5-mini",
        ),
        (
            {"DEEPSEEK_API_KEY": "k", "AGENTLAB_DEEPSEEK_MODEL": "deepseek-reasoner"},
            "deepseek",
            "deepseek:deepseek-reasoner",
        ),
        (
            {"OPENROUTER_API_KEY": "k", "AGENTLAB_OPENROUTER_MODEL": "anthropic/claude-sonnet-4.5"},
            "openrouter",
            "openrouter:anthropic/claude-sonnet-4.5",
        ),
    ],
)  # fmt: skip
def test_a_key_and_a_model_switch_only_that_role(env: dict[str, str], role: str, expected: str) -> None:
    chosen = choose_models(env)
    assert chosen[role] == expected
    assert {r: m for r, m in chosen.items() if r != role} == {r: m for r, m in SIMULATED.items() if r != role}


@pytest.mark.parametrize(
    "env",
    [
        {"GEMINI_API_KEY": "k"},  # a key alone never picks a paid model
        {"AGENTLAB_GOOGLE_MODEL": "gemini-3-pro-preview"},  # nor a model without its key
        {"OPENAI_API_KEY": "k", "AGENTLAB_GOOGLE_MODEL": "gemini-3-pro-preview"},  # another provider's key
        {"GEMINI_API_KEY": "k", "AGENTLAB_GOOGLE_MODEL": "  "},
    ],
)
def test_gemini_stays_simulated_without_both(env: dict[str, str]) -> None:
    assert choose_models(env)["google"] == "google:sim-gemini"


@pytest.mark.parametrize(
    ("env", "role"),
    [
        ({"DEEPSEEK_API_KEY": "k"}, "deepseek"),
        ({"AGENTLAB_DEEPSEEK_MODEL": "deepseek-reasoner"}, "deepseek"),
        ({"OPENAI_API_KEY": "k", "AGENTLAB_OPENROUTER_MODEL": "openai/gpt-5"}, "openrouter"),
        ({"OPENROUTER_API_KEY": "k", "AGENTLAB_DEEPSEEK_MODEL": "deepseek-reasoner"}, "deepseek"),
    ],
)
def test_chat_dialects_stay_simulated_without_their_own_key_and_model(env: dict[str, str], role: str) -> None:
    assert choose_models(env)[role] == SIMULATED[role]


def test_roles_are_data_one_line_per_role() -> None:
    """A new provider is a line of ``_CHOICES``: its key variable comes from its registry entry."""
    assert set(_CHOICES) == set(SIMULATED)
    for provider, _ in _CHOICES.values():
        assert get_provider(provider).api_key_env, provider
