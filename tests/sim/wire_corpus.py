"""A corpus of raw requests that walks every branch of the simulator's request handling.

Why: the simulator's value is that it answers exactly like the real services; a refactor of its
internals must leave every reply byte-identical (status, header order and values, every chunk,
pause and reset). :func:`run_corpus` sends each request straight to ``app.handle`` on one fresh
:class:`Simulator` (order matters: prompt cache and stored responses carry over), building later
turns from earlier replies the way a correct client would, and returns one digest per case.
``tests/sim/test_wire_golden.py`` compares them with the digests recorded in ``wire_golden.json``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from agentlab.sim.app import handle
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Reset, Sleep
from agentlab.sim.reasoner import MAGIC_REDACTED
from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, POPULATION, TEMPS

Send = Callable[[str, str, str, dict[str, str], Any], tuple[int, dict[str, str], list[Any]]]
AV = {"anthropic-version": "2023-06-01"}
#: A key for either API, as every SDK sends one (the simulator refuses requests without).
KEYS = {"authorization": "Bearer sim-corpus-key", "x-api-key": "sim-corpus-key"}
CALC_OAI = {
    "type": "function",
    "name": "calculator",
    "description": "Evaluate an arithmetic expression.",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
}
POP_OAI = {
    "type": "function",
    "name": "get_population",
    "description": "Population of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TASK = "Is it warmer in Paris or Rome?"
LONG = "You are a careful assistant. " * 400


def _digest(status: int, headers: dict[str, str], chunks: list[Any]) -> str:
    parts: list[Any] = []
    for c in chunks:
        if isinstance(c, Sleep):
            parts.append(["sleep", c.seconds])
        elif isinstance(c, Reset):
            parts.append(["reset"])
        else:
            parts.append(["bytes", c.hex()])
    raw = json.dumps([status, list(headers.items()), parts], separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


def _body_json(chunks: list[Any]) -> Any:
    return json.loads(b"".join(c for c in chunks if isinstance(c, bytes)))


def _oai(**kw: Any) -> dict[str, Any]:
    return {
        "model": "sim-reasoner",
        "input": TASK,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "tools": [OPENAI_WEATHER],
        **kw,
    }


def _ant(messages: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return {
        "model": "sim-thinker",
        "max_tokens": 4000,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [ANTHROPIC_WEATHER],
        "messages": messages if messages is not None else [{"role": "user", "content": TASK}],
        **kw,
    }


def _routing() -> Iterator[tuple[str, str, str, dict[str, str], Any]]:
    yield "get-models-openai", "GET", "/v1/models", {}, b""
    yield "get-models-anthropic", "GET", "/v1/models", AV, b""
    yield "get-models-query", "GET", "/v1/models?limit=2", {"Anthropic-Version": "x"}, b""
    yield "get-unknown-openai", "GET", "/v1/files", {}, b""
    yield "get-unknown-anthropic", "GET", "/v1/files", AV, b""
    yield "get-responses", "GET", "/v1/responses", {}, b""
    yield "get-responses-anthropic-header", "GET", "/v1/responses", AV, b""
    yield "get-messages", "GET", "/v1/messages", {}, b""
    yield "put-messages", "PUT", "/v1/messages/", AV, b"{}"
    yield "post-unknown", "POST", "/v1/chat/completions", {}, b"{}"
    yield "post-unknown-anthropic", "POST", "/v1/complete", AV, b"{}"
    yield "post-responses-anthropic-header", "POST", "/v1/responses", AV, _oai()
    yield "post-messages-no-header", "POST", "/v1/messages", {}, _ant()
    yield "post-trailing-slash-query", "POST", "/v1/responses/?x=1", {}, _oai()
    yield "post-bare-path", "POST", "/responses", {}, _oai()
    for path, hdr in (("/v1/responses", {}), ("/v1/messages", AV)):
        yield f"bad-json{path}", "POST", path, hdr, b"{not json"
        yield f"json-array{path}", "POST", path, hdr, b"[1, 2]"
        yield f"empty-body{path}", "POST", path, hdr, b""
        yield f"unknown-model{path}", "POST", path, hdr, {"model": "gpt-5", "max_tokens": 10}
        yield f"no-model{path}", "POST", path, hdr, {"max_tokens": 10}


def _faults() -> Iterator[tuple[str, str, str, dict[str, str], Any]]:
    specs = ("429", "500", "529", "cut", "malformed", "reset", "unknown_event", "slow:3", "429x1,slow:1")
    for path, hdr, body in (("/v1/responses", {}, _oai()), ("/v1/messages", AV, _ant())):
        for spec in specs:
            for stream in (False, True):
                b = {**body, "stream": stream}
                yield f"fault-{spec}-stream={stream}{path}", "POST", path, {**hdr, "x-sim-fault": spec}, b
        yield f"fault-bad-spec{path}", "POST", path, {**hdr, "x-sim-fault": "boom"}, body
        yield (
            f"fault-model-option{path}",
            "POST",
            path,
            hdr,
            {**body, "model": body["model"] + "+fault=500x1"},
        )
        yield (
            f"fault-model-option-retry{path}",
            "POST",
            path,
            hdr,
            {**body, "model": body["model"] + "+fault=500x1"},
        )
        yield f"fault-model-option-unknown{path}", "POST", path, hdr, {**body, "model": "nope+fault=429"}
        yield (
            f"fault-other-option{path}",
            "POST",
            path,
            hdr,
            {**body, "model": body["model"] + "+x=1+fault=cut"},
        )


def _openai_single() -> Iterator[tuple[str, str, str, dict[str, str], Any]]:
    p = "/v1/responses"
    for effort in ("none", "minimal", "low", "medium", "high", "xhigh", "ultra"):
        for stream in (False, True):
            body = _oai(reasoning={"effort": effort, "summary": "auto"}, stream=stream)
            yield f"oai-effort-{effort}-{stream}", "POST", p, {}, body
    yield "oai-temperature", "POST", p, {}, _oai(temperature=0.2)
    yield "oai-temperature-none", "POST", p, {}, _oai(temperature=None)
    yield "oai-input-int", "POST", p, {}, _oai(input=3)
    yield "oai-input-item-str", "POST", p, {}, _oai(input=["hi"])
    yield "oai-input-bad-type", "POST", p, {}, _oai(input=[{"type": "image", "url": "x"}])
    yield (
        "oai-input-role-only",
        "POST",
        p,
        {},
        _oai(input=[{"role": "user", "content": [{"type": "input_text", "text": TASK}]}]),
    )
    yield "oai-hosted-tool", "POST", p, {}, _oai(tools=[{"type": "web_search"}, OPENAI_WEATHER])
    yield "oai-tool-no-name", "POST", p, {}, _oai(tools=[{"type": "function"}])
    yield "oai-tool-not-dict", "POST", p, {}, _oai(tools=["x"])
    yield "oai-no-tools", "POST", p, {}, _oai(tools=None)
    for n in (1, 40, 120, 200):
        for stream in (False, True):
            yield (
                f"oai-max-out-{n}-{stream}",
                "POST",
                p,
                {},
                _oai(max_output_tokens=n, stream=stream, reasoning={"summary": "auto"}),
            )
    yield "oai-serial", "POST", p, {}, _oai(parallel_tool_calls=False)
    yield "oai-no-encrypted", "POST", p, {}, _oai(include=[])
    yield "oai-generate-summary", "POST", p, {}, _oai(reasoning={"generate_summary": "concise"}, stream=True)
    yield (
        "oai-echo",
        "POST",
        p,
        {},
        _oai(metadata={"a": "b"}, tool_choice="required", max_tool_calls=3, instructions="Be brief."),
    )
    yield "oai-chat", "POST", p, {}, _oai(input="Hello there", stream=True)
    for stream in (False, True):
        body = _oai(input="Hello there", reasoning={"effort": "none"}, max_output_tokens=8, stream=stream)
        yield f"oai-chat-cut-{stream}", "POST", p, {}, body
    yield "oai-arith-direct", "POST", p, {}, _oai(input="What is 12 * (3 + 4)?")
    yield "oai-arith-div0", "POST", p, {}, _oai(input="What is 1 / 0?")
    yield "oai-arith-tool", "POST", p, {}, _oai(input="What is 12 * (3 + 4)?", tools=[CALC_OAI])
    yield "oai-lookup", "POST", p, {}, _oai(input="What's the weather in Florence, Italy?", stream=True)
    yield (
        "oai-aggregate",
        "POST",
        p,
        {},
        _oai(input="What is the total population of Paris, Rome and Berlin?", tools=[POP_OAI]),
    )
    yield "oai-no-tool-for-names", "POST", p, {}, _oai(input=TASK, tools=[])
    for i in range(2):
        body = _oai(instructions=LONG, prompt_cache_key="k", store=True)
        yield f"oai-cache-{i}", "POST", p, {}, body
    yield "oai-cache-other-key", "POST", p, {}, _oai(instructions=LONG, prompt_cache_key="other")
    yield "oai-prev-unknown", "POST", p, {}, _oai(previous_response_id="resp_nope", store=True)
    yield "oai-prev-store-false", "POST", p, {}, _oai(previous_response_id="resp_nope")


def _results_oai(output: list[dict[str, Any]], table: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function_call_output",
            "call_id": o["call_id"],
            "output": table[json.loads(o["arguments"])["city"]],
        }
        for o in output
        if o["type"] == "function_call"
    ]


def _openai_turns(send: Send, out: dict[str, Any]) -> None:
    p = "/v1/responses"

    def go(name: str, body: Any) -> tuple[int, dict[str, str], list[Any]]:
        status, headers, chunks = send(name, "POST", p, {}, body)
        out[name] = {"status": status, "digest": _digest(status, headers, chunks)}
        return status, headers, chunks

    user = {"type": "message", "role": "user", "content": TASK}
    _, _, ch = go("oai-t1", _oai(input=[user]))
    first = _body_json(ch)["output"]
    full = [user, *first, *_results_oai(first, TEMPS)]
    go("oai-t2-known", _oai(input=full))
    go("oai-t2-known-stream", _oai(input=full, stream=True))
    no_reasoning = [i for i in full if i["type"] != "reasoning"]
    _, _, ch = go("oai-t2-lost", _oai(input=no_reasoning))
    again = _body_json(ch)["output"]
    go("oai-t3-lost-repeat", _oai(input=[*no_reasoning, *again, *_results_oai(again, TEMPS)]))
    tampered = copy.deepcopy(full)
    tampered[1]["encrypted_content"] = tampered[1]["encrypted_content"][:-6] + "AAAAAA"
    go("oai-tampered", _oai(input=tampered))
    id_only = copy.deepcopy(full)
    del id_only[1]["encrypted_content"]
    go("oai-id-only-store-false", _oai(input=id_only))
    go("oai-id-only-store-true-unknown", _oai(input=id_only, store=True))
    go("oai-reasoning-without-next", _oai(input=[user, first[0]]))
    go("oai-orphan-output", _oai(input=[user, *_results_oai(first, TEMPS)]))
    go("oai-call-without-output", _oai(input=[user, *first]))
    go(
        "oai-bad-arguments",
        _oai(
            input=[
                user,
                {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{x"},
                {"type": "function_call_output", "call_id": "c1", "output": "1"},
            ]
        ),
    )
    _, _, ch = go("oai-stored-t1", _oai(input=[user], store=True))
    sbody = _body_json(ch)
    stored_out = sbody["output"]
    ids_only = [{"type": "reasoning", "id": stored_out[0]["id"], "summary": []}, *stored_out[1:]]
    go("oai-stored-id-only", _oai(input=[user, *ids_only, *_results_oai(stored_out, TEMPS)], store=True))
    go(
        "oai-stored-prev",
        _oai(input=_results_oai(stored_out, TEMPS), previous_response_id=sbody["id"], store=True),
    )
    go(
        "oai-stored-prev-stream",
        _oai(
            input=_results_oai(stored_out, TEMPS), previous_response_id=sbody["id"], store=True, stream=True
        ),
    )


def _planner_turns(send: Send, out: dict[str, Any]) -> None:
    """Two-turn exchanges whose answers walk each branch of the planner's arithmetic."""

    def two_turns(
        name: str, task: str, tools: list[dict[str, Any]], result: Callable[[dict[str, Any]], str]
    ) -> None:
        user = {"type": "message", "role": "user", "content": task}
        status, headers, chunks = send(
            name + "-1", "POST", "/v1/responses", {}, _oai(input=[user], tools=tools)
        )
        out[name + "-1"] = {"status": status, "digest": _digest(status, headers, chunks)}
        first = _body_json(chunks)["output"]
        results = [
            {
                "type": "function_call_output",
                "call_id": o["call_id"],
                "output": result(json.loads(o["arguments"])),
            }
            for o in first
            if o["type"] == "function_call"
        ]
        status, headers, chunks = send(
            name + "-2", "POST", "/v1/responses", {}, _oai(input=[user, *first, *results], tools=tools)
        )
        out[name + "-2"] = {"status": status, "digest": _digest(status, headers, chunks)}

    pop = lambda a: POPULATION[a["city"]]  # noqa: E731
    two_turns("plan-calc", "What is 12 * (3 + 4)?", [CALC_OAI], lambda a: "84")
    two_turns("plan-calc-nan", "What is 12 * (3 + 4)?", [CALC_OAI], lambda a: "error")
    for word in ("total", "average", "difference", "product"):
        two_turns(f"plan-{word}", f"What is the {word} population of Paris, Rome and Berlin?", [POP_OAI], pop)
    two_turns("plan-tie", "Is it warmer in Paris or Rome?", [OPENAI_WEATHER], lambda a: "20 C")
    two_turns("plan-nan", "Is it colder in Paris or Rome?", [OPENAI_WEATHER], lambda a: "unknown")
    two_turns("plan-min", "Which is smaller, Paris or Rome?", [POP_OAI], pop)
    two_turns(
        "plan-lookup", "What's the weather in Oslo and Berlin?", [OPENAI_WEATHER], lambda a: TEMPS[a["city"]]
    )


