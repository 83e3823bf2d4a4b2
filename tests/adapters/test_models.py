"""Model-capability tables (``adapters/*/_models.py``): lookups and the documented defaults.

Per rule, one request that goes out as the table says or is refused before sending.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest

from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.anthropic_messages import _models as ant
from agentlab.adapters.openai_responses import _models as oai
from agentlab.adapters.openai_responses import build_request
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import CacheHints, ModelRequest, ReasoningSettings
from tests.adapters.anthropic_messages.anthropic_support import sdk_client

BASE = "https://api.openai.com/v1"


def _lits(t: Any) -> list[str]:
    out: list[str] = []
    for a in typing.get_args(t):
        if typing.get_origin(a) is typing.Literal:
            out += [x for x in typing.get_args(a) if isinstance(x, str)]
        elif a is not str:
            out += _lits(a)
    return out


def oai_body(model: str, **kw: Any) -> dict[str, Any]:
    kw.setdefault("cache", None)
    request = ModelRequest(items=(UserItem(text="q"),), model=model, **kw)
    out: dict[str, Any] = json.loads(build_request(request, model=model, base_url=BASE).body)
    return out


def ant_build(model: str, **kw: Any) -> Any:
    kw.setdefault("cache", None)
    request = ModelRequest(items=(UserItem(text="q"),), model=model, **kw)
    return AnthropicMessagesAdapter(model, client=sdk_client(lambda r: None)).build(request)


# ------------------------------------------------------------------------------ OpenAI: the table


def test_every_current_sdk_model_has_a_row() -> None:
    from openai.types.shared.chat_model import ChatModel
    from openai.types.shared.responses_model import ResponsesModel

    names = set(_lits(ChatModel)) | set(_lits(ResponsesModel))
    current = sorted(n for n in names if n.startswith(("gpt-5", "gpt-6", "o1", "o3", "o4")))
    assert len(current) > 40
    unknown = [n for n in current if not oai.capabilities(n).known]
    # deep-research / preview names fall to the documented default (reasoning, effort unchecked)
    assert all(oai.capabilities(n).reasoning for n in unknown), unknown
    assert not [n for n in unknown if n.startswith(("gpt-5", "gpt-6"))], unknown


@pytest.mark.parametrize(
    ("model", "family", "reasoning", "cache"),
    [
        ("gpt-6.1-sol", "gpt-5.6 / gpt-6", True, "options"),
        ("gpt-5.6-luna", "gpt-5.6 / gpt-6", True, "options"),
        ("gpt-5.5-2026-04-23", "gpt-5.4 / gpt-5.5", True, "retention"),
        ("gpt-5.2-chat-latest", "gpt-5 chat", False, "retention"),
        ("gpt-5-pro-2025-10-06", "gpt-5-pro", True, "retention"),
        ("gpt-5.3-codex", "gpt-5.x-codex", True, "retention"),
        ("o4-mini-2025-04-16", "o-series", True, None),
        ("gpt-4.1-mini", "gpt-4.1", False, "retention"),
        ("gpt-4o", "gpt-4o / gpt-4 / gpt-3.5", False, None),
        ("ft:gpt-5-mini-2025-08-07:org::abc", "gpt-5", True, "retention"),
        ("sim-reasoner+fault=429x1", "simulated", True, None),
    ],
)
def test_openai_rows(model: str, family: str, reasoning: bool, cache: str | None) -> None:
    caps = oai.capabilities(model)
    assert (caps.family, caps.reasoning, caps.cache, caps.known) == (family, reasoning, cache, True)
    assert caps.encrypted_reasoning == reasoning


def test_openai_default_for_unknown_names() -> None:
    future = oai.capabilities("gpt-7-nova")
    assert not future.known and future.reasoning and future.efforts is None and future.cache == "options"
    assert oai.capabilities("o9-mini").reasoning and not oai.capabilities("o9-mini").known
    other = oai.capabilities("my-local-model")
    assert not other.known and not other.reasoning and other.sampling == "always"
    assert not oai.capabilities("gpt-9-chat").reasoning  # -chat variants answer without reasoning


def test_openai_effort_values_by_family() -> None:
    assert oai.accepts_effort("gpt-5", "minimal") and not oai.accepts_effort("gpt-5", "none")
    assert not oai.accepts_effort("gpt-5.1", "minimal") and oai.accepts_effort("gpt-5.1", "none")
    assert not oai.accepts_effort("gpt-5.1", "xhigh") and oai.accepts_effort("gpt-5.2", "xhigh")
    assert oai.accepts_effort("gpt-6-sol", "max") and not oai.accepts_effort("gpt-5.5", "max")
    assert not oai.accepts_effort("gpt-5.3-codex", "none") and not oai.accepts_effort("o3", "minimal")
    assert oai.accepts_effort("gpt-7-nova", "max")  # unknown: not checked here, the API decides
    assert [e for e in oai.ALL_EFFORTS if oai.accepts_effort("gpt-5-pro", e)] == ["high"]


def test_openai_sampling_rule_for_the_knobs() -> None:
    assert oai.sampling_allowed("gpt-4.1", None) and oai.sampling_allowed("my-local-model", "high")
    assert oai.sampling_allowed("gpt-5.4", "none") and not oai.sampling_allowed("gpt-5.4", "low")
    assert not oai.sampling_allowed("gpt-5.4", None)  # the default effort is not "none" everywhere
    assert not oai.sampling_allowed("gpt-6-sol", "none") and not oai.sampling_allowed("o3", None)


def test_effort_values_come_from_the_sdk_type() -> None:
    from openai.types.shared.reasoning_effort import ReasoningEffort

    assert set(oai.ALL_EFFORTS) == set(_lits(ReasoningEffort))


# ------------------------------------------------------------------------------ OpenAI: on the wire


def test_wire_reasoning_model_asks_for_encrypted_reasoning_and_a_plain_one_does_not() -> None:
    assert oai_body("gpt-6.1-sol")["include"] == ["reasoning.encrypted_content"]
    assert "include" not in oai_body("gpt-4.1")
    assert "include" not in oai_body("my-local-model")


def test_wire_max_effort_on_the_families_that_take_it() -> None:
    b = oai_body("gpt-6-sol", reasoning=ReasoningSettings(effort="max"))
    assert b["reasoning"]["effort"] == "max"
    with pytest.raises(InvalidSettingsError, match="'max' is Anthropic's"):
        oai_body("gpt-5.5", reasoning=ReasoningSettings(effort="max"))


@pytest.mark.parametrize(
    ("model", "effort"), [("gpt-5.1", "minimal"), ("gpt-5.5", "minimal"), ("gpt-5", "xhigh"), ("o3", "xhigh")]
)
def test_refused_effort_values_the_api_answers_400(model: str, effort: Any) -> None:
    with pytest.raises(InvalidSettingsError, match=f"does not accept reasoning effort '{effort}'"):
        oai_body(model, reasoning=ReasoningSettings(effort=effort))


def test_wire_reasoning_off_only_where_effort_none_exists() -> None:
    assert oai_body("gpt-5.4", reasoning=ReasoningSettings(enabled=False))["reasoning"] == {"effort": "none"}
    with pytest.raises(InvalidSettingsError, match="cannot turn reasoning off"):
        oai_body("gpt-5.3-codex", reasoning=ReasoningSettings(enabled=False))


def test_wire_long_cache_lifetime_by_family() -> None:
    hints = CacheHints(ttl="24h")
    assert oai_body("gpt-5.5", cache=hints)["prompt_cache_retention"] == "24h"
    opts = oai_body("gpt-5.6-terra", cache=hints)
    assert opts["prompt_cache_options"] == {"ttl": "12h"} and "prompt_cache_retention" not in opts
    o3 = oai_body("o3", cache=hints)
    assert "prompt_cache_retention" not in o3 and "prompt_cache_options" not in o3 and o3["prompt_cache_key"]


# --------------------------------------------------------------------------- Anthropic: the table


def test_every_current_anthropic_sdk_model_has_a_row() -> None:
    from anthropic.types.model_param import ModelParam

    names = _lits(ModelParam)
    assert len(names) >= 15
    assert [n for n in names if not ant.capabilities(n).known] == []


@pytest.mark.parametrize(
    ("model", "budgeted", "adaptive", "efforts"),
    [
        ("claude-fable-5-2", False, True, set(ant.ALL_EFFORTS)),
        ("claude-mythos-preview", False, True, set(ant.ALL_EFFORTS)),
        ("claude-opus-4-7", False, True, set(ant.ALL_EFFORTS)),
        ("claude-opus-5-5", None, True, set(ant.ALL_EFFORTS)),
        ("claude-opus-4-6", True, True, {"low", "medium", "high", "max"}),
        ("claude-sonnet-4-6", True, True, {"low", "medium", "high", "max"}),
        ("claude-opus-4-5-20251101", True, False, {"low", "medium", "high"}),
        ("claude-haiku-4-5-20251001", True, False, set()),
        ("claude-sonnet-4-0", True, False, set()),
        ("sim-thinker+fault=429x1", True, True, {"low", "medium", "high", "max"}),
    ],
)
def test_anthropic_rows(model: str, budgeted: bool | None, adaptive: bool, efforts: set[str]) -> None:
    caps = ant.capabilities(model)
    assert caps.known and caps.thinking
    assert (caps.budgeted, caps.adaptive) == (budgeted, adaptive)
    assert caps.efforts == frozenset(efforts)


def test_anthropic_default_for_unknown_names() -> None:
    caps = ant.capabilities("claude-nova-9")
    assert not caps.known and caps.thinking and caps.budgeted is None and caps.adaptive is None
    assert caps.efforts is None and not caps.adaptive_default and caps.interleaved_beta
    assert ant.accepts_effort("claude-nova-9", "xhigh") and not ant.adaptive_preferred("claude-nova-9")
    assert not ant.capabilities("claude-3-5-haiku-latest").thinking


def test_effort_values_come_from_the_anthropic_sdk_type() -> None:
    from anthropic.types.output_config_param import OutputConfigParam

    hints = typing.get_type_hints(OutputConfigParam)
    assert set(ant.ALL_EFFORTS) == set(_lits(hints["effort"]))


# ------------------------------------------------------------------------- Anthropic: on the wire


def test_wire_adaptive_only_models_get_adaptive_thinking_with_the_effort() -> None:
    body = ant_build("claude-opus-5", reasoning=ReasoningSettings(effort="xhigh")).body
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "xhigh"}
    fable = ant_build("claude-fable-5-2", reasoning=ReasoningSettings()).body
    assert fable["thinking"] == {"type": "adaptive"}


def test_budget_on_an_adaptive_only_model_is_refused() -> None:
    with pytest.raises(InvalidSettingsError, match="adaptive thinking only"):
        ant_build("claude-opus-4-7", reasoning=ReasoningSettings(budget_tokens=4096))


def test_adaptive_on_a_budget_only_model_is_refused() -> None:
    with pytest.raises(InvalidSettingsError, match="does not take adaptive thinking"):
        ant_build("claude-sonnet-4-5", reasoning=ReasoningSettings(adaptive=True))


def test_effort_the_model_does_not_offer_is_refused_as_the_recorded_400_says() -> None:
    # ../shared/fixtures/errors/pydantic-ai__anthropic_400_effort_unsupported.yaml: claude-opus-4-6
    # answers 400 "This model does not support effort level 'xhigh'. Supported levels: high, low, max,
    # medium."
    with pytest.raises(InvalidSettingsError, match="'xhigh' is not offered by claude-opus-4-6"):
        ant_build("claude-opus-4-6", reasoning=ReasoningSettings(adaptive=True, effort="xhigh"))
    ok = ant_build("claude-opus-4-6", reasoning=ReasoningSettings(adaptive=True, effort="max")).body
    assert ok["output_config"] == {"effort": "max"}


def test_interleaved_beta_by_family() -> None:
    built = ant_build("claude-sonnet-4-5", reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True))
    assert built.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    with pytest.raises(InvalidSettingsError, match="Claude 4"):
        ant_build(
            "claude-3-7-sonnet-latest", reasoning=ReasoningSettings(budget_tokens=2048, interleaved=True)
        )


def test_thinking_on_a_model_without_it_is_refused() -> None:
    with pytest.raises(InvalidSettingsError, match="has no extended thinking"):
        ant_build("claude-3-5-haiku-latest", reasoning=ReasoningSettings(budget_tokens=2048))
    assert "thinking" not in ant_build("claude-3-5-haiku-latest", reasoning=None).body


def test_unknown_claude_name_is_sent_as_asked() -> None:
    body = ant_build("claude-nova-9", reasoning=ReasoningSettings(effort="low")).body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    adaptive = ant_build("claude-nova-9", reasoning=ReasoningSettings(adaptive=True, effort="xhigh")).body
    assert adaptive["output_config"] == {"effort": "xhigh"}
