"""Issue 16's "Across all" list, item by item, where the other chat modules left a gap.

* DeepSeek's two wordings of its reasoning_content rule (``../shared/fixtures/errors/``) are typed
  errors that also say what to do (the API's text names the rule, not agentlab's fix);
* an error chunk inside a 200 stream is retryable or not by its code;
* ``reasoning_details`` pieces merge by index whatever the chunking (a property test);
* the SDK retries 5xx (simulator faults), not only 429;
* a ``Session`` moving DeepSeek -> OpenRouter -> OpenAI: each run pinned to its provider, the
  earlier provider's opaque items dropped visibly at each switch, none of their bytes sent.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab.adapters.openai_chat import DeepSeekAdapter, OpenRouterAdapter
from agentlab.adapters.openai_chat._details import DetailsMerger
from agentlab.errors import ProviderAPIError, StreamInterruptedError
from agentlab.neutral.events import DiagnosticEvent
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.contract import CASES
from tests.adapters.contract import collect as contract_collect
from tests.adapters.openai_chat.chat_support import SSE, Replay, Served, adapter_on, collect, completed, sse
from tests.support.cassettes import fixtures_dir

# ------------------------------------------------------------------ DeepSeek's rule, named with its fix


@pytest.mark.parametrize(
    "name",
    [
        "issue__deepseek_400_reasoning_content_must_be_passed_back.json",
        "issue__deepseek_400_missing_reasoning_content_field.json",
    ],
)
def test_deepseek_reasoning_content_400_in_either_wording_names_the_fix(name: str) -> None:
    body = (fixtures_dir() / "errors" / name).read_bytes()
    replay = Replay([Served(400, body, "application/json")])
    adapter = adapter_on(DeepSeekAdapter, replay, "deepseek-reasoner", "https://api.deepseek.com")
    with pytest.raises(ProviderAPIError) as info:
        asyncio.run(collect(adapter, ModelRequest(model="deepseek-reasoner", items=(UserItem(text="hi"),))))
    err = info.value
    api_text = json.loads(body)["error"]["message"]
    assert api_text.split(".")[0] in str(err)  # the API's own words stay first
    assert err.status == 400 and err.error_type == "invalid_request_error"
    fix = str(err)[len(api_text) :]
    assert "continuation" in fix and "reasoning_content" in fix and "send_reasoning" in fix


def test_other_deepseek_400s_get_no_fix_clause() -> None:
    body = {"error": {"message": "Invalid max_tokens value", "type": "invalid_request_error", "code": "x"}}
    replay = Replay([Served(400, json.dumps(body).encode(), "application/json")])
    adapter = adapter_on(DeepSeekAdapter, replay, "deepseek-chat", "https://api.deepseek.com")
    with pytest.raises(ProviderAPIError) as info:
        asyncio.run(collect(adapter, ModelRequest(model="deepseek-chat", items=(UserItem(text="hi"),))))
    assert info.value.code == "x" and "continuation" not in str(info.value)


# ------------------------------------------------------------------ in-stream error chunks by code


@pytest.mark.parametrize(
    ("code", "retryable"), [(429, True), (502, True), (503, True), (400, False), (402, False), ("x", False)]
)
def test_openrouter_error_chunk_is_retryable_by_its_code(code: Any, retryable: bool) -> None:
    first = {"id": "gen-1", "choices": [{"index": 0, "delta": {"content": "par"}, "finish_reason": None}]}
    error = {"id": "gen-1", "error": {"code": code, "message": "Upstream said no"}, "choices": []}
    body = b": OPENROUTER PROCESSING\n\n" + sse([first, error], done=False)
    replay = Replay([Served(200, body, SSE)])
    adapter = adapter_on(
        OpenRouterAdapter, replay, "google/gemini-3-pro-preview", "https://openrouter.ai/api/v1"
    )
    req = ModelRequest(model="google/gemini-3-pro-preview", items=(UserItem(text="hi"),))
    with pytest.raises(StreamInterruptedError) as info:
        asyncio.run(collect(adapter, req))
    err = info.value
    assert err.retryable is retryable and err.code == str(code) and "Upstream said no" in str(err)


# ------------------------------------------------------------------ reasoning_details in any chunking

_TYPES = ("reasoning.text", "reasoning.encrypted", "reasoning.summary")
_words = st.text(alphabet="abc xyz", min_size=0, max_size=12)


@st.composite
def _details_stream(draw: st.DrawFn) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Merged details and one streaming of them.

    Per item: its text in pieces, decoy values for signature/data/id before the final one, nulls
    after it, the format first null then set; the items' pieces interleaved (each item's own order
    kept) and cut into deltas of random sizes.
    """
    n = draw(st.integers(1, 4))
    per_item: list[list[dict[str, Any]]] = []
    expected: list[dict[str, Any]] = []
    for i in range(n):
        kind = draw(st.sampled_from(_TYPES))
        field = "summary" if kind == "reasoning.summary" else "text"
        parts = draw(st.lists(_words, min_size=1, max_size=5))
        pieces: list[dict[str, Any]] = [{"type": kind, "index": i, "format": None, field: parts[0]}]
        pieces += [{"index": i, field: p} for p in parts[1:]]
        want: dict[str, Any] = {"type": kind, "index": i, field: "".join(parts), "format": f"fmt-{i}"}
        pieces.insert(draw(st.integers(1, len(pieces))), {"index": i, "format": f"fmt-{i}"})
        for key in ("signature", "data", "id"):
            values = draw(st.lists(st.text("SDI0123", min_size=1, max_size=4), max_size=3))
            for v in values:
                at = draw(st.integers(1, len(pieces)))
                pieces.insert(at, {"index": i, key: v})
            if values:
                want[key] = values[-1]
                last = max(k for k, p in enumerate(pieces) if p.get(key) == values[-1] and key in p)
                # the final value must be the last non-null one: nulls may follow, decoys may not
                pieces = [p for k, p in enumerate(pieces) if not (k > last and key in p)]
                pieces.insert(draw(st.integers(last + 1, len(pieces))), {"index": i, key: None})
            else:
                want[key] = None
                pieces.append({"index": i, key: None})
        per_item.append(pieces)
        expected.append(want)
    order = draw(st.permutations([i for i, ps in enumerate(per_item) for _ in ps]))
    cursors = [0] * n
    flat: list[dict[str, Any]] = []
    for i in order:
        flat.append(per_item[i][cursors[i]])
        cursors[i] += 1
    deltas: list[list[dict[str, Any]]] = []
    while flat:
        k = draw(st.integers(1, max(1, min(4, len(flat)))))
        deltas.append(flat[:k])
        flat = flat[k:]
    return deltas, expected


