"""``POST /model/{modelId}/converse`` and ``/converse-stream``: the Bedrock Converse wire protocol.

Models: ``sim-bedrock-claude`` (Claude on Bedrock: signed ``reasoningText``, ``redactedContent`` when
the task holds Anthropic's magic string; thinking through ``additionalModelRequestFields.thinking``,
budgeted or adaptive with ``output_config.effort``), ``sim-bedrock-openai`` (an OpenAI model on
Bedrock: ``redactedContent`` only, ``rsn_`` bytes; ``reasoning_effort``) and ``sim-bedrock-kimi``
(Kimi: unsigned ``reasoningText``, always thinking). The reasoning rules and their texts are in
:mod:`.rules`; credentials are checked for shape (:mod:`.auth`).

A non-streaming answer is ``{output: {message}, stopReason, usage, metrics}``. A stream is AWS's
binary event stream (:mod:`agentlab.sim.aws.eventstream`), as recorded: ``messageStart``; per block
``contentBlockStart`` (``toolUse`` only), ``contentBlockDelta``s (reasoning text then its one
``signature``; ``redactedContent``; ``text``; ``toolUse.input`` pieces), ``contentBlockStop``;
``messageStop``; ``metadata`` (usage, metrics). Every payload carries a ``p`` padding field of
random length (a prefix of ``a..zA..Z0..9``), which hides the payload's size. The
``error_chunk`` fault ends a 200 stream with a ``modelStreamErrorException`` exception message.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from agentlab.sim.aws.eventstream import encode_event, encode_exception
from agentlab.sim.bedrock import request as R
from agentlab.sim.bedrock import sealing
from agentlab.sim.bedrock.auth import check_auth
from agentlab.sim.bedrock.errors import BEDROCK, model_error, request_id
from agentlab.sim.bedrock.rules import CLAUDE, FAMILIES, KIMI, OPENAI, OPENAI_PREFIX, check
from agentlab.sim.core import Ids, SimReply, Simulator, SSEEvent
from agentlab.sim.protocols import SimProtocol
from agentlab.sim.reasoner import MAGIC_REDACTED, Step, plan_step
from agentlab.sim.signing import turn_layout
from agentlab.sim.tokenizer import chunks, count_tokens

MODELS = tuple(FAMILIES)
_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
STREAM_ERROR = "The system encountered an unexpected error during processing. Try your request again."


def handle(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    """Answer one Converse request (model resolved by the app; ``req["model"]`` is its label)."""
    family = FAMILIES[model]
    body = {k: v for k, v in req.items() if k != "model"}
    ids = Ids(sim.seed, json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    limit = R.max_tokens(body)
    think = R.thinking(family, body, limit)
    msgs = R.messages(body)
    check(family, msgs, sim.secret, think.on)
    situation = R.situation(family, body, msgs, think.level)
    if family == CLAUDE and think.on and situation.choice.mode in ("required", "tool"):
        raise model_error("Thinking may not be enabled when tool_choice forces tool use.")
    step = plan_step(situation)
    content, out_tokens = _content(sim, ids, family, think, step, redact=MAGIC_REDACTED in situation.task)
    tokens, marks = R.prompt_tokens(body, msgs)
    cache = sim.cache.anthropic(model, tokens, marks)
    write = cache.write_5m + cache.write_1h
    usage = {
        "inputTokens": len(tokens) - cache.read - write,
        "outputTokens": out_tokens,
        "totalTokens": len(tokens) + out_tokens,
        "cacheReadInputTokens": cache.read,
        "cacheWriteInputTokens": write,
    }
    stop = "tool_use" if step.tool_calls else "end_turn"
    rh = {"x-amzn-requestid": request_id(ids.seed_bytes)}
    if not headers.get(":path", "").endswith("/converse-stream"):
        answer = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": usage,
            "metrics": {"latencyMs": 42},
        }
        rh["content-type"] = "application/json"
        return SimReply(200, rh, json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode())
    rh["content-type"] = "application/vnd.amazon.eventstream"
    return SimReply(200, rh, events=_stream(ids, content, stop, usage))


def _reasoning_block(
    sim: Simulator, family: str, think: R.Thinking, text: str, redact: bool
) -> dict[str, Any]:
    """The turn's one reasoning block, at content index 0, signed or sealed for its family."""
    layout = turn_layout([(0, "redacted_thinking" if redact or family == OPENAI else "thinking", text)])
    if family == OPENAI or redact:
        prefix = OPENAI_PREFIX if family == OPENAI else b"Eu"
        data = sealing.seal(sim.secret, text, 0, layout, prefix=prefix)
        return {"reasoningContent": {"redactedContent": base64.b64encode(data).decode()}}
    if family == KIMI:
        return {"reasoningContent": {"reasoningText": {"text": text}}}
    shown = "" if think.omitted else text
    layout = turn_layout([(0, "thinking", shown)])
    return {
        "reasoningContent": {
            "reasoningText": {"text": shown, "signature": sealing.sign(sim.secret, shown, 0, layout)}
        }
    }


