"""Fidelity: a stream grammar derived from real recordings, checked on the recordings and on the simulator.

The grammar is not a copy of any recording. At test time it is *derived* from every recorded stream
under ``../shared/fixtures``: the set of event types, the field names every recorded event of a
type carries (intersection over all recordings), the same for nested objects (content blocks by
type, deltas by type, output items by type). Ordering rules are written here and checked against
the recordings first (so a rule the real API breaks cannot survive), then against the simulator.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab import sim
from agentlab.sim.reasoner import MAGIC_REDACTED
from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, TEMPS, raw_post
from tests.support.cassettes import fixtures_dir, load_cassette, load_chunks, parse_sse

pytestmark = pytest.mark.fixtures

Stream = list[dict[str, Any]]


# -- recorded streams ------------------------------------------------------------------------------


def recorded_streams(provider: str) -> list[tuple[str, Stream]]:
    root = fixtures_dir() / provider
    out: list[tuple[str, Stream]] = []
    for path in sorted(root.glob("*.yaml")):
        for n, ex in enumerate(load_cassette(path)):
            if ex.response_kind == "sse" and ex.status == 200:
                out.append((f"{path.name}#{n}", ex.sse_events))
    for path in sorted(root.glob("*.chunks.txt")):
        for n, group in enumerate(load_chunks(path)):
            out.append((f"{path.name}#{n}", group))
    assert out, f"no recorded {provider} streams"
    return out


def recorded_bodies(provider: str) -> list[dict[str, Any]]:
    root = fixtures_dir() / provider
    out = []
    for path in sorted(root.glob("*.yaml")):
        out += [
            ex.response_payload
            for ex in load_cassette(path)
            if ex.response_kind == "json" and ex.status == 200
        ]
    for path in sorted(root.glob("*.json")):
        out.append(json.loads(path.read_text(encoding="utf-8")))
    return out


# -- grammar derivation -------------------------------------------------------------------------------


def _sub_key(provider: str, ev: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Nested objects whose field names are part of the grammar, keyed by a name."""
    out: list[tuple[str, dict[str, Any]]] = []
    t = ev["type"]
    if provider == "anthropic":
        if t == "content_block_start":
            out.append((f"content_block:{ev['content_block']['type']}", ev["content_block"]))
        elif t == "content_block_delta":
            out.append((f"delta:{ev['delta']['type']}", ev["delta"]))
        elif t == "message_start":
            out.append(("message", ev["message"]))
            out.append(("message.usage", ev["message"]["usage"]))
        elif t == "message_delta":
            out.append(("message_delta.delta", ev["delta"]))
            out.append(("message_delta.usage", ev["usage"]))
    else:
        if t in ("response.output_item.added", "response.output_item.done"):
            out.append((f"{t.rsplit('.', 1)[1]}:item:{ev['item']['type']}", ev["item"]))
        if t in ("response.created", "response.in_progress", "response.completed"):
            out.append(("response", ev["response"]))
        if t == "response.completed" and ev["response"].get("usage"):
            out.append(("usage", ev["response"]["usage"]))
    return out


def derive(provider: str, streams: list[tuple[str, Stream]]) -> dict[str, Any]:
    """Allowed event types and the required field names (intersection) per event and nested object."""
    required: dict[str, set[str]] = {}
    for _, events in streams:
        for ev in events:
            for name, obj in [(ev["type"], ev), *_sub_key(provider, ev)]:
                keys = set(obj)
                required[name] = keys if name not in required else required[name] & keys
    types = {ev["type"] for _, events in streams for ev in events}
    return {"types": types, "required": required}


# -- ordering rules -------------------------------------------------------------------------------------