@settings(max_examples=150, deadline=None)
@given(_details_stream())
def test_reasoning_details_merge_by_index_in_any_chunking(
    case: tuple[list[list[dict[str, Any]]], list[dict[str, Any]]],
) -> None:
    deltas, expected = case
    merger = DetailsMerger()
    shown = "".join(merger.add(d) for d in deltas)
    assert merger.items == expected
    texts = [p.get("text") or p.get("summary") or "" for d in deltas for p in d]
    assert shown == "".join(texts)  # display text in arrival order, nothing else


# ------------------------------------------------------------------ retries by the SDK


@pytest.mark.parametrize("case_name", ["deepseek", "openrouter-gemini", "vllm"])
@pytest.mark.parametrize("fault", ["500x1", "529x1", "429x2"])
def test_the_sdk_retries_transient_statuses(case_name: str, fault: str) -> None:
    case = CASES[case_name]
    adapter, transport = case.adapter(max_retries=2, default_fault=fault, retry_after_ms=1)
    request = ModelRequest(model=case.model, items=(UserItem(text="What is 12 * (3 + 4)?"),))
    resp = completed(asyncio.run(contract_collect(adapter, request)))
    assert "84" in resp.text and len(transport.bodies) == int(fault[-1]) + 1


def test_without_retries_a_5xx_is_raised_after_one_request() -> None:
    from agentlab.errors import ProviderServerError

    adapter, transport = CASES["deepseek"].adapter(max_retries=0, default_fault="500x1")
    with pytest.raises(ProviderServerError):
        asyncio.run(
            contract_collect(adapter, ModelRequest(model="sim-deepseek", items=(UserItem(text="hi"),)))
        )
    assert len(transport.bodies) == 1


# ------------------------------------------------------------------ one Session across three providers

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Florence, Italy": "21 C, clear"}


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return TEMPS.get(city, "no data")


async def _session_across_three_providers() -> dict[str, Any]:
    s = al.Session()
    seen: dict[str, Any] = {}
    for model, case_name in (
        ("deepseek:sim-deepseek", "deepseek"),
        ("openrouter:sim-router-gemini", "openrouter-gemini"),
        ("openai:sim-reasoner", "openai"),
    ):
        adapter, transport = CASES[case_name].adapter()
        task = "What's the weather in Florence, Italy?"
        r = await s.arun(model, task, tools=[get_weather], adapter=adapter)
        seen[case_name] = (r, transport)
    return seen


