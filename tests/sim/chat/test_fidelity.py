"""Fidelity: the Chat Completions stream grammar of the recordings, checked on them and on the simulator.

The grammar is derived at test time from ``../shared/fixtures/chat_completions`` (and OpenRouter's
recorded in-stream error): per dialect, the ordered key lists of chunk envelopes and choices, the
key sets of deltas, tool-call pieces and ``reasoning_details`` pieces, and the usage keys. The
ordering rules are written here and checked on the recordings first, so a rule the real hosts break
cannot survive. Documented differences: llama.cpp's ``timings`` are left out (measurements, not
invented); OpenRouter's Claude signature delta and ``reasoning.summary`` pieces are allowed though no
streamed recording holds them (:data:`DOCUMENTED_DETAIL_KEYS`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentlab import sim
from tests.sim.chat.helpers import client, run_loop
from tests.support.cassettes import fixtures_dir, load_cassette, load_chunks

pytestmark = pytest.mark.fixtures

Stream = list[dict[str, Any]]
OMITTED_ENVELOPE_KEYS = {"timings"}
#: Pieces documented but not in a streamed recording: Anthropic's signature in its own delta after the
#: text (the fixtures' notes) and OpenRouter's ``reasoning.summary`` item (its reasoning-tokens guide).
DOCUMENTED_DETAIL_KEYS = {
    frozenset({"type", "signature", "format", "index"}),
    frozenset({"type", "summary", "format", "index"}),
}


def _data(text: str) -> list[str]:
    return [b for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]


def _chunks(text: str) -> Stream:
    return [json.loads(b[5:]) for b in _data(text) if b.startswith("data:") and b[5:].strip() != "[DONE]"]


def _dialect_of(url: str) -> str:
    """The dialect whose rules a recorded host follows.

    Another host (xAI, Kimi through Avian, Z.AI) is checked against the rules every Chat Completions
    stream obeys, not one dialect's own.
    """
    if "openrouter.ai" in url:
        return "openrouter"
    return "local" if "localhost:8080" in url else "hosted"


def recorded() -> dict[str, list[tuple[str, str | None, Stream]]]:
    """Every recorded 200 stream per dialect: (name, raw text or None, chunks)."""
    root = fixtures_dir()
    out: dict[str, list[tuple[str, str | None, Stream]]] = {"deepseek": [], "openrouter": [], "local": []}
    files = sorted((root / "chat_completions").glob("*.yaml"))
    files.append(root / "errors" / "pydantic-ai__openrouter_in_stream_error_chunk_reasoning_details.yaml")
    for path in files:
        for n, ex in enumerate(load_cassette(path)):
            if ex.response_kind == "sse" and ex.status == 200:
                stream = (f"{path.name}#{n}", ex.response_text, _chunks(ex.response_text or ""))
                out.setdefault(_dialect_of(ex.url), []).append(stream)
    for path in sorted((root / "chat_completions").glob("*deepseek*.chunks.txt")):
        for n, group in enumerate(load_chunks(path)):
            out["deepseek"].append((f"{path.name}#{n}", None, group))
    assert all(out.values()), "a dialect has no recorded stream"
    return out


def _errorless(streams: list[tuple[str, str | None, Stream]]) -> list[Stream]:
    return [s for _, _, s in streams if not any("error" in c for c in s)]


# -- the grammar -------------------------------------------------------------------------------------


def grammar(streams: list[Stream]) -> dict[str, set[Any]]:
    g: dict[str, set[Any]] = {k: set() for k in ("envelope", "choice", "delta", "call", "function", "detail")}
    for s in streams:
        for c in s:
            if "error" in c:
                continue
            g["envelope"].add(tuple(k for k in c if k not in OMITTED_ENVELOPE_KEYS))
            for ch in c["choices"]:
                g["choice"].add(tuple(ch))
                g["delta"].add(frozenset(ch["delta"]))
                for tc in ch["delta"].get("tool_calls") or []:
                    g["call"].add(tuple(tc))
                    g["function"].add(tuple(tc["function"]))
                for d in ch["delta"].get("reasoning_details") or []:
                    g["detail"].add(frozenset(d))
    return g


def usage_keys(streams: list[Stream]) -> set[str]:
    out = set()
    for s in streams:
        for c in s:
            if c.get("usage"):
                out.add(
                    json.dumps({k: sorted(v) if isinstance(v, dict) else None for k, v in c["usage"].items()})
                )
    return out


def check_order(s: Stream, raw: str | None, dialect: str) -> None:
    """Ordering rules every recorded stream obeys (and the simulator's must)."""
    with_choices = [c for c in s if c["choices"] and "error" not in c]
    finish_at = [i for i, c in enumerate(with_choices) if c["choices"][0]["finish_reason"] is not None]
    assert finish_at and finish_at[0] >= len(with_choices) - 2, "finish_reason only on the closing chunk(s)"
    usage_at = [i for i, c in enumerate(s) if c.get("usage")]
    assert usage_at in ([], [len(s) - 1]), "usage only on the last chunk"
    kinds = []
    for c in with_choices:
        d = c["choices"][0]["delta"]
        if d.get("reasoning_content") or d.get("reasoning"):
            kinds.append("reasoning")
        if d.get("tool_calls"):
            kinds.append("call")
    assert "reasoning" not in kinds[kinds.index("call") :] if "call" in kinds else True, (
        "reasoning before calls"
    )
    seen: set[int] = set()
    for c in with_choices:
        for tc in c["choices"][0]["delta"].get("tool_calls") or []:
            assert ("id" in tc) == (tc["index"] not in seen), (
                "a call's first piece carries its id, later ones do not"
            )
            seen.add(tc["index"])
    if dialect == "local":
        assert s[-1]["choices"] == [] or not usage_at, "llama.cpp: usage on a choices-less last chunk"
    if raw is not None:
        blocks = _data(raw)
        assert blocks[-1] == "data: [DONE]"
        first_data = next(i for i, b in enumerate(blocks) if b.startswith("data:"))
        assert all(b.startswith(":") for b in blocks[:first_data])
        if dialect == "openrouter":
            assert blocks[0] == ": OPENROUTER PROCESSING"


# -- simulated streams ----------------------------------------------------------------------------------

CASES = {
    "deepseek": ("/chat/completions", "sim-deepseek", {}),
    "local": ("/v1/chat/completions", "sim-local", {}),
    "openrouter": ("/api/v1/chat/completions", "sim-router-gemini", {}),
    "openrouter-claude": (
        "/api/v1/chat/completions",
        "sim-router-claude",
        {"reasoning": {"effort": "medium"}},
    ),
    "openrouter-openai": ("/api/v1/chat/completions", "sim-router-openai", {}),
}


async def simulated(case: str) -> list[tuple[str, Stream]]:
    """Every request of a simulated tool loop, re-sent streamed: (raw text, chunks)."""
    path, model, extra = CASES[case]
    dialect = case.split("-")[0]
    _, msgs, _ = await run_loop(client(dialect), model, extra_body=extra)
    t = sim.SimTransport()
    out = []
    with httpx2.Client(transport=t, base_url="http://sim.agentlab.local") as c:
        for i, m in enumerate(msgs):
            if m["role"] != "assistant":
                continue
            body = {"model": model, "messages": msgs[:i], "stream": True, **extra}
            body |= {"stream_options": {"include_usage": True}, "tools": [_tool()]}
            r = c.post(path, json=body, headers={"authorization": "Bearer k"})
            assert r.status_code == 200, r.text
            out.append((r.text, _chunks(r.text)))
    assert len(out) >= 2
    return out


def _tool() -> dict[str, Any]:
    from tests.sim.chat.helpers import WEATHER_TOOL

    return WEATHER_TOOL


# -- tests ----------------------------------------------------------------------------------------------


def test_recordings_obey_the_ordering_rules() -> None:
    for dialect, streams in recorded().items():
        for name, raw, s in streams:
            try:
                check_order(s, raw, dialect)
            except AssertionError as exc:
                raise AssertionError(f"{name}: {exc}") from exc


@pytest.mark.parametrize("case", list(CASES))
async def test_simulated_streams_follow_the_recorded_grammar(case: str) -> None:
    dialect = case.split("-")[0]
    rec = recorded()[dialect]
    want = grammar([s for _, _, s in rec])
    sims = await simulated(case)
    got = grammar([s for _, s in sims])
    for part in ("envelope", "choice", "delta", "call", "function"):
        assert got[part] <= want[part], (part, got[part] - want[part])
    assert got["detail"] <= want["detail"] | DOCUMENTED_DETAIL_KEYS, got["detail"] - want["detail"]
    assert usage_keys([s for _, s in sims]) <= usage_keys(_errorless(rec))
    for raw, s in sims:
        check_order(s, raw, dialect)


async def test_gemini_encrypted_detail_comes_whole_before_the_calls() -> None:
    for streams in (
        [s for _, _, s in recorded()["openrouter"] if "gemini" in s[0]["model"]],
        [s for _, s in await simulated("openrouter")],
    ):
        for s in streams:
            deltas = [c["choices"][0]["delta"] for c in s if c["choices"]]
            if not any(d.get("tool_calls") for d in deltas):
                continue
            first_call = next(i for i, d in enumerate(deltas) if d.get("tool_calls"))
            enc = [i for i, d in enumerate(deltas) if d.get("reasoning_details")]
            assert enc and enc[0] < first_call


def test_recorded_claude_body_shape_matches_the_simulated_one() -> None:
    path = (
        fixtures_dir()
        / "chat_completions"
        / "fantasy__openrouter_claude_reasoning_details_signature_tool_loop_nonstream.yaml"
    )
    ex = load_cassette(Path(path))[0]
    rec = ex.response_payload
    r = httpx2.Client(transport=sim.SimTransport(), base_url="http://sim.agentlab.local").post(
        "/api/v1/chat/completions",
        json={
            "model": "sim-router-claude",
            **{k: v for k, v in (ex.request_json or {}).items() if k != "model"},
        },
        headers={"authorization": "Bearer k"},
    )
    got = r.json()
    assert list(got) == list(rec)
    assert list(got["choices"][0]) == list(rec["choices"][0])
    assert list(got["choices"][0]["message"]) == list(rec["choices"][0]["message"])
    assert list(got["choices"][0]["message"]["tool_calls"][0]) == list(
        rec["choices"][0]["message"]["tool_calls"][0]
    )
    assert set(got["choices"][0]["message"]["reasoning_details"][0]) == set(
        rec["choices"][0]["message"]["reasoning_details"][0]
    )
    assert usage_keys([[got]]) == usage_keys([[rec]])
    assert (
        got["choices"][0]["finish_reason"] == "tool_calls"
        and got["choices"][0]["native_finish_reason"] == "tool_use"
    )


@pytest.mark.parametrize(
    ("name", "path", "calls_tool"),
    [
        # "Add and multiply the number 2 and 3" is outside the planner's task family: a direct reply
        (
            "fantasy__openrouter_gemini_reasoning_encrypted_parallel_loop_stream.yaml",
            "/api/v1/chat/completions",
            False,
        ),
        (
            "fantasy__openrouter_claude_reasoning_details_signature_tool_loop_nonstream.yaml",
            "/api/v1/chat/completions",
            True,
        ),
        ("fantasy__llamacpp_gpt_oss_reasoning_content_tool_loop_stream.yaml", "/v1/chat/completions", True),
    ],
)
def test_recorded_first_requests_are_served_under_their_real_names(
    name: str, path: str, calls_tool: bool
) -> None:
    """With ``real_models`` on (the loopback default) a recorded request runs as sent, labelled simulated."""
    ex = load_cassette(fixtures_dir() / "chat_completions" / name)[0]
    body = ex.request_json or {}
    with httpx2.Client(
        transport=sim.SimTransport(real_models=True), base_url="http://sim.agentlab.local"
    ) as c:
        r = c.post(path, json=body, headers={"authorization": "Bearer k"})
    assert r.status_code == 200, r.text
    assert r.headers["x-agentlab-simulated"].startswith("sim-")
    chunks = _chunks(r.text) if body.get("stream") else [json.loads(r.text)]
    assert chunks[0]["model"].startswith(body["model"] + " (simulated by agentlab")
    calls = [
        tc
        for c in chunks
        for ch in c["choices"]
        for tc in (ch.get("delta") or ch.get("message") or {}).get("tool_calls") or []
    ]
    assert bool(calls) == calls_tool
