"""Fidelity, Gemini: the stream grammar derived from the real recordings, held to them and to the simulator.

As ``test_fidelity.py`` does for OpenAI and Anthropic: at test time the grammar is *derived* from every
recorded ``streamGenerateContent?alt=sse`` stream under ``../shared/fixtures/gemini`` (the field names
every recorded chunk, candidate, content and usage block carries: the intersection over all
recordings), and the ordering rules written here are checked against the recordings first (a rule the
real API breaks cannot survive), shown not to be vacuous (a broken recording fails them), then checked
against the simulator's streams over a set of scenarios (parallel calls, the answer after tool
results, plain text, no thought summaries, the Gemini 2.5 model, a cut-off answer).

The rules, each seen to hold on every recording:

* raw framing: every event is ``data: {json}`` ended by CRLF CRLF; no ``event:`` lines, no ``[DONE]``;
* one candidate per chunk, its content's role ``model``; one ``responseId`` and one ``modelVersion``;
* exactly one chunk carries ``finishReason``, the last;
* every usage count is non-decreasing over the stream, and on every chunk ``totalTokenCount`` =
  prompt + candidates + thoughts (+ tool-use prompt) tokens;
* thought-summary parts come before any other part of the turn;
* a turn with function calls carries a ``thoughtSignature`` on its first call and on no other call;
* a signature on a text part is on the turn's last part.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from agentlab import sim
from tests.sim.helpers import TEMPS
from tests.support.cassettes import fixture_files, load_cassette, parse_sse

pytestmark = pytest.mark.fixtures

Stream = list[dict[str, Any]]
COUNTS = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "toolUsePromptTokenCount")
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
}


# -- recorded streams --------------------------------------------------------------------------------


def recorded() -> list[tuple[str, str, Stream]]:
    """(name, raw SSE text, chunks) of every recorded 200 stream."""
    out = []
    for path in fixture_files("gemini"):
        for n, ex in enumerate(load_cassette(path)):
            if ex.response_kind == "sse" and ex.status == 200 and ex.response_text:
                out.append((f"{path.name}#{n}", ex.response_text, ex.sse_events))
    if not out:
        pytest.skip("../shared/fixtures/gemini is absent (the recordings are read at test time)")
    return out


def recorded_bodies() -> list[dict[str, Any]]:
    out = []
    for path in fixture_files("gemini"):
        out += [
            ex.response_payload
            for ex in load_cassette(path)
            if ex.response_kind == "json" and ex.status == 200
        ]
    return out


# -- grammar ------------------------------------------------------------------------------------------


def _objects(chunk: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The objects whose field names are part of the grammar, by name."""
    out = [("chunk", chunk), ("usage", chunk.get("usageMetadata") or {})]
    for cand in chunk.get("candidates") or []:
        out += [("candidate", cand), ("content", cand.get("content") or {})]
    return out


def derive(streams: list[Stream]) -> dict[str, set[str]]:
    """The field names every recorded object of a kind carries (intersection over all recordings)."""
    required: dict[str, set[str]] = {}
    for chunks in streams:
        for chunk in chunks:
            for name, obj in _objects(chunk):
                required[name] = set(obj) if name not in required else required[name] & set(obj)
    return required


def field_errors(required: dict[str, set[str]], chunks: Stream) -> list[str]:
    errs = []
    for i, chunk in enumerate(chunks):
        for name, obj in _objects(chunk):
            missing = required.get(name, set()) - set(obj)
            if missing:
                errs.append(f"chunk {i}: {name} lacks {sorted(missing)}")
    return errs


def framing_errors(raw: str) -> list[str]:
    errs = []
    if "[DONE]" in raw:
        errs.append("a [DONE] sentinel")
    if not raw.endswith("\r\n\r\n"):
        errs.append("the stream does not end with CRLF CRLF")
    for event in raw.split("\r\n\r\n")[:-1]:
        if not event.startswith("data: {") or "\n" in event:
            errs.append(f"an event that is not one data line: {event[:20]!r}")
    return errs


def _parts(chunks: Stream) -> list[dict[str, Any]]:
    return [
        p
        for c in chunks
        for cand in c.get("candidates") or []
        for p in (cand.get("content") or {}).get("parts") or []
    ]