def anthropic_order_errors(events: Stream) -> list[str]:
    errs: list[str] = []
    evs = [e for e in events if e["type"] != "ping"]
    if not evs or evs[0]["type"] != "message_start":
        errs.append("first event is not message_start")
    if evs[-1]["type"] != "message_stop":
        errs.append("last event is not message_stop")
    if [e["type"] for e in evs].count("message_delta") != 1 or evs[-2]["type"] != "message_delta":
        errs.append("exactly one message_delta, right before message_stop")
    open_index: int | None = None
    open_type = ""
    next_index = 0
    deltas: list[str] = []
    for e in evs:
        t = e["type"]
        if t == "content_block_start":
            if open_index is not None:
                errs.append("block started before the previous one stopped")
            if e["index"] != next_index:
                errs.append(f"index {e['index']} is not the next index {next_index}")
            open_index, open_type, deltas = e["index"], e["content_block"]["type"], []
        elif t == "content_block_delta":
            if e["index"] != open_index:
                errs.append("delta outside its block")
            deltas.append(e["delta"]["type"])
        elif t == "content_block_stop":
            if e["index"] != open_index:
                errs.append("stop without matching start")
            allowed = {
                "thinking": {"thinking_delta", "signature_delta"},
                "text": {"text_delta", "citations_delta"},
                "tool_use": {"input_json_delta"},
                "redacted_thinking": set(),
            }.get(open_type)
            if allowed is not None and not set(deltas) <= allowed:
                errs.append(f"{open_type} block has deltas {set(deltas) - allowed}")
            if open_type == "thinking" and (not deltas or deltas[-1] != "signature_delta"):
                errs.append("thinking block does not end with its signature_delta")
            open_index = None
            next_index += 1
        elif t in ("message_delta", "message_stop") and open_index is not None:
            errs.append("message ended inside a block")
    return errs


def openai_order_errors(events: Stream) -> list[str]:
    errs: list[str] = []
    types = [e["type"] for e in events]
    if types[:1] != ["response.created"]:
        errs.append("first event is not response.created")
    if types[-1] not in ("response.completed", "response.incomplete", "response.failed"):
        errs.append("last event is not a terminal response event")
    if sum(t in ("response.completed", "response.incomplete", "response.failed") for t in types) != 1:
        errs.append("exactly one terminal event")
    seqs = [e["sequence_number"] for e in events if "sequence_number" in e]
    if seqs and seqs != list(range(seqs[0], seqs[0] + len(seqs))):
        errs.append("sequence_number not consecutive")
    open_items: dict[int, str] = {}
    done_items: list[dict[str, Any]] = []
    next_index = 0
    for e in events:
        t = e["type"]
        if t == "response.output_item.added":
            if e["output_index"] != next_index:
                errs.append(f"output_index {e['output_index']} added out of order")
            next_index += 1
            open_items[e["output_index"]] = e["item"]["id"]
        elif t == "response.output_item.done":
            if open_items.pop(e["output_index"], None) != e["item"]["id"]:
                errs.append("output_item.done without matching added")
            done_items.append(e["item"])
        elif "item_id" in e and "output_index" in e and open_items.get(e["output_index"]) != e["item_id"]:
            errs.append(f"{t} outside its item")
    if open_items:
        errs.append("items never done")
    final = events[-1].get("response", {})
    if types[-1] == "response.completed" and [o["id"] for o in final.get("output", [])] != [
        o["id"] for o in done_items
    ]:
        errs.append("response.completed output differs from the done items")
    pairs = {
        ("response.reasoning_summary_part.added", "response.reasoning_summary_part.done"),
        ("response.content_part.added", "response.content_part.done"),
    }
    for added, done in pairs:
        if types.count(added) != types.count(done):
            errs.append(f"{added} / {done} unpaired")
    return errs


# No recording ends with ``response.incomplete`` (the SDK's typed union has it): it is held to the
# grammar of the recorded terminal event, ``response.completed``.
_STANDS_IN = {"response.incomplete": "response.completed"}


def field_errors(provider: str, grammar: dict[str, Any], events: Stream) -> list[str]:
    errs = []
    for ev in events:
        ev = {**ev, "type": _STANDS_IN.get(ev["type"], ev["type"])}
        if ev["type"] not in grammar["types"]:
            errs.append(f"event type {ev['type']} never seen in a recording")
            continue
        for name, obj in [(ev["type"], ev), *_sub_key(provider, ev)]:
            missing = grammar["required"].get(name, set()) - set(obj)
            if missing:
                errs.append(f"{name} lacks {sorted(missing)}")
            if name not in grammar["required"]:
                errs.append(f"{name} never seen in a recording")
    return errs


# -- simulator streams -------------------------------------------------------------------------------------


