"""Usage that adds up: every recorded usage object, normalized, reconciles its parts with its totals.

agentlab's convention (``agentlab.neutral.usage``): ``input_tokens`` holds the cache, ``output_tokens``
every billed output token with ``reasoning_tokens`` a part of it, and ``total_tokens`` is their sum.
The providers write the same facts differently, which is what this file pins, provider by provider,
on the usage objects of ``../shared/fixtures`` (each response of each recording; for streams, the
usage the stream ends with):

* OpenAI Responses: ``output_tokens`` *includes* ``output_tokens_details.reasoning_tokens``;
  ``total_tokens`` = input + output.
* Anthropic: ``input_tokens`` *excludes* the cache reads and writes; the thinking is *within*
  ``output_tokens`` (no separate count: reasoning stays unknown, never 0).
* Gemini: ``thoughtsTokenCount`` sits *outside* ``candidatesTokenCount``; ``totalTokenCount`` =
  prompt + candidates + thoughts.
* DeepSeek: ``prompt_tokens`` = cache hits + misses; ``completion_tokens`` includes the reasoning.
* OpenRouter, Kimi through Avian (generic ``chat:``), GLM (Z.AI), llama.cpp: ``completion_tokens``
  includes any reasoning; ``total_tokens`` = prompt + completion.
* xAI Chat: ``completion_tokens`` *excludes* the reasoning; ``total_tokens`` = prompt + completion +
  reasoning, and ``cost_in_usd_ticks`` (the billed cost) agrees with that output at grok-3-mini's
  rates.

Kimi's own host (Moonshot) has no recording here; its normalizer is checked on the simulator's
usage only (``test_kimi_usage_from_the_simulator_adds_up``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from agentlab.adapters.registry import get_provider
from agentlab.neutral.usage import CallUsage
from tests.support.cassettes import Exchange, fixture_files, fixtures_dir, load_cassette

pytestmark = pytest.mark.fixtures

Usage = dict[str, Any]


def _openai_usages(ex: Exchange) -> Iterator[Usage]:
    if ex.response_kind == "json":
        yield ex.response_payload["usage"]
    elif ex.response_kind == "sse":
        done = [e for e in ex.sse_events if e.get("type") == "response.completed"]
        yield done[-1]["response"]["usage"]


def _anthropic_usages(ex: Exchange) -> Iterator[Usage]:
    if ex.response_kind == "json":
        yield ex.response_payload["usage"]
    elif ex.response_kind == "sse":  # message_start's usage, updated by message_delta's (cumulative)
        merged: Usage = {}
        for e in ex.sse_events:
            if e.get("type") == "message_start":
                merged.update(e["message"]["usage"])
            elif e.get("type") == "message_delta" and e.get("usage"):
                merged.update({k: v for k, v in e["usage"].items() if v is not None})
        yield merged


def _gemini_usages(ex: Exchange) -> Iterator[Usage]:
    if ex.response_kind == "json":
        yield ex.response_payload["usageMetadata"]
    elif ex.response_kind == "sse":
        yield [e for e in ex.sse_events if e.get("usageMetadata")][-1]["usageMetadata"]


def _chat_usages(ex: Exchange) -> Iterator[Usage]:
    if ex.response_kind == "json":
        yield ex.response_payload["usage"]
    elif ex.response_kind == "sse":
        yield [e for e in ex.sse_events if e.get("usage")][-1]["usage"]


def _chat_provider(ex: Exchange) -> str:
    for host, name in (("openrouter.ai", "openrouter"), ("localhost:8080", "llamacpp"),
                       ("api.x.ai", "xai_chat"), ("api.z.ai", "zai")):  # fmt: skip
        if host in ex.url:
            return name
    return "chat"  # Kimi through Avian: an OpenRouter-style host, the generic dialect


@dataclass(frozen=True)
class Recorded:
    provider: str
    source: str
    usage: Usage

    @property
    def normalized(self) -> CallUsage:
        return get_provider(self.provider).normalize_usage(self.usage)


def _from_cassettes(
    folder: str, usages: Callable[[Exchange], Iterator[Usage]], provider: Callable[[Exchange], str]
) -> Iterator[Recorded]:
    for path in fixture_files(folder):
        for n, ex in enumerate(load_cassette(path)):
            if ex.status == 200:
                for u in usages(ex):
                    yield Recorded(provider(ex), f"{path.name}#{n}", u)


def _from_json_and_chunks() -> Iterator[Recorded]:
    root = fixtures_dir()
    final = root / "openai" / "vercel-ai__store_false_encrypted_reasoning_final.json"
    if final.is_file():
        yield Recorded("openai", final.name, json.loads(final.read_text(encoding="utf-8"))["usage"])
    name = "vercel-ai__deepseek_reasoner_reasoning_content_tool_call_stream.chunks.txt"
    chunks = root / "chat_completions" / name
    if chunks.is_file():
        lines = [json.loads(s) for s in chunks.read_text(encoding="utf-8").splitlines() if s.strip()]
        yield Recorded("deepseek", chunks.name, [c for c in lines if c.get("usage")][-1]["usage"])


def _recorded() -> list[Recorded]:
    out = [
        *_from_cassettes("openai", _openai_usages, lambda ex: "openai"),
        *_from_cassettes("anthropic", _anthropic_usages, lambda ex: "anthropic"),
        *_from_cassettes("gemini", _gemini_usages, lambda ex: "google"),
        *_from_cassettes("chat_completions", _chat_usages, _chat_provider),
        *_from_json_and_chunks(),
    ]
    return out


RECORDED = _recorded()


def _ids(items: list[Recorded]) -> list[str]:
    return [f"{r.provider}:{r.source}" for r in items]


def _of(*providers: str) -> list[Recorded]:
    return [r for r in RECORDED if r.provider in providers]


def _count(d: Usage | None, key: str) -> int:
    value = (d or {}).get(key)
    return int(value) if isinstance(value, int) else 0


def _common(u: CallUsage) -> None:
    """What holds on every provider: the parts inside their wholes, nothing negative."""
    assert u.input_tokens is not None and u.output_tokens is not None
    assert 0 <= (u.cache_read_tokens or 0) + (u.cache_write_tokens or 0) <= u.input_tokens
    assert 0 <= (u.cache_write_1h_tokens or 0) <= (u.cache_write_tokens or 0)
    if u.reasoning_tokens is not None:
        assert 0 <= u.reasoning_tokens <= u.output_tokens
        assert u.non_reasoning_output_tokens == u.output_tokens - u.reasoning_tokens
    assert u.total_tokens == u.input_tokens + u.output_tokens


def test_every_provider_has_recorded_usage_to_reconcile() -> None:
    if not RECORDED:
        pytest.skip("../shared/fixtures is absent (the recordings are read at test time)")
    assert {r.provider for r in RECORDED} >= {
        "openai", "anthropic", "google", "deepseek", "openrouter", "llamacpp", "chat", "xai_chat", "zai",
    }  # fmt: skip


@pytest.mark.parametrize("rec", _of("openai"), ids=_ids(_of("openai")))
def test_openai_output_includes_reasoning_and_the_total_is_input_plus_output(rec: Recorded) -> None:
    u, w = rec.normalized, rec.usage
    _common(u)
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (
        w["input_tokens"], w["output_tokens"], w["total_tokens"],
    )  # fmt: skip
    assert u.reasoning_tokens == w["output_tokens_details"]["reasoning_tokens"]
    assert u.cache_read_tokens == _count(w.get("input_tokens_details"), "cached_tokens")


@pytest.mark.parametrize("rec", _of("anthropic"), ids=_ids(_of("anthropic")))
def test_anthropic_input_adds_the_cache_back_and_thinking_stays_within_output(rec: Recorded) -> None:
    u, w = rec.normalized, rec.usage
    _common(u)
    read, write = _count(w, "cache_read_input_tokens"), _count(w, "cache_creation_input_tokens")
    assert u.input_tokens == w["input_tokens"] + read + write
    assert (u.cache_read_tokens, u.cache_write_tokens) == (read, write)
    assert u.output_tokens == w["output_tokens"]  # thinking included: never added on top
    if "thinking_tokens" not in (w.get("output_tokens_details") or {}):
        assert u.reasoning_tokens is None and u.reasoning_source == "unknown"  # not 0


@pytest.mark.parametrize("rec", _of("google"), ids=_ids(_of("google")))
def test_gemini_thoughts_sit_outside_candidates_and_both_are_output(rec: Recorded) -> None:
    u, w = rec.normalized, rec.usage
    _common(u)
    answer, thoughts = _count(w, "candidatesTokenCount"), _count(w, "thoughtsTokenCount")
    assert u.input_tokens == w["promptTokenCount"] + _count(w, "toolUsePromptTokenCount")
    assert u.output_tokens == answer + thoughts and u.reasoning_tokens == thoughts
    assert u.total_tokens == w["totalTokenCount"]
    assert u.cache_read_tokens == _count(w, "cachedContentTokenCount")


@pytest.mark.parametrize("rec", _of("deepseek"), ids=_ids(_of("deepseek")))
def test_deepseek_prompt_is_hits_plus_misses_and_completion_includes_reasoning(rec: Recorded) -> None:
    u, w = rec.normalized, rec.usage
    _common(u)
    assert w["prompt_tokens"] == w["prompt_cache_hit_tokens"] + w["prompt_cache_miss_tokens"]
    assert u.cache_read_tokens == w["prompt_cache_hit_tokens"]
    assert u.output_tokens == w["completion_tokens"] and u.total_tokens == w["total_tokens"]
    assert u.reasoning_tokens == w["completion_tokens_details"]["reasoning_tokens"]


INCLUSIVE = ("openrouter", "llamacpp", "chat", "zai")


@pytest.mark.parametrize("rec", _of(*INCLUSIVE), ids=_ids(_of(*INCLUSIVE)))
def test_chat_hosts_whose_completion_includes_reasoning(rec: Recorded) -> None:
    u, w = rec.normalized, rec.usage
    _common(u)
    assert u.input_tokens == w["prompt_tokens"] and u.output_tokens == w["completion_tokens"]
    assert u.total_tokens == w["total_tokens"]
    details = w.get("completion_tokens_details")
    if details and details.get("reasoning_tokens") is not None:
        assert u.reasoning_tokens == details["reasoning_tokens"] and u.reasoning_source == "reported"
    else:
        assert u.reasoning_tokens is None and u.reasoning_source == "unknown"  # llama.cpp: not 0
    cached = (w.get("prompt_tokens_details") or {}).get("cached_tokens")
    assert u.cache_read_tokens == cached


@pytest.mark.parametrize("rec", _of("xai_chat"), ids=_ids(_of("xai_chat")))
def test_xai_completion_excludes_reasoning_so_output_is_their_sum(rec: Recorded) -> None:
    u, w = rec.normalized, rec.usage
    _common(u)
    reasoning = w["completion_tokens_details"]["reasoning_tokens"]
    assert w["total_tokens"] == w["prompt_tokens"] + w["completion_tokens"] + reasoning
    assert u.output_tokens == w["completion_tokens"] + reasoning and u.reasoning_tokens == reasoning
    assert u.total_tokens == w["total_tokens"]
    # The billed cost agrees with that output: grok-3-mini at USD 0.30 / 0.075 (cached) / 0.50 per
    # million tokens is 3000 / 750 / 5000 ticks (10^-10 USD) per token.
    cached = u.cache_read_tokens or 0
    assert u.input_tokens is not None and u.output_tokens is not None
    ticks = (u.input_tokens - cached) * 3000 + cached * 750 + u.output_tokens * 5000
    assert ticks == w["cost_in_usd_ticks"]


def test_kimi_usage_from_the_simulator_adds_up() -> None:
    """No Moonshot recording is on file: its normalizer on the simulated host's usage objects."""
    import httpx2

    from agentlab import sim

    body = {"model": "sim-kimi", "messages": [{"role": "user", "content": "What is 12 * (3 + 4)?"}]}
    with httpx2.Client(transport=sim.SimTransport(), base_url=sim.LOCAL_BASE_URL) as c:
        w = c.post("/chat/completions", json=body, headers={"authorization": "Bearer k"}).json()["usage"]
    u = get_provider("moonshot").normalize_usage(w)
    _common(u)
    assert u.total_tokens == w["total_tokens"] and u.cache_read_tokens == w["cached_tokens"]
    assert u.reasoning_tokens is None and u.reasoning_source == "unknown"


def test_the_generic_route_would_undercount_xais_output() -> None:
    """Why xAI needs its own dialect: the generic normalizer reads completion_tokens as all output."""
    recs = _of("xai_chat")
    if not recs:
        pytest.skip("../shared/fixtures/chat_completions is absent")
    for rec in recs:
        generic = get_provider("chat").normalize_usage(rec.usage)
        assert generic.total_tokens != rec.usage["total_tokens"]  # the reasoning tokens are missing


@pytest.mark.parametrize(
    "provider",
    ["openai", "anthropic", "google", "deepseek", "openrouter", "llamacpp", "chat", "moonshot", "zai",
     "xai_chat"],
)
def test_a_usage_without_figures_is_unknown_in_every_part(provider: str) -> None:
    """A response that ended without usage: no part is 0 beside an unknown whole (unknown is unknown)."""
    u = get_provider(provider).normalize_usage({})
    parts = (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens,
             u.output_tokens, u.reasoning_tokens)  # fmt: skip
    assert parts == (None,) * 6 and u.reasoning_source == "unknown"