def _anthropic_single() -> Iterator[tuple[str, str, str, dict[str, str], Any]]:
    p = "/v1/messages"
    yield "ant-max-tokens-missing", "POST", p, AV, {k: v for k, v in _ant().items() if k != "max_tokens"}
    yield "ant-max-tokens-str", "POST", p, AV, _ant(max_tokens="5")
    yield "ant-max-tokens-bool", "POST", p, AV, _ant(max_tokens=True)
    yield "ant-max-tokens-zero", "POST", p, AV, _ant(max_tokens=0)
    yield "ant-budget-low", "POST", p, AV, _ant(thinking={"type": "enabled", "budget_tokens": 500})
    yield "ant-budget-none", "POST", p, AV, _ant(thinking={"type": "enabled"})
    yield "ant-budget-over-max", "POST", p, AV, _ant(max_tokens=2000)
    yield (
        "ant-budget-over-max-interleaved",
        "POST",
        p,
        {**AV, "anthropic-beta": "interleaved-thinking-2025-05-14"},
        _ant(max_tokens=2000),
    )
    for budget in (1024, 3000, 9000):
        yield (
            f"ant-budget-{budget}",
            "POST",
            p,
            AV,
            _ant(max_tokens=12000, thinking={"type": "enabled", "budget_tokens": budget}),
        )
    for effort in ("low", "medium", "high", "max", "extreme", None):
        cfg = {"effort": effort} if effort else {}
        yield (
            f"ant-adaptive-{effort}",
            "POST",
            p,
            AV,
            _ant(thinking={"type": "adaptive"}, output_config=cfg, stream=True),
        )
    yield "ant-thinking-unknown", "POST", p, AV, _ant(thinking={"type": "sometimes"})
    yield "ant-thinking-disabled", "POST", p, AV, _ant(thinking={"type": "disabled"}, stream=True)
    yield "ant-thinking-absent", "POST", p, AV, _ant(thinking=None)
    yield "ant-forced-tool", "POST", p, AV, _ant(tool_choice={"type": "any"})
    yield (
        "ant-forced-tool-no-thinking",
        "POST",
        p,
        AV,
        _ant(tool_choice={"type": "tool", "name": "get_weather"}, thinking=None),
    )
    yield "ant-temperature", "POST", p, AV, _ant(temperature=0.5)
    yield "ant-temperature-1", "POST", p, AV, _ant(temperature=1)
    yield "ant-temperature-no-thinking", "POST", p, AV, _ant(temperature=0.5, thinking=None)
    yield "ant-messages-missing", "POST", p, AV, {k: v for k, v in _ant().items() if k != "messages"}
    yield "ant-messages-empty", "POST", p, AV, _ant(messages=[])
    yield "ant-bad-role", "POST", p, AV, _ant(messages=[{"role": "system", "content": "x"}])
    yield (
        "ant-bad-block",
        "POST",
        p,
        AV,
        _ant(messages=[{"role": "user", "content": [{"type": "input_text", "text": "x"}]}]),
    )
    yield (
        "ant-display-omitted",
        "POST",
        p,
        AV,
        _ant(thinking={"type": "enabled", "budget_tokens": 2048, "display": "omitted"}, stream=True),
    )
    for stream in (False, True):
        yield (
            f"ant-redacted-{stream}",
            "POST",
            p,
            AV,
            _ant(messages=[{"role": "user", "content": TASK + " " + MAGIC_REDACTED}], stream=stream),
        )
        yield (
            f"ant-interleaved-3-{stream}",
            "POST",
            p,
            {**AV, "anthropic-beta": "interleaved-thinking-2025-05-14"},
            _ant(
                messages=[{"role": "user", "content": "Is it warmer in Paris, Rome or Oslo?"}], stream=stream
            ),
        )
        yield (
            f"ant-redacted-interleaved-{stream}",
            "POST",
            p,
            {**AV, "anthropic-beta": "interleaved-thinking-2025-05-14"},
            _ant(
                messages=[
                    {"role": "user", "content": "Is it warmer in Paris, Rome or Oslo? " + MAGIC_REDACTED}
                ],
                stream=stream,
            ),
        )
    yield "ant-serial", "POST", p, AV, _ant(tool_choice={"type": "auto", "disable_parallel_tool_use": True})
    yield "ant-legacy", "POST", p, AV, {**_ant(stream=True), "model": "sim-thinker-legacy"}
    for n in (1100, 1300, 1500):
        yield (
            f"ant-max-tokens-{n}",
            "POST",
            p,
            AV,
            _ant(max_tokens=n, thinking={"type": "enabled", "budget_tokens": 1024}, stream=True),
        )
    yield "ant-max-tokens-tiny-no-thinking", "POST", p, AV, _ant(max_tokens=5, thinking=None)
    yield "ant-chat", "POST", p, AV, _ant(messages=[{"role": "user", "content": "Hello there"}])
    for stream in (False, True):
        body = _ant(
            messages=[{"role": "user", "content": "Hello there"}], max_tokens=6, thinking=None, stream=stream
        )
        yield f"ant-chat-cut-{stream}", "POST", p, AV, body
    yield (
        "ant-arith",
        "POST",
        p,
        AV,
        _ant(messages=[{"role": "user", "content": "What is 2 + 2 * 3?"}], tools=[]),
    )
    system = [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]
    for i in range(2):
        yield f"ant-cache-system-{i}", "POST", p, AV, _ant(system=system)
    yield "ant-cache-system-str", "POST", p, AV, _ant(system=LONG)
    yield (
        "ant-cache-1h",
        "POST",
        p,
        AV,
        _ant(
            system=[
                {"type": "text", "text": LONG + "1h", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
            ]
        ),
    )
    yield "ant-cache-top-level", "POST", p, AV, _ant(system=LONG + "top", cache_control={"type": "ephemeral"})
    cc_tools = [{**ANTHROPIC_WEATHER, "cache_control": {"type": "ephemeral"}}]
    yield "ant-cache-tools", "POST", p, AV, _ant(tools=cc_tools, system=system)
    five = [{"type": "text", "text": f"s{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    yield "ant-cache-too-many", "POST", p, AV, _ant(system=five)
    four = five[:3]
    yield (
        "ant-cache-too-many-top",
        "POST",
        p,
        AV,
        _ant(system=four, tools=cc_tools, cache_control={"type": "ephemeral"}),
    )
    yield (
        "ant-cache-user-block",
        "POST",
        p,
        AV,
        _ant(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": TASK},
                    ],
                }
            ]
        ),
    )