def _usage_errors(chunks: Stream) -> list[str]:
    errs = []
    last = dict.fromkeys(COUNTS, 0)
    for i, c in enumerate(chunks):
        u = c.get("usageMetadata") or {}
        now = {k: u.get(k, 0) for k in COUNTS}
        if any(now[k] < last[k] for k in COUNTS):
            errs.append(f"chunk {i}: a usage count went down")
        if u.get("totalTokenCount") != sum(now.values()):
            errs.append(f"chunk {i}: totalTokenCount is not the sum of its counts")
        last = now
    return errs


def _part_errors(parts: list[dict[str, Any]]) -> list[str]:
    errs = []
    kinds = ["thought" if p.get("thought") else "other" for p in parts]
    if (
        "thought" in kinds
        and "other" in kinds
        and kinds.index("other") < len(kinds) - kinds[::-1].index("thought") - 1
    ):
        errs.append("a thought part after an answer or call part")
    calls = [p for p in parts if "functionCall" in p]
    if calls and "thoughtSignature" not in calls[0]:
        errs.append("the first function call carries no signature")
    if any("thoughtSignature" in p for p in calls[1:]):
        errs.append("a function call after the first carries a signature")
    for i, p in enumerate(parts):
        if "text" in p and not p.get("thought") and "thoughtSignature" in p and i != len(parts) - 1:
            errs.append("a signed text part that is not the turn's last part")
    return errs


def order_errors(chunks: Stream) -> list[str]:
    errs: list[str] = []
    if not chunks:
        return ["no chunks"]
    if any(len(c.get("candidates") or []) != 1 for c in chunks):
        errs.append("a chunk without exactly one candidate")
    roles = {(cand.get("content") or {}).get("role") for c in chunks for cand in c.get("candidates") or []}
    if roles != {"model"}:
        errs.append(f"content roles {roles}")
    for key in ("responseId", "modelVersion"):
        if len({c.get(key) for c in chunks}) != 1:
            errs.append(f"more than one {key}")
    finished = [
        i for i, c in enumerate(chunks) if any("finishReason" in cand for cand in c.get("candidates") or [])
    ]
    if finished != [len(chunks) - 1]:
        errs.append(f"finishReason on chunks {finished}, not on the last only")
    return errs + _usage_errors(chunks) + _part_errors(_parts(chunks))


# -- simulator streams --------------------------------------------------------------------------------


def _post(path: str, body: dict[str, Any]) -> httpx2.Response:
    with httpx2.Client(transport=sim.SimTransport(), base_url=sim.GEMINI_BASE_URL) as c:
        r = c.post(path, json=body, headers={"x-goog-api-key": "k"})
    assert r.status_code == 200, r.text
    return r


def _stream(model: str, body: dict[str, Any]) -> tuple[str, Stream]:
    r = _post(f"/v1beta/models/{model}:streamGenerateContent?alt=sse", body)
    return r.text, parse_sse(r.text)


def _answer_body(model: str, body: dict[str, Any]) -> dict[str, Any]:
    """The next request of the loop: the model turn as received, then one functionResponse per call."""
    first = _post(f"/v1beta/models/{model}:generateContent", body).json()
    content = first["candidates"][0]["content"]
    calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
    assert calls, "the scenario should make the model call the tool"
    responses = [
        {"functionResponse": {**({"id": c["id"]} if "id" in c else {}), "name": c["name"],
                              "response": {"result": TEMPS[c["args"]["city"]]}}}
        for c in calls
    ]  # fmt: skip
    return {**body, "contents": [*body["contents"], content, {"role": "user", "parts": responses}]}