def test_a_session_moving_deepseek_openrouter_openai_pins_each_run_and_drops_visibly() -> None:
    seen = asyncio.run(_session_across_three_providers())
    ds, _ = seen["deepseek"]
    assert ds.status == "completed" and "21 C" in (ds.output or "")
    assert {c.provider for c in ds.calls} == {"deepseek"}
    for name, provider in (("openrouter-gemini", "openrouter"), ("openai", "openai")):
        r, transport = seen[name]
        assert r.status == "completed" and "21 C" in (r.output or ""), (name, r.status)
        assert {c.provider for c in r.calls} == {provider}  # pinned: every call of the run on one provider
        drops = [e for e in r.events if isinstance(e, DiagnosticEvent) and e.code == "reasoning_item_dropped"]
        assert drops and drops[0].data["reason"] == "provider_switch" and drops[0].data["count"] >= 1, name
        assert r.calls[0].reasoning_items_dropped >= 1
        sent = b"".join(transport.bodies)
        assert b"What's the weather" in sent  # the portable history crossed over
    # the first run's reasoning text (DeepSeek's reasoning_content) never reached the other providers
    ds_transport = seen["deepseek"][1]
    ds_reasoning = [
        m["reasoning_content"]
        for body in ds_transport.bodies
        for m in json.loads(body)["messages"]
        if isinstance(m.get("reasoning_content"), str) and m["reasoning_content"]
    ]
    assert ds_reasoning, "the DeepSeek loop sent its reasoning_content back (positive control)"
    for name in ("openrouter-gemini", "openai"):
        text_sent = b"".join(seen[name][1].bodies).decode()
        assert not any(json.dumps(text)[1:-1] in text_sent for text in ds_reasoning), name
        assert '"reasoning_content"' not in text_sent, name
    # and OpenRouter's reasoning_details (Gemini's encrypted signatures) never reached OpenAI
    details = [
        d["data"]
        for body in seen["openrouter-gemini"][1].bodies
        for m in json.loads(body)["messages"]
        for d in m.get("reasoning_details") or ()
        if isinstance(d.get("data"), str)
    ]
    assert details, "the OpenRouter loop sent its reasoning_details back (positive control)"
    assert not any(d.encode() in b"".join(seen["openai"][1].bodies) for d in details)


# ------------------------------------------------------------------ settings refused before sending


@pytest.mark.parametrize(
    ("case_name", "settings", "field"),
    [
        ("deepseek", {"budget_tokens": 1000}, "budget_tokens"),
        ("vllm", {"budget_tokens": 1000}, "budget_tokens"),
        ("ollama", {"budget_tokens": 1000}, "budget_tokens"),
        ("openrouter", {"effort": "low", "budget_tokens": 1000}, "effort"),
    ],
)
def test_a_setting_the_dialect_has_no_field_for_is_refused_before_anything_is_sent(
    case_name: str, settings: dict[str, Any], field: str
) -> None:
    from agentlab.errors import InvalidSettingsError
    from agentlab.neutral.request import ReasoningSettings

    case = CASES[case_name]
    adapter, transport = case.adapter()
    req = ModelRequest(
        model=case.model, items=(UserItem(text="hi"),), reasoning=ReasoningSettings(**settings)
    )
    with pytest.raises(InvalidSettingsError, match=field):
        asyncio.run(contract_collect(adapter, req))
    assert transport.bodies == []  # refused before sending


@pytest.mark.parametrize("case_name", ["deepseek", "openrouter", "vllm", "ollama"])
@pytest.mark.parametrize("stream", [True, False])
def test_every_dialect_asks_for_usage_in_its_stream(case_name: str, stream: bool) -> None:
    """``stream_options.include_usage`` on streamed requests only.

    Without it a stream ends without usage; servers reject stream_options without stream.
    """
    case = CASES[case_name]
    adapter, transport = case.adapter()
    req = ModelRequest(model=case.model, items=(UserItem(text="What is 12 * (3 + 4)?"),), stream=stream)
    resp = completed(asyncio.run(contract_collect(adapter, req)))
    sent = transport.last_json
    assert sent.get("stream", False) is stream
    assert sent.get("stream_options") == ({"include_usage": True} if stream else None)
    assert resp.usage.input_tokens and resp.usage.output_tokens


def test_the_contract_cases_say_what_the_simulated_profiles_report() -> None:
    """A case's ``unreported_usage`` is the simulator profile's fact, not a guess made to pass."""
    from agentlab.sim.chat.dialects import PROFILES

    chat_cases = [c for c in CASES.values() if c.model in PROFILES]
    assert len(chat_cases) == 9  # DeepSeek, OpenRouter x3, vLLM, Ollama, Kimi, GLM, xAI Chat
    for case in chat_cases:
        reports = PROFILES[case.model].reasoning_tokens
        assert ("reasoning_tokens" not in case.unreported_usage) is reports, case.name