def _ant_results(content: list[dict[str, Any]], table: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"type": "tool_result", "tool_use_id": b["id"], "content": table[b["input"]["city"]]}
        for b in content
        if b["type"] == "tool_use"
    ]


def _anthropic_turns(send: Send, out: dict[str, Any]) -> None:
    p = "/v1/messages"

    def go(name: str, body: Any, headers: dict[str, str] | None = None) -> list[Any]:
        status, hdrs, chunks = send(name, "POST", p, {**AV, **(headers or {})}, body)
        out[name] = {"status": status, "digest": _digest(status, hdrs, chunks)}
        return chunks

    user = {"role": "user", "content": TASK}
    content = _body_json(go("ant-t1", _ant([user])))["content"]
    msgs = [
        user,
        {"role": "assistant", "content": content},
        {"role": "user", "content": _ant_results(content, TEMPS)},
    ]
    go("ant-t2", _ant(msgs))
    go("ant-t2-stream", _ant(msgs, stream=True))

    def variant(name: str, edit: Callable[[list[dict[str, Any]]], None], **kw: Any) -> None:
        m = copy.deepcopy(msgs)
        edit(m)
        go(name, _ant(m, **kw))

    def no_thinking(m: list[dict[str, Any]]) -> None:
        m[1]["content"] = [b for b in m[1]["content"] if b["type"] != "thinking"]

    def modified(m: list[dict[str, Any]]) -> None:
        m[1]["content"][0]["thinking"] += " (edited)"

    def bad_sig(m: list[dict[str, Any]]) -> None:
        m[1]["content"][0]["signature"] = "AAAA" + m[1]["content"][0]["signature"][4:]

    def garbage_sig(m: list[dict[str, Any]]) -> None:
        m[1]["content"][0]["signature"] = "garbage"

    def ends_thinking(m: list[dict[str, Any]]) -> None:
        m.insert(1, {"role": "assistant", "content": [{"type": "text", "text": "x"}, m[1]["content"][0]]})
        m.insert(1, {"role": "user", "content": "y"})

    def cc_thinking(m: list[dict[str, Any]]) -> None:
        m[1]["content"][0]["cache_control"] = {"type": "ephemeral"}

    def orphan_result(m: list[dict[str, Any]]) -> None:
        m[2]["content"][0]["tool_use_id"] = "toolu_nope"

    def missing_result(m: list[dict[str, Any]]) -> None:
        m[2]["content"] = m[2]["content"][:1]

    def result_first(m: list[dict[str, Any]]) -> None:
        m.insert(
            0, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "1"}]}
        )

    variant("ant-no-thinking", no_thinking)
    variant("ant-no-thinking-off", no_thinking, thinking=None)
    variant("ant-modified", modified)
    variant("ant-bad-signature", bad_sig)
    variant("ant-garbage-signature", garbage_sig)
    variant("ant-ends-thinking", ends_thinking)
    variant("ant-cc-thinking", cc_thinking)
    variant("ant-orphan-result", orphan_result)
    variant("ant-missing-result", missing_result)
    variant("ant-result-first", result_first)
    hdr = {"anthropic-beta": "interleaved-thinking-2025-05-14"}
    red_user = {"role": "user", "content": "Is it warmer in Paris, Rome or Oslo? " + MAGIC_REDACTED}
    rc = _body_json(go("ant-red-t1", _ant([red_user]), hdr))["content"]
    rmsgs = [
        red_user,
        {"role": "assistant", "content": rc},
        {"role": "user", "content": _ant_results(rc, TEMPS)},
    ]
    go("ant-red-t2", _ant(rmsgs), hdr)
    tampered = copy.deepcopy(rmsgs)
    for b in tampered[1]["content"]:
        if b["type"] == "redacted_thinking":
            b["data"] = b["data"][:-4] + "AAAA"
    go("ant-red-tampered", _ant(tampered), hdr)
    swapped = copy.deepcopy(rmsgs)
    blocks = swapped[1]["content"]
    blocks[0], blocks[2] = blocks[2], blocks[0]
    go("ant-red-swapped", _ant(swapped), hdr)
    dropped = copy.deepcopy(rmsgs)
    dropped[1]["content"] = [b for b in dropped[1]["content"] if b["type"] != "redacted_thinking"]
    go("ant-red-dropped", _ant(dropped), hdr)
    foreign = copy.deepcopy(msgs)
    foreign[1]["content"][0] = copy.deepcopy(rc[0])
    go("ant-foreign-thinking", _ant(foreign))
    go("ant-prefill-thinking", _ant([user, {"role": "assistant", "content": content}]))
    go("ant-prefill-redacted", _ant([red_user, {"role": "assistant", "content": rc}]), hdr)
    text_turn: list[dict[str, Any]] = [
        user,
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": '[called tool get_weather with {"city": "Paris"}]'},
                {"type": "text", "text": "[called tool get_weather with {bad]"},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[result of tool get_weather: 18 C]"},
                {"type": "text", "text": "[error from tool nope: x]"},
            ],
        },
    ]
    go("ant-text-exchange", _ant(text_turn, thinking=None))


def run_corpus() -> dict[str, Any]:
    """Send every case to one fresh simulator; return ``{case: {"status", "digest"}}`` in order."""
    sim = Simulator(seed=7)
    out: dict[str, Any] = {}

    def send(
        name: str, method: str, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, str], list[Any]]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        return handle(sim, method, path, {**KEYS, **headers}, raw)

    for gen in (_routing, _faults, _openai_single, _anthropic_single):
        for name, method, path, headers, body in gen():
            assert name not in out, name
            status, hdrs, chunks = send(name, method, path, headers, body)
            out[name] = {"status": status, "digest": _digest(status, hdrs, chunks)}
    _openai_turns(send, out)
    _planner_turns(send, out)
    _anthropic_turns(send, out)
    return out