def sim_streams(provider: str) -> list[tuple[str, Stream]]:
    t = sim.SimTransport()
    out: list[tuple[str, Stream]] = []

    def run(name: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        r = raw_post(t, path, {**body, "stream": True}, headers)
        assert r.status_code == 200, r.text
        out.append((name, parse_sse(r.text)))

    task = "Is it warmer in Paris or Rome?"
    if provider == "openai":
        base = {
            "model": "sim-reasoner",
            "tools": [OPENAI_WEATHER],
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"summary": "auto"},
        }
        run("tool-calls", "/v1/responses", {**base, "input": task})
        first = raw_post(t, "/v1/responses", {**base, "input": task}).json()["output"]
        follow = [{"role": "user", "content": task}, *first] + [
            {
                "type": "function_call_output",
                "call_id": o["call_id"],
                "output": TEMPS[json.loads(o["arguments"])["city"]],
            }
            for o in first
            if o["type"] == "function_call"
        ]
        run("answer", "/v1/responses", {**base, "input": follow})
        run(
            "no-summary", "/v1/responses", {**base, "input": "What is 3 * 4?", "reasoning": {"effort": "low"}}
        )
        run("incomplete", "/v1/responses", {**base, "input": task, "max_output_tokens": 10})
        run(
            "no-reasoning",
            "/v1/responses",
            {**base, "input": "What is 3 * 4?", "reasoning": {"effort": "none"}},
        )
    else:
        base = {
            "model": "sim-thinker",
            "max_tokens": 5000,
            "tools": [ANTHROPIC_WEATHER],
            "thinking": {"type": "enabled", "budget_tokens": 2048},
        }
        msgs = [{"role": "user", "content": task}]
        run("thinking-tools", "/v1/messages", {**base, "messages": msgs})
        run(
            "interleaved",
            "/v1/messages",
            {**base, "messages": msgs},
            {"anthropic-beta": "interleaved-thinking-2025-05-14"},
        )
        run(
            "redacted-omitted",
            "/v1/messages",
            {
                **base,
                "messages": [{"role": "user", "content": f"{task} {MAGIC_REDACTED}"}],
                "thinking": {"type": "enabled", "budget_tokens": 2048, "display": "omitted"},
            },
        )
        run(
            "no-thinking",
            "/v1/messages",
            {"model": "sim-thinker-legacy", "max_tokens": 300, "messages": msgs},
        )
        run("adaptive", "/v1/messages", {**base, "messages": msgs, "thinking": {"type": "adaptive"}})
        run(
            "max-tokens",
            "/v1/messages",
            {
                "model": "sim-thinker",
                "max_tokens": 3,
                "messages": [{"role": "user", "content": "What is 1234 + 5678?"}],
            },
        )
    return out


# -- the tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_recordings_satisfy_the_rules(provider: str) -> None:
    streams = recorded_streams(provider)
    grammar = derive(provider, streams)
    check = anthropic_order_errors if provider == "anthropic" else openai_order_errors
    for name, events in streams:
        assert check(events) == [], name
        assert field_errors(provider, grammar, events) == [], name
    # the rules are not vacuous: the derived fields are substantial and a broken recording fails them
    key = "message.usage" if provider == "anthropic" else "usage"
    assert {"input_tokens", "output_tokens"} <= grammar["required"][key]
    name, events = streams[0]
    broken = [e for e in events if e["type"] not in ("message_stop", "response.completed")]
    assert check(broken) != []


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_simulator_streams_follow_the_recorded_grammar(provider: str) -> None:
    grammar = derive(provider, recorded_streams(provider))
    check = anthropic_order_errors if provider == "anthropic" else openai_order_errors
    seen: set[str] = set()
    for name, events in sim_streams(provider):
        assert check(events) == [], name
        assert field_errors(provider, grammar, events) == [], name
        seen |= {e["type"] for e in events}
    core = (
        {
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
        }
        if provider == "anthropic"
        else {
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.output_item.done",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.completed",
        }
    )
    assert core <= seen


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_non_streaming_bodies_have_the_recorded_fields(provider: str) -> None:
    bodies = recorded_bodies(provider)
    required = set.intersection(*(set(b) for b in bodies))
    usage_required = set.intersection(*(set(b["usage"]) for b in bodies if b.get("usage")))
    t = sim.SimTransport()
    if provider == "anthropic":
        body = raw_post(
            t,
            "/v1/messages",
            {
                "model": "sim-thinker",
                "max_tokens": 300,
                "messages": [{"role": "user", "content": "What is 2 + 2?"}],
            },
        ).json()
    else:
        body = raw_post(t, "/v1/responses", {"model": "sim-reasoner", "input": "What is 2 + 2?"}).json()
    assert required - set(body) == set()
    assert usage_required - set(body["usage"]) == set()