def sim_streams() -> list[tuple[str, str, Stream]]:
    task = {"role": "user", "parts": [{"text": "Is it warmer in Paris or Rome?"}]}
    tools = [{"functionDeclarations": [WEATHER]}]
    thoughts = {"thinkingConfig": {"includeThoughts": True}}
    gemini3 = {"contents": [task], "tools": tools, "generationConfig": thoughts}
    legacy = {
        "contents": [task],
        "tools": tools,
        "generationConfig": {"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 1024}},
    }
    plain = {"contents": [{"role": "user", "parts": [{"text": "What is 2 + 3?"}]}]}
    scenarios = [
        ("parallel-calls", "sim-gemini", gemini3),
        ("answer-after-results", "sim-gemini", _answer_body("sim-gemini", gemini3)),
        ("text", "sim-gemini", {**plain, "generationConfig": thoughts}),
        (
            "no-thought-summaries",
            "sim-gemini",
            {**plain, "generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}}},
        ),
        ("legacy-calls", "sim-gemini-legacy", legacy),
        ("legacy-answer", "sim-gemini-legacy", _answer_body("sim-gemini-legacy", legacy)),
        ("max-tokens", "sim-gemini", {**plain, "generationConfig": {"maxOutputTokens": 3}}),
    ]
    return [(name, *_stream(model, body)) for name, model, body in scenarios]


# -- the tests ------------------------------------------------------------------------------------------


def test_recordings_satisfy_the_rules_and_the_rules_are_not_vacuous() -> None:
    streams = recorded()
    required = derive([chunks for _, _, chunks in streams])
    for name, raw, chunks in streams:
        assert framing_errors(raw) == [], name
        assert order_errors(chunks) == [], name
        assert field_errors(required, chunks) == [], name
    # the derived grammar is substantial ...
    assert {"candidates", "usageMetadata", "modelVersion", "responseId"} <= required["chunk"]
    assert {"promptTokenCount", "totalTokenCount"} <= required["usage"]
    assert {"content", "index"} <= required["candidate"] and {"parts", "role"} <= required["content"]
    # ... and a broken recording fails the rules
    name, raw, chunks = next(
        s for s in streams if len(_parts(s[2])) > 1 and any("functionCall" in p for p in _parts(s[2]))
    )
    assert order_errors(chunks[:-1]) != [], "a stream cut before its finishReason must fail"
    resigned = json.loads(json.dumps(chunks))
    for p in _parts(resigned):
        p.pop("thoughtSignature", None)
    assert order_errors(resigned) != [], "a call turn without its signature must fail"
    assert framing_errors(raw.replace("\r\n\r\n", "\n\n")) != []


def test_simulator_streams_follow_the_recorded_grammar() -> None:
    required = derive([chunks for _, _, chunks in recorded()])
    seen_finish: set[str] = set()
    seen_parts: set[str] = set()
    for name, raw, chunks in sim_streams():
        assert framing_errors(raw) == [], name
        assert order_errors(chunks) == [], name
        assert field_errors(required, chunks) == [], name
        seen_finish |= {chunks[-1]["candidates"][0]["finishReason"]}
        for p in _parts(chunks):
            seen_parts |= {
                "thought" if p.get("thought") else "functionCall" if "functionCall" in p else "text"
            }
            seen_parts |= {"signed"} if "thoughtSignature" in p else set()
    assert seen_finish == {"STOP", "MAX_TOKENS"}
    assert seen_parts == {"thought", "functionCall", "text", "signed"}


def test_non_streaming_bodies_have_the_recorded_fields() -> None:
    bodies = recorded_bodies()
    if not bodies:
        pytest.skip("no recorded non-streaming Gemini body")
    required = derive([[b] for b in bodies])
    body = _post("/v1beta/models/sim-gemini:generateContent", {
        "contents": [{"role": "user", "parts": [{"text": "What is 2 + 3?"}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
    }).json()  # fmt: skip
    assert field_errors(required, [body]) == []
    assert order_errors([body]) == []


def _with_skip_signatures(node: Any) -> Any:
    """The body with every signature replaced by Google's documented skip value.

    The simulator's signatures are HMACs: Google's own bytes cannot verify here (that rule is tested
    elsewhere), and the other rules are what this audit is about.
    """
    if isinstance(node, list):
        return [_with_skip_signatures(n) for n in node]
    if isinstance(node, dict):
        return {
            k: "skip_thought_signature_validator" if k in ("thoughtSignature", "thought_signature")
            else _with_skip_signatures(v)
            for k, v in node.items()
        }  # fmt: skip
    return node


def test_every_recorded_request_the_real_api_accepted_is_accepted() -> None:
    """The refusal rules audited against the recordings: none refuses what the real API answered."""
    from urllib.parse import urlsplit

    exchanges = [
        (f"{path.name}#{n}", ex)
        for path in fixture_files("gemini")
        for n, ex in enumerate(load_cassette(path))
    ]
    if not exchanges:
        pytest.skip("../shared/fixtures/gemini is absent (the recordings are read at test time)")
    with httpx2.Client(transport=sim.SimTransport(real_models=True), base_url=sim.GEMINI_BASE_URL) as c:
        for name, ex in exchanges:
            assert ex.status == 200 and ex.request_json is not None
            url = urlsplit(ex.url)
            r = c.post(
                url.path + (f"?{url.query}" if url.query else ""),
                json=_with_skip_signatures(ex.request_json),
                headers={"x-goog-api-key": "k"},
            )
            assert r.status_code == 200, (name, r.text)