def _content(
    sim: Simulator, ids: Ids, family: str, think: R.Thinking, step: Step, *, redact: bool
) -> tuple[list[dict[str, Any]], int]:
    """The assistant content blocks and the output tokens they bill (reasoning included)."""
    content: list[dict[str, Any]] = []
    used = 0
    if think.on:
        text = step.reasoning_text
        content.append(_reasoning_block(sim, family, think, text, redact))
        used += count_tokens(text)
    if step.answer is not None:
        content.append({"text": step.answer})
        used += count_tokens(step.answer)
    for name, args in step.tool_calls:
        use = {"toolUseId": ids.alnum("tooluse_", 22), "name": name, "input": args}
        content.append({"toolUse": use})
        used += count_tokens(json.dumps(args)) + count_tokens(name)
    return content, used


class _Framer:
    """Event-stream messages with the random-length ``p`` padding field the service adds."""

    def __init__(self, ids: Ids) -> None:
        self.seed = ids.seed_bytes
        self.n = 0

    def event(self, event_type: str, payload: dict[str, Any], *, delta: bool = False) -> SSEEvent:
        self.n += 1
        pad = _PAD[: 2 + (self.seed[self.n % len(self.seed)] + self.n) % 60]
        data = json.dumps({**payload, "p": pad}, separators=(",", ":"), ensure_ascii=False).encode()
        return SSEEvent(encode_event(event_type, data), delta)


def _block_events(f: _Framer, k: int, block: dict[str, Any]) -> list[SSEEvent]:
    def delta(d: dict[str, Any]) -> SSEEvent:
        return f.event("contentBlockDelta", {"contentBlockIndex": k, "delta": d}, delta=True)

    out: list[SSEEvent] = []
    if "reasoningContent" in block:
        rc = block["reasoningContent"]
        if "redactedContent" in rc:
            out.append(delta({"reasoningContent": {"redactedContent": rc["redactedContent"]}}))
        else:
            out += [
                delta({"reasoningContent": {"text": c}}) for c in chunks(rc["reasoningText"]["text"]) or [""]
            ]
            if "signature" in rc["reasoningText"]:
                out.append(delta({"reasoningContent": {"signature": rc["reasoningText"]["signature"]}}))
    elif "text" in block:
        out += [delta({"text": c}) for c in chunks(block["text"])]
    else:
        use = block["toolUse"]
        start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
        out.append(f.event("contentBlockStart", {"contentBlockIndex": k, "start": start}))
        raw = json.dumps(use["input"], separators=(",", ":"), ensure_ascii=False)
        out += [delta({"toolUse": {"input": raw[i : i + 24]}}) for i in range(0, len(raw), 24)]
    out.append(f.event("contentBlockStop", {"contentBlockIndex": k}))
    return out


def _stream(ids: Ids, content: Sequence[dict[str, Any]], stop: str, usage: dict[str, Any]) -> list[SSEEvent]:
    f = _Framer(ids)
    events = [f.event("messageStart", {"role": "assistant"})]
    for k, block in enumerate(content):
        events += _block_events(f, k, block)
    events.append(f.event("messageStop", {"stopReason": stop}))
    events.append(f.event("metadata", {"usage": usage, "metrics": {"latencyMs": 42}}))
    mid = len(events) // 2
    error = encode_exception("modelStreamErrorException", json.dumps({"message": STREAM_ERROR}).encode())
    events[mid] = SSEEvent(events[mid].raw, events[mid].delta, error=error)
    return events


def model_card(name: str, served: str) -> dict[str, Any]:
    """A foundation-model summary (Bedrock lists models on its control plane, not served here)."""
    return {"modelId": name, "modelName": name, "providerName": "agentlab.sim"}


def models_page(cards: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"modelSummaries": [...]}``, the control plane's list shape."""
    return {"modelSummaries": list(cards)}


PROTOCOL = SimProtocol(
    name="bedrock",
    endpoints=("/model/{model}/converse", "/model/{model}/converse-stream"),
    handle=handle,
    models=MODELS,
    models_page=models_page,
    model_card=model_card,
    errors=BEDROCK,
    unknown_event=SSEEvent(encode_event("sim_unknown_event", b'{"p":"abc"}')),
    check_headers=check_auth,
)
